//===- FunctionRunner.cpp - Compile once, run many times ------------------===//

#include "Executor.h"

#include <optional>

namespace flash::interp {

struct FunctionRunner::Impl {
  explicit Impl(mlir::func::FuncOp func) : program(compileFunction(func)) {
    if (!program.error)
      executor.emplace(program);
  }

  Program program;
  /// Kept across runs: its slots' storage is reused.
  std::optional<Executor> executor;
};

FunctionRunner::FunctionRunner(mlir::func::FuncOp func)
    : impl(std::make_unique<Impl>(func)) {}
FunctionRunner::~FunctionRunner() = default;

bool FunctionRunner::run(llvm::ArrayRef<RtValue> args, const LaunchContext &ctx,
                         std::vector<RtValue> *results, InterpError &error) {
  if (impl->program.error) {
    error = *impl->program.error;
    return false;
  }
  return impl->executor->run(args, ctx, results, error);
}

} // namespace flash::interp

//===- Backend.h - where `flashc run` executes a kernel ---------*- C++ -*-===//
//
// One implementation per --target: interp (the tile program on the
// interpreter), emulate (the SIMT program on the emulator) and cuda (PTX on
// GPU 0). runKernel (Run.cpp) drives them the same way: prepare, bind the
// arguments (Bindings.h), run.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_RUN_BACKEND_H
#define FLASH_LIB_RUN_BACKEND_H

#include "Params.h"

#include "flashc/Run/Run.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace flash::run {

class Diagnostics;

class Backend {
public:
  virtual ~Backend() = default;

  /// Finds the kernel (lowering the module first where the target needs it)
  /// and collects its parameters. Returns 0, or the exit code.
  virtual int prepare(ParamList &params) = 0;

  /// Runs every program instance on the bound arguments and writes the
  /// outputs. Returns the exit code.
  virtual int run(ParamList &params) = 0;
};

/// Everything a backend works on.
struct BackendContext {
  mlir::ModuleOp module;
  const RunRequest &request;
  Diagnostics &diag;
};

std::unique_ptr<Backend> createInterpBackend(const BackendContext &context);
std::unique_ptr<Backend> createEmulateBackend(const BackendContext &context);
std::unique_ptr<Backend> createCudaBackend(const BackendContext &context);

} // namespace flash::run

#endif // FLASH_LIB_RUN_BACKEND_H

//===- Kernel.h - a compiled tile program, as the Python module holds it --===//
//
// One flashc.compile() result: its own MLIRContext, the sources it was read
// from (the main file and every import, for diagnostics and the cache key)
// and the canonical tile IR. Every later step (an --emit level, PTX, a run)
// works on a clone, so a kernel can be lowered and run any number of times.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_PYTHON_KERNEL_H
#define FLASHC_PYTHON_KERNEL_H

#include "flashc/Pipelines/Pipelines.h"
#include "flashc/Runtime/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <nanobind/nanobind.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace flash::python {

/// Raised as flashc.Error, the base of the three below. The message is
/// made valid UTF-8 (a source line it quotes may hold any byte), which
/// Python needs to raise it.
struct Failure : std::runtime_error {
  explicit Failure(const std::string &message)
      : std::runtime_error(llvm::json::isUTF8(message)
                               ? message
                               : llvm::json::fixUTF8(message)) {}
};
/// Raised as flashc.CompileError; the message is the diagnostics as flashc
/// prints them (file:line:col, the source line, a caret).
struct CompileFailure : Failure {
  using Failure::Failure;
};
/// Raised as flashc.RunError (arguments, runtime errors of the interpreter,
/// the driver).
struct RunFailure : Failure {
  using Failure::Failure;
};
/// Raised as flashc.SanitizerError: the emulator's sanitizer stopped the run.
struct SanitizerFailure : Failure {
  using Failure::Failure;
};

struct Kernel {
  std::unique_ptr<mlir::MLIRContext> context;
  llvm::SourceMgr sources;
  mlir::OwningOpRef<mlir::ModuleOp> module; ///< canonical tile IR
  /// The masked-loop rewrites compile() was asked for; every lowering and
  /// run of this kernel uses them too.
  TilePipelineOptions tileOptions;

  /// A copy of the tile IR to lower or run.
  mlir::OwningOpRef<mlir::ModuleOp> clone() const {
    mlir::ModuleOp tileIR = module.get();
    return mlir::OwningOpRef<mlir::ModuleOp>(tileIR.clone());
  }
};

/// The dtype npy::dtypeName calls `name`; RunFailure if none.
npy::DType dtypeNamed(const std::string &name);

void bindCompile(nanobind::module_ &m);
void bindRun(nanobind::module_ &m);
void bindDevice(nanobind::module_ &m);

} // namespace flash::python

#endif // FLASHC_PYTHON_KERNEL_H

//===- Kernel.h - a compiled tile program, as the Python module holds it --===//
//
// One flashc.compile() result: a flash::Compilation (its own MLIRContext, the
// sources it was read from, for diagnostics and the cache key, its arch and
// switches) lowered to the canonical tile IR. Every later step (an --emit
// level, PTX, a run) works on a clone, so a kernel can be lowered and run any
// number of times.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_PYTHON_KERNEL_H
#define FLASHC_PYTHON_KERNEL_H

#include "flashc/Driver/Compilation.h"
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
  /// At Level::Tile; its arch and switches apply to every lowering and run.
  std::unique_ptr<Compilation> compilation;

  /// A copy of the tile IR to lower or run.
  mlir::OwningOpRef<mlir::ModuleOp> clone() const {
    return compilation->cloneModule();
  }

  /// A copy of the IR lowered to `level` (Tile..LLVM): CompileFailure with
  /// the diagnostics when a pass rejects the kernel.
  mlir::OwningOpRef<mlir::ModuleOp> lowered(Level level) const;
};

/// The dtype npy::dtypeName calls `name`; RunFailure if none.
npy::DType dtypeNamed(const std::string &name);

void bindCompile(nanobind::module_ &m);
void bindRun(nanobind::module_ &m);
void bindDevice(nanobind::module_ &m);

} // namespace flash::python

#endif // FLASHC_PYTHON_KERNEL_H

//===- Compilation.h - one compile of a tile program ------------*- C++ -*-===//
//
// The compile driver that flashc, `flashc run` and the Python module share:
// a Compilation holds one kernel's source, constants, arch and switches
// (flash::CompileOptions), its own MLIRContext and its IR, and lowers it level
// by level, each pipeline run once:
//
//   Compilation c(input, llvm::errs());
//   c.lowerTo(Level::SIMT);            // front end, tile, layout, SIMT
//   c.emitMachineCode(Level::PTX, ptx, sidecar);
//
// Nothing process-global is written during a compile, so Compilations may
// run in parallel threads (test/unit/DriverTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_DRIVER_COMPILATION_H
#define FLASHC_DRIVER_COMPILATION_H

#include "flashc/Frontend/IRGen.h"
#include "flashc/Support/CompileOptions.h"
#include "flashc/Target/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace flash {

class SourceDiagnostics;

/// The levels of a compile, in pipeline order; each includes the ones
/// before it. FrontEnd is the front end's IR, before the tile pipeline; the
/// others are flashc's --emit levels (PTX and Cubin are no IR: emitted from
/// the SIMT level).
enum class Level { FrontEnd, Tile, Layout, SIMT, LLVM, PTX, Cubin };

/// --emit's name of a level ("tile" ... "cubin"; "front-end").
std::string_view levelName(Level level);
/// The emit level named `name`, if any.
std::optional<Level> parseEmitLevel(std::string_view name);

/// How running a pipeline ended.
enum class LowerResult {
  Success,
  Rejected, ///< a pass rejected the kernel with a diagnostic (a user error)
  Failed,   ///< a pass failed without saying why (a bug)
};

/// Hook for the pass manager a lowering runs in (flashc adds its IR
/// printing and timing options); failure stops the lowering as Rejected.
using ConfigurePassManager =
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)>;

/// Runs, in one pass manager, the pipelines that take `module` from level
/// `from` to `to` (FrontEnd <= from <= to <= LLVM), with `target`'s arch
/// (ARCH, shared-memory limit, NVVM target) and switches. A failure of the
/// tile pipeline alone, which only cleans up verified IR, is always Failed.
LowerResult lowerModule(mlir::ModuleOp module, Level from, Level to,
                        const TargetOptions &target,
                        ConfigurePassManager configure = nullptr);

/// PTX (Level::PTX) or, through ptxas, a cubin (Level::Cubin) of a
/// SIMT-level module, and its launch sidecar; the module is left unchanged.
/// Returns 0, 1 (the kernel or the target is at fault: diagnosed on the
/// module's context, or printed to `diagnostics`), 2 (a bug; printed).
int emitMachineCode(mlir::ModuleOp module, const TargetOptions &target,
                    Level level, std::string &code, std::string &sidecar,
                    llvm::raw_ostream &diagnostics);

/// What a Compilation compiles.
struct CompileInput {
  /// The main file (its buffer identifier names it in diagnostics).
  std::unique_ptr<llvm::MemoryBuffer> source;
  std::vector<Define> defines;
  ImportOptions imports;
  /// Read by the kernel as ARCH; its limits apply from the layout level on.
  std::string arch = std::string(kDefaultArch);
  CompileOptions options;
};

class Compilation {
public:
  /// Diagnostics go to `diagnostics` (file:line:col, the source line and a
  /// caret), until setDiagnosticStream says otherwise.
  Compilation(CompileInput input, llvm::raw_ostream &diagnostics);
  ~Compilation();
  Compilation(const Compilation &) = delete;
  Compilation &operator=(const Compilation &) = delete;

  /// Runs what is left of the pipelines up to `level` in place; PTX and
  /// Cubin stop at SIMT (emitMachineCode emits them). The first call runs
  /// the front end. Returns the exit code: 0, 1 (the kernel or the options
  /// are at fault; diagnosed), 2 (an internal error; reported).
  int lowerTo(Level level, ConfigurePassManager configure = nullptr);

  /// PTX (or, through ptxas, a cubin) and the launch sidecar of the kernel,
  /// lowered to SIMT first. The module stays at SIMT (PTX comes from a
  /// lowered copy). Returns the exit code like lowerTo.
  int emitMachineCode(Level level, std::string &code, std::string &sidecar);

  /// Where later diagnostics go.
  void setDiagnosticStream(llvm::raw_ostream &diagnostics);

  /// Checks the arch and, from the LLVM level on, the target options; the
  /// error is one line (no location). Empty when they are fine.
  std::string checkTarget(Level level) const;

  Level level() const { return current; }
  /// The IR at level(); null before the front end ran or after it failed.
  mlir::ModuleOp module() { return ir.get(); }
  /// A copy of the IR at level(), to lower or run apart from it.
  mlir::OwningOpRef<mlir::ModuleOp> cloneModule() const;
  mlir::MLIRContext &context() { return *mlirContext; }
  llvm::SourceMgr &sources() { return sourceMgr; }
  const TargetOptions &target() const { return targetOptions; }
  const CompileOptions &options() const { return targetOptions.compile; }

private:
  int runFrontEnd();

  std::unique_ptr<mlir::MLIRContext> mlirContext;
  llvm::SourceMgr sourceMgr;
  llvm::raw_ostream *diagStream;
  std::unique_ptr<SourceDiagnostics> located;
  std::vector<Define> defines;
  ImportOptions imports;
  TargetOptions targetOptions;
  mlir::OwningOpRef<mlir::ModuleOp> ir;
  Level current = Level::FrontEnd;
  bool frontEndRan = false;
};

} // namespace flash

#endif // FLASHC_DRIVER_COMPILATION_H

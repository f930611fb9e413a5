//===- Run.h - `flashc run`: bind arguments, run a kernel, write outputs -===//

#ifndef FLASH_RUN_RUN_H
#define FLASH_RUN_RUN_H

#include "flashc/Emulator/Emulator.h"
#include "flashc/Runtime/MemoryBudget.h"
#include "flashc/Runtime/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flash {

/// What a run hands back to a library caller (the Python module) instead of
/// writing files and printing counters.
struct RunResults {
  /// The final contents of each tensor that `outs` names.
  std::map<std::string, npy::Array> outputs;
  /// emulate: the emulator's counters and the launch's wall time.
  std::optional<emu::Stats> emulatorStats;
  double emulationSeconds = 0;
  /// emulate: the run stopped at a runtime error of the emulator, which is
  /// the sanitizer (out of bounds, race, uninitialized shared read, ...).
  bool sanitizerFinding = false;
};

struct RunRequest {
  /// Execution target: "interp" (the tile program), "emulate" (the SIMT
  /// program: tile-level modules are lowered first; a module that already
  /// holds a SIMT kernel, a gpu.func with `kernel`, runs as it is) or "cuda"
  /// (PTX + launch sidecar compiled in-process, run on GPU 0 through the
  /// driver loaded at run time: lib/Launcher, docs/launcher.md).
  std::string target;
  /// NAME -> "FILE.npy" (tensor parameters) or a number (scalar parameters).
  std::vector<std::pair<std::string, std::string>> args;
  /// NAME -> FILE.npy written after the run (tensor parameters only).
  std::vector<std::pair<std::string, std::string>> outs;
  /// emulate: print the emulator's counters (Stats) after the run; cuda: the
  /// launch configuration and the kernel's wall time.
  bool stats = false;
  /// Where the stats go (default: stdout).
  llvm::raw_ostream *statsOut = nullptr;
  /// emulate: check shared-memory races (on by default).
  bool checkRaces = true;
  /// emulate, cuda: lower with tile-split-masked-loops (as the tile module
  /// handed over was, normally; flash::TilePipelineOptions).
  bool splitMaskedLoops = true;
  /// emulate, cuda: lower with tile-defer-loop-sums (on by default; flashc
  /// --defer-loop-sums=false; flash::LayoutPipelineOptions).
  bool deferLoopSums = true;
  /// emulate, cuda: lower with tile-merge-mask-bounds (on by default;
  /// flashc --merge-mask-bounds=false) and the lean masked loop (off by
  /// default; --lean-masks; flash::TilePipelineOptions), as the tile module
  /// handed over was.
  bool mergeMaskBounds = true;
  bool leanMasks = false;
  /// cuda: the arch to compile for ("sm_80", ...); empty: the device's
  /// compute capability (the newest supported arch not above it).
  std::string arch;
  /// The bytes the run may allocate for its tensors (flash::memoryBudget):
  /// every .npy argument's declared size is checked against what is left
  /// before it is read.
  uint64_t memoryBudget = kDefaultMemoryBudget;
  /// The source the kernel was compiled from, for the source lines of
  /// diagnostics; without it (or for other files) the files that locations
  /// name are read from disk.
  llvm::SourceMgr *sources = nullptr;
  /// Tensor arguments held in memory (library callers), bound exactly like
  /// the .npy files of `args`: by name, dtype, rank and shape symbols.
  std::vector<std::pair<std::string, npy::Array>> arrays;
  /// When set, the outputs `outs` names are stored here (their file names
  /// are not used) along with the emulator's stats and findings.
  RunResults *results = nullptr;
};

/// Adds `--arg NAME=VALUE` and `--out NAME=FILE` strings to `request`;
/// returns a one-line error (naming the malformed option) or empty.
std::string addRunBindings(RunRequest &request,
                           const std::vector<std::string> &args,
                           const std::vector<std::string> &outs);

/// Binds arguments, runs every program instance of the kernel in `module`,
/// writes outputs. Prints its own errors to llvm::errs(): one line for those
/// about the command line, and clang-style (file:line:col, the source line,
/// a caret) for those at a place in the kernel: every diagnostic of the
/// module's context while it runs (lowering, PTX) and runtime errors.
/// Returns 0 ok, 1 user error, 2 internal error.
int runKernel(mlir::ModuleOp module, const RunRequest &request);

/// Same, printing diagnostics to `diag`.
int runKernel(mlir::ModuleOp module, const RunRequest &request,
              llvm::raw_ostream &diag);

/// The arch a run of `request` lowers for, which the front end must compile
/// the kernel for too (its ARCH): `arch`; else for cuda the one the cuda
/// target picks from device 0 (kDefaultArch without a device, whose run
/// then fails); else kDefaultArch, the GPU the emulator models.
std::string runArch(const RunRequest &request);

} // namespace flash

#endif // FLASH_RUN_RUN_H

//===- Run.h - `flashc run`: bind arguments, run a kernel, write outputs -===//

#ifndef FLASH_RUN_RUN_H
#define FLASH_RUN_RUN_H

#include "flashc/Emulator/Emulator.h"
#include "flashc/Runtime/MemoryBudget.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Support/CompileOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flash {

namespace cuda {
class Driver;
} // namespace cuda

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
  /// emulate, cuda: the switches a tile-level module is lowered with and
  /// the PTX is emitted with (as the tile module handed over was compiled).
  CompileOptions options;
  /// The arch the kernel was compiled for (chooseRunArch); empty: as
  /// chooseRunArch picks it without --arch.
  std::string arch;
  /// cuda: the driver chooseRunArch opened to pick the arch, used for the
  /// run too; null: the run opens it.
  std::shared_ptr<cuda::Driver> cudaDriver;
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

/// The arch a run on `target` compiles for, chosen once, before the kernel
/// is compiled (it reads the arch as ARCH): `requested` when given, for cuda
/// no newer than device 0; else for cuda the newest supported arch device 0
/// runs; else kDefaultArch, the GPU the emulator models (whether flashc
/// supports it is checked where it is compiled for, except for cuda). cuda
/// notes its choice on `diag`, and hands the driver it opened to `driver`
/// when given. Returns 0, or 1 with the error printed to `diag`.
int chooseRunArch(const std::string &target, const std::string &requested,
                  std::string &arch, llvm::raw_ostream &diag,
                  std::shared_ptr<cuda::Driver> *driver = nullptr);

} // namespace flash

#endif // FLASH_RUN_RUN_H

//===- Emulator.h - SIMT-level IR executor and sanitizer ---------*- C++
//-*-===//
//
// Runs a SIMT-level kernel (a gpu.func produced by convert-tile-to-simt: one
// thread's program in scf/arith/math/vector + NVVM + llvm pointer ops) on the
// CPU, for every CTA of a grid and every thread of a CTA, in lockstep:
//
//   * every SSA value is an array over the CTA's threads (vectors: N cells per
//     thread, element-major); structured control flow runs under a per-thread
//     active mask (scf.for iterates while any active thread continues, scf.if
//     runs each side only when some active thread takes it);
//   * pure ops are computed for every thread (the values of inactive threads
//     are never observed: results of regions merge by mask); memory and warp
//     ops act for active threads only;
//   * warp ops (mma.sync, ldmatrix, shfl.sync) use WarpOps.h, bit-exact, and
//     require the lanes they need to be active (divergence is an error);
//     barriers require every thread of the CTA.
//
// It is also the sanitizer: out-of-bounds global and shared accesses,
// misaligned accesses, reads of shared bytes nothing wrote, reads of shared
// bytes a cp.async has not landed in yet (a missing wait_group), and
// shared-memory races (two threads touching one byte, at least one writing,
// with no barrier in between) are errors naming the op and its location.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_EMULATOR_EMULATOR_H
#define FLASH_EMULATOR_EMULATOR_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace flash {
namespace emu {

/// A global-memory allocation (one tensor argument): raw little-endian bytes.
struct GlobalBuffer {
  std::string name;           ///< parameter name, for messages
  std::vector<uint8_t> bytes; ///< the contents, read and written in place
};

/// The value of one gpu.func argument.
struct KernelArg {
  enum class Kind { Buffer, Int, Float } kind = Kind::Int;
  int buffer = -1; ///< Buffer: index into the buffer list
  int64_t i = 0;   ///< Int
  double f = 0;    ///< Float (already rounded to the argument's type)
  static KernelArg ofBuffer(int index) { return {Kind::Buffer, index, 0, 0}; }
  static KernelArg ofInt(int64_t v) { return {Kind::Int, -1, v, 0}; }
  static KernelArg ofFloat(double v) { return {Kind::Float, -1, 0, v}; }
};

/// What a profiler would count, summed over all CTAs of one launch. Warp
/// instructions count once per warp that executes them with at least one
/// active lane.
struct Stats {
  std::array<int64_t, 3> grid{{0, 0, 0}};
  int64_t threadsPerCTA = 0;
  int64_t sharedBytesPerCTA = 0;
  int64_t ctas = 0;
  int64_t mma = 0;          ///< mma.sync warp instructions
  int64_t ldmatrix = 0;     ///< ldmatrix warp instructions
  int64_t shfl = 0;         ///< shfl.sync warp instructions
  int64_t barriers = 0;     ///< CTA-wide barriers executed (per CTA)
  int64_t barrierWarps = 0; ///< bar.sync warp instructions
  int64_t cpAsync = 0;      ///< cp.async warp instructions
  int64_t cpAsyncBytes = 0; ///< bytes copied by cp.async (incl. zero fill)
  int64_t cpAsyncBytesRead = 0; ///< of them read from global memory
  int64_t cpAsyncCommits = 0, cpAsyncWaits = 0; ///< warp instructions
  int64_t cpAsyncArrives = 0; ///< cp.async.mbarrier.arrive (threads)
  int64_t globalLoads = 0, globalStores = 0;    ///< warp instructions
  int64_t globalAtomics = 0; ///< warp instructions (bytes count as read and written)
  int64_t globalBytesRead = 0, globalBytesWritten = 0;
  int64_t sharedLoads = 0, sharedStores = 0; ///< warp instructions (ld/st)
  int64_t sharedBytesRead = 0, sharedBytesWritten = 0; ///< incl. ldmatrix
  int64_t sharedRequests =
      0; ///< warp-wide shared requests (incl. ldmatrix, cp.async)
  int64_t bankConflicts = 0; ///< extra wavefronts over all shared requests
  int64_t tmaLoads = 0, tmaStores = 0; ///< TMA box copies (per thread)
  int64_t tmaBytesLoaded = 0, tmaBytesStored = 0; ///< whole boxes
  int64_t tmaReduces = 0, tmaBytesReduced = 0; ///< TMA reduce-add boxes
  int64_t mbarrierWaits = 0; ///< mbarrier test/try waits (warp instrs)
  int64_t opsExecuted = 0; ///< SIMT-level ops dispatched (all threads at once)
  int64_t wgmma = 0;       ///< wgmma.mma_async (warpgroup instrs)
  int64_t wgmmaFlops = 0;  ///< their MMA flops (2 * 64 * N * 16 each)

  /// One counter: a short key (the Python module's stats dict) and the
  /// label --stats prints.
  struct Counter {
    const char *key;
    const char *label;
    int64_t value;
  };
  /// The counters below the header line of print(), in its order.
  std::vector<Counter> counters() const;
  /// Adds the counters (and CTAs) of `other`, e.g. another worker's.
  void add(const Stats &other);

  void print(llvm::raw_ostream &os, llvm::StringRef kernelName) const;
};

/// An error found while running (or preparing) a kernel. `message` is one
/// line, "<op name>: <what>" when it is about an op (then `loc` is the op's
/// location, which `flashc run` prints clang-style with the source line:
/// flashc/Support/SourceDiagnostics.h), without "error: " or a location.
struct Error {
  enum class Kind { Runtime, Unsupported, Internal } kind = Kind::Runtime;
  std::string message;
  std::optional<mlir::Location> loc;
};

/// What a launch may use, as the GPU (and flashc's launcher) would refuse
/// it: shared memory per CTA of `arch`, and the host memory the sanitizer's
/// global shadow may take.
struct Options {
  bool checkRaces = true;
  std::string arch = "sm_80";
  int64_t maxSharedBytes = 163 * 1024; ///< per CTA (flash::ArchInfo)
  uint64_t memoryBudget = uint64_t(8) << 30;
  /// Threads that run CTAs: 0 takes $FLASHC_EMULATOR_THREADS, else the
  /// machine's hardware threads. Results do not depend on it.
  unsigned threads = 0;
};

/// The pointer a kernel holds for byte 0 of buffer `index` of a launch:
/// what a tensor map's global address names.
uint64_t bufferAddress(int index);

/// The most register cells (8 bytes each) a CTA's values may take: 1 GiB.
inline constexpr uint64_t kMaxRegisterCells = uint64_t(1) << 27;

/// Finds the SIMT kernel in `module`: a gpu.func with the `kernel` attribute
/// inside a gpu.module. Error if there is none or more than one.
bool findSIMTKernel(mlir::ModuleOp module, mlir::gpu::GPUFuncOp &kernel,
                    std::string &error);

/// A kernel prepared once (IR resolved to a compact instruction list) and
/// launched any number of times.
class Kernel {
public:
  Kernel();
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  /// Resolves `func`; false (with `error`) on ops or types it cannot run.
  bool prepare(mlir::gpu::GPUFuncOp func, Error &error);

  /// Threads per CTA (known_block_size, else 32 * flashc.num_warps).
  int64_t threadsPerCTA() const;

  /// Runs every CTA of `grid` (x fastest). `args` has one entry per gpu.func
  /// argument; `buffers` are the allocations pointer arguments refer to.
  /// Stats are accumulated into `stats`.
  bool launch(const std::array<int64_t, 3> &grid,
              const std::vector<KernelArg> &args,
              std::vector<GlobalBuffer> &buffers, Stats &stats, Error &error,
              const Options &options = Options());

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace emu
} // namespace flash

#endif // FLASH_EMULATOR_EMULATOR_H

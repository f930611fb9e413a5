//===- Emulator.cpp - The emulator's public API ---------------------------===//
//
// See Emulator.h for the execution model. A Kernel is a Program (Program.h,
// compiled by prepare()); a launch binds the arguments and constants into a
// fresh register file and runs every CTA with an Executor over a Memory.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"

#include "Executor.h"
#include "Memory.h"
#include "Program.h"

#include "flashc/Runtime/Arch.h"
#include "flashc/Semantics/ScalarOps.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace mlir;

namespace flash::emu {

bool findSIMTKernel(ModuleOp module, gpu::GPUFuncOp &kernel,
                    std::string &error) {
  kernel = nullptr;
  unsigned count = 0;
  module.walk([&](gpu::GPUFuncOp f) {
    if (f.isKernel()) {
      if (!kernel)
        kernel = f;
      ++count;
    }
  });
  if (count == 0) {
    error = "the module has no SIMT-level kernel (a gpu.func with the "
            "'kernel' attribute inside a gpu.module)";
    return false;
  }
  if (count > 1) {
    error = "the module has " + std::to_string(count) +
            " SIMT-level kernels; the emulator runs one";
    return false;
  }
  return true;
}

struct Kernel::Impl {
  Program program;
};

Kernel::Kernel() : impl(std::make_unique<Impl>()) {}
Kernel::~Kernel() = default;
int64_t Kernel::threadsPerCTA() const { return impl->program.T; }

bool Kernel::prepare(gpu::GPUFuncOp func, Error &error) {
  return ProgramBuilder(impl->program, error).compileKernel(func);
}

uint64_t bufferAddress(int index) {
  return static_cast<uint64_t>(makeGlobalPtr(index + 1));
}

/// The cell every thread holds for argument `i`: `arg` converted to the
/// parameter's kind.
static bool argumentCell(const Program &p, unsigned i, const KernelArg &arg,
                         size_t numBuffers, Cell &c, Error &error) {
  SK sk = p.vals[i].sk;
  if (sk == SK::PG) {
    if (arg.kind != KernelArg::Kind::Buffer || arg.buffer < 0 ||
        arg.buffer >= (int)numBuffers) {
      error.kind = Error::Kind::Internal;
      error.message = "argument #" + std::to_string(i) + " of kernel '" +
                      p.kernelName +
                      "' is a global pointer but no buffer was bound";
      return false;
    }
    c.i = makeGlobalPtr(arg.buffer + 1);
  } else if (isFloat(sk)) {
    c.d = sem::roundTo(scalarType(sk), arg.kind == KernelArg::Kind::Float
                                           ? arg.f
                                           : double(arg.i));
  } else if (sk == SK::PS) {
    c.i = arg.i;
  } else {
    c.i =
        sem::wrapInt(arg.kind == KernelArg::Kind::Int ? arg.i : int64_t(arg.f),
                     intWidth(sk));
  }
  return true;
}

/// Fills value `id` with cell elems[e] for element e in every thread.
static void fillValue(const Program &p, std::vector<Cell> &cells, int32_t id,
                      const std::vector<Cell> &elems) {
  const ValInfo &vi = p.vals[id];
  Cell *R = &cells[vi.base];
  for (uint32_t e = 0; e < vi.n; ++e)
    for (int64_t t = 0; t < p.T; ++t)
      R[e * p.T + t] = elems[e];
}

/// The limits a GPU enforces at launch, with the messages of flashc's
/// launcher and of tile-allocate-shared; and the sanitizer's global shadow
/// against the memory budget. Checked before any memory is taken.
static bool checkLaunchLimits(const Program &p,
                              const std::array<int64_t, 3> &grid,
                              const std::vector<GlobalBuffer> &buffers,
                              const Options &options, Error &error) {
  error.kind = Error::Kind::Runtime;
  if (buffers.size() > kMaxGlobalBuffers) {
    error.message = "the emulator runs kernels of at most " +
                    std::to_string(kMaxGlobalBuffers) + " tensor arguments";
    return false;
  }
  static const char *axis[3] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k)
    if (grid[k] < 0 || grid[k] > kMaxGridDims[k]) {
      error.message = std::string("grid.") + axis[k] + " = " +
                      std::to_string(grid[k]) + " is outside 0.." +
                      std::to_string(kMaxGridDims[k]);
      return false;
    }
  if (p.shared.limit > options.maxSharedBytes) {
    error.message = "the kernels need " + std::to_string(p.shared.limit) +
                    " bytes of shared memory per CTA, more than the " +
                    std::to_string(options.maxSharedBytes) + " that " +
                    options.arch + " allows";
    return false;
  }
  uint64_t bytes = 0;
  for (const GlobalBuffer &b : buffers)
    bytes += b.bytes.size();
  uint64_t shadow = bytes * Memory::kGlobalShadowBytesPerByte;
  if (options.checkRaces && shadow > options.memoryBudget) {
    error.message = "the race check's shadow of the " + std::to_string(bytes) +
                    " bytes of global memory needs " + std::to_string(shadow) +
                    " bytes, more than the memory budget of " +
                    std::to_string(options.memoryBudget) +
                    " (smaller tensors, a larger budget, or --no-race-check)";
    return false;
  }
  return true;
}

/// The register file of a launch before any CTA runs: arguments and
/// constants in every thread.
static bool bindValues(const Program &p, const std::vector<KernelArg> &args,
                       size_t numBuffers, std::vector<Cell> &cells,
                       Error &error) {
  for (unsigned i = 0; i < args.size(); ++i) {
    Cell c;
    if (!argumentCell(p, i, args[i], numBuffers, c, error))
      return false;
    fillValue(p, cells, i, std::vector<Cell>(p.vals[i].n, c));
  }
  for (const auto &[id, elems] : p.constants)
    fillValue(p, cells, id, elems);
  return true;
}

/// Grid coordinates of the CTA at `index` in launch order (x fastest).
static std::array<int64_t, 3> ctaAt(const std::array<int64_t, 3> &grid,
                                    int64_t index) {
  return {index % grid[0], index / grid[0] % grid[1],
          index / (grid[0] * grid[1])};
}

/// Runs the CTAs one after another in grid order, with the race check
/// inline: the reference semantics.
static bool runSerially(const Program &p, const std::array<int64_t, 3> &grid,
                        const std::vector<KernelArg> &args,
                        std::vector<GlobalBuffer> &buffers, Stats &stats,
                        Error &error, const Options &options) {
  ErrorReporter errors(p.kernelName, error);
  Memory memory(p, buffers, options, stats, errors);
  Executor ex(p, grid, memory, stats, errors);
  if (!bindValues(p, args, buffers.size(), ex.cells, error))
    return false;
  const int64_t numCTAs = grid[0] * grid[1] * grid[2];
  for (int64_t i = 0; i < numCTAs; ++i)
    if (!ex.runCTA(ctaAt(grid, i)))
      return false;
  return true;
}

namespace {

/// One thread's means to run CTAs: its own register file, shared memory,
/// counters and error, over the launch's global buffers.
struct Worker {
  Worker(const Program &p, const std::array<int64_t, 3> &grid,
         std::vector<GlobalBuffer> &buffers, const Options &options)
      : errors(p.kernelName, error), memory(p, buffers, options, stats, errors),
        ex(p, grid, memory, stats, errors) {}
  Stats stats;
  Error error;
  ErrorReporter errors;
  Memory memory;
  Executor ex;
};

/// A CTA run by a worker, waiting for its global accesses to be checked.
struct CTAResult {
  std::vector<GlobalAccessRecord> log;
  bool done = false, ok = true;
};

} // namespace

/// Runs the CTAs on `numWorkers` threads, each CTA's global accesses logged
/// rather than checked; this thread replays the logs through the race
/// check in grid order as the CTAs finish, so its verdicts are the serial
/// run's. A race-free launch has no data flow between CTAs (any byte one
/// CTA writes and another touches is a race), so its results are the
/// serial run's too. Returns false if a CTA failed or the check found a
/// race: the caller then reruns the launch serially from the original
/// memory for the serial run's exact error (a racing CTA may have read
/// another's bytes too early or too late).
static bool runInParallel(const Program &p, const std::array<int64_t, 3> &grid,
                          const std::vector<KernelArg> &args,
                          std::vector<GlobalBuffer> &buffers, Stats &stats,
                          const Options &options, unsigned numWorkers) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned w = 0; w < numWorkers; ++w) {
    workers.push_back(std::make_unique<Worker>(p, grid, buffers, options));
    if (!bindValues(p, args, buffers.size(), workers.back()->ex.cells,
                    workers.back()->error))
      return false;
  }
  // The race check, fed in grid order.
  Error checkError;
  ErrorReporter checkErrors(p.kernelName, checkError);
  Stats checkStats;
  Memory checker(p, buffers, options, checkStats, checkErrors);

  const int64_t numCTAs = grid[0] * grid[1] * grid[2];
  // CTAs run at most `window` ahead of the check, which bounds the logs.
  const int64_t window = 4 * int64_t(numWorkers);
  std::vector<CTAResult> results(window);
  std::mutex mutex;
  std::condition_variable changed;
  int64_t next = 0, checked = 0;
  bool stop = false;

  auto work = [&](Worker &worker) {
    while (true) {
      int64_t i;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] {
          return stop || next >= numCTAs || next < checked + window;
        });
        if (stop || next >= numCTAs)
          return;
        i = next++;
      }
      CTAResult &result = results[i % window];
      result.log.clear();
      worker.memory.setGlobalLog(&result.log);
      bool ok = worker.ex.runCTA(ctaAt(grid, i));
      std::lock_guard<std::mutex> lock(mutex);
      result.ok = ok;
      result.done = true;
      if (!ok)
        stop = true;
      changed.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (auto &worker : workers)
    threads.emplace_back(work, std::ref(*worker));

  bool ok = true;
  for (int64_t i = 0; i < numCTAs && ok; ++i) {
    CTAResult &result = results[i % window];
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return stop || result.done; });
      if (!result.done || !result.ok)
        break;
    }
    checker.beginCTA(ctaAt(grid, i));
    for (const GlobalAccessRecord &r : result.log)
      if (!checker.replayGlobal(r)) {
        ok = false;
        break;
      }
    std::lock_guard<std::mutex> lock(mutex);
    result.done = false;
    checked = i + 1;
    if (!ok)
      stop = true;
    changed.notify_all();
  }
  for (std::thread &t : threads)
    t.join();
  if (stop || checked != numCTAs)
    return false;
  for (auto &worker : workers)
    stats.add(worker->stats);
  return true;
}

/// How many threads run the launch's CTAs.
static unsigned workerCount(const Program &p, const Options &options,
                            int64_t numCTAs) {
  if (p.serialCTAs || !options.checkRaces)
    return 1; // without the check, racing CTAs would depend on the order
  unsigned n = options.threads;
  if (!n)
    if (const char *env = std::getenv("FLASHC_EMULATOR_THREADS"))
      n = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
  if (!n)
    n = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<int64_t>(n, numCTAs));
}

bool Kernel::launch(const std::array<int64_t, 3> &grid,
                    const std::vector<KernelArg> &args,
                    std::vector<GlobalBuffer> &buffers, Stats &stats,
                    Error &error, const Options &options) {
  const Program &p = impl->program;
  if (args.size() != p.numArgs) {
    error.kind = Error::Kind::Internal;
    error.message = "kernel '" + p.kernelName + "' takes " +
                    std::to_string(p.numArgs) + " arguments but " +
                    std::to_string(args.size()) + " were given";
    return false;
  }
  if (!checkLaunchLimits(p, grid, buffers, options, error))
    return false;

  stats.grid = grid;
  stats.threadsPerCTA = p.T;
  stats.sharedBytesPerCTA = p.shared.limit;
  const int64_t numCTAs = grid[0] * grid[1] * grid[2];
  unsigned numWorkers = workerCount(p, options, numCTAs);
  if (numWorkers > 1) {
    std::vector<std::vector<uint8_t>> original;
    for (const GlobalBuffer &b : buffers)
      original.push_back(b.bytes);
    if (runInParallel(p, grid, args, buffers, stats, options, numWorkers))
      return true;
    // An error: the serial run finds it, from the original memory.
    for (size_t b = 0; b < buffers.size(); ++b)
      buffers[b].bytes = std::move(original[b]);
  }
  return runSerially(p, grid, args, buffers, stats, error, options);
}

} // namespace flash::emu

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
  ErrorReporter errors(p.kernelName, error);
  Memory memory(p, buffers, options, stats, errors);
  Executor ex(p, grid, memory, stats, errors);
  for (unsigned i = 0; i < args.size(); ++i) {
    Cell c;
    if (!argumentCell(p, i, args[i], buffers.size(), c, error))
      return false;
    fillValue(p, ex.cells, i, std::vector<Cell>(p.vals[i].n, c));
  }
  for (const auto &[id, elems] : p.constants)
    fillValue(p, ex.cells, id, elems);

  stats.grid = grid;
  stats.threadsPerCTA = p.T;
  stats.sharedBytesPerCTA = p.shared.limit;
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x)
        if (!ex.runCTA({x, y, z}))
          return false;
  return true;
}

} // namespace flash::emu

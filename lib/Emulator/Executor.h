//===- Executor.h - Running a Program for one launch ------------*- C++ -*-===//
//
// The executor holds what changes while a Program runs: the register file,
// the active-thread masks of nested regions and the CTA being run. It runs
// instructions in lockstep for all threads of the CTA: each Instr's exec
// handler (ExecHandlers.h) acts for the threads of the current mask.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_EXECUTOR_H
#define FLASH_LIB_EMULATOR_EXECUTOR_H

#include "Diagnostics.h"
#include "Memory.h"
#include "Program.h"

#include <array>
#include <memory>
#include <vector>

namespace flash::emu {

/// The threads an instruction runs for.
struct ActiveThreads {
  const uint8_t *mask; ///< mask[t]: thread t of the CTA runs
  int64_t count;       ///< how many do
  unsigned depth;      ///< region nesting
};

class Executor {
public:
  Executor(const Program &program, const std::array<int64_t, 3> &grid,
           Memory &memory, Stats &stats, ErrorReporter &errors);

  /// Runs the kernel body for every thread of the CTA at `cta`.
  bool runCTA(const std::array<int64_t, 3> &cta);
  /// Runs code[begin, end) for `threads`.
  bool run(uint32_t begin, uint32_t end, const ActiveThreads &threads);

  /// Reports a runtime error at `I`; returns false.
  bool fail(const Instr &I, const std::string &what) {
    return errors.fail(I, what);
  }
  ErrorReporter &errorReporter() { return errors; }
  Cell *cellsOf(int32_t id) { return &cells[program.vals[id].base]; }
  const ValInfo &val(int32_t id) const { return program.vals[id]; }
  /// Bit l: lane l of warp w is active.
  uint32_t warpMask(const uint8_t *mask, int64_t w) const {
    uint32_t m = 0;
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t < T && mask[t])
        m |= 1u << l;
    }
    return m;
  }
  /// The mask buffer of regions nested in a region at `depth`: one per
  /// depth, so that an enclosing region's mask stays intact.
  std::vector<uint8_t> &nestedMask(unsigned depth) {
    return (*masks)[depth + 1];
  }
  /// The mask buffers nestedMask hands out: maskPool, or while a role split
  /// runs its sides as coroutines (Roles.h), the running side's own.
  std::vector<std::vector<uint8_t>> *masks;
  /// setmaxnreg: registers per thread of each warp (empty until the first
  /// one in the CTA, when every warp has the count at entry).
  std::vector<int64_t> warpRegisters;

  const Program &program;
  const int64_t T, numWarps;
  const std::array<int64_t, 3> grid;
  std::array<int64_t, 3> cta{{0, 0, 0}};
  std::vector<Cell> cells; ///< the register file (ValueModel.h)
  Memory &memory;
  Stats &stats;
  /// WgmmaExec.cpp's warpgroup MMA state of the current CTA (made on use).
  std::shared_ptr<struct WgmmaState> wgmma;

private:
  ErrorReporter &errors;
  std::vector<std::vector<uint8_t>> maskPool;
};

/// The registers per thread every warp starts with, the CTA alone on the
/// SM: the 64K-register file over the block, in units of 8, at most 256
/// (what ptxas assumes at entry with .maxntid and .minnctapersm 1).
int64_t registersAtEntry(int64_t threads);
/// The register file setmaxnreg redistributes among a CTA's warps.
inline constexpr int64_t kRegisterFile = 65536;

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_EXECUTOR_H

//===- Stats.cpp - The --stats report -------------------------------------===//
//
// The counters themselves are bumped where the events happen (the exec
// handlers); this is their one printed form, which tests check verbatim.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"

#include <cstring>

namespace flash::emu {

void Stats::print(llvm::raw_ostream &os, llvm::StringRef kernelName) const {
  os << "emulator stats for kernel '" << kernelName << "': grid (" << grid[0]
     << ", " << grid[1] << ", " << grid[2] << "), " << ctas << " CTAs of "
     << threadsPerCTA << " threads (" << (threadsPerCTA + 31) / 32
     << " warps), " << sharedBytesPerCTA << " shared bytes per CTA\n";
  auto line = [&](const char *name, int64_t v) {
    os << "  " << name;
    for (size_t i = strlen(name); i < 42; ++i)
      os << ' ';
    os << v << "\n";
  };
  line("ops dispatched (CTA-wide)", opsExecuted);
  line("mma.sync (warp instrs)", mma);
  line("ldmatrix (warp instrs)", ldmatrix);
  line("shfl.sync (warp instrs)", shfl);
  line("barriers (per CTA)", barriers);
  line("barriers (warp instrs)", barrierWarps);
  line("cp.async (warp instrs)", cpAsync);
  line("cp.async bytes", cpAsyncBytes);
  line("cp.async bytes read (global)", cpAsyncBytesRead);
  line("cp.async commit_group (warp)", cpAsyncCommits);
  line("cp.async wait_group (warp)", cpAsyncWaits);
  line("global loads (warp instrs)", globalLoads);
  line("global stores (warp instrs)", globalStores);
  line("global atomics (warp instrs)", globalAtomics);
  line("global bytes read", globalBytesRead);
  line("global bytes written", globalBytesWritten);
  line("shared loads (warp instrs)", sharedLoads);
  line("shared stores (warp instrs)", sharedStores);
  line("shared bytes read", sharedBytesRead);
  line("shared bytes written", sharedBytesWritten);
  line("shared requests (warp-wide)", sharedRequests);
  line("shared bank conflicts (extra wavefronts)", bankConflicts);
}

} // namespace flash::emu

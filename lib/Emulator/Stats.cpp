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
  for (const Counter &c : counters()) {
    os << "  " << c.label;
    for (size_t i = strlen(c.label); i < 42; ++i)
      os << ' ';
    os << c.value << "\n";
  }
}

std::vector<Stats::Counter> Stats::counters() const {
  return {
      {"ops", "ops dispatched (CTA-wide)", opsExecuted},
      {"mma", "mma.sync (warp instrs)", mma},
      {"ldmatrix", "ldmatrix (warp instrs)", ldmatrix},
      {"shfl", "shfl.sync (warp instrs)", shfl},
      {"barriers", "barriers (per CTA)", barriers},
      {"barrier_warps", "barriers (warp instrs)", barrierWarps},
      {"cp_async", "cp.async (warp instrs)", cpAsync},
      {"cp_async_bytes", "cp.async bytes", cpAsyncBytes},
      {"cp_async_bytes_read", "cp.async bytes read (global)", cpAsyncBytesRead},
      {"cp_async_commits", "cp.async commit_group (warp)", cpAsyncCommits},
      {"cp_async_waits", "cp.async wait_group (warp)", cpAsyncWaits},
      {"global_loads", "global loads (warp instrs)", globalLoads},
      {"global_stores", "global stores (warp instrs)", globalStores},
      {"global_atomics", "global atomics (warp instrs)", globalAtomics},
      {"global_bytes_read", "global bytes read", globalBytesRead},
      {"global_bytes_written", "global bytes written", globalBytesWritten},
      {"shared_loads", "shared loads (warp instrs)", sharedLoads},
      {"shared_stores", "shared stores (warp instrs)", sharedStores},
      {"shared_bytes_read", "shared bytes read", sharedBytesRead},
      {"shared_bytes_written", "shared bytes written", sharedBytesWritten},
      {"shared_requests", "shared requests (warp-wide)", sharedRequests},
      {"bank_conflicts", "shared bank conflicts (extra wavefronts)",
       bankConflicts},
      {"tma_loads", "TMA loads (boxes)", tmaLoads},
      {"tma_bytes_loaded", "TMA bytes loaded", tmaBytesLoaded},
      {"tma_stores", "TMA stores (boxes)", tmaStores},
      {"tma_bytes_stored", "TMA bytes stored", tmaBytesStored},
      {"mbarrier_waits", "mbarrier waits (warp instrs)", mbarrierWaits},
      {"wgmma", "wgmma.mma_async (warpgroup instrs)", wgmma},
      {"wgmma_flops", "wgmma MMA flops", wgmmaFlops},
  };
}

} // namespace flash::emu

//===- Stats.cpp - The --stats report -------------------------------------===//
//
// The counters themselves are bumped where the events happen (the exec
// handlers); this is their one printed form, which tests check verbatim.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"

#include <cstring>
#include <iterator>

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

namespace {
/// Each counter once: its key, its label and where it is. counters() and
/// add() both walk this table.
struct CounterField {
  const char *key;
  const char *label;
  int64_t Stats::*field;
};
const CounterField kCounterFields[] = {
    {"ops", "ops dispatched (CTA-wide)", &Stats::opsExecuted},
    {"mma", "mma.sync (warp instrs)", &Stats::mma},
    {"ldmatrix", "ldmatrix (warp instrs)", &Stats::ldmatrix},
    {"shfl", "shfl.sync (warp instrs)", &Stats::shfl},
    {"barriers", "barriers (per CTA)", &Stats::barriers},
    {"barrier_warps", "barriers (warp instrs)", &Stats::barrierWarps},
    {"cp_async", "cp.async (warp instrs)", &Stats::cpAsync},
    {"cp_async_bytes", "cp.async bytes", &Stats::cpAsyncBytes},
    {"cp_async_bytes_read", "cp.async bytes read (global)",
     &Stats::cpAsyncBytesRead},
    {"cp_async_commits", "cp.async commit_group (warp)",
     &Stats::cpAsyncCommits},
    {"cp_async_waits", "cp.async wait_group (warp)", &Stats::cpAsyncWaits},
    {"cp_async_arrives", "cp.async.mbarrier.arrive (threads)",
     &Stats::cpAsyncArrives},
    {"global_loads", "global loads (warp instrs)", &Stats::globalLoads},
    {"global_stores", "global stores (warp instrs)", &Stats::globalStores},
    {"global_atomics", "global atomics (warp instrs)", &Stats::globalAtomics},
    {"global_bytes_read", "global bytes read", &Stats::globalBytesRead},
    {"global_bytes_written", "global bytes written",
     &Stats::globalBytesWritten},
    {"shared_loads", "shared loads (warp instrs)", &Stats::sharedLoads},
    {"shared_stores", "shared stores (warp instrs)", &Stats::sharedStores},
    {"shared_bytes_read", "shared bytes read", &Stats::sharedBytesRead},
    {"shared_bytes_written", "shared bytes written",
     &Stats::sharedBytesWritten},
    {"shared_requests", "shared requests (warp-wide)", &Stats::sharedRequests},
    {"bank_conflicts", "shared bank conflicts (extra wavefronts)",
     &Stats::bankConflicts},
    {"tma_loads", "TMA loads (boxes)", &Stats::tmaLoads},
    {"tma_bytes_loaded", "TMA bytes loaded", &Stats::tmaBytesLoaded},
    {"tma_stores", "TMA stores (boxes)", &Stats::tmaStores},
    {"tma_bytes_stored", "TMA bytes stored", &Stats::tmaBytesStored},
    {"tma_reduces", "TMA reduce-adds (boxes)", &Stats::tmaReduces},
    {"tma_bytes_reduced", "TMA bytes reduce-added", &Stats::tmaBytesReduced},
    {"mbarrier_waits", "mbarrier waits (warp instrs)", &Stats::mbarrierWaits},
    {"wgmma", "wgmma.mma_async (warpgroup instrs)", &Stats::wgmma},
    {"wgmma_flops", "wgmma MMA flops", &Stats::wgmmaFlops},
};
// The launch description (grid, threadsPerCTA, sharedBytesPerCTA), ctas and
// the table's counters: a counter missing from the table would be dropped
// when workers' counts are summed.
static_assert(sizeof(Stats) == sizeof(int64_t) * (3 + 2 + 1 +
                                                  std::size(kCounterFields)),
              "every Stats counter needs its row in kCounterFields");
} // namespace

std::vector<Stats::Counter> Stats::counters() const {
  std::vector<Counter> out;
  for (const CounterField &c : kCounterFields)
    out.push_back({c.key, c.label, this->*c.field});
  return out;
}

void Stats::add(const Stats &other) {
  ctas += other.ctas;
  for (const CounterField &c : kCounterFields)
    this->*c.field += other.*c.field;
}

} // namespace flash::emu

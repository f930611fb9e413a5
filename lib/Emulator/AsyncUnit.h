//===- AsyncUnit.h - A CTA's mbarriers, named barriers, TMA, proxies -*- C++ -*-===//
//
// The asynchronous state of the CTA being run, next to Memory:
//   * its mbarrier objects (AsyncOps.h's Mbarrier), keyed by shared offset,
//     and for each thread the number of phases of each it has seen complete
//     (what its parity waits mean);
//   * its 16 named barriers;
//   * TMA loads in flight: their bytes land in shared memory (and their
//     complete-tx reaches the mbarrier) only when a wait on that mbarrier
//     needs them, as late as the hardware may deliver them, so a read before
//     the wait, or a phase that completes without them (a missing expect_tx),
//     is caught;
//   * cp.async.mbarrier.arrive: each arrival keeps its thread's copies in
//     flight and fires when they land, which is as late as a TMA load's;
//   * each thread's bulk async-groups of TMA stores and reduce-adds, whose
//     shared source bytes must not be written before
//     cp.async.bulk.wait_group.read;
//   * per shared byte: which mbarrier phase published a TMA write (a reader
//     must have waited for it). The generic/async proxy state is Memory's.
// Generic accesses report to genericAccess() through Memory::trackShared.
// The first wait to see an mbarrier phase complete, and each completed named
// barrier, start a new race epoch for the whole CTA (Memory::barrier): the
// race check keeps one epoch counter, so it then misses races between
// threads that did not take part.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_ASYNCUNIT_H
#define FLASH_LIB_EMULATOR_ASYNCUNIT_H

#include "Diagnostics.h"
#include "Program.h"

#include "flashc/Emulator/AsyncOps.h"
#include "flashc/Emulator/WarpOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <deque>
#include <map>
#include <vector>

namespace flash::emu {

class Executor;
class Memory;
struct ActiveThreads;

/// Registers the mbarrier, named-barrier, elect, fence and TMA ops
/// (CompileAsync.cpp); called from addNVVMOps.
void addAsyncOps(OpHandlers &handlers);
/// nvvm.barrier with a thread count (a named barrier), from compileBarrier.
bool compileNamedBarrier(ProgramBuilder &b, mlir::Operation *op);

class AsyncUnit {
public:
  AsyncUnit(const Program &program, Memory &memory, Stats &stats,
            ErrorReporter &errors);

  /// Whether the program has any op of this unit; when not, generic
  /// accesses need no tracking.
  bool active() const { return used; }
  /// A new CTA: no barriers or copies.
  void beginCTA();

  /// A generic (ld/st, ldmatrix, cp.async) access of thread t to shared
  /// bytes [off, off + bytes): errors for a live mbarrier, a TMA load in
  /// flight, a TMA store still reading (writes), a TMA write the thread has
  /// not waited for (reads).
  bool genericAccess(const Instr &I, int64_t t, uint32_t off, uint32_t bytes,
                     bool write);

  // mbarrier ops of thread t on the barrier at shared offset `bar`.
  bool mbarrierInit(const Instr &I, int64_t t, uint32_t bar, int64_t count);
  bool mbarrierInval(const Instr &I, int64_t t, uint32_t bar);
  /// arrive(count) after expect-tx(txBytes) (0: none); `phase` is set to
  /// the phase before the arrival (the op's opaque state).
  bool mbarrierArrive(const Instr &I, int64_t t, uint32_t bar, int64_t count,
                      bool drop, int64_t txBytes, int64_t &phase);
  bool mbarrierTx(const Instr &I, int64_t t, uint32_t bar, int64_t bytes,
                  bool complete);
  /// A parity wait (or a state wait: `state` >= 0 is the phase an arrive
  /// returned) of the active threads. blocking: a phase that cannot complete
  /// is a deadlock error; else done[t] says whether it had.
  bool mbarrierWait(const Instr &I, const ActiveThreads &threads,
                    const Cell *barOf, const Cell *parityOf, bool isState,
                    bool blocking, uint8_t *done);

  /// bar.sync (wait) or bar.arrive of the active warps on named barrier
  /// `id` of `count` threads.
  bool namedBarrier(const Instr &I, const ActiveThreads &threads,
                    int64_t id, int64_t count, bool wait);

  /// cp.async.mbarrier.arrive{.noinc} of thread t on the barrier at `bar`:
  /// the arrival fires when the thread's copies so far have landed, which
  /// they do as late as the hardware may deliver them: when a wait on the
  /// barrier needs them, or at the thread's cp.async.wait_group 0. Without
  /// .noinc the current phase expects one more arrival first.
  bool cpAsyncArrive(const Instr &I, int64_t t, uint32_t bar, bool noinc);
  /// Lands thread t's tracked copies and fires their arrivals (its
  /// cp.async.wait_group 0 or wait_all).
  bool landCpArrivalsOf(const Instr &I, int64_t t);

  /// Thread t's TMA load of the box at `coords` through `map` into shared
  /// `dst`, signalling the mbarrier at `bar`.
  bool tmaLoad(const Instr &I, int64_t t, const TensorMap &map,
               const int32_t *coords, uint32_t dst, uint32_t bar);
  /// Thread t's TMA store of the box at shared `src` to `coords`; with
  /// `add` a reduce-add of f32 (each element's addition rounded once, and
  /// atomic: no other thread's access to it comes between its read and
  /// write).
  bool tmaStore(const Instr &I, int64_t t, const TensorMap &map,
                const int32_t *coords, uint32_t src, bool add);
  void bulkCommit(int64_t t);
  /// cp.async.bulk.wait_group{.read} n of thread t.
  void bulkWait(int64_t t, uint32_t n);

private:
  struct Barrier {
    Mbarrier state;
    uint32_t offset = 0;
    std::vector<int64_t> seen; ///< per thread: phases seen complete
    /// Happens-before (Memory::ordering): the joined clocks of the current
    /// phase's arrivals (and TMA completions), of the last completed phase,
    /// and the phase `pending` belongs to.
    std::vector<uint32_t> pending, completed;
    int64_t clockPhase = 0;
  };
  /// A TMA load in flight: the bytes it lands, element by element.
  struct Load {
    int slot;
    int64_t bytes; ///< its complete-tx
    int64_t issuer;
    std::vector<uint32_t> addr; ///< shared address of each element
    std::vector<uint8_t> data;  ///< their bytes, elemBytes each
    uint32_t elemBytes;
    std::vector<uint32_t> clock; ///< the issuer's warp's, at the issue
  };
  /// A cp.async.mbarrier.arrive whose copies have not landed.
  struct CpArrival {
    int slot;
    int64_t thread;
    std::vector<CpAsyncState::Copy> copies;
  };
  /// A TMA store's shared source bytes, still being read.
  struct Store {
    std::vector<uint32_t> addr;
    uint32_t elemBytes;
  };
  struct ByteState {
    uint16_t loadsInFlight = 0;
    uint16_t storesReading = 0;
    int32_t publisher = -1;      ///< barrier slot of the TMA write, or -1
    int64_t publishedPhase = 0;  ///< its phase that the write completes in
    bool mbarrier = false;       ///< part of a live mbarrier
  };

  /// The slot of the live barrier at `bar` (error if none, naming `what`).
  bool liveBarrier(const Instr &I, int64_t t, uint32_t bar, const char *what,
                   int &slot);
  std::string barrierName(int slot) const;
  /// After an op that may complete a phase of barrier `slot`: the clocks
  /// of a completed phase become what its waiters acquire.
  void phaseClocks(int slot);
  /// Lands every load in flight on barrier `slot`, in issue order.
  bool landLoads(const Instr &I, int slot);
  /// Lands `a`'s copies (published by phase `slot` completes next, as a
  /// TMA load's) and fires its arrival.
  bool landCpArrival(const Instr &I, const CpArrival &a);
  /// Every arrival in flight on barrier `slot`, in issue order.
  bool landCpArrivals(const Instr &I, int slot);
  /// Every arrival in flight that `which` selects, in issue order.
  bool landCpArrivalsIf(const Instr &I,
                        llvm::function_ref<bool(const CpArrival &)> which);
  /// Thread t's wait for phase `meant` (through `parity`, -1 for a state).
  bool waitOne(const Instr &I, int64_t t, int slot, int64_t parity,
               int64_t meant, bool blocking, bool &done);

  const Program &program;
  Memory &memory;
  Stats &stats;
  ErrorReporter &errors;
  bool used = false;
  std::vector<Barrier> barriers;
  std::map<uint32_t, int> slotAt; ///< shared offset -> barriers index
  std::array<NamedBarrier, kNumNamedBarriers> named;
  /// Per named barrier: the joined clocks of its current arrivals.
  std::array<std::vector<uint32_t>, kNumNamedBarriers> namedClocks;
  /// Per named barrier: the warps in bar.sync on it, and how many times it
  /// completed (a blocked bar.sync waits for the next completion).
  std::array<std::vector<int64_t>, kNumNamedBarriers> namedWaiting;
  std::array<uint64_t, kNumNamedBarriers> namedRounds{};
  std::deque<Load> loads;
  std::deque<CpArrival> cpArrivals;
  std::vector<std::vector<Store>> bulkCurrent;             ///< per thread
  std::vector<std::deque<std::vector<Store>>> bulkGroups;  ///< per thread
  std::vector<ByteState> bytes;
};

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_ASYNCUNIT_H

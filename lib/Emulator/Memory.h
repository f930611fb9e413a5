//===- Memory.h - Global and shared memory, sanitized -----------*- C++ -*-===//
//
// The memory a launch touches, and the sanitizer that watches it:
//   * global memory: the argument buffers; accesses (reads, writes, atomic
//     read-modify-writes) must lie inside one and be aligned; a shadow per
//     written byte catches racing writes: two threads writing one byte, at
//     least one with a plain store, in different CTAs (unordered within a
//     launch) or in one CTA without a barrier between; atomics never race
//     with atomics;
//   * the current CTA's shared memory (WarpOps' SharedMemory, which also
//     rejects reads of bytes nothing wrote), bounded by the shared layout's
//     limit, with a shadow per byte for race detection: the writer and the
//     readers of the current epoch (barrier interval);
//   * each thread's cp.async copies in flight: their destination bytes are
//     off limits until the wait that lands them;
//   * the warp-wide shared request walk that counts requests and bank
//     conflicts.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_MEMORY_H
#define FLASH_LIB_EMULATOR_MEMORY_H

#include "Diagnostics.h"
#include "Program.h"

#include "flashc/Emulator/WarpOps.h"

#include <array>
#include <deque>
#include <string>
#include <memory>
#include <utility>
#include <vector>

namespace flash::emu {

class AsyncUnit;

/// What a global access does: reads are not race-checked; plain writes race
/// with other threads' writes and atomics, atomics only with plain writes.
enum class GlobalAccess { Read, Write, Atomic };

/// One global access as the race check sees it: recorded by a CTA that runs
/// beside others, checked later in CTA order (Memory::replayGlobal).
struct GlobalAccessRecord {
  const Instr *instr;
  int64_t off; ///< byte offset into buffer `buf`
  int32_t tid;
  uint32_t epoch;
  uint32_t bytes;
  uint16_t buf;
  GlobalAccess kind;
};

/// One lane's part of a warp-wide shared request: (byte offset, bytes).
using LaneAccess = std::pair<uint32_t, uint32_t>;

/// Extra wavefronts of one warp-wide shared request (`acc` per lane, lanes
/// of `active` only); normalizes `acc` in place.
int64_t requestConflicts(std::array<LaneAccess, kWarpSize> &acc,
                         uint32_t active);

class Memory {
public:
  Memory(const Program &program, std::vector<GlobalBuffer> &buffers,
         const Options &options, Stats &stats, ErrorReporter &errors);
  ~Memory();

  /// Host bytes of race-check shadow per byte of global memory written.
  static constexpr uint64_t kGlobalShadowBytesPerByte = 36;

  /// A new CTA (at grid coordinates `at`): fresh shared memory, no copies in
  /// flight, and no shared access of an earlier CTA counts as a race (its
  /// global writes still do).
  void beginCTA(const std::array<int64_t, 3> &at);
  /// A CTA-wide barrier: a new race epoch.
  void barrier() { ++epoch; }

  /// Records global accesses in `log` instead of race-checking them at once
  /// (null: check at once).
  void setGlobalLog(std::vector<GlobalAccessRecord> *log) { globalLog = log; }
  /// Race-checks a recorded access as one of the current CTA (beginCTA),
  /// in the epoch it was made in; records it.
  bool replayGlobal(const GlobalAccessRecord &r);

  /// Validates a global access of `bytes` at pointer `p` by thread t and
  /// sets `addr` to its bytes.
  bool checkGlobal(const Instr &I, int64_t t, int64_t p, int64_t bytes,
                   int64_t align, GlobalAccess kind, uint8_t *&addr);
  /// Bounds / alignment of a shared access (`what`: "read", "write", ...).
  bool checkShared(const Instr &I, int64_t t, int64_t off, int64_t bytes,
                   int64_t align, const char *what);
  /// Race and in-flight cp.async checks of a shared access; records it.
  bool trackShared(const Instr &I, int64_t t, uint32_t off, uint32_t bytes,
                   bool write, bool fromCpAsync = false);
  SharedMemory &shared() { return *smem; }
  /// The CTA's mbarriers, named barriers, TMA copies and proxy state.
  AsyncUnit &async() { return *asyncUnit; }

  /// The async proxy (wgmma operand reads, TMA) sees a shared byte written
  /// through the generic proxy (every write trackShared records) only after
  /// a fence.proxy.async of the writing thread: fenceProxyAsync is that
  /// fence for the threads of `mask`; checkAsyncProxyRead reports (at I,
  /// `what` naming the reader) a byte of the range still unfenced;
  /// markAsyncProxyWrite records an async-proxy write (needs no fence).
  void fenceProxyAsync(const uint8_t *mask);
  static constexpr int32_t kAnyFence = -2;
  bool checkAsyncProxyRead(const Instr &I, uint32_t off, uint32_t bytes,
                           const char *what);
  void markAsyncProxyWrite(uint32_t off, uint32_t bytes);
  /// An async-proxy read in flight (a wgmma's operands until its wait):
  /// `delta` +1 when it starts (by `reader`), -1 when it completes; writes
  /// to bytes with reads in flight are errors (trackShared).
  void holdAsyncRead(uint32_t off, uint32_t bytes, int delta,
                     const Instr *reader = nullptr);

  /// Happens-before between warps, kept (with the race check on) for
  /// programs with mbarrier or TMA ops, where the epoch check is too coarse
  /// for copies that land asynchronously: one vector clock per warp.
  /// Barriers move clocks: release() joins warp w's clock into a barrier's
  /// `sync` and starts a new interval of w; acquire() joins `sync` into
  /// w's clock; syncAllWarps() is a barrier of the whole CTA.
  bool ordering() const { return trackOrder; }
  void release(int64_t warp, std::vector<uint32_t> &sync);
  void acquire(int64_t warp, const std::vector<uint32_t> &sync);
  void syncAllWarps();
  /// Warp w's clock now (a TMA load carries its issuer's to the mbarrier).
  std::vector<uint32_t> clockOf(int64_t warp) const;
  /// Warp w's read of shared [off, off + bytes) by op `at` is complete now.
  void noteRead(int64_t warp, uint32_t off, uint32_t bytes, const Instr &at);
  /// An asynchronous write (`what`: a TMA load, a cp.async) issued by
  /// thread t to shared [off, off + bytes): error when a read of another
  /// warp is not ordered before the issue, or a wgmma still reads a byte.
  bool checkOverwrite(const Instr &I, int64_t t, uint32_t off, uint32_t bytes,
                      const char *what);

  /// Thread t's cp.async of `size` bytes to shared `dst` (`srcSize` of them
  /// from `src`, the rest zero): in flight until its group is waited for.
  bool issueCopy(const Instr &I, int64_t t, uint32_t dst, const uint8_t *src,
                 uint32_t size, uint32_t srcSize);
  /// cp.async.commit_group of thread t.
  void commitCopies(int64_t t);
  /// cp.async.mbarrier.arrive of thread t: its copies in flight, taken out
  /// of its groups (the arrival tracks them; their bytes stay pending).
  std::vector<CpAsyncState::Copy> takeCopies(int64_t t);
  /// Lands copies taken from thread t (a write of t's to each byte), marked
  /// for a proxy fence by any thread (markReaderFence).
  bool landTaken(const Instr &I, int64_t t,
                 const std::vector<CpAsyncState::Copy> &copies);
  /// cp.async.wait_group n of thread t: lands all but its n newest groups.
  bool waitCopies(const Instr &I, int64_t t, uint32_t n);

  /// Walks a warp-wide shared request warp by warp: lane(t, acc) checks and
  /// performs active thread t's access (false: it failed) and sets acc to
  /// its (offset, size); each warp with an active lane counts once in
  /// `count` and in the request and bank-conflict statistics.
  template <typename F>
  bool sharedRequests(const uint8_t *mask, int64_t &count, F &&lane) {
    std::array<LaneAccess, kWarpSize> acc;
    for (int64_t w = 0; w < numWarps; ++w) {
      uint32_t active = 0;
      for (int l = 0; l < 32; ++l) {
        int64_t t = w * 32 + l;
        acc[l] = {0, 0};
        if (t >= T || !mask[t])
          continue;
        active |= 1u << l;
        if (!lane(t, acc[l]))
          return false;
      }
      if (active) {
        ++count;
        ++stats.sharedRequests;
        stats.bankConflicts += requestConflicts(acc, active);
      }
    }
    return true;
  }

private:
  /// Per-byte shadow state of shared memory for race detection.
  struct ByteShadow {
    uint32_t wEpoch = 0, rEpoch = 0;
    int32_t wTid = -1, rTid = -1; ///< rTid == kMany: several readers
    uint16_t pending = 0;         ///< cp.async copies in flight to this byte
    /// The thread of the last generic-proxy write not yet fenced for the
    /// async proxy, or -1.
    /// kAnyFence: landed by a cp.async an mbarrier arrival tracked, whose
    /// readers acquire it through the barrier: a fence of any thread since.
    int32_t genericWriter = -1;
    /// Async-proxy reads in flight (wgmma operands) of this byte.
    uint16_t asyncReads = 0;
    const Instr *asyncReader = nullptr; ///< the latest of them
  };
  /// A warp's last completed read of a shared byte: its clock, its op.
  struct ReadStamp {
    uint32_t clock = 0;
    const Instr *at = nullptr;
  };
  static constexpr int32_t kMany = -2;
  /// A cp.async destination range.
  struct Range {
    uint32_t dst, size;
  };
  /// Reports the race of thread t's access to byte `addr` with the
  /// earlier access `b` records.
  bool raceError(const Instr &I, int64_t t, uint32_t addr, const ByteShadow &b,
                 bool write);
  bool landCopies(const Instr &I, int64_t t, std::vector<Range> &ranges);

  /// Per-byte shadow state of a written global byte: the last plain writer
  /// and the last atomic one (CTA index into `ctas`, thread, epoch); kMany:
  /// several threads (or CTAs) in that epoch.
  struct GlobalShadow {
    int32_t wCta = -1, wTid = -1, aCta = -1, aTid = -1;
    uint32_t wEpoch = 0, aEpoch = 0;
    /// The last reader: CTA, warp (kMany: several), epoch.
    int32_t rCta = -1, rWarp = -1;
    uint32_t rEpoch = 0;
  };
  static_assert(sizeof(GlobalShadow) <= kGlobalShadowBytesPerByte);
  /// Race check of thread t's write (plain or atomic) of `bytes` bytes at
  /// byte `off` of buffer `buf`; records it.
  bool trackGlobal(const Instr &I, int64_t t, size_t buf, int64_t off,
                   int64_t bytes, GlobalAccess kind);
  /// Read-write race check of thread t's read; records it as the reader.
  bool trackGlobalRead(const Instr &I, int64_t t, size_t buf, int64_t off,
                       int64_t bytes);
  /// Whether a read and a write are unordered: the other access was made by
  /// CTA `c`, warp `w` (kMany: several) in epoch `e`. Threads of one warp
  /// are ordered by the warp's own synchronization (shuffles carry the data
  /// between them in the code flashc emits), so only other warps count.
  bool readWriteUnordered(int32_t c, int32_t w, uint32_t e, int32_t warp) const;
  bool readRaceError(const Instr &I, int64_t t, size_t buf, int64_t at,
                     const std::string &other, bool reading);
  /// The byte shadow of buffer `buf`, allocated on its first access.
  std::vector<GlobalShadow> &shadowOf(size_t buf);
  /// "thread T (warp W, lane L) of CTA (x, y, z)", or several threads.
  std::string globalWriter(int32_t cta, int32_t tid) const;
  /// "a thread of warp W of CTA (x, y, z)", or several.
  std::string globalReader(int32_t cta, int32_t warp) const;

  const int64_t T, numWarps;
  const SharedLayout &layout;
  std::vector<GlobalBuffer> &buffers;
  const bool checkRaces;
  Stats &stats;
  ErrorReporter &errors;

  std::unique_ptr<SharedMemory> smem;
  std::unique_ptr<AsyncUnit> asyncUnit;
  std::vector<ByteShadow> shadow;
  bool trackOrder = false;
  std::vector<uint32_t> clocks;    ///< numWarps x numWarps
  std::vector<ReadStamp> lastRead; ///< per shared byte, numWarps
  uint32_t epoch = 0;
  std::vector<std::array<int64_t, 3>> ctas; ///< the CTAs run, in order
  std::vector<std::vector<GlobalShadow>> globalShadow; ///< per buffer, lazy
  std::vector<GlobalAccessRecord> *globalLog = nullptr;
  std::vector<CpAsyncState> cpStates;        ///< per thread
  std::vector<std::vector<Range>> cpCurrent; ///< per thread: uncommitted
  std::vector<std::deque<std::vector<Range>>> cpGroups; ///< per thread
  std::vector<std::vector<Range>> spareRanges; ///< landed groups' storage
};

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_MEMORY_H

//===- AsyncUnit.cpp - A CTA's mbarriers, named barriers, TMA, proxies ----===//

#include "AsyncUnit.h"
#include "AsyncExec.h"
#include "ExecHandlers.h"
#include "Executor.h"
#include "Memory.h"
#include "Roles.h"

#include <algorithm>
#include <cstring>

namespace flash::emu {

AsyncUnit::AsyncUnit(const Program &program, Memory &memory, Stats &stats,
                     ErrorReporter &errors)
    : program(program), memory(memory), stats(stats), errors(errors) {
  used = std::any_of(program.code.begin(), program.code.end(),
                     [](const Instr &I) { return isAsyncExec(I.exec); });
}

void AsyncUnit::beginCTA() {
  if (!used)
    return;
  barriers.clear();
  slotAt.clear();
  named = {};
  namedClocks = {};
  namedWaiting = {};
  namedRounds = {};
  loads.clear();
  cpArrivals.clear();
  bulkCurrent.assign(program.T, {});
  bulkGroups.assign(program.T, {});
  bytes.assign(program.shared.limit, ByteState());
}

//===----------------------------------------------------------------------===//
// Generic accesses
//===----------------------------------------------------------------------===//

bool AsyncUnit::genericAccess(const Instr &I, int64_t t, uint32_t off,
                              uint32_t n, bool write) {
  for (uint32_t k = 0; k < n; ++k) {
    ByteState &b = bytes[off + k];
    const char *what = write ? "write to" : "read of";
    if (b.mbarrier)
      return errors.fail(I, std::string(what) + " shared byte " +
                                hex(off + k) + " by " + threadName(t) +
                                ", which belongs to a live mbarrier (only "
                                "mbarrier ops may touch it; mbarrier.inval "
                                "it before reusing the memory)");
    if (b.loadsInFlight) {
      const Load *l = nullptr;
      for (const Load &x : loads)
        if (std::find(x.addr.begin(), x.addr.end(),
                      (off + k) / x.elemBytes * x.elemBytes) != x.addr.end())
          l = &x;
      std::string why = "missing mbarrier wait?";
      if (l && barriers[l->slot].seen[t] > 0)
        why = "the thread waited for phase " +
              std::to_string(barriers[l->slot].seen[t] - 1) + " of " +
              barrierName(l->slot) +
              ", which completed without the load's bytes: missing "
              "expect_tx?";
      return errors.fail(I, std::string(what) + " shared byte " +
                                hex(off + k) + " by " + threadName(t) +
                                " while a TMA load to it is still in flight "
                                "(" + why + ")");
    }
    if (write && b.storesReading)
      return errors.fail(I, "write to shared byte " + hex(off + k) + " by " +
                                threadName(t) +
                                " while a TMA store or reduce-add is still "
                                "reading it "
                                "(missing cp.async.bulk.wait_group.read?)");
    if (!write && b.publisher >= 0 &&
        barriers[b.publisher].seen[t] <= b.publishedPhase)
      return errors.fail(
          I, "read of shared byte " + hex(off + k) + " by " + threadName(t) +
                 ", which a TMA load or a cp.async its mbarrier tracked wrote, "
                 "before the thread waited for "
                 "phase " +
                 std::to_string(b.publishedPhase) + " of " +
                 barrierName(b.publisher) + " (missing mbarrier wait?)");
    if (write)
      b.publisher = -1;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

std::string AsyncUnit::barrierName(int slot) const {
  return "the mbarrier at shared " + hex(barriers[slot].offset);
}

void AsyncUnit::phaseClocks(int slot) {
  Barrier &b = barriers[slot];
  if (b.state.phase() == b.clockPhase)
    return;
  b.completed.swap(b.pending);
  b.pending.assign(b.completed.size(), 0);
  b.clockPhase = b.state.phase();
}

bool AsyncUnit::liveBarrier(const Instr &I, int64_t t, uint32_t bar,
                            const char *what, int &slot) {
  auto it = slotAt.find(bar);
  if (it == slotAt.end() || !barriers[it->second].state.live())
    return errors.fail(I, std::string(what) + " by " + threadName(t) +
                              " on shared " + hex(bar) +
                              ", which holds no initialised mbarrier "
                              "(missing mbarrier.init, or a wrong address)");
  slot = it->second;
  return true;
}

bool AsyncUnit::mbarrierInit(const Instr &I, int64_t t, uint32_t bar,
                             int64_t count) {
  if (!memory.checkShared(I, t, bar, 8, 8, "mbarrier"))
    return false;
  auto [it, inserted] = slotAt.try_emplace(bar, (int)barriers.size());
  if (inserted) {
    // The object must not overlap another barrier or data in flight.
    for (uint32_t k = 0; k < 8; ++k) {
      const ByteState &b = bytes[bar + k];
      if (b.mbarrier || b.loadsInFlight || b.storesReading)
        return errors.fail(I, "mbarrier.init by " + threadName(t) +
                                  " at shared " + hex(bar) +
                                  " overlaps another mbarrier or a TMA copy "
                                  "in flight");
    }
    barriers.push_back({Mbarrier(), bar, std::vector<int64_t>(program.T, 0)});
  }
  Barrier &b = barriers[it->second];
  Status s = b.state.init(count);
  if (!s.ok())
    return errors.fail(I, s.error() + " at shared " + hex(bar) + " by " +
                              threadName(t));
  std::fill(b.seen.begin(), b.seen.end(), 0);
  b.pending.clear();
  b.completed.clear();
  b.clockPhase = b.state.phase();
  for (uint32_t k = 0; k < 8; ++k)
    bytes[bar + k].mbarrier = true;
  return true;
}

bool AsyncUnit::mbarrierInval(const Instr &I, int64_t t, uint32_t bar) {
  int slot = -1;
  if (!liveBarrier(I, t, bar, "mbarrier.inval", slot))
    return false;
  for (const Load &l : loads)
    if (l.slot == slot)
      return errors.fail(I, "mbarrier.inval by " + threadName(t) + " of " +
                                barrierName(slot) +
                                " while a TMA load that signals it is in "
                                "flight");
  (void)barriers[slot].state.inval();
  for (uint32_t k = 0; k < 8; ++k)
    bytes[bar + k].mbarrier = false;
  return true;
}

bool AsyncUnit::mbarrierArrive(const Instr &I, int64_t t, uint32_t bar,
                               int64_t count, bool drop, int64_t txBytes,
                               int64_t &phase) {
  int slot = -1;
  if (!liveBarrier(I, t, bar, "mbarrier arrive", slot))
    return false;
  Mbarrier &m = barriers[slot].state;
  phase = m.phase();
  // The arrival's clock belongs to the phase it may complete.
  if (memory.ordering())
    memory.release(t / 32, barriers[slot].pending);
  Status s = txBytes ? m.expectTx(txBytes) : Status::success();
  if (s.ok())
    s = m.arrive(count, drop);
  if (!s.ok())
    return errors.fail(I, s.error() + " on " + barrierName(slot) + " by " +
                              threadName(t));
  if (memory.ordering())
    phaseClocks(slot);
  return true;
}

bool AsyncUnit::mbarrierTx(const Instr &I, int64_t t, uint32_t bar,
                           int64_t n, bool complete) {
  int slot = -1;
  if (!liveBarrier(I, t, bar, complete ? "mbarrier.complete_tx"
                                       : "mbarrier.expect_tx",
                   slot))
    return false;
  Mbarrier &m = barriers[slot].state;
  if (memory.ordering())
    memory.release(t / 32, barriers[slot].pending);
  Status s = complete ? m.completeTx(n) : m.expectTx(n);
  if (!s.ok())
    return errors.fail(I, s.error() + " on " + barrierName(slot) + " by " +
                              threadName(t));
  if (memory.ordering())
    phaseClocks(slot);
  return true;
}

bool AsyncUnit::landLoads(const Instr &I, int slot) {
  SharedMemory &smem = memory.shared();
  for (auto it = loads.begin(); it != loads.end();) {
    if (it->slot != slot) {
      ++it;
      continue;
    }
    Mbarrier &m = barriers[slot].state;
    int64_t publishedPhase = m.phase();
    for (size_t e = 0; e < it->addr.size(); ++e) {
      uint32_t a = it->addr[e];
      (void)smem.write(a, &it->data[e * it->elemBytes], it->elemBytes);
      memory.markAsyncProxyWrite(a, it->elemBytes);
      for (uint32_t k = 0; k < it->elemBytes; ++k) {
        ByteState &b = bytes[a + k];
        --b.loadsInFlight;
        b.publisher = slot;
        b.publishedPhase = publishedPhase;
      }
    }
    if (memory.ordering()) {
      // The load's completion carries its issue's clock to the waiters.
      std::vector<uint32_t> &p = barriers[slot].pending;
      p.resize(it->clock.size(), 0);
      for (size_t v = 0; v < it->clock.size(); ++v)
        p[v] = std::max(p[v], it->clock[v]);
    }
    Status s = m.completeTx(it->bytes);
    if (!s.ok())
      return errors.fail(I, s.error() + " on " + barrierName(slot) +
                                " when a TMA load issued by " +
                                threadName(it->issuer) + " completed");
    if (memory.ordering())
      phaseClocks(slot);
    it = loads.erase(it);
  }
  return true;
}

bool AsyncUnit::cpAsyncArrive(const Instr &I, int64_t t, uint32_t bar,
                              bool noinc) {
  int slot = -1;
  if (!liveBarrier(I, t, bar, "cp.async.mbarrier.arrive", slot))
    return false;
  if (!noinc) {
    Status s = barriers[slot].state.expectArrival();
    if (!s.ok())
      return errors.fail(I, s.error() + " on " + barrierName(slot) + " by " +
                                threadName(t));
  }
  CpArrival a{slot, t, memory.takeCopies(t)};
  ++stats.cpAsyncArrives;
  // Nothing in flight: the arrival fires now.
  if (a.copies.empty())
    return landCpArrival(I, a);
  cpArrivals.push_back(std::move(a));
  return true;
}

bool AsyncUnit::landCpArrival(const Instr &I, const CpArrival &a) {
  if (!memory.landTaken(I, a.thread, a.copies))
    return false;
  int64_t publishedPhase = barriers[a.slot].state.phase();
  for (const CpAsyncState::Copy &c : a.copies)
    for (uint32_t k = 0; k < c.size; ++k) {
      bytes[c.dst + k].publisher = a.slot;
      bytes[c.dst + k].publishedPhase = publishedPhase;
    }
  int64_t phase;
  return mbarrierArrive(I, a.thread, barriers[a.slot].offset, 1, false, 0,
                        phase);
}

bool AsyncUnit::landCpArrivalsIf(
    const Instr &I, llvm::function_ref<bool(const CpArrival &)> which) {
  for (auto it = cpArrivals.begin(); it != cpArrivals.end();) {
    if (!which(*it)) {
      ++it;
      continue;
    }
    CpArrival a = std::move(*it);
    it = cpArrivals.erase(it);
    if (!landCpArrival(I, a))
      return false;
  }
  return true;
}

bool AsyncUnit::landCpArrivals(const Instr &I, int slot) {
  return landCpArrivalsIf(I,
                          [&](const CpArrival &a) { return a.slot == slot; });
}

bool AsyncUnit::landCpArrivalsOf(const Instr &I, int64_t t) {
  return landCpArrivalsIf(I, [&](const CpArrival &a) { return a.thread == t; });
}

bool AsyncUnit::waitOne(const Instr &I, int64_t t, int slot, int64_t parity,
                        int64_t meant, bool blocking, bool &done) {
  Barrier &b = barriers[slot];
  int64_t cur = b.state.phase();
  if (meant <= cur - 2)
    return errors.fail(
        I, threadName(t) + " waits on parity " + std::to_string(parity) +
               ", which after the " + std::to_string(b.seen[t]) +
               " phases it has seen complete means phase " +
               std::to_string(meant) + " of " + barrierName(slot) +
               ", two or more behind its current phase " +
               std::to_string(cur) +
               " (a parity wait cannot tell them apart: a wrong parity, or "
               "missing waits in earlier phases?)");
  done = meant < cur;
  while (true) {
    if (!done) {
      if (!landLoads(I, slot) || !landCpArrivals(I, slot))
        return false;
      cur = b.state.phase();
      done = meant < cur;
    }
    // In a role split the other side may still complete the phase.
    if (done || !blocking || !blockCurrentRole())
      break;
    cur = b.state.phase();
    done = meant < cur;
  }
  if (!done && blocking) {
    const Mbarrier &m = b.state;
    return errors.fail(
        I, "deadlock: " + threadName(t) + " waits for phase " +
               std::to_string(meant) + " of " + barrierName(slot) +
               ", which cannot complete: " + std::to_string(m.pending()) +
               " of " + std::to_string(m.expected()) +
               " arrivals pending, tx-count " + std::to_string(m.tx()) +
               ", no TMA load or cp.async in flight on it, and every other "
               "thread of the "
               "CTA is blocked or has run past");
  }
  if (done) {
    if (memory.ordering())
      memory.acquire(t / 32, b.completed);
    if (meant + 1 > b.seen[t])
      b.seen[t] = meant + 1;
    if (meant == cur - 1 && b.state.unobserved()) {
      // The completed phase orders the arrivers' earlier accesses before
      // the waiters' later ones; the race check's one epoch counter can
      // only express that as a new CTA-wide epoch.
      b.state.observe();
      memory.barrier();
    }
  }
  return true;
}

bool AsyncUnit::mbarrierWait(const Instr &I, const ActiveThreads &threads,
                             const Cell *barOf, const Cell *parityOf,
                             bool isState, bool blocking, uint8_t *done) {
  const int64_t T = program.T;
  for (int64_t w = 0; w * 32 < T; ++w) {
    bool any = false;
    for (int64_t t = w * 32; t < std::min<int64_t>(T, w * 32 + 32); ++t) {
      if (!threads.mask[t])
        continue;
      any = true;
      int slot = -1;
      if (!liveBarrier(I, t, static_cast<uint32_t>(barOf[t].i),
                       "mbarrier wait", slot))
        return false;
      int64_t meant, parity = -1;
      if (isState) {
        meant = parityOf[t].i;
        int64_t cur = barriers[slot].state.phase();
        if (meant < 0 || meant > cur)
          return errors.fail(I, threadName(t) + " waits on a state of " +
                                    barrierName(slot) +
                                    " that no arrive on it returned");
      } else {
        parity = parityOf[t].i & 1;
        meant = phaseMeant(barriers[slot].seen[t],
                           static_cast<uint32_t>(parity));
      }
      bool ok;
      if (!waitOne(I, t, slot, parity, meant, blocking, ok))
        return false;
      if (done)
        done[t] = ok;
    }
    stats.mbarrierWaits += any;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Named barriers
//===----------------------------------------------------------------------===//

bool AsyncUnit::namedBarrier(const Instr &I, const ActiveThreads &threads,
                             int64_t id, int64_t count, bool wait) {
  const int64_t T = program.T;
  const char *op = wait ? "bar.sync" : "bar.arrive";
  if (id < 0 || id >= kNumNamedBarriers)
    return errors.fail(I, std::string(op) + " barrier id " +
                              std::to_string(id) + " is outside 0..15");
  if (count > T)
    return errors.fail(I, std::string(op) + " of " + std::to_string(count) +
                              " threads in a CTA of " + std::to_string(T));
  NamedBarrier &nb = named[id];
  bool blocked = false;
  std::vector<int64_t> &waiting = namedWaiting[id]; ///< warps in bar.sync
  for (int64_t w = 0; w * 32 < T; ++w) {
    int64_t first = w * 32, last = std::min<int64_t>(T, first + 32);
    int64_t active = 0;
    for (int64_t t = first; t < last; ++t)
      active += threads.mask[t];
    if (!active)
      continue;
    if (active != last - first)
      return errors.fail(I, std::string(op) + " executed by " +
                                std::to_string(active) + " of the " +
                                std::to_string(last - first) +
                                " threads of warp " + std::to_string(w) +
                                " (it is .aligned: divergent control flow?)");
    bool completed;
    Status s = nb.arrive(static_cast<int>(w), last - first, count, completed);
    if (!s.ok())
      return errors.fail(I, std::string(op) + " " + std::to_string(id) + ": " +
                                s.error());
    stats.barrierWarps += 1;
    if (memory.ordering()) {
      memory.release(w, namedClocks[id]);
      if (wait)
        waiting.push_back(w);
    }
    if (completed) {
      memory.barrier();
      if (memory.ordering()) {
        for (int64_t v : waiting)
          memory.acquire(v, namedClocks[id]);
        waiting.clear();
        namedClocks[id].clear();
      }
      ++stats.barriers;
      ++namedRounds[id];
      blocked = false;
    } else if (wait) {
      blocked = true;
    }
  }
  // In a role split the other side may still arrive.
  for (uint64_t round = namedRounds[id]; blocked && blockCurrentRole();)
    blocked = namedRounds[id] == round;
  if (blocked)
    return errors.fail(
        I, "deadlock: bar.sync " + std::to_string(id) + ", " +
               std::to_string(count) + " waits with only " +
               std::to_string(nb.arrived()) +
               " threads arrived, and every other thread of the CTA is "
               "blocked or has run past");
  return true;
}

//===----------------------------------------------------------------------===//
// TMA
//===----------------------------------------------------------------------===//

/// Checks a box's shared address: 16-byte aligned, or aligned to the swizzle
/// pattern's repeat, and inside shared memory.
static bool checkBoxAddress(Memory &memory, ErrorReporter &errors,
                            const Instr &I, int64_t t, const TensorMap &map,
                            int64_t addr, const char *what) {
  int64_t align = map.swizzle == TmaSwizzle::None ? 16
                                                  : tmaSwizzleAtom(map.swizzle);
  if (addr % align != 0)
    return errors.fail(I, std::string(what) + " at shared " + hex(addr) +
                              " by " + threadName(t) +
                              " is not a multiple of " +
                              std::to_string(align) + " bytes" +
                              (map.swizzle == TmaSwizzle::None
                                   ? std::string("")
                                   : " (the repeat of its " +
                                         std::to_string(
                                             tmaSwizzleSpan(map.swizzle)) +
                                         "-byte swizzle)"));
  return memory.checkShared(I, t, addr, boxBytes(map), 1, what);
}

bool AsyncUnit::tmaLoad(const Instr &I, int64_t t, const TensorMap &map,
                        const int32_t *coords, uint32_t dst, uint32_t bar) {
  int slot = -1;
  if (!liveBarrier(I, t, bar, "TMA load signalling", slot))
    return false;
  if (!checkBoxAddress(memory, errors, I, t, map, dst, "TMA load destination"))
    return false;
  Load l;
  if (memory.ordering()) {
    if (!memory.checkOverwrite(I, t, dst, boxBytes(map), "TMA load"))
      return false;
    l.clock = memory.clockOf(t / 32);
  }
  l.slot = slot;
  l.bytes = boxBytes(map);
  l.issuer = t;
  l.elemBytes = static_cast<uint32_t>(tmaElementBytes(map.type));
  const uint32_t esz = l.elemBytes;
  bool ok = true;
  forEachBoxElement(map, coords, [&](const BoxElement &e) {
    if (!ok)
      return;
    uint32_t a = dst + static_cast<uint32_t>(e.smemOffset);
    for (uint32_t k = 0; k < esz; ++k) {
      const ByteState &b = bytes[a + k];
      if (b.mbarrier || b.loadsInFlight || b.storesReading) {
        ok = errors.fail(
            I, "TMA load by " + threadName(t) + " writes shared byte " +
                   hex(a + k) + ", which " +
                   (b.mbarrier ? "belongs to a live mbarrier"
                    : b.loadsInFlight
                        ? "another TMA load in flight writes"
                        : "a TMA store or reduce-add in flight still "
                          "reads (missing cp.async.bulk.wait_group.read?)"));
        return;
      }
    }
    l.addr.push_back(a);
    size_t at = l.data.size();
    l.data.resize(at + esz);
    if (!e.inBounds) {
      if (map.oobFill == TmaOobFill::NanRequestZeroFma) {
        std::fill(l.data.begin() + at, l.data.end(), 0xff);
        l.data.back() = 0x7f; // the quiet NaN with every payload bit set
      }
      return;
    }
    uint8_t *src;
    if (!memory.checkGlobal(I, t, int64_t(map.globalAddress + e.globalByte),
                            esz, esz, GlobalAccess::Read, src)) {
      ok = false;
      return;
    }
    std::copy(src, src + esz, l.data.begin() + at);
    stats.globalBytesRead += esz;
  });
  if (!ok)
    return false;
  for (uint32_t a : l.addr)
    for (uint32_t k = 0; k < esz; ++k)
      ++bytes[a + k].loadsInFlight;
  stats.tmaLoads += 1;
  stats.tmaBytesLoaded += l.bytes;
  stats.sharedBytesWritten += l.bytes;
  loads.push_back(std::move(l));
  return true;
}

bool AsyncUnit::tmaStore(const Instr &I, int64_t t, const TensorMap &map,
                         const int32_t *coords, uint32_t src, bool add) {
  const std::string reader =
      (add ? "TMA reduce-add by " : "TMA store by ") + threadName(t);
  if (add && map.type != TmaDataType::F32)
    return errors.fail(I, reader + " through a map whose elements are not "
                                   "f32 (the emulator adds f32 only)");
  for (int d = 0; d < map.rank; ++d)
    if (coords[d] < 0)
      return errors.fail(I, reader + " at a negative coordinate (" +
                                std::to_string(coords[d]) + " in dimension " +
                                std::to_string(d) + ")");
  if (!checkBoxAddress(memory, errors, I, t, map, src, "TMA store source"))
    return false;
  Store st;
  st.elemBytes = static_cast<uint32_t>(tmaElementBytes(map.type));
  const uint32_t esz = st.elemBytes;
  bool ok = true;
  uint8_t buf[8];
  forEachBoxElement(map, coords, [&](const BoxElement &e) {
    if (!ok)
      return;
    uint32_t a = src + static_cast<uint32_t>(e.smemOffset);
    if (!memory.checkAsyncProxyRead(I, a, esz, reader.c_str())) {
      ok = false;
      return;
    }
    // The issuing thread reads the bytes: other threads' writes need a
    // barrier before it (the race check), TMA loads a wait.
    if (!memory.trackShared(I, t, a, esz, false)) {
      ok = false;
      return;
    }
    Status s = memory.shared().read(a, buf, esz);
    if (!s.ok()) {
      ok = errors.fail(I, s.error() + " (" + reader +
                              "; nothing stored these bytes before)");
      return;
    }
    st.addr.push_back(a);
    if (!e.inBounds)
      return; // elements outside the tensor are not written
    uint8_t *dst;
    if (!memory.checkGlobal(I, t, int64_t(map.globalAddress + e.globalByte),
                            esz, esz,
                            add ? GlobalAccess::Atomic : GlobalAccess::Write,
                            dst)) {
      ok = false;
      return;
    }
    if (add) {
      float sum, term;
      std::memcpy(&sum, dst, 4);
      std::memcpy(&term, buf, 4);
      sum += term;
      std::memcpy(dst, &sum, 4);
      stats.globalBytesRead += esz;
    } else {
      std::copy(buf, buf + esz, dst);
    }
    stats.globalBytesWritten += esz;
  });
  if (!ok)
    return false;
  for (uint32_t a : st.addr)
    for (uint32_t k = 0; k < esz; ++k)
      ++bytes[a + k].storesReading;
  (add ? stats.tmaReduces : stats.tmaStores) += 1;
  (add ? stats.tmaBytesReduced : stats.tmaBytesStored) += boxBytes(map);
  stats.sharedBytesRead += boxBytes(map);
  bulkCurrent[t].push_back(std::move(st));
  return true;
}

void AsyncUnit::bulkCommit(int64_t t) {
  bulkGroups[t].push_back(std::move(bulkCurrent[t]));
  bulkCurrent[t].clear();
}

void AsyncUnit::bulkWait(int64_t t, uint32_t n) {
  auto &groups = bulkGroups[t];
  while (groups.size() > n) {
    for (const Store &st : groups.front())
      for (uint32_t a : st.addr)
        for (uint32_t k = 0; k < st.elemBytes; ++k)
          --bytes[a + k].storesReading;
    groups.pop_front();
  }
}

} // namespace flash::emu

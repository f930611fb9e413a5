//===- Memory.cpp - Global and shared memory, sanitized -------------------===//
//
// The sanitizer's rules (Memory.h) and the loads and stores that go through
// them.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"
#include "AsyncUnit.h"
#include "ExecHandlers.h"
#include "Executor.h"

#include <algorithm>

namespace flash::emu {

Memory::Memory(const Program &program, std::vector<GlobalBuffer> &buffers,
               const Options &options, Stats &stats, ErrorReporter &errors)
    : T(program.T), numWarps(program.numWarps), layout(program.shared),
      buffers(buffers), checkRaces(options.checkRaces), stats(stats),
      errors(errors),
      asyncUnit(std::make_unique<AsyncUnit>(program, *this, stats, errors)),
      shadow(program.shared.limit) {}

Memory::~Memory() = default;

void Memory::beginCTA(const std::array<int64_t, 3> &at) {
  ctas.push_back(at);
  smem = std::make_unique<SharedMemory>(static_cast<uint32_t>(layout.limit));
  for (auto &b : shadow) {
    b.pending = 0;
    b.genericWriter = -1;
    b.asyncReads = 0;
  }
  epoch += 2; // a new CTA: no access of the previous one counts
  trackOrder = checkRaces && asyncUnit->active();
  if (trackOrder) {
    clocks.assign(numWarps * numWarps, 0);
    for (int64_t w = 0; w < numWarps; ++w)
      clocks[w * numWarps + w] = 1;
    lastRead.assign(shadow.size() * numWarps, ReadStamp());
  }
  cpStates.assign(T, CpAsyncState());
  cpCurrent.assign(T, {});
  cpGroups.assign(T, {});
  asyncUnit->beginCTA();
}

bool Memory::checkGlobal(const Instr &I, int64_t t, int64_t p, int64_t bytes,
                         int64_t align, GlobalAccess kind, uint8_t *&addr) {
  int id = globalPtrId(p);
  int64_t off = globalPtrOffset(p);
  const char *what = kind == GlobalAccess::Read    ? "read"
                     : kind == GlobalAccess::Write ? "write"
                                                   : "atomic add";
  if (id < 1 || id > (int)buffers.size())
    return errors.fail(I, std::string("global ") + what + " of " +
                              std::to_string(bytes) +
                              " bytes through a pointer "
                              "that is not inside any argument buffer, by " +
                              threadName(t));
  GlobalBuffer &buf = buffers[id - 1];
  int64_t size = buf.bytes.size();
  if (off < 0 || off + bytes > size)
    return errors.fail(I,
                       std::string("out-of-bounds global ") + what + " of " +
                           std::to_string(bytes) + " bytes at byte offset " +
                           std::to_string(off) + " of '" + buf.name + "' (" +
                           std::to_string(size) + " bytes; element " +
                           std::to_string(off / std::max<int64_t>(1, bytes)) +
                           " of this access size) by " + threadName(t));
  if (align > 1 && off % align != 0)
    return errors.fail(I, std::string("misaligned global ") + what +
                              ": byte offset " + std::to_string(off) + " of '" +
                              buf.name +
                              "' is not a multiple of the alignment " +
                              std::to_string(align) + ", by " + threadName(t));
  addr = buf.bytes.data() + off;
  if (!checkRaces)
    return true;
  if (globalLog) {
    globalLog->push_back({&I, off, static_cast<int32_t>(t), epoch,
                          static_cast<uint32_t>(bytes),
                          static_cast<uint16_t>(id - 1), kind});
    return true;
  }
  return kind == GlobalAccess::Read
             ? trackGlobalRead(I, t, id - 1, off, bytes)
             : trackGlobal(I, t, id - 1, off, bytes, kind);
}

bool Memory::replayGlobal(const GlobalAccessRecord &r) {
  epoch = r.epoch;
  return r.kind == GlobalAccess::Read
             ? trackGlobalRead(*r.instr, r.tid, r.buf, r.off, r.bytes)
             : trackGlobal(*r.instr, r.tid, r.buf, r.off, r.bytes, r.kind);
}

std::string Memory::globalWriter(int32_t cta, int32_t tid) const {
  if (cta == kMany)
    return "threads of several CTAs";
  const auto &c = ctas[cta];
  std::string where = " of CTA (" + std::to_string(c[0]) + ", " +
                      std::to_string(c[1]) + ", " + std::to_string(c[2]) + ")";
  return (tid == kMany ? "several threads" : threadName(tid)) + where;
}

std::vector<Memory::GlobalShadow> &Memory::shadowOf(size_t buf) {
  if (globalShadow.size() != buffers.size())
    globalShadow.resize(buffers.size());
  std::vector<GlobalShadow> &bytesShadow = globalShadow[buf];
  if (bytesShadow.empty())
    bytesShadow.resize(buffers[buf].bytes.size());
  return bytesShadow;
}

bool Memory::readRaceError(const Instr &I, int64_t t, size_t buf, int64_t at,
                           const std::string &other, bool reading) {
  return errors.fail(
      I, std::string("global-memory race: ") + threadName(t) +
             (reading ? " reads" : " writes") + " byte " + std::to_string(at) +
             " of '" + buffers[buf].name + "' that " + other +
             " (a read and a write of one launch's CTAs, or of one CTA's "
             "warps between barriers, are unordered; read and write "
             "disjoint windows, or separate tensors)");
}

bool Memory::trackGlobalRead(const Instr &I, int64_t t, size_t buf, int64_t off,
                             int64_t bytes) {
  std::vector<GlobalShadow> &bytesShadow = shadowOf(buf);
  int32_t cta = static_cast<int32_t>(ctas.size() - 1);
  int32_t warp = static_cast<int32_t>(t / 32);
  for (int64_t k = 0; k < bytes; ++k) {
    GlobalShadow &g = bytesShadow[off + k];
    if (g.wCta != -1 &&
        readWriteUnordered(g.wCta, g.wTid == kMany ? kMany : g.wTid / 32,
                           g.wEpoch, warp))
      return readRaceError(I, t, buf, off + k,
                           globalWriter(g.wCta, g.wTid) + " wrote", true);
    if (g.aCta != -1 &&
        readWriteUnordered(g.aCta, g.aTid == kMany ? kMany : g.aTid / 32,
                           g.aEpoch, warp))
      return readRaceError(I, t, buf, off + k,
                           globalWriter(g.aCta, g.aTid) + " added to", true);
    if (g.rCta == -1 || (g.rCta == cta && g.rEpoch != epoch)) {
      g.rCta = cta;
      g.rWarp = warp;
      g.rEpoch = epoch;
    } else if (g.rCta != cta) {
      g.rCta = kMany;
    } else if (g.rWarp != warp) {
      g.rWarp = kMany;
    }
  }
  return true;
}

bool Memory::readWriteUnordered(int32_t c, int32_t w, uint32_t e,
                                int32_t warp) const {
  int32_t cta = static_cast<int32_t>(ctas.size() - 1);
  return c != cta || (e == epoch && (w == kMany || w != warp));
}

std::string Memory::globalReader(int32_t cta, int32_t warp) const {
  if (cta == kMany)
    return "threads of several CTAs";
  const auto &c = ctas[cta];
  return (warp == kMany ? std::string("threads of several warps")
                        : "a thread of warp " + std::to_string(warp)) +
         " of CTA (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
         ", " + std::to_string(c[2]) + ")";
}

bool Memory::trackGlobal(const Instr &I, int64_t t, size_t buf, int64_t off,
                         int64_t bytes, GlobalAccess kind) {
  std::vector<GlobalShadow> &bytesShadow = shadowOf(buf);
  int32_t cta = static_cast<int32_t>(ctas.size() - 1);
  int32_t tid = static_cast<int32_t>(t);
  // Two accesses are ordered only if one thread made both, or one CTA made
  // them with a barrier between.
  auto conflicts = [&](int32_t c, int32_t u, uint32_t e) {
    return c != -1 && (c != cta || (e == epoch && u != tid));
  };
  bool atomic = kind == GlobalAccess::Atomic;
  int32_t warp = tid / 32;
  for (int64_t k = 0; k < bytes; ++k) {
    GlobalShadow &g = bytesShadow[off + k];
    if (g.rCta != -1 && readWriteUnordered(g.rCta, g.rWarp, g.rEpoch, warp))
      return readRaceError(I, t, buf, off + k,
                           globalReader(g.rCta, g.rWarp) + " read", false);
    int32_t otherCta = -1, otherTid = -1;
    if (conflicts(g.wCta, g.wTid, g.wEpoch)) {
      otherCta = g.wCta;
      otherTid = g.wTid;
    } else if (!atomic && conflicts(g.aCta, g.aTid, g.aEpoch)) {
      otherCta = g.aCta;
      otherTid = g.aTid;
    }
    if (otherCta != -1)
      return errors.fail(
          I, std::string("global-memory race: ") + threadName(t) +
                 (atomic ? " atomically adds to" : " writes") + " byte " +
                 std::to_string(off + k) + " of '" + buffers[buf].name +
                 "' that " + globalWriter(otherCta, otherTid) +
                 (otherCta == g.wCta && otherTid == g.wTid ? " wrote"
                                                           : " added to") +
                 " (stores of one launch's CTAs, or of one CTA's threads "
                 "between barriers, are unordered; use atomic_add or "
                 "disjoint windows)");
    int32_t &c = atomic ? g.aCta : g.wCta;
    int32_t &u = atomic ? g.aTid : g.wTid;
    uint32_t &e = atomic ? g.aEpoch : g.wEpoch;
    if (c == -1 || (c == cta && e != epoch)) {
      c = cta;
      u = tid;
      e = epoch;
    } else if (c != cta) {
      c = kMany; // atomics of several CTAs: a later plain write races
    } else if (u != tid) {
      u = kMany;
    }
  }
  return true;
}

bool Memory::checkShared(const Instr &I, int64_t t, int64_t off, int64_t bytes,
                         int64_t align, const char *what) {
  if (off < 0 || off + bytes > layout.limit)
    return errors.fail(I, std::string("out-of-bounds shared ") + what + " of " +
                              std::to_string(bytes) + " bytes at byte offset " +
                              std::to_string(off) + " (shared memory is " +
                              std::to_string(layout.limit) + " bytes: " +
                              layout.limitWhy + ") by " + threadName(t));
  if (align > 1 && off % align != 0)
    return errors.fail(I, std::string("misaligned shared ") + what +
                              ": byte offset " + std::to_string(off) +
                              " is not a multiple of the alignment " +
                              std::to_string(align) + ", by " + threadName(t));
  return true;
}

bool Memory::raceError(const Instr &I, int64_t t, uint32_t addr,
                       const ByteShadow &b, bool write) {
  int32_t tid = static_cast<int32_t>(t);
  if (b.wEpoch == epoch && b.wTid != tid)
    return errors.fail(I, "shared-memory race: " + threadName(t) +
                              (write ? " writes" : " reads") + " byte " +
                              hex(addr) + " that " + threadName(b.wTid) +
                              " wrote since the last barrier (missing "
                              "barrier?)");
  return errors.fail(I, "shared-memory race: " + threadName(t) +
                            " writes byte " + hex(addr) + " that " +
                            (b.rTid == kMany ? std::string("several threads")
                                             : threadName(b.rTid)) +
                            " read since the last barrier (missing "
                            "barrier?)");
}

bool Memory::trackShared(const Instr &I, int64_t t, uint32_t off,
                         uint32_t bytes, bool write, bool fromCpAsync) {
  if (asyncUnit->active() &&
      !asyncUnit->genericAccess(I, t, off, bytes, write))
    return false;
  const int32_t tid = static_cast<int32_t>(t);
  ByteShadow *b = shadow.data() + off;
  // The clean case in one pass per byte; the first byte that is not clean
  // goes to the checks below, which report it.
  uint32_t k = 0;
  const bool checkPending = !fromCpAsync;
  if (checkRaces) {
    if (write) {
      for (; k < bytes; ++k) {
        ByteShadow &s = b[k];
        if ((checkPending & (s.pending != 0)) | (s.asyncReads != 0) |
            ((s.wEpoch == epoch) & (s.wTid != tid)) |
            ((s.rEpoch == epoch) & (s.rTid != tid)))
          break;
        s.wEpoch = epoch;
        s.wTid = tid;
        s.genericWriter = tid;
      }
    } else {
      for (; k < bytes; ++k) {
        ByteShadow &s = b[k];
        if ((checkPending & (s.pending != 0)) |
            ((s.wEpoch == epoch) & (s.wTid != tid)))
          break;
        if (s.rEpoch != epoch) {
          s.rEpoch = epoch;
          s.rTid = tid;
        } else if (s.rTid != tid) {
          s.rTid = kMany;
        }
      }
    }
  }
  for (; k < bytes; ++k) {
    ByteShadow &s = b[k];
    if (s.pending && checkPending)
      return errors.fail(I, std::string(write ? "write to" : "read of") +
                                " shared byte " + hex(off + k) + " by " +
                                threadName(t) +
                                " while a cp.async to it is still in flight "
                                "(missing or too weak cp.async.wait_group?)");
    if (write && s.asyncReads)
      return errors.fail(I, "write to shared byte " + hex(off + k) + " by " +
                                threadName(t) +
                                " while a wgmma reading it is in flight "
                                "(missing or too weak wgmma.wait_group?)");
    if (write)
      s.genericWriter = tid;
    if (!checkRaces)
      continue;
    // A write conflicts with another thread's write or read in this epoch,
    // a read with another thread's write.
    bool wroteElsewhere = s.wEpoch == epoch && s.wTid != tid;
    bool readElsewhere = s.rEpoch == epoch && s.rTid != tid;
    if (wroteElsewhere || (write && readElsewhere))
      return raceError(I, t, off + k, s, write);
    if (write) {
      s.wEpoch = epoch;
      s.wTid = tid;
    } else if (s.rEpoch != epoch) {
      s.rEpoch = epoch;
      s.rTid = tid;
    } else if (s.rTid != tid) {
      s.rTid = kMany;
    }
  }
  if (trackOrder && !write)
    noteRead(t / 32, off, bytes, I);
  return true;
}

void Memory::release(int64_t warp, std::vector<uint32_t> &sync) {
  sync.resize(numWarps, 0);
  uint32_t *c = clocks.data() + warp * numWarps;
  for (int64_t v = 0; v < numWarps; ++v)
    sync[v] = std::max(sync[v], c[v]);
  ++c[warp];
}

void Memory::acquire(int64_t warp, const std::vector<uint32_t> &sync) {
  uint32_t *c = clocks.data() + warp * numWarps;
  for (size_t v = 0; v < sync.size(); ++v)
    c[v] = std::max(c[v], sync[v]);
}

void Memory::syncAllWarps() {
  if (!trackOrder)
    return;
  std::vector<uint32_t> all(numWarps, 0);
  for (int64_t w = 0; w < numWarps; ++w)
    release(w, all);
  for (int64_t w = 0; w < numWarps; ++w)
    acquire(w, all);
}

std::vector<uint32_t> Memory::clockOf(int64_t warp) const {
  return std::vector<uint32_t>(clocks.begin() + warp * numWarps,
                               clocks.begin() + (warp + 1) * numWarps);
}

void Memory::noteRead(int64_t warp, uint32_t off, uint32_t bytes,
                      const Instr &at) {
  uint32_t now = clocks[warp * numWarps + warp];
  for (uint32_t k = 0; k < bytes; ++k)
    lastRead[(off + k) * numWarps + warp] = {now, &at};
}

bool Memory::checkOverwrite(const Instr &I, int64_t t, uint32_t off,
                            uint32_t bytes, const char *what) {
  const int64_t u = t / 32;
  const uint32_t *seen = clocks.data() + u * numWarps;
  for (uint32_t k = 0; k < bytes; ++k) {
    const ByteShadow &s = shadow[off + k];
    if (s.asyncReads)
      return errors.fail(
          I, std::string("shared-memory race: ") + what + " by " +
                 threadName(t) + " overwrites byte " + hex(off + k) +
                 " while the wgmma " +
                 (s.asyncReader ? "(" + where(*s.asyncReader) + ") "
                                : std::string()) +
                 "still reads it (missing wgmma.wait_group?)");
    // A warp's own earlier reads are ordered by program order.
    const ReadStamp *r = lastRead.data() + size_t(off + k) * numWarps;
    for (int64_t w = 0; w < numWarps; ++w)
      if (w != u && r[w].clock > seen[w])
        return errors.fail(
            I, std::string("shared-memory race: ") + what + " by " +
                   threadName(t) + " overwrites byte " + hex(off + k) +
                   " that warp " + std::to_string(w) + " read (" +
                   where(*r[w].at) +
                   ") with nothing ordering that read before the issue "
                   "(the reader must arrive on a barrier the issuer then "
                   "waits on: missing barrier?)");
  }
  return true;
}

void Memory::fenceProxyAsync(const uint8_t *mask) {
  for (ByteShadow &b : shadow)
    if (b.genericWriter == kAnyFence ||
        (b.genericWriter >= 0 && mask[b.genericWriter]))
      b.genericWriter = -1;
}

bool Memory::checkAsyncProxyRead(const Instr &I, uint32_t off, uint32_t bytes,
                                 const char *what) {
  for (uint32_t k = 0; k < bytes; ++k)
    if (shadow[off + k].genericWriter == kAnyFence)
      return errors.fail(I, std::string(what) + " reads shared byte " +
                                hex(off + k) +
                                ", which a cp.async an mbarrier tracked "
                                "wrote through the generic proxy, with no "
                                "fence.proxy.async since it landed");
    else if (int32_t w = shadow[off + k].genericWriter; w >= 0)
      return errors.fail(I, std::string(what) + " reads shared byte " +
                                hex(off + k) + " written by " +
                                threadName(w) +
                                " through the generic proxy with no "
                                "fence.proxy.async of that thread since");
  return true;
}

void Memory::holdAsyncRead(uint32_t off, uint32_t bytes, int delta,
                           const Instr *reader) {
  for (uint32_t k = 0; k < bytes; ++k) {
    shadow[off + k].asyncReads += delta;
    if (reader)
      shadow[off + k].asyncReader = reader;
  }
}

void Memory::markAsyncProxyWrite(uint32_t off, uint32_t bytes) {
  for (uint32_t k = 0; k < bytes; ++k)
    shadow[off + k].genericWriter = -1;
}

bool Memory::issueCopy(const Instr &I, int64_t t, uint32_t dst,
                       const uint8_t *src, uint32_t size, uint32_t srcSize) {
  // The copy may land any time until its wait: a write from now on.
  if (trackOrder && !checkOverwrite(I, t, dst, size, "cp.async"))
    return false;
  if (!trackShared(I, t, dst, size, true))
    return false;
  Status s = cpStates[t].issue(dst, src, size, srcSize);
  if (!s.ok())
    return errors.fail(I, s.error() + " (" + threadName(t) + ")");
  for (uint32_t k = 0; k < size; ++k)
    ++shadow[dst + k].pending;
  cpCurrent[t].push_back({dst, size});
  return true;
}

void Memory::commitCopies(int64_t t) {
  cpStates[t].commitGroup();
  cpGroups[t].emplace_back();
  cpGroups[t].back().swap(cpCurrent[t]);
  // Reuse a landed group's storage rather than allocate per group.
  if (!spareRanges.empty()) {
    cpCurrent[t].swap(spareRanges.back());
    spareRanges.pop_back();
  }
}

bool Memory::landCopies(const Instr &I, int64_t t, std::vector<Range> &ranges) {
  for (const Range &r : ranges) {
    for (uint32_t k = 0; k < r.size; ++k)
      --shadow[r.dst + k].pending;
    if (!trackShared(I, t, r.dst, r.size, true, /*fromCpAsync=*/true))
      return false;
  }
  return true;
}

bool Memory::waitCopies(const Instr &I, int64_t t, uint32_t n) {
  Status s = cpStates[t].waitGroup(*smem, n);
  if (!s.ok())
    return errors.fail(I, s.error() + " (" + threadName(t) + ")");
  auto &groups = cpGroups[t];
  while (groups.size() > n) {
    if (!landCopies(I, t, groups.front()))
      return false;
    groups.front().clear();
    spareRanges.push_back(std::move(groups.front()));
    groups.pop_front();
  }
  return true;
}

std::vector<CpAsyncState::Copy> Memory::takeCopies(int64_t t) {
  cpCurrent[t].clear();
  for (std::vector<Range> &group : cpGroups[t])
    group.clear();
  return cpStates[t].takePending();
}

bool Memory::landTaken(const Instr &I, int64_t t,
                       const std::vector<CpAsyncState::Copy> &copies) {
  for (const CpAsyncState::Copy &c : copies) {
    Status s = smem->write(c.dst, c.data.data(), c.size);
    if (!s.ok())
      return errors.fail(I, "cp.async to " + hex(c.dst) +
                                " landing for its mbarrier arrival: " +
                                s.error() + " (" + threadName(t) + ")");
    for (uint32_t k = 0; k < c.size; ++k)
      --shadow[c.dst + k].pending;
    if (!trackShared(I, t, c.dst, c.size, true, /*fromCpAsync=*/true))
      return false;
    for (uint32_t k = 0; k < c.size; ++k)
      shadow[c.dst + k].genericWriter = kAnyFence;
  }
  return true;
}

int64_t requestConflicts(std::array<LaneAccess, kWarpSize> &acc,
                         uint32_t active) {
  // Accesses narrower than 4 bytes: the containing word (same bank, and a
  // shared word is a broadcast). Wider than 16: 16-byte pieces.
  uint32_t size = 0;
  for (int l = 0; l < 32; ++l)
    if ((active >> l) & 1u)
      size = acc[l].second;
  if (size == 0)
    return 0;
  if (size < 4) {
    for (auto &a : acc)
      a = {a.first & ~3u, 4};
    return std::max(0, bankConflicts(acc.data(), kWarpSize, active));
  }
  if (size == 4 || size == 8 || size == 16)
    return std::max(0, bankConflicts(acc.data(), kWarpSize, active));
  int64_t total = 0;
  uint32_t piece = size % 16 == 0 ? 16 : (size % 8 == 0 ? 8 : 4);
  for (uint32_t p = 0; p < size; p += piece) {
    LaneAccess sub[kWarpSize];
    for (int l = 0; l < 32; ++l)
      sub[l] = {acc[l].first + p, piece};
    total += std::max(0, bankConflicts(sub, kWarpSize, active));
  }
  return total;
}

/// A global ld or st (Write): each active thread's access, counted per warp.
template <bool Write>
static bool globalAccess(Executor &ex, const Instr &I, const uint8_t *mask) {
  const int64_t T = ex.T;
  const int32_t valId = Write ? I.b : I.res;
  const ValInfo &vv = ex.val(valId);
  const Cell *P = ex.cellsOf(I.a);
  Cell *X = ex.cellsOf(valId);
  const uint32_t esz = byteSize(vv.sk);
  const int64_t bytes = int64_t(esz) * vv.n;
  Stats &stats = ex.stats;
  for (int64_t w = 0; w < ex.numWarps; ++w) {
    bool any = false;
    for (int64_t t = w * 32; t < std::min<int64_t>(T, w * 32 + 32); ++t) {
      if (!mask[t])
        continue;
      any = true;
      uint8_t *addr;
      if (!ex.memory.checkGlobal(
              I, t, P[t].i, bytes, I.imm,
              Write ? GlobalAccess::Write : GlobalAccess::Read, addr))
        return false;
      for (uint32_t e = 0; e < vv.n; ++e) {
        if constexpr (Write)
          encodeElem(vv.sk, X[e * T + t], addr + e * esz);
        else
          decodeElem(vv.sk, addr + e * esz, X[e * T + t]);
      }
      (Write ? stats.globalBytesWritten : stats.globalBytesRead) += bytes;
    }
    (Write ? stats.globalStores : stats.globalLoads) += any;
  }
  return true;
}

/// A shared ld or st (Write): one warp-wide request per warp, sanitized.
template <bool Write>
static bool sharedAccess(Executor &ex, const Instr &I, const uint8_t *mask) {
  const int64_t T = ex.T;
  const int32_t valId = Write ? I.b : I.res;
  const ValInfo &vv = ex.val(valId);
  const Cell *P = ex.cellsOf(I.a);
  Cell *X = ex.cellsOf(valId);
  const uint32_t esz = byteSize(vv.sk);
  const int64_t bytes = int64_t(esz) * vv.n;
  Memory &mem = ex.memory;
  Stats &stats = ex.stats;
  uint8_t buf[256];
  return mem.sharedRequests(
      mask, Write ? stats.sharedStores : stats.sharedLoads,
      [&](int64_t t, LaneAccess &acc) {
        int64_t off = P[t].i;
        if (!mem.checkShared(I, t, off, bytes, I.imm, Write ? "write" : "read"))
          return false;
        if (!mem.trackShared(I, t, off, bytes, Write))
          return false;
        if constexpr (Write) {
          for (uint32_t e = 0; e < vv.n; ++e)
            encodeElem(vv.sk, X[e * T + t], buf + e * esz);
          Status s = mem.shared().write(static_cast<uint32_t>(off), buf,
                                        static_cast<uint32_t>(bytes));
          if (!s.ok())
            return ex.fail(I, s.error() + " (" + threadName(t) + ")");
        } else {
          Status s = mem.shared().read(static_cast<uint32_t>(off), buf,
                                       static_cast<uint32_t>(bytes));
          if (!s.ok())
            return ex.fail(I, s.error() + " (" + threadName(t) +
                                  "; nothing stored these bytes before the "
                                  "read)");
          for (uint32_t e = 0; e < vv.n; ++e)
            decodeElem(vv.sk, buf + e * esz, X[e * T + t]);
        }
        acc = {static_cast<uint32_t>(off), static_cast<uint32_t>(bytes)};
        (Write ? stats.sharedBytesWritten : stats.sharedBytesRead) += bytes;
        return true;
      });
}

/// llvm.atomicrmw fadd on global f32: the active threads' additions happen
/// one at a time in thread order (a CTA's warps in order, lanes in order),
/// each rounded to f32; CTAs run one after another in the emulator's grid
/// order, so the result is deterministic. res = the old value.
bool execAtomicAdd(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  const Cell *P = ex.cellsOf(I.a);
  const Cell *V = ex.cellsOf(I.b);
  Cell *R = ex.cellsOf(I.res);
  Stats &stats = ex.stats;
  for (int64_t w = 0; w < ex.numWarps; ++w) {
    bool any = false;
    for (int64_t t = w * 32; t < std::min<int64_t>(T, w * 32 + 32); ++t) {
      if (!threads.mask[t])
        continue;
      any = true;
      uint8_t *addr;
      if (!ex.memory.checkGlobal(I, t, P[t].i, 4, I.imm, GlobalAccess::Atomic,
                                 addr))
        return false;
      Cell old, sum;
      decodeElem(SK::F32, addr, old);
      sum.d = static_cast<float>(old.d + V[t].d); // exact, then one rounding
      encodeElem(SK::F32, sum, addr);
      R[t] = old;
      stats.globalBytesRead += 4;
      stats.globalBytesWritten += 4;
    }
    stats.globalAtomics += any;
  }
  return true;
}

bool execLoad(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  return I.sk2 == SK::PG ? globalAccess<false>(ex, I, threads.mask)
                         : sharedAccess<false>(ex, I, threads.mask);
}

bool execStore(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  return I.sk2 == SK::PG ? globalAccess<true>(ex, I, threads.mask)
                         : sharedAccess<true>(ex, I, threads.mask);
}

} // namespace flash::emu

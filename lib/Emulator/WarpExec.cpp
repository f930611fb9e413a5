//===- WarpExec.cpp - Warp-wide instructions, barriers, cp.async ----------===//
//
// Each warp instruction gathers its warp's registers into WarpOps.h's lane
// arrays, runs the bit-exact PTX semantics there, and scatters the result
// back to the lanes that executed it. The lanes a warp op needs must be
// active (divergence is an error); barriers need every thread of the CTA.
//
//===----------------------------------------------------------------------===//

#include "AsyncUnit.h"
#include "ExecHandlers.h"
#include "Executor.h"

#include <algorithm>

namespace flash::emu {

/// Checks one warp's shfl.sync operands: active lanes must agree on the
/// member mask and clamp, and every member lane must execute it (PTX waits
/// for them; lanes that never arrive are divergence).
static bool checkShflLanes(Executor &ex, const Instr &I, int64_t w,
                           uint32_t active, const Cell *M, const Cell *Cc,
                           uint32_t member, uint32_t c) {
  for (int l = 0; l < 32; ++l) {
    int64_t t = w * 32 + l;
    if (t >= ex.T || !((active >> l) & 1u))
      continue;
    if (static_cast<uint32_t>(M[t].i) != member)
      return ex.fail(I, "lanes of warp " + std::to_string(w) +
                            " disagree on the member mask (" + threadName(t) +
                            ")");
    if (static_cast<uint32_t>(Cc[t].i) != c)
      return ex.fail(I, "lanes of warp " + std::to_string(w) +
                            " disagree on the clamp/segment operand (" +
                            threadName(t) + ")");
  }
  uint32_t exists =
      ex.T - w * 32 >= 32 ? kFullMask : ((1u << (ex.T - w * 32)) - 1);
  if (uint32_t missing = member & exists & ~active)
    return ex.fail(I, "membermask " + hex(member) + " of warp " +
                          std::to_string(w) + " names lanes " + hex(missing) +
                          " that do not execute this shfl.sync (active lanes " +
                          hex(active) + "; divergent control flow?)");
  return true;
}

bool execShfl(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  const auto &ops = ex.program.lists[I.aux];
  const Cell *M = ex.cellsOf(ops[0]), *V = ex.cellsOf(ops[1]),
             *O = ex.cellsOf(ops[2]), *Cc = ex.cellsOf(ops[3]);
  Cell *R = ex.cellsOf(I.res);
  bool isF = I.sk == SK::F32;
  for (int64_t w = 0; w < ex.numWarps; ++w) {
    uint32_t active = ex.warpMask(threads.mask, w);
    if (!active)
      continue;
    ++ex.stats.shfl;
    LaneValues a{}, b{};
    int first = __builtin_ctz(active);
    uint32_t member = static_cast<uint32_t>(M[w * 32 + first].i);
    uint32_t c = static_cast<uint32_t>(Cc[w * 32 + first].i);
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      a[l] = isF ? floatBits(static_cast<float>(V[t].d))
                 : static_cast<uint32_t>(V[t].i);
      b[l] = static_cast<uint32_t>(O[t].i);
    }
    if (!checkShflLanes(ex, I, w, active, M, Cc, member, c))
      return false;
    auto r = shfl(static_cast<ShflMode>(I.imm), a, b, c, member, active);
    if (!r.ok())
      return ex.fail(I, r.error() + " (warp " + std::to_string(w) +
                            ", active lanes " + hex(active) + ")");
    for (int l = 0; l < 32; ++l) {
      if (!((active >> l) & 1u))
        continue;
      int64_t t = w * 32 + l;
      if (isF)
        R[t].d = bitsFloat(r->d[l]);
      else
        R[t].i = static_cast<int32_t>(r->d[l]);
      if (I.imm2)
        R[T + t].i = (r->predicate >> l) & 1u;
    }
  }
  return true;
}

/// Gathers warp w's mma operands from registers of unpacked 16-bit floats
/// (vector<2 x f16/bf16>), which hold exact values of their type: the
/// elements go to A and B as they are.
static void gatherMmaValues(Executor &ex, const MmaInfo &mi, int64_t w,
                            double (&A)[16][16], double (&B)[16][8],
                            float (&C)[16][8]) {
  const int64_t T = ex.T;
  // Lane 4g + q holds, per register, elements (g, 2q) and (g, 2q + 1) of
  // its 8 x 8 piece (ValueModel.h: the low half at X[l], the high at
  // X[T + l]).
  for (int r = 0; r < 4; ++r) {
    const Cell *X = ex.cellsOf(mi.a[r]) + w * 32;
    for (int g = 0; g < 8; ++g)
      for (int q = 0; q < 4; ++q) {
        A[g + 8 * (r % 2)][2 * q + 8 * (r / 2)] = X[4 * g + q].d;
        A[g + 8 * (r % 2)][2 * q + 1 + 8 * (r / 2)] = X[T + 4 * g + q].d;
      }
  }
  for (int r = 0; r < 2; ++r) {
    const Cell *X = ex.cellsOf(mi.b[r]) + w * 32;
    for (int g = 0; g < 8; ++g)
      for (int q = 0; q < 4; ++q) {
        B[2 * q + 8 * r][g] = X[4 * g + q].d;
        B[2 * q + 1 + 8 * r][g] = X[T + 4 * g + q].d;
      }
  }
  for (int i = 0; i < 4; ++i) {
    const Cell *X = ex.cellsOf(mi.c[i]) + w * 32;
    for (int g = 0; g < 8; ++g)
      for (int q = 0; q < 4; ++q)
        C[g + 8 * (i / 2)][2 * q + i % 2] = static_cast<float>(X[4 * g + q].d);
  }
}

/// A NaN in A or B makes its whole row or column of D NaN. Only then can an
/// operand differ from what the register's bits hold (a NaN's payload, as
/// the bits keep it): recomputes D from those.
static void recomputeIfNaN(ElementType type, double (&A)[16][16],
                           double (&B)[16][8], const float (&C)[16][8],
                           float (&D)[16][8]) {
  bool nan = false;
  for (const auto &row : D)
    for (float v : row)
      nan |= v != v;
  if (!nan)
    return;
  auto canonical = [&](double &v) {
    if (v != v)
      v = bits16ToDouble(doubleToBits16(v, type), type);
  };
  for (auto &row : A)
    for (double &v : row)
      canonical(v);
  for (auto &row : B)
    for (double &v : row)
      canonical(v);
  mmaM16N8K16Values(A, B, C, D);
}

bool execMma(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  const MmaInfo &mi = ex.program.mmas[I.aux];
  Cell *R = ex.cellsOf(I.res);
  auto reg = [&](int32_t id, int64_t t) -> uint32_t {
    const Cell *X = ex.cellsOf(id);
    if (mi.aPacked)
      return static_cast<uint32_t>(X[t].i);
    uint16_t lo = doubleToBits16(X[t].d, mi.type);
    uint16_t hi = doubleToBits16(X[T + t].d, mi.type);
    return pack16x2(lo, hi);
  };
  for (int64_t w = 0; w < ex.numWarps; ++w) {
    uint32_t active = ex.warpMask(threads.mask, w);
    if (!active)
      continue;
    ++ex.stats.mma;
    if (active == kFullMask && !mi.aPacked) {
      double A[16][16], B[16][8];
      float C[16][8], D[16][8];
      gatherMmaValues(ex, mi, w, A, B, C);
      mmaM16N8K16Values(A, B, C, D);
      recomputeIfNaN(mi.type, A, B, C, D);
      for (int r = 0; r < 4; ++r)
        for (int g = 0; g < 8; ++g)
          for (int q = 0; q < 4; ++q)
            R[r * T + w * 32 + 4 * g + q].d = D[g + 8 * (r / 2)][2 * q + r % 2];
      continue;
    }
    MmaAFragment a{};
    MmaBFragment b{};
    MmaAccFragment c{};
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      for (int r = 0; r < 4; ++r)
        a[r][l] = reg(mi.a[r], t);
      for (int r = 0; r < 2; ++r)
        b[r][l] = reg(mi.b[r], t);
      for (int r = 0; r < 4; ++r)
        c[r][l] = static_cast<float>(ex.cellsOf(mi.c[r])[t].d);
    }
    auto d = mmaM16N8K16(a, b, c, mi.type, active);
    if (!d.ok())
      return ex.fail(I, d.error() + " (warp " + std::to_string(w) +
                            ", active lanes " + hex(active) +
                            ": mma.sync is warp-wide; divergent control "
                            "flow?)");
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      for (int r = 0; r < 4; ++r)
        R[r * T + t].d = (*d)[r][l];
    }
  }
  return true;
}

bool execLdMatrix(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  Memory &mem = ex.memory;
  const Cell *P = ex.cellsOf(I.a);
  Cell *R = ex.cellsOf(I.res);
  int num = static_cast<int>(I.imm);
  for (int64_t w = 0; w < ex.numWarps; ++w) {
    uint32_t active = ex.warpMask(threads.mask, w);
    if (!active)
      continue;
    ++ex.stats.ldmatrix;
    if (active != kFullMask)
      return ex.fail(I, "ldmatrix is warp-wide but warp " + std::to_string(w) +
                            " executes it with active lanes " + hex(active) +
                            " (divergent control flow?)");
    LaneValues addrs{};
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      int64_t off = P[t].i;
      if (l < 8 * num) {
        if (!mem.checkShared(I, t, off, 16, 16, "ldmatrix row read"))
          return false;
        if (!mem.trackShared(I, t, static_cast<uint32_t>(off), 16, false))
          return false;
      }
      addrs[l] = static_cast<uint32_t>(off);
    }
    std::array<LaneValues, 4> regs;
    Status s = ldmatrixInto(mem.shared(), addrs, num, I.imm2 != 0, active, regs);
    if (!s.ok())
      return ex.fail(I, s.error() + " (warp " + std::to_string(w) + ")");
    for (int m = 0; m < num; ++m)
      for (int l = 0; l < 32; ++l)
        R[m * T + w * 32 + l].i = static_cast<int32_t>(regs[m][l]);
    ex.stats.sharedBytesRead += int64_t(num) * 8 * 16;
    ex.stats.sharedRequests += 1;
    ex.stats.bankConflicts += std::max(0, ldmatrixBankConflicts(addrs, num));
  }
  return true;
}

bool execCpAsync(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  Memory &mem = ex.memory;
  Stats &stats = ex.stats;
  const Cell *D = ex.cellsOf(I.a), *S = ex.cellsOf(I.b);
  const Cell *SS = I.c >= 0 ? ex.cellsOf(I.c) : nullptr;
  uint32_t cpSize = static_cast<uint32_t>(I.imm);
  return mem.sharedRequests(
      threads.mask, stats.cpAsync, [&](int64_t t, LaneAccess &acc) {
        int64_t dst = D[t].i;
        int64_t srcSize = SS ? SS[t].i : cpSize;
        if (srcSize < 0 || srcSize > cpSize)
          return ex.fail(I, "src-size " + std::to_string(srcSize) +
                                " is not in [0, " + std::to_string(cpSize) +
                                "] (" + threadName(t) + ")");
        if (!mem.checkShared(I, t, dst, cpSize, cpSize, "cp.async destination"))
          return false;
        const uint8_t *src = nullptr;
        if (srcSize > 0) {
          uint8_t *addr;
          if (!mem.checkGlobal(I, t, S[t].i, srcSize,
                               std::min<int64_t>(srcSize, 16),
                               GlobalAccess::Read, addr))
            return false;
          src = addr;
        }
        if (!mem.issueCopy(I, t, static_cast<uint32_t>(dst), src, cpSize,
                           static_cast<uint32_t>(srcSize)))
          return false;
        acc = {static_cast<uint32_t>(dst), cpSize};
        stats.cpAsyncBytes += cpSize;
        stats.cpAsyncBytesRead += srcSize;
        stats.globalBytesRead += srcSize;
        stats.sharedBytesWritten += cpSize;
        return true;
      });
}

bool execCpAsyncCommit(Executor &ex, const Instr &,
                       const ActiveThreads &threads) {
  for (int64_t w = 0; w < ex.numWarps; ++w)
    ex.stats.cpAsyncCommits += ex.warpMask(threads.mask, w) != 0;
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t])
      ex.memory.commitCopies(t);
  return true;
}

bool execCpAsyncWait(Executor &ex, const Instr &I,
                     const ActiveThreads &threads) {
  uint32_t n = static_cast<uint32_t>(I.imm);
  for (int64_t w = 0; w < ex.numWarps; ++w)
    ex.stats.cpAsyncWaits += ex.warpMask(threads.mask, w) != 0;
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] && !ex.memory.waitCopies(I, t, n))
      return false;
  // Every copy of the thread has landed: so have those its
  // cp.async.mbarrier.arrive ops track, and their arrivals fire.
  if (n == 0 && ex.memory.async().active())
    for (int64_t t = 0; t < ex.T; ++t)
      if (threads.mask[t] && !ex.memory.async().landCpArrivalsOf(I, t))
        return false;
  return true;
}

bool execBarrier(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  if (threads.count != T) {
    int64_t missing = -1;
    for (int64_t t = 0; t < T && missing < 0; ++t)
      if (!threads.mask[t])
        missing = t;
    return ex.fail(I, "barrier reached by " + std::to_string(threads.count) +
                          " of the CTA's " + std::to_string(T) +
                          " threads (divergent control flow: " +
                          threadName(missing) + " does not arrive)");
  }
  if (I.a >= 0) {
    const Cell *id = ex.cellsOf(I.a);
    for (int64_t t = 0; t < T; ++t)
      if (id[t].i != id[0].i)
        return ex.fail(I, "threads disagree on the barrier id");
  }
  ex.memory.barrier();
  ex.memory.syncAllWarps();
  ++ex.stats.barriers;
  ex.stats.barrierWarps += ex.numWarps;
  return true;
}

} // namespace flash::emu

//===- ValueExec.cpp - Moves between and within values, GEP ---------------===//
//
// Element e of a value is the T contiguous cells at e * T (ValueModel.h), so
// these ops copy whole element columns; only dynamic positions go thread by
// thread.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Executor.h"

#include <cstring>

namespace flash::emu {

bool execBroadcast(Executor &ex, const Instr &I, const ActiveThreads &) {
  const int64_t T = ex.T;
  const ValInfo &rv = ex.val(I.res);
  Cell *R = ex.cellsOf(I.res);
  const Cell *A = ex.cellsOf(I.a);
  if (ex.val(I.a).n == rv.n) {
    std::memcpy(R, A, sizeof(Cell) * rv.n * T);
  } else {
    for (uint32_t e = 0; e < rv.n; ++e)
      std::memcpy(R + e * T, A, sizeof(Cell) * T);
  }
  return true;
}

bool execFromElements(Executor &ex, const Instr &I, const ActiveThreads &) {
  const auto &ops = ex.program.lists[I.aux];
  Cell *R = ex.cellsOf(I.res);
  for (size_t e = 0; e < ops.size(); ++e)
    std::memcpy(R + e * ex.T, ex.cellsOf(ops[e]), sizeof(Cell) * ex.T);
  return true;
}

/// Calls f(p, t) for each thread t whose dynamic position p (operand I.b) is
/// in [0, n); fails if an active thread's position is not.
template <typename F>
static bool forDynPositions(Executor &ex, const Instr &I, const uint8_t *mask,
                            uint32_t n, F &&f) {
  const Cell *Pp = ex.cellsOf(I.b);
  const int64_t T = ex.T;
  for (int64_t t = 0; t < T; ++t) {
    int64_t p = Pp[t].i;
    if (p < 0 || p >= n) {
      if (mask[t])
        return ex.fail(I, "dynamic position " + std::to_string(p) +
                              " out of range in " + threadName(t));
      continue;
    }
    f(p, t);
  }
  return true;
}

bool execExtract(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  Cell *R = ex.cellsOf(I.res);
  const Cell *A = ex.cellsOf(I.a);
  uint32_t n = ex.val(I.a).n;
  if (I.imm < 0)
    return forDynPositions(ex, I, threads.mask, n,
                           [&](int64_t p, int64_t t) { R[t] = A[p * T + t]; });
  if (I.imm >= n)
    return ex.fail(I, "position " + std::to_string(I.imm) + " out of range");
  std::memcpy(R, A + I.imm * T, sizeof(Cell) * T);
  return true;
}

bool execInsert(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  Cell *R = ex.cellsOf(I.res);
  const Cell *S = ex.cellsOf(I.a);
  uint32_t n = ex.val(I.res).n;
  std::memcpy(R, ex.cellsOf(I.c), sizeof(Cell) * n * T);
  if (I.imm < 0)
    return forDynPositions(ex, I, threads.mask, n,
                           [&](int64_t p, int64_t t) { R[p * T + t] = S[t]; });
  if (I.imm >= n)
    return ex.fail(I, "position out of range");
  std::memcpy(R + I.imm * T, S, sizeof(Cell) * T);
  return true;
}

bool execShuffle(Executor &ex, const Instr &I, const ActiveThreads &) {
  const int64_t T = ex.T;
  const auto &m = ex.program.ilists[I.aux];
  Cell *R = ex.cellsOf(I.res);
  const Cell *A = ex.cellsOf(I.a), *B = ex.cellsOf(I.b);
  int64_t n1 = ex.val(I.a).n;
  for (size_t e = 0; e < m.size(); ++e) {
    int64_t k = m[e];
    if (k < 0) {
      std::memset(R + e * T, 0, sizeof(Cell) * T);
      continue;
    }
    const Cell *src = k < n1 ? A + k * T : B + (k - n1) * T;
    std::memcpy(R + e * T, src, sizeof(Cell) * T);
  }
  return true;
}

bool execExtractValue(Executor &ex, const Instr &I, const ActiveThreads &) {
  std::memcpy(ex.cellsOf(I.res), ex.cellsOf(I.a) + I.imm * ex.T,
              sizeof(Cell) * ex.T);
  return true;
}

bool execInsertValue(Executor &ex, const Instr &I, const ActiveThreads &) {
  Cell *R = ex.cellsOf(I.res);
  std::memcpy(R, ex.cellsOf(I.c), sizeof(Cell) * ex.val(I.res).n * ex.T);
  std::memcpy(R + I.imm * ex.T, ex.cellsOf(I.a), sizeof(Cell) * ex.T);
  return true;
}

/// Bitcast loop over all threads, for element kinds `in` and `out`.
static void bitcastCells(const Cell *A, Cell *R, int64_t T, uint32_t nIn,
                         uint32_t nOut, SK in, SK out) {
  uint8_t buf[64];
  const unsigned inSize = byteSize(in), outSize = byteSize(out);
  for (int64_t t = 0; t < T; ++t) {
    for (uint32_t e = 0; e < nIn; ++e)
      encodeElem(in, A[e * T + t], buf + e * inSize);
    for (uint32_t e = 0; e < nOut; ++e)
      decodeElem(out, buf + e * outSize, R[e * T + t]);
  }
}

/// The same with `In` and `Out` known at compile time, so that the element
/// codecs inline: the 16-bit float <-> i32 register moves around every mma.
template <SK In, SK Out>
static void bitcastCells(const Cell *A, Cell *R, int64_t T, uint32_t nIn,
                         uint32_t nOut) {
  uint8_t buf[64];
  for (int64_t t = 0; t < T; ++t) {
    for (uint32_t e = 0; e < nIn; ++e)
      encodeElem(In, A[e * T + t], buf + e * byteSize(In));
    for (uint32_t e = 0; e < nOut; ++e)
      decodeElem(Out, buf + e * byteSize(Out), R[e * T + t]);
  }
}

template <SK In>
static void bitcastFrom(const Cell *A, Cell *R, int64_t T, uint32_t nIn,
                        uint32_t nOut, SK out) {
  switch (out) {
  case SK::I32:
    return bitcastCells<In, SK::I32>(A, R, T, nIn, nOut);
  case SK::F16:
    return bitcastCells<In, SK::F16>(A, R, T, nIn, nOut);
  case SK::BF16:
    return bitcastCells<In, SK::BF16>(A, R, T, nIn, nOut);
  default:
    return bitcastCells(A, R, T, nIn, nOut, In, out);
  }
}

bool execBitcast(Executor &ex, const Instr &I, const ActiveThreads &) {
  const int64_t T = ex.T;
  const ValInfo &av = ex.val(I.a), &rv = ex.val(I.res);
  const Cell *A = ex.cellsOf(I.a);
  Cell *R = ex.cellsOf(I.res);
  switch (av.sk) {
  case SK::I32:
    bitcastFrom<SK::I32>(A, R, T, av.n, rv.n, rv.sk);
    break;
  case SK::F16:
    bitcastFrom<SK::F16>(A, R, T, av.n, rv.n, rv.sk);
    break;
  case SK::BF16:
    bitcastFrom<SK::BF16>(A, R, T, av.n, rv.n, rv.sk);
    break;
  default:
    bitcastCells(A, R, T, av.n, rv.n, av.sk, rv.sk);
  }
  return true;
}

bool execPermute(Executor &ex, const Instr &I, const ActiveThreads &) {
  const int64_t T = ex.T;
  const Cell *A = ex.cellsOf(I.a), *B = ex.cellsOf(I.b), *S = ex.cellsOf(I.c);
  Cell *R = ex.cellsOf(I.res);
  for (int64_t t = 0; t < T; ++t) {
    uint64_t pool = static_cast<uint32_t>(A[t].i) |
                    static_cast<uint64_t>(static_cast<uint32_t>(B[t].i)) << 32;
    uint32_t sel = static_cast<uint32_t>(S[t].i), r = 0;
    for (int k = 0; k < 4; ++k) {
      uint32_t nibble = sel >> (4 * k) & 0xf;
      uint32_t byte = pool >> (8 * (nibble & 7)) & 0xff;
      if (nibble & 8)
        byte = (byte & 0x80) ? 0xff : 0;
      r |= byte << (8 * k);
    }
    R[t].i = static_cast<int32_t>(r);
  }
  return true;
}

bool execGEP(Executor &ex, const Instr &I, const ActiveThreads &) {
  const GepInfo &g = ex.program.geps[I.aux];
  const int64_t T = ex.T;
  Cell *R = ex.cellsOf(I.res);
  const Cell *B = ex.cellsOf(I.a);
  for (int64_t t = 0; t < T; ++t)
    R[t].i = B[t].i + g.constOffset;
  for (auto [id, scale] : g.dyn) {
    const Cell *X = ex.cellsOf(id);
    for (int64_t t = 0; t < T; ++t)
      R[t].i = int64_t(uint64_t(R[t].i) + uint64_t(X[t].i) * uint64_t(scale));
  }
  return true;
}

} // namespace flash::emu

//===- AsyncExec.cpp - mbarrier, named barrier, elect, fence, TMA ops -----===//
//
// The exec handlers of the ops CompileAsync.cpp compiles: each acts for the
// active threads (in thread order) on the CTA's AsyncUnit.
//
//===----------------------------------------------------------------------===//

#include "AsyncExec.h"
#include "AsyncUnit.h"
#include "Executor.h"
#include "Roles.h"

#include <algorithm>

namespace flash::emu {

/// Whether thread t runs a predicated op (predicate value `pred`, -1: none).
static bool predicated(Executor &ex, int32_t pred, int64_t t) {
  return pred < 0 || (ex.cellsOf(pred)[t].i & 1);
}

/// A shared pointer operand as a byte offset.
static uint32_t sharedOffset(const Cell *P, int64_t t) {
  return static_cast<uint32_t>(P[t].i);
}

bool execMbarrierInit(Executor &ex, const Instr &I,
                      const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  const Cell *P = ex.cellsOf(I.a), *C = ex.cellsOf(I.b);
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] && predicated(ex, static_cast<int32_t>(I.imm2), t) &&
        !u.mbarrierInit(I, t, sharedOffset(P, t),
                        static_cast<int64_t>(static_cast<int32_t>(C[t].i))))
      return false;
  return true;
}

bool execMbarrierInval(Executor &ex, const Instr &I,
                       const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  const Cell *P = ex.cellsOf(I.a);
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] && !u.mbarrierInval(I, t, sharedOffset(P, t)))
      return false;
  return true;
}

bool execMbarrierArrive(Executor &ex, const Instr &I,
                        const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  const Cell *P = ex.cellsOf(I.a);
  const Cell *C = I.b >= 0 ? ex.cellsOf(I.b) : nullptr;
  const Cell *X = I.c >= 0 ? ex.cellsOf(I.c) : nullptr;
  Cell *R = I.res >= 0 ? ex.cellsOf(I.res) : nullptr;
  for (int64_t t = 0; t < ex.T; ++t) {
    if (!threads.mask[t] || !predicated(ex, static_cast<int32_t>(I.imm2), t))
      continue;
    int64_t count = C ? static_cast<int32_t>(C[t].i) : 1;
    int64_t tx = X ? static_cast<int64_t>(static_cast<uint32_t>(X[t].i)) : 0;
    int64_t phase;
    if (!u.mbarrierArrive(I, t, sharedOffset(P, t), count, I.imm != 0, tx,
                          phase))
      return false;
    if (R)
      R[t].i = phase;
  }
  // A plain arrival may complete a phase the other side waits for; one
  // that expects bytes completes nothing before its loads land.
  if (!X)
    yieldCurrentRole();
  return true;
}

bool execCpAsyncArrive(Executor &ex, const Instr &I,
                       const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  const Cell *P = ex.cellsOf(I.a);
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] &&
        !u.cpAsyncArrive(I, t, sharedOffset(P, t), I.imm != 0))
      return false;
  // An arrival with nothing in flight may complete a phase the other side
  // waits for.
  yieldCurrentRole();
  return true;
}

bool execMbarrierTx(Executor &ex, const Instr &I,
                    const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  const Cell *P = ex.cellsOf(I.a), *N = ex.cellsOf(I.b);
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] &&
        !u.mbarrierTx(I, t, sharedOffset(P, t),
                      static_cast<int64_t>(static_cast<uint32_t>(N[t].i)),
                      I.imm != 0))
      return false;
  return true;
}

bool execMbarrierWait(Executor &ex, const Instr &I,
                      const ActiveThreads &threads) {
  AsyncUnit &u = ex.memory.async();
  std::vector<uint8_t> done(ex.T, 0);
  if (!u.mbarrierWait(I, threads, ex.cellsOf(I.a), ex.cellsOf(I.b),
                      I.imm2 != 0, I.imm != 0, done.data()))
    return false;
  if (I.res >= 0) {
    Cell *R = ex.cellsOf(I.res);
    for (int64_t t = 0; t < ex.T; ++t)
      if (threads.mask[t])
        R[t].i = done[t];
  }
  return true;
}

/// The value every active thread gives for `id` (or `dflt` if id < 0);
/// error when they differ.
static bool uniform(Executor &ex, const Instr &I, const ActiveThreads &threads,
                    int32_t id, int64_t dflt, const char *what, int64_t &v) {
  v = dflt;
  if (id < 0)
    return true;
  const Cell *C = ex.cellsOf(id);
  bool first = true;
  for (int64_t t = 0; t < ex.T; ++t) {
    if (!threads.mask[t])
      continue;
    int64_t x = static_cast<int32_t>(C[t].i);
    if (!first && x != v)
      return ex.fail(I, std::string("threads disagree on the ") + what + " (" +
                            std::to_string(v) + " and " + std::to_string(x) +
                            " in " + threadName(t) + ")");
    v = x;
    first = false;
  }
  return true;
}

bool execNamedBarrier(Executor &ex, const Instr &I,
                      const ActiveThreads &threads) {
  int64_t id, count;
  if (!uniform(ex, I, threads, I.a, 0, "barrier id", id) ||
      !uniform(ex, I, threads, I.b, ex.T, "barrier thread count", count))
    return false;
  if (!ex.memory.async().namedBarrier(I, threads, id, count, I.imm != 0))
    return false;
  if (!I.imm)
    yieldCurrentRole();
  return true;
}

bool execSetMaxNReg(Executor &ex, const Instr &I,
                    const ActiveThreads &threads) {
  const int64_t T = ex.T, regs = I.imm;
  const bool inc = I.imm2 != 0;
  const char *op = inc ? "setmaxnreg.inc" : "setmaxnreg.dec";
  if (regs < 24 || regs > 256 || regs % 8 != 0)
    return ex.fail(I, std::string(op) + " to " + std::to_string(regs) +
                          " registers: the count must be a multiple of 8 in "
                          "[24, 256]");
  if (ex.warpRegisters.empty())
    ex.warpRegisters.assign(ex.numWarps, registersAtEntry(T));
  // .sync.aligned: every thread of each warpgroup that runs it.
  std::vector<int64_t> warps;
  for (int64_t g = 0; g * 128 < T; ++g) {
    int64_t first = g * 128, last = std::min<int64_t>(T, first + 128);
    int64_t active = 0;
    for (int64_t t = first; t < last; ++t)
      active += threads.mask[t] != 0;
    if (!active)
      continue;
    if (active != 128)
      return ex.fail(I, std::string(op) + " executed by " +
                            std::to_string(active) +
                            " of the 128 threads of warpgroup " +
                            std::to_string(g) +
                            " (all of a warpgroup's warps must execute it)");
    for (int64_t w = first / 32; w < last / 32; ++w)
      warps.push_back(w);
  }
  int64_t need = 0;
  for (int64_t w : warps) {
    int64_t cur = ex.warpRegisters[w];
    if (inc ? regs < cur : regs > cur)
      return ex.fail(I, std::string(op) + " to " + std::to_string(regs) +
                            " registers in warp " + std::to_string(w) +
                            ", which holds " + std::to_string(cur) +
                            (inc ? " (an increase cannot lower the count)"
                                 : " (a decrease cannot raise the count)"));
    need += (regs - cur) * 32;
  }
  auto available = [&] {
    int64_t used = 0;
    for (int64_t r : ex.warpRegisters)
      used += r * 32;
    return kRegisterFile - used;
  };
  // An increase waits until other warps' decreases free enough registers.
  while (inc && need > available())
    if (!blockCurrentRole())
      return ex.fail(
          I, "deadlock: " + std::string(op) + " to " + std::to_string(regs) +
                 " registers needs " + std::to_string(need) +
                 " registers of the CTA's " + std::to_string(kRegisterFile) +
                 ", " + std::to_string(available()) +
                 " are free, and no other warp can release any (" +
                 std::to_string(registersAtEntry(T)) + " per thread at entry "
                 "for " + std::to_string(T) + " threads)");
  for (int64_t w : warps)
    ex.warpRegisters[w] = regs;
  return true;
}

bool execElect(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const int64_t T = ex.T;
  Cell *R = ex.cellsOf(I.res);
  const Cell *M = I.a >= 0 ? ex.cellsOf(I.a) : nullptr;
  for (int64_t w = 0; w * 32 < T; ++w) {
    uint32_t active = ex.warpMask(threads.mask, w);
    if (!active)
      continue;
    int first = __builtin_ctz(active);
    uint32_t member = M ? static_cast<uint32_t>(M[w * 32 + first].i)
                        : kFullMask;
    uint32_t exists =
        T - w * 32 >= 32 ? kFullMask : ((1u << (T - w * 32)) - 1);
    for (int l = 0; l < 32; ++l)
      if (((active >> l) & 1u) && M &&
          static_cast<uint32_t>(M[w * 32 + l].i) != member)
        return ex.fail(I, "lanes of warp " + std::to_string(w) +
                              " disagree on the elect.sync member mask");
    if (uint32_t missing = member & exists & ~active)
      return ex.fail(I, "elect.sync membermask " + hex(member) + " of warp " +
                            std::to_string(w) + " names lanes " +
                            hex(missing) +
                            " that do not execute it (divergent control "
                            "flow?)");
    uint32_t candidates = member & active;
    // The lowest member lane: PTX leaves the choice to the hardware.
    int leader = candidates ? __builtin_ctz(candidates) : -1;
    for (int l = 0; l < 32; ++l)
      if ((active >> l) & 1u)
        R[w * 32 + l].i = l == leader;
  }
  return true;
}

/// Thread t's tensor map: the 128 bytes its descriptor pointer names,
/// decoded and checked with the driver's rules.
static bool readTensorMap(Executor &ex, const Instr &I, int64_t t, int64_t p,
                          TensorMap &map) {
  uint8_t *bytes;
  if (!ex.memory.checkGlobal(I, t, p, kTensorMapBytes, kTensorMapAlign,
                             GlobalAccess::Read, bytes))
    return false;
  auto decoded = decodeTensorMap(bytes);
  if (!decoded.ok())
    return ex.fail(I, decoded.error() + " (" + threadName(t) + ")");
  Status s = validateTensorMap(*decoded);
  if (!s.ok())
    return ex.fail(I, s.error() + " (" + threadName(t) + ")");
  map = *decoded;
  return true;
}

/// The box coordinates of thread t: operands ops[from, from + rank).
static bool boxCoords(Executor &ex, const Instr &I, int64_t t,
                      const TensorMap &map, const std::vector<int32_t> &ops,
                      size_t from, int32_t *coords) {
  size_t n = ops.size() - from;
  if (static_cast<int>(n) != map.rank)
    return ex.fail(I, "a " + std::to_string(n) +
                          "-D box through a tensor map of rank " +
                          std::to_string(map.rank) + " (" + threadName(t) +
                          ")");
  for (size_t d = 0; d < n; ++d)
    coords[d] = static_cast<int32_t>(ex.cellsOf(ops[from + d])[t].i);
  return true;
}

bool execTmaLoad(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const auto &ops = ex.program.lists[I.aux]; // dst, map, mbar, coords...
  AsyncUnit &u = ex.memory.async();
  for (int64_t t = 0; t < ex.T; ++t) {
    if (!threads.mask[t] || !predicated(ex, static_cast<int32_t>(I.imm2), t))
      continue;
    TensorMap map;
    int32_t coords[kTmaMaxRank];
    if (!readTensorMap(ex, I, t, ex.cellsOf(ops[1])[t].i, map) ||
        !boxCoords(ex, I, t, map, ops, 3, coords) ||
        !u.tmaLoad(I, t, map, coords, sharedOffset(ex.cellsOf(ops[0]), t),
                   sharedOffset(ex.cellsOf(ops[2]), t)))
      return false;
  }
  return true;
}

bool execTmaStore(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const auto &ops = ex.program.lists[I.aux]; // map, src, coords...
  AsyncUnit &u = ex.memory.async();
  for (int64_t t = 0; t < ex.T; ++t) {
    if (!threads.mask[t] || !predicated(ex, static_cast<int32_t>(I.imm2), t))
      continue;
    TensorMap map;
    int32_t coords[kTmaMaxRank];
    if (!readTensorMap(ex, I, t, ex.cellsOf(ops[0])[t].i, map) ||
        !boxCoords(ex, I, t, map, ops, 2, coords) ||
        !u.tmaStore(I, t, map, coords, sharedOffset(ex.cellsOf(ops[1]), t),
                    /*add=*/I.imm != 0))
      return false;
  }
  return true;
}

bool execBulkCommit(Executor &ex, const Instr &, const ActiveThreads &threads) {
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t])
      ex.memory.async().bulkCommit(t);
  return true;
}

bool execBulkWait(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t])
      ex.memory.async().bulkWait(t, static_cast<uint32_t>(I.imm));
  return true;
}

bool isAsyncExec(ExecFn fn) {
  static const ExecFn all[] = {
      execMbarrierInit, execMbarrierInval, execMbarrierArrive,
      execMbarrierTx,   execMbarrierWait,  execNamedBarrier,
      execElect,        execTmaLoad,       execSetMaxNReg,
      execTmaStore,     execBulkCommit,    execBulkWait,
      execCpAsyncArrive};
  return std::find(std::begin(all), std::end(all), fn) != std::end(all);
}

} // namespace flash::emu

//===- Executor.cpp - The run loop, control flow, registers, arith/math ---===//
//
// Structured control flow runs under a per-thread active mask: scf.if runs
// each side only when some active thread takes it and merges the yielded
// values by mask; scf.for iterates while any active thread continues.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"
#include "ArithMathOps.h"
#include "ExecHandlers.h"
#include "Diagnostics.h"
#include "Roles.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

#include "flashc/Semantics/ScalarOps.h"

#include <algorithm>
#include <cstring>

namespace flash::emu {

Executor::Executor(const Program &program, const std::array<int64_t, 3> &grid,
                   Memory &memory, Stats &stats, ErrorReporter &errors)
    : program(program), T(program.T), numWarps(program.numWarps), grid(grid),
      cells(program.numCells, Cell{0}), memory(memory), stats(stats),
      errors(errors),
      // Sized once: run() keeps references into it across nested regions.
      maskPool(program.maxDepth + 2, std::vector<uint8_t>(program.T, 0)) {
  masks = &maskPool;
}

bool Executor::runCTA(const std::array<int64_t, 3> &at) {
  cta = at;
  errors.cta = at;
  memory.beginCTA(at);
  warpRegisters.clear();
  ++stats.ctas;
  std::vector<uint8_t> full(T, 1);
  return run(0, program.topEnd, {full.data(), T, 0});
}

bool Executor::run(uint32_t begin, uint32_t end, const ActiveThreads &threads) {
  uint32_t pc = begin;
  while (pc < end) {
    const Instr &I = program.code[pc];
    ++stats.opsExecuted;
    if (!I.exec(*this, I, threads))
      return false;
    pc = I.next;
  }
  return true;
}

/// Copies each value from[k] into to[k] in the threads of mask `m` (`cnt` of
/// them; all T means a plain copy).
static void copyMasked(Executor &ex, const std::vector<int32_t> &from,
                       const std::vector<int32_t> &to, const uint8_t *m,
                       int64_t cnt) {
  const int64_t T = ex.T;
  for (size_t k = 0; k < from.size(); ++k) {
    const ValInfo &rv = ex.val(to[k]);
    Cell *R = ex.cellsOf(to[k]);
    const Cell *Y = ex.cellsOf(from[k]);
    if (cnt == T) {
      std::memcpy(R, Y, sizeof(Cell) * rv.n * T);
      continue;
    }
    for (uint32_t e = 0; e < rv.n; ++e)
      for (int64_t t = 0; t < T; ++t)
        if (m[t])
          R[e * T + t] = Y[e * T + t];
  }
}

bool execIf(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const IfInfo &info = ex.program.ifs[I.aux];
  const int64_t T = ex.T;
  const uint8_t *mask = threads.mask;
  const unsigned inner = threads.depth + 1;
  const Cell *Cn = ex.cellsOf(I.a);
  auto &sub = ex.nestedMask(threads.depth);
  sub.assign(T, 0);
  int64_t thenCount = 0;
  for (int64_t t = 0; t < T; ++t) {
    uint8_t m = mask[t] && (Cn[t].i & 1);
    sub[t] = m;
    thenCount += m;
  }
  int64_t elseCount = threads.count - thenCount;
  if (info.roles && thenCount && elseCount) {
    // The sides wait on each other: they run side by side (Roles.h).
    std::vector<uint8_t> thenMask(sub), elseMask(T, 0);
    for (int64_t t = 0; t < T; ++t)
      elseMask[t] = mask[t] && !(Cn[t].i & 1);
    // Consumer warpgroups that take turns (tile.pingpong) wait on each
    // other: one side each, threads [128 g, 128 g + 128) of the else side.
    int64_t groups = std::max<int64_t>(info.consumerGroups, 1);
    std::vector<std::vector<uint8_t>> groupMasks(groups,
                                                 std::vector<uint8_t>(T, 0));
    std::vector<int64_t> groupCounts(groups, 0);
    for (int64_t t = 0; t < T; ++t) {
      if (!elseMask[t])
        continue;
      int64_t g = groups == 1 ? 0 : std::min<int64_t>(t / 128, groups - 1);
      groupMasks[g][t] = 1;
      ++groupCounts[g];
    }
    std::vector<std::function<bool()>> sides{[&] {
      return ex.run(info.thenBegin, info.thenEnd,
                    {thenMask.data(), thenCount, inner});
    }};
    for (int64_t g = 0; g < groups; ++g)
      if (groupCounts[g])
        sides.push_back([&, g] {
          return ex.run(info.elseBegin, info.elseEnd,
                        {groupMasks[g].data(), groupCounts[g], inner});
        });
    RoleScheduler roles(ex);
    return roles.run(std::move(sides));
  }
  if (thenCount) {
    if (!ex.run(info.thenBegin, info.thenEnd, {sub.data(), thenCount, inner}))
      return false;
    // `sub` may have been reused by nested regions at deeper levels only.
    copyMasked(ex, info.thenYield, info.results, sub.data(), thenCount);
  }
  if (elseCount) {
    for (int64_t t = 0; t < T; ++t)
      sub[t] = mask[t] && !(Cn[t].i & 1);
    if (info.elseEnd > info.elseBegin || !info.elseYield.empty()) {
      if (!ex.run(info.elseBegin, info.elseEnd, {sub.data(), elseCount, inner}))
        return false;
      copyMasked(ex, info.elseYield, info.results, sub.data(), elseCount);
    }
  }
  return true;
}

bool execAssert(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const Cell *C = ex.cellsOf(I.a);
  for (int64_t t = 0; t < ex.T; ++t)
    if (threads.mask[t] && !(C[t].i & 1))
      return ex.fail(I, "device assertion failed: " +
                            mlir::cast<mlir::cf::AssertOp>(I.op)
                                .getMsg()
                                .str() +
                            " (" + threadName(t) + ")");
  return true;
}

/// The loop's step must be positive (signed) and non-zero in every active
/// thread; the induction variable starts at the lower bound.
static bool startLoop(Executor &ex, const Instr &I, const ForInfo &info,
                      const uint8_t *mask) {
  const unsigned w = intWidth(ex.val(info.iv).sk);
  const Cell *LB = ex.cellsOf(info.lb), *ST = ex.cellsOf(info.step);
  Cell *IV = ex.cellsOf(info.iv);
  const int64_t T = ex.T;
  for (int64_t t = 0; t < T; ++t) {
    IV[t] = LB[t];
    if (mask[t] && sem::asSigned(ST[t].i, w) <= 0 && !info.unsignedCmp)
      return ex.fail(I, "loop step " +
                            std::to_string(sem::asSigned(ST[t].i, w)) +
                            " is not positive in " + threadName(t));
    if (mask[t] && ST[t].i == 0)
      return ex.fail(I, "loop step is zero in " + threadName(t));
  }
  return true;
}

bool execFor(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  const ForInfo &info = ex.program.fors[I.aux];
  const int64_t T = ex.T;
  const uint8_t *mask = threads.mask;
  const unsigned w = intWidth(ex.val(info.iv).sk);
  const Cell *UB = ex.cellsOf(info.ub), *ST = ex.cellsOf(info.step);
  Cell *IV = ex.cellsOf(info.iv);
  copyMasked(ex, info.inits, info.iterArgs, mask, threads.count);
  if (!startLoop(ex, I, info, mask))
    return false;
  auto &sub = ex.nestedMask(threads.depth);
  sub.assign(T, 0);
  while (true) {
    int64_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      bool go = info.unsignedCmp
                    ? sem::asUnsigned(IV[t].i, w) < sem::asUnsigned(UB[t].i, w)
                    : sem::asSigned(IV[t].i, w) < sem::asSigned(UB[t].i, w);
      uint8_t m = mask[t] && go;
      sub[t] = m;
      n += m;
    }
    if (!n)
      break;
    if (!ex.run(info.bodyBegin, info.bodyEnd,
                {sub.data(), n, threads.depth + 1}))
      return false;
    copyMasked(ex, info.yields, info.iterArgs, sub.data(), n);
    for (int64_t t = 0; t < T; ++t)
      if (sub[t]) {
        // Stop on overflow of the induction variable, as hardware would
        // wrap: treat a wrapped iv as done.
        int64_t next = sem::asSigned(IV[t].i, w) + sem::asSigned(ST[t].i, w);
        int64_t wrapped = sem::wrapInt(next, w);
        IV[t].i = wrapped;
        if (wrapped != next)
          IV[t] = UB[t];
      }
  }
  copyMasked(ex, info.iterArgs, info.results, mask, threads.count);
  return true;
}

int64_t registersAtEntry(int64_t threads) {
  return std::min<int64_t>(256, kRegisterFile / std::max<int64_t>(threads, 1) /
                                    8 * 8);
}

/// Special register `reg` of thread t.
static int64_t sregValue(const Executor &ex, int64_t reg, int64_t t) {
  const std::array<int64_t, 3> &block = ex.program.block;
  switch (reg) {
  case SR_TidX:
    return t % block[0];
  case SR_TidY:
    return (t / block[0]) % block[1];
  case SR_TidZ:
    return t / (block[0] * block[1]);
  case SR_NTidX:
  case SR_NTidY:
  case SR_NTidZ:
    return block[reg - SR_NTidX];
  case SR_CtaX:
  case SR_CtaY:
  case SR_CtaZ:
    return ex.cta[reg - SR_CtaX];
  case SR_NCtaX:
  case SR_NCtaY:
  case SR_NCtaZ:
    return ex.grid[reg - SR_NCtaX];
  case SR_Lane:
    return t % 32;
  case SR_Warp:
    return t / 32;
  case SR_NWarp:
    return ex.numWarps;
  }
  return 0;
}

bool execSReg(Executor &ex, const Instr &I, const ActiveThreads &) {
  Cell *R = ex.cellsOf(I.res);
  const unsigned w = intWidth(ex.val(I.res).sk);
  const int64_t T = ex.T;
  for (int64_t t = 0; t < T; ++t)
    R[t].i = sem::wrapInt(sregValue(ex, I.imm, t), w);
  return true;
}

bool execArithMath(Executor &ex, const Instr &I, const ActiveThreads &threads) {
  ArithMathCells x;
  x.result = ex.cellsOf(I.res);
  x.result2 = I.res2 >= 0 ? ex.cellsOf(I.res2) : nullptr;
  x.a = ex.cellsOf(I.a);
  x.b = I.b >= 0 ? ex.cellsOf(I.b) : nullptr;
  x.c = I.c >= 0 ? ex.cellsOf(I.c) : nullptr;
  x.resultElems = ex.val(I.res).n;
  x.aElems = ex.val(I.a).n;
  x.resultType = scalarType(I.sk);
  x.sourceType = scalarType(I.sk2);
  x.threads = ex.T;
  int64_t t = evaluateArithMath(I.arith, x, threads.mask);
  if (t >= 0)
    return ex.fail(I, "integer division by zero in " + threadName(t));
  return true;
}

} // namespace flash::emu

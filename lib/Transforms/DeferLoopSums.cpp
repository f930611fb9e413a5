//===- DeferLoopSums.cpp - lane sums of a carried row sum after the loop --===//
//
// The online softmax updates its row sum every iteration as
// l = alpha * l + rowsum(p). Each thread can keep the sum of its own columns
// instead (the update is linear, and alpha is the same in every lane that
// holds a row), so that the lanes' parts are added up once, after the loop,
// rather than with butterfly shuffles in every iteration. In kernels at the
// register limit (tile.register_bound) only loops with room to spare.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <map>

namespace flash {
#define GEN_PASS_DEF_TILEDEFERLOOPSUMS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {

/// Whether every element of `type` is held by the lanes of a single warp,
/// so that a reduction into it needs no exchange between warps.
bool eachElementInOneWarp(RankedTensorType type, int64_t numWarps) {
  auto layout = dyn_cast_if_present<LayoutAttrInterface>(type.getEncoding());
  if (!layout)
    return false;
  int64_t regs = layout.getNumRegisters(type.getShape());
  std::map<layout::Coord, int64_t> warpOf;
  for (int64_t warp = 0; warp < numWarps; ++warp)
    for (int64_t lane = 0; lane < layout::kWarpSize; ++lane)
      for (int64_t reg = 0; reg < regs; ++reg) {
        layout::Coord c =
            layoutCoord<int64_t>(layout, type.getShape(), warp, lane, reg);
        auto [held, first] = warpOf.try_emplace(c, warp);
        if (!first && held->second != warp)
          return false;
      }
  return true;
}

/// The only user of `value`, if it has exactly one.
Operation *soleUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// The update `u * arg + x` of `arg`, as the one FMA the online softmax's
/// decomposition emits or as a multiply and an add: the op that computes
/// it and `x`, if `arg`'s only use is that update.
std::pair<Operation *, Value> matchScaledUpdate(Value arg) {
  Operation *user = soleUser(arg);
  if (auto fma = dyn_cast_if_present<math::FmaOp>(user)) {
    if (fma.getC() == arg)
      return {};
    return {fma, fma.getC()};
  }
  auto scaled = dyn_cast_if_present<arith::MulFOp>(user);
  auto update = scaled ? dyn_cast_if_present<arith::AddFOp>(soleUser(scaled))
                       : arith::AddFOp();
  if (!update || scaled->getBlock() != update->getBlock())
    return {};
  Value other =
      update.getLhs() == scaled.getResult() ? update.getRhs() : update.getLhs();
  return {update, other};
}

/// The row-sum reduction of iteration argument `i` of `loop`, when the loop
/// body updates it as `u * arg + tile.reduce sum(p)` and uses it nowhere
/// else.
ReduceOp matchCarriedSum(scf::ForOp loop, unsigned i, int64_t numWarps) {
  BlockArgument arg = loop.getRegionIterArg(i);
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !type.getElementType().isF32() ||
      !eachElementInOneWarp(type, numWarps))
    return {};
  Block *body = loop.getBody();
  auto [update, other] = matchScaledUpdate(arg);
  if (!update || update->getBlock() != body ||
      soleUser(update->getResult(0)) != body->getTerminator() ||
      body->getTerminator()->getOperand(i) != update->getResult(0))
    return {};
  auto reduce = other.getDefiningOp<ReduceOp>();
  if (!reduce || reduce.getKind() != ReduceKind::Sum ||
      reduce.getLanePartial() || !reduce->hasOneUse() ||
      reduce->getBlock() != body)
    return {};
  return reduce;
}

/// The lane-partial form of the loop's initial value: zero is its own;
/// a sum this pass placed after an earlier loop is that loop's partial
/// result.
Value partialInit(Value init) {
  if (matchPattern(init, m_AnyZeroFloat()))
    return init;
  if (auto sum = init.getDefiningOp<SumLanePartialsOp>())
    if (sum->hasOneUse())
      return sum.getInput();
  return {};
}

/// The registers one thread holds of `type` (0 without a layout).
int64_t threadRegisters(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto layout = tensor ? dyn_cast_if_present<LayoutAttrInterface>(
                             tensor.getEncoding())
                       : LayoutAttrInterface();
  return layout ? layout.getNumRegisters(tensor.getShape()) : 0;
}

/// Registers per thread of a register-bound kernel's loop tiles (carried
/// tiles and the scores a row sum reduces) up to which its row sums are
/// deferred (docs/perf.md, "Row sums added up once"). fa2 at HEAD_DIM 128:
/// 128 x 32 holds 168 (128 accumulator, 32 scores, 8 row statistics) and
/// keeps 0 spills with the lanes' parts on sm_80 and sm_90; 128 x 64 holds
/// 200 and spills 64-76 bytes with them, 16 or fewer without.
constexpr int64_t kRegisterBoundDeferLimit = 168;

/// Registers per thread of the carried tiles up to which a register-bound
/// loop's row sums are deferred whatever its scores take: fa2 at HEAD_DIM 64,
/// 128 x 128, also holds 200 (64 accumulator, 128 scores, 8 row statistics)
/// but keeps 0 spills with the lanes' parts on sm_80 and sm_90, causal or
/// not: the scores die within an iteration.
constexpr int64_t kRegisterBoundCarriedLimit = 72;

/// Whether `loop`'s tiles leave a register-bound kernel room for the lanes'
/// parts of its row sum `reduce`.
bool roomForLaneParts(scf::ForOp loop, ReduceOp reduce) {
  int64_t carried = 0;
  for (Value arg : loop.getRegionIterArgs())
    carried += threadRegisters(arg.getType());
  int64_t scores = threadRegisters(reduce.getInput().getType());
  return carried + scores <= kRegisterBoundDeferLimit ||
         carried <= kRegisterBoundCarriedLimit;
}

void deferLoopSums(scf::ForOp loop, int64_t numWarps, bool registerBound) {
  for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i) {
    ReduceOp reduce = matchCarriedSum(loop, i, numWarps);
    if (!reduce || (registerBound && !roomForLaneParts(loop, reduce)))
      continue;
    OpOperand &init = loop.getInitArgsMutable()[i];
    Value partial = partialInit(init.get());
    if (!partial)
      continue;
    auto previous = init.get().getDefiningOp<SumLanePartialsOp>();
    init.set(partial);
    if (previous)
      previous->erase();
    reduce.setLanePartial(true);
    OpBuilder builder(loop->getContext());
    builder.setInsertionPointAfter(loop);
    Value result = loop.getResult(i);
    auto sum = SumLanePartialsOp::create(builder, loop.getLoc(),
                                         result.getType(), result);
    result.replaceAllUsesExcept(sum.getResult(), sum);
  }
}

struct TileDeferLoopSumsPass
    : flash::impl::TileDeferLoopSumsBase<TileDeferLoopSumsPass> {
  void runOnOperation() override {
    auto warps = getOperation()->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
    if (!warps)
      return; // not a kernel
    // At the register limit (tile-stage-shared re-reads an operand), ptxas
    // spills about twice as much with the partial sums where the loop's
    // tiles fill the registers (docs/perf.md).
    bool registerBound = getOperation()->hasAttr(kRegisterBoundAttrName);
    SmallVector<scf::ForOp> loops;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      deferLoopSums(loop, warps.getInt(), registerBound);
  }
};
} // namespace

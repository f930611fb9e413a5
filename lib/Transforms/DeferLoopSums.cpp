//===- DeferLoopSums.cpp - lane sums of a carried row sum after the loop --===//
//
// The online softmax updates its row sum every iteration as
// l = alpha * l + rowsum(p). Each thread can keep the sum of its own columns
// instead (the update is linear, and alpha is the same in every lane that
// holds a row), so that the lanes' parts are added up once, after the loop,
// rather than with butterfly shuffles in every iteration. Kernels at the
// register limit (tile.register_bound) are left alone.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
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
  auto scaled = dyn_cast_if_present<arith::MulFOp>(soleUser(arg));
  if (!scaled || scaled->getBlock() != body)
    return {};
  auto update = dyn_cast_if_present<arith::AddFOp>(soleUser(scaled));
  if (!update || soleUser(update) != body->getTerminator() ||
      body->getTerminator()->getOperand(i) != update.getResult())
    return {};
  Value other =
      update.getLhs() == scaled.getResult() ? update.getRhs() : update.getLhs();
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

void deferLoopSums(scf::ForOp loop, int64_t numWarps) {
  for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i) {
    ReduceOp reduce = matchCarriedSum(loop, i, numWarps);
    if (!reduce)
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
    // spills about twice as much with the partial sums (docs/perf.md).
    if (getOperation()->hasAttr(kRegisterBoundAttrName))
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      deferLoopSums(loop, warps.getInt());
  }
};
} // namespace

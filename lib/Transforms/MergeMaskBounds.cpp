//===- MergeMaskBounds.cpp - one comparison per bound direction -----------===//
//
// A mask such as `col < Nk && col <= row + Nk - Nq` compares every score's
// column with two upper bounds; lowered as written, each comparison selects
// separately (two selects per score). Both bounds only limit the column from
// above, so the conjunction is `col <= min(Nk - 1, row + Nk - Nq)`: one
// comparison per score against a limit computed once per row.
//
// A band (a sliding window: the subject also bounded from the other side
// by per-row limits) stays as written: its merged limit is one more per-row
// value beside the other side's, and at 255 registers ptxas spilled for it
// (docs/perf.md, "Masked loops"). Merging one side is
// exact whatever the other side compares, so a band is merged where that
// cost is absent: a side whose limits are all scalars (a splat or a
// constant: the merged limit is one scalar), or a side opposite only such
// limits (`col >= 0`: no per-row value beside the merged one).
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/MapVector.h"

namespace flash {
#define GEN_PASS_DEF_TILEMERGEMASKBOUNDS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {

/// The value under any tile.broadcast ops.
Value stripBroadcasts(Value value) {
  while (auto broadcast = value.getDefiningOp<BroadcastOp>())
    value = broadcast.getInput();
  return value;
}

/// One signed comparison of the tree, read as a bound on `subject`:
/// `subject <= limit` (upper) or `subject >= limit` (lower), `limit` one
/// less or more than the compared value when the comparison is strict.
struct Bound {
  Value leaf;    // the i1 tile in the tree (before broadcasting to the root)
  Value subject; // the compared value, under its broadcasts
  Value limit;   // the other operand, as compared
  bool upper;
  bool strict;
};

/// Both readings of a signed ordering comparison: subject on either side.
SmallVector<Bound, 2> readComparison(Value leaf) {
  auto cmp = stripBroadcasts(leaf).getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return {};
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if ((pred != P::slt && pred != P::sle && pred != P::sgt && pred != P::sge) ||
      getElementTypeOrSelf(cmp.getLhs()).getIntOrFloatBitWidth() < 2)
    return {};
  bool lhsUpper = pred == P::slt || pred == P::sle;
  bool strict = pred == P::slt || pred == P::sgt;
  return {Bound{leaf, stripBroadcasts(cmp.getLhs()), cmp.getRhs(), lhsUpper,
                strict},
          Bound{leaf, stripBroadcasts(cmp.getRhs()), cmp.getLhs(), !lhsUpper,
                strict}};
}

/// The leaves of a tree of `OpTy` (andi or ori) ops, through broadcasts.
template <typename OpTy>
void collectLeaves(Value value, SmallVectorImpl<Value> &leaves) {
  if (auto op = stripBroadcasts(value).getDefiningOp<OpTy>()) {
    collectLeaves<OpTy>(op.getLhs(), leaves);
    collectLeaves<OpTy>(op.getRhs(), leaves);
    return;
  }
  leaves.push_back(value);
}

/// `value` (a tile of `type`'s shape or one broadcastable to it) as a tile
/// of `type`'s shape with `value`'s element type.
Value broadcastTo(PatternRewriter &rewriter, Location loc, Value value,
                  RankedTensorType type) {
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType.getShape() == type.getShape())
    return value;
  auto resultType =
      RankedTensorType::get(type.getShape(), valueType.getElementType());
  return BroadcastOp::create(rewriter, loc, resultType, value);
}

/// The element of a splat constant tile.
TypedAttr splatConstant(Value value) {
  DenseElementsAttr dense;
  if (!matchPattern(value, m_Constant(&dense)) || !dense.isSplat())
    return {};
  return dense.getSplatValue<TypedAttr>();
}

/// A bound's limit under its broadcasts: the scalar of a splat (null for a
/// constant one, see splatConstant), else a tile.
Value limitCore(const Bound &bound) {
  Value limit = stripBroadcasts(bound.limit);
  if (auto splat = limit.getDefiningOp<SplatOp>())
    return splat.getValue();
  if (splatConstant(limit))
    return {};
  return limit;
}

/// Whether making the bound inclusive is exact for a constant limit: `c <
/// INT_MIN` (`c > INT_MAX`) holds for no `c`, and its limit minus (plus) one
/// would wrap. Other limits are index values, assumed not to overflow.
bool inclusiveIsExact(const Bound &bound) {
  Value limit = stripBroadcasts(bound.limit);
  if (auto splat = limit.getDefiningOp<SplatOp>())
    limit = splat.getValue();
  APInt value;
  if (!bound.strict || !matchPattern(limit, m_ConstantInt(&value)))
    return true;
  return bound.upper ? !value.isMinSignedValue() : !value.isMaxSignedValue();
}

/// Whether the limits' tiles have one shape. Combined at a larger shape,
/// the limit would cost as much per score as the comparisons it replaces.
bool limitsShareShape(ArrayRef<Bound> bounds) {
  Type tileType;
  for (const Bound &bound : bounds) {
    Value core = limitCore(bound);
    Type type = core ? core.getType() : Type();
    if (!isa_and_present<RankedTensorType>(type))
      continue;
    if (tileType && tileType != type)
      return false;
    tileType = type;
  }
  return true;
}

/// Whether every limit of `bounds` is a scalar under its broadcasts (a
/// splat or a constant): their min or max is one scalar, not a tile.
bool scalarLimits(ArrayRef<Bound> bounds) {
  return llvm::none_of(bounds, [](const Bound &bound) {
    Value core = limitCore(bound);
    return core && isa<RankedTensorType>(core.getType());
  });
}

/// Whether `bounds` and `opposite` (the other side of the same subject, if
/// any) form a band of per-row limits on both sides: merged, `bounds` would
/// be one more per-row value beside `opposite`'s.
bool perRowBand(ArrayRef<Bound> bounds, const SmallVector<Bound> *opposite) {
  return opposite && !scalarLimits(bounds) && !scalarLimits(*opposite);
}

/// A bound's limit, made inclusive: a scalar when it is a splat, else a
/// tile under its broadcasts.
Value inclusiveLimit(PatternRewriter &rewriter, Location loc,
                     const Bound &bound) {
  Value limit = limitCore(bound);
  if (!limit) {
    TypedAttr element = splatConstant(stripBroadcasts(bound.limit));
    limit = arith::ConstantOp::create(rewriter, loc, element);
  }
  if (!bound.strict)
    return limit;
  // Index arithmetic is assumed not to overflow (as in the loop split).
  Type type = limit.getType();
  Value one = arith::ConstantOp::create(rewriter, loc, type,
                                        cast<TypedAttr>(rewriter.getOneAttr(type)));
  if (bound.upper)
    return arith::SubIOp::create(rewriter, loc, limit, one);
  return arith::AddIOp::create(rewriter, loc, limit, one);
}

/// The minimum (or maximum) of `limits`, each a scalar or a tile of one
/// shape.
Value combineLimits(PatternRewriter &rewriter, Location loc,
                    ArrayRef<Value> limits, bool useMin) {
  auto combine = [&](Value a, Value b) -> Value {
    if (!a)
      return b;
    if (useMin)
      return arith::MinSIOp::create(rewriter, loc, a, b);
    return arith::MaxSIOp::create(rewriter, loc, a, b);
  };
  Value scalar, tile;
  for (Value limit : limits) {
    if (!isa<RankedTensorType>(limit.getType())) {
      scalar = combine(scalar, limit);
      continue;
    }
    tile = combine(tile, limit);
  }
  if (!tile)
    return scalar;
  if (!scalar)
    return tile;
  return combine(tile, SplatOp::create(rewriter, loc, tile.getType(), scalar));
}

/// The bounds to merge: for each leaf that compares a value also compared
/// by another leaf, that reading; grouped by (subject, direction) in order
/// of first appearance.
llvm::MapVector<std::pair<Value, int>, SmallVector<Bound>>
groupBounds(ArrayRef<Value> leaves) {
  llvm::DenseMap<Value, int> subjectCount;
  SmallVector<SmallVector<Bound, 2>> readings;
  for (Value leaf : leaves) {
    readings.push_back(readComparison(leaf));
    for (const Bound &bound : readings.back())
      ++subjectCount[bound.subject];
  }
  llvm::MapVector<std::pair<Value, int>, SmallVector<Bound>> groups;
  for (auto &reading : readings) {
    const Bound *best = nullptr;
    for (const Bound &bound : reading)
      if (subjectCount[bound.subject] >= 2 &&
          (!best || subjectCount[bound.subject] > subjectCount[best->subject]))
        best = &bound;
    if (best)
      groups[{best->subject, best->upper}].push_back(*best);
  }
  return groups;
}

/// Whether `root` is the top of its tree of `OpTy` ops (no `OpTy` user,
/// directly or through a broadcast).
template <typename OpTy>
bool isTreeRoot(Operation *root) {
  for (Operation *user : root->getUsers()) {
    if (isa<OpTy>(user))
      return false;
    if (isa<BroadcastOp>(user) && !user->use_empty() &&
        isa<OpTy>(*user->getUsers().begin()))
      return false;
  }
  return true;
}

/// One comparison of `subject` with the combined limit of `bounds` (all
/// upper or all lower), at `rootType`'s shape.
Value mergeGroup(PatternRewriter &rewriter, Location loc, Value subject,
                 bool upper, ArrayRef<Bound> bounds, bool useMin,
                 RankedTensorType rootType) {
  SmallVector<Value> limits;
  for (const Bound &bound : bounds)
    limits.push_back(inclusiveLimit(rewriter, loc, bound));
  Value limit = combineLimits(rewriter, loc, limits, useMin);
  if (!isa<RankedTensorType>(limit.getType()))
    limit = SplatOp::create(
        rewriter, loc,
        RankedTensorType::get(rootType.getShape(), limit.getType()), limit);
  auto pred = upper ? arith::CmpIPredicate::sle : arith::CmpIPredicate::sge;
  return arith::CmpIOp::create(rewriter, loc, pred,
                               broadcastTo(rewriter, loc, subject, rootType),
                               broadcastTo(rewriter, loc, limit, rootType));
}

/// andi (min of upper limits, max of lower ones) or ori (the reverse) of
/// comparisons of one subject: a single comparison per direction.
template <typename OpTy>
struct MergeBounds : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool kConjunction = std::is_same_v<OpTy, arith::AndIOp>;

  LogicalResult matchAndRewrite(OpTy root,
                                PatternRewriter &rewriter) const override {
    auto rootType = dyn_cast<RankedTensorType>(root.getType());
    if (!rootType || rootType.getEncoding())
      return failure(); // tile level only: new tiles get no layout here
    if (!isTreeRoot<OpTy>(root))
      return failure();
    SmallVector<Value> leaves;
    collectLeaves<OpTy>(root.getResult(), leaves);
    Location loc = root.getLoc();
    SmallVector<Value> terms;
    llvm::DenseSet<Value> merged;
    auto groups = groupBounds(leaves);
    for (auto &[key, bounds] : groups) {
      auto opposite = groups.find({key.first, !key.second});
      if (bounds.size() < 2 || !limitsShareShape(bounds) ||
          !llvm::all_of(bounds, inclusiveIsExact) ||
          perRowBand(bounds,
                     opposite == groups.end() ? nullptr : &opposite->second))
        continue;
      // A conjunction keeps the tightest limit, a disjunction the loosest.
      bool upper = key.second != 0;
      terms.push_back(mergeGroup(rewriter, loc, key.first, upper, bounds,
                                 upper == kConjunction, rootType));
      for (const Bound &bound : bounds)
        merged.insert(bound.leaf);
    }
    if (terms.empty())
      return failure();
    for (Value leaf : leaves)
      if (!merged.contains(leaf))
        terms.push_back(broadcastTo(rewriter, loc, leaf, rootType));
    Value result = terms.front();
    for (Value term : ArrayRef<Value>(terms).drop_front())
      result = OpTy::create(rewriter, loc, result, term);
    rewriter.replaceOp(root, result);
    return success();
  }
};

struct TileMergeMaskBoundsPass
    : flash::impl::TileMergeMaskBoundsBase<TileMergeMaskBoundsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    flash::populateMergeMaskBoundsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void flash::populateMergeMaskBoundsPatterns(RewritePatternSet &patterns) {
  patterns.add<MergeBounds<arith::AndIOp>, MergeBounds<arith::OrIOp>>(
      patterns.getContext());
}

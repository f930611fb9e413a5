//===- SplitMaskedLoops.cpp - block skipping from the mask ----------------===//
//
// Attention written with one key loop masks its scores with
// `where(mask, s, -inf)` in every block. Most blocks are either hidden
// whole (causal: above the diagonal) or visible whole (below it). Where the
// mask is built from comparisons MaskAnalysis understands, the loop becomes
// up to three loops over consecutive ranges of its iterations: masked
// blocks, blocks that need no mask (the mask's analysed part folds to true),
// masked blocks; the hidden blocks outside are never run, so never loaded
// and never multiplied. A mask whose live blocks are a union of disjoint
// intervals (attention sinks beside a sliding window) gives such a group
// of ranges per interval, in increasing order, and the gaps are skipped. Skipping is only done when a hidden block changes
// nothing: it writes no memory and the loop carries only the state of the
// online softmax it feeds, on which all -inf scores are the identity.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "MaskAnalysis.h"
#include "Remarks.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace flash {
#define GEN_PASS_DEF_TILESPLITMASKEDLOOPS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash;

namespace {
/// The scores of an online-softmax step masked to -inf, and the conditions
/// that all hold where a score is kept.
struct MaskedScores {
  tile::OnlineSoftmaxOp softmax;
  SmallVector<Value> conjuncts;
};

bool isMinusInfinity(Value v) {
  if (auto splat = v.getDefiningOp<tile::SplatOp>())
    v = splat.getValue();
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValue().isInfinity() && scalar.getValue().isNegative();
  DenseFPElementsAttr dense;
  return matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
         dense.getSplatValue<APFloat>().isInfinity() &&
         dense.getSplatValue<APFloat>().isNegative();
}

/// The conjuncts of `condition`, also inside broadcasts (a broadcast of
/// a && b is the and of their broadcasts: all true or all false together).
void collectConjuncts(Value condition, SmallVectorImpl<Value> &conjuncts) {
  Operation *def = condition.getDefiningOp();
  if (isa_and_nonnull<tile::BroadcastOp, tile::ExpandDimsOp>(def) &&
      def->getOperand(0).getDefiningOp<arith::AndIOp>()) {
    collectConjuncts(def->getOperand(0), conjuncts);
    return;
  }
  if (auto both = condition.getDefiningOp<arith::AndIOp>()) {
    collectConjuncts(both.getLhs(), conjuncts);
    collectConjuncts(both.getRhs(), conjuncts);
    return;
  }
  conjuncts.push_back(condition);
}

/// The one online-softmax step of the loop body whose scores come through
/// `select(cond, s, -inf)`s (cond's conjuncts collected).
std::optional<MaskedScores> findMaskedScores(scf::ForOp loop) {
  auto steps = loop.getBody()->getOps<tile::OnlineSoftmaxOp>();
  if (!llvm::hasSingleElement(steps))
    return std::nullopt;
  MaskedScores masked{*steps.begin(), {}};
  Value scores = masked.softmax.getScores();
  while (auto select = scores.getDefiningOp<arith::SelectOp>()) {
    if (!isMinusInfinity(select.getFalseValue()))
      break;
    collectConjuncts(select.getCondition(), masked.conjuncts);
    scores = select.getTrueValue();
  }
  if (masked.conjuncts.empty())
    return std::nullopt;
  return masked;
}

/// Whether an iteration whose scores are all -inf leaves the loop's state as
/// it was: no writes, and every carried value is the softmax state it
/// updates (m, l, acc are unchanged by a block of -inf scores) or passed on.
bool hiddenBlockIsIdentity(scf::ForOp loop, tile::OnlineSoftmaxOp softmax) {
  if (loopBodyWritesMemory(loop))
    return false;
  Value state[] = {softmax.getRunningMax(), softmax.getRunningSum(),
                   softmax.getAcc()};
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [yielded, carried] :
       llvm::zip(yield.getOperands(), loop.getRegionIterArgs())) {
    auto result = dyn_cast<OpResult>(yielded);
    bool updates = result && result.getOwner() == softmax &&
                   state[result.getResultNumber()] == carried;
    if (yielded != carried && !updates)
      return false;
  }
  return true;
}

/// A copy of `loop` over [from, to) starting from `inits`. `visible`: the
/// analysed conjuncts hold on every block of the range, so they are true.
scf::ForOp cloneOverRange(OpBuilder &builder, scf::ForOp loop, Value from,
                          Value to, ValueRange inits,
                          ArrayRef<Value> analysed, bool visible) {
  auto copy = scf::ForOp::create(builder, loop.getLoc(), from, to,
                                 loop.getStep(), inits);
  copy->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), copy.getInductionVar());
  mapping.map(loop.getRegionIterArgs(), copy.getRegionIterArgs());
  OpBuilder body = OpBuilder::atBlockEnd(copy.getBody());
  for (Operation &op : *loop.getBody())
    body.clone(op, mapping);
  if (!visible) {
    copy->setAttr(tile::kMaskSplitAttrName, builder.getUnitAttr());
    return copy;
  }
  body.setInsertionPointToStart(copy.getBody());
  for (Value conjunct : analysed) {
    Type type = conjunct.getType();
    TypedAttr yes = isa<ShapedType>(type)
                        ? TypedAttr(DenseElementsAttr::get(
                              cast<ShapedType>(type), true))
                        : TypedAttr(body.getBoolAttr(true));
    Value always = arith::ConstantOp::create(body, loop.getLoc(), yes);
    mapping.lookupOrDefault(conjunct).replaceUsesWithIf(
        always, [&](OpOperand &use) {
          return copy->isProperAncestor(use.getOwner());
        });
  }
  return copy;
}

/// The cut points of one split, before the loop: induction-variable values
/// on the loop's grid lb + k * step.
struct Cuts {
  OpBuilder &builder;
  scf::ForOp loop;

  /// The first grid point at or above `bound` (or one not above lb: signed
  /// division truncates a negative quotient towards 0, and clamp raises
  /// it to lb). cut(min(a, b)) = min(cut(a), cut(b)) (cut is monotone):
  /// spelled that way, a bound like Nk - (step - 1) folds to
  /// (Nk / step) * step, which convert-tile-to-simt proves inside K.
  Value cut(Value bound) {
    Location loc = loop.getLoc();
    Operation *def = bound.getDefiningOp();
    if (isa_and_nonnull<arith::MinSIOp, arith::MaxSIOp>(def)) {
      Value a = cut(def->getOperand(0)), b = cut(def->getOperand(1));
      if (isa<arith::MinSIOp>(def))
        return arith::MinSIOp::create(builder, loc, a, b);
      return arith::MaxSIOp::create(builder, loc, a, b);
    }
    Value lb = loop.getLowerBound(), step = loop.getStep();
    Value one = arith::ConstantOp::create(builder, loc,
                                          IntegerAttr::get(lb.getType(), 1));
    Value stepLess = arith::SubIOp::create(builder, loc, step, one);
    Value distance = arith::SubIOp::create(builder, loc, bound, lb);
    Value rounded = arith::AddIOp::create(builder, loc, distance, stepLess);
    Value count = arith::DivSIOp::create(builder, loc, rounded, step);
    Value offset = arith::MulIOp::create(builder, loc, count, step);
    return arith::AddIOp::create(builder, loc, lb, offset);
  }

  /// cut(bound) clamped to [lo, hi] (lo <= hi), spelled
  /// min(max(lo, cut(bound)), hi).
  Value clamp(Value bound, Value lo, Value hi) {
    Location loc = loop.getLoc();
    Value above = arith::MaxSIOp::create(builder, loc, lo, cut(bound));
    return arith::MinSIOp::create(builder, loc, above, hi);
  }
};

/// Replaces `loop` by its masked, visible and masked ranges; iterations
/// outside `live` are dropped. Returns the ranges as a remark states them:
/// `[lb, a) unmasked, [a, hi) masked`, lo and hi being the live bounds.
std::string splitLoop(scf::ForOp loop, const IterationSet &visible,
                      const IterationSet &live, ArrayRef<Value> analysed) {
  OpBuilder builder(loop);
  Cuts cuts{builder, loop};
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value end = cuts.cut(ub);
  Value from = live.lower ? cuts.clamp(live.lower, lb, end) : lb;
  // The inner cuts are clamped on the grid (so that a range of full blocks
  // ends on a multiple of the step); the last range ends at `to`, within
  // ub (so that its blocks are known to start inside the tensor).
  Value gridTo = live.upper ? cuts.clamp(live.upper, from, end) : end;
  Value to = live.upper ? arith::MinSIOp::create(builder, loop.getLoc(),
                                                 gridTo, ub)
                        : ub;
  ValueRange state = loop.getInitArgs();
  SmallVector<std::string> ranges;
  std::string fromName = live.lower ? "lo" : "lb";
  std::string toName = live.upper ? "hi" : "ub";
  auto range = [&](Value lo, Value hi, bool unmasked, StringRef loName,
                   StringRef hiName) {
    state = cloneOverRange(builder, loop, lo, hi, state, analysed, unmasked)
                .getResults();
    ranges.push_back(("[" + loName + ", " + hiName + ") " +
                      (unmasked ? "unmasked" : "masked"))
                         .str());
  };
  if (visible.empty) {
    range(from, to, false, fromName, toName);
  } else {
    Value visLo =
        visible.lower ? cuts.clamp(visible.lower, from, gridTo) : from;
    Value visHi =
        visible.upper ? cuts.clamp(visible.upper, visLo, gridTo) : to;
    StringRef visLoName = visible.lower ? "a" : StringRef(fromName);
    StringRef visHiName = visible.upper ? "b" : StringRef(toName);
    if (visible.lower)
      range(from, visLo, false, fromName, visLoName);
    range(visLo, visHi, true, visLoName, visHiName);
    if (visible.upper)
      range(visHi, to, false, visHiName, toName);
  }
  loop.replaceAllUsesWith(state);
  loop.erase();
  return llvm::join(ranges, ", ");
}

/// The ranges of one piece of a union, on the grid: masked [from, visLo),
/// unmasked [visLo, visHi), masked [visHi, to); `lead`, `middle` and
/// `trail` say which of them the piece has.
struct PieceRanges {
  Value from, visLo, visHi, to;
  bool lead, middle, trail;
};

/// Replaces `loop` by the ranges of each piece of a union (more than one),
/// in increasing order: a piece without a lower bound first, the others
/// sorted by their first block before the loop; each piece starts past the
/// ones before it, so that no block runs twice. Returns the ranges as a
/// remark states them (lo1, a1, b1, hi1 the first piece's bounds, ...),
/// and in `spans` the span of each group.
std::string splitPieces(scf::ForOp loop, ArrayRef<BlockSets> pieces,
                        ArrayRef<Value> analysed, std::string &spans) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  Cuts cuts{builder, loop};
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value end = cuts.cut(ub);
  SmallVector<BlockSets> order(pieces);
  std::stable_partition(order.begin(), order.end(),
                        [](const BlockSets &p) { return !p.live.lower; });
  SmallVector<PieceRanges> ranges;
  for (const BlockSets &piece : order) {
    const IterationSet &live = piece.live, &visible = piece.visible;
    PieceRanges r;
    r.from = live.lower ? cuts.clamp(live.lower, lb, end) : lb;
    Value gridTo = live.upper ? cuts.clamp(live.upper, r.from, end) : end;
    r.to = live.upper ? arith::MinSIOp::create(builder, loc, gridTo, ub)
                            .getResult()
                      : ub;
    if (visible.empty) {
      r.visLo = r.visHi = r.from;
      r.lead = r.middle = false;
      r.trail = true;
    } else {
      r.visLo =
          visible.lower ? cuts.clamp(visible.lower, r.from, gridTo) : r.from;
      r.visHi =
          visible.upper ? cuts.clamp(visible.upper, r.visLo, gridTo) : r.to;
      r.lead = bool(visible.lower);
      r.middle = true;
      r.trail = bool(visible.upper);
    }
    ranges.push_back(r);
  }
  // The pieces with a lower bound in increasing order of it, by
  // compare-and-swap before the loop; sorted pieces then have every range.
  unsigned first = order.front().live.lower ? 0 : 1;
  if (ranges.size() - first >= 2) {
    for (unsigned i = first; i < ranges.size(); ++i)
      ranges[i].lead = ranges[i].middle = ranges[i].trail = true;
    for (unsigned pass = first; pass + 1 < ranges.size(); ++pass)
      for (unsigned i = first; i + 1 < ranges.size() - (pass - first); ++i) {
        PieceRanges &a = ranges[i], &b = ranges[i + 1];
        Value inOrder = arith::CmpIOp::create(
            builder, loc, arith::CmpIPredicate::sle, a.from, b.from);
        auto swap = [&](Value &x, Value &y) {
          Value lo = arith::SelectOp::create(builder, loc, inOrder, x, y);
          Value hi = arith::SelectOp::create(builder, loc, inOrder, y, x);
          x = lo;
          y = hi;
        };
        swap(a.from, b.from);
        swap(a.visLo, b.visLo);
        swap(a.visHi, b.visHi);
        swap(a.to, b.to);
      }
  }
  ValueRange state = loop.getInitArgs();
  SmallVector<std::string> names;
  auto range = [&](Value lo, Value hi, bool unmasked, const Twine &loName,
                   const Twine &hiName) {
    state = cloneOverRange(builder, loop, lo, hi, state, analysed, unmasked)
                .getResults();
    names.push_back(("[" + loName + ", " + hiName + ") " +
                     (unmasked ? "unmasked" : "masked"))
                        .str());
  };
  Value covered; // past the last block the ranges before visit
  for (auto [k, r] : llvm::enumerate(ranges)) {
    std::string n = std::to_string(k + 1);
    if (covered) {
      r.from = arith::MaxSIOp::create(builder, loc, r.from, covered);
      r.visLo = arith::MaxSIOp::create(builder, loc, r.visLo, r.from);
      r.visHi = arith::MaxSIOp::create(builder, loc, r.visHi, r.visLo);
    }
    std::string from = order[k].live.lower || k ? "lo" + n : "lb";
    std::string to = "hi" + n;
    spans += (k ? " and [" : "[") + from + ", " + to + ")";
    if (r.lead)
      range(r.from, r.visLo, false, from, "a" + n);
    if (r.middle)
      range(r.visLo, r.visHi, true, r.lead ? "a" + n : from,
            r.trail ? "b" + n : to);
    if (r.trail)
      range(r.visHi, r.to, false, r.middle ? "b" + n : from, to);
    covered = covered ? arith::MaxSIOp::create(builder, loc, covered, r.to)
                            .getResult()
                      : r.to;
  }
  loop.replaceAllUsesWith(state);
  loop.erase();
  return llvm::join(names, ", ");
}

/// v as a sum of opaque values times integers plus a constant, read through
/// constants, + and - (what MaskAnalysis builds a bound from).
struct LinearSum {
  llvm::MapVector<Value, int64_t> terms;
  int64_t constant = 0;

  void add(Value v, int64_t factor, int depth = 0) {
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c))) {
      constant += factor * c.getSExtValue();
      return;
    }
    Operation *def = v.getDefiningOp();
    if (depth < 16 && isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def)) {
      add(def->getOperand(0), factor, depth + 1);
      add(def->getOperand(1), isa<arith::AddIOp>(def) ? factor : -factor,
          depth + 1);
      return;
    }
    terms[v] += factor;
  }
};

/// Whether a <= b for all values (b - a is a constant >= 0): a bound the
/// loop's own range already implies.
bool provablyAtMost(Value a, Value b) {
  LinearSum difference;
  difference.add(b, 1);
  difference.add(a, -1);
  return difference.constant >= 0 &&
         llvm::all_of(difference.terms, [](auto &term) { return !term.second; });
}

/// `live` without the bounds that lie outside the loop's range anyway:
/// every bound it keeps costs a register across the loops before.
IterationSet withinLoop(IterationSet live, scf::ForOp loop) {
  if (live.lower && provablyAtMost(live.lower, loop.getLowerBound()))
    live.lower = {};
  if (live.upper && provablyAtMost(loop.getUpperBound(), live.upper))
    live.upper = {};
  return live;
}

/// Where the condition `conjunct` is written: its comparison's location,
/// not that of the broadcast the mask applies to it.
Location conditionLoc(Value conjunct) {
  while (Operation *def = conjunct.getDefiningOp()) {
    if (!isa<tile::BroadcastOp, tile::ExpandDimsOp, tile::SplatOp>(def))
      return def->getLoc();
    conjunct = def->getOperand(0);
  }
  return conjunct.getLoc();
}

/// "41:20, 41:45": where the conditions in `locs` are.
std::string listPlaces(ArrayRef<Location> locs) {
  return llvm::join(llvm::map_range(locs, lineCol), ", ");
}

/// Whether `v` is a constant (a scalar splat to a tile, or a dense one).
bool isConstantTile(Value v) {
  if (auto splat = v.getDefiningOp<tile::SplatOp>())
    v = splat.getValue();
  return matchPattern(v, m_Constant());
}

/// The remark at a loop over blocks that multiplies them (tile.mma) but
/// takes no online-softmax step (a backward pass, a softmax written out):
/// the split leaves it alone, as its state is not the softmax's; the remark
/// says so, and whether a mask (where(mask, x, constant) on a tile) is
/// computed in every block.
void remarkLoopWithoutSoftmax(scf::ForOp loop) {
  if (loop.getBody()->getOps<tile::MmaOp>().empty())
    return;
  arith::SelectOp mask;
  for (arith::SelectOp select : loop.getBody()->getOps<arith::SelectOp>())
    if (isa<ShapedType>(select.getCondition().getType()) &&
        isConstantTile(select.getFalseValue())) {
      mask = select;
      break;
    }
  InFlightDiagnostic remark = loop.emitRemark();
  remark << "key loop not split: it takes no online_softmax step (a softmax "
            "written out, or a backward pass), so its blocks are the "
            "source's range and none is skipped; ";
  if (mask)
    remark << "the mask at " << lineCol(conditionLoc(mask.getCondition()))
           << " is computed in every block";
  else
    remark << "no block is masked";
}

/// Splits `loop` where its mask allows; leaves it alone otherwise. With
/// `remarks`, says which at the loop.
void splitMaskedLoop(scf::ForOp loop, bool remarks) {
  if (loop->hasAttr(tile::kMaskSplitAttrName))
    return;
  if (loop.getBody()->getOps<tile::OnlineSoftmaxOp>().empty()) {
    if (remarks)
      remarkLoopWithoutSoftmax(loop);
    return;
  }
  if (loop.getInitArgs().empty()) {
    if (remarks)
      loop.emitRemark() << "key loop not split: it carries no online-softmax "
                           "state (its m, l and acc live in memory)";
    return;
  }
  std::optional<MaskedScores> masked = findMaskedScores(loop);
  if (!masked) {
    if (remarks)
      loop.emitRemark() << "key loop not split: its online_softmax scores are "
                           "not masked by where(mask, s, -inf)";
    return;
  }
  MaskAnalysis analysis(loop);
  BlockUnion pieces{BlockSets{}};
  SmallVector<Value> analysed;
  SmallVector<Location> lowerBy, upperBy, emptyBy, unionBy;
  for (Value conjunct : masked->conjuncts) {
    FailureOr<BlockUnion> sets = analysis.analyze(conjunct);
    if (failed(sets)) {
      if (!remarks)
        continue;
      const MaskFailure &why = analysis.lastFailure();
      InFlightDiagnostic remark = loop.emitRemark();
      remark << "mask condition at " << lineCol(conditionLoc(conjunct))
             << " not analysed, so it is computed in every block: ";
      if (why.value) {
        remark << "the analysis stops at " << why.reason;
        remark.attachNote(why.value.getLoc()) << "the analysis stops here";
      } else {
        remark << "it is not built from comparisons of d * n + g(i, j)";
      }
      continue;
    }
    BlockUnion own = *sets;
    for (BlockSets &piece : own)
      piece.live = withinLoop(piece.live, loop);
    own = analysis.normalize(std::move(own));
    if (own.empty())
      emptyBy.push_back(conditionLoc(conjunct));
    if (own.size() > 1)
      unionBy.push_back(conditionLoc(conjunct));
    if (llvm::any_of(own, [](const BlockSets &p) { return p.live.lower; }))
      lowerBy.push_back(conditionLoc(conjunct));
    if (llvm::any_of(own, [](const BlockSets &p) { return p.live.upper; }))
      upperBy.push_back(conditionLoc(conjunct));
    pieces = analysis.intersect(pieces, own);
    analysed.push_back(conjunct);
  }
  bool skips = hiddenBlockIsIdentity(loop, masked->softmax);
  // Without skipping, one range group over the whole loop: the visible
  // blocks of one piece stay unmasked (of a union of pieces, a subset).
  if (!skips)
    pieces = BlockUnion{BlockSets{analysis.merge(pieces).visible,
                                  IterationSet{}}};
  // Without an analysed conjunct the bounds (none were built) gain nothing;
  // an empty visible set and a full live set leave one masked loop (its
  // dead bounds fold away).
  if (analysed.empty()) {
    if (remarks)
      loop.emitRemark() << "key loop not split: no condition of its mask "
                           "could be analysed";
    return;
  }
  Location loc = loop.getLoc();
  if (pieces.size() > 1) {
    std::string spans;
    std::string ranges = splitPieces(loop, pieces, analysed, spans);
    if (!remarks)
      return;
    unsigned count = llvm::count(ranges, '[');
    emitRemark(loc) << "key loop split into " << count << " ranges in "
                    << pieces.size() << " groups: " << ranges
                    << "; blocks outside " << spans
                    << " skipped (a union of intervals from the condition at "
                    << listPlaces(unionBy) << ")";
    return;
  }
  IterationSet visible = pieces.empty() ? IterationSet{{}, {}, true}
                                        : pieces[0].visible;
  IterationSet live = pieces.empty() ? IterationSet{{}, {}, true}
                                     : pieces[0].live;
  IterationSet kept = live;
  std::string ranges = splitLoop(loop, visible, live, analysed);
  if (!remarks)
    return;
  InFlightDiagnostic remark = emitRemark(loc);
  unsigned count = llvm::count(ranges, '[');
  remark << "key loop split into " << count
         << (count == 1 ? " range: " : " ranges: ") << ranges;
  if (kept.empty)
    remark << "; every block skipped (the condition at "
           << listPlaces(emptyBy) << " never holds)";
  if (kept.lower)
    remark << "; blocks before lo skipped (lower bound from the condition at "
           << listPlaces(lowerBy) << ")";
  if (kept.upper)
    remark << "; blocks from hi on skipped (upper bound from the condition at "
           << listPlaces(upperBy) << ")";
  if (!skips)
    remark << "; no block skipped: the body writes memory or carries values "
              "other than the online-softmax state";
  else if (!kept.empty && !kept.lower && !kept.upper)
    remark << "; no block skipped: the mask hides no whole block outside the "
              "loop's range";
}

struct TileSplitMaskedLoops
    : flash::impl::TileSplitMaskedLoopsBase<TileSplitMaskedLoops> {
  using TileSplitMaskedLoopsBase::TileSplitMaskedLoopsBase;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      splitMaskedLoop(loop, remarks);
  }
};
} // namespace

//===- MaskAnalysis.cpp - which blocks of a loop a mask hides -------------===//
#include "MaskAnalysis.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flash::tile;

namespace flash {
namespace {

/// The failure record of the analysis running on this thread (the helpers
/// below are free functions); the first failure, the innermost, is kept.
thread_local MaskFailure *currentFailure = nullptr;

/// Records that the analysis stops at `v` because of `reason`.
LogicalResult stopAt(Value v, const Twine &reason) {
  if (currentFailure && !currentFailure->value) {
    currentFailure->value = v;
    currentFailure->reason = reason.str();
  }
  return failure();
}

/// How an integer value of the loop depends on the block: exactly `n` times
/// the induction variable plus a part g that is, along each dim of the
/// value, non-decreasing (+1), non-increasing (-1) or constant (0).
struct Trend {
  int64_t n = 0;
  SmallVector<int, 2> dirs;
};

std::optional<int64_t> constantInt(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

Type elementType(Value v) { return getElementTypeOrSelf(v.getType()); }

unsigned rankOf(Value v) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  return shaped ? shaped.getRank() : 0;
}

bool definedIn(scf::ForOp loop, Value v) {
  return loop.getRegion().isAncestor(v.getParentRegion());
}

/// The direction of a + b along one dim, or 0 for a conflict.
std::optional<int> combine(int a, int b) {
  if (a == 0 || a == b)
    return b;
  if (b == 0)
    return a;
  return std::nullopt;
}

FailureOr<Trend> sum(FailureOr<Trend> a, FailureOr<Trend> b, int64_t sign) {
  if (failed(a) || failed(b) || a->dirs.size() != b->dirs.size())
    return failure();
  Trend t{a->n + sign * b->n, {}};
  for (auto [da, db] : llvm::zip(a->dirs, b->dirs)) {
    std::optional<int> d = combine(da, static_cast<int>(sign) * db);
    if (!d)
      return failure(); // blamed by the caller, which has the op
    t.dirs.push_back(*d);
  }
  return t;
}

FailureOr<Trend> scaled(FailureOr<Trend> t, int64_t factor) {
  if (failed(t))
    return failure();
  for (int &d : t->dirs)
    d *= factor > 0 ? 1 : factor < 0 ? -1 : 0;
  t->n *= factor;
  return t;
}

FailureOr<Trend> trendOf(Value v, scf::ForOp loop);

/// lhs * rhs with one side a constant.
FailureOr<Trend> productTrend(arith::MulIOp mul, scf::ForOp loop) {
  if (std::optional<int64_t> c = constantInt(mul.getRhs()))
    return scaled(trendOf(mul.getLhs(), loop), *c);
  if (std::optional<int64_t> c = constantInt(mul.getLhs()))
    return scaled(trendOf(mul.getRhs(), loop), *c);
  return stopAt(mul, "a product of two non-constant values");
}

/// A division by a positive constant, or a min / max: monotone, but affine
/// in n only when n does not occur.
FailureOr<Trend> monotoneTrend(Operation *op, scf::ForOp loop) {
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
    std::optional<int64_t> divisor = constantInt(op->getOperand(1));
    FailureOr<Trend> t = trendOf(op->getOperand(0), loop);
    if (!divisor || *divisor <= 0)
      return stopAt(op->getResult(0),
                    "a division by a value that is not a positive constant");
    if (failed(t))
      return failure();
    if (t->n != 0)
      return stopAt(op->getResult(0),
                    "a division of the loop's induction variable");
    return t;
  }
  FailureOr<Trend> a = trendOf(op->getOperand(0), loop);
  FailureOr<Trend> b = trendOf(op->getOperand(1), loop);
  if (failed(a) || failed(b))
    return failure();
  if (a->n != 0 || b->n != 0)
    return stopAt(op->getResult(0),
                  "a min or max of the loop's induction variable");
  FailureOr<Trend> t = sum(a, b, 1);
  if (failed(t))
    return stopAt(op->getResult(0),
                  "a min or max of an increasing and a decreasing value");
  return t;
}

FailureOr<Trend> shapeTrend(Operation *op, scf::ForOp loop, unsigned rank) {
  return TypeSwitch<Operation *, FailureOr<Trend>>(op)
      .Case([&](IotaOp) { return Trend{0, {1}}; })
      .Case([&](SplatOp splat) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(splat.getValue(), loop);
        if (failed(t))
          return failure();
        return Trend{t->n, SmallVector<int, 2>(rank, 0)};
      })
      .Case([&](ExpandDimsOp expand) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(expand.getInput(), loop);
        if (failed(t) || expand.getAxis() > t->dirs.size())
          return failure();
        t->dirs.insert(t->dirs.begin() + expand.getAxis(), 0);
        return t;
      })
      .Case([&](BroadcastOp broadcast) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(broadcast.getInput(), loop);
        auto from = cast<ShapedType>(broadcast.getInput().getType());
        if (failed(t) || t->dirs.size() != rank)
          return failure();
        for (unsigned d = 0; d < rank; ++d)
          if (from.getDimSize(d) == 1)
            t->dirs[d] = 0;
        return t;
      })
      .Default([](Operation *op) -> FailureOr<Trend> {
        return stopAt(op->getResult(0),
                      "'" + op->getName().getStringRef() +
                          "', which the mask analysis does not read through");
      });
}

/// The trend of an integer value of the loop's induction variable type, or
/// failure when it is not of the form d * n + g(i, j) described above.
FailureOr<Trend> trendOf(Value v, scf::ForOp loop) {
  if (elementType(v) != loop.getInductionVar().getType())
    return stopAt(v, "a value whose element type is not the loop's "
                     "induction variable's");
  unsigned rank = rankOf(v);
  Trend flat{0, SmallVector<int, 2>(rank, 0)};
  if (v == loop.getInductionVar())
    return Trend{1, {}};
  if (constantInt(v) || (rank == 0 && !definedIn(loop, v)))
    return flat;
  Operation *def = v.getDefiningOp();
  if (!def)
    return stopAt(v, "a value carried from one iteration to the next");
  auto addOrSub = [&](Operation *op, int64_t sign) -> FailureOr<Trend> {
    FailureOr<Trend> a = trendOf(op->getOperand(0), loop);
    FailureOr<Trend> b = trendOf(op->getOperand(1), loop);
    if (failed(a) || failed(b))
      return failure();
    FailureOr<Trend> t = sum(a, b, sign);
    if (failed(t))
      return stopAt(op->getResult(0), "a sum whose terms do not move "
                                      "together along one dim");
    return t;
  };
  return TypeSwitch<Operation *, FailureOr<Trend>>(def)
      .Case([&](arith::AddIOp op) { return addOrSub(op, 1); })
      .Case([&](arith::SubIOp op) { return addOrSub(op, -1); })
      .Case([&](arith::MulIOp op) { return productTrend(op, loop); })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
            arith::MinSIOp, arith::MaxSIOp>(
          [&](Operation *op) { return monotoneTrend(op, loop); })
      .Default([&](Operation *op) { return shapeTrend(op, loop, rank); });
}

/// The index of the element where a value of `dirs` is smallest (`max`
/// false) or largest.
SmallVector<int64_t> corner(ArrayRef<int> dirs, ShapedType shape, bool max) {
  SmallVector<int64_t> index;
  for (auto [d, dir] : llvm::enumerate(dirs)) {
    bool last = max ? dir > 0 : dir < 0;
    index.push_back(last ? shape.getDimSize(d) - 1 : 0);
  }
  return index;
}

/// Records the ops a builder inserts, so that a failed analysis can erase
/// them.
struct InsertedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

} // namespace

MaskAnalysis::MaskAnalysis(scf::ForOp loop)
    : loop(loop), builder(loop), indexType(loop.getInductionVar().getType()) {}

Value MaskAnalysis::constant(int64_t value) {
  return arith::ConstantOp::create(builder, loop.getLoc(),
                                   IntegerAttr::get(indexType, value));
}

FailureOr<BlockSets> MaskAnalysis::analyze(Value mask) {
  InsertedOps inserted;
  builder.setListener(&inserted);
  stop = MaskFailure{};
  currentFailure = &stop;
  FailureOr<BlockSets> sets = analyzeCondition(mask);
  currentFailure = nullptr;
  builder.setListener(nullptr);
  if (failed(sets))
    for (Operation *op : llvm::reverse(inserted.ops))
      op->erase();
  return sets;
}

FailureOr<BlockSets> MaskAnalysis::analyzeCondition(Value mask) {
  if (std::optional<int64_t> c = constantInt(mask)) {
    IterationSet set;
    set.empty = *c == 0;
    return BlockSets{set, set};
  }
  Operation *def = mask.getDefiningOp();
  if (!def)
    return stopAt(mask, "a condition carried from one iteration to the next");
  return TypeSwitch<Operation *, FailureOr<BlockSets>>(def)
      .Case([&](arith::AndIOp op) -> FailureOr<BlockSets> {
        FailureOr<BlockSets> a = analyzeCondition(op.getLhs());
        FailureOr<BlockSets> b = analyzeCondition(op.getRhs());
        if (failed(a) || failed(b))
          return failure();
        return BlockSets{intersect(a->visible, b->visible),
                         intersect(a->live, b->live)};
      })
      .Case([&](arith::OrIOp op) -> FailureOr<BlockSets> {
        FailureOr<BlockSets> a = analyzeCondition(op.getLhs());
        FailureOr<BlockSets> b = analyzeCondition(op.getRhs());
        if (failed(a) || failed(b))
          return failure();
        return BlockSets{unionWithin(a->visible, b->visible),
                         hull(a->live, b->live)};
      })
      .Case<BroadcastOp, ExpandDimsOp, SplatOp>([&](Operation *op) {
        return analyzeCondition(op->getOperand(0));
      })
      .Case([&](arith::CmpIOp op) { return analyzeComparison(op); })
      .Default([](Operation *op) -> FailureOr<BlockSets> {
        return stopAt(op->getResult(0),
                      "'" + op->getName().getStringRef() +
                          "', not a comparison, and or or of comparisons");
      });
}

/// lhs - rhs >= k (or <= k) holds for a whole block iff it holds at the
/// corner where lhs - rhs is smallest (largest), and fails for a whole block
/// iff it fails at the other corner; both corners' values are d * n + g.
FailureOr<BlockSets> MaskAnalysis::analyzeComparison(Operation *op) {
  auto cmp = cast<arith::CmpIOp>(op);
  bool atLeast;
  int64_t k;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sge: atLeast = true, k = 0; break;
  case arith::CmpIPredicate::sgt: atLeast = true, k = 1; break;
  case arith::CmpIPredicate::sle: atLeast = false, k = 0; break;
  case arith::CmpIPredicate::slt: atLeast = false, k = -1; break;
  default:
    return stopAt(cmp, "a comparison '" +
                           arith::stringifyCmpIPredicate(cmp.getPredicate()) +
                           "', not a signed <, <=, > or >=");
  }
  FailureOr<Trend> lhs = trendOf(cmp.getLhs(), loop);
  FailureOr<Trend> rhs = trendOf(cmp.getRhs(), loop);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Trend> t = sum(lhs, rhs, -1);
  if (failed(t))
    return stopAt(cmp, "a comparison of sides that grow in opposite "
                       "directions along one dim");
  auto shape = dyn_cast<ShapedType>(cmp.getLhs().getType());
  auto at = [&](bool max) {
    SmallVector<int64_t> index;
    if (shape)
      index = corner(t->dirs, shape, max);
    Value g = arith::SubIOp::create(builder, loop.getLoc(),
                                    evaluate(cmp.getLhs(), index),
                                    evaluate(cmp.getRhs(), index));
    return arith::SubIOp::create(builder, loop.getLoc(), g, constant(k))
        .getResult();
  };
  // d*n + g - k >= 0, or k - g - d*n >= 0.
  if (atLeast)
    return BlockSets{halfLine(t->n, at(false)), halfLine(t->n, at(true))};
  auto negate = [&](Value v) {
    return arith::SubIOp::create(builder, loop.getLoc(), constant(0), v)
        .getResult();
  };
  return BlockSets{halfLine(-t->n, negate(at(true))),
                   halfLine(-t->n, negate(at(false)))};
}

/// {n : d * n + c >= 0}.
IterationSet MaskAnalysis::halfLine(int64_t d, Value c) {
  Location loc = loop.getLoc();
  IterationSet set;
  if (d > 0) {
    Value minusC = arith::SubIOp::create(builder, loc, constant(0), c);
    set.lower = d == 1 ? minusC
                       : arith::CeilDivSIOp::create(builder, loc, minusC,
                                                    constant(d))
                             .getResult();
  } else if (d < 0) {
    Value quotient =
        d == -1 ? c
                : arith::FloorDivSIOp::create(builder, loc, c, constant(-d))
                      .getResult();
    set.upper = arith::AddIOp::create(builder, loc, quotient, constant(1));
  } else {
    // No dependence on n: every iteration or none.
    Value holds = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge,
                                        c, constant(0));
    set.upper = arith::SelectOp::create(builder, loc, holds,
                                        loop.getUpperBound(),
                                        loop.getLowerBound());
  }
  return set;
}

IterationSet MaskAnalysis::intersect(const IterationSet &a,
                                     const IterationSet &b) {
  if (a.empty || b.empty)
    return IterationSet{{}, {}, true};
  auto bound = [&](Value x, Value y, bool lower) -> Value {
    if (!x || !y)
      return x ? x : y;
    if (lower)
      return arith::MaxSIOp::create(builder, loop.getLoc(), x, y);
    return arith::MinSIOp::create(builder, loop.getLoc(), x, y);
  };
  return IterationSet{bound(a.lower, b.lower, true),
                      bound(a.upper, b.upper, false)};
}

/// A subset of a ∪ b: exact when both are unbounded on the same side.
IterationSet MaskAnalysis::unionWithin(const IterationSet &a,
                                       const IterationSet &b) {
  if (a.empty || b.isFull())
    return b;
  if (b.empty || a.isFull())
    return a;
  Location loc = loop.getLoc();
  if (!a.lower && !b.lower)
    return IterationSet{{}, arith::MaxSIOp::create(builder, loc, a.upper,
                                                   b.upper)};
  if (!a.upper && !b.upper)
    return IterationSet{arith::MinSIOp::create(builder, loc, a.lower, b.lower),
                        {}};
  return a;
}

/// A superset of a ∪ b: the smallest interval holding both.
IterationSet MaskAnalysis::hull(const IterationSet &a, const IterationSet &b) {
  if (a.empty)
    return b;
  if (b.empty)
    return a;
  Location loc = loop.getLoc();
  Value lower, upper;
  if (a.lower && b.lower)
    lower = arith::MinSIOp::create(builder, loc, a.lower, b.lower);
  if (a.upper && b.upper)
    upper = arith::MaxSIOp::create(builder, loc, a.upper, b.upper);
  return IterationSet{lower, upper};
}

/// The scalar value of element `index` of v in the loop's first iteration
/// at n = 0 (g at that element), computed before the loop.
Value MaskAnalysis::evaluate(Value v, ArrayRef<int64_t> index) {
  if (v == loop.getInductionVar())
    return constant(0);
  if (std::optional<int64_t> c = constantInt(v))
    return constant(*c);
  if (rankOf(v) == 0 && !definedIn(loop, v))
    return v;
  return evaluateOp(v.getDefiningOp(), index);
}

Value MaskAnalysis::evaluateOp(Operation *op, ArrayRef<int64_t> index) {
  Location loc = op->getLoc();
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](IotaOp) { return constant(index[0]); })
      .Case([&](SplatOp splat) { return evaluate(splat.getValue(), {}); })
      .Case([&](ExpandDimsOp expand) {
        SmallVector<int64_t> inner(index);
        inner.erase(inner.begin() + expand.getAxis());
        return evaluate(expand.getInput(), inner);
      })
      .Case([&](BroadcastOp broadcast) {
        auto from = cast<ShapedType>(broadcast.getInput().getType());
        SmallVector<int64_t> inner(index);
        for (auto [d, i] : llvm::enumerate(inner))
          if (from.getDimSize(d) == 1)
            i = 0;
        return evaluate(broadcast.getInput(), inner);
      })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp, arith::MinSIOp,
            arith::MaxSIOp>([&](auto binary) -> Value {
        using OpTy = decltype(binary);
        return OpTy::create(builder, loc, evaluate(binary.getLhs(), index),
                            evaluate(binary.getRhs(), index));
      })
      .Default([](Operation *) -> Value {
        llvm_unreachable("trendOf accepts only the ops evaluated here");
      });
}

} // namespace flash

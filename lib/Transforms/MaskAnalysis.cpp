//===- MaskAnalysis.cpp - which blocks of a loop a mask hides -------------===//
#include "MaskAnalysis.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Transforms/DivisionBounds.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/IRMapping.h"
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
/// value, non-decreasing (+1), non-increasing (-1) or constant (0). When
/// `nonlinear`, the induction variable enters through a division: the value
/// is only monotone in it, non-decreasing for n = 1, non-increasing for -1.
struct Trend {
  int64_t n = 0;
  SmallVector<int, 2> dirs;
  bool nonlinear = false;
};

/// What the trend of a value depends on besides the value: the loop, whether
/// its body writes memory, and the runtime divisors it assumes positive.
struct Context {
  mutable scf::ForOp loop; // its accessors are not const
  bool loopWrites;
  SmallVectorImpl<Value> &divisors;
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

/// The element of an expand_dims' input that `index` of its result reads.
SmallVector<int64_t> indexBeforeExpand(ExpandDimsOp expand,
                                       ArrayRef<int64_t> index) {
  SmallVector<int64_t> inner(index);
  inner.erase(inner.begin() + expand.getAxis());
  return inner;
}

/// The element of a broadcast's input that `index` of its result reads.
SmallVector<int64_t> indexBeforeBroadcast(BroadcastOp broadcast,
                                          ArrayRef<int64_t> index) {
  auto from = cast<ShapedType>(broadcast.getInput().getType());
  SmallVector<int64_t> inner(index);
  for (auto [d, i] : llvm::enumerate(inner))
    if (from.getDimSize(d) == 1)
      i = 0;
  return inner;
}

bool definedIn(scf::ForOp loop, Value v) {
  return loop.getRegion().isAncestor(v.getParentRegion());
}


/// Whether `v`, a scalar computed in the loop, takes the same value in every
/// iteration: pure scalar ops and scalar reads (when the loop writes no
/// memory) of loop-invariant operands. Why not, in `why`.
bool isInvariantScalar(Value v, const Context &ctx, std::string &why,
                       int depth = 0) {
  if (!definedIn(ctx.loop, v))
    return true;
  if (v == ctx.loop.getInductionVar()) {
    why = "a scalar that depends on the loop's induction variable";
    return false;
  }
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32 || rankOf(v) != 0 || def->getNumRegions() != 0 ||
      llvm::any_of(def->getResultTypes(),
                   [](Type type) { return isa<ShapedType>(type); })) {
    why = "a value that is not a scalar computed from loop-invariant values";
    return false;
  }
  if (isa<LoadScalarOp>(def)) {
    if (ctx.loopWrites) {
      why = "a read of memory that the loop writes";
      return false;
    }
  } else if (!isPure(def)) {
    why = "'" + def->getName().getStringRef().str() +
          "', which may fault or has effects";
    return false;
  }
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isInvariantScalar(operand, ctx, why, depth + 1);
  });
}

/// The direction of a + b along one dim, or 0 for a conflict.
std::optional<int> combine(int a, int b) {
  if (a == 0 || a == b)
    return b;
  if (b == 0)
    return a;
  return std::nullopt;
}

/// a + sign * b; failure (blamed by the caller, which has the op) when the
/// dims conflict or when the induction variable enters both terms and one
/// of them through a division (`nonlinear` then tells which).
FailureOr<Trend> sum(FailureOr<Trend> a, FailureOr<Trend> b, int64_t sign,
                     bool *nonlinear = nullptr) {
  if (failed(a) || failed(b) || a->dirs.size() != b->dirs.size())
    return failure();
  Trend t{a->n + sign * b->n, {}};
  if (a->nonlinear || b->nonlinear) {
    if (a->n != 0 && b->n != 0) {
      if (nonlinear)
        *nonlinear = true;
      return failure();
    }
    t.nonlinear = true;
  }
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
  int sign = factor > 0 ? 1 : factor < 0 ? -1 : 0;
  for (int &d : t->dirs)
    d *= sign;
  t->n *= t->nonlinear ? sign : factor;
  t->nonlinear &= sign != 0;
  return t;
}

FailureOr<Trend> trendOf(Value v, const Context &ctx);

/// lhs * rhs with one side a constant.
FailureOr<Trend> productTrend(arith::MulIOp mul, const Context &ctx) {
  if (std::optional<int64_t> c = constantInt(mul.getRhs()))
    return scaled(trendOf(mul.getLhs(), ctx), *c);
  if (std::optional<int64_t> c = constantInt(mul.getLhs()))
    return scaled(trendOf(mul.getRhs(), ctx), *c);
  return stopAt(mul, "a product of two non-constant values");
}

/// `select(x < 0, (x - (d - 1)) / d, x / d)` with `/` truncating and d a
/// positive constant is floor(x / d): how Python's `//` reaches the tile
/// language (flashc.flex traces it so). Returns x and d.
std::optional<std::pair<Value, int64_t>> matchFloorDivision(Operation *op) {
  auto select = dyn_cast<arith::SelectOp>(op);
  if (!select)
    return std::nullopt;
  auto negative = select.getCondition().getDefiningOp<arith::CmpIOp>();
  auto below = select.getTrueValue().getDefiningOp<arith::DivSIOp>();
  auto above = select.getFalseValue().getDefiningOp<arith::DivSIOp>();
  if (!negative || !below || !above ||
      negative.getPredicate() != arith::CmpIPredicate::slt ||
      constantInt(negative.getRhs()) != 0)
    return std::nullopt;
  Value x = negative.getLhs();
  std::optional<int64_t> d = constantInt(above.getRhs());
  auto shifted = below.getLhs().getDefiningOp<arith::SubIOp>();
  if (!d || *d <= 0 || above.getLhs() != x || constantInt(below.getRhs()) != d ||
      !shifted || shifted.getLhs() != x ||
      constantInt(shifted.getRhs()) != *d - 1)
    return std::nullopt;
  return std::make_pair(x, *d);
}

/// The scalar under splats of `v`, when `v` is a loop-invariant scalar or a
/// splat of one (a divisor the analysis accepts at runtime).
Value invariantScalar(Value v, const Context &ctx) {
  while (auto splat = v.getDefiningOp<SplatOp>())
    v = splat.getValue();
  std::string why;
  if (rankOf(v) != 0 || !isInvariantScalar(v, ctx, why))
    return {};
  return v;
}

/// A division by a positive constant or by a loop-invariant value (assumed
/// positive, checked before the loop), or a min / max: monotone. The
/// induction variable may enter a division (the result is then
/// `nonlinear`), not a min or max.
FailureOr<Trend> monotoneTrend(Operation *op, const Context &ctx) {
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
    std::optional<int64_t> divisor = constantInt(op->getOperand(1));
    Value runtime;
    if (!divisor) {
      runtime = invariantScalar(op->getOperand(1), ctx);
      if (!runtime)
        return stopAt(op->getResult(0),
                      "a division by a value that is neither a constant nor "
                      "loop-invariant");
    } else if (*divisor <= 0) {
      return stopAt(op->getResult(0), "a division by a constant that is not "
                                      "positive");
    }
    FailureOr<Trend> t = trendOf(op->getOperand(0), ctx);
    if (failed(t))
      return failure();
    if (runtime && !llvm::is_contained(ctx.divisors, runtime))
      ctx.divisors.push_back(runtime);
    if (t->n != 0) {
      t->n = t->n > 0 ? 1 : -1;
      t->nonlinear = true;
    }
    return t;
  }
  FailureOr<Trend> a = trendOf(op->getOperand(0), ctx);
  FailureOr<Trend> b = trendOf(op->getOperand(1), ctx);
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

FailureOr<Trend> shapeTrend(Operation *op, const Context &ctx,
                            unsigned rank) {
  return TypeSwitch<Operation *, FailureOr<Trend>>(op)
      .Case([&](IotaOp) { return Trend{0, {1}}; })
      .Case([&](SplatOp splat) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(splat.getValue(), ctx);
        if (failed(t))
          return failure();
        return Trend{t->n, SmallVector<int, 2>(rank, 0), t->nonlinear};
      })
      .Case([&](ExpandDimsOp expand) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(expand.getInput(), ctx);
        if (failed(t) || expand.getAxis() > t->dirs.size())
          return failure();
        t->dirs.insert(t->dirs.begin() + expand.getAxis(), 0);
        return t;
      })
      .Case([&](BroadcastOp broadcast) -> FailureOr<Trend> {
        FailureOr<Trend> t = trendOf(broadcast.getInput(), ctx);
        auto from = cast<ShapedType>(broadcast.getInput().getType());
        if (failed(t) || t->dirs.size() != rank)
          return failure();
        for (unsigned d = 0; d < rank; ++d)
          if (from.getDimSize(d) == 1)
            t->dirs[d] = 0;
        return t;
      })
      .Default([&](Operation *op) -> FailureOr<Trend> {
        // A scalar the loop computes the same in every iteration.
        std::string why;
        if (rank == 0 && isInvariantScalar(op->getResult(0), ctx, why))
          return Trend{0, {}};
        if (rank == 0 && isa<LoadScalarOp>(op))
          return stopAt(op->getResult(0), why);
        return stopAt(op->getResult(0),
                      "'" + op->getName().getStringRef() +
                          "', which the mask analysis does not read through");
      });
}

/// The trend of an integer value of the loop's induction variable type, or
/// failure when it is not of the form d * n + g(i, j) described above.
FailureOr<Trend> trendOf(Value v, const Context &ctx) {
  scf::ForOp loop = ctx.loop;
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
    FailureOr<Trend> a = trendOf(op->getOperand(0), ctx);
    FailureOr<Trend> b = trendOf(op->getOperand(1), ctx);
    if (failed(a) || failed(b))
      return failure();
    bool nonlinear = false;
    FailureOr<Trend> t = sum(a, b, sign, &nonlinear);
    if (failed(t) && nonlinear)
      return stopAt(op->getResult(0),
                    "a sum of two terms of the loop's induction variable, "
                    "one of them through a division");
    if (failed(t))
      return stopAt(op->getResult(0), "a sum whose terms do not move "
                                      "together along one dim");
    return t;
  };
  return TypeSwitch<Operation *, FailureOr<Trend>>(def)
      .Case([&](arith::AddIOp op) { return addOrSub(op, 1); })
      .Case([&](arith::SubIOp op) { return addOrSub(op, -1); })
      .Case([&](arith::MulIOp op) { return productTrend(op, ctx); })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
            arith::MinSIOp, arith::MaxSIOp>(
          [&](Operation *op) { return monotoneTrend(op, ctx); })
      .Case([&](arith::SelectOp op) -> FailureOr<Trend> {
        if (!matchFloorDivision(op))
          return shapeTrend(op, ctx, rank); // a loop-invariant scalar?
        // As the truncating division it is built of: monotone.
        return monotoneTrend(op.getFalseValue().getDefiningOp(), ctx);
      })
      .Default([&](Operation *op) { return shapeTrend(op, ctx, rank); });
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

bool loopBodyWritesMemory(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (effects && effects.onlyHasEffect<MemoryEffects::Read>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return result.wasInterrupted();
}

MaskAnalysis::MaskAnalysis(scf::ForOp loop)
    : loop(loop), builder(loop), indexType(loop.getInductionVar().getType()),
      loopWrites(loopBodyWritesMemory(loop)) {}

Value MaskAnalysis::constant(int64_t value) {
  return arith::ConstantOp::create(builder, loop.getLoc(),
                                   IntegerAttr::get(indexType, value));
}

FailureOr<BlockUnion> MaskAnalysis::analyze(Value mask) {
  InsertedOps inserted;
  builder.setListener(&inserted);
  stop = MaskFailure{};
  currentFailure = &stop;
  FailureOr<BlockUnion> sets = analyzeCondition(mask);
  currentFailure = nullptr;
  builder.setListener(nullptr);
  if (failed(sets)) {
    for (Operation *op : llvm::reverse(inserted.ops))
      op->erase();
    hoisted.clear();
  }
  return sets;
}

FailureOr<BlockUnion> MaskAnalysis::analyzeCondition(Value mask) {
  if (std::optional<int64_t> c = constantInt(mask)) {
    if (*c == 0)
      return BlockUnion{};
    return BlockUnion{BlockSets{}};
  }
  Operation *def = mask.getDefiningOp();
  if (!def)
    return stopAt(mask, "a condition carried from one iteration to the next");
  return TypeSwitch<Operation *, FailureOr<BlockUnion>>(def)
      .Case([&](arith::AndIOp op) -> FailureOr<BlockUnion> {
        FailureOr<BlockUnion> a = analyzeCondition(op.getLhs());
        FailureOr<BlockUnion> b = analyzeCondition(op.getRhs());
        if (failed(a) || failed(b))
          return failure();
        return intersect(*a, *b);
      })
      .Case([&](arith::OrIOp op) -> FailureOr<BlockUnion> {
        FailureOr<BlockUnion> a = analyzeCondition(op.getLhs());
        FailureOr<BlockUnion> b = analyzeCondition(op.getRhs());
        if (failed(a) || failed(b))
          return failure();
        BlockUnion both = *a;
        both.append(b->begin(), b->end());
        return normalize(std::move(both));
      })
      .Case<BroadcastOp, ExpandDimsOp, SplatOp>([&](Operation *op) {
        return analyzeCondition(op->getOperand(0));
      })
      .Case([&](arith::CmpIOp op) -> FailureOr<BlockUnion> {
        FailureOr<BlockSets> sets = analyzeComparison(op);
        if (failed(sets))
          return failure();
        return normalize(BlockUnion{*sets});
      })
      .Default([](Operation *op) -> FailureOr<BlockUnion> {
        return stopAt(op->getResult(0),
                      "'" + op->getName().getStringRef() +
                          "', not a comparison, and or or of comparisons");
      });
}

BlockUnion MaskAnalysis::intersect(const BlockUnion &a, const BlockUnion &b) {
  BlockUnion both;
  for (const BlockSets &x : a)
    for (const BlockSets &y : b)
      both.push_back(BlockSets{intersect(x.visible, y.visible),
                               intersect(x.live, y.live)});
  return normalize(std::move(both));
}

BlockUnion MaskAnalysis::normalize(BlockUnion pieces) {
  llvm::erase_if(pieces, [](const BlockSets &p) { return p.live.empty; });
  auto joins = [](const IterationSet &a, const IterationSet &b) {
    return a.isFull() || b.isFull() || (!a.lower && !b.lower) ||
           (!a.upper && !b.upper);
  };
  auto mergeTwo = [&](const BlockSets &a, const BlockSets &b) {
    return BlockSets{unionWithin(a.visible, b.visible), hull(a.live, b.live)};
  };
  for (bool merged = true; merged;) {
    merged = false;
    for (unsigned i = 0; i < pieces.size() && !merged; ++i)
      for (unsigned j = i + 1; j < pieces.size() && !merged; ++j)
        if (joins(pieces[i].live, pieces[j].live)) {
          pieces[i] = mergeTwo(pieces[i], pieces[j]);
          pieces.erase(pieces.begin() + j);
          merged = true;
        }
  }
  while (pieces.size() > maxPieces) {
    pieces[0] = mergeTwo(pieces[0], pieces[1]);
    pieces.erase(pieces.begin() + 1);
  }
  return pieces;
}

BlockSets MaskAnalysis::merge(const BlockUnion &pieces) {
  if (pieces.empty())
    return BlockSets{IterationSet{{}, {}, true}, IterationSet{{}, {}, true}};
  BlockSets all = pieces.front();
  for (const BlockSets &piece : llvm::drop_begin(pieces))
    all = BlockSets{unionWithin(all.visible, piece.visible),
                    hull(all.live, piece.live)};
  return all;
}

/// lhs - rhs >= k (or <= k) holds for a whole block iff it holds at the
/// corner where lhs - rhs is smallest (largest), and fails for a whole block
/// iff it fails at the other corner; both corners' values are d * n + g.
/// With the induction variable under a division on one side, the corners
/// are the same (g's trends do not depend on n) and the side is inverted
/// at each (solveAtLeast).
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
  divisors.clear();
  Context ctx{loop, loopWrites, divisors};
  FailureOr<Trend> lhs = trendOf(cmp.getLhs(), ctx);
  FailureOr<Trend> rhs = trendOf(cmp.getRhs(), ctx);
  if (failed(lhs) || failed(rhs))
    return failure();
  bool nonlinear = false;
  FailureOr<Trend> t = sum(lhs, rhs, -1, &nonlinear);
  if (failed(t) && nonlinear)
    return stopAt(cmp, "a comparison whose two sides both depend on the "
                       "loop's induction variable, one through a division");
  if (failed(t))
    return stopAt(cmp, "a comparison of sides that grow in opposite "
                       "directions along one dim");
  auto shape = dyn_cast<ShapedType>(cmp.getLhs().getType());
  auto cornerAt = [&](bool max) {
    SmallVector<int64_t> index;
    if (shape)
      index = corner(t->dirs, shape, max);
    return index;
  };
  if (t->nonlinear) {
    // lhs - rhs >= k at a corner is P >= R + k (P the side with n) or
    // P <= R - k (P on the right); <= k likewise.
    bool onLeft = lhs->n != 0;
    Value p = onLeft ? cmp.getLhs() : cmp.getRhs();
    Value r = onLeft ? cmp.getRhs() : cmp.getLhs();
    bool pAtLeast = atLeast == onLeft;
    auto solve = [&](bool max) -> FailureOr<IterationSet> {
      SmallVector<int64_t> index = cornerAt(max);
      Value other = evaluate(r, index);
      Value bound = onLeft ? arith::AddIOp::create(builder, loop.getLoc(),
                                                   other, constant(k))
                                 .getResult()
                           : arith::SubIOp::create(builder, loop.getLoc(),
                                                   other, constant(k))
                                 .getResult();
      return pAtLeast ? solveAtLeast(p, index, bound)
                      : solveAtMost(p, index, bound);
    };
    // Visible where the condition holds at the corner least in its favour.
    FailureOr<IterationSet> visible = solve(!atLeast);
    FailureOr<IterationSet> live = solve(atLeast);
    if (failed(visible) || failed(live))
      return failure();
    return guardDivisors(BlockSets{*visible, *live});
  }
  auto at = [&](bool max) {
    SmallVector<int64_t> index = cornerAt(max);
    Value g = arith::SubIOp::create(builder, loop.getLoc(),
                                    evaluate(cmp.getLhs(), index),
                                    evaluate(cmp.getRhs(), index));
    return arith::SubIOp::create(builder, loop.getLoc(), g, constant(k))
        .getResult();
  };
  // d*n + g - k >= 0, or k - g - d*n >= 0.
  if (atLeast)
    return guardDivisors(
        BlockSets{halfLine(t->n, at(false)), halfLine(t->n, at(true))});
  auto negate = [&](Value v) {
    return arith::SubIOp::create(builder, loop.getLoc(), constant(0), v)
        .getResult();
  };
  return guardDivisors(BlockSets{halfLine(-t->n, negate(at(true))),
                                 halfLine(-t->n, negate(at(false)))});
}

/// Whether `v` depends on the loop's induction variable.
static bool dependsOnInduction(Value v, scf::ForOp loop, int depth = 0) {
  if (v == loop.getInductionVar())
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !definedIn(loop, v) || depth > 64)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOnInduction(operand, loop, depth + 1);
  });
}

/// {n : v(n) at `index` >= t}, v monotone in n (its trend is nonlinear or
/// affine): each op is inverted in turn, down to the induction variable.
FailureOr<IterationSet> MaskAnalysis::solveAtLeast(Value v,
                                                   ArrayRef<int64_t> index,
                                                   Value t) {
  Location loc = loop.getLoc();
  if (v == loop.getInductionVar())
    return IterationSet{t, {}};
  Operation *def = v.getDefiningOp();
  auto stopHere = [&]() {
    return stopAt(v, "an op the inversion of a division does not read "
                     "through");
  };
  if (!def)
    return stopHere();
  auto invert = [&](MonotoneMap map, Value x, Value w) {
    return solveAtLeast(x, index, leastAtLeast(builder, loc, map, t, w));
  };
  return TypeSwitch<Operation *, FailureOr<IterationSet>>(def)
      .Case([&](SplatOp splat) {
        return solveAtLeast(splat.getValue(), {}, t);
      })
      .Case([&](ExpandDimsOp expand) {
        return solveAtLeast(expand.getInput(), indexBeforeExpand(expand, index), t);
      })
      .Case([&](BroadcastOp broadcast) {
        return solveAtLeast(broadcast.getInput(),
                    indexBeforeBroadcast(broadcast, index), t);
      })
      .Case([&](arith::AddIOp add) -> FailureOr<IterationSet> {
        bool left = dependsOnInduction(add.getLhs(), loop);
        Value other = evaluate(left ? add.getRhs() : add.getLhs(), index);
        return solveAtLeast(left ? add.getLhs() : add.getRhs(), index,
                            arith::SubIOp::create(builder, loc, t, other));
      })
      .Case([&](arith::SubIOp sub) -> FailureOr<IterationSet> {
        if (dependsOnInduction(sub.getLhs(), loop))
          return solveAtLeast(
              sub.getLhs(), index,
              arith::AddIOp::create(builder, loc, t,
                                    evaluate(sub.getRhs(), index)));
        // a - x >= t  <=>  x <= a - t.
        return solveAtMost(
            sub.getRhs(), index,
            arith::SubIOp::create(builder, loc, evaluate(sub.getLhs(), index),
                                  t));
      })
      .Case([&](arith::MulIOp mul) -> FailureOr<IterationSet> {
        bool left = !constantInt(mul.getLhs());
        std::optional<int64_t> factor =
            constantInt(left ? mul.getRhs() : mul.getLhs());
        if (!factor || *factor == 0)
          return stopHere();
        int64_t c = *factor;
        Value x = left ? mul.getLhs() : mul.getRhs();
        if (c > 0)
          return invert(MonotoneMap::Mul, x, constant(c));
        // x * c >= t  <=>  x * -c <= -t.
        Value minusT = arith::SubIOp::create(builder, loc, constant(0), t);
        return solveAtMost(
            x, index,
            arith::SubIOp::create(
                builder, loc,
                leastAtLeast(builder, loc, MonotoneMap::Mul,
                             arith::AddIOp::create(builder, loc, minusT,
                                                   constant(1)),
                             constant(-c)),
                constant(1)));
      })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
          [&](Operation *op) -> FailureOr<IterationSet> {
            MonotoneMap map = isa<arith::DivSIOp>(op) ? MonotoneMap::DivSI
                              : isa<arith::FloorDivSIOp>(op)
                                  ? MonotoneMap::FloorDivSI
                                  : MonotoneMap::CeilDivSI;
            Value w = positiveDivisor(evaluate(op->getOperand(1), index));
            return invert(map, op->getOperand(0), w);
          })
      .Case([&](arith::SelectOp select) -> FailureOr<IterationSet> {
        std::optional<std::pair<Value, int64_t>> floor =
            matchFloorDivision(select);
        if (!floor)
          return stopHere();
        return invert(MonotoneMap::FloorDivSI, floor->first,
                      constant(floor->second));
      })
      .Default([&](Operation *) { return stopHere(); });
}

/// {n : v(n) <= t} = the complement of {n : v(n) >= t + 1}.
FailureOr<IterationSet> MaskAnalysis::solveAtMost(Value v,
                                                  ArrayRef<int64_t> index,
                                                  Value t) {
  Value next = arith::AddIOp::create(builder, loop.getLoc(), t, constant(1));
  FailureOr<IterationSet> above = solveAtLeast(v, index, next);
  if (failed(above))
    return failure();
  if (above->lower)
    return IterationSet{{}, above->lower};
  return IterationSet{above->upper, {}};
}

/// The sets assumed every runtime divisor positive: where one is not, no
/// block is known visible and every block may be live.
BlockSets MaskAnalysis::guardDivisors(BlockSets sets) {
  if (divisors.empty())
    return sets;
  Location loc = loop.getLoc();
  Value positive;
  for (Value w : divisors) {
    Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                                     evaluate(w, {}), constant(0));
    positive =
        positive ? arith::AndIOp::create(builder, loc, positive, ok) : ok;
  }
  auto choose = [&](Value bound, Value otherwise) -> Value {
    if (!bound)
      return bound;
    return arith::SelectOp::create(builder, loc, positive, bound, otherwise);
  };
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  if (!sets.visible.empty) {
    sets.visible.lower = sets.visible.lower
                             ? choose(sets.visible.lower, ub)
                             : Value();
    sets.visible.upper = choose(sets.visible.upper, lb);
    // A visible set without bounds: bound it to nothing when not positive.
    if (!sets.visible.lower && !sets.visible.upper)
      sets.visible.upper = choose(ub, lb);
  }
  if (!sets.live.empty) {
    sets.live.lower = choose(sets.live.lower, lb);
    sets.live.upper = choose(sets.live.upper, ub);
  }
  return sets;
}

/// `w` where it is positive, 1 elsewhere: a divisor the bounds may divide
/// by before the loop (guardDivisors discards what they give otherwise).
Value MaskAnalysis::positiveDivisor(Value w) {
  if (std::optional<int64_t> c = constantInt(w); c && *c > 0)
    return w;
  Location loc = loop.getLoc();
  Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt, w,
                                   constant(0));
  return arith::SelectOp::create(builder, loc, ok, w, constant(1));
}

/// A clone before the loop of `v`, a loop-invariant scalar computed in it.
Value MaskAnalysis::hoistInvariant(Value v) {
  if (!definedIn(loop, v))
    return v;
  if (Value done = hoisted.lookup(v))
    return done;
  Operation *def = v.getDefiningOp();
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, hoistInvariant(operand));
  Operation *copy = builder.clone(*def, mapping);
  Value result = copy->getResult(cast<OpResult>(v).getResultNumber());
  hoisted[v] = result;
  return result;
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
        return evaluate(expand.getInput(), indexBeforeExpand(expand, index));
      })
      .Case([&](BroadcastOp broadcast) {
        return evaluate(broadcast.getInput(),
                    indexBeforeBroadcast(broadcast, index));
      })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::MinSIOp,
            arith::MaxSIOp>([&](auto binary) -> Value {
        using OpTy = decltype(binary);
        return OpTy::create(builder, loc, evaluate(binary.getLhs(), index),
                            evaluate(binary.getRhs(), index));
      })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
          [&](auto binary) -> Value {
            using OpTy = decltype(binary);
            return OpTy::create(
                builder, loc, evaluate(binary.getLhs(), index),
                positiveDivisor(evaluate(binary.getRhs(), index)));
          })
      .Case([&](arith::SelectOp select) -> Value {
        std::optional<std::pair<Value, int64_t>> floor =
            matchFloorDivision(select);
        if (!floor)
          return hoistInvariant(select.getResult());
        return arith::FloorDivSIOp::create(
            builder, loc, evaluate(floor->first, index),
            constant(floor->second));
      })
      .Default([&](Operation *op) -> Value {
        // trendOf accepts other ops only as loop-invariant scalars.
        return hoistInvariant(op->getResult(0));
      });
}

} // namespace flash

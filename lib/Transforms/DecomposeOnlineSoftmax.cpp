//===- DecomposeOnlineSoftmax.cpp - expand tile.online_softmax ------------===//
//
// Spells out the online-softmax update documented on tile.online_softmax in
// primitive tile ops, so that later stages only lower reductions, element-wise
// math and mma. The interpreter runs both forms; they must agree.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace flash {
#define GEN_PASS_DEF_TILEDECOMPOSEONLINESOFTMAX
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// Builds the element-wise ops of one decomposition at one location.
class SoftmaxBuilder {
public:
  SoftmaxBuilder(PatternRewriter &rewriter, Location loc)
      : rewriter(rewriter), loc(loc) {}

  Value splat(RankedTensorType type, double value) {
    auto attr = DenseElementsAttr::get(
        type, rewriter.getFloatAttr(type.getElementType(), value));
    return arith::ConstantOp::create(rewriter, loc, attr);
  }

  Value splat(RankedTensorType type, Value scalar) {
    return SplatOp::create(rewriter, loc, type, scalar);
  }

  /// Repeats a per-row vector (M) across the columns of `type` (M x N).
  Value rowBroadcast(Value rows, RankedTensorType type) {
    auto vector = cast<RankedTensorType>(rows.getType());
    auto column = RankedTensorType::get({vector.getDimSize(0), 1},
                                        vector.getElementType());
    Value expanded = ExpandDimsOp::create(rewriter, loc, column, rows,
                                          rewriter.getI64IntegerAttr(1));
    return BroadcastOp::create(rewriter, loc, type, expanded);
  }

  Value reduceRows(ReduceKind kind, Value tile, bool uniform = false) {
    auto type = cast<RankedTensorType>(tile.getType());
    auto rowType =
        RankedTensorType::get({type.getDimSize(0)}, type.getElementType());
    return ReduceOp::create(
        rewriter, loc, rowType, ReduceKindAttr::get(rewriter.getContext(), kind),
        tile, rewriter.getI64IntegerAttr(1), /*lane_partial=*/UnitAttr(),
        uniform ? rewriter.getUnitAttr() : UnitAttr());
  }

  /// `base + sum_j probs[i, j]` on the tensor cores: probs times an N x 8
  /// tile of ones, accumulated onto `base` repeated over the 8 columns (not
  /// onto 0 and then added: that costs fa2 at d128 on sm_90 16 bytes of
  /// spills). All 8 columns hold the row's sum, so every thread reads it
  /// from its own registers (a `uniform` max), without shuffles.
  Value rowSumByMma(Value probs, Value base) {
    auto probsType = cast<RankedTensorType>(probs.getType());
    Type f32 = rewriter.getF32Type();
    auto ones = RankedTensorType::get({probsType.getDimSize(1), 8},
                                      probsType.getElementType());
    auto sums = RankedTensorType::get({probsType.getDimSize(0), 8}, f32);
    Value product = MmaOp::create(rewriter, loc, sums, probs, splat(ones, 1.0),
                                  rowBroadcast(base, sums));
    return reduceRows(ReduceKind::Max, product, /*uniform=*/true);
  }

  /// e^x, or 2^x with base2, approximate (`afn`: PTX ex2.approx.ftz, one
  /// MUFU instruction without the subnormal range fix-up): every exponent
  /// here is at most 0, and a weight below 2^-126 of the row's largest is
  /// negligible.
  Value exp(Value x, bool base2) {
    if (base2)
      return math::Exp2Op::create(rewriter, loc, x, arith::FastMathFlags::afn);
    return math::ExpOp::create(rewriter, loc, x);
  }

  /// `numerator / denominator`, or 0 where the denominator is 0: a row that
  /// saw no key has sum 0 and must produce 0, not NaN.
  Value safeDivide(Value numerator, Value denominator) {
    auto type = cast<RankedTensorType>(numerator.getType());
    Value zero = splat(type, 0.0);
    Value isZero = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OEQ, denominator, zero);
    Value quotient = arith::DivFOp::create(rewriter, loc, numerator,
                                           denominator);
    return arith::SelectOp::create(rewriter, loc, isZero, zero, quotient);
  }

  Value add(Value a, Value b) { return arith::AddFOp::create(rewriter, loc, a, b); }
  Value sub(Value a, Value b) { return arith::SubFOp::create(rewriter, loc, a, b); }
  Value mul(Value a, Value b) { return arith::MulFOp::create(rewriter, loc, a, b); }

  PatternRewriter &rewriter;
  Location loc;
};

/// Whether `scores` hold no mask: MMA results, scaled by a scalar or
/// soft-capped (times finite constants, tanh), never selected or loaded, so
/// finite wherever Q and K are. Every row of such a block then has a finite
/// max, and the guard against rows without a key is dead (tile-split-masked-
/// loops leaves the blocks every row sees whole in this form: fa2's primary
/// loop saves a compare and a select per row and iteration).
bool unmaskedScores(Value scores) {
  Operation *def = scores.getDefiningOp();
  if (isa_and_present<MmaOp>(def))
    return true;
  if (isa_and_present<math::TanhOp, arith::NegFOp>(def))
    return unmaskedScores(def->getOperand(0));
  if (!isa_and_present<arith::MulFOp, arith::AddFOp, arith::SubFOp>(def))
    return false;
  bool scaled = isa<arith::MulFOp>(def);
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    APFloat constant(0.0);
    if (matchPattern(operand, m_ConstantFloat(&constant)))
      return constant.isFinite();
    if (scaled && operand.getDefiningOp<SplatOp>())
      return true;
    return unmaskedScores(operand);
  });
}

/// Score registers per thread from which the guard of unmasked scores is
/// left out (see guardIsDead).
constexpr int64_t kGuardFreeScoreRegisters = 128;

/// Whether `op` leaves out the guard against rows without a key: its scores
/// hold no mask, take at least 128 registers per thread and at least twice
/// the accumulator's. Only there was leaving it out measured to help: fa2
/// at HEAD_DIM 64, 128 x 128 (128 score and 64 accumulator registers per
/// thread), spills 100 bytes on sm_80 without it once its row sums are
/// deferred, none with it. Elsewhere ptxas 13 spilled 4-8 bytes more
/// without it (flash_attn at HEAD_DIM 80 on sm_90, fa2 at HEAD_DIM 128
/// causal on sm_80) or chose other register counts (docs/perf.md,
/// "The -inf guard").
bool guardIsDead(OnlineSoftmaxOp op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto warps = func ? func->getAttrOfType<IntegerAttr>(kNumWarpsAttrName)
                    : IntegerAttr();
  if (!warps || !unmaskedScores(op.getScores()))
    return false;
  int64_t scores = op.getScores().getType().getNumElements();
  int64_t threads = warps.getInt() * layout::kWarpSize;
  return scores >= kGuardFreeScoreRegisters * threads &&
         scores >= 2 * op.getAcc().getType().getNumElements();
}

struct DecomposeOnlineSoftmax : OpRewritePattern<OnlineSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    SoftmaxBuilder b(rewriter, op.getLoc());
    auto scoresType = op.getScores().getType();
    auto rowType = op.getRunningMax().getType();
    auto accType = op.getAcc().getType();
    auto valuesType = op.getValues().getType();
    bool base2 = op.getExp2();

    // With a scale c > 0, max_j(c * x_j) = c * max_j(x_j): take the row max
    // of the raw scores and scale the M row maxima, not the M x N scores.
    Value scale = op.getScale();
    Value blockMax = b.reduceRows(ReduceKind::Max, op.getScores());
    if (scale)
      blockMax = b.mul(b.splat(rowType, scale), blockMax);
    Value newMax = arith::MaximumFOp::create(rewriter, op.getLoc(),
                                             op.getRunningMax(), blockMax);
    // A row whose every score so far is -inf keeps max -inf; exponentiate
    // against 0 there so that exp(-inf - -inf) never produces NaN. (A max
    // with the lowest finite float saves a select per row, but makes ptxas
    // 13 spill fa2 at HEAD_DIM 64 on sm_90.)
    Value base = newMax;
    if (!guardIsDead(op)) {
      Value negInf =
          b.splat(rowType, -std::numeric_limits<double>::infinity());
      Value noKeyYet = arith::CmpFOp::create(
          rewriter, op.getLoc(), arith::CmpFPredicate::OEQ, newMax, negInf);
      base = arith::SelectOp::create(rewriter, op.getLoc(), noKeyYet,
                                     b.splat(rowType, 0.0), newMax);
    }
    // The rescale factor alpha = 2^(m_old - m_new) <= 1 flushes too: below
    // 2^-126 it scales what is negligible beside the new block.
    Value alpha = b.exp(b.sub(op.getRunningMax(), base), base2);
    Value exponent;
    if (scale) {
      // One FMA per score: c * x - base. A masked x = -inf still gives -inf
      // (c > 0, base finite), so its probability is 0.
      Value negBase = arith::NegFOp::create(rewriter, op.getLoc(), base);
      exponent = math::FmaOp::create(rewriter, op.getLoc(), op.getScores(),
                                     b.splat(scoresType, scale),
                                     b.rowBroadcast(negBase, scoresType));
    } else {
      exponent = b.sub(op.getScores(), b.rowBroadcast(base, scoresType));
    }
    Value probs = b.exp(exponent, base2);
    Value blockSum;
    if (!op.getSumByMma())
      blockSum = b.reduceRows(ReduceKind::Sum, probs);

    auto probsOperandType = RankedTensorType::get(
        scoresType.getShape(), valuesType.getElementType());
    Value probsOperand =
        arith::TruncFOp::create(rewriter, op.getLoc(), probsOperandType, probs);

    Value newSum, newAcc;
    if (op.getNormalization() == Normalization::Deferred) {
      // alpha * l + rowsum(p) as one FMA per row.
      if (!op.getSumByMma())
        newSum = math::FmaOp::create(rewriter, op.getLoc(), alpha,
                                     op.getRunningSum(), blockSum);
      Value rescaled = b.mul(b.rowBroadcast(alpha, accType), op.getAcc());
      newAcc = MmaOp::create(rewriter, op.getLoc(), accType, probsOperand,
                             op.getValues(), rescaled);
      // On the tensor cores after P @ V: 6 fewer instructions per iteration
      // than before it in fa2 at d128 on sm_90 (docs/perf.md, "Row sum on
      // the tensor cores").
      if (op.getSumByMma())
        newSum = b.rowSumByMma(probsOperand, b.mul(alpha, op.getRunningSum()));
    } else {
      // acc holds the normalized output: undo the old normalization (times
      // l), rescale, add this block, divide by the new sum.
      Value oldWeight = b.mul(alpha, op.getRunningSum());
      newSum = op.getSumByMma() ? b.rowSumByMma(probsOperand, oldWeight)
                                : b.add(oldWeight, blockSum);
      Value rescaled = b.mul(b.rowBroadcast(oldWeight, accType), op.getAcc());
      Value unnormalized = MmaOp::create(rewriter, op.getLoc(), accType,
                                         probsOperand, op.getValues(),
                                         rescaled);
      newAcc = b.safeDivide(unnormalized, b.rowBroadcast(newSum, accType));
    }
    rewriter.replaceOp(op, {newMax, newSum, newAcc});
    return success();
  }
};

struct DecomposeOnlineSoftmaxFinalize
    : OpRewritePattern<OnlineSoftmaxFinalizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineSoftmaxFinalizeOp op,
                                PatternRewriter &rewriter) const override {
    SoftmaxBuilder b(rewriter, op.getLoc());
    rewriter.replaceOp(
        op, b.safeDivide(op.getAcc(),
                         b.rowBroadcast(op.getRunningSum(), op.getType())));
    return success();
  }
};

struct TileDecomposeOnlineSoftmaxPass
    : flash::impl::TileDecomposeOnlineSoftmaxBase<
          TileDecomposeOnlineSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    flash::populateDecomposeOnlineSoftmaxPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void flash::populateDecomposeOnlineSoftmaxPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeOnlineSoftmax, DecomposeOnlineSoftmaxFinalize>(
      patterns.getContext());
}

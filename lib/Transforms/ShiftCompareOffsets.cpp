//===- ShiftCompareOffsets.cpp - a scalar offset to the cheaper side ------===//
//
// A mask compares the key block's columns, `start_n + iota`, with per-row
// limits. Written that way every thread adds `start_n` to each of its
// columns in every iteration; `iota <= limit - start_n` subtracts it once per
// row instead, and the columns are loop-invariant. Layout level, because
// which side is cheaper is a question of registers per thread.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace flash {
#define GEN_PASS_DEF_TILESHIFTCOMPAREOFFSETS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {

/// Registers per thread of `value` (a tile with a layout).
std::optional<int64_t> registersOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  auto layout = type ? dyn_cast_if_present<LayoutAttrInterface>(
                           type.getEncoding())
                     : nullptr;
  if (!layout)
    return std::nullopt;
  return layout.getNumRegisters(type.getShape());
}

/// `value` read as `broadcast/expand_dims(... (x + splat(offset)))`: the
/// add, with the shape ops above it, outermost first.
struct OffsetChain {
  arith::AddIOp add;
  Value x, offset;
  SmallVector<Operation *> shapeOps;
};

std::optional<OffsetChain> matchOffsetChain(Value value) {
  OffsetChain chain;
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<BroadcastOp, ExpandDimsOp>(op))
      break;
    chain.shapeOps.push_back(op);
    value = op->getOperand(0);
  }
  chain.add = value.getDefiningOp<arith::AddIOp>();
  if (!chain.add)
    return std::nullopt;
  for (auto [mine, other] : {std::pair{chain.add.getLhs(), chain.add.getRhs()},
                             std::pair{chain.add.getRhs(), chain.add.getLhs()}})
    if (auto splat = mine.getDefiningOp<SplatOp>()) {
      chain.offset = splat.getValue();
      chain.x = other;
      return chain;
    }
  return std::nullopt;
}

/// `x + s <pred> y` as `x <pred> y - s` where `y`, under its broadcasts, is
/// a tile with fewer registers than `x + s`: the subtraction is cheaper than
/// the addition. Index arithmetic is assumed not to overflow (as in
/// tile-split-masked-loops), so the two compare alike.
struct ShiftCompareOffset : OpRewritePattern<arith::CmpIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::CmpIOp cmp,
                                PatternRewriter &rewriter) const override {
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    if (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge ||
        !isa<RankedTensorType>(cmp.getLhs().getType()))
      return failure();
    for (unsigned side = 0; side < 2; ++side) {
      std::optional<OffsetChain> chain =
          matchOffsetChain(cmp->getOperand(side));
      if (!chain)
        continue;
      Value other = cmp->getOperand(1 - side);
      SmallVector<BroadcastOp> broadcasts;
      while (auto broadcast = other.getDefiningOp<BroadcastOp>()) {
        broadcasts.push_back(broadcast);
        other = broadcast.getInput();
      }
      // A scalar limit (the key-length tail alone) is left as it is: the
      // columns would become loop-invariant registers held across the loop
      // for one addition each, and at BLOCK_N 128 ptxas then spills more.
      if (other.getDefiningOp<SplatOp>())
        continue;
      std::optional<int64_t> limitRegs = registersOf(other);
      std::optional<int64_t> addRegs = registersOf(chain->add.getResult());
      if (!limitRegs || !addRegs || *limitRegs >= *addRegs)
        continue;
      rewriteCompare(rewriter, cmp, side, *chain, other, broadcasts);
      return success();
    }
    return failure();
  }

  static void rewriteCompare(PatternRewriter &rewriter, arith::CmpIOp cmp,
                             unsigned side, const OffsetChain &chain,
                             Value limit, ArrayRef<BroadcastOp> broadcasts) {
    Location loc = cmp.getLoc();
    Value shifted = arith::SubIOp::create(
        rewriter, loc, limit,
        SplatOp::create(rewriter, loc, limit.getType(), chain.offset));
    for (BroadcastOp broadcast : llvm::reverse(broadcasts))
      shifted =
          BroadcastOp::create(rewriter, loc, broadcast.getType(), shifted);
    Value subject = chain.x;
    for (Operation *op : llvm::reverse(chain.shapeOps)) {
      Operation *clone = rewriter.clone(*op);
      clone->setOperand(0, subject);
      subject = clone->getResult(0);
    }
    Value lhs = side == 0 ? subject : shifted;
    Value rhs = side == 0 ? shifted : subject;
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(cmp, cmp.getPredicate(), lhs,
                                               rhs);
  }
};

struct TileShiftCompareOffsetsPass
    : flash::impl::TileShiftCompareOffsetsBase<TileShiftCompareOffsetsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    flash::populateShiftCompareOffsetsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void flash::populateShiftCompareOffsetsPatterns(RewritePatternSet &patterns) {
  patterns.add<ShiftCompareOffset>(patterns.getContext());
}

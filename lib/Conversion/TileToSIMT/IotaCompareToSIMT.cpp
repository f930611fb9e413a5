//===- IotaCompareToSIMT.cpp - index comparisons against immediates ------===//
//
// A mask compares the column indices of the scores (tile.iota, expanded and
// broadcast) with per-row limits. Lowered like any elementwise op, every
// thread keeps each of its columns in a register (16 at BLOCK_N 64) for the
// whole key loop. In the usual layouts a register's index is the thread's
// part plus a constant of the register, so the comparison
// `part + c_r <= limit_r` is lowered as `c_r <= limit_r - part`: an
// immediate operand per register, and one subtraction per distinct limit
// (the limits are broadcast rows, which CSE merges).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "Utility.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

/// The dim of `value` along which it counts, when it is tile.iota under
/// expand_dims and broadcast ops.
std::optional<unsigned> iotaDim(Value value) {
  SmallVector<ExpandDimsOp> expands;
  while (!value.getDefiningOp<IotaOp>()) {
    Operation *op = value.getDefiningOp();
    if (auto expand = dyn_cast_if_present<ExpandDimsOp>(op))
      expands.push_back(expand);
    else if (!isa_and_present<BroadcastOp>(op))
      return std::nullopt;
    value = op->getOperand(0);
  }
  unsigned dim = 0;
  for (ExpandDimsOp expand : llvm::reverse(expands))
    if (expand.getAxis() <= dim)
      ++dim;
  return dim;
}

/// Each register's index along `dim` minus register 0's, when that
/// difference is the same in every thread.
std::optional<SmallVector<int32_t>>
registerOffsets(const TileInfo &tile, unsigned dim, int64_t numThreads) {
  SmallVector<int32_t> offsets;
  for (int64_t r = 0; r < tile.regs; ++r)
    offsets.push_back(tile.coord(0, r)[dim] - tile.coord(0, 0)[dim]);
  for (int64_t t = 1; t < numThreads; ++t) {
    int64_t base = tile.coord(t, 0)[dim];
    for (int64_t r = 1; r < tile.regs; ++r)
      if (tile.coord(t, r)[dim] != base + offsets[r])
        return std::nullopt;
  }
  return offsets;
}

/// `arith.cmpi` of an iota tile with a broadcast or splat (few distinct
/// values per thread); ahead of the elementwise lowering (benefit 2).
struct IotaCompareLowering : OpConversionPattern<arith::CmpIOp> {
  IotaCompareLowering(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::CmpIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    using P = arith::CmpIPredicate;
    P pred = op.getPredicate();
    if (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge)
      return failure();
    auto tile = TileInfo::get(op.getLhs().getType());
    if (!tile)
      return failure();
    for (unsigned side = 0; side < 2; ++side) {
      std::optional<unsigned> dim = iotaDim(op->getOperand(side));
      Operation *other = op->getOperand(1 - side).getDefiningOp();
      if (!dim || !isa_and_present<BroadcastOp>(other))
        continue;
      auto offsets =
          registerOffsets(*tile, *dim, getNumWarps(op) * kWarp);
      if (!offsets)
        continue;
      Location loc = op.getLoc();
      ThreadIds ids = getThreadIds(rewriter, op);
      IndexBuilder ib{rewriter, loc};
      Value part = layoutCoord<IndexValue>(tile->layout, tile->shape,
                                           IndexValue(&ib, ids.warp),
                                           IndexValue(&ib, ids.lane), 0)[*dim]
                       .get();
      VectorType type = tile->vectorType();
      Value immediates = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(type, ArrayRef(*offsets)));
      // Index arithmetic is assumed not to overflow (as in the tile passes).
      Value shifted = arith::SubIOp::create(
          rewriter, loc, adaptor.getOperands()[1 - side],
          vector::BroadcastOp::create(rewriter, loc, type, part));
      Value lhs = side == 0 ? immediates : shifted;
      Value rhs = side == 0 ? shifted : immediates;
      rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, pred, lhs, rhs);
      return success();
    }
    return failure();
  }
};

} // namespace

void flash::simt::populateIotaCompareToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<IotaCompareLowering>(converter, patterns.getContext());
}

//===- ElementwiseOpToSIMT.cpp - ops that stay within each register -------===//
//
// Ops whose every register is computed from the same register of the
// operands, or from the thread's own coordinates: the arith and math ops
// (the same op on the register vectors), splats, splat constants, iota, and
// the scalars program_id, num_programs and dim.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "Utility.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

/// program_id and num_programs: the special register of their grid axis.
template <typename OpTy, typename XReg, typename YReg, typename ZReg>
struct GridRegisterLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Location loc = op.getLoc();
    Value v;
    switch (op.getAxis()) {
    case 0:
      v = XReg::create(rewriter, loc, i32);
      break;
    case 1:
      v = YReg::create(rewriter, loc, i32);
      break;
    default:
      v = ZReg::create(rewriter, loc, i32);
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};
using ProgramIdLowering =
    GridRegisterLowering<ProgramIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                         NVVM::BlockIdZOp>;
using NumProgramsLowering =
    GridRegisterLowering<NumProgramsOp, NVVM::GridDimXOp, NVVM::GridDimYOp,
                         NVVM::GridDimZOp>;

struct DimLowering : OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    IndexBuilder ib{rewriter, op.getLoc()};
    auto view = getGlobalView(op.getSource(), &ib);
    if (!view)
      return op.emitOpError("source is not a kernel tensor parameter");
    rewriter.replaceOp(op, view->dims[op.getIndex()].get());
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return op.emitOpError("only splat constants of tiles can be lowered, "
                            "in layout ")
             << describe(tile->layout);
    auto value = DenseElementsAttr::get(tile->vectorType(),
                                        dense.getSplatValue<Attribute>());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// arith/math ops on tiles: the same op on the register vectors.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op) || op->getNumRegions() != 0)
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    IRMapping mapping;
    mapping.map(op->getOperands(), operands);
    Operation *clone = rewriter.clone(*op, mapping);
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
    rewriter.replaceOp(op, clone->getResults());
    return success();
  }
};

struct SplatLowering : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, tile->vectorType(),
                                                     adaptor.getValue());
    return success();
  }
};

/// Each register holds its element's coordinate.
struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    Location loc = op.getLoc();
    ThreadIds ids = getThreadIds(rewriter, op);
    IndexBuilder ib{rewriter, loc};
    SmallVector<Value> elems;
    for (int64_t r = 0; r < tile->regs; ++r)
      elems.push_back(layoutCoord<IndexValue>(tile->layout, tile->shape,
                                              IndexValue(&ib, ids.warp),
                                              IndexValue(&ib, ids.lane), r)[0]
                          .get());
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, tile->vectorType(),
                                                        elems);
    return success();
  }
};

} // namespace

void flash::simt::populateElementwiseOpToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ProgramIdLowering, NumProgramsLowering, DimLowering,
               ConstantLowering, SplatLowering, IotaLowering,
               ElementwiseLowering>(converter, patterns.getContext());
}

//===- AssertOpToSIMT.cpp - device_assert ---------------------------------===//
//
// tile.device_assert becomes one cf.assert per thread on the AND of the
// condition registers it holds: a passing assert costs the ANDs and one
// predicated branch. The PTX emitter's gpu-to-nvvm lowers cf.assert to
// CUDA's __assertfail(message, file, line, function, 1); the emulator
// reports it with the thread.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace flash::tile;

namespace {

struct DeviceAssertLowering : OpConversionPattern<DeviceAssertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DeviceAssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cond = adaptor.getCondition();
    if (auto vec = dyn_cast<VectorType>(cond.getType())) {
      if (vec.getRank() != 1)
        return op.emitOpError("expects its condition as a 1-D register "
                              "vector, got ")
               << vec;
      Value all;
      for (int64_t r = 0; r < vec.getNumElements(); ++r) {
        Value reg = vector::ExtractOp::create(rewriter, loc, cond, r);
        all = all ? arith::AndIOp::create(rewriter, loc, all, reg) : reg;
      }
      cond = all;
    } else if (!cond.getType().isInteger(1)) {
      return op.emitOpError("condition of type ")
             << cond.getType() << " has no layout to lower";
    }
    cf::AssertOp::create(rewriter, loc, cond, op.getMessage());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flash::simt::populateAssertOpToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DeviceAssertLowering>(converter, patterns.getContext());
}

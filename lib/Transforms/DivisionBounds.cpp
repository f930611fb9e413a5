//===- DivisionBounds.cpp - inverses of monotone integer maps -------------===//
#include "flashc/Transforms/DivisionBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

Value flash::leastAtLeast(OpBuilder &builder, Location loc, MonotoneMap op,
                          Value t, Value w) {
  auto constant = [&](int64_t value) {
    return builder.createOrFold<arith::ConstantOp>(
        loc, IntegerAttr::get(t.getType(), value));
  };
  if (op == MonotoneMap::Mul)
    return builder.createOrFold<arith::CeilDivSIOp>(loc, t, w);
  Value product = builder.createOrFold<arith::MulIOp>(loc, t, w);
  if (op == MonotoneMap::FloorDivSI)
    return product;
  // t * w - (w - 1): the least x with x > (t - 1) * w.
  Value wLess = builder.createOrFold<arith::SubIOp>(loc, w, constant(1));
  Value above = builder.createOrFold<arith::SubIOp>(loc, product, wLess);
  if (op == MonotoneMap::CeilDivSI)
    return above;
  Value positive = builder.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::sgt, t, constant(0));
  return builder.createOrFold<arith::SelectOp>(loc, positive, product, above);
}

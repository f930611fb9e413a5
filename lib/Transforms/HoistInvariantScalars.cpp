//===- HoistInvariantScalars.cpp - loop-invariant scalars out of loops ----===//
//
// MLIR's LICM moves only speculatable ops, and an integer division or
// remainder by a runtime value is not one: the divisor may be zero (an error
// in the interpreter and the emulator) in a loop that runs no iteration. A
// staged loop whose copy offsets such a division computes (`kv_head = h / (H
// / H_KV)` in the key loop) cannot be pipelined: the prologue evaluates the
// offsets before the loop. Hoisted with its divisor replaced by
// `select(lb < ub, d, 1)`, the division computes what it did in every
// iteration, and nothing in a loop that runs none.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace flash {
#define GEN_PASS_DEF_TILEHOISTINVARIANTSCALARS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
/// An integer division or remainder whose only fault is its divisor (zero,
/// or -1 with the signed minimum, which a run of the loop computes as well).
bool isGuardableDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
}

/// A scalar op without effects or regions: what may leave the loop.
bool isHoistableScalar(Operation *op) {
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
      llvm::any_of(op->getResultTypes(),
                   [](Type type) { return isa<ShapedType>(type); }))
    return false;
  return isSpeculatable(op) || isGuardableDivision(op);
}

void hoistFrom(scf::ForOp loop) {
  Value nonEmpty; // lb < ub, built before the loop on first need
  auto guard = [&](Operation *op) {
    OpBuilder builder(loop);
    Location loc = loop.getLoc();
    if (!nonEmpty)
      nonEmpty = arith::CmpIOp::create(
          builder, loc,
          loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt,
          loop.getLowerBound(), loop.getUpperBound());
    Value divisor = op->getOperand(1);
    Value one = arith::ConstantOp::create(
        builder, loc, IntegerAttr::get(divisor.getType(), 1));
    op->setOperand(1, arith::SelectOp::create(builder, loc, nonEmpty, divisor,
                                              one));
  };
  moveLoopInvariantCode(
      {&loop.getRegion()},
      [&](Value value, Region *) { return loop.isDefinedOutsideOfLoop(value); },
      [&](Operation *op, Region *) { return isHoistableScalar(op); },
      [&](Operation *op, Region *) {
        if (!isSpeculatable(op))
          guard(op);
        op->moveBefore(loop);
      });
}

struct TileHoistInvariantScalars
    : flash::impl::TileHoistInvariantScalarsBase<TileHoistInvariantScalars> {
  void runOnOperation() override {
    // Inner loops first: what leaves one may then leave the loop around it.
    getOperation().walk([](scf::ForOp loop) { hoistFrom(loop); });
  }
};
} // namespace

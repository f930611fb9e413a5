//===- DivisionBounds.h - inverses of monotone integer maps -----*- C++ -*-===//
//
// The mask analysis turns a comparison of a quotient into one of its
// numerator: for w > 0 each of the maps below is non-decreasing in x, so
// {x : op(x, w) >= t} is a half-line {x : x >= least}. The language's `/`
// is arith.divsi, which truncates toward zero (docs/language.md, "Constant
// folding"), so the least numerator depends on the sign of t:
//
//   x * w          >= t  <=>  x >= ceil(t / w)
//   trunc(x / w)   >= t  <=>  x >= t * w            (t >= 1)
//                            x >= t * w - w + 1    (t <= 0: x > (t - 1) * w)
//   floor(x / w)   >= t  <=>  x >= t * w
//   ceil(x / w)    >= t  <=>  x >= t * w - w + 1
//
// The comparisons <=, < and > follow from these by complement
// (op(x, w) <= t  <=>  not op(x, w) >= t + 1). The bounds are built with
// createOrFold, so constant operands give a constant (what
// test/unit/DivisionBoundsTest.cpp checks against brute force).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_TRANSFORMS_DIVISIONBOUNDS_H
#define FLASHC_TRANSFORMS_DIVISIONBOUNDS_H

#include "mlir/IR/Builders.h"

namespace flash {

/// The integer maps x -> op(x, w) the analysis inverts.
enum class MonotoneMap { Mul, DivSI, FloorDivSI, CeilDivSI };

/// The least x with op(x, w) >= t, for w > 0 (t and w of one integer type).
mlir::Value leastAtLeast(mlir::OpBuilder &builder, mlir::Location loc,
                         MonotoneMap op, mlir::Value t, mlir::Value w);

} // namespace flash

#endif // FLASHC_TRANSFORMS_DIVISIONBOUNDS_H

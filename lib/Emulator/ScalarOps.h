//===- ScalarOps.h - The emulator's arith/math semantics --------*- C++ -*-===//
//
// The one seam between the emulator and the semantics of scalar arith/math
// ops. The rest of the emulator knows only what this header declares:
//   * classifyScalarOp(op): whether `op` is an arith/math op the emulator
//     runs lane by lane, as a ScalarOp (opcode and cmpi/cmpf predicate);
//   * evaluateScalarOp(op, cells, mask): that op over every cell of a value
//     (every thread, every vector element);
//   * the canonical cell forms (wrapInt, sval, uval, roundF), which the
//     executor also needs for loop counters, special registers, arguments
//     and constants.
// The op-name table, integer division and shift rules, IEEE min/max,
// float-to-int saturation and compare predicates are private to
// ScalarOps.cpp, so that a shared library of scalar semantics can take its
// place without edits elsewhere in the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_SCALAROPS_H
#define FLASH_LIB_EMULATOR_SCALAROPS_H

#include "ValueModel.h"

#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace flash::emu {

//===----------------------------------------------------------------------===//
// Canonical cells
//===----------------------------------------------------------------------===//

/// `v` wrapped to a w-bit integer, sign-extended (i1: 0 / 1).
inline int64_t wrapInt(int64_t v, unsigned w) {
  if (w >= 64)
    return v;
  if (w == 1)
    return v & 1;
  unsigned sh = 64 - w;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << sh) >> sh;
}
/// Signed value of a canonical cell of width w (i1: 0 / -1).
inline int64_t sval(int64_t v, unsigned w) { return w == 1 ? -(v & 1) : v; }
/// Unsigned value of a canonical cell of width w.
inline uint64_t uval(int64_t v, unsigned w) {
  if (w >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
}
/// `v` rounded to the float kind `s` (nearest even).
inline double roundF(SK s, double v) {
  switch (s) {
  case SK::F32:
    return static_cast<double>(static_cast<float>(v));
  case SK::F16:
    return roundToHalf(v);
  case SK::BF16:
    return roundToBF16(v);
  default:
    return v;
  }
}

//===----------------------------------------------------------------------===//
// Scalar ops
//===----------------------------------------------------------------------===//

enum class ScalarOpcode : uint8_t {
  // integer binary
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  CeilDivSI,
  CeilDivUI,
  FloorDivSI,
  AndI,
  OrI,
  XOrI,
  ShlI,
  ShrSI,
  ShrUI,
  MaxSI,
  MinSI,
  MaxUI,
  MinUI,
  // float binary
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  PowF,
  CopySign,
  // float unary
  NegF,
  AbsF,
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Sin,
  Cos,
  Erf,
  Ceil,
  Floor,
  Round,
  RoundEven,
  Trunc,
  ExpM1,
  // ternary
  Fma,
  Select,
  // integer unary
  AbsI,
  // compares
  CmpI,
  CmpF,
  // casts
  ExtSI,
  ExtUI,
  TruncI,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  FExt,
  FTrunc,
  IndexCast,
  IndexCastUI,
};

struct ScalarOp {
  ScalarOpcode opcode;
  uint8_t predicate = 0; ///< arith.cmpi / arith.cmpf: the predicate's value
};

/// The scalar op `op` is, or nullopt when the emulator does not run it as
/// one (then it is some other family's op, or unsupported).
std::optional<ScalarOp> classifyScalarOp(mlir::Operation *op);

/// The cells one scalar op reads and writes. Operands and result hold
/// `resultElems` cells per thread, element-major over `threads` threads (cell
/// i belongs to thread i % threads), except a select's condition, which may
/// hold one cell per thread for vector operands (`aElems` == 1).
struct ScalarCells {
  Cell *result;
  const Cell *a, *b, *c; ///< the operands in order; null past the arity
  uint32_t resultElems, aElems;
  SK resultKind;  ///< of the result
  SK operandKind; ///< of `a` (the source of casts and compares)
  int64_t threads;
};

/// Computes `op` for every cell of `x.result`. An integer division by zero is
/// an error only in an active thread (mask[t]): returns the first such
/// thread without computing anything, else -1.
int64_t evaluateScalarOp(ScalarOp op, const ScalarCells &x,
                         const uint8_t *mask);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_SCALAROPS_H

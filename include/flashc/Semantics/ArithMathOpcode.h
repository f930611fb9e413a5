//===- ArithMathOpcode.h - The arith/math ops both executors run -*- C++ -*-===//
//
// One opcode per arith / math op that the interpreter and the emulator both
// execute, and one classifier from mlir::Operation to it. An executor
// classifies each op once while it compiles a program, then evaluates it
// with flashc/Semantics/ScalarOps.h by a switch on the opcode. Because both
// executors take their op list from here, an op one of them runs is an op
// the other runs too.
//
// This header needs no MLIR headers; the classifier's definition does.
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_SEMANTICS_ARITHMATHOPCODE_H
#define FLASHC_SEMANTICS_ARITHMATHOPCODE_H

#include <cstdint>
#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace flash::sem {

enum class ArithMathOpcode : uint8_t {
  // IntBinary
  AddI, SubI, MulI, DivSI, DivUI, RemSI, RemUI, CeilDivSI, CeilDivUI,
  FloorDivSI, MaxSI, MinSI, MaxUI, MinUI, AndI, OrI, XOrI, ShLI, ShRSI, ShRUI,
  // IntMulExtended
  MulUIExtended,
  // IntUnary
  AbsI,
  // FloatBinary
  AddF, SubF, MulF, DivF, RemF, MaximumF, MinimumF, MaxNumF, MinNumF, PowF,
  CopySign,
  // FloatUnary
#define FLASH_FLOAT_UNARY(Opcode, MlirOp, Result, Builtin) Opcode,
#include "flashc/Semantics/FloatUnaryOps.def"
  // math.exp2 with fastmath<afn> (PTX ex2.approx.ftz.f32): 2^x with the
  // results below the smallest normal f32, 2^-126, flushed to +0.
  Exp2Ftz,
  // FloatTernary
  Fma,
  // CmpI, CmpF, Select
  CmpI, CmpF, Select,
  // Cast
  ExtSI, ExtUI, TruncI, IndexCast, IndexCastUI, SIToFP, UIToFP, FPToSI, FPToUI,
  ExtF, TruncF, Bitcast,
};

/// The operand and result shape of an opcode: what an executor's element
/// loop looks like for it.
enum class ArithMathKind : uint8_t {
  IntBinary,    ///< (iN, iN) -> iN; may report a zero divisor
  IntMulExtended, ///< (iN, iN) -> (iN, iN): the low and high words of a
                  ///< product (two results)
  IntUnary,     ///< iN -> iN
  FloatBinary,  ///< (f, f) -> f
  FloatUnary,   ///< f -> f
  FloatTernary, ///< (f, f, f) -> f
  CmpI,         ///< (iN, iN) -> i1 under an IntPredicate
  CmpF,         ///< (f, f) -> i1 under a FloatPredicate
  Select,       ///< (i1, T, T) -> T; executors move the value themselves
  Cast,         ///< one element type to another
};

constexpr ArithMathKind kindOf(ArithMathOpcode opc) {
  using O = ArithMathOpcode;
  if (opc <= O::ShRUI)
    return ArithMathKind::IntBinary;
  if (opc == O::MulUIExtended)
    return ArithMathKind::IntMulExtended;
  if (opc == O::AbsI)
    return ArithMathKind::IntUnary;
  if (opc <= O::CopySign)
    return ArithMathKind::FloatBinary;
  if (opc < O::Fma) // FloatUnary ends where FloatTernary begins
    return ArithMathKind::FloatUnary;
  switch (opc) {
  case O::Fma:
    return ArithMathKind::FloatTernary;
  case O::CmpI:
    return ArithMathKind::CmpI;
  case O::CmpF:
    return ArithMathKind::CmpF;
  case O::Select:
    return ArithMathKind::Select;
  default:
    return ArithMathKind::Cast;
  }
}

/// arith.cmpi predicates, numbered as mlir::arith::CmpIPredicate.
enum class IntPredicate : uint8_t {
  eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge,
};

/// arith.cmpf predicates, numbered as mlir::arith::CmpFPredicate.
enum class FloatPredicate : uint8_t {
  AlwaysFalse, OEQ, OGT, OGE, OLT, OLE, ONE, ORD,
  UEQ, UGT, UGE, ULT, ULE, UNE, UNO, AlwaysTrue,
};

/// A classified op: its opcode and, for compares, its predicate.
struct ArithMathOp {
  ArithMathOpcode opcode = ArithMathOpcode::AddI;
  IntPredicate intPredicate = IntPredicate::eq;                ///< CmpI only
  FloatPredicate floatPredicate = FloatPredicate::AlwaysFalse; ///< CmpF only

  ArithMathKind kind() const { return kindOf(opcode); }
};

/// The opcode of `op`, or nullopt when it is not an arith / math op both
/// executors support (arith.constant is not one: constants belong to each
/// executor's value model).
std::optional<ArithMathOp> classifyArithMath(mlir::Operation *op);

} // namespace flash::sem

#endif // FLASHC_SEMANTICS_ARITHMATHOPCODE_H

//===- ArithMathOpcode.cpp - Classifying arith / math ops -----------------===//

#include "flashc/Semantics/ArithMathOpcode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

namespace flash::sem {

using mlir::arith::CmpFPredicate;
using mlir::arith::CmpIPredicate;

template <typename A, typename B> constexpr bool sameNumber(A a, B b) {
  return static_cast<int>(a) == static_cast<int>(b);
}
// classifyArithMath carries the predicates over by number.
static_assert(sameNumber(IntPredicate::eq, CmpIPredicate::eq) &&
              sameNumber(IntPredicate::ne, CmpIPredicate::ne) &&
              sameNumber(IntPredicate::slt, CmpIPredicate::slt) &&
              sameNumber(IntPredicate::sle, CmpIPredicate::sle) &&
              sameNumber(IntPredicate::sgt, CmpIPredicate::sgt) &&
              sameNumber(IntPredicate::sge, CmpIPredicate::sge) &&
              sameNumber(IntPredicate::ult, CmpIPredicate::ult) &&
              sameNumber(IntPredicate::ule, CmpIPredicate::ule) &&
              sameNumber(IntPredicate::ugt, CmpIPredicate::ugt) &&
              sameNumber(IntPredicate::uge, CmpIPredicate::uge));
static_assert(sameNumber(FloatPredicate::AlwaysFalse,
                         CmpFPredicate::AlwaysFalse) &&
              sameNumber(FloatPredicate::OEQ, CmpFPredicate::OEQ) &&
              sameNumber(FloatPredicate::OGT, CmpFPredicate::OGT) &&
              sameNumber(FloatPredicate::OGE, CmpFPredicate::OGE) &&
              sameNumber(FloatPredicate::OLT, CmpFPredicate::OLT) &&
              sameNumber(FloatPredicate::OLE, CmpFPredicate::OLE) &&
              sameNumber(FloatPredicate::ONE, CmpFPredicate::ONE) &&
              sameNumber(FloatPredicate::ORD, CmpFPredicate::ORD) &&
              sameNumber(FloatPredicate::UEQ, CmpFPredicate::UEQ) &&
              sameNumber(FloatPredicate::UGT, CmpFPredicate::UGT) &&
              sameNumber(FloatPredicate::UGE, CmpFPredicate::UGE) &&
              sameNumber(FloatPredicate::ULT, CmpFPredicate::ULT) &&
              sameNumber(FloatPredicate::ULE, CmpFPredicate::ULE) &&
              sameNumber(FloatPredicate::UNE, CmpFPredicate::UNE) &&
              sameNumber(FloatPredicate::UNO, CmpFPredicate::UNO) &&
              sameNumber(FloatPredicate::AlwaysTrue,
                         CmpFPredicate::AlwaysTrue));

static std::optional<ArithMathOpcode> opcodeOf(mlir::Operation *op) {
  namespace arith = mlir::arith;
  namespace math = mlir::math;
  using O = ArithMathOpcode;
  using Result = std::optional<O>;
  auto is = [](O opc) {
    return [opc](mlir::Operation *) -> Result { return opc; };
  };
  return llvm::TypeSwitch<mlir::Operation *, Result>(op)
      .Case<arith::AddIOp>(is(O::AddI))
      .Case<arith::SubIOp>(is(O::SubI))
      .Case<arith::MulIOp>(is(O::MulI))
      .Case<arith::DivSIOp>(is(O::DivSI))
      .Case<arith::DivUIOp>(is(O::DivUI))
      .Case<arith::RemSIOp>(is(O::RemSI))
      .Case<arith::RemUIOp>(is(O::RemUI))
      .Case<arith::CeilDivSIOp>(is(O::CeilDivSI))
      .Case<arith::CeilDivUIOp>(is(O::CeilDivUI))
      .Case<arith::FloorDivSIOp>(is(O::FloorDivSI))
      .Case<arith::MaxSIOp>(is(O::MaxSI))
      .Case<arith::MinSIOp>(is(O::MinSI))
      .Case<arith::MaxUIOp>(is(O::MaxUI))
      .Case<arith::MinUIOp>(is(O::MinUI))
      .Case<arith::AndIOp>(is(O::AndI))
      .Case<arith::OrIOp>(is(O::OrI))
      .Case<arith::XOrIOp>(is(O::XOrI))
      .Case<arith::ShLIOp>(is(O::ShLI))
      .Case<arith::ShRSIOp>(is(O::ShRSI))
      .Case<arith::ShRUIOp>(is(O::ShRUI))
      .Case<arith::MulUIExtendedOp>(is(O::MulUIExtended))
      .Case<math::AbsIOp>(is(O::AbsI))
      .Case<arith::AddFOp>(is(O::AddF))
      .Case<arith::SubFOp>(is(O::SubF))
      .Case<arith::MulFOp>(is(O::MulF))
      .Case<arith::DivFOp>(is(O::DivF))
      .Case<arith::RemFOp>(is(O::RemF))
      .Case<arith::MaximumFOp>(is(O::MaximumF))
      .Case<arith::MinimumFOp>(is(O::MinimumF))
      .Case<arith::MaxNumFOp>(is(O::MaxNumF))
      .Case<arith::MinNumFOp>(is(O::MinNumF))
      .Case<math::PowFOp>(is(O::PowF))
      .Case<math::CopySignOp>(is(O::CopySign))
#define FLASH_FLOAT_UNARY(Opcode, MlirOp, Result, Builtin)                              \
  .Case<MlirOp>(is(O::Opcode))
#include "flashc/Semantics/FloatUnaryOps.def"
      .Case<math::FmaOp>(is(O::Fma))
      .Case<arith::CmpIOp>(is(O::CmpI))
      .Case<arith::CmpFOp>(is(O::CmpF))
      .Case<arith::SelectOp>(is(O::Select))
      .Case<arith::ExtSIOp>(is(O::ExtSI))
      .Case<arith::ExtUIOp>(is(O::ExtUI))
      .Case<arith::TruncIOp>(is(O::TruncI))
      .Case<arith::IndexCastOp>(is(O::IndexCast))
      .Case<arith::IndexCastUIOp>(is(O::IndexCastUI))
      .Case<arith::SIToFPOp>(is(O::SIToFP))
      .Case<arith::UIToFPOp>(is(O::UIToFP))
      .Case<arith::FPToSIOp>(is(O::FPToSI))
      .Case<arith::FPToUIOp>(is(O::FPToUI))
      .Case<arith::ExtFOp>(is(O::ExtF))
      .Case<arith::TruncFOp>(is(O::TruncF))
      .Case<arith::BitcastOp>(is(O::Bitcast))
      .Default([](mlir::Operation *) -> Result { return std::nullopt; });
}

std::optional<ArithMathOp> classifyArithMath(mlir::Operation *op) {
  std::optional<ArithMathOpcode> opcode = opcodeOf(op);
  if (!opcode)
    return std::nullopt;
  ArithMathOp result;
  result.opcode = *opcode;
  if (auto exp2 = mlir::dyn_cast<mlir::math::Exp2Op>(op))
    if (mlir::arith::bitEnumContainsAll(exp2.getFastmath(),
                                        mlir::arith::FastMathFlags::afn))
      result.opcode = ArithMathOpcode::Exp2Ftz;
  if (auto cmp = mlir::dyn_cast<mlir::arith::CmpIOp>(op))
    result.intPredicate = static_cast<IntPredicate>(cmp.getPredicate());
  if (auto cmp = mlir::dyn_cast<mlir::arith::CmpFOp>(op))
    result.floatPredicate = static_cast<FloatPredicate>(cmp.getPredicate());
  return result;
}

} // namespace flash::sem

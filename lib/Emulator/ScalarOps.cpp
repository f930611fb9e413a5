//===- ScalarOps.cpp - The emulator's arith/math semantics ----------------===//
//
// See ScalarOps.h. Each evaluator loops over all cells of one op with the
// opcode switch outside the loop: the emulator's hot path.
//
//===----------------------------------------------------------------------===//

#include "ScalarOps.h"

#include "flashc/Semantics/CmpF.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace flash::emu {

using Opc = ScalarOpcode;

std::optional<ScalarOp> classifyScalarOp(Operation *op) {
  auto opcode =
      llvm::StringSwitch<std::optional<Opc>>(op->getName().getStringRef())
          .Case("arith.addi", Opc::AddI)
          .Case("arith.subi", Opc::SubI)
          .Case("arith.muli", Opc::MulI)
          .Case("arith.divsi", Opc::DivSI)
          .Case("arith.divui", Opc::DivUI)
          .Case("arith.remsi", Opc::RemSI)
          .Case("arith.remui", Opc::RemUI)
          .Case("arith.ceildivsi", Opc::CeilDivSI)
          .Case("arith.ceildivui", Opc::CeilDivUI)
          .Case("arith.floordivsi", Opc::FloorDivSI)
          .Case("arith.andi", Opc::AndI)
          .Case("arith.ori", Opc::OrI)
          .Case("arith.xori", Opc::XOrI)
          .Case("arith.shli", Opc::ShlI)
          .Case("arith.shrsi", Opc::ShrSI)
          .Case("arith.shrui", Opc::ShrUI)
          .Case("arith.maxsi", Opc::MaxSI)
          .Case("arith.minsi", Opc::MinSI)
          .Case("arith.maxui", Opc::MaxUI)
          .Case("arith.minui", Opc::MinUI)
          .Case("arith.addf", Opc::AddF)
          .Case("arith.subf", Opc::SubF)
          .Case("arith.mulf", Opc::MulF)
          .Case("arith.divf", Opc::DivF)
          .Case("arith.remf", Opc::RemF)
          .Case("arith.maximumf", Opc::MaximumF)
          .Case("arith.minimumf", Opc::MinimumF)
          .Case("arith.maxnumf", Opc::MaxNumF)
          .Case("arith.minnumf", Opc::MinNumF)
          .Case("math.powf", Opc::PowF)
          .Case("math.copysign", Opc::CopySign)
          .Case("arith.negf", Opc::NegF)
          .Case("math.absf", Opc::AbsF)
          .Case("math.exp", Opc::Exp)
          .Case("math.exp2", Opc::Exp2)
          .Case("math.expm1", Opc::ExpM1)
          .Case("math.log", Opc::Log)
          .Case("math.log2", Opc::Log2)
          .Case("math.log1p", Opc::Log1p)
          .Case("math.sqrt", Opc::Sqrt)
          .Case("math.rsqrt", Opc::Rsqrt)
          .Case("math.tanh", Opc::Tanh)
          .Case("math.sin", Opc::Sin)
          .Case("math.cos", Opc::Cos)
          .Case("math.erf", Opc::Erf)
          .Case("math.ceil", Opc::Ceil)
          .Case("math.floor", Opc::Floor)
          .Case("math.round", Opc::Round)
          .Case("math.roundeven", Opc::RoundEven)
          .Case("math.trunc", Opc::Trunc)
          .Case("math.fma", Opc::Fma)
          .Case("arith.select", Opc::Select)
          .Case("math.absi", Opc::AbsI)
          .Case("arith.cmpi", Opc::CmpI)
          .Case("arith.cmpf", Opc::CmpF)
          .Case("arith.extsi", Opc::ExtSI)
          .Case("arith.extui", Opc::ExtUI)
          .Case("arith.trunci", Opc::TruncI)
          .Case("arith.sitofp", Opc::SIToFP)
          .Case("arith.uitofp", Opc::UIToFP)
          .Case("arith.fptosi", Opc::FPToSI)
          .Case("arith.fptoui", Opc::FPToUI)
          .Case("arith.extf", Opc::FExt)
          .Case("arith.truncf", Opc::FTrunc)
          .Case("arith.index_cast", Opc::IndexCast)
          .Case("arith.index_castui", Opc::IndexCastUI)
          .Default(std::nullopt);
  if (!opcode)
    return std::nullopt;
  ScalarOp s{*opcode};
  if (auto c = dyn_cast<arith::CmpIOp>(op))
    s.predicate = static_cast<uint8_t>(c.getPredicate());
  if (auto c = dyn_cast<arith::CmpFOp>(op))
    s.predicate = static_cast<uint8_t>(c.getPredicate());
  return s;
}

namespace {

inline double fmaxIEEE(double a, double b) { // maximumf: NaN wins, -0 < +0
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double fminIEEE(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
inline int64_t fpToInt(double v, unsigned w, bool isSigned) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (isSigned) {
    double lo = w >= 64 ? -9.2233720368547758e18 : -std::ldexp(1.0, w - 1);
    double hi = w >= 64 ? 9.2233720368547758e18 : std::ldexp(1.0, w - 1) - 1;
    if (v <= lo)
      return wrapInt(w >= 64 ? std::numeric_limits<int64_t>::min()
                             : -(int64_t(1) << (w - 1)),
                     w);
    if (v >= hi)
      return wrapInt(w >= 64 ? std::numeric_limits<int64_t>::max()
                             : (int64_t(1) << (w - 1)) - 1,
                     w);
    return wrapInt(static_cast<int64_t>(v), w);
  }
  if (v <= 0)
    return 0;
  double hi = std::ldexp(1.0, w);
  if (v >= hi)
    return wrapInt(-1, w);
  return wrapInt(static_cast<int64_t>(static_cast<uint64_t>(v)), w);
}

bool isDivision(Opc opc) {
  switch (opc) {
  case Opc::DivSI:
  case Opc::RemSI:
  case Opc::CeilDivSI:
  case Opc::FloorDivSI:
  case Opc::DivUI:
  case Opc::RemUI:
  case Opc::CeilDivUI:
    return true;
  default:
    return false;
  }
}

/// One integer division-like op of canonical w-bit cells (b != 0).
int64_t divide(Opc opc, int64_t ca, int64_t cb, unsigned w) {
  int64_t a = sval(ca, w), b = sval(cb, w);
  uint64_t ua = uval(ca, w), ub = uval(cb, w);
  bool ovf = b == -1 && a == std::numeric_limits<int64_t>::min();
  switch (opc) {
  case Opc::DivSI:
    return ovf ? a : a / b;
  case Opc::RemSI:
    return ovf ? 0 : a % b;
  case Opc::CeilDivSI: {
    if (ovf)
      return a;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0)))
      ++q;
    return q;
  }
  case Opc::FloorDivSI: {
    if (ovf)
      return a;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }
  case Opc::DivUI:
    return int64_t(ua / ub);
  case Opc::RemUI:
    return int64_t(ua % ub);
  case Opc::CeilDivUI:
    return int64_t(ua / ub + (ua % ub != 0));
  default:
    return 0;
  }
}

int64_t evalDivision(Opc opc, const ScalarCells &x, const uint8_t *mask) {
  const int64_t N = int64_t(x.resultElems) * x.threads;
  const unsigned w = intWidth(x.resultKind);
  for (int64_t i = 0; i < N; ++i)
    if (uval(x.b[i].i, w) == 0 && mask[i % x.threads])
      return i % x.threads;
  for (int64_t i = 0; i < N; ++i)
    x.result[i].i = uval(x.b[i].i, w) == 0
                        ? 0
                        : wrapInt(divide(opc, x.a[i].i, x.b[i].i, w), w);
  return -1;
}

#define INT_BIN(EXPR)                                                          \
  for (int64_t i = 0; i < N; ++i) {                                            \
    int64_t a = A[i].i, b = B[i].i;                                            \
    (void)a;                                                                   \
    (void)b;                                                                   \
    R[i].i = wrapInt(EXPR, w);                                                 \
  }                                                                            \
  return true;

/// Integer ops other than divisions; false if `opc` is none.
bool evalInteger(Opc opc, const ScalarCells &x) {
  const int64_t N = int64_t(x.resultElems) * x.threads;
  const unsigned w = intWidth(x.resultKind);
  Cell *R = x.result;
  const Cell *A = x.a, *B = x.b;
  switch (opc) {
  case Opc::AddI:
    INT_BIN(int64_t(uint64_t(a) + uint64_t(b)))
  case Opc::SubI:
    INT_BIN(int64_t(uint64_t(a) - uint64_t(b)))
  case Opc::MulI:
    INT_BIN(int64_t(uint64_t(a) * uint64_t(b)))
  case Opc::AndI:
    INT_BIN(a & b)
  case Opc::OrI:
    INT_BIN(a | b)
  case Opc::XOrI:
    INT_BIN(a ^ b)
  case Opc::MaxSI:
    INT_BIN(std::max(sval(a, w), sval(b, w)))
  case Opc::MinSI:
    INT_BIN(std::min(sval(a, w), sval(b, w)))
  case Opc::MaxUI:
    INT_BIN(int64_t(std::max(uval(a, w), uval(b, w))))
  case Opc::MinUI:
    INT_BIN(int64_t(std::min(uval(a, w), uval(b, w))))
  case Opc::ShlI:
    INT_BIN(uval(b, w) >= w ? 0 : int64_t(uint64_t(a) << uval(b, w)))
  case Opc::ShrUI:
    INT_BIN(uval(b, w) >= w ? 0 : int64_t(uval(a, w) >> uval(b, w)))
  case Opc::ShrSI:
    INT_BIN(sval(a, w) >> std::min<uint64_t>(uval(b, w), 63))
  case Opc::AbsI:
    for (int64_t i = 0; i < N; ++i) {
      int64_t a = sval(A[i].i, w);
      R[i].i = wrapInt(a < 0 ? int64_t(0 - uint64_t(a)) : a, w);
    }
    return true;
  default:
    return false;
  }
}
#undef INT_BIN

// f64 and f32 results round without a switch per cell: the common cases.
#define FLT_BIN(EXPR)                                                          \
  if (s == SK::F64) {                                                          \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = (EXPR);                                                         \
    }                                                                          \
  } else if (s == SK::F32) {                                                   \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = static_cast<double>(static_cast<float>(EXPR));                  \
    }                                                                          \
  } else {                                                                     \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = roundF(s, (EXPR));                                              \
    }                                                                          \
  }                                                                            \
  return true;
#define FLT_UN(EXPR)                                                           \
  for (int64_t i = 0; i < N; ++i) {                                            \
    double a = A[i].d;                                                         \
    R[i].d = roundF(s, (EXPR));                                                \
  }                                                                            \
  return true;

/// Float binary, unary and fma ops; false if `opc` is none.
bool evalFloat(Opc opc, const ScalarCells &x) {
  const int64_t N = int64_t(x.resultElems) * x.threads;
  const SK s = x.resultKind;
  Cell *R = x.result;
  const Cell *A = x.a, *B = x.b, *C = x.c;
  switch (opc) {
  case Opc::AddF:
    FLT_BIN(a + b)
  case Opc::SubF:
    FLT_BIN(a - b)
  case Opc::MulF:
    FLT_BIN(a * b)
  case Opc::DivF:
    FLT_BIN(a / b)
  case Opc::RemF:
    FLT_BIN(std::fmod(a, b))
  case Opc::MaximumF:
    FLT_BIN(fmaxIEEE(a, b))
  case Opc::MinimumF:
    FLT_BIN(fminIEEE(a, b))
  case Opc::MaxNumF:
    FLT_BIN(std::fmax(a, b))
  case Opc::MinNumF:
    FLT_BIN(std::fmin(a, b))
  case Opc::PowF:
    FLT_BIN(std::pow(a, b))
  case Opc::CopySign:
    FLT_BIN(std::copysign(a, b))
  case Opc::NegF:
    FLT_UN(-a)
  case Opc::AbsF:
    FLT_UN(std::fabs(a))
  case Opc::Exp:
    FLT_UN(std::exp(a))
  case Opc::Exp2:
    FLT_UN(std::exp2(a))
  case Opc::ExpM1:
    FLT_UN(std::expm1(a))
  case Opc::Log:
    FLT_UN(std::log(a))
  case Opc::Log2:
    FLT_UN(std::log2(a))
  case Opc::Log1p:
    FLT_UN(std::log1p(a))
  case Opc::Sqrt:
    FLT_UN(std::sqrt(a))
  case Opc::Rsqrt:
    FLT_UN(1.0 / std::sqrt(a))
  case Opc::Tanh:
    FLT_UN(std::tanh(a))
  case Opc::Sin:
    FLT_UN(std::sin(a))
  case Opc::Cos:
    FLT_UN(std::cos(a))
  case Opc::Erf:
    FLT_UN(std::erf(a))
  case Opc::Ceil:
    FLT_UN(std::ceil(a))
  case Opc::Floor:
    FLT_UN(std::floor(a))
  case Opc::Round:
    FLT_UN(std::round(a))
  case Opc::RoundEven:
    FLT_UN(std::nearbyint(a))
  case Opc::Trunc:
    FLT_UN(std::trunc(a))
  case Opc::Fma:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, std::fma(A[i].d, B[i].d, C[i].d));
    return true;
  default:
    return false;
  }
}
#undef FLT_BIN
#undef FLT_UN

bool cmpI(arith::CmpIPredicate p, int64_t ca, int64_t cb, unsigned w) {
  using P = arith::CmpIPredicate;
  int64_t a = sval(ca, w), b = sval(cb, w);
  uint64_t ua = uval(ca, w), ub = uval(cb, w);
  switch (p) {
  case P::eq:
    return ua == ub;
  case P::ne:
    return ua != ub;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

/// Compares and select; false if `op` is none of them.
bool evalCompareOrSelect(ScalarOp op, const ScalarCells &x) {
  const int64_t N = int64_t(x.resultElems) * x.threads;
  Cell *R = x.result;
  const Cell *A = x.a, *B = x.b, *C = x.c;
  switch (op.opcode) {
  case Opc::Select: {
    bool scalarCond = x.aElems == 1 && x.resultElems > 1;
    for (int64_t i = 0; i < N; ++i) {
      int64_t c = scalarCond ? A[i % x.threads].i : A[i].i;
      R[i] = c ? B[i] : C[i];
    }
    return true;
  }
  case Opc::CmpI: {
    const unsigned ow = intWidth(x.operandKind);
    const auto p = static_cast<arith::CmpIPredicate>(op.predicate);
    for (int64_t i = 0; i < N; ++i)
      R[i].i = cmpI(p, A[i].i, B[i].i, ow);
    return true;
  }
  case Opc::CmpF: {
    const auto p = static_cast<arith::CmpFPredicate>(op.predicate);
    for (int64_t i = 0; i < N; ++i)
      R[i].i = evalCmpF(p, A[i].d, B[i].d);
    return true;
  }
  default:
    return false;
  }
}

/// Casts between integer and float kinds and widths.
void evalCast(Opc opc, const ScalarCells &x) {
  const int64_t N = int64_t(x.resultElems) * x.threads;
  const SK s = x.resultKind;
  const unsigned w = intWidth(s), sw = intWidth(x.operandKind);
  Cell *R = x.result;
  const Cell *A = x.a;
  switch (opc) {
  case Opc::ExtUI:
  case Opc::IndexCastUI:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = wrapInt(int64_t(uval(A[i].i, sw)), w);
    return;
  case Opc::ExtSI:
  case Opc::TruncI:
  case Opc::IndexCast:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = wrapInt(sval(A[i].i, sw), w);
    return;
  case Opc::SIToFP:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, static_cast<double>(sval(A[i].i, sw)));
    return;
  case Opc::UIToFP:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, static_cast<double>(uval(A[i].i, sw)));
    return;
  case Opc::FPToSI:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = fpToInt(A[i].d, w, true);
    return;
  case Opc::FPToUI:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = fpToInt(A[i].d, w, false);
    return;
  case Opc::FExt:
  case Opc::FTrunc:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, A[i].d);
    return;
  default:
    llvm_unreachable("not a scalar op");
  }
}

} // namespace

int64_t evaluateScalarOp(ScalarOp op, const ScalarCells &x,
                         const uint8_t *mask) {
  if (isDivision(op.opcode))
    return evalDivision(op.opcode, x, mask);
  if (!evalInteger(op.opcode, x) && !evalFloat(op.opcode, x) &&
      !evalCompareOrSelect(op, x))
    evalCast(op.opcode, x);
  return -1;
}

} // namespace flash::emu

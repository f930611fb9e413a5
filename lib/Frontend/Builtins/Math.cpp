//===- Math.cpp - Elementwise math builtins -------------------------------===//
//
// cdiv, min, max, where, cast, and the unary math builtins: every builtin
// that is one math.X op on a float operand is named in
// flashc/Semantics/FloatUnaryOps.def, beside the op's semantics.
//
//===----------------------------------------------------------------------===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Types.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <vector>

using namespace flash;
using namespace flash::frontend;
using llvm::SMLoc;
using llvm::Twine;

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

namespace {
using UnaryBuilder = mlir::Value (*)(mlir::OpBuilder &, mlir::Location,
                                     mlir::Value);

template <typename OpTy>
mlir::Value buildUnary(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x) {
  return OpTy::create(b, loc, x);
}

/// One elementwise builtin NAME(x) that is one op. Floats are always
/// accepted; i32 only where the row has an integer op and fold.
struct UnaryMathBuiltin {
  const char *name;
  UnaryBuilder build;     // the op on a float operand
  double (*fold)(double); // its value on a compile-time operand
  UnaryBuilder buildInt = nullptr;
  /// nullopt: the result overflows.
  std::optional<int64_t> (*foldInt)(int64_t) = nullptr;
  unsigned flags = NoFlags; // InGrid: grid() may call it
};

std::optional<int64_t> absInt(int64_t x) {
  if (x == INT64_MIN)
    return std::nullopt;
  return x < 0 ? -x : x;
}

/// sigmoid(x) = 1 / (1 + exp(-x)): no math op, so three ops and a reciprocal.
/// Saturates without NaN: exp(-x) is inf for x < -88 (f32) and 1 / inf = 0;
/// it is 0 for x > 104 and 1 / 1 = 1. The division carries `afn` so that the
/// GPU takes rcp.approx (1 ulp) instead of IEEE division; the executors
/// divide exactly.
mlir::Value buildSigmoid(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value x) {
  using namespace mlir;
  Type elem = elementType(x.getType());
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 1.0));
  if (auto shaped = dyn_cast<RankedTensorType>(x.getType()))
    one = tile::SplatOp::create(b, loc, shaped, one);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  Value denominator = arith::AddFOp::create(b, loc, one, e);
  return arith::DivFOp::create(b, loc, one, denominator,
                               arith::FastMathFlags::afn);
}

double foldSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// abs (which also takes i32 and may appear in grid()), every f -> f op
/// that FloatUnaryOps.def names a builtin, in the list's order, then sigmoid.
const std::vector<UnaryMathBuiltin> &unaryMathBuiltins() {
  static const std::vector<UnaryMathBuiltin> rows = [] {
    std::vector<UnaryMathBuiltin> all = {
        {"abs", &buildUnary<mlir::math::AbsFOp>,
         [](double x) { return std::fabs(x); },
         &buildUnary<mlir::math::AbsIOp>, absInt, InGrid}};
#define FLASH_FLOAT_UNARY(Opcode, MlirOp, Result, Builtin)                     \
  if (*Builtin)                                                                \
    all.push_back({Builtin, &buildUnary<mlir::MlirOp>,                         \
                   [](double a) { return Result; }});
#include "flashc/Semantics/FloatUnaryOps.def"
    all.push_back({"sigmoid", &buildSigmoid, &foldSigmoid});
    return all;
  }();
  return rows;
}
} // namespace

static OptVal foldUnaryMath(BuiltinCall &call, const UnaryMathBuiltin &row,
                            const Val &x) {
  if (x.kind == Val::Int && row.foldInt) {
    std::optional<int64_t> r = row.foldInt(x.i);
    if (!r)
      return call.cx.error(call.loc(),
                           "integer overflow in " + call.name() + "()");
    return Val::ofInt(*r);
  }
  return Val::ofFloat(row.fold(x.asDouble()));
}

static OptVal emitUnaryMath(BuiltinCall &call, const UnaryMathBuiltin &row) {
  FrontendContext &cx = call.cx;
  OptVal x = call.gen.evalPlain(call.arg(0));
  if (!x)
    return std::nullopt;
  if (x->kind == Val::Bool)
    return cx.error(call.argLoc(0),
                    "'" + call.name() + "' is not defined on bool values");
  if (x->isConst())
    return foldUnaryMath(call, row, *x);
  mlir::Type t = x->v.getType();
  if (isFloat(t))
    return Val::ofValue(row.build(call.builder(), call.irLoc(), x->v));
  if (row.buildInt && isI32(t))
    return Val::ofValue(row.buildInt(call.builder(), call.irLoc(), x->v));
  if (row.buildInt)
    return cx.error(call.argLoc(0), "'" + call.name() + "' is not defined on " +
                                        typeStr(t));
  return cx.error(call.argLoc(0), "'" + call.name() +
                                      "' expects a floating-point operand, "
                                      "got " + typeStr(t) +
                                      "; use cast(x, f32)");
}

void frontend::appendUnaryMathBuiltins(std::vector<Builtin> &registry) {
  for (const UnaryMathBuiltin &row : unaryMathBuiltins()) {
    if (!row.build || !row.fold || !row.buildInt != !row.foldInt)
      llvm::report_fatal_error(Twine("unary math builtin '") + row.name +
                               "' is not fully registered");
    registry.push_back({row.name, 1, 1, {}, std::string(row.name) + "(x)",
                        row.flags,
                        [&row](BuiltinCall &call) {
                          return emitUnaryMath(call, row);
                        }});
  }
}

//===----------------------------------------------------------------------===//
// cdiv, min, max
//===----------------------------------------------------------------------===//

namespace {
enum class BinaryMath { Cdiv, Min, Max };
} // namespace

static OptVal foldCdiv(BuiltinCall &call, const Val &a, const Val &b) {
  FrontendContext &cx = call.cx;
  if (a.kind != Val::Int || b.kind != Val::Int)
    return cx.error(call.loc(), "'cdiv' expects integer operands, got " +
                                    describe(a) + " and " + describe(b));
  if (b.i == 0)
    return cx.error(call.argLoc(1), "division by zero in cdiv()");
  if (a.i == INT64_MIN && b.i == -1)
    return cx.error(call.loc(), "integer overflow in cdiv()");
  int64_t q = a.i / b.i;
  if ((a.i % b.i != 0) && ((a.i < 0) == (b.i < 0)))
    ++q;
  return Val::ofInt(q);
}

static OptVal foldMinMax(bool isMax, const Val &a, const Val &b) {
  if (a.kind == Val::Int && b.kind == Val::Int)
    return Val::ofInt(isMax ? std::max(a.i, b.i) : std::min(a.i, b.i));
  double x = a.asDouble(), y = b.asDouble();
  if (std::isnan(x) || std::isnan(y))
    return Val::ofFloat(NAN);
  return Val::ofFloat(isMax ? std::max(x, y) : std::min(x, y));
}

static mlir::Value buildBinaryMath(BuiltinCall &call, BinaryMath kind,
                                   mlir::Value x, mlir::Value y) {
  mlir::OpBuilder &b = call.builder();
  mlir::Location loc = call.irLoc();
  using namespace mlir::arith;
  switch (kind) {
  case BinaryMath::Cdiv:
    return CeilDivSIOp::create(b, loc, x, y);
  case BinaryMath::Min:
    if (isFloat(x.getType()))
      return MinimumFOp::create(b, loc, x, y);
    return MinSIOp::create(b, loc, x, y);
  case BinaryMath::Max:
    if (isFloat(x.getType()))
      return MaximumFOp::create(b, loc, x, y);
    return MaxSIOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown binary math builtin");
}

static OptVal emitBinaryMath(BuiltinCall &call, BinaryMath kind) {
  FrontendContext &cx = call.cx;
  OptVal a = call.gen.evalPlain(call.arg(0));
  if (!a)
    return std::nullopt;
  OptVal b = call.gen.evalPlain(call.arg(1));
  if (!b)
    return std::nullopt;
  if (a->isConst() && b->isConst()) {
    if (a->kind == Val::Bool || b->kind == Val::Bool)
      return cx.error(call.loc(),
                      "'" + call.name() + "' is not defined on bool values");
    if (kind == BinaryMath::Cdiv)
      return foldCdiv(call, *a, *b);
    return foldMinMax(kind == BinaryMath::Max, *a, *b);
  }
  Val vals[2] = {*a, *b};
  SMLoc locs[2] = {call.argLoc(0), call.argLoc(1)};
  llvm::SmallVector<mlir::Value> ops;
  if (!unify(cx, vals, locs, call.loc(), "'" + call.name().str() + "'", ops))
    return std::nullopt;
  mlir::Type t = ops[0].getType();
  if (kind == BinaryMath::Cdiv && !isI32(t))
    return cx.error(call.loc(),
                    "'cdiv' expects integer operands, got " + eltName(t));
  if (isI1(t))
    return cx.error(call.loc(),
                    "'" + call.name() + "' is not defined on bool values");
  return Val::ofValue(buildBinaryMath(call, kind, ops[0], ops[1]));
}

OptVal frontend::emitCdiv(BuiltinCall &call) {
  return emitBinaryMath(call, BinaryMath::Cdiv);
}

OptVal frontend::emitMin(BuiltinCall &call) {
  return emitBinaryMath(call, BinaryMath::Min);
}

OptVal frontend::emitMax(BuiltinCall &call) {
  if (call.keyword("axis"))
    return emitReduction(call, tile::ReduceKind::Max);
  if (call.numArgs() != 2)
    return call.cx.error(call.loc(),
                         "'max' expects 2 arguments, or 1 argument and the "
                         "axis keyword, got " +
                             Twine(call.numArgs()) + " (expected " +
                             call.builtin.signature + ")");
  return emitBinaryMath(call, BinaryMath::Max);
}

//===----------------------------------------------------------------------===//
// where
//===----------------------------------------------------------------------===//

/// The branch of where(c, a, b) that a compile-time c picks when both
/// branches are constants, or in grid() whatever they are (a grid size is
/// one expression of the launch: the sidecar has no select; a runtime c is an
/// error there). nullopt: where() must select at run time.
static std::optional<OptVal> whereAtCompileTime(BuiltinCall &call, const Val &c,
                                                const Val &a, const Val &b) {
  bool constant = c.kind == Val::Bool;
  if (constant && a.isConst() && b.isConst())
    return OptVal(c.b ? a : b);
  if (!call.gen.inGrid)
    return std::nullopt;
  if (!constant)
    return OptVal(call.cx.error(call.argLoc(0),
                                "the condition of 'where' in grid() must be a "
                                "compile-time bool (of constants)"));
  return OptVal(c.b ? a : b);
}

OptVal frontend::emitWhere(BuiltinCall &call) {
  FrontendContext &cx = call.cx;
  IRGen &gen = call.gen;
  OptVal c = gen.evalPlain(call.arg(0));
  if (!c)
    return std::nullopt;
  // A compile-time condition may pick between types:
  // `ACC: type = where(T == f16, f16, f32)`.
  auto branch = [&](unsigned i) -> OptVal {
    OptVal v = c->kind == Val::Bool ? gen.eval(call.arg(i))
                                    : gen.evalPlain(call.arg(i));
    if (v && !checkPlain(cx, *v, call.argLoc(i)))
      return std::nullopt;
    return v;
  };
  OptVal a = branch(1);
  if (!a)
    return std::nullopt;
  OptVal b = branch(2);
  if (!b)
    return std::nullopt;
  if (c->kind != Val::Bool && !(c->kind == Val::Runtime && isI1(c->v.getType())))
    return cx.error(call.argLoc(0),
                    "the condition of 'where' must be bool, got " +
                        describe(*c));
  if (a->kind == Val::Type || b->kind == Val::Type) {
    if (a->kind != b->kind)
      return cx.error(call.loc(), "'where' picks between " + describe(*a) +
                                      " and " + describe(*b) +
                                      "; both must be types, or neither");
    return c->b ? *a : *b;
  }
  if (std::optional<OptVal> picked = whereAtCompileTime(call, *c, *a, *b))
    return *picked;
  Val vals[2] = {*a, *b};
  SMLoc locs[2] = {call.argLoc(1), call.argLoc(2)};
  llvm::SmallVector<mlir::Value> ops;
  if (!unify(cx, vals, locs, call.loc(), "'where'", ops))
    return std::nullopt;
  auto cv = materialize(cx, *c, call.argLoc(0));
  if (!cv)
    return std::nullopt;
  auto shape = broadcastShape(cx, {cv->getType(), ops[0].getType()},
                              call.loc(), "'where'");
  if (!shape)
    return std::nullopt;
  mlir::Value cond = broadcastTo(cx, *cv, *shape, call.loc());
  mlir::Value x = broadcastTo(cx, ops[0], *shape, call.loc());
  mlir::Value y = broadcastTo(cx, ops[1], *shape, call.loc());
  return Val::ofValue(
      mlir::arith::SelectOp::create(call.builder(), call.irLoc(), cond, x, y));
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

/// cast of a compile-time value: f16 and bf16 only exist at runtime, so a
/// cast to them materialises the constant.
static OptVal foldCast(BuiltinCall &call, const Val &x, mlir::Type to) {
  if (to.isInteger(1)) {
    if (x.kind == Val::Bool)
      return x;
    return Val::ofBool(x.kind == Val::Int ? x.i != 0 : x.f != 0);
  }
  if (to.isInteger(32)) {
    if (x.kind == Val::Bool)
      return Val::ofInt(x.b);
    if (x.kind == Val::Int)
      return x;
    if (!std::isfinite(x.f) || x.f >= 2147483648.0 || x.f <= -2147483649.0)
      return call.cx.error(call.argLoc(0),
                           "cast of " +
                               Twine(llvm::formatv("{0}", x.f).str()) +
                               " to i32 is out of range");
    return Val::ofInt((int64_t)x.f);
  }
  Val asFloat =
      x.kind == Val::Bool ? Val::ofFloat(x.b) : Val::ofFloat(x.asDouble());
  if (to.isF32())
    return asFloat;
  return Val::ofValue(*constScalar(call.cx, asFloat, to, call.argLoc(0)));
}

/// The conversion ops from element type `from` to `to` (which differ).
static OptVal buildCast(BuiltinCall &call, mlir::Value v, mlir::Type to) {
  using namespace mlir::arith;
  mlir::OpBuilder &b = call.builder();
  mlir::Location loc = call.irLoc();
  mlir::Type from = elementType(v.getType());
  auto like = [&](mlir::Type e) -> mlir::Type {
    return isTile(v.getType()) ? mlir::Type(tileType(shapeOf(v.getType()), e))
                               : e;
  };
  mlir::Type rt = like(to);
  bool fromF = mlir::isa<mlir::FloatType>(from);
  bool toF = mlir::isa<mlir::FloatType>(to);
  if (fromF && toF) {
    unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    if (fw < tw)
      return Val::ofValue(ExtFOp::create(b, loc, rt, v));
    if (fw > tw)
      return Val::ofValue(TruncFOp::create(b, loc, rt, v));
    // f16 <-> bf16: go through f32.
    mlir::Value wide = ExtFOp::create(b, loc, like(b.getF32Type()), v);
    return Val::ofValue(TruncFOp::create(b, loc, rt, wide));
  }
  if (from.isInteger(32) && toF)
    return Val::ofValue(SIToFPOp::create(b, loc, rt, v));
  if (fromF && to.isInteger(32))
    return Val::ofValue(FPToSIOp::create(b, loc, rt, v));
  if (from.isInteger(1) && to.isInteger(32))
    return Val::ofValue(ExtUIOp::create(b, loc, rt, v));
  if (from.isInteger(1) && toF)
    return Val::ofValue(UIToFPOp::create(b, loc, rt, v));
  if (to.isInteger(1)) {
    auto zero = materialize(
        call.cx, from.isInteger(32) ? Val::ofInt(0) : Val::ofFloat(0),
        call.argLoc(0), v.getType());
    if (!zero)
      return std::nullopt;
    if (fromF)
      return Val::ofValue(CmpFOp::create(b, loc, CmpFPredicate::UNE, v, *zero));
    return Val::ofValue(CmpIOp::create(b, loc, CmpIPredicate::ne, v, *zero));
  }
  return call.cx.error(call.loc(), "cannot cast " + typeStr(v.getType()) +
                                       " to " + eltName(to));
}

OptVal frontend::emitCast(BuiltinCall &call) {
  auto target =
      call.gen.evalType(call.arg(1), "cast() expects a type as its second "
                                     "argument");
  if (!target)
    return std::nullopt;
  OptVal x = call.gen.evalPlain(call.arg(0));
  if (!x)
    return std::nullopt;
  if (x->isConst())
    return foldCast(call, *x, *target);
  if (elementType(x->v.getType()) == *target)
    return *x;
  return buildCast(call, x->v, *target);
}

//===----------------------------------------------------------------------===//
// Bit operations on i32: xor, and, or, shifts, the high word of a product
//===----------------------------------------------------------------------===//

namespace {
enum class BitOp { Xor, And, Or, Shl, Shr, UMulHi };
} // namespace

/// The 32 bits of an integer constant: i32 values and the u32 values
/// 2^31 .. 2^32 - 1 (hash and RNG constants are written unsigned).
static std::optional<uint32_t> bitsOf(const Val &v) {
  if (v.kind != Val::Int || v.i < INT32_MIN || v.i > int64_t(UINT32_MAX))
    return std::nullopt;
  return uint32_t(v.i);
}

static uint32_t foldBits(BitOp op, uint32_t a, uint32_t b) {
  switch (op) {
  case BitOp::Xor:
    return a ^ b;
  case BitOp::And:
    return a & b;
  case BitOp::Or:
    return a | b;
  case BitOp::Shl:
    return b >= 32 ? 0 : a << b;
  case BitOp::Shr:
    return b >= 32 ? 0 : a >> b;
  case BitOp::UMulHi:
    return uint32_t((uint64_t(a) * uint64_t(b)) >> 32);
  }
  llvm_unreachable("unknown bit builtin");
}

/// umulhi(a, b): the high 32 bits of the 64-bit product of a and b read as
/// unsigned, the high result of arith.mului_extended (one mul.hi.u32 in
/// PTX; the executors compute it in 64 bits).
static mlir::Value buildBits(BuiltinCall &call, BitOp op, mlir::Value x,
                             mlir::Value y) {
  mlir::OpBuilder &b = call.builder();
  mlir::Location loc = call.irLoc();
  using namespace mlir::arith;
  switch (op) {
  case BitOp::Xor:
    return XOrIOp::create(b, loc, x, y);
  case BitOp::And:
    return AndIOp::create(b, loc, x, y);
  case BitOp::Or:
    return OrIOp::create(b, loc, x, y);
  case BitOp::Shl:
    return ShLIOp::create(b, loc, x, y);
  case BitOp::Shr:
    return ShRUIOp::create(b, loc, x, y);
  case BitOp::UMulHi:
    return MulUIExtendedOp::create(b, loc, x, y).getHigh();
  }
  llvm_unreachable("unknown bit builtin");
}

/// The two i32 operands of a bit builtin: both constants (their bits, in
/// `vals`: returns true), or tiles and scalars broadcast together into `x`
/// and `y` (returns false); nullopt after reporting an error.
static std::optional<bool> bitOperands(BuiltinCall &call, Val (&vals)[2],
                                       mlir::Value &x, mlir::Value &y) {
  FrontendContext &cx = call.cx;
  for (unsigned i = 0; i < 2; ++i) {
    OptVal v = call.gen.evalPlain(call.arg(i));
    if (!v)
      return std::nullopt;
    if (v->isConst()) {
      std::optional<uint32_t> bits = bitsOf(*v);
      if (!bits) {
        cx.error(call.argLoc(i), "'" + call.name() +
                                     "' expects i32 operands (constants "
                                     "from -2^31 to 2^32 - 1), got " +
                                     describe(*v));
        return std::nullopt;
      }
      v = Val::ofInt(int32_t(*bits));
    } else if (!isI32(v->v.getType())) {
      cx.error(call.argLoc(i), "'" + call.name() +
                                   "' expects i32 operands, got " +
                                   describe(*v));
      return std::nullopt;
    }
    vals[i] = *v;
  }
  if (vals[0].isConst() && vals[1].isConst())
    return true;
  SMLoc locs[2] = {call.argLoc(0), call.argLoc(1)};
  llvm::SmallVector<mlir::Value> ops;
  if (!unify(cx, vals, locs, call.loc(), "'" + call.name().str() + "'", ops))
    return std::nullopt;
  auto shape = broadcastShape(cx, {ops[0].getType(), ops[1].getType()},
                              call.loc(), "'" + call.name().str() + "'");
  if (!shape)
    return std::nullopt;
  x = broadcastTo(cx, ops[0], *shape, call.loc());
  y = broadcastTo(cx, ops[1], *shape, call.loc());
  return false;
}

static OptVal emitBits(BuiltinCall &call, BitOp op) {
  Val vals[2];
  mlir::Value x, y;
  std::optional<bool> constant = bitOperands(call, vals, x, y);
  if (!constant)
    return std::nullopt;
  if (*constant)
    return Val::ofInt(int32_t(foldBits(op, uint32_t(vals[0].i), uint32_t(vals[1].i))));
  return Val::ofValue(buildBits(call, op, x, y));
}

/// umul_wide(a, b): the low and the high 32 bits of the unsigned 64-bit
/// product, both results of one arith.mului_extended (a * b and umulhi(a,
/// b) of the same operands in one op).
OptVal frontend::emitUMulWide(BuiltinCall &call) {
  Val vals[2];
  mlir::Value x, y;
  std::optional<bool> constant = bitOperands(call, vals, x, y);
  if (!constant)
    return std::nullopt;
  Val t;
  t.kind = Val::Tuple;
  if (*constant) {
    uint64_t p = uint64_t(uint32_t(vals[0].i)) * uint64_t(uint32_t(vals[1].i));
    t.elems.push_back(Val::ofInt(int32_t(uint32_t(p))));
    t.elems.push_back(Val::ofInt(int32_t(uint32_t(p >> 32))));
    return t;
  }
  auto op = mlir::arith::MulUIExtendedOp::create(call.builder(), call.irLoc(),
                                                 x, y);
  t.elems.push_back(Val::ofValue(op.getLow()));
  t.elems.push_back(Val::ofValue(op.getHigh()));
  return t;
}

OptVal frontend::emitBitXor(BuiltinCall &call) { return emitBits(call, BitOp::Xor); }
OptVal frontend::emitBitAnd(BuiltinCall &call) { return emitBits(call, BitOp::And); }
OptVal frontend::emitBitOr(BuiltinCall &call) { return emitBits(call, BitOp::Or); }
OptVal frontend::emitShl(BuiltinCall &call) { return emitBits(call, BitOp::Shl); }
OptVal frontend::emitShr(BuiltinCall &call) { return emitBits(call, BitOp::Shr); }
OptVal frontend::emitUMulHi(BuiltinCall &call) { return emitBits(call, BitOp::UMulHi); }

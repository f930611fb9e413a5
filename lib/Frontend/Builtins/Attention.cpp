//===- Attention.cpp - online_softmax and finalize ------------------------===//
//
// The attention-specific builtins: one step of the online softmax over a
// block of scores, and the final normalisation of the accumulator. Options of
// attention variants (normalization, exp2, scale) are keywords here.
//
//===----------------------------------------------------------------------===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Types.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace flash;
using namespace flash::frontend;
using llvm::Twine;

namespace {
/// The operands of online_softmax(s, v, m, l, acc).
struct SoftmaxOperands {
  mlir::Value scores, values, max, sum, acc;
};
} // namespace

static std::optional<SoftmaxOperands> softmaxOperands(BuiltinCall &call) {
  static const char *const what[5] = {
      "an f32 score tile [M, N]", "an f16, bf16 or f8e4m3 value tile [N, D]",
      "an f32 running-max tile [M]", "an f32 running-sum tile [M]",
      "an f32 accumulator tile [M, D]"};
  static const unsigned ranks[5] = {2, 2, 1, 1, 2};
  mlir::Value v[5];
  for (unsigned i = 0; i < 5; ++i) {
    auto x = call.tileArg(i, what[i], ranks[i]);
    if (!x)
      return std::nullopt;
    mlir::Type et = elementType(x->getType());
    bool ok = i == 1 ? (et.isF16() || et.isBF16() ||
                        mlir::isa<mlir::Float8E4M3FNType>(et))
                     : et.isF32();
    if (!ok)
      return call.cx.error(call.argLoc(i), "'online_softmax' expects " +
                                               Twine(what[i]) + ", got " +
                                               typeStr(x->getType()));
    v[i] = *x;
  }
  return SoftmaxOperands{v[0], v[1], v[2], v[3], v[4]};
}

static bool checkSoftmaxShapes(BuiltinCall &call, const SoftmaxOperands &o) {
  FrontendContext &cx = call.cx;
  auto s = shapeOf(o.scores.getType()), vv = shapeOf(o.values.getType()),
       m = shapeOf(o.max.getType()), l = shapeOf(o.sum.getType()),
       acc = shapeOf(o.acc.getType());
  int64_t M = s[0], N = s[1], D = vv[1];
  if (vv[0] != N)
    cx.error(call.argLoc(1), "shape mismatch in 'online_softmax': scores " +
                                 shapeStr(s) + " vs values " + shapeStr(vv) +
                                 " (values need " + Twine(N) + " rows)");
  else if (m[0] != M)
    cx.error(call.argLoc(2), "shape mismatch in 'online_softmax': scores " +
                                 shapeStr(s) + " vs running max " +
                                 shapeStr(m));
  else if (l[0] != M)
    cx.error(call.argLoc(3), "shape mismatch in 'online_softmax': scores " +
                                 shapeStr(s) + " vs running sum " +
                                 shapeStr(l));
  else if (acc[0] != M || acc[1] != D)
    cx.error(call.argLoc(4), "shape mismatch in 'online_softmax': the "
                             "accumulator is " + shapeStr(acc) +
                                 " but should be " + shapeStr({M, D}));
  else
    return true;
  return false;
}

static std::optional<tile::Normalization> normalization(BuiltinCall &call) {
  const ast::KeywordArg *kw = call.keyword("normalization");
  if (!kw)
    return tile::Normalization::Deferred;
  const ast::Expr &e = *kw->value;
  if (e.kind == ast::ExprKind::Name && e.name == "deferred")
    return tile::Normalization::Deferred;
  if (e.kind == ast::ExprKind::Name && e.name == "eager")
    return tile::Normalization::Eager;
  return call.cx.error(e.loc, "normalization must be 'deferred' or 'eager'");
}

/// A compile-time bool keyword of online_softmax, false when absent.
static std::optional<bool> boolOption(BuiltinCall &call, llvm::StringRef name) {
  const ast::KeywordArg *kw = call.keyword(name);
  if (!kw)
    return false;
  return call.gen.evalConstBool(
      *kw->value, "the " + name + " option of online_softmax");
}

/// The scores stand for scale * s; lowering folds the scale into the FMA
/// before each exponential. A null value: no scale.
static std::optional<mlir::Value> softmaxScale(BuiltinCall &call) {
  FrontendContext &cx = call.cx;
  const ast::KeywordArg *kw = call.keyword("scale");
  if (!kw)
    return mlir::Value();
  const ast::Expr &e = *kw->value;
  OptVal c = call.gen.evalPlain(e);
  if (!c)
    return std::nullopt;
  if (c->kind == Val::Int || c->kind == Val::Float) {
    if (!(c->asDouble() > 0)) {
      std::string shown;
      llvm::raw_string_ostream(shown) << llvm::format("%g", c->asDouble());
      return cx.error(e.loc, "the scale of online_softmax must be positive, "
                             "got " + shown);
    }
    return constScalar(cx, *c, call.builder().getF32Type(), e.loc);
  }
  if (c->isRuntimeScalar() && c->v.getType().isF32())
    return c->v;
  return cx.error(e.loc, "the scale of online_softmax must be an f32 scalar, "
                         "got " + describe(*c) +
                             (c->isRuntimeScalar() ? "; use cast(x, f32)"
                                                   : ""));
}

OptVal frontend::emitOnlineSoftmax(BuiltinCall &call) {
  auto o = softmaxOperands(call);
  if (!o || !checkSoftmaxShapes(call, *o))
    return std::nullopt;
  auto norm = normalization(call);
  if (!norm)
    return std::nullopt;
  auto useExp2 = boolOption(call, "exp2");
  auto sumByMma = boolOption(call, "sum_by_mma");
  if (!useExp2 || !sumByMma)
    return std::nullopt;
  auto scale = softmaxScale(call);
  if (!scale)
    return std::nullopt;
  auto op = tile::OnlineSoftmaxOp::create(
      call.builder(), call.irLoc(), o->max.getType(), o->sum.getType(),
      o->acc.getType(), o->scores, o->values, o->max, o->sum, o->acc, *scale,
      *norm, *useExp2, *sumByMma);
  Val t;
  t.kind = Val::Tuple;
  for (mlir::Value r : op->getResults())
    t.elems.push_back(Val::ofValue(r));
  return t;
}

OptVal frontend::emitFinalize(BuiltinCall &call) {
  auto acc = call.tileArg(0, "an f32 accumulator tile [M, D]", 2);
  if (!acc)
    return std::nullopt;
  auto sum = call.tileArg(1, "an f32 running-sum tile [M]", 1);
  if (!sum)
    return std::nullopt;
  mlir::Type ta = acc->getType(), tl = sum->getType();
  if (!elementType(ta).isF32() || !elementType(tl).isF32())
    return call.cx.error(call.loc(), "'finalize' expects f32 tiles, got " +
                                         typeStr(ta) + " and " + typeStr(tl));
  auto sa = shapeOf(ta), sl = shapeOf(tl);
  if (sa[0] != sl[0])
    return call.cx.error(call.loc(), "shape mismatch in 'finalize': " +
                                         shapeStr(sa) + " vs " + shapeStr(sl) +
                                         " (need [M, D] and [M])");
  return Val::ofValue(tile::OnlineSoftmaxFinalizeOp::create(
      call.builder(), call.irLoc(), ta, *acc, *sum));
}

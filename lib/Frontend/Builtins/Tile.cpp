//===- Tile.cpp - Program indices and tile construction -------------------===//
//
// program_id, num_programs, arange, zeros, full, trans and dot.
//
//===----------------------------------------------------------------------===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Types.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace flash;
using namespace flash::frontend;
using llvm::SMLoc;
using llvm::Twine;

/// The axis argument of program_id / num_programs.
static std::optional<int64_t> programAxis(BuiltinCall &call) {
  auto axis = call.gen.evalConstInt(call.arg(0),
                                    "the axis of " + call.name() + "()");
  if (!axis)
    return std::nullopt;
  if (*axis < 0 || *axis > 2)
    return call.cx.error(call.argLoc(0), "the axis of " + call.name() +
                                             "() must be 0, 1 or 2, got " +
                                             Twine(*axis));
  return axis;
}

OptVal frontend::emitProgramId(BuiltinCall &call) {
  auto axis = programAxis(call);
  if (!axis)
    return std::nullopt;
  mlir::OpBuilder &b = call.builder();
  return Val::ofValue(tile::ProgramIdOp::create(
      b, call.irLoc(), b.getI32Type(), b.getI32IntegerAttr(*axis)));
}

OptVal frontend::emitNumPrograms(BuiltinCall &call) {
  auto axis = programAxis(call);
  if (!axis)
    return std::nullopt;
  mlir::OpBuilder &b = call.builder();
  return Val::ofValue(tile::NumProgramsOp::create(
      b, call.irLoc(), b.getI32Type(), b.getI32IntegerAttr(*axis)));
}

OptVal frontend::emitArange(BuiltinCall &call) {
  FrontendContext &cx = call.cx;
  auto lo = call.gen.evalConstInt(call.arg(0), "the start of arange()");
  if (!lo)
    return std::nullopt;
  auto hi = call.gen.evalConstInt(call.arg(1), "the end of arange()");
  if (!hi)
    return std::nullopt;
  if (*lo < INT32_MIN || *lo > INT32_MAX || *hi < INT32_MIN ||
      *hi > INT32_MAX)
    return cx.error(call.loc(), "arange() bounds must fit in i32");
  int64_t size = *hi - *lo;
  if (size <= 0)
    return cx.error(call.loc(), "arange(" + Twine(*lo) + ", " + Twine(*hi) +
                                    ") is empty; the end must be greater "
                                    "than the start");
  if (!checkShape(cx, {size}, call.loc()))
    return std::nullopt;
  mlir::OpBuilder &b = call.builder();
  mlir::Value v = tile::IotaOp::create(b, call.irLoc(),
                                       tileType({size}, b.getI32Type()));
  if (*lo != 0) {
    auto offset = materialize(cx, Val::ofInt(*lo), call.loc(), v.getType());
    if (!offset)
      return std::nullopt;
    v = mlir::arith::AddIOp::create(b, call.irLoc(), v, *offset);
  }
  return Val::ofValue(v);
}

/// The attribute a constant fills a tile of element type `ty` with.
static std::optional<mlir::Attribute>
fillAttr(BuiltinCall &call, const Val &value, mlir::Type ty, SMLoc loc) {
  FrontendContext &cx = call.cx;
  mlir::OpBuilder &b = call.builder();
  if (ty.isInteger(1)) {
    if (value.kind != Val::Bool)
      return cx.error(loc, "full() of bool needs true or false, got " +
                               describe(value));
    return b.getBoolAttr(value.b);
  }
  if (mlir::isa<mlir::FloatType>(ty)) {
    if (value.kind == Val::Bool)
      return cx.error(loc, "cannot fill a " + eltName(ty) +
                               " tile with a bool constant");
    return b.getFloatAttr(ty, value.asDouble());
  }
  if (value.kind != Val::Int)
    return cx.error(loc, "cannot fill an i32 tile with " + describe(value));
  if (value.i < INT32_MIN || value.i > INT32_MAX)
    return cx.error(loc, "integer constant " + Twine(value.i) +
                             " does not fit in i32");
  return b.getIntegerAttr(ty, value.i);
}

/// The value argument of full(): a scalar of the tile's element type, or a
/// constant.
static OptVal fullValue(BuiltinCall &call, mlir::Type ty) {
  FrontendContext &cx = call.cx;
  SMLoc loc = call.argLoc(1);
  OptVal v = call.gen.evalPlain(call.arg(1));
  if (!v)
    return std::nullopt;
  if (ty.isInteger(1) && v->kind == Val::Int)
    return cx.error(loc, "full() of bool needs true or false, got " +
                             describe(*v));
  if (v->kind != Val::Runtime)
    return v;
  if (isTile(v->v.getType()))
    return cx.error(loc, "the value of full() must be a scalar, got " +
                             describe(*v));
  if (elementType(v->v.getType()) != ty)
    return cx.error(loc, "the value of full() has type " +
                             typeStr(v->v.getType()) + " but the tile is " +
                             eltName(ty) + "; use cast(x, " + eltName(ty) +
                             ")");
  return v;
}

OptVal frontend::emitZerosOrFull(BuiltinCall &call) {
  FrontendContext &cx = call.cx;
  bool isFull = call.name() == "full";
  const ast::Expr &dims = call.arg(0);
  if (dims.kind != ast::ExprKind::List)
    return cx.error(dims.loc, "the first argument of '" + call.name() +
                                  "' must be a list of dims, such as "
                                  "[BLOCK_M, HEAD_DIM]");
  llvm::SmallVector<int64_t> shape;
  for (auto &d : dims.args) {
    auto v = call.gen.evalConstInt(*d, "a dim of " + call.name() + "()");
    if (!v)
      return std::nullopt;
    shape.push_back(*v);
  }
  const ast::Expr &tyExpr = call.arg(call.numArgs() - 1);
  auto ty = call.gen.evalType(tyExpr, "the last argument of '" +
                                          call.name() +
                                          "' must be an element type");
  if (!ty)
    return std::nullopt;
  if (!checkShape(cx, shape, dims.loc))
    return std::nullopt;
  Val value = ty->isInteger(1) ? Val::ofBool(false) : Val::ofInt(0);
  SMLoc valueLoc = call.loc();
  if (isFull) {
    OptVal v = fullValue(call, *ty);
    if (!v)
      return std::nullopt;
    if (v->kind == Val::Runtime)
      return Val::ofValue(splat(cx, v->v, shape, call.argLoc(1)));
    value = *v;
    valueLoc = call.argLoc(1);
  }
  auto attr = fillAttr(call, value, *ty, valueLoc);
  if (!attr)
    return std::nullopt;
  auto dense = mlir::DenseElementsAttr::get(
      mlir::cast<mlir::ShapedType>(tileType(shape, *ty)),
      llvm::ArrayRef<mlir::Attribute>(*attr));
  return Val::ofValue(
      mlir::arith::ConstantOp::create(call.builder(), call.irLoc(), dense));
}

OptVal frontend::emitTrans(BuiltinCall &call) {
  auto x = call.tileArg(0, "a 2-D tile", 2);
  if (!x)
    return std::nullopt;
  auto s = shapeOf(x->getType());
  return Val::ofValue(tile::TransOp::create(
      call.builder(), call.irLoc(),
      tileType({s[1], s[0]}, elementType(x->getType())), *x));
}

/// The operands of dot must be f16, bf16 or f8e4m3 tiles of one type that
/// multiply.
static bool checkDotOperands(BuiltinCall &call, mlir::Type ta, mlir::Type tb) {
  FrontendContext &cx = call.cx;
  for (int i = 0; i < 2; ++i) {
    mlir::Type t = i ? tb : ta;
    mlir::Type et = elementType(t);
    if (!et.isF16() && !et.isBF16() && !mlir::isa<mlir::Float8E4M3FNType>(et)) {
      cx.error(call.argLoc(i), "'dot' operands must be f16, bf16 or f8e4m3 "
                               "tiles, got " + typeStr(t) + "; use cast(x, f16)");
      return false;
    }
  }
  if (elementType(ta) != elementType(tb)) {
    cx.error(call.loc(), "mismatched element types in 'dot': " + eltName(ta) +
                             " vs " + eltName(tb) + "; use cast(x, T)");
    return false;
  }
  auto sa = shapeOf(ta), sb = shapeOf(tb);
  if (sa[1] != sb[0]) {
    cx.error(call.loc(), "shape mismatch in 'dot': " + shapeStr(sa) + " vs " +
                             shapeStr(sb) + " (the inner dims " +
                             Twine(sa[1]) + " and " + Twine(sb[0]) +
                             " must be equal)");
    return false;
  }
  return checkShape(cx, {sa[0], sb[1]}, call.loc());
}

OptVal frontend::emitDot(BuiltinCall &call) {
  auto a = call.tileArg(0, "a 2-D f16, bf16 or f8e4m3 tile", 2);
  if (!a)
    return std::nullopt;
  auto b = call.tileArg(1, "a 2-D f16, bf16 or f8e4m3 tile", 2);
  if (!b || !checkDotOperands(call, a->getType(), b->getType()))
    return std::nullopt;
  mlir::OpBuilder &builder = call.builder();
  auto rt = tileType({shapeOf(a->getType())[0], shapeOf(b->getType())[1]},
                     builder.getF32Type());
  mlir::Value acc;
  if (call.numArgs() == 3) {
    auto c = call.tileArg(2, "an f32 accumulator tile", 2);
    if (!c)
      return std::nullopt;
    if (c->getType() != rt)
      return call.cx.error(call.argLoc(2),
                           "the accumulator of 'dot' must be " + typeStr(rt) +
                               ", got " + typeStr(c->getType()));
    acc = *c;
  } else {
    auto zero = mlir::DenseElementsAttr::get(
        mlir::cast<mlir::ShapedType>(rt),
        llvm::ArrayRef<mlir::Attribute>(builder.getF32FloatAttr(0)));
    acc = mlir::arith::ConstantOp::create(builder, call.irLoc(), zero);
  }
  return Val::ofValue(tile::MmaOp::create(builder, call.irLoc(), rt, *a, *b,
                                          acc, false, false));
}

OptVal frontend::emitDtype(BuiltinCall &call) {
  OptVal v = call.gen.eval(call.arg(0));
  if (!v)
    return std::nullopt;
  if (v->kind == Val::Global)
    return Val::ofType(
        mlir::cast<tile::GlobalType>(call.gen.params[v->param].type)
            .getElementType());
  if (v->kind == Val::Runtime)
    return Val::ofType(elementType(v->v.getType()));
  return call.cx.error(call.argLoc(0),
                       "dtype() expects a tile, a runtime scalar or a tensor "
                       "parameter, got " + describe(*v));
}

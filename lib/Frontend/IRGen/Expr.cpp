//===- Expr.cpp - Expressions: fold where possible, IR otherwise ----------===//

#include "Builtins/Builtins.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/ConstEval.h"
#include "Sema/Types.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

IRGen::NestingGuard::NestingGuard(IRGen &gen, SMLoc loc) : gen(gen) {
  ok = ++gen.nesting <= kMaxNesting;
  if (!ok)
    gen.cx.error(loc, "expressions and blocks nest too deeply through "
                      "function calls (the limit is " +
                          Twine(kMaxNesting) + " levels)");
}

OptVal IRGen::eval(const Expr &e) {
  if (cx.failed())
    return std::nullopt;
  NestingGuard guard(*this, e.loc);
  if (!guard.ok)
    return std::nullopt;
  return evalExpr(e);
}

OptVal IRGen::evalExpr(const Expr &e) {
  switch (e.kind) {
  case ExprKind::IntLit:
    return Val::ofInt(e.intValue);
  case ExprKind::FloatLit:
    return Val::ofFloat(e.floatValue);
  case ExprKind::BoolLit:
    return Val::ofBool(e.boolValue);
  case ExprKind::InfLit:
    return Val::ofFloat(INFINITY);
  case ExprKind::NoneLit:
    return cx.error(e.loc, "'None' is only allowed inside a subscript");
  case ExprKind::List:
    return cx.error(e.loc, "a list '[...]' is only allowed as the shape "
                           "argument of zeros() and full()");
  case ExprKind::Name:
    return evalName(e);
  case ExprKind::Unary:
    return evalUnary(e);
  case ExprKind::Binary:
    return evalBinary(e);
  case ExprKind::Subscript:
    return evalSubscript(e);
  case ExprKind::Call:
    return evalCall(e);
  }
  return cx.error(e.loc, "unsupported expression");
}

OptVal IRGen::evalPlain(const Expr &e) {
  OptVal v = eval(e);
  if (!v || !checkPlain(cx, *v, e.loc))
    return std::nullopt;
  if (v->kind == Val::Type)
    return cx.error(e.loc, "expected a value, got " + describe(*v) +
                               " (a type names the element type of "
                               "parameters, cast(), zeros() and full())");
  return v;
}

std::optional<mlir::Type> IRGen::evalType(const Expr &e, const Twine &what) {
  // A type name means its type, as it always has, even where a variable
  // of that name is visible.
  if (std::optional<mlir::Type> t = parseTypeName(e, cx.builder))
    return t;
  if (e.kind == ExprKind::Name && !scopes.lookup(e.name))
    return cx.error(e.loc, what + " (f16, bf16, f8e4m3, f32, i32, bool or a type "
                                  "constant)");
  OptVal v = eval(e);
  if (!v)
    return std::nullopt;
  if (v->kind != Val::Type)
    return cx.error(e.loc, what + ", got " + describe(*v));
  return v->type;
}

std::optional<int64_t> IRGen::evalConstInt(const Expr &e, const Twine &what) {
  OptVal v = eval(e);
  if (!v)
    return std::nullopt;
  if (v->kind != Val::Int)
    return cx.error(e.loc, what + " must be a compile-time integer constant, "
                                  "got " + describe(*v));
  return v->i;
}

std::optional<bool> IRGen::evalConstBool(const Expr &e, const Twine &what) {
  OptVal v = eval(e);
  if (!v)
    return std::nullopt;
  if (v->kind != Val::Bool)
    return cx.error(e.loc, what + " must be a compile-time bool constant, "
                                  "got " + describe(*v));
  return v->b;
}

std::optional<mlir::Value> IRGen::evalIndex(const Expr &e, const Twine &what) {
  OptVal v = evalPlain(e);
  if (!v)
    return std::nullopt;
  if (v->kind == Val::Int)
    return constScalar(cx, *v, cx.builder.getI32Type(), e.loc);
  if (v->isRuntimeScalar() && isI32(v->v.getType()))
    return v->v;
  return cx.error(e.loc, what + " must be an integer scalar, got " +
                             describe(*v));
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// Why a name grid() cannot see is not visible there; nullopt if it is not
/// one of the kernel's tensors or variables.
static std::optional<std::string> invisibleInGrid(const KernelDecl &kernel,
                                                  const std::string &name) {
  for (const Param &p : kernel.params)
    if (p.name == name && p.isTensor)
      return "tensor parameter '" + name +
             "' cannot be used in grid(); grid sizes are computed from shape "
             "symbols, constants and scalar parameters";
  if (!name.empty())
    for (auto &s : kernel.body.stmts)
      if (s->kind == StmtKind::Let && llvm::is_contained(s->names, name))
        return "'" + name +
               "' cannot be used in grid(); grid sizes are computed from "
               "shape symbols, constants and scalar parameters only";
  return std::nullopt;
}

OptVal IRGen::evalName(const Expr &e) {
  if (Binding *b = scopes.lookup(e.name))
    return b->val;
  if (e.name != "i1")
    if (std::optional<mlir::Type> t = builtinTypeNamed(e.name, cx.builder))
      return Val::ofType(*t);
  if (inGrid)
    if (std::optional<std::string> why = invisibleInGrid(cx.kernel, e.name))
      return cx.error(e.loc, *why);
  // A function's name is a function value, for a function parameter.
  if (const FunctionDecl *fn = cx.program.lookupFunction(e.name))
    return Val::ofFunction(fn);
  if (frame && scopes.lookupHidden(e.name))
    return cx.error(e.loc, "unknown name '" + e.name + "' in function '" +
                               frame->fn->name +
                               "': a function sees its parameters and the "
                               "kernel's constants only; pass '" + e.name +
                               "' as an argument");
  std::string s = scopes.suggest(e.name);
  if (!s.empty())
    return cx.error(e.loc, "unknown name '" + e.name + "'; did you mean '" +
                               s + "'?");
  if (lookupBuiltin(e.name))
    return cx.error(e.loc, "'" + e.name + "' is a builtin function; call it "
                                          "as " + e.name + "(...) (to pass "
                                          "it as an argument, wrap it in a "
                                          "fn)");
  return cx.error(e.loc, "unknown name '" + e.name + "'");
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

OptVal IRGen::evalUnary(const Expr &e) {
  OptVal v = evalPlain(*e.lhs);
  if (!v)
    return std::nullopt;
  if (v->isConst())
    return foldUnary(cx, e.unaryOp, *v, e.opLoc);
  mlir::Location loc = cx.loc(e.opLoc);
  mlir::Type t = v->v.getType();
  if (e.unaryOp == UnaryOp::Not) {
    if (!isI1(t))
      return cx.error(e.opLoc, "operator '!' needs a bool operand, got " +
                                   describe(*v));
    auto one = materialize(cx, Val::ofBool(true), e.opLoc, t);
    if (!one)
      return std::nullopt;
    return Val::ofValue(mlir::arith::XOrIOp::create(cx.builder, loc, v->v, *one));
  }
  if (isFloat(t))
    return Val::ofValue(mlir::arith::NegFOp::create(cx.builder, loc, v->v));
  if (isI32(t)) {
    auto zero = materialize(cx, Val::ofInt(0), e.opLoc, t);
    if (!zero)
      return std::nullopt;
    return Val::ofValue(mlir::arith::SubIOp::create(cx.builder, loc, *zero, v->v));
  }
  return cx.error(e.opLoc, "unary '-' is not defined on " + typeStr(t) +
                               " values");
}

static mlir::arith::CmpFPredicate floatPredicate(BinaryOp op) {
  using mlir::arith::CmpFPredicate;
  switch (op) {
  case BinaryOp::Lt:
    return CmpFPredicate::OLT;
  case BinaryOp::Le:
    return CmpFPredicate::OLE;
  case BinaryOp::Gt:
    return CmpFPredicate::OGT;
  case BinaryOp::Ge:
    return CmpFPredicate::OGE;
  case BinaryOp::Eq:
    return CmpFPredicate::OEQ;
  default:
    return CmpFPredicate::UNE;
  }
}

static mlir::arith::CmpIPredicate intPredicate(BinaryOp op) {
  using mlir::arith::CmpIPredicate;
  switch (op) {
  case BinaryOp::Lt:
    return CmpIPredicate::slt;
  case BinaryOp::Le:
    return CmpIPredicate::sle;
  case BinaryOp::Gt:
    return CmpIPredicate::sgt;
  case BinaryOp::Ge:
    return CmpIPredicate::sge;
  case BinaryOp::Eq:
    return CmpIPredicate::eq;
  default:
    return CmpIPredicate::ne;
  }
}

/// + - * / % on float or i32 operands of one type.
static mlir::Value buildArithmetic(mlir::OpBuilder &b, mlir::Location loc,
                                   BinaryOp op, mlir::Value x, mlir::Value y) {
  using namespace mlir::arith;
  if (isFloat(x.getType())) {
    switch (op) {
    case BinaryOp::Add:
      return AddFOp::create(b, loc, x, y);
    case BinaryOp::Sub:
      return SubFOp::create(b, loc, x, y);
    case BinaryOp::Mul:
      return MulFOp::create(b, loc, x, y);
    case BinaryOp::Div:
      return DivFOp::create(b, loc, x, y);
    default:
      return RemFOp::create(b, loc, x, y);
    }
  }
  switch (op) {
  case BinaryOp::Add:
    return AddIOp::create(b, loc, x, y);
  case BinaryOp::Sub:
    return SubIOp::create(b, loc, x, y);
  case BinaryOp::Mul:
    return MulIOp::create(b, loc, x, y);
  case BinaryOp::Div:
    return DivSIOp::create(b, loc, x, y);
  default:
    return RemSIOp::create(b, loc, x, y);
  }
}

/// `x op y` on runtime operands already unified to one type.
static OptVal buildBinary(FrontendContext &cx, BinaryOp op, mlir::Value x,
                          mlir::Value y, SMLoc opLoc, const std::string &what) {
  mlir::Type t = x.getType();
  mlir::Location loc = cx.loc(opLoc);
  bool fl = isFloat(t), in = isI32(t), bo = isI1(t);
  auto undefined = [&] {
    return cx.error(opLoc, "operator " + what + " is not defined on " +
                               eltName(t) + " operands");
  };
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
    if (!fl && !in)
      return undefined();
    return Val::ofValue(buildArithmetic(cx.builder, loc, op, x, y));
  case BinaryOp::And:
  case BinaryOp::Or:
    if (!bo)
      return cx.error(opLoc, "operator " + what + " needs bool operands, got " +
                                 eltName(t));
    if (op == BinaryOp::And)
      return Val::ofValue(mlir::arith::AndIOp::create(cx.builder, loc, x, y));
    return Val::ofValue(mlir::arith::OrIOp::create(cx.builder, loc, x, y));
  default:
    if (fl)
      return Val::ofValue(mlir::arith::CmpFOp::create(
          cx.builder, loc, floatPredicate(op), x, y));
    if ((bo && op != BinaryOp::Eq && op != BinaryOp::Ne) || (!in && !bo))
      return undefined();
    return Val::ofValue(
        mlir::arith::CmpIOp::create(cx.builder, loc, intPredicate(op), x, y));
  }
}

OptVal IRGen::evalBinary(const Expr &e) {
  OptVal a = eval(*e.lhs);
  if (!a)
    return std::nullopt;
  OptVal b = eval(*e.rhs);
  if (!b)
    return std::nullopt;
  SMLoc aLoc = e.lhs->loc, bLoc = e.rhs->loc;
  // Two functions compare by identity at compile time: a library can tell
  // whether it got its default.
  if (a->kind == Val::Function && b->kind == Val::Function &&
      (e.binaryOp == BinaryOp::Eq || e.binaryOp == BinaryOp::Ne))
    return Val::ofBool((a->fn == b->fn) == (e.binaryOp == BinaryOp::Eq));
  if (!checkPlain(cx, *a, aLoc) || !checkPlain(cx, *b, bLoc))
    return std::nullopt;
  if ((a->isConst() && b->isConst()) || a->kind == Val::Type ||
      b->kind == Val::Type)
    return foldBinary(cx, e.binaryOp, *a, *b, e.opLoc);
  std::string what = std::string("'") + spelling(e.binaryOp) + "'";
  Val vals[2] = {*a, *b};
  SMLoc locs[2] = {aLoc, bLoc};
  llvm::SmallVector<mlir::Value> ops;
  if (!unify(cx, vals, locs, e.opLoc, what, ops))
    return std::nullopt;
  return buildBinary(cx, e.binaryOp, ops[0], ops[1], e.opLoc, what);
}

//===----------------------------------------------------------------------===//
// Subscripts and calls
//===----------------------------------------------------------------------===//

OptVal IRGen::evalSubscript(const Expr &e) {
  if (e.lhs->kind == ExprKind::Name) {
    Binding *b = scopes.lookup(e.lhs->name);
    if (b && b->val.kind == Val::Global)
      return cx.error(e.loc, "a window of tensor parameter '" + e.lhs->name +
                                 "' can only be the first argument of load() "
                                 "or store()");
  }
  OptVal base = evalPlain(*e.lhs);
  if (!base)
    return std::nullopt;
  if (base->kind != Val::Runtime || !isTile(base->v.getType()))
    return cx.error(e.opLoc, "cannot subscript " + describe(*base) +
                                 "; only tiles (with ':' and None) and tensor "
                                 "parameters (in load/store) can be "
                                 "subscripted");
  mlir::Value v = base->v;
  auto shape = shapeOf(v.getType());
  unsigned full = 0;
  for (auto &en : e.entries) {
    if (en.kind == SubscriptEntry::Full)
      ++full;
    else if (en.kind != SubscriptEntry::NewAxis)
      return cx.error(en.loc, "a tile can only be subscripted with ':' (keep "
                              "a dim) and None (insert a dim of size 1); "
                              "indexing or slicing a tile is not supported");
  }
  if (full != shape.size())
    return cx.error(e.opLoc, "subscript of a tile of shape " + shapeStr(shape) +
                                 " needs exactly " + Twine(shape.size()) +
                                 (shape.size() == 1 ? " ':' entry"
                                                    : " ':' entries") +
                                 " (one per dim), got " + Twine(full));
  unsigned pos = 0;
  llvm::SmallVector<int64_t> cur = shape;
  for (auto &en : e.entries) {
    if (en.kind == SubscriptEntry::Full) {
      ++pos;
      continue;
    }
    cur.insert(cur.begin() + pos, 1);
    if (!checkShape(cx, cur, en.loc))
      return std::nullopt;
    v = tile::ExpandDimsOp::create(cx.builder, cx.loc(en.loc),
                                   tileType(cur, elementType(v.getType())), v,
                                   cx.builder.getI64IntegerAttr(pos))
            .getResult();
    ++pos;
  }
  return Val::ofValue(v);
}

const Builtin *IRGen::resolveBuiltin(const Expr &call) {
  return resolveCall(cx, call, inGrid, scopes.lookup(call.name) != nullptr);
}

OptVal IRGen::evalCall(const Expr &e) {
  // A parameter bound to a function calls that function.
  if (Binding *b = scopes.lookup(e.name); b && b->val.kind == Val::Function) {
    Val callee = b->val;
    return inlineCall(e, *callee.fn, callee.boundTo);
  }
  if (const FunctionDecl *fn = cx.program.lookupFunction(e.name))
    return inlineCall(e, *fn);
  if (!lookupBuiltin(e.name) && !cx.program.functions.empty())
    return reportUnknownFunction(e);
  const Builtin *builtin = resolveBuiltin(e);
  if (!builtin)
    return std::nullopt;
  BuiltinCall call(*this, e, *builtin);
  return builtin->handler(call);
}

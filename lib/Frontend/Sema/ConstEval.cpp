//===- ConstEval.cpp ------------------------------------------------------===//

#include "Sema/ConstEval.h"
#include "Sema/Types.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

static OptVal foldBool(FrontendContext &cx, BinaryOp op, const Val &a,
                       const Val &b, SMLoc opLoc) {
  const char *sp = spelling(op);
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (a.kind != Val::Bool || b.kind != Val::Bool)
      return cx.error(opLoc, Twine("operator '") + sp +
                                 "' needs bool operands, got " + describe(a) +
                                 " and " + describe(b));
    return Val::ofBool(op == BinaryOp::And ? (a.b && b.b) : (a.b || b.b));
  }
  if (a.kind == Val::Bool && b.kind == Val::Bool &&
      (op == BinaryOp::Eq || op == BinaryOp::Ne))
    return Val::ofBool(op == BinaryOp::Eq ? a.b == b.b : a.b != b.b);
  return cx.error(opLoc, Twine("operator '") + sp + "' is not defined on " +
                             describe(a) + " and " + describe(b));
}

/// Comparisons fold in the operands' own type: int64 compares exactly.
template <typename T>
static OptVal foldComparison(BinaryOp op, T x, T y) {
  switch (op) {
  case BinaryOp::Lt:
    return Val::ofBool(x < y);
  case BinaryOp::Le:
    return Val::ofBool(x <= y);
  case BinaryOp::Gt:
    return Val::ofBool(x > y);
  case BinaryOp::Ge:
    return Val::ofBool(x >= y);
  case BinaryOp::Eq:
    return Val::ofBool(x == y);
  case BinaryOp::Ne:
    return Val::ofBool(x != y);
  default:
    return std::nullopt;
  }
}

static OptVal foldInt(FrontendContext &cx, BinaryOp op, int64_t x, int64_t y,
                      SMLoc opLoc) {
  int64_t r = 0;
  auto overflow = [&] {
    return cx.error(opLoc, "integer overflow in constant expression " +
                               Twine(x) + " " + spelling(op) + " " + Twine(y));
  };
  switch (op) {
  case BinaryOp::Add:
    if (__builtin_add_overflow(x, y, &r))
      return overflow();
    return Val::ofInt(r);
  case BinaryOp::Sub:
    if (__builtin_sub_overflow(x, y, &r))
      return overflow();
    return Val::ofInt(r);
  case BinaryOp::Mul:
    if (__builtin_mul_overflow(x, y, &r))
      return overflow();
    return Val::ofInt(r);
  case BinaryOp::Div:
  case BinaryOp::Rem:
    if (y == 0)
      return cx.error(opLoc, Twine("division by zero in constant expression ") +
                                 Twine(x) + " " + spelling(op) + " 0");
    if (x == INT64_MIN && y == -1)
      return cx.error(opLoc, "integer overflow in constant expression");
    return Val::ofInt(op == BinaryOp::Div ? x / y : x % y);
  default:
    if (OptVal r = foldComparison(op, x, y))
      return r;
    return cx.error(opLoc, "unsupported constant operation");
  }
}

static OptVal foldFloat(FrontendContext &cx, BinaryOp op, double x, double y,
                        SMLoc opLoc) {
  switch (op) {
  case BinaryOp::Add:
    return Val::ofFloat(x + y);
  case BinaryOp::Sub:
    return Val::ofFloat(x - y);
  case BinaryOp::Mul:
    return Val::ofFloat(x * y);
  case BinaryOp::Div:
    if (y == 0)
      return cx.error(opLoc, "division by zero in constant expression");
    return Val::ofFloat(x / y);
  case BinaryOp::Rem:
    if (y == 0)
      return cx.error(opLoc, "division by zero in constant expression");
    return Val::ofFloat(std::fmod(x, y));
  default:
    if (OptVal r = foldComparison(op, x, y))
      return r;
    return cx.error(opLoc, "unsupported constant operation");
  }
}

/// Types compare for equality only (`T == bf16`).
static OptVal foldTypes(FrontendContext &cx, BinaryOp op, const Val &a,
                        const Val &b, SMLoc opLoc) {
  if (a.kind == Val::Type && b.kind == Val::Type &&
      (op == BinaryOp::Eq || op == BinaryOp::Ne))
    return Val::ofBool((a.type == b.type) == (op == BinaryOp::Eq));
  return cx.error(opLoc, Twine("operator '") + spelling(op) +
                             "' is not defined on " + describe(a) + " and " +
                             describe(b) +
                             "; types only compare with == and !=");
}

OptVal frontend::foldBinary(FrontendContext &cx, BinaryOp op, const Val &a,
                            const Val &b, SMLoc opLoc) {
  if (a.kind == Val::Type || b.kind == Val::Type)
    return foldTypes(cx, op, a, b, opLoc);
  if (op == BinaryOp::And || op == BinaryOp::Or || a.kind == Val::Bool ||
      b.kind == Val::Bool)
    return foldBool(cx, op, a, b, opLoc);
  if (a.kind == Val::Int && b.kind == Val::Int)
    return foldInt(cx, op, a.i, b.i, opLoc);
  return foldFloat(cx, op, a.asDouble(), b.asDouble(), opLoc);
}

OptVal frontend::foldUnary(FrontendContext &cx, UnaryOp op, const Val &x,
                           SMLoc opLoc) {
  if (op == UnaryOp::Not) {
    if (x.kind == Val::Bool)
      return Val::ofBool(!x.b);
    return cx.error(opLoc, "operator '!' needs a bool operand, got " +
                               describe(x));
  }
  if (x.kind == Val::Int) {
    if (x.i == INT64_MIN)
      return cx.error(opLoc, "integer overflow in constant expression");
    return Val::ofInt(-x.i);
  }
  if (x.kind == Val::Float)
    return Val::ofFloat(-x.f);
  return cx.error(opLoc, "unary '-' is not defined on bool values; use '!'");
}

std::optional<Val> frontend::parseDefineValue(ConstParam::Kind kind,
                                              llvm::StringRef text,
                                              mlir::Builder &builder) {
  text = text.trim();
  if (kind == ConstParam::Type) {
    if (std::optional<mlir::Type> t = builtinTypeNamed(text, builder))
      return Val::ofType(*t);
    return std::nullopt;
  }
  if (kind == ConstParam::Bool) {
    if (text == "true")
      return Val::ofBool(true);
    if (text == "false")
      return Val::ofBool(false);
    return std::nullopt;
  }
  int64_t iv;
  if (!text.getAsInteger(10, iv))
    return kind == ConstParam::Int ? Val::ofInt(iv) : Val::ofFloat((double)iv);
  if (kind == ConstParam::Int)
    return std::nullopt;
  if (text == "inf" || text == "+inf")
    return Val::ofFloat(INFINITY);
  if (text == "-inf")
    return Val::ofFloat(-INFINITY);
  if (text.empty())
    return std::nullopt;
  std::string s = text.str();
  // Only plain decimal literals (no hex floats, nan, ...).
  for (char c : s)
    if (!(std::isdigit((unsigned char)c) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return std::nullopt;
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d))
    return std::nullopt;
  return Val::ofFloat(d);
}

//===- AST.cpp ------------------------------------------------------------===//

#include "AST.h"

using namespace flash;
using namespace flash::ast;

const char *ast::spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  return "?";
}

static bool equalPtr(const ExprPtr &a, const ExprPtr &b) {
  if (!a || !b)
    return !a && !b;
  return structurallyEqual(*a, *b);
}

bool ast::structurallyEqual(const Expr &a, const Expr &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case ExprKind::IntLit:
    return a.intValue == b.intValue;
  case ExprKind::FloatLit:
    return a.floatValue == b.floatValue;
  case ExprKind::BoolLit:
    return a.boolValue == b.boolValue;
  case ExprKind::InfLit:
  case ExprKind::NoneLit:
    return true;
  case ExprKind::Name:
    return a.name == b.name;
  case ExprKind::Unary:
    return a.unaryOp == b.unaryOp && equalPtr(a.lhs, b.lhs);
  case ExprKind::Binary:
    return a.binaryOp == b.binaryOp && equalPtr(a.lhs, b.lhs) &&
           equalPtr(a.rhs, b.rhs);
  case ExprKind::Call:
  case ExprKind::List:
  case ExprKind::Subscript:
    // Calls may have effects or differ per evaluation; never equal.
    return false;
  }
  return false;
}

//===- GridExpr.h - the grid-expression language of the sidecar -*- C++ -*-===//
//
// The launch sidecar states a kernel's grid as three expressions over dim
// symbols and integer scalar parameters, e.g. "cdiv(Nq, 128)", "B * H". This
// is the one C++ definition of that language: the sidecar writer
// (lib/Target/Sidecar.cpp) prints it, the launcher (lib/Launcher) evaluates
// it. bench/benchlib.py has a Python evaluator; both evaluators are checked
// against the shared vectors in test/Inputs/grid-exprs.txt.
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | NAME | NAME '(' expr ',' expr ')' | '(' expr ')'
//   NAME    := [A-Za-z_][A-Za-z0-9_]*
//
// Values are int64; overflow, division by zero and unknown symbols are
// errors. `/` and `%` truncate toward zero (arith.divsi / remsi); the calls
// are cdiv (ceildivsi), floordiv (floordivsi), min and max.
//
// No MLIR: the launcher builds on a GPU machine without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_RUNTIME_GRIDEXPR_H
#define FLASHC_RUNTIME_GRIDEXPR_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace flash::grid {

enum class Op { Add, Sub, Mul, Div, Rem, CeilDiv, FloorDiv, Min, Max };

/// How an operator is written: infix with a precedence (2 binds tighter
/// than 1), or called by name (precedence 0).
struct OpSpelling {
  Op op;
  std::string_view name;
  int precedence;
};
const OpSpelling &spellingOf(Op op);

/// `a op b` in int64. False, with `error` ("int64 overflow", "division by
/// zero ..."), where the result is not an int64.
bool apply(Op op, int64_t a, int64_t b, int64_t &result, std::string &error);

/// An expression in printed form, with what an enclosing operator needs to
/// parenthesize it: the printer puts parentheses only where evaluation
/// needs them (and around negative numbers that are operands).
class Expr {
public:
  static Expr integer(int64_t value);
  static Expr symbol(std::string name);
  static Expr apply(Op op, const Expr &lhs, const Expr &rhs);

  const std::string &text() const { return printed; }

private:
  Expr(std::string text, int precedence, std::optional<Op> top)
      : printed(std::move(text)), precedence(precedence), top(top) {}

  std::string printed;
  int precedence;        ///< of the outermost operator; 3 for atoms and calls
  std::optional<Op> top; ///< the outermost infix operator
};

using Symbols = std::map<std::string, int64_t>;

/// Parses and evaluates `text`. On failure `error` is one line,
/// "grid expression 'TEXT': WHAT", naming the first problem found.
bool evaluate(const std::string &text, const Symbols &symbols, int64_t &value,
              std::string &error);

} // namespace flash::grid

#endif // FLASHC_RUNTIME_GRIDEXPR_H

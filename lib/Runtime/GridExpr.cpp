//===- GridExpr.cpp - the grid-expression language of the sidecar ---------===//
#include "flashc/Runtime/GridExpr.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace flash::grid {

namespace {

constexpr OpSpelling kSpellings[] = {
    {Op::Add, "+", 1},
    {Op::Sub, "-", 1},
    {Op::Mul, "*", 2},
    {Op::Div, "/", 2},
    {Op::Rem, "%", 2},
    {Op::CeilDiv, "cdiv", 0},
    {Op::FloorDiv, "floordiv", 0},
    {Op::Min, "min", 0},
    {Op::Max, "max", 0},
};

constexpr int kAtomPrecedence = 3;
/// Deeper nesting is refused rather than risking the stack.
constexpr int kMaxDepth = 100;

std::optional<Op> infixOp(char c, int precedence) {
  for (const OpSpelling &s : kSpellings)
    if (s.precedence == precedence && s.name.size() == 1 && s.name[0] == c)
      return s.op;
  return std::nullopt;
}

std::optional<Op> calledOp(std::string_view name) {
  for (const OpSpelling &s : kSpellings)
    if (s.precedence == 0 && s.name == name)
      return s.op;
  return std::nullopt;
}

/// "cdiv, floordiv, min or max".
std::string calledNames() {
  std::string names, last;
  for (const OpSpelling &s : kSpellings) {
    if (s.precedence != 0)
      continue;
    if (!last.empty())
      names += (names.empty() ? "" : ", ") + last;
    last = std::string(s.name);
  }
  return names + " or " + last;
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// A recursive-descent parser that evaluates as it goes; the first error
/// wins.
class Evaluator {
public:
  Evaluator(const std::string &text, const Symbols &symbols)
      : s(text), symbols(symbols) {}

  bool run(int64_t &value, std::string &error) {
    bool ok = expr(value, 0);
    skip();
    if (ok && pos != s.size())
      ok = fail("unexpected '" + s.substr(pos, 1) + "'");
    if (!ok)
      error = "grid expression '" + s + "': " + why;
    return ok;
  }

private:
  bool fail(const std::string &message) {
    if (why.empty())
      why = message;
    return false;
  }
  void skip() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos])))
      ++pos;
  }
  bool eat(char c) {
    skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool applyOp(Op op, int64_t a, int64_t b, int64_t &r) {
    std::string message;
    return grid::apply(op, a, b, r, message) || fail(message);
  }

  /// One level of infix operators, left-associative.
  template <typename Operand>
  bool infix(int precedence, int64_t &v, Operand operand) {
    if (!operand(v))
      return false;
    while (true) {
      skip();
      std::optional<Op> op =
          pos < s.size() ? infixOp(s[pos], precedence) : std::nullopt;
      if (!op)
        return true;
      ++pos;
      int64_t r;
      if (!operand(r) || !applyOp(*op, v, r, v))
        return false;
    }
  }
  bool expr(int64_t &v, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    return infix(1, v, [&](int64_t &t) { return term(t, depth); });
  }
  bool term(int64_t &v, int depth) {
    return infix(2, v, [&](int64_t &u) { return unary(u, depth); });
  }
  bool unary(int64_t &v, int depth) {
    if (!eat('-'))
      return primary(v, depth);
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    return unary(v, depth + 1) && applyOp(Op::Sub, 0, v, v);
  }
  bool primary(int64_t &v, int depth);
  bool integer(int64_t &v);
  bool nameOrCall(int64_t &v, int depth);

  const std::string &s;
  const Symbols &symbols;
  size_t pos = 0;
  std::string why;
};

bool Evaluator::primary(int64_t &v, int depth) {
  skip();
  if (pos >= s.size())
    return fail("unexpected end of expression");
  char c = s[pos];
  if (c == '(') {
    ++pos;
    return expr(v, depth + 1) && (eat(')') || fail("expected ')'"));
  }
  if (std::isdigit(static_cast<unsigned char>(c)))
    return integer(v);
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
    return nameOrCall(v, depth);
  return fail(std::string("unexpected '") + c + "'");
}

bool Evaluator::integer(int64_t &v) {
  size_t start = pos;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))
    ++pos;
  errno = 0;
  v = std::strtoll(s.substr(start, pos - start).c_str(), nullptr, 10);
  return errno != ERANGE || fail("int64 overflow");
}

bool Evaluator::nameOrCall(int64_t &v, int depth) {
  size_t start = pos;
  while (pos < s.size() && isNameChar(s[pos]))
    ++pos;
  std::string name = s.substr(start, pos - start);
  skip();
  if (pos < s.size() && s[pos] == '(') {
    ++pos;
    int64_t a, b;
    if (!expr(a, depth + 1) || !(eat(',') || fail("expected ','")) ||
        !expr(b, depth + 1) || !(eat(')') || fail("expected ')'")))
      return false;
    std::optional<Op> op = calledOp(name);
    if (!op)
      return fail("unknown function '" + name + "' (expected " + calledNames() +
                  ")");
    return applyOp(*op, a, b, v);
  }
  auto it = symbols.find(name);
  if (it == symbols.end())
    return fail("unknown symbol '" + name + "'");
  v = it->second;
  return true;
}

/// `/` and `%` truncate toward zero; cdiv and floordiv round an inexact
/// quotient up or down instead.
bool divide(Op op, int64_t a, int64_t b, int64_t &r, std::string &error) {
  std::string_view name = spellingOf(op).name;
  if (b == 0) {
    error = spellingOf(op).precedence
                ? std::string("division by zero")
                : "division by zero in " + std::string(name);
    return false;
  }
  if (a == std::numeric_limits<int64_t>::min() && b == -1) {
    error = "int64 overflow";
    return false;
  }
  int64_t q = a / b, rem = a % b;
  bool inexact = rem != 0;
  if (op == Op::CeilDiv && inexact && (rem < 0) == (b < 0))
    ++q;
  if (op == Op::FloorDiv && inexact && (rem < 0) != (b < 0))
    --q;
  r = op == Op::Rem ? rem : q;
  return true;
}

} // namespace

const OpSpelling &spellingOf(Op op) {
  for (const OpSpelling &s : kSpellings)
    if (s.op == op)
      return s;
  return kSpellings[0];
}

bool apply(Op op, int64_t a, int64_t b, int64_t &r, std::string &error) {
  bool overflow = false;
  switch (op) {
  case Op::Add:
    overflow = __builtin_add_overflow(a, b, &r);
    break;
  case Op::Sub:
    overflow = __builtin_sub_overflow(a, b, &r);
    break;
  case Op::Mul:
    overflow = __builtin_mul_overflow(a, b, &r);
    break;
  case Op::Min:
    r = a < b ? a : b;
    break;
  case Op::Max:
    r = a > b ? a : b;
    break;
  case Op::Div:
  case Op::Rem:
  case Op::CeilDiv:
  case Op::FloorDiv:
    return divide(op, a, b, r, error);
  }
  if (overflow)
    error = "int64 overflow";
  return !overflow;
}

Expr Expr::integer(int64_t value) {
  // A negative number binds like a subtraction: "x + (-3)", "(-3) * x".
  if (value < 0)
    return Expr(std::to_string(value), 1, Op::Sub);
  return Expr(std::to_string(value), kAtomPrecedence, std::nullopt);
}

Expr Expr::symbol(std::string name) {
  return Expr(std::move(name), kAtomPrecedence, std::nullopt);
}

Expr Expr::apply(Op op, const Expr &lhs, const Expr &rhs) {
  const OpSpelling &spelling = spellingOf(op);
  std::string name(spelling.name);
  if (spelling.precedence == 0)
    return Expr(name + "(" + lhs.printed + ", " + rhs.printed + ")",
                kAtomPrecedence, std::nullopt);
  int p = spelling.precedence;
  // Left-associative: the right operand needs parentheses at the same
  // precedence unless regrouping does not change the value (a + (b + c)).
  bool associative = op == Op::Add || op == Op::Mul;
  bool leftParens = lhs.precedence < p;
  bool rightParens = rhs.precedence < p ||
                     (rhs.precedence == p && !(associative && rhs.top == op));
  std::string left = leftParens ? "(" + lhs.printed + ")" : lhs.printed;
  std::string right = rightParens ? "(" + rhs.printed + ")" : rhs.printed;
  return Expr(left + " " + name + " " + right, p, op);
}

bool evaluate(const std::string &text, const Symbols &symbols, int64_t &value,
              std::string &error) {
  return Evaluator(text, symbols).run(value, error);
}

} // namespace flash::grid

//===- GridExprTest.cpp - the grid-expression language
//---------------------===//
//
// The evaluator on hand-picked cases and on the vectors it shares with bench's
// Python evaluator (test/Inputs/grid-exprs.txt, FLASH_GRID_EXPRS_PATH), and
// the printer the sidecar writer uses: what it prints evaluates to the value
// of the expression it was given.
//
//===----------------------------------------------------------------------===//

#include "flashc/Runtime/GridExpr.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace flash;

namespace {

int64_t eval(const std::string &e, std::map<std::string, int64_t> syms = {}) {
  int64_t v = -12345;
  std::string err;
  EXPECT_TRUE(grid::evaluate(e, syms, v, err)) << e << ": " << err;
  return v;
}

std::string evalError(const std::string &e,
                      std::map<std::string, int64_t> syms = {}) {
  int64_t v;
  std::string err;
  EXPECT_FALSE(grid::evaluate(e, syms, v, err)) << e << " evaluated to " << v;
  return err;
}

TEST(GridExpr, PrecedenceAndAssociativity) {
  EXPECT_EQ(eval("1"), 1);
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 3 - 2"), 5);
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("7 % 4 * 3"), 9);
  EXPECT_EQ(eval("2 * -3"), -6);
  EXPECT_EQ(eval("-(2 + 3)"), -5);
  EXPECT_EQ(eval("  4*( 5 -1 )  "), 16);
}

TEST(GridExpr, CSemanticsAndCalls) {
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("cdiv(7, 2)"), 4);
  EXPECT_EQ(eval("cdiv(8, 2)"), 4);
  EXPECT_EQ(eval("cdiv(-7, 2)"), -3);
  EXPECT_EQ(eval("floordiv(-7, 2)"), -4);
  EXPECT_EQ(eval("floordiv(7, 2)"), 3);
  EXPECT_EQ(eval("min(3, -4)"), -4);
  EXPECT_EQ(eval("max(3, min(10, 5 * 2 + 1))"), 10);
}

TEST(GridExpr, Symbols) {
  std::map<std::string, int64_t> s{
      {"Nq", 200}, {"B", 2}, {"H", 3}, {"n_ctx", 5}};
  EXPECT_EQ(eval("cdiv(Nq, 128)", s), 2);
  EXPECT_EQ(eval("B * H", s), 6);
  EXPECT_EQ(eval("cdiv(Nq, 64) * B * H + n_ctx", s), 29);
}

TEST(GridExpr, Errors) {
  EXPECT_EQ(evalError("cdiv(Nq, 128)"),
            "grid expression 'cdiv(Nq, 128)': unknown symbol 'Nq'");
  EXPECT_EQ(evalError("4 / (2 - 2)"),
            "grid expression '4 / (2 - 2)': division by zero");
  EXPECT_EQ(evalError("5 % 0"), "grid expression '5 % 0': division by zero");
  EXPECT_NE(evalError("cdiv(1, 0)").find("division by zero"),
            std::string::npos);
  EXPECT_NE(evalError("9223372036854775807 + 1").find("int64 overflow"),
            std::string::npos);
  EXPECT_NE(evalError("4611686018427387904 * 2").find("int64 overflow"),
            std::string::npos);
  EXPECT_NE(evalError("99999999999999999999").find("int64 overflow"),
            std::string::npos);
  EXPECT_NE(evalError("1 2").find("unexpected '2'"), std::string::npos);
  EXPECT_NE(evalError("(1 + 2").find("expected ')'"), std::string::npos);
  EXPECT_NE(evalError("cdiv(1)").find("expected ','"), std::string::npos);
  EXPECT_NE(evalError("pow(2, 3)").find("unknown function 'pow'"),
            std::string::npos);
  EXPECT_NE(evalError("").find("unexpected end"), std::string::npos);
  EXPECT_NE(evalError("1 +").find("unexpected end"), std::string::npos);
  EXPECT_NE(evalError("2 ^ 3").find("unexpected '^'"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The shared vectors
//===----------------------------------------------------------------------===//

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

struct Vector {
  int line;
  std::string expr;
  grid::Symbols symbols;
  std::string expected; ///< a number, or "error[ TEXT]"
};

std::vector<Vector> readVectors() {
  std::vector<Vector> vectors;
  std::ifstream in(FLASH_GRID_EXPRS_PATH);
  EXPECT_TRUE(in) << "cannot read " << FLASH_GRID_EXPRS_PATH;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (trim(text).empty() || trim(text)[0] == '#')
      continue;
    size_t bar1 = text.find('|'), bar2 = text.find('|', bar1 + 1);
    EXPECT_NE(bar2, std::string::npos) << "line " << line << ": " << text;
    if (bar2 == std::string::npos)
      continue;
    Vector v{line, trim(text.substr(0, bar1)), {}, trim(text.substr(bar2 + 1))};
    std::istringstream bindings(text.substr(bar1 + 1, bar2 - bar1 - 1));
    for (std::string binding; bindings >> binding;) {
      size_t eq = binding.find('=');
      v.symbols[binding.substr(0, eq)] = std::stoll(binding.substr(eq + 1));
    }
    vectors.push_back(std::move(v));
  }
  return vectors;
}

TEST(GridExpr, SharedVectors) {
  std::vector<Vector> vectors = readVectors();
  EXPECT_GT(vectors.size(), 50u);
  for (const Vector &v : vectors) {
    int64_t value = 0;
    std::string error;
    bool ok = grid::evaluate(v.expr, v.symbols, value, error);
    std::string where = "line " + std::to_string(v.line) + ": '" + v.expr + "'";
    if (v.expected.rfind("error", 0) == 0) {
      EXPECT_FALSE(ok) << where << " evaluated to " << value;
      std::string text = trim(v.expected.substr(5));
      EXPECT_NE(error.find(text), std::string::npos)
          << where << ": '" << error << "' does not say '" << text << "'";
    } else {
      EXPECT_TRUE(ok) << where << ": " << error;
      EXPECT_EQ(std::to_string(value), v.expected) << where;
    }
  }
}

//===----------------------------------------------------------------------===//
// The printer
//===----------------------------------------------------------------------===//

/// An expression and its value, computed by grid::apply directly.
struct Valued {
  grid::Expr expr;
  std::optional<int64_t> value;
};

Valued combine(grid::Op op, const Valued &lhs, const Valued &rhs) {
  std::optional<int64_t> value;
  int64_t r;
  std::string ignored;
  if (lhs.value && rhs.value &&
      grid::apply(op, *lhs.value, *rhs.value, r, ignored))
    value = r;
  return {grid::Expr::apply(op, lhs.expr, rhs.expr), value};
}

const grid::Symbols kSymbols{{"a", 7}, {"b", -3}, {"c", 2}};

/// Checks that the printed form parses back to the same value.
void expectEvaluatesBack(const Valued &v) {
  int64_t value = 0;
  std::string error;
  bool ok = grid::evaluate(v.expr.text(), kSymbols, value, error);
  ASSERT_EQ(ok, v.value.has_value()) << v.expr.text() << ": " << error;
  if (ok) {
    EXPECT_EQ(value, *v.value) << v.expr.text();
  }
}

TEST(GridExpr, PrintedFormEvaluatesBack) {
  const grid::Op ops[] = {grid::Op::Add,      grid::Op::Sub, grid::Op::Mul,
                          grid::Op::Div,      grid::Op::Rem, grid::Op::CeilDiv,
                          grid::Op::FloorDiv, grid::Op::Min, grid::Op::Max};
  std::vector<Valued> leaves = {{grid::Expr::symbol("a"), 7},
                                {grid::Expr::symbol("b"), -3},
                                {grid::Expr::integer(5), 5},
                                {grid::Expr::integer(-2), -2}};
  // Every operator over every other one, on either side.
  for (grid::Op inner : ops)
    for (grid::Op outer : ops)
      for (const Valued &x : leaves)
        for (const Valued &y : leaves) {
          Valued sub = combine(inner, x, y);
          expectEvaluatesBack(sub);
          expectEvaluatesBack(combine(outer, sub, leaves[0]));
          expectEvaluatesBack(combine(outer, leaves[1], sub));
          expectEvaluatesBack(combine(outer, sub, sub));
        }
}

TEST(GridExpr, PrintsOnlyTheParenthesesItNeeds) {
  grid::Expr a = grid::Expr::symbol("a"), b = grid::Expr::symbol("b"),
             c = grid::Expr::symbol("c");
  auto apply = [](grid::Op op, const grid::Expr &l, const grid::Expr &r) {
    return grid::Expr::apply(op, l, r);
  };
  using grid::Op;
  EXPECT_EQ(apply(Op::Sub, apply(Op::Sub, a, b), c).text(), "a - b - c");
  EXPECT_EQ(apply(Op::Sub, a, apply(Op::Sub, b, c)).text(), "a - (b - c)");
  EXPECT_EQ(apply(Op::Add, a, apply(Op::Add, b, c)).text(), "a + b + c");
  EXPECT_EQ(apply(Op::Add, a, apply(Op::Sub, b, c)).text(), "a + (b - c)");
  EXPECT_EQ(apply(Op::Mul, apply(Op::Add, a, b), c).text(), "(a + b) * c");
  EXPECT_EQ(apply(Op::Add, a, apply(Op::Mul, b, c)).text(), "a + b * c");
  EXPECT_EQ(apply(Op::Div, a, apply(Op::Mul, b, c)).text(), "a / (b * c)");
  EXPECT_EQ(apply(Op::Add, a, grid::Expr::integer(-3)).text(), "a + (-3)");
  EXPECT_EQ(apply(Op::Mul, grid::Expr::integer(-3), a).text(), "(-3) * a");
  EXPECT_EQ(apply(Op::Sub, grid::Expr::integer(-3), a).text(), "-3 - a");
  EXPECT_EQ(apply(Op::CeilDiv, apply(Op::Add, a, b), c).text(),
            "cdiv(a + b, c)");
}

} // namespace

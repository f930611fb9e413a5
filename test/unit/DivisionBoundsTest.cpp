//===- DivisionBoundsTest.cpp - the inverses the mask analysis uses -------===//
//
// leastAtLeast builds, before a key loop, the least numerator x with
// op(x, w) >= t; with constant operands it folds to a constant. These tests
// compare that constant with brute force over negative and positive x, t
// and w, for the language's truncating `/` (C semantics, what the
// interpreter and the emulator compute) and for floor and ceil division.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/DivisionBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using flash::leastAtLeast;
using flash::MonotoneMap;

namespace {

int64_t floorDiv(int64_t x, int64_t w) {
  int64_t q = x / w;
  return (x % w != 0 && (x < 0) != (w < 0)) ? q - 1 : q;
}

int64_t ceilDiv(int64_t x, int64_t w) {
  int64_t q = x / w;
  return (x % w != 0 && (x < 0) == (w < 0)) ? q + 1 : q;
}

int64_t apply(MonotoneMap op, int64_t x, int64_t w) {
  switch (op) {
  case MonotoneMap::Mul: return x * w;
  case MonotoneMap::DivSI: return x / w; // truncates toward zero
  case MonotoneMap::FloorDivSI: return floorDiv(x, w);
  case MonotoneMap::CeilDivSI: return ceilDiv(x, w);
  }
  return 0;
}

class DivisionBoundsTest : public ::testing::Test {
public:
  DivisionBoundsTest() {
    context.loadDialect<arith::ArithDialect>();
    module = ModuleOp::create(UnknownLoc::get(&context));
  }
  ~DivisionBoundsTest() override { module->erase(); }

  /// leastAtLeast(op, t, w) folded to a constant (i32 operands).
  std::optional<int64_t> least(MonotoneMap op, int64_t t, int64_t w) {
    OpBuilder builder(&context);
    builder.setInsertionPointToEnd(module.getBody());
    Location loc = builder.getUnknownLoc();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getI32IntegerAttr(v));
    };
    Value bound = leastAtLeast(builder, loc, op, constant(t), constant(w));
    APInt value;
    if (!matchPattern(bound, m_ConstantInt(&value)))
      return std::nullopt;
    return value.getSExtValue();
  }

  MLIRContext context;
  ModuleOp module;
};

void checkAll(DivisionBoundsTest &test, MonotoneMap op) {
  for (int64_t w = 1; w <= 7; ++w)
    for (int64_t t = -15; t <= 15; ++t) {
      std::optional<int64_t> x0 = test.least(op, t, w);
      ASSERT_TRUE(x0) << "no constant for t " << t << ", w " << w;
      for (int64_t x = -120; x <= 120; ++x)
        ASSERT_EQ(apply(op, x, w) >= t, x >= *x0)
            << "x " << x << ", w " << w << ", t " << t << ": least " << *x0;
    }
}

TEST_F(DivisionBoundsTest, TruncatingDivision) {
  checkAll(*this, MonotoneMap::DivSI);
}

TEST_F(DivisionBoundsTest, FloorDivision) {
  checkAll(*this, MonotoneMap::FloorDivSI);
}

TEST_F(DivisionBoundsTest, CeilDivision) {
  checkAll(*this, MonotoneMap::CeilDivSI);
}

TEST_F(DivisionBoundsTest, Product) {
  checkAll(*this, MonotoneMap::Mul);
}

// The cases a mask meets: j / w >= i / w - 3 with negative quotients (rows
// before the first window), and the two boundaries of t <= 0.
TEST_F(DivisionBoundsTest, TruncationAroundZero) {
  EXPECT_EQ(least(MonotoneMap::DivSI, 1, 4), 4);   // x / 4 >= 1: x >= 4
  EXPECT_EQ(least(MonotoneMap::DivSI, 0, 4), -3);  // x / 4 >= 0: x > -4
  EXPECT_EQ(least(MonotoneMap::DivSI, -1, 4), -7); // -7 / 4 = -1, -8 / 4 = -2
  EXPECT_EQ(least(MonotoneMap::FloorDivSI, -1, 4), -4);
  EXPECT_EQ(least(MonotoneMap::CeilDivSI, -1, 4), -7);
  EXPECT_EQ(least(MonotoneMap::Mul, -5, 4), -1);   // -1 * 4 = -4 >= -5
}

} // namespace

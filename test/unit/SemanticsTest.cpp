//===- SemanticsTest.cpp - the shared arith / math scalar semantics -------===//
//
// Every ArithMathOpcode: its classification from MLIR and its value,
// including the edge cases both executors must agree on.
//
//===----------------------------------------------------------------------===//

#include "flashc/Semantics/ArithMathOpcode.h"
#include "flashc/Semantics/ScalarOps.h"
#include "flashc/Semantics/ScalarType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

using namespace flash::sem;
using O = ArithMathOpcode;

namespace {

constexpr int kNumOpcodes = static_cast<int>(O::Bitcast) + 1;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

const ScalarType kF16{ScalarType::F16}, kBF16{ScalarType::BF16},
    kF32{ScalarType::F32}, kF64{ScalarType::F64};
const ScalarType kI1 = ScalarType::integer(1), kI8 = ScalarType::integer(8),
                 kI32 = ScalarType::integer(32), kI64 = ScalarType::integer(64);

double pow2(int e) { return std::ldexp(1.0, e); }
bool isNegZero(double v) { return v == 0 && std::signbit(v); }
bool isPosZero(double v) { return v == 0 && !std::signbit(v); }

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

// One op per opcode, in enum order.
const char *kEveryOp = R"mlir(
func.func @every(%i: i32, %j: i32, %f: f32, %g: f32, %c: i1, %x: index,
                 %h: f16) {
  %0 = arith.addi %i, %j : i32
  %1 = arith.subi %i, %j : i32
  %2 = arith.muli %i, %j : i32
  %3 = arith.divsi %i, %j : i32
  %4 = arith.divui %i, %j : i32
  %5 = arith.remsi %i, %j : i32
  %6 = arith.remui %i, %j : i32
  %7 = arith.ceildivsi %i, %j : i32
  %8 = arith.ceildivui %i, %j : i32
  %9 = arith.floordivsi %i, %j : i32
  %10 = arith.maxsi %i, %j : i32
  %11 = arith.minsi %i, %j : i32
  %12 = arith.maxui %i, %j : i32
  %13 = arith.minui %i, %j : i32
  %14 = arith.andi %i, %j : i32
  %15 = arith.ori %i, %j : i32
  %16 = arith.xori %i, %j : i32
  %17 = arith.shli %i, %j : i32
  %18 = arith.shrsi %i, %j : i32
  %19 = arith.shrui %i, %j : i32
  %lo, %hi = arith.mului_extended %i, %j : i32
  %20 = math.absi %i : i32
  %21 = arith.addf %f, %g : f32
  %22 = arith.subf %f, %g : f32
  %23 = arith.mulf %f, %g : f32
  %24 = arith.divf %f, %g : f32
  %25 = arith.remf %f, %g : f32
  %26 = arith.maximumf %f, %g : f32
  %27 = arith.minimumf %f, %g : f32
  %28 = arith.maxnumf %f, %g : f32
  %29 = arith.minnumf %f, %g : f32
  %30 = math.powf %f, %g : f32
  %31 = math.copysign %f, %g : f32
  %32 = arith.negf %f : f32
  %33 = math.absf %f : f32
  %34 = math.exp %f : f32
  %35 = math.exp2 %f : f32
  %36 = math.expm1 %f : f32
  %37 = math.log %f : f32
  %38 = math.log2 %f : f32
  %39 = math.log10 %f : f32
  %40 = math.log1p %f : f32
  %41 = math.sqrt %f : f32
  %42 = math.rsqrt %f : f32
  %43 = math.tanh %f : f32
  %44 = math.sin %f : f32
  %45 = math.cos %f : f32
  %46 = math.erf %f : f32
  %47 = math.floor %f : f32
  %48 = math.ceil %f : f32
  %49 = math.round %f : f32
  %50 = math.roundeven %f : f32
  %51 = math.trunc %f : f32
  %exp2ftz = math.exp2 %f fastmath<afn> : f32
  %52 = math.fma %f, %g, %f : f32
  %53 = arith.cmpi ugt, %i, %j : i32
  %54 = arith.cmpf ole, %f, %g : f32
  %55 = arith.select %c, %f, %g : f32
  %56 = arith.extsi %i : i32 to i64
  %57 = arith.extui %i : i32 to i64
  %58 = arith.trunci %i : i32 to i8
  %59 = arith.index_cast %x : index to i32
  %60 = arith.index_castui %i : i32 to index
  %61 = arith.sitofp %i : i32 to f32
  %62 = arith.uitofp %i : i32 to f32
  %63 = arith.fptosi %f : f32 to i32
  %64 = arith.fptoui %f : f32 to i32
  %65 = arith.extf %h : f16 to f32
  %66 = arith.truncf %f : f32 to f16
  %67 = arith.bitcast %f : f32 to i32
  %k = arith.constant 1 : i32
  %a = math.atan %f : f32
  return
}
)mlir";

TEST(ArithMathOpcode, ClassifiesEveryOpInEnumOrder) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      kEveryOp, mlir::ParserConfig(&ctx));
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<mlir::func::FuncOp>("every");
  int next = 0;
  for (mlir::Operation &op : func.getBody().front()) {
    std::optional<ArithMathOp> c = classifyArithMath(&op);
    if (next == kNumOpcodes) {
      // arith.constant, math.atan and func.return are not ArithMath ops.
      EXPECT_FALSE(c) << op.getName().getStringRef().str();
      continue;
    }
    ASSERT_TRUE(c) << op.getName().getStringRef().str();
    EXPECT_EQ(static_cast<int>(c->opcode), next)
        << op.getName().getStringRef().str();
    if (c->opcode == O::CmpI) {
      EXPECT_EQ(c->intPredicate, IntPredicate::ugt);
    }
    if (c->opcode == O::CmpF) {
      EXPECT_EQ(c->floatPredicate, FloatPredicate::OLE);
    }
    ++next;
  }
  EXPECT_EQ(next, kNumOpcodes);
}

TEST(ArithMathOpcode, Kinds) {
  std::vector<int> count(static_cast<int>(ArithMathKind::Cast) + 1);
  for (int i = 0; i < kNumOpcodes; ++i)
    ++count[static_cast<int>(kindOf(static_cast<O>(i)))];
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::IntBinary)], 20);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::IntMulExtended)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::IntUnary)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::FloatBinary)], 11);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::FloatUnary)], 21);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::FloatTernary)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::CmpI)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::CmpF)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::Select)], 1);
  EXPECT_EQ(count[static_cast<int>(ArithMathKind::Cast)], 12);
  EXPECT_EQ(kindOf(O::ShRUI), ArithMathKind::IntBinary);
  EXPECT_EQ(kindOf(O::AddF), ArithMathKind::FloatBinary);
  EXPECT_EQ(kindOf(O::NegF), ArithMathKind::FloatUnary);
  EXPECT_EQ(kindOf(O::Trunc), ArithMathKind::FloatUnary);
  EXPECT_EQ(kindOf(O::ExtSI), ArithMathKind::Cast);
}

TEST(ScalarType, FromMlirTypes) {
  mlir::MLIRContext ctx;
  mlir::Builder b(&ctx);
  EXPECT_EQ(ScalarType::get(b.getF16Type()), kF16);
  EXPECT_EQ(ScalarType::get(b.getBF16Type()), kBF16);
  EXPECT_EQ(ScalarType::get(b.getType<mlir::Float8E4M3FNType>()),
            ScalarType{ScalarType::F8E4M3});
  EXPECT_EQ(ScalarType::get(b.getF32Type()), kF32);
  EXPECT_EQ(ScalarType::get(b.getF64Type()), kF64);
  EXPECT_EQ(ScalarType::get(b.getI1Type()), kI1);
  EXPECT_EQ(ScalarType::get(b.getIntegerType(7)), ScalarType::integer(7));
  EXPECT_EQ(ScalarType::get(b.getIndexType()), kI64);
  EXPECT_FALSE(ScalarType::get(b.getIntegerType(128)));
  EXPECT_FALSE(ScalarType::get(b.getF80Type()));
}

//===----------------------------------------------------------------------===//
// Every opcode's value, as a table that must name every opcode
//===----------------------------------------------------------------------===//

struct IntCase {
  O opc;
  ScalarType type;
  int64_t a, b, expected;
};

std::vector<IntCase> intCases() {
  return {
      {O::AddI, kI32, kI32Max, 1, kI32Min},
      {O::AddI, kI8, 127, 1, -128},
      {O::AddI, kI1, 1, 1, 0},
      {O::SubI, kI32, kI32Min, 1, kI32Max},
      {O::SubI, kI64, kI64Min, 1, kI64Max},
      {O::MulI, kI32, 65536, 65536, 0},
      {O::MulI, kI64, kI64Min, -1, kI64Min},
      {O::DivSI, kI32, 7, -2, -3},
      {O::DivSI, kI32, kI32Min, -1, kI32Min},
      {O::DivSI, kI64, kI64Min, -1, kI64Min},
      {O::DivSI, kI8, -128, -1, -128},
      {O::DivUI, kI32, -1, 2, kI32Max},
      {O::DivUI, kI64, -1, 2, kI64Max},
      {O::RemSI, kI32, -7, 2, -1},
      {O::RemSI, kI32, 7, -2, 1},
      {O::RemSI, kI32, kI32Min, -1, 0},
      {O::RemSI, kI64, kI64Min, -1, 0},
      {O::RemUI, kI32, -1, 10, 5}, // 4294967295 % 10
      {O::CeilDivSI, kI32, 7, 2, 4},
      {O::CeilDivSI, kI32, -7, 2, -3},
      {O::CeilDivSI, kI32, 7, -2, -3},
      {O::CeilDivSI, kI32, -7, -2, 4},
      {O::CeilDivSI, kI32, 6, 2, 3},
      {O::CeilDivSI, kI32, kI32Min, -1, kI32Min},
      {O::CeilDivSI, kI64, kI64Min, -1, kI64Min},
      {O::CeilDivUI, kI32, 7, 2, 4},
      {O::CeilDivUI, kI32, -1, 16, 0x10000000},
      {O::CeilDivUI, kI32, 0, 5, 0},
      {O::FloorDivSI, kI32, 7, 2, 3},
      {O::FloorDivSI, kI32, -7, 2, -4},
      {O::FloorDivSI, kI32, 7, -2, -4},
      {O::FloorDivSI, kI32, -7, -2, 3},
      {O::FloorDivSI, kI32, kI32Min, -1, kI32Min},
      {O::MaxSI, kI32, -1, 1, 1},
      {O::MaxSI, kI1, 1, 0, 0}, // a set i1 is -1 when signed
      {O::MinSI, kI32, -1, 1, -1},
      {O::MinSI, kI1, 1, 0, 1},
      {O::MaxUI, kI32, -1, 1, -1},
      {O::MaxUI, kI1, 1, 0, 1},
      {O::MinUI, kI32, -1, 1, 1},
      {O::AndI, kI32, 0b1100, 0b1010, 0b1000},
      {O::OrI, kI32, 0b1100, 0b1010, 0b1110},
      {O::XOrI, kI32, 0b1100, 0b1010, 0b0110},
      {O::XOrI, kI1, 1, 1, 0},
      {O::ShLI, kI32, 1, 31, kI32Min},
      {O::ShLI, kI32, 1, 32, 0},
      {O::ShLI, kI32, 1, -1, 0}, // the amount is unsigned: 2^32 - 1
      {O::ShLI, kI8, 1, 7, -128},
      {O::ShLI, kI64, 1, 63, kI64Min},
      {O::ShLI, kI64, 1, 64, 0},
      {O::ShRSI, kI32, -8, 1, -4},
      {O::ShRSI, kI32, -8, 31, -1},
      {O::ShRSI, kI32, -8, 32, -1},
      {O::ShRSI, kI32, 8, 40, 0},
      {O::ShRSI, kI64, kI64Min, 64, -1},
      {O::ShRSI, kI1, 1, 0, 1},
      {O::ShRUI, kI32, -8, 1, 0x7FFFFFFC},
      {O::ShRUI, kI32, -8, 32, 0},
      {O::ShRUI, kI64, -1, 63, 1},
      {O::ShRUI, kI64, -1, 64, 0},
  };
}

TEST(ScalarOps, IntBinary) {
  for (const IntCase &c : intCases()) {
    int64_t out = 12345;
    EXPECT_TRUE(evalIntBinary(c.opc, c.a, c.b, c.type.width, out));
    EXPECT_EQ(out, c.expected)
        << "opcode " << static_cast<int>(c.opc) << " i" << c.type.width << " ("
        << c.a << ", " << c.b << ")";
  }
}

TEST(ScalarOps, DivisionByZeroIsReported) {
  for (O opc : {O::DivSI, O::DivUI, O::RemSI, O::RemUI, O::CeilDivSI,
                O::CeilDivUI, O::FloorDivSI}) {
    for (ScalarType t : {kI1, kI32, kI64}) {
      int64_t out = 12345;
      EXPECT_FALSE(evalIntBinary(opc, 7, 0, t.width, out));
      EXPECT_EQ(out, 0);
    }
  }
  // Only the low w bits of the divisor count.
  int64_t out;
  EXPECT_FALSE(evalIntBinary(O::DivUI, 7, 256, 8, out));
}

TEST(ScalarOps, MulUIExtended) {
  struct Case {
    ScalarType type;
    int64_t a, b, low, high;
  };
  const Case cases[] = {
      // 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001.
      {kI32, -1, -1, 1, -2},
      // Philox's 0xD2511F53 times 0x9E3779B9 = 0x81FBA4C3_4942DDFB.
      {kI32, int32_t(0xD2511F53u), int32_t(0x9E3779B9u), int32_t(0x4942DDFBu),
       int32_t(0x81FBA4C3u)},
      {kI32, 65536, 65536, 0, 1},
      {kI32, 7, 3, 21, 0},
      {kI8, -1, 2, -2, 1}, // 255 * 2 = 0x01FE
      {kI64, -1, -1, 1, -2},
      {kI64, kI64Min, 2, 0, 1},
  };
  for (const Case &c : cases) {
    int64_t low = 12345, high = 12345;
    mulUIExtended(c.a, c.b, c.type.width, low, high);
    EXPECT_EQ(low, c.low) << "i" << c.type.width << " " << c.a << " * " << c.b;
    EXPECT_EQ(high, c.high) << "i" << c.type.width << " " << c.a << " * " << c.b;
  }
}

TEST(ScalarOps, AbsI) {
  EXPECT_EQ(evalIntUnary(O::AbsI, -5, 32), 5);
  EXPECT_EQ(evalIntUnary(O::AbsI, 5, 32), 5);
  EXPECT_EQ(evalIntUnary(O::AbsI, kI32Min, 32), kI32Min);
  EXPECT_EQ(evalIntUnary(O::AbsI, kI64Min, 64), kI64Min);
  EXPECT_EQ(evalIntUnary(O::AbsI, -128, 8), -128);
  EXPECT_EQ(evalIntUnary(O::AbsI, 1, 1), 1); // |-1| wraps to the set bit
}

struct FloatCase {
  O opc;
  ScalarType type;
  double a, b, expected;
};

std::vector<FloatCase> floatCases() {
  const float third = 1.0f / 3.0f;
  return {
      {O::AddF, kF64, 0.1, 0.2, 0.1 + 0.2},
      {O::AddF, kF32, 0.1f, 0.2f, static_cast<double>(0.1f + 0.2f)},
      {O::AddF, kF16, 1.0, pow2(-11), 1.0}, // tie to even
      {O::AddF, kF16, 65504.0, 16.0, kInf}, // overflows f16
      {O::AddF, kBF16, 1.0, pow2(-8), 1.0},
      {O::SubF, kF32, 1.0, 0.25, 0.75},
      {O::MulF, kF32, third, 3.0,
       static_cast<double>(float(double(third) * 3))},
      {O::DivF, kF64, 1.0, 0.0, kInf},
      {O::DivF, kF64, -1.0, 0.0, -kInf},
      {O::DivF, kF32, 1.0, 3.0, static_cast<double>(third)},
      {O::RemF, kF64, 7.5, 2.0, 1.5},
      {O::RemF, kF64, -7.5, 2.0, -1.5},
      {O::MaximumF, kF32, 1.0, 2.0, 2.0},
      {O::MaximumF, kF32, -1.0, -2.0, -1.0},
      {O::MinimumF, kF32, 1.0, 2.0, 1.0},
      {O::MaxNumF, kF32, 1.0, 2.0, 2.0},
      {O::MaxNumF, kF32, kNaN, 2.0, 2.0},
      {O::MinNumF, kF32, 1.0, 2.0, 1.0},
      {O::MinNumF, kF32, 1.0, kNaN, 1.0},
      {O::PowF, kF64, 2.0, 10.0, 1024.0},
      {O::PowF, kF32, 2.0, 0.5, static_cast<double>(float(std::pow(2.0, 0.5)))},
      {O::CopySign, kF32, 3.0, -0.0, -3.0},
      {O::CopySign, kF32, -3.0, 1.0, 3.0},
  };
}

TEST(ScalarOps, FloatBinary) {
  for (const FloatCase &c : floatCases())
    EXPECT_EQ(evalFloatBinary(c.opc, c.type, c.a, c.b), c.expected)
        << "opcode " << static_cast<int>(c.opc) << " (" << c.a << ", " << c.b
        << ")";
}

TEST(ScalarOps, MinMaxNaNAndSignedZeros) {
  for (ScalarType t : {kF16, kBF16, kF32, kF64}) {
    // maximumf / minimumf: NaN wins, -0 < +0 in either order.
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MaximumF, t, kNaN, 1.0)));
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MaximumF, t, 1.0, kNaN)));
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MinimumF, t, kNaN, 1.0)));
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MinimumF, t, 1.0, kNaN)));
    EXPECT_TRUE(isPosZero(evalFloatBinary(O::MaximumF, t, -0.0, 0.0)));
    EXPECT_TRUE(isPosZero(evalFloatBinary(O::MaximumF, t, 0.0, -0.0)));
    EXPECT_TRUE(isNegZero(evalFloatBinary(O::MinimumF, t, -0.0, 0.0)));
    EXPECT_TRUE(isNegZero(evalFloatBinary(O::MinimumF, t, 0.0, -0.0)));
    // maxnumf / minnumf: a NaN operand yields the other, -0 < +0.
    EXPECT_EQ(evalFloatBinary(O::MaxNumF, t, kNaN, -1.0), -1.0);
    EXPECT_EQ(evalFloatBinary(O::MaxNumF, t, -1.0, kNaN), -1.0);
    EXPECT_EQ(evalFloatBinary(O::MinNumF, t, kNaN, -1.0), -1.0);
    EXPECT_EQ(evalFloatBinary(O::MinNumF, t, -1.0, kNaN), -1.0);
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MaxNumF, t, kNaN, kNaN)));
    EXPECT_TRUE(std::isnan(evalFloatBinary(O::MinNumF, t, kNaN, kNaN)));
    EXPECT_TRUE(isPosZero(evalFloatBinary(O::MaxNumF, t, -0.0, 0.0)));
    EXPECT_TRUE(isPosZero(evalFloatBinary(O::MaxNumF, t, 0.0, -0.0)));
    EXPECT_TRUE(isNegZero(evalFloatBinary(O::MinNumF, t, -0.0, 0.0)));
    EXPECT_TRUE(isNegZero(evalFloatBinary(O::MinNumF, t, 0.0, -0.0)));
    // Infinities order as usual.
    EXPECT_EQ(evalFloatBinary(O::MaximumF, t, -kInf, kInf), kInf);
    EXPECT_EQ(evalFloatBinary(O::MinNumF, t, -kInf, kNaN), -kInf);
  }
}

struct UnaryCase {
  O opc;
  ScalarType type;
  double a, expected;
};

std::vector<UnaryCase> unaryCases() {
  auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  return {
      {O::NegF, kF32, 1.5, -1.5},
      {O::AbsF, kF32, -1.5, 1.5},
      {O::Exp, kF64, 1.0, std::exp(1.0)},
      {O::Exp, kF32, 1.0, f(std::exp(1.0))},
      {O::Exp2, kF32, 10.0, 1024.0},
      {O::Exp2, kF32, -127.0, 0x1p-127}, // a subnormal f32
      // ex2.approx.ftz: subnormal results flush to +0, normal ones do not.
      {O::Exp2Ftz, kF32, -126.0, 0x1p-126},
      {O::Exp2Ftz, kF32, -127.0, 0.0},
      {O::Exp2Ftz, kF32, -kInf, 0.0},
      {O::Exp2Ftz, kF32, 10.0, 1024.0},
      {O::ExpM1, kF64, 1e-10, std::expm1(1e-10)},
      {O::Log, kF64, 2.0, std::log(2.0)},
      {O::Log2, kF32, 1024.0, 10.0},
      {O::Log10, kF32, 1000.0, 3.0},
      {O::Log10, kF64, 2.0, std::log10(2.0)},
      {O::Log1p, kF64, 1e-10, std::log1p(1e-10)},
      {O::Sqrt, kF32, 2.0, f(std::sqrt(2.0))},
      {O::Rsqrt, kF32, 4.0, 0.5},
      {O::Rsqrt, kF64, 0.0, kInf},
      {O::Tanh, kF64, 0.5, std::tanh(0.5)},
      {O::Tanh, kF16, 20.0, 1.0},
      {O::Sin, kF64, 1.0, std::sin(1.0)},
      {O::Cos, kF64, 1.0, std::cos(1.0)},
      {O::Erf, kF64, 0.5, std::erf(0.5)},
      {O::Floor, kF32, -2.5, -3.0},
      {O::Ceil, kF32, -2.5, -2.0},
      {O::Round, kF32, 2.5, 3.0}, // half away from zero
      {O::Round, kF32, -2.5, -3.0},
      {O::RoundEven, kF32, 2.5, 2.0}, // half to even
      {O::RoundEven, kF32, 3.5, 4.0},
      {O::RoundEven, kF32, -2.5, -2.0},
      {O::Trunc, kF32, -2.7, -2.0},
      {O::Sqrt, kBF16, 2.0, 1.4140625}, // rounded to bf16
  };
}

TEST(ScalarOps, FloatUnary) {
  for (const UnaryCase &c : unaryCases())
    EXPECT_EQ(evalFloatUnary(c.opc, c.type, c.a), c.expected)
        << "opcode " << static_cast<int>(c.opc) << " (" << c.a << ")";
  EXPECT_TRUE(isNegZero(evalFloatUnary(O::NegF, kF32, 0.0)));
  EXPECT_TRUE(isPosZero(evalFloatUnary(O::AbsF, kF32, -0.0)));
  EXPECT_TRUE(std::isnan(evalFloatUnary(O::Sqrt, kF32, -1.0)));
  EXPECT_TRUE(std::isnan(evalFloatUnary(O::Log, kF64, -1.0)));
  EXPECT_EQ(evalFloatUnary(O::Log, kF64, 0.0), -kInf);
  EXPECT_TRUE(isNegZero(evalFloatUnary(O::Trunc, kF32, -0.5)));
}

TEST(ScalarOps, FmaRoundsOnce) {
  // (1 + 2^-30)^2 - 1 = 2^-29 + 2^-60: exact in fma, lost in mul then add.
  double a = 1.0 + pow2(-30), c = -1.0;
  EXPECT_EQ(evalFloatTernary(O::Fma, kF64, a, a, c), pow2(-29) + pow2(-60));
  EXPECT_EQ(evalFloatTernary(O::Fma, kF32, a, a, c),
            static_cast<double>(static_cast<float>(pow2(-29) + pow2(-60))));
  EXPECT_EQ(evalFloatTernary(O::Fma, kF16, 1.0, 1.0, pow2(-11)), 1.0);
}

TEST(ScalarOps, CmpI) {
  using P = IntPredicate;
  struct Row {
    P p;
    bool lt, eq, gt; // -1 vs 1 (signed order), 5 vs 5, 1 vs -1
  };
  for (Row r : {Row{P::eq, false, true, false}, Row{P::ne, true, false, true},
                Row{P::slt, true, false, false}, Row{P::sle, true, true, false},
                Row{P::sgt, false, false, true}, Row{P::sge, false, true, true},
                Row{P::ult, false, false, true}, // -1 is the largest unsigned
                Row{P::ule, false, true, true}, Row{P::ugt, true, false, false},
                Row{P::uge, true, true, false}}) {
    EXPECT_EQ(evalCmpI(r.p, -1, 1, 32), r.lt) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpI(r.p, 5, 5, 32), r.eq) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpI(r.p, 1, -1, 32), r.gt) << static_cast<int>(r.p);
  }
  // i1: set is -1 signed, 1 unsigned.
  EXPECT_TRUE(evalCmpI(P::slt, 1, 0, 1));
  EXPECT_FALSE(evalCmpI(P::ult, 1, 0, 1));
  // Only the low w bits take part.
  EXPECT_TRUE(evalCmpI(P::eq, -1, -1, 64));
  EXPECT_TRUE(evalCmpI(P::ult, kI64Max, -1, 64));
}

TEST(ScalarOps, CmpF) {
  using P = FloatPredicate;
  struct Row {
    P p;
    bool lt, eq, gt, nan; // 1 vs 2, 2 vs 2, 2 vs 1, NaN vs 1
  };
  for (Row r : {Row{P::AlwaysFalse, false, false, false, false},
                Row{P::OEQ, false, true, false, false},
                Row{P::OGT, false, false, true, false},
                Row{P::OGE, false, true, true, false},
                Row{P::OLT, true, false, false, false},
                Row{P::OLE, true, true, false, false},
                Row{P::ONE, true, false, true, false},
                Row{P::ORD, true, true, true, false},
                Row{P::UEQ, false, true, false, true},
                Row{P::UGT, false, false, true, true},
                Row{P::UGE, false, true, true, true},
                Row{P::ULT, true, false, false, true},
                Row{P::ULE, true, true, false, true},
                Row{P::UNE, true, false, true, true},
                Row{P::UNO, false, false, false, true},
                Row{P::AlwaysTrue, true, true, true, true}}) {
    EXPECT_EQ(evalCmpF(r.p, 1.0, 2.0), r.lt) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpF(r.p, 2.0, 2.0), r.eq) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpF(r.p, 2.0, 1.0), r.gt) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpF(r.p, kNaN, 1.0), r.nan) << static_cast<int>(r.p);
    EXPECT_EQ(evalCmpF(r.p, 1.0, kNaN), r.nan) << static_cast<int>(r.p);
  }
  EXPECT_TRUE(evalCmpF(P::OEQ, -0.0, 0.0));
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

int64_t castToInt(O opc, ScalarType src, ScalarType dst, ScalarValue v) {
  return evalCast(opc, src, dst, v).i;
}
double castToFloat(O opc, ScalarType src, ScalarType dst, ScalarValue v) {
  return evalCast(opc, src, dst, v).f;
}
ScalarValue I(int64_t v) { return ScalarValue::ofInt(v); }
ScalarValue F(double v) { return ScalarValue::ofFloat(v); }

TEST(ScalarOps, IntegerCasts) {
  EXPECT_EQ(castToInt(O::ExtSI, kI8, kI32, I(-1)), -1);
  EXPECT_EQ(castToInt(O::ExtSI, kI1, kI32, I(1)), -1);
  EXPECT_EQ(castToInt(O::ExtUI, kI8, kI32, I(-1)), 255);
  EXPECT_EQ(castToInt(O::ExtUI, kI1, kI32, I(1)), 1);
  EXPECT_EQ(castToInt(O::ExtUI, kI32, kI64, I(-1)), 0xFFFFFFFFll);
  EXPECT_EQ(castToInt(O::TruncI, kI32, kI8, I(0x1FF)), -1);
  EXPECT_EQ(castToInt(O::TruncI, kI32, kI8, I(300)), 44);
  EXPECT_EQ(castToInt(O::TruncI, kI32, kI1, I(2)), 0);
  EXPECT_EQ(castToInt(O::TruncI, kI32, kI1, I(3)), 1);
  // index is i64.
  EXPECT_EQ(castToInt(O::IndexCast, kI32, kI64, I(-1)), -1);
  EXPECT_EQ(castToInt(O::IndexCast, kI64, kI32, I(0x100000005ll)), 5);
  EXPECT_EQ(castToInt(O::IndexCast, kI64, kI32, I(kI64Min)), 0);
  EXPECT_EQ(castToInt(O::IndexCastUI, kI32, kI64, I(-1)), 0xFFFFFFFFll);
  EXPECT_EQ(castToInt(O::IndexCastUI, kI64, kI64, I(-1)), -1);
  EXPECT_EQ(castToInt(O::IndexCastUI, kI64, kI32, I(-1)), -1);
}

TEST(ScalarOps, IntToFloat) {
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kF32, I(-1)), -1.0);
  EXPECT_EQ(castToFloat(O::UIToFP, kI32, kF64, I(-1)), 4294967295.0);
  EXPECT_EQ(castToFloat(O::UIToFP, kI32, kF32, I(-1)), 4294967296.0);
  EXPECT_EQ(castToFloat(O::SIToFP, kI1, kF32, I(1)), -1.0);
  EXPECT_EQ(castToFloat(O::UIToFP, kI1, kF32, I(1)), 1.0);
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kF16, I(2049)), 2048.0); // tie
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kF16, I(2051)), 2052.0); // tie
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kF16, I(70000)), kInf);
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kBF16, I(257)), 256.0);
  EXPECT_EQ(castToFloat(O::SIToFP, kI64, kF64, I(kI64Min)), -pow2(63));
}

TEST(ScalarOps, FloatToIntTruncatesAndSaturates) {
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(2.9)), 2);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(-2.9)), -2);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(kNaN)), 0);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(3e9)), kI32Max);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(-3e9)), kI32Min);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(kInf)), kI32Max);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI32, F(-kInf)), kI32Min);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI32, F(2147483647.5)), kI32Max);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI32, F(-2147483648.5)), kI32Min);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI64, F(1e19)), kI64Max);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI64, F(-1e19)), kI64Min);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI64, F(pow2(62))), int64_t(1) << 62);
  EXPECT_EQ(castToInt(O::FPToSI, kF64, kI64, F(kNaN)), 0);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI8, F(200)), 127);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI8, F(-200)), -128);
  // i1 holds -1 and 0 when signed; -1 is stored as 1.
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI1, F(-1.0)), 1);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI1, F(-5.0)), 1);
  EXPECT_EQ(castToInt(O::FPToSI, kF32, kI1, F(1.0)), 0);

  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI32, F(2.9)), 2);
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI32, F(-1.0)), 0);
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI32, F(-0.5)), 0);
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI32, F(kNaN)), 0);
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI32, F(5e9)), -1); // all ones
  EXPECT_EQ(castToInt(O::FPToUI, kF64, kI32, F(3e9)),
            3000000000ll - (1ll << 32));
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI8, F(300)), -1);
  EXPECT_EQ(castToInt(O::FPToUI, kF32, kI8, F(200)), -56); // 200 stored
  EXPECT_EQ(castToInt(O::FPToUI, kF64, kI64, F(1.5e19)),
            static_cast<int64_t>(static_cast<uint64_t>(1.5e19)));
  EXPECT_EQ(castToInt(O::FPToUI, kF64, kI64, F(2e19)), -1);
  EXPECT_EQ(castToInt(O::FPToUI, kF64, kI64, F(kInf)), -1);
}

TEST(ScalarOps, FloatCastsRoundToNearestEven) {
  // f16: ties go to the even mantissa, overflow goes to infinity.
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(1.0 + pow2(-11))), 1.0);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(1.0 + 3 * pow2(-11))),
            1.0 + pow2(-9));
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(65519.0)), 65504.0);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(65520.0)), kInf);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(-65520.0)), -kInf);
  // f16 subnormals: 2^-25 ties to 0, 3 * 2^-25 to 2^-23.
  EXPECT_TRUE(isPosZero(castToFloat(O::TruncF, kF32, kF16, F(pow2(-25)))));
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kF16, F(3 * pow2(-25))), pow2(-23));
  EXPECT_TRUE(isNegZero(castToFloat(O::TruncF, kF32, kF16, F(-pow2(-26)))));
  // bf16.
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kBF16, F(1.0 + pow2(-8))), 1.0);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kBF16, F(1.0 + 3 * pow2(-8))),
            1.0 + pow2(-6));
  EXPECT_EQ(
      castToFloat(O::TruncF, kF32, kBF16, F(std::numeric_limits<float>::max())),
      kInf);
  // f8e4m3: satfinite (448 for anything larger, infinity too), NaN kept.
  const ScalarType kE4M3{ScalarType::F8E4M3};
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kE4M3, F(1.0 + pow2(-4))), 1.0);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kE4M3, F(1.0 + 3 * pow2(-4))),
            1.25);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kE4M3, F(500.0)), 448.0);
  EXPECT_EQ(castToFloat(O::TruncF, kF32, kE4M3, F(-kInf)), -448.0);
  EXPECT_TRUE(std::isnan(castToFloat(O::TruncF, kF32, kE4M3, F(kNaN))));
  EXPECT_EQ(castToFloat(O::SIToFP, kI32, kE4M3, I(17)), 16.0);
  // f64 -> f32 and NaN.
  EXPECT_EQ(castToFloat(O::TruncF, kF64, kF32, F(0.1)),
            static_cast<double>(0.1f));
  EXPECT_TRUE(std::isnan(castToFloat(O::TruncF, kF32, kF16, F(kNaN))));
  // Widening is exact.
  EXPECT_EQ(castToFloat(O::ExtF, kF16, kF32, F(65504.0)), 65504.0);
  EXPECT_EQ(castToFloat(O::ExtF, kBF16, kF64, F(1.0 + pow2(-7))),
            1.0 + pow2(-7));
}

TEST(ScalarOps, Bitcast) {
  EXPECT_EQ(castToInt(O::Bitcast, kF32, kI32, F(1.0)), 0x3F800000);
  EXPECT_EQ(castToInt(O::Bitcast, kF32, kI32, F(-0.0)), kI32Min);
  EXPECT_EQ(castToFloat(O::Bitcast, kI32, kF32, I(0x3F800000)), 1.0);
  EXPECT_TRUE(isNegZero(castToFloat(O::Bitcast, kI32, kF32, I(kI32Min))));
  ScalarType i16 = ScalarType::integer(16);
  EXPECT_EQ(castToInt(O::Bitcast, kF16, i16, F(1.0)), 0x3C00);
  EXPECT_EQ(castToInt(O::Bitcast, kF16, i16, F(-2.0)), -16384); // 0xC000
  EXPECT_EQ(castToInt(O::Bitcast, kBF16, i16, F(1.0)), 0x3F80);
  EXPECT_TRUE(std::isnan(castToFloat(O::Bitcast, i16, kF16, I(-1))));
  EXPECT_EQ(castToFloat(O::Bitcast, i16, kBF16, I(0x4000)), 2.0);
  EXPECT_EQ(castToInt(O::Bitcast, kF64, kI64, F(1.0)), 0x3FF0000000000000ll);
  EXPECT_EQ(castToFloat(O::Bitcast, kI64, kF64, I(0x4000000000000000ll)), 2.0);
  EXPECT_EQ(castToFloat(O::Bitcast, kF32, kF32, F(0.5)), 0.5);
}

TEST(ScalarOps, VisitCastIsEvalCast) {
  // One (src, dst, value) per Cast opcode; visitCast fixes the opcode.
  struct Case {
    O opc;
    ScalarType src, dst;
    ScalarValue v;
  } cases[] = {
      {O::ExtSI, kI8, kI32, I(-3)},
      {O::ExtUI, kI8, kI32, I(-3)},
      {O::TruncI, kI32, kI8, I(300)},
      {O::IndexCast, kI64, kI32, I(-7)},
      {O::IndexCastUI, kI32, kI64, I(-7)},
      {O::SIToFP, kI32, kF16, I(-2049)},
      {O::UIToFP, kI32, kF32, I(-1)},
      {O::FPToSI, kF32, kI8, F(-300.5)},
      {O::FPToUI, kF32, kI8, F(300.5)},
      {O::ExtF, kBF16, kF32, F(1.5)},
      {O::TruncF, kF32, kF16, F(1.0 + pow2(-11))},
      {O::Bitcast, kF32, kI32, F(-0.0)},
  };
  std::set<O> seen;
  for (const Case &c : cases) {
    seen.insert(c.opc);
    ScalarValue viaVisit =
        visitCast(c.opc, [&](auto f) { return f(c.src, c.dst, c.v); });
    ScalarValue viaEval = evalCast(c.opc, c.src, c.dst, c.v);
    EXPECT_EQ(viaVisit.i, viaEval.i) << "opcode " << static_cast<int>(c.opc);
  }
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kindOf(static_cast<O>(i)) == ArithMathKind::Cast) {
      EXPECT_TRUE(seen.count(static_cast<O>(i))) << "opcode " << i;
    }
  }
}

TEST(ScalarOps, EveryOpcodeIsExercised) {
  std::set<O> seen;
  for (const IntCase &c : intCases())
    seen.insert(c.opc);
  for (const FloatCase &c : floatCases())
    seen.insert(c.opc);
  for (const UnaryCase &c : unaryCases())
    seen.insert(c.opc);
  // The single-opcode kinds and the casts have their own tests above;
  // arith.select is only classified: executors move the value themselves.
  for (O opc :
       {O::MulUIExtended, O::AbsI, O::Fma, O::CmpI, O::CmpF, O::Select,
        O::ExtSI, O::ExtUI, O::TruncI, O::IndexCast, O::IndexCastUI,
        O::SIToFP, O::UIToFP, O::FPToSI, O::FPToUI, O::ExtF, O::TruncF,
        O::Bitcast})
    seen.insert(opc);
  for (int i = 0; i < kNumOpcodes; ++i)
    EXPECT_TRUE(seen.count(static_cast<O>(i))) << "opcode " << i;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

TEST(ScalarOps, StoredIntegers) {
  EXPECT_EQ(wrapInt(0xFF, 8), -1);
  EXPECT_EQ(wrapInt(0x80, 8), -128);
  EXPECT_EQ(wrapInt(0x7F, 8), 127);
  EXPECT_EQ(wrapInt(2, 1), 0);
  EXPECT_EQ(wrapInt(-1, 1), 1);
  EXPECT_EQ(wrapInt(kI64Min, 64), kI64Min);
  EXPECT_EQ(asSigned(1, 1), -1);
  EXPECT_EQ(asSigned(-5, 32), -5);
  EXPECT_EQ(asUnsigned(-1, 8), 255u);
  EXPECT_EQ(asUnsigned(1, 1), 1u);
  EXPECT_EQ(asUnsigned(-1, 64), std::numeric_limits<uint64_t>::max());
}

TEST(ScalarOps, RoundToIntegerTypes) {
  // Truncate toward zero, saturate to 64 bits, then wrap.
  EXPECT_EQ(roundTo(kI32, 3.7), 3.0);
  EXPECT_EQ(roundTo(kI32, -3.7), -3.0);
  EXPECT_EQ(roundTo(kI32, pow2(32) + 5), 5.0);
  EXPECT_EQ(roundTo(kI32, kNaN), 0.0);
  EXPECT_EQ(roundTo(kI1, 3.0), 1.0);
  EXPECT_EQ(roundTo(kI64, 1e30), static_cast<double>(kI64Max));
  EXPECT_EQ(roundTo(kF64, 0.1), 0.1);
  EXPECT_EQ(roundTo(kF32, 0.1), static_cast<double>(0.1f));
}

} // namespace

//===- InterpreterTest.cpp - tile interpreter and `flashc run` library ----===//

#include "flashc/InitAllDialects.h"
#include "flashc/Interp/Interpreter.h"
#include "flashc/Run/Run.h"
#include "flashc/Runtime/Float16.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Support/SourceDiagnostics.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <regex>
#include <unistd.h>

using namespace mlir;
using namespace flash;
using namespace flash::interp;

namespace {

/// An error formatted by formatError at an op of the parsed source string:
/// "-:LINE:COL: error: ..." (MLIR names the string's buffer "-").
bool locatedInSource(const std::string &error) {
  return std::regex_search(error, std::regex("^-:[0-9]+:[0-9]+: error: "));
}

const double kInf = std::numeric_limits<double>::infinity();

class InterpTest : public ::testing::Test {
public:
  InterpTest() {
    flash::loadAllDialects(ctx);
  }

  ModuleOp parse(const std::string &src) {
    module = parseSourceString<ModuleOp>(src, ParserConfig(&ctx));
    EXPECT_TRUE(module) << "failed to parse:\n" << src;
    return module ? *module : ModuleOp();
  }

  func::FuncOp fn(const std::string &name) {
    return module->lookupSymbol<func::FuncOp>(name);
  }

  /// Runs function `name` once and returns its results.
  std::vector<RtValue> call(const std::string &name,
                            std::vector<RtValue> args = {},
                            std::string *errorOut = nullptr) {
    if (!module)
      return {};
    FunctionRunner runner(fn(name));
    LaunchContext lctx;
    std::vector<RtValue> results;
    InterpError err;
    bool ok = runner.run(args, lctx, &results, err);
    if (errorOut) {
      EXPECT_FALSE(ok);
      *errorOut = formatError(err.loc, err.message);
    } else {
      EXPECT_TRUE(ok) << err.message;
    }
    return results;
  }

  std::string tmp(const std::string &name) {
    return testing::TempDir() + "flash_interp_" + std::to_string(getpid()) +
           "_" + name;
  }

  std::string writeNpy(const std::string &name, npy::DType dt,
                       std::vector<int64_t> shape,
                       const std::vector<double> &vals) {
    npy::Array a(dt, std::move(shape));
    for (size_t i = 0; i < vals.size(); ++i)
      a.set(i, vals[i]);
    std::string path = tmp(name);
    std::string err;
    EXPECT_TRUE(npy::writeFile(path, a, err)) << err;
    return path;
  }

  npy::Array readNpy(const std::string &path) {
    npy::Array a;
    std::string err;
    EXPECT_TRUE(npy::readFile(path, a, err)) << err;
    return a;
  }

  int run(const RunRequest &req, std::string &diag) {
    diag.clear();
    llvm::raw_string_ostream os(diag);
    if (!module)
      return -1;
    int rc = runKernel(*module, req, os);
    os.flush();
    return rc;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};


//===----------------------------------------------------------------------===//
// Loads, stores, shapes
//===----------------------------------------------------------------------===//

const char *kLoadStore = R"mlir(
func.func @k(%A: !tile.global<[R, C], f32> {tile.name = "A"},
             %O: !tile.global<[R, C], f32> {tile.name = "O"})
    -> (tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r = arith.constant -1 : i32
  %c = arith.constant 2 : i32
  %t = tile.load %A[%r, %c] window [0, 1] pad -7.0 : f32
      : !tile.global<[R, C], f32> -> tensor<4x4xf32>
  %one = arith.constant dense<1.0> : tensor<4x4xf32>
  %t2 = arith.addf %t, %one : tensor<4x4xf32>
  tile.store %t2, %O[%r, %c] window [0, 1]
      : tensor<4x4xf32> -> !tile.global<[R, C], f32>
  %c5 = arith.constant 5 : i32
  %c0 = arith.constant 0 : i32
  %row = tile.load %A[%c5, %c0] window [1] pad 9.0 : f32
      : !tile.global<[R, C], f32> -> tensor<3xf32>
  %c1 = arith.constant 1 : i32
  %tt = tile.load %A[%c1, %c1] window [0] pad 0.5 : f32
      : !tile.global<[R, C], f32> -> tensor<3xf32>
  return %t, %row, %tt : tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir";

TEST_F(InterpTest, LoadPadsAndStoreSkipsOutOfBounds) {
  parse(kLoadStore);
  ElemType f32 = *ElemType::get(Float32Type::get(&ctx));
  GlobalBuffer A{f32, {3, 5}, {}}, O{f32, {3, 5}, std::vector<double>(15, 0)};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      A.data.push_back(10 * i + j);
  auto res = call("k", {RtValue::globalRef(&A), RtValue::globalRef(&O)});
  ASSERT_EQ(res.size(), 3u);
  // t[a][b] = A[a - 1][2 + b] or -7.
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      int i = a - 1, j = 2 + b;
      double want = (i >= 0 && i < 3 && j < 5) ? 10 * i + j : -7.0;
      EXPECT_EQ(res[0].data[a * 4 + b], want) << a << "," << b;
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(O.data[i * 5 + j], j >= 2 ? 10 * i + j + 1 : 0) << i << j;
  // A non-window dim out of bounds pads the whole tile.
  EXPECT_EQ(res[1].data, (std::vector<double>{9, 9, 9}));
  // Window [0]: a column, tt[t] = A[1 + t][1] or pad when 1 + t >= 3.
  EXPECT_EQ(res[2].data, (std::vector<double>{11, 21, 0.5}));
}

const char *kShapes = R"mlir(
func.func @k() -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>,
                   tensor<3xf32>, tensor<2xi32>, tensor<4xi32>) {
  %v = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tile.expand_dims %v axis = 1 : tensor<2xf32> -> tensor<2x1xf32>
  %b = tile.broadcast %e : tensor<2x1xf32> -> tensor<2x3xf32>
  %m = arith.constant dense<[[1.0, -2.0, 3.0], [0xFF800000, 5.0, 0.5]]> : tensor<2x3xf32>
  %s = arith.mulf %b, %m : tensor<2x3xf32>
  %t = tile.trans %s : tensor<2x3xf32> -> tensor<3x2xf32>
  %mx = tile.reduce max %m axis = 1 : tensor<2x3xf32> -> tensor<2xf32>
  %sm = tile.reduce sum %s axis = 0 : tensor<2x3xf32> -> tensor<3xf32>
  %iv = arith.constant dense<[[3, -4], [7, 1]]> : tensor<2x2xi32>
  %imax = tile.reduce max %iv axis = 0 : tensor<2x2xi32> -> tensor<2xi32>
  %io = tile.iota : tensor<4xi32>
  return %s, %t, %mx, %sm, %imax, %io
      : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xi32>, tensor<4xi32>
}
)mlir";

TEST_F(InterpTest, ShapesAndReductions) {
  parse(kShapes);
  auto r = call("k");
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r[0].data, (std::vector<double>{1, -2, 3, -kInf, 10, 1}));
  EXPECT_EQ(r[1].data, (std::vector<double>{1, -kInf, -2, 10, 3, 1}));
  EXPECT_EQ(r[2].data, (std::vector<double>{3, 5}));
  EXPECT_EQ(r[3].data, (std::vector<double>{-kInf, 8, 4}));
  EXPECT_EQ(r[4].data, (std::vector<double>{7, 1}));
  EXPECT_EQ(r[5].data, (std::vector<double>{0, 1, 2, 3}));
}

TEST_F(InterpTest, ReduceMaxOfAllMinusInfAndSumRounding) {
  parse(R"mlir(
func.func @k() -> (tensor<1xf32>, tensor<1xf32>) {
  %m = arith.constant dense<0xFF800000> : tensor<1x4xf32>
  %mx = tile.reduce max %m axis = 1 : tensor<1x4xf32> -> tensor<1xf32>
  %s = arith.constant dense<[[16777216.0, 1.0, 1.0, 0.0]]> : tensor<1x4xf32>
  %sm = tile.reduce sum %s axis = 1 : tensor<1x4xf32> -> tensor<1xf32>
  return %mx, %sm : tensor<1xf32>, tensor<1xf32>
}
)mlir");
  auto r = call("k");
  EXPECT_EQ(r[0].data[0], -kInf);
  // Summed in double then rounded once: 2^24 + 2 is exact in f32.
  EXPECT_EQ(r[1].data[0], 16777218.0);
}

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, MmaWithAndWithoutTransposes) {
  parse(R"mlir(
func.func @k() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf16>
  %at = arith.constant dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]> : tensor<3x2xf16>
  %b = arith.constant dense<[[1.0, 0.5], [-1.0, 2.0], [0.25, 1.0]]> : tensor<3x2xf16>
  %bt = arith.constant dense<[[1.0, -1.0, 0.25], [0.5, 2.0, 1.0]]> : tensor<2x3xf16>
  %acc = arith.constant dense<[[10.0, 0.0], [0.0, -1.0]]> : tensor<2x2xf32>
  %r0 = tile.mma %a, %b, %acc : tensor<2x3xf16>, tensor<3x2xf16> -> tensor<2x2xf32>
  %r1 = tile.mma %a, %bt, %acc {transpose_b} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x2xf32>
  %r2 = tile.mma %at, %b, %acc {transpose_a} : tensor<3x2xf16>, tensor<3x2xf16> -> tensor<2x2xf32>
  %r3 = tile.mma %at, %bt, %acc {transpose_a, transpose_b} : tensor<3x2xf16>, tensor<2x3xf16> -> tensor<2x2xf32>
  return %r0, %r1, %r2, %r3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
)mlir");
  auto r = call("k");
  // A*B = [[1-2+0.75, 0.5+4+3], [4-5+1.5, 2+10+6]] = [[-0.25, 7.5], [0.5, 18]]
  std::vector<double> want = {9.75, 7.5, 0.5, 17};
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(r[i].data, want) << "variant " << i;
}

TEST_F(InterpTest, MmaAccumulatesInDoubleAndRoundsOnce) {
  // 2048 + 1 + 1 in f32 sequential f16*f16 products: rounding once gives 2050
  // (exact in f32 anyway); use acc = 2^24 with two +1 products: rounding once
  // gives 2^24 + 2, step-by-step f32 would give 2^24.
  parse(R"mlir(
func.func @k() -> tensor<1x1xf32> {
  %a = arith.constant dense<[[1.0, 1.0]]> : tensor<1x2xf16>
  %b = arith.constant dense<[[1.0], [1.0]]> : tensor<2x1xf16>
  %acc = arith.constant dense<16777216.0> : tensor<1x1xf32>
  %r = tile.mma %a, %b, %acc : tensor<1x2xf16>, tensor<2x1xf16> -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}
)mlir");
  auto r = call("k");
  EXPECT_EQ(r[0].data[0], 16777218.0);
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

/// Two 2x2 score blocks of three rows (row 2 fully masked), V blocks 2x3.
/// `scaled`: @k takes an f32 %c that both steps use as their scale.
std::string onlineSoftmaxModule(const std::string &norm, bool exp2,
                                bool scaled = false) {
  std::string e = exp2 ? " exp2" : "";
  std::string arg = scaled ? "%c: f32" : "";
  std::string scale = scaled ? " scale %c" : "";
  return R"mlir(
func.func @k()mlir" + arg + R"mlir() -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x3xf32>) {
  %s1 = arith.constant dense<[[0.5, -1.0], [0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000]]> : tensor<3x2xf32>
  %s2 = arith.constant dense<[[2.0, 0.25], [1.5, 0xFF800000], [0xFF800000, 0xFF800000]]> : tensor<3x2xf32>
  %v1 = arith.constant dense<[[1.0, 2.0, -1.0], [0.5, -3.0, 4.0]]> : tensor<2x3xf16>
  %v2 = arith.constant dense<[[-2.0, 1.0, 0.125], [3.0, 0.75, -0.5]]> : tensor<2x3xf16>
  %m0 = arith.constant dense<0xFF800000> : tensor<3xf32>
  %l0 = arith.constant dense<0.0> : tensor<3xf32>
  %a0 = arith.constant dense<0.0> : tensor<3x3xf32>
  %m1, %l1, %a1 = tile.online_softmax )mlir" +
         norm + e + R"mlir( %s1, %v1, %m0, %l0, %a0)mlir" + scale + R"mlir(
      : tensor<3x2xf32>, tensor<2x3xf16>, tensor<3xf32>, tensor<3x3xf32>
  %m2, %l2, %a2 = tile.online_softmax )mlir" +
         norm + e + R"mlir( %s2, %v2, %m1, %l1, %a1)mlir" + scale + R"mlir(
      : tensor<3x2xf32>, tensor<2x3xf16>, tensor<3xf32>, tensor<3x3xf32>
  %o = tile.online_softmax_finalize %a2, %l2 : tensor<3x3xf32>, tensor<3xf32>
  return %a2, %m2, %l2, %o : tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x3xf32>
}
)mlir";
}

const double kS[3][4] = {{0.5, -1.0, 2.0, 0.25},
                         {-kInf, -kInf, 1.5, -kInf},
                         {-kInf, -kInf, -kInf, -kInf}};
const double kV[4][3] = {
    {1.0, 2.0, -1.0}, {0.5, -3.0, 4.0}, {-2.0, 1.0, 0.125}, {3.0, 0.75, -0.5}};

/// Direct softmax(S * unit) @ V in double; a row without keys gives 0.
std::vector<double> directAttention(double unit) {
  std::vector<double> out(9, 0.0);
  for (int i = 0; i < 3; ++i) {
    double m = -kInf;
    for (int j = 0; j < 4; ++j)
      m = std::max(m, kS[i][j]);
    if (m == -kInf)
      continue;
    double l = 0, p[4];
    for (int j = 0; j < 4; ++j)
      l += p[j] = std::exp((kS[i][j] - m) * unit);
    for (int d = 0; d < 3; ++d) {
      double s = 0;
      for (int j = 0; j < 4; ++j)
        s += p[j] * kV[j][d];
      out[i * 3 + d] = s / l;
    }
  }
  return out;
}

TEST_F(InterpTest, OnlineSoftmaxDeferredMatchesDirectSoftmax) {
  for (bool exp2 : {false, true}) {
    parse(onlineSoftmaxModule("deferred", exp2));
    auto r = call("k");
    ASSERT_EQ(r.size(), 4u);
    auto want = directAttention(exp2 ? std::log(2.0) : 1.0);
    for (int k = 0; k < 9; ++k)
      // P is rounded to f16 before the PV product: ~2^-11 relative.
      EXPECT_NEAR(r[3].data[k], want[k], 2e-3 * (1 + std::fabs(want[k])))
          << "exp2=" << exp2 << " element " << k;
    EXPECT_EQ(r[1].data, (std::vector<double>{2.0, 1.5, -kInf}));
    // Fully masked row: m = -inf, l = 0, output exactly 0.
    EXPECT_EQ(r[2].data[2], 0.0);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(r[3].data[6 + d], 0.0);
      EXPECT_FALSE(std::isnan(r[3].data[6 + d]));
    }
    // Row 1 saw no key in block 1 and exactly one in block 2: P = 1 exactly.
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(r[3].data[3 + d], kV[2][d]);
    // Row sums: l = sum_j exp(S - m).
    double e = exp2 ? std::log(2.0) : 1.0;
    double l0 = std::exp((0.5 - 2) * e) + std::exp((-1.0 - 2) * e) + 1 +
                std::exp((0.25 - 2) * e);
    EXPECT_NEAR(r[2].data[0], l0, 1e-6);
    EXPECT_EQ(r[2].data[1], 1.0);
  }
}

TEST_F(InterpTest, OnlineSoftmaxEagerAgreesWithDeferred) {
  for (bool exp2 : {false, true}) {
    parse(onlineSoftmaxModule("deferred", exp2));
    auto deferred = call("k");
    parse(onlineSoftmaxModule("eager", exp2));
    auto eager = call("k");
    ASSERT_EQ(eager.size(), 4u);
    // Eager's accumulator is already normalized.
    for (int k = 0; k < 9; ++k)
      EXPECT_NEAR(eager[0].data[k], deferred[3].data[k],
                  1e-6 * (1 + std::fabs(deferred[3].data[k])))
          << k;
    EXPECT_EQ(eager[1].data, deferred[1].data);
    EXPECT_EQ(eager[2].data, deferred[2].data);
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(eager[0].data[6 + d], 0.0); // l_new == 0 -> 0
  }
}

TEST_F(InterpTest, OnlineSoftmaxScaleScalesTheScores) {
  ElemType f32 = *ElemType::get(Float32Type::get(&ctx));
  for (bool exp2 : {false, true}) {
    parse(onlineSoftmaxModule("deferred", exp2, /*scaled=*/true));
    auto r = call("k", {RtValue::scalar(f32, 0.375)});
    ASSERT_EQ(r.size(), 4u);
    // Scale 0.375 on scores S: softmax(0.375 * S) in the exponential's base.
    auto want = directAttention(0.375 * (exp2 ? std::log(2.0) : 1.0));
    for (int k = 0; k < 9; ++k)
      EXPECT_NEAR(r[3].data[k], want[k], 2e-3 * (1 + std::fabs(want[k])))
          << "exp2=" << exp2 << " element " << k;
    // The running max is in scaled units; the masked row stays -inf and 0.
    EXPECT_EQ(r[1].data, (std::vector<double>{0.75, 0.5625, -kInf}));
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(r[3].data[6 + d], 0.0);
  }
}

TEST_F(InterpTest, OnlineSoftmaxRejectsNonPositiveScale) {
  ElemType f32 = *ElemType::get(Float32Type::get(&ctx));
  parse(onlineSoftmaxModule("deferred", true, /*scaled=*/true));
  for (double bad : {0.0, -2.0, std::nan("")}) {
    std::string err;
    call("k", {RtValue::scalar(f32, bad)}, &err);
    EXPECT_NE(err.find("online_softmax scale must be positive, got "),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("in 'tile.online_softmax'"), std::string::npos)
        << err;
    EXPECT_TRUE(locatedInSource(err)) << err;
  }
}

//===----------------------------------------------------------------------===//
// Control flow and scalar arith
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, ScfForIfAndIntegerArith) {
  parse(R"mlir(
func.func @k(%n: i32) -> (i32, i32, i32, i32, i32, i1, f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %sum, %cnt = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0, %c = %c0) -> (i32, i32) : i32 {
    %r = arith.remsi %i, %c2 : i32
    %even = arith.cmpi eq, %r, %c0 : i32
    %s2 = scf.if %even -> (i32) {
      %t = arith.addi %s, %i : i32
      scf.yield %t : i32
    } else {
      scf.yield %s : i32
    }
    %c2n = arith.addi %c, %c1 : i32
    scf.yield %s2, %c2n : i32, i32
  }
  %m7 = arith.constant -7 : i32
  %fd = arith.floordivsi %m7, %c2 : i32
  %cd = arith.ceildivsi %m7, %c2 : i32
  %big = arith.constant 2147483647 : i32
  %wrap = arith.addi %big, %c1 : i32
  %lt = arith.cmpi ult, %m7, %c3 : i32
  %f = arith.sitofp %m7 : i32 to f32
  %h = arith.constant 0.1 : f32
  %g = arith.mulf %f, %h : f32
  return %sum, %cnt, %fd, %cd, %wrap, %lt, %g : i32, i32, i32, i32, i32, i1, f32
}
)mlir");
  ElemType i32 = *ElemType::get(IntegerType::get(&ctx, 32));
  auto r = call("k", {RtValue::scalar(i32, 10)});
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0].data[0], 0 + 2 + 4 + 6 + 8);
  EXPECT_EQ(r[1].data[0], 10);
  EXPECT_EQ(r[2].data[0], -4);
  EXPECT_EQ(r[3].data[0], -3);
  EXPECT_EQ(r[4].data[0], -2147483648.0);
  EXPECT_EQ(r[5].data[0], 0); // -7 as unsigned is huge
  EXPECT_EQ(r[6].data[0], static_cast<double>(-7.0f * 0.1f));
  // Zero iterations keep the init values.
  auto z = call("k", {RtValue::scalar(i32, -5)});
  EXPECT_EQ(z[0].data[0], 0);
  EXPECT_EQ(z[1].data[0], 0);
}

TEST_F(InterpTest, FloatOpsCastsAndTensorOps) {
  parse(R"mlir(
func.func @k(%c: i1) -> (tensor<4xf16>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>,
                         f32, i32, i32, tensor<2xf32>, f32, f32, i32, tensor<2x2xf32>, bf16) {
  %x = arith.constant dense<[1.00048828125, 70000.0, -2.5, 0.1]> : tensor<4xf32>
  %h = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
  %i = arith.fptosi %x : tensor<4xf32> to tensor<4xi32>
  %y = arith.constant dense<[1.0, 0x7FC00000, -2.5, 3.0]> : tensor<4xf32>
  %lt = arith.cmpf ult, %y, %x : tensor<4xf32>
  %mx = arith.maximumf %x, %y : tensor<4xf32>
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %sel = arith.select %c, %one, %two : f32
  %t = arith.constant true
  %ext = arith.extui %t : i1 to i32
  %exs = arith.extsi %t : i1 to i32
  %sp = tensor.splat %sel : tensor<2xf32>
  %idx = arith.constant 3 : index
  %ex = tensor.extract %x[%idx] : tensor<4xf32>
  %bits = arith.bitcast %one : f32 to i32
  %sq = math.sqrt %two : f32
  %fe = tensor.from_elements %one, %two, %sq, %ex : tensor<2x2xf32>
  %b = arith.truncf %sq : f32 to bf16
  return %h, %i, %lt, %mx, %sel, %ext, %exs, %sp, %ex, %sq, %bits, %fe, %b
      : tensor<4xf16>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, f32, i32, i32,
        tensor<2xf32>, f32, f32, i32, tensor<2x2xf32>, bf16
}
)mlir");
  ElemType i1 = *ElemType::get(IntegerType::get(&ctx, 1));
  auto r = call("k", {RtValue::scalar(i1, 0)});
  ASSERT_EQ(r.size(), 13u);
  // 1 + 2^-11 ties to 1.0 in f16; 70000 overflows to inf.
  EXPECT_EQ(r[0].data[0], 1.0);
  EXPECT_EQ(r[0].data[1], kInf);
  EXPECT_EQ(r[0].data[2], -2.5);
  EXPECT_EQ(r[0].data[3], roundToHalf(static_cast<float>(0.1)));
  EXPECT_EQ(r[1].data, (std::vector<double>{1, 70000, -2, 0}));
  EXPECT_EQ(r[2].data, (std::vector<double>{1, 1, 0, 0})); // NaN is unordered
  EXPECT_EQ(r[3].data[0], static_cast<double>(1.00048828125f));
  EXPECT_TRUE(std::isnan(r[3].data[1])); // maximumf propagates NaN
  EXPECT_EQ(r[3].data[3], 3.0);
  EXPECT_EQ(r[4].data[0], 2.0);
  EXPECT_EQ(r[5].data[0], 1);
  EXPECT_EQ(r[6].data[0], -1);
  EXPECT_EQ(r[7].data, (std::vector<double>{2, 2}));
  EXPECT_EQ(r[8].data[0], static_cast<double>(0.1f));
  EXPECT_EQ(r[9].data[0], static_cast<double>(std::sqrt(2.0f)));
  EXPECT_EQ(r[10].data[0], 0x3F800000);
  EXPECT_EQ(r[11].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r[11].data[3], static_cast<double>(0.1f));
  EXPECT_EQ(r[12].data[0], roundToBF16(static_cast<float>(std::sqrt(2.0))));
  auto r2 = call("k", {RtValue::scalar(i1, 1)});
  EXPECT_EQ(r2[4].data[0], 1.0);
}

TEST_F(InterpTest, RuntimeErrors) {
  parse(R"mlir(
func.func @div(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  return %q : i32
}
func.func @loop(%s: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c9 = arith.constant 9 : i32
  %r = scf.for %i = %c0 to %c9 step %s iter_args(%x = %c0) -> (i32) : i32 {
    scf.yield %i : i32
  }
  return %r : i32
}
func.func @unsup(%a: f32) -> f32 {
  %r = math.atan %a : f32
  return %r : f32
}
)mlir");
  ElemType i32 = *ElemType::get(IntegerType::get(&ctx, 32));
  ElemType f32 = *ElemType::get(Float32Type::get(&ctx));
  std::string err;
  call("div", {RtValue::scalar(i32, 1), RtValue::scalar(i32, 0)}, &err);
  EXPECT_NE(err.find("error: integer division by zero in 'arith.divsi'"),
            std::string::npos)
      << err;
  EXPECT_TRUE(locatedInSource(err)) << err;
  call("loop", {RtValue::scalar(i32, 0)}, &err);
  EXPECT_NE(err.find("step is 0"), std::string::npos) << err;
  call("loop", {RtValue::scalar(i32, -1)}, &err);
  EXPECT_NE(err.find("step is -1"), std::string::npos) << err;
  auto ok = call("loop", {RtValue::scalar(i32, 4)});
  EXPECT_EQ(ok[0].data[0], 8);
  call("unsup", {RtValue::scalar(f32, 1)}, &err);
  EXPECT_NE(err.find("error: unsupported op 'math.atan'"), std::string::npos)
      << err;
  EXPECT_TRUE(locatedInSource(err)) << err;
}

//===----------------------------------------------------------------------===//
// Whole kernels through runKernel
//===----------------------------------------------------------------------===//

/// O[i] = A[i] * scale + pid, blocks of 4, grid = ceil(N / 4).
const char *kAxpy = R"mlir(
func.func @axpy_grid(%A: !tile.global<[N], f32> {tile.name = "A"},
                     %O: !tile.global<[N], f32> {tile.name = "O"},
                     %scale: f32 {tile.name = "scale"},
                     %W: !tile.global<[N, 2], i32> {tile.name = "W"}) -> (i32, i32, i32) {
  %n = tile.dim %A[0] : !tile.global<[N], f32>
  %c4 = arith.constant 4 : i32
  %g = arith.ceildivsi %n, %c4 : i32
  %c1 = arith.constant 1 : i32
  return %g, %c1, %c1 : i32, i32, i32
}
func.func @axpy(%A: !tile.global<[N], f32> {tile.name = "A"},
                %O: !tile.global<[N], f32> {tile.name = "O"},
                %scale: f32 {tile.name = "scale"},
                %W: !tile.global<[N, 2], i32> {tile.name = "W"})
    attributes {tile.grid = @axpy_grid, tile.num_warps = 4 : i32} {
  %pid = tile.program_id 0 : i32
  %np = tile.num_programs 0 : i32
  %c4 = arith.constant 4 : i32
  %off = arith.muli %pid, %c4 : i32
  %a = tile.load %A[%off] window [0] pad 0.0 : f32 : !tile.global<[N], f32> -> tensor<4xf32>
  %s = tile.splat %scale : f32 -> tensor<4xf32>
  %pf = arith.sitofp %pid : i32 to f32
  %p = tile.splat %pf : f32 -> tensor<4xf32>
  %x = arith.mulf %a, %s : tensor<4xf32>
  %y = arith.addf %x, %p : tensor<4xf32>
  tile.store %y, %O[%off] window [0] : tensor<4xf32> -> !tile.global<[N], f32>
  %c0 = arith.constant 0 : i32
  %pidt = tile.splat %pid : i32 -> tensor<4xi32>
  %npt = tile.splat %np : i32 -> tensor<4xi32>
  %e0 = tile.expand_dims %pidt axis = 1 : tensor<4xi32> -> tensor<4x1xi32>
  %e1 = tile.expand_dims %npt axis = 1 : tensor<4xi32> -> tensor<4x1xi32>
  tile.store %e0, %W[%off, %c0] window [0, 1] : tensor<4x1xi32> -> !tile.global<[N, 2], i32>
  %c1 = arith.constant 1 : i32
  tile.store %e1, %W[%off, %c1] window [0, 1] : tensor<4x1xi32> -> !tile.global<[N, 2], i32>
  return
}
)mlir";

TEST_F(InterpTest, RunKernelEndToEnd) {
  parse(kAxpy);
  std::vector<double> a;
  for (int i = 0; i < 10; ++i)
    a.push_back(i + 0.5);
  std::string A = writeNpy("axpy_A.npy", npy::DType::F32, {10}, a);
  std::string O = writeNpy("axpy_O.npy", npy::DType::F32, {10},
                           std::vector<double>(10, -1));
  std::string W = writeNpy("axpy_W.npy", npy::DType::I32, {10, 2},
                           std::vector<double>(20, 0));
  std::string outO = tmp("axpy_out_O.npy"), outW = tmp("axpy_out_W.npy");
  RunRequest req{"interp",
                 {{"A", A}, {"O", O}, {"scale", "2"}, {"W", W}},
                 {{"O", outO}, {"W", outW}}};
  std::string diag;
  ASSERT_EQ(run(req, diag), 0) << diag;
  EXPECT_EQ(diag, "");
  npy::Array o = readNpy(outO);
  EXPECT_EQ(o.dtype, npy::DType::F32);
  EXPECT_EQ(o.shape, (std::vector<int64_t>{10}));
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(o.get(i), (i + 0.5) * 2 + i / 4) << i;
  npy::Array w = readNpy(outW);
  EXPECT_EQ(w.dtype, npy::DType::I32);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(w.get(2 * i), i / 4);
    EXPECT_EQ(w.get(2 * i + 1), 3); // grid = ceil(10 / 4)
  }
}

TEST_F(InterpTest, GridEvaluation) {
  parse(kAxpy);
  ElemType f32 = *ElemType::get(Float32Type::get(&ctx));
  ElemType i32 = *ElemType::get(IntegerType::get(&ctx, 32));
  for (int64_t n : {0, 1, 4, 5, 1000}) {
    GlobalBuffer A{f32, {n}, std::vector<double>(n, 0)};
    GlobalBuffer W{i32, {n, 2}, std::vector<double>(2 * n, 0)};
    std::array<int64_t, 3> grid;
    InterpError err;
    ASSERT_TRUE(evaluateGrid(fn("axpy_grid"),
                             {RtValue::globalRef(&A), RtValue::globalRef(&A),
                              RtValue::scalar(f32, 1), RtValue::globalRef(&W)},
                             grid, err))
        << err.message;
    EXPECT_EQ(grid[0], (n + 3) / 4);
    EXPECT_EQ(grid[1], 1);
    EXPECT_EQ(grid[2], 1);
  }
}

TEST_F(InterpTest, ArgumentBindingErrors) {
  parse(kAxpy);
  std::string A = writeNpy("bind_A.npy", npy::DType::F32, {10},
                           std::vector<double>(10, 1));
  std::string A7 = writeNpy("bind_A7.npy", npy::DType::F32, {7},
                            std::vector<double>(7, 1));
  std::string A16 = writeNpy("bind_A16.npy", npy::DType::F16, {10},
                             std::vector<double>(10, 1));
  std::string W = writeNpy("bind_W.npy", npy::DType::I32, {10, 2},
                           std::vector<double>(20, 0));
  std::string W3 = writeNpy("bind_W3.npy", npy::DType::I32, {10, 3},
                            std::vector<double>(30, 0));
  std::string Wr = writeNpy("bind_Wr.npy", npy::DType::I32, {20},
                            std::vector<double>(20, 0));
  std::string bad = tmp("bind_bad.npy");
  {
    FILE *f = std::fopen(bad.c_str(), "wb");
    std::fputs("garbage", f);
    std::fclose(f);
  }
  struct Case {
    RunRequest req;
    const char *expect;
  } cases[] = {
      {{"interp", {{"A", A}, {"O", A}}, {}},
       "missing argument(s) for kernel parameter(s): scale, W"},
      {{"interp", {{"A", A16}, {"O", A}, {"scale", "1"}, {"W", W}}, {}},
       "argument 'A' is float16 but the kernel declares f32"},
      {{"interp", {{"A", A}, {"O", A7}, {"scale", "1"}, {"W", W}}, {}},
       "dim 'N' is 10 in A but 7 in O"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}, {"W", W}, {"Z", A}}, {}},
       "unknown argument 'Z' (the kernel's parameters are: A, O, scale, W)"},
      {{"interp", {{"A", A}, {"A", A}, {"O", A}, {"scale", "1"}, {"W", W}}, {}},
       "argument 'A' is given twice"},
      {{"interp", {{"A", "3"}, {"O", A}, {"scale", "1"}, {"W", W}}, {}},
       "argument 'A' is a tensor parameter"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", A}, {"W", W}}, {}},
       "argument 'scale' is a scalar f32 parameter and needs a number"},
      {{"interp", {{"A", bad}, {"O", A}, {"scale", "1"}, {"W", W}}, {}},
       "cannot read argument 'A' from"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}, {"W", Wr}}, {}},
       "argument 'W' has rank 1"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}, {"W", W3}}, {}},
       "argument 'W' has size 3 in dim 1 but the kernel declares 2"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}, {"W", W}}, {{"Q", A}}},
       "--out names unknown parameter 'Q'"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}, {"W", W}}, {{"scale", A}}},
       "--out names scalar parameter 'scale'"},
      {{"interp", {{"A", A}, {"O", A}, {"scale", "1"}}, {{"W", A}}},
       "--out names parameter 'W', which has no --arg"},
      {{"tpu", {}, {}}, "target 'tpu' is not supported"},
  };
  for (const Case &c : cases) {
    std::string diag;
    EXPECT_EQ(run(c.req, diag), 1) << c.expect << "\n" << diag;
    EXPECT_NE(diag.find(std::string("error: ") + c.expect), std::string::npos)
        << "expected '" << c.expect << "' in:\n" << diag;
  }
  // An i32 scalar that is not an integer / out of range.
  parse(R"mlir(
func.func @g(%n: i32 {tile.name = "n"}) -> (i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  return %n, %c1, %c1 : i32, i32, i32
}
func.func @k(%n: i32 {tile.name = "n"}) attributes {tile.grid = @g} {
  %c1 = arith.constant 1 : i32
  %d = arith.divsi %c1, %n : i32
  return
}
)mlir");
  std::string diag;
  EXPECT_EQ(run({"interp", {{"n", "1.5"}}, {}}, diag), 1);
  EXPECT_NE(diag.find("needs an integer, not '1.5'"), std::string::npos) << diag;
  EXPECT_EQ(run({"interp", {{"n", "3000000000"}}, {}}, diag), 1);
  EXPECT_NE(diag.find("does not fit in i32"), std::string::npos) << diag;
  EXPECT_EQ(run({"interp", {{"n", "-1"}}, {}}, diag), 1);
  EXPECT_NE(diag.find("grid size along axis 0 is -1"), std::string::npos)
      << diag;
  EXPECT_EQ(run({"interp", {{"n", "0"}}, {}}, diag), 0) << diag; // no programs
  EXPECT_EQ(run({"interp", {{"n", "2"}}, {}}, diag), 0) << diag;
}

TEST_F(InterpTest, DivisionByZeroInKernelIsUserError) {
  parse(R"mlir(
func.func @g(%n: i32 {tile.name = "n"}) -> (i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  return %c1, %c1, %c1 : i32, i32, i32
}
func.func @k(%n: i32 {tile.name = "n"}) attributes {tile.grid = @g} {
  %c1 = arith.constant 1 : i32
  %d = arith.divsi %c1, %n : i32
  return
}
)mlir");
  std::string diag;
  EXPECT_EQ(run({"interp", {{"n", "0"}}, {}}, diag), 1);
  EXPECT_NE(diag.find("error: integer division by zero in 'arith.divsi'"),
            std::string::npos)
      << diag;
  EXPECT_NE(diag.find("program id (0, 0, 0)"), std::string::npos) << diag;
}

/// FlashAttention-2 forward for one head: Q [Nq, 64], K/V [Nk, 64] f16.
const char *kFa2 = R"mlir(
func.func @fa2_grid(%Q: !tile.global<[Nq, 64], f16> {tile.name = "Q"},
                    %K: !tile.global<[Nk, 64], f16> {tile.name = "K"},
                    %V: !tile.global<[Nk, 64], f16> {tile.name = "V"},
                    %O: !tile.global<[Nq, 64], f16> {tile.name = "O"},
                    %scale: f32 {tile.name = "sm_scale"}) -> (i32, i32, i32) {
  %n = tile.dim %Q[0] : !tile.global<[Nq, 64], f16>
  %bm = arith.constant 128 : i32
  %g = arith.ceildivsi %n, %bm : i32
  %c1 = arith.constant 1 : i32
  return %g, %c1, %c1 : i32, i32, i32
}
func.func @fa2(%Q: !tile.global<[Nq, 64], f16> {tile.name = "Q"},
               %K: !tile.global<[Nk, 64], f16> {tile.name = "K"},
               %V: !tile.global<[Nk, 64], f16> {tile.name = "V"},
               %O: !tile.global<[Nq, 64], f16> {tile.name = "O"},
               %scale: f32 {tile.name = "sm_scale"})
    attributes {tile.grid = @fa2_grid, tile.num_warps = 4 : i32} {
  %pid = tile.program_id 0 : i32
  %bm = arith.constant 128 : i32
  %m0 = arith.muli %pid, %bm : i32
  %c0 = arith.constant 0 : i32
  %q = tile.load %Q[%m0, %c0] window [0, 1] pad 0.0 : f16
      : !tile.global<[Nq, 64], f16> -> tensor<128x64xf16>
  %nk = tile.dim %K[0] : !tile.global<[Nk, 64], f16>
  %bn = arith.constant 64 : i32
  %minf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %zl = arith.constant dense<0.0> : tensor<128xf32>
  %zacc = arith.constant dense<0.0> : tensor<128x64xf32>
  %sc = tile.splat %scale : f32 -> tensor<128x64xf32>
  %cols = tile.iota : tensor<64xi32>
  %lim = tile.splat %nk : i32 -> tensor<64xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %r:3 = scf.for %n0 = %c0 to %nk step %bn
      iter_args(%m = %minf, %l = %zl, %acc = %zacc)
      -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%n0, %c0] window [0, 1] pad 0.0 : f16
        : !tile.global<[Nk, 64], f16> -> tensor<64x64xf16>
    %v = tile.load %V[%n0, %c0] window [0, 1] pad 0.0 : f16
        : !tile.global<[Nk, 64], f16> -> tensor<64x64xf16>
    %s0 = tile.mma %q, %k, %zacc {transpose_b}
        : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %s1 = arith.mulf %s0, %sc : tensor<128x64xf32>
    %off = tile.splat %n0 : i32 -> tensor<64xi32>
    %idx = arith.addi %cols, %off : tensor<64xi32>
    %ok = arith.cmpi slt, %idx, %lim : tensor<64xi32>
    %ok2 = tile.expand_dims %ok axis = 0 : tensor<64xi1> -> tensor<1x64xi1>
    %okb = tile.broadcast %ok2 : tensor<1x64xi1> -> tensor<128x64xi1>
    %s = arith.select %okb, %s1, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %m2, %l2, %acc2 = tile.online_softmax deferred %s, %v, %m, %l, %acc
        : tensor<128x64xf32>, tensor<64x64xf16>, tensor<128xf32>, tensor<128x64xf32>
    scf.yield %m2, %l2, %acc2 : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  %o = tile.online_softmax_finalize %r#2, %r#1 : tensor<128x64xf32>, tensor<128xf32>
  %o16 = arith.truncf %o : tensor<128x64xf32> to tensor<128x64xf16>
  tile.store %o16, %O[%m0, %c0] window [0, 1]
      : tensor<128x64xf16> -> !tile.global<[Nq, 64], f16>
  return
}
)mlir";

void runFa2(InterpTest *t, int nq, int nk, double *seconds, double *maxErr) {
  std::mt19937 rng(nq * 1000 + nk);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  auto gen = [&](int n) {
    std::vector<double> v(n * 64);
    for (double &x : v)
      x = roundToHalf(dist(rng));
    return v;
  };
  std::vector<double> q = gen(nq), k = gen(nk), v = gen(nk);
  std::string tag = std::to_string(nq) + "_" + std::to_string(nk);
  std::string Q = t->writeNpy("fa_Q" + tag, npy::DType::F16, {nq, 64}, q);
  std::string K = t->writeNpy("fa_K" + tag, npy::DType::F16, {nk, 64}, k);
  std::string V = t->writeNpy("fa_V" + tag, npy::DType::F16, {nk, 64}, v);
  std::string O = t->writeNpy("fa_O" + tag, npy::DType::F16, {nq, 64},
                              std::vector<double>(nq * 64, 0));
  std::string out = t->tmp("fa_out" + tag);
  double scale = 0.125;
  RunRequest req{"interp",
                 {{"Q", Q}, {"K", K}, {"V", V}, {"O", O}, {"sm_scale", "0.125"}},
                 {{"O", out}}};
  std::string diag;
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(t->run(req, diag), 0) << diag;
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
                 .count();
  npy::Array o = t->readNpy(out);
  ASSERT_EQ(o.shape, (std::vector<int64_t>{nq, 64}));
  *maxErr = 0;
  std::vector<double> s(nk);
  for (int i = 0; i < nq; ++i) {
    double m = -kInf;
    for (int j = 0; j < nk; ++j) {
      double dot = 0;
      for (int d = 0; d < 64; ++d)
        dot += q[i * 64 + d] * k[j * 64 + d];
      s[j] = dot * scale;
      m = std::max(m, s[j]);
    }
    double l = 0;
    for (int j = 0; j < nk; ++j)
      l += s[j] = std::exp(s[j] - m);
    for (int d = 0; d < 64; ++d) {
      double acc = 0;
      for (int j = 0; j < nk; ++j)
        acc += s[j] * v[j * 64 + d];
      *maxErr = std::max(*maxErr, std::fabs(acc / l - o.get(i * 64 + d)));
    }
  }
}

TEST_F(InterpTest, FlashAttention2MatchesReference) {
  parse(kFa2);
  double secs, err;
  runFa2(this, 200, 150, &secs, &err); // ragged edges in both dims
  EXPECT_LT(err, 2e-3);
  runFa2(this, 1, 1, &secs, &err);
  EXPECT_LT(err, 2e-3);
}

TEST_F(InterpTest, FlashAttention2Speed) {
  parse(kFa2);
  double secs, err;
  runFa2(this, 512, 512, &secs, &err);
  EXPECT_LT(err, 2e-3);
  std::printf("FA2 Nq=Nk=512 D=64 interpreted in %.3f s\n", secs);
  EXPECT_LT(secs, 30.0); // generous: shared CPUs
}

} // namespace

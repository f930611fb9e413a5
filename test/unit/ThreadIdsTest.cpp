//===- ThreadIdsTest.cpp - the SIMT lowering's thread-id lookup -----------===//
//
// Every tile -> SIMT pattern asks getThreadIds for tid.x, tid / 32 and
// tid % 32; the first call creates them at the top of the entry block and
// later calls must find those again wherever other ops have since been put.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Conversion/TileToSIMT/Utility.h"
#include "flashc/InitAllDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class ThreadIdsTest : public ::testing::Test {
public:
  ThreadIdsTest() { flash::loadAllDialects(ctx); }

  /// Parses a module holding one func.func whose entry block is `body`.
  func::FuncOp parse(const std::string &body) {
    module = parseSourceString<ModuleOp>(
        "func.func @k() {\n" + body + "\nreturn\n}\n", ParserConfig(&ctx));
    EXPECT_TRUE(module);
    return cast<func::FuncOp>(module->getBody()->front());
  }

  /// getThreadIds as a pattern lowering `f`'s return would call it.
  flash::simt::ThreadIds lookup(func::FuncOp f) {
    OpBuilder b(&ctx);
    return flash::simt::getThreadIds(b, f.getBody().front().getTerminator());
  }

  size_t count(func::FuncOp f, StringRef name) {
    size_t n = 0;
    f.walk([&](Operation *op) { n += op->getName().getStringRef() == name; });
    return n;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ThreadIdsTest, FindsIdsBehindOtherOps) {
  func::FuncOp f = parse(R"(
    %x = arith.constant 7 : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %y = arith.addi %x, %x : i32
    %c32 = arith.constant 32 : i32
    %lane = arith.remui %tid, %c32 : i32
    %warp = arith.divui %tid, %c32 : i32)");
  flash::simt::ThreadIds ids = lookup(f);
  EXPECT_EQ(count(f, "nvvm.read.ptx.sreg.tid.x"), 1u);
  EXPECT_EQ(ids.tid.getDefiningOp()->getName().getStringRef(),
            "nvvm.read.ptx.sreg.tid.x");
  EXPECT_TRUE(isa<arith::DivUIOp>(ids.warp.getDefiningOp()));
  EXPECT_TRUE(isa<arith::RemUIOp>(ids.lane.getDefiningOp()));
}

TEST_F(ThreadIdsTest, CreatesThemOnceWhereOnlyLookalikesExist) {
  // tid.x first but followed by something else, and a division by 16: the
  // position-based lookup this replaced cast these and crashed.
  func::FuncOp f = parse(R"(
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c16 = arith.constant 16 : i32
    %half = arith.divui %tid, %c16 : i32
    %r = arith.remui %tid, %c16 : i32)");
  flash::simt::ThreadIds first = lookup(f);
  EXPECT_EQ(count(f, "nvvm.read.ptx.sreg.tid.x"), 2u);
  OpBuilder b = OpBuilder::atBlockBegin(&f.getBody().front());
  arith::ConstantIntOp::create(b, f.getLoc(), 3, 32);
  flash::simt::ThreadIds again = lookup(f);
  EXPECT_EQ(count(f, "nvvm.read.ptx.sreg.tid.x"), 2u);
  EXPECT_EQ(first.tid, again.tid);
  EXPECT_EQ(first.warp, again.warp);
  EXPECT_EQ(first.lane, again.lane);
}

} // namespace

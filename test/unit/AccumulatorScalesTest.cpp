//===- AccumulatorScalesTest.cpp - sinkAccumulatorScales on small IR ------===//
//
// The transform runs on LLVM IR for ptxas, below the emulator's level:
// these tests check on hand-written IR that every accumulator lane an MMA
// reads from a vector product becomes the product of that lane's factors
// right before the MMA, and that a product in another block, or one that
// something else reads too, stays.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/AccumulatorScales.h"
#include "ParsedIR.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace llvm;
using flash::test::named;
using flash::test::parseIR;

namespace {

// One m16n8k16 MMA reading lanes 4..7 of %scaled (the accumulator %acc
// times the row factors %alpha); %early is scaled in the entry block;
// %other lies between the lanes and the MMA.
constexpr const char *kRescale = R"(
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
define float @kernel(<8 x float> %acc, <8 x float> %alpha, <2 x half> %a, <2 x half> %b, <8 x float> %early, i1 %c) {
entry:
  %pre = fmul <8 x float> %early, %alpha
  br label %body
body:
  %scaled = fmul <8 x float> %acc, %alpha
  %c0 = extractelement <8 x float> %scaled, i64 4
  %c1 = extractelement <8 x float> %scaled, i64 5
  %c2 = extractelement <8 x float> %scaled, i64 6
  %c3 = extractelement <8 x float> %pre, i64 7
  %other = fadd float %c3, 1.0
  %d = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %b, <2 x half> %b, float %c0, float %c1, float %c2, float %c3)
  %r = extractvalue { float, float, float, float } %d, 0
  %s = fadd float %r, %other
  ret float %s
}
)";

/// Whether `value` is `extractelement vector, lane` (false for null).
bool isLane(Value *value, Value *vector, int64_t lane) {
  auto *extract = dyn_cast_if_present<ExtractElementInst>(value);
  auto *index = extract ? dyn_cast<ConstantInt>(extract->getIndexOperand())
                        : nullptr;
  return index && extract->getVectorOperand() == vector &&
         index->getSExtValue() == lane;
}

TEST(AccumulatorScalesTest, LanesScaledRightBeforeTheMMA) {
  auto parsed = parseIR(kRescale);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Value *acc = f.getArg(0), *alpha = f.getArg(1);
  ASSERT_TRUE(flash::sinkAccumulatorScales(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  auto *mma = dyn_cast_if_present<CallInst>(named(f, "d"));
  ASSERT_TRUE(mma) << "the MMA %d is gone";
  Instruction *pre = named(f, "pre");
  ASSERT_TRUE(pre) << "%pre (scaled in another block) is gone";
  for (unsigned lane = 0; lane < 3; ++lane) {
    auto *mul = dyn_cast<BinaryOperator>(mma->getArgOperand(6 + lane));
    ASSERT_TRUE(mul && mul->getOpcode() == Instruction::FMul) << lane;
    ASSERT_EQ(mul->getParent(), mma->getParent()) << lane;
    ASSERT_TRUE(mul->comesBefore(mma)) << lane;
    EXPECT_TRUE(isLane(mul->getOperand(0), acc, 4 + lane)) << lane;
    EXPECT_TRUE(isLane(mul->getOperand(1), alpha, 4 + lane)) << lane;
    // Between the product and the MMA: only the next lanes' products
    // (%other, before the MMA in the input, stays above them).
    for (Instruction *next = mul->getNextNode(); next != mma;
         next = next->getNextNode())
      EXPECT_TRUE(
          (isa<ExtractElementInst>(next) && next->getOperand(0) != pre) ||
          next->getOpcode() == Instruction::FMul)
          << lane;
  }
  EXPECT_EQ(named(f, "scaled"), nullptr) << "the vector product is erased";
  // Scaled in another block: stays where it is.
  EXPECT_TRUE(isLane(mma->getArgOperand(9), pre, 7));
  EXPECT_EQ(pre->getParent(), &f.getEntryBlock());
}

// %scaled feeds the MMA; %mixed also feeds an fadd through a lane, %stored
// is also stored whole. Rewritten, both would be computed twice in the IR
// (once as the vector, once as the MMA's scalar copies).
constexpr const char *kOtherReaders = R"(
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
define float @kernel(<4 x float> %acc, <4 x float> %alpha, <2 x half> %a, <2 x half> %b, ptr %out) {
  %scaled = fmul <4 x float> %acc, %alpha
  %s0 = extractelement <4 x float> %scaled, i64 0
  %mixed = fmul <4 x float> %acc, %acc
  %m1 = extractelement <4 x float> %mixed, i64 1
  %stored = fmul <4 x float> %alpha, %alpha
  %t2 = extractelement <4 x float> %stored, i64 2
  %t3 = extractelement <4 x float> %stored, i64 3
  %x = fadd float %m1, 1.0
  %d = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %b, <2 x half> %b, float %s0, float %m1, float %t2, float %t3)
  store <4 x float> %stored, ptr %out
  %r = extractvalue { float, float, float, float } %d, 0
  %y = fadd float %r, %x
  ret float %y
}
)";

TEST(AccumulatorScalesTest, ProductsReadElsewhereStay) {
  auto parsed = parseIR(kOtherReaders);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  ASSERT_TRUE(flash::sinkAccumulatorScales(f)) << "%scaled is rewritten";
  EXPECT_FALSE(verifyFunction(f, &errs()));
  auto *mma = dyn_cast_if_present<CallInst>(named(f, "d"));
  ASSERT_TRUE(mma);
  EXPECT_EQ(named(f, "scaled"), nullptr);
  Instruction *mixed = named(f, "mixed"), *stored = named(f, "stored");
  ASSERT_TRUE(mixed && stored) << "products read elsewhere are kept";
  EXPECT_TRUE(isLane(mma->getArgOperand(7), mixed, 1));
  EXPECT_TRUE(isLane(mma->getArgOperand(8), stored, 2));
  EXPECT_TRUE(isLane(mma->getArgOperand(9), stored, 3));
}

TEST(AccumulatorScalesTest, NoMMANoChange) {
  auto parsed = parseIR(R"(
define float @kernel(<4 x float> %acc, <4 x float> %alpha) {
  %scaled = fmul <4 x float> %acc, %alpha
  %lane = extractelement <4 x float> %scaled, i64 1
  ret float %lane
}
)");
  ASSERT_TRUE(parsed->function);
  EXPECT_FALSE(flash::sinkAccumulatorScales(*parsed->function));
  EXPECT_NE(named(*parsed->function, "scaled"), nullptr);
}
} // namespace

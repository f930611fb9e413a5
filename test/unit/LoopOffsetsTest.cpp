//===- LoopOffsetsTest.cpp - rematerializeLoopOffsets on small IR ---------===//
//
// The transform runs after the emulator's level (on LLVM IR, for ptxas), so
// the emulator's numerics never see it: these tests check on hand-written
// IR that every rewritten use computes the same expression as before, from
// the opaque copy of the same root, and that what must stay does.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/LoopOffsets.h"
#include "ParsedIR.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace llvm;
using flash::test::named;
using flash::test::parseIR;

namespace {

// A KV-loop-like function: three loads off offsets `base ^ 0/32/64` (one
// root), one off `other + 16` (a root with a single value), and a copy
// address `gep (gep half %k, %col), %row` with the inner GEP hoisted.
constexpr const char *kLoop = R"(
@smem = addrspace(3) global [4096 x i8] undef
define i32 @kernel(i32 %tid, i32 %other, ptr addrspace(1) %k, i64 %col, i32 %n) {
entry:
  %base = add i32 %tid, %other
  %x32 = xor i32 %base, 32
  %x64 = xor i32 %base, 64
  %w0 = zext i32 %base to i64
  %w32 = zext i32 %x32 to i64
  %w64 = zext i32 %x64 to i64
  %a0 = getelementptr i8, ptr addrspace(3) @smem, i64 %w0
  %a32 = getelementptr i8, ptr addrspace(3) @smem, i64 %w32
  %a64 = getelementptr i8, ptr addrspace(3) @smem, i64 %w64
  %single = add i32 %other, 16
  %kcol = getelementptr half, ptr addrspace(1) %k, i64 %col
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi i32 [ 0, %entry ], [ %sum4, %loop ]
  %v0 = load i32, ptr addrspace(3) %a0
  %v32 = load i32, ptr addrspace(3) %a32
  %v64 = load i32, ptr addrspace(3) %a64
  %row = zext i32 %i to i64
  %kp = getelementptr half, ptr addrspace(1) %kcol, i64 %row
  %kv = load i32, ptr addrspace(1) %kp
  %sum1 = add i32 %acc, %v0
  %sum2 = add i32 %sum1, %v32
  %sum3 = add i32 %sum2, %v64
  %s = add i32 %sum3, %single
  %sum4 = add i32 %s, %kv
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %sum4
}
)";

/// `copy` computes `original` with `root` replaced by `copyOfRoot`.
bool sameExpression(Value *original, Value *copy, Value *root,
                    Value *copyOfRoot) {
  if (original == root)
    return copy == copyOfRoot;
  if (original == copy)
    return isa<Constant>(original);
  auto *a = dyn_cast<Instruction>(original);
  auto *b = dyn_cast<Instruction>(copy);
  if (!a || !b || !a->isSameOperationAs(b))
    return false;
  for (unsigned i = 0; i < a->getNumOperands(); ++i)
    if (!sameExpression(a->getOperand(i), b->getOperand(i), root, copyOfRoot))
      return false;
  return true;
}

/// The opaque copy of `root` at the top of `block`, or null.
CallInst *opaqueCopyOf(BasicBlock &block, Value *root) {
  for (Instruction &inst : block) {
    auto *call = dyn_cast<CallInst>(&inst);
    if (call && call->isInlineAsm() && call->getArgOperand(0) == root &&
        cast<InlineAsm>(call->getCalledOperand())->hasSideEffects())
      return call;
  }
  return nullptr;
}

TEST(LoopOffsets, RecomputesChainsFromOneRootInTheLoop) {
  auto parsed = parseIR(kLoop);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Value *root = named(f, "base");
  BasicBlock *loop = named(f, "i")->getParent();
  std::vector<std::pair<LoadInst *, Value *>> loads;
  for (StringRef name : {"v0", "v32", "v64"}) {
    auto *load = cast<LoadInst>(named(f, name));
    loads.push_back({load, load->getPointerOperand()});
  }

  EXPECT_TRUE(flash::rematerializeLoopOffsets(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  CallInst *copyOfRoot = opaqueCopyOf(*loop, root);
  ASSERT_TRUE(copyOfRoot);
  EXPECT_EQ(copyOfRoot->getType(), root->getType());
  for (auto [load, original] : loads) {
    auto *address = dyn_cast<Instruction>(load->getPointerOperand());
    ASSERT_TRUE(address);
    EXPECT_EQ(address->getParent(), loop) << load->getName().str();
    EXPECT_TRUE(sameExpression(original, address, root, copyOfRoot))
        << load->getName().str();
  }
}

TEST(LoopOffsets, LeavesASingleValueOfARoot) {
  auto parsed = parseIR(kLoop);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *single = named(f, "single");
  Instruction *s = named(f, "s");
  flash::rematerializeLoopOffsets(f);
  EXPECT_EQ(s->getOperand(1), single);
  EXPECT_FALSE(opaqueCopyOf(*s->getParent(), named(f, "other")));
}

TEST(LoopOffsets, AddsTheInnerIndexOfAHoistedGEPInTheLoop) {
  auto parsed = parseIR(kLoop);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  auto *kp = cast<GetElementPtrInst>(named(f, "kp"));
  Value *k = f.getArg(2);
  Value *col = f.getArg(3);
  Value *row = named(f, "row");
  flash::rematerializeLoopOffsets(f);
  EXPECT_FALSE(verifyFunction(f, &errs()));
  EXPECT_EQ(kp->getPointerOperand(), k);
  auto *index = dyn_cast<BinaryOperator>(kp->getOperand(1));
  ASSERT_TRUE(index);
  EXPECT_EQ(index->getOpcode(), Instruction::Add);
  EXPECT_EQ(index->getOperand(0), row);
  EXPECT_EQ(index->getOperand(1), col);
  // The hoisted GEP is gone: NVPTX's NaryReassociate would reuse it.
  EXPECT_FALSE(named(f, "kcol"));
}

TEST(LoopOffsets, OneHoistedGEPUnderTwoCopyAddresses) {
  // K's copies at two rows share LICM's hoisted `gep %k, %col`: both are
  // rewritten, and the hoisted GEP is deleted once.
  auto parsed = parseIR(R"(
define i32 @kernel(ptr addrspace(1) %k, i64 %col, i32 %n) {
entry:
  %kcol = getelementptr half, ptr addrspace(1) %k, i64 %col
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi i32 [ 0, %entry ], [ %sum, %loop ]
  %row = zext i32 %i to i64
  %row8 = add i64 %row, 8
  %kp0 = getelementptr half, ptr addrspace(1) %kcol, i64 %row
  %kp8 = getelementptr half, ptr addrspace(1) %kcol, i64 %row8
  %a = load i32, ptr addrspace(1) %kp0
  %b = load i32, ptr addrspace(1) %kp8
  %ab = add i32 %a, %b
  %sum = add i32 %acc, %ab
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %sum
}
)");
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Value *k = f.getArg(0);
  auto *kp0 = cast<GetElementPtrInst>(named(f, "kp0"));
  auto *kp8 = cast<GetElementPtrInst>(named(f, "kp8"));
  EXPECT_TRUE(flash::rematerializeLoopOffsets(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  EXPECT_EQ(kp0->getPointerOperand(), k);
  EXPECT_EQ(kp8->getPointerOperand(), k);
  EXPECT_FALSE(named(f, "kcol"));
}

// A vector built lane by lane from one root (the masked loop's column
// indices `col | c`), used in the loop: recomputed there, lanes and all.
constexpr const char *kVectorLoop = R"(
define i32 @kernel(i32 %tid, i32 %n) {
entry:
  %col = shl i32 %tid, 1
  %c1 = or i32 %col, 1
  %c8 = or i32 %col, 8
  %v0 = insertelement <4 x i32> poison, i32 %col, i64 0
  %v1 = insertelement <4 x i32> %v0, i32 %c1, i64 1
  %v2 = insertelement <4 x i32> %v1, i32 %c8, i64 2
  %cols = insertelement <4 x i32> %v2, i32 %tid, i64 3
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi <4 x i32> [ zeroinitializer, %entry ], [ %sum, %loop ]
  %sum = add <4 x i32> %acc, %cols
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = extractelement <4 x i32> %sum, i64 0
  ret i32 %r
}
)";

TEST(LoopOffsets, RecomputesAVectorOfOneRootInTheLoop) {
  auto parsed = parseIR(kVectorLoop);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Value *root = f.getArg(0);
  Instruction *cols = named(f, "cols");
  auto *sum = cast<Instruction>(named(f, "sum"));
  EXPECT_TRUE(flash::rematerializeLoopOffsets(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  CallInst *copyOfRoot = opaqueCopyOf(*sum->getParent(), root);
  ASSERT_TRUE(copyOfRoot);
  auto *inLoop = dyn_cast<Instruction>(sum->getOperand(1));
  ASSERT_TRUE(inLoop);
  EXPECT_EQ(inLoop->getParent(), sum->getParent());
  EXPECT_TRUE(sameExpression(cols, inLoop, root, copyOfRoot));
}

TEST(LoopOffsets, LeavesAScalarOfTwoValuesOfOneRoot) {
  // `a + b`, both from %tid: a scalar merge of two chains stays one value.
  auto parsed = parseIR(R"(
define i32 @kernel(i32 %tid, i32 %n) {
entry:
  %a = xor i32 %tid, 32
  %b = xor i32 %tid, 64
  %c = add i32 %a, %b
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add i32 %i, %c
  %done = icmp sge i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %next
}
)");
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *c = named(f, "c");
  EXPECT_FALSE(flash::rematerializeLoopOffsets(f));
  EXPECT_EQ(named(f, "next")->getOperand(1), c);
}

TEST(LoopOffsets, LeavesLoopFreeFunctions) {
  auto parsed = parseIR(R"(
define i32 @kernel(i32 %tid) {
  %a = xor i32 %tid, 32
  %b = xor i32 %tid, 64
  %c = add i32 %a, %b
  ret i32 %c
}
)");
  ASSERT_TRUE(parsed->function);
  EXPECT_FALSE(flash::rematerializeLoopOffsets(*parsed->function));
}

/// kLoop with one more header phi of `words` f32 lanes (an accumulator the
/// loop carries).
std::string loopCarrying(unsigned words) {
  std::string ir = kLoop;
  std::string type = "<" + std::to_string(words) + " x float>";
  std::string phi = "  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n";
  size_t at = ir.find(phi);
  ir.insert(at + phi.size(), "  %carried = phi " + type +
                                 " [ zeroinitializer, %entry ], [ %carried, "
                                 "%loop ]\n");
  return ir;
}

TEST(LoopOffsets, FullLoopsOnlyInTheWarpSpecializedVariant) {
  // kLoop's own phis carry two words: left alone.
  auto light = parseIR(kLoop);
  ASSERT_TRUE(light->function);
  auto *v32 = cast<LoadInst>(named(*light->function, "v32"));
  Value *before = v32->getPointerOperand();
  EXPECT_FALSE(flash::rematerializeFullLoopOffsets(*light->function));
  EXPECT_EQ(v32->getPointerOperand(), before);

  // Two words short of the threshold: left alone.
  auto almost = parseIR(loopCarrying(flash::kFullLoopCarriedWords - 3).c_str());
  ASSERT_TRUE(almost->function);
  EXPECT_FALSE(flash::rematerializeFullLoopOffsets(*almost->function));

  // At the threshold: the chains from `base` are recomputed in the loop.
  auto full = parseIR(loopCarrying(flash::kFullLoopCarriedWords - 2).c_str());
  ASSERT_TRUE(full->function);
  Function &f = *full->function;
  Value *root = named(f, "base");
  BasicBlock *loop = named(f, "i")->getParent();
  auto *load = cast<LoadInst>(named(f, "v32"));
  Value *original = load->getPointerOperand();
  EXPECT_TRUE(flash::rematerializeFullLoopOffsets(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  CallInst *copyOfRoot = opaqueCopyOf(*loop, root);
  ASSERT_TRUE(copyOfRoot);
  auto *address = dyn_cast<Instruction>(load->getPointerOperand());
  ASSERT_TRUE(address);
  EXPECT_EQ(address->getParent(), loop);
  EXPECT_TRUE(sameExpression(original, address, root, copyOfRoot));
}

} // namespace

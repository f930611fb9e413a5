//===- LoopExitFencesTest.cpp - fenceLoopExits on small IR ----------------===//
//
// The transform runs after the emulator's level (on LLVM IR, for ptxas), so
// the emulator's numerics never see it: these tests check on hand-written
// IR that every rewritten use reads its value through the identity
// `value & -((activemask >> laneid) & 1)` after the loop, and that what
// must stay does.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/LoopExitFences.h"
#include "ParsedIR.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace llvm;
using flash::test::named;
using flash::test::parseIR;

namespace {

// Two loops in a row, as tile-split-masked-loops leaves them. %size and
// %out cross the first loop unused; %bound is used in it; %late is used
// only in the second loop; %shared points into shared memory; %tid is a
// special register; %start, from %size through llvm.smax (as a split
// loop's clamped bound), is where the second loop starts (so it steers that
// loop's exit branch).
constexpr const char *kLoops = R"(
@smem = addrspace(3) global [4096 x i8] undef
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.smax.i32(i32, i32)
define i32 @kernel(i32 %n, i32 %h, ptr addrspace(1) %o) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %size = select i1 true, i32 16, i32 0
  %bound = add i32 %n, 63
  %late = xor i32 %tid, 32
  %row = zext i32 %tid to i64
  %out = getelementptr half, ptr addrspace(1) %o, i64 %row
  %shared = getelementptr i8, ptr addrspace(3) @smem, i32 %tid
  br label %first
first:
  %i = phi i32 [ 0, %entry ], [ %next, %first ]
  %next = add i32 %i, 64
  %done = icmp sge i32 %next, %bound
  br i1 %done, label %between, label %first
between:
  %copy = add i32 %size, %bound
  store i32 %copy, ptr addrspace(1) %o
  %start = call i32 @llvm.smax.i32(i32 %size, i32 %n)
  %t = add i32 %tid, %h
  br label %second
second:
  %j = phi i32 [ %start, %between ], [ %jnext, %second ]
  %jnext = add i32 %j, %late
  %jdone = icmp sge i32 %jnext, %n
  br i1 %jdone, label %exit, label %second
exit:
  store i32 %jnext, ptr addrspace(1) %out
  store i32 %t, ptr addrspace(3) %shared
  ret i32 %size
}
)";

bool isConstant(Value *value, int64_t constant) {
  auto *c = dyn_cast<ConstantInt>(value);
  return c && c->getSExtValue() == constant;
}

/// Whether `ones` is `-((activemask >> laneid) & 1)` computed in `block`.
bool isLiveLaneOnes(Value *ones, BasicBlock *block) {
  auto *neg = dyn_cast<BinaryOperator>(ones);
  if (!neg || neg->getParent() != block ||
      neg->getOpcode() != Instruction::Sub ||
      !isConstant(neg->getOperand(0), 0))
    return false;
  auto *bit = dyn_cast<BinaryOperator>(neg->getOperand(1));
  auto *shift = bit ? dyn_cast<BinaryOperator>(bit->getOperand(0)) : nullptr;
  if (!bit || bit->getOpcode() != Instruction::And ||
      !isConstant(bit->getOperand(1), 1) || !shift ||
      shift->getOpcode() != Instruction::LShr)
    return false;
  auto *mask = dyn_cast<CallInst>(shift->getOperand(0));
  auto *lane = dyn_cast<IntrinsicInst>(shift->getOperand(1));
  return mask && mask->isInlineAsm() &&
         cast<InlineAsm>(mask->getCalledOperand())->getAsmString() ==
             "activemask.b32 $0;" &&
         cast<InlineAsm>(mask->getCalledOperand())->hasSideEffects() &&
         lane && lane->getIntrinsicID() == Intrinsic::nvvm_read_ptx_sreg_laneid;
}

/// Whether `copy` is `value & ones` (through ptrtoint/inttoptr for a
/// pointer) with `ones` the live-lane identity of `block`.
bool isFencedCopy(Value *copy, Value *value, BasicBlock *block) {
  if (auto *back = dyn_cast<IntToPtrInst>(copy))
    copy = back->getOperand(0);
  auto *kept = dyn_cast<BinaryOperator>(copy);
  if (!kept || kept->getOpcode() != Instruction::And ||
      kept->getParent() != block)
    return false;
  Value *bits = kept->getOperand(0);
  if (auto *toInt = dyn_cast<PtrToIntInst>(bits))
    bits = toInt->getOperand(0);
  Value *ones = kept->getOperand(1);
  if (auto *sext = dyn_cast<SExtInst>(ones))
    ones = sext->getOperand(0);
  return bits == value && isLiveLaneOnes(ones, block);
}

TEST(LoopExitFences, FencesValuesThatCrossALoopUnused) {
  auto parsed = parseIR(kLoops);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *size = named(f, "size");
  Instruction *out = named(f, "out");
  auto *copy = cast<Instruction>(named(f, "copy"));
  auto *ret = cast<ReturnInst>(f.back().getTerminator());
  auto *store = cast<StoreInst>(&*f.back().begin());

  EXPECT_TRUE(flash::fenceLoopExits(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  // %size is used between the loops and at the end: a copy between them,
  // which crosses the second loop unused and is copied again at the end.
  Value *between = copy->getOperand(0);
  EXPECT_TRUE(isFencedCopy(between, size, copy->getParent()));
  EXPECT_TRUE(isFencedCopy(ret->getReturnValue(), between, ret->getParent()));
  // %out is used after both: its copy is at the end, once.
  EXPECT_TRUE(
      isFencedCopy(store->getPointerOperand(), out, store->getParent()));
  EXPECT_EQ(out->getNumUses(), 1u);
}

TEST(LoopExitFences, LeavesLoopValuesSpecialRegistersAndSharedPointers) {
  auto parsed = parseIR(kLoops);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *bound = named(f, "bound");
  Instruction *late = named(f, "late");
  Instruction *tid = named(f, "tid");
  Instruction *shared = named(f, "shared");
  auto *copy = cast<Instruction>(named(f, "copy"));
  auto *jnext = cast<Instruction>(named(f, "jnext"));
  auto *t = cast<Instruction>(named(f, "t"));
  auto *store = cast<StoreInst>(f.back().getTerminator()->getPrevNode());

  flash::fenceLoopExits(f);
  // Used in the first loop: live across it anyway.
  EXPECT_EQ(copy->getOperand(1), bound);
  // Used only in the second loop: a copy there would run every iteration.
  EXPECT_EQ(jnext->getOperand(1), late);
  // ptxas reads %tid.x again; it folds shared offsets into each access.
  EXPECT_EQ(t->getOperand(0), tid);
  EXPECT_EQ(store->getPointerOperand(), shared);
}

TEST(LoopExitFences, LeavesValuesThatSteerBranches) {
  auto parsed = parseIR(kLoops);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *size = named(f, "size");
  auto *copy = cast<Instruction>(named(f, "copy"));
  auto *start = cast<Instruction>(named(f, "start"));

  EXPECT_TRUE(flash::fenceLoopExits(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  // %start reaches the second loop's exit branch: fenced, the branch would
  // depend on %laneid for ptxas (a divergent loop). %copy, stored, is
  // fenced as before.
  EXPECT_EQ(cast<CallInst>(start)->getArgOperand(0), size);
  EXPECT_TRUE(isFencedCopy(copy->getOperand(0), size, copy->getParent()));
}

// After the loop, %x (from %a) reaches the branch through %t; %s (from %b
// and %x) is only stored; %t (from %c and %x) is the branch condition. The
// search from %x, first, meets %s and %t: its answer must not be taken for
// theirs.
constexpr const char *kSharedSearch = R"(
define void @kernel(i32 %n, i32 %m, ptr addrspace(1) %o) {
entry:
  %a = add i32 %n, 1
  %b = add i32 %n, 2
  %c = add i32 %n, 3
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add i32 %i, 1
  %done = icmp sge i32 %next, %m
  br i1 %done, label %after, label %loop
after:
  %x = add i32 %a, 5
  %s = mul i32 %x, %b
  store i32 %s, ptr addrspace(1) %o
  %t = icmp sge i32 %x, %c
  br i1 %t, label %end, label %end
end:
  ret void
}
)";

TEST(LoopExitFences, EachUserSteersOrNotOnItsOwn) {
  auto parsed = parseIR(kSharedSearch);
  ASSERT_TRUE(parsed->function);
  Function &f = *parsed->function;
  Instruction *a = named(f, "a"), *b = named(f, "b"), *c = named(f, "c");
  auto *x = dyn_cast_if_present<Instruction>(named(f, "x"));
  auto *s = dyn_cast_if_present<Instruction>(named(f, "s"));
  auto *t = dyn_cast_if_present<Instruction>(named(f, "t"));
  ASSERT_TRUE(a && b && c && x && s && t);

  EXPECT_TRUE(flash::fenceLoopExits(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  EXPECT_EQ(x->getOperand(0), a) << "%x steers the branch through %t";
  EXPECT_TRUE(isFencedCopy(s->getOperand(1), b, s->getParent()))
      << "%s is only stored";
  EXPECT_EQ(t->getOperand(1), c) << "%t is the branch condition";
}

TEST(LoopExitFences, LeavesLoopFreeFunctions) {
  auto parsed = parseIR(R"(
define i32 @kernel(i32 %a) {
  %b = add i32 %a, 1
  ret i32 %b
}
)");
  ASSERT_TRUE(parsed->function);
  EXPECT_FALSE(flash::fenceLoopExits(*parsed->function));
}

} // namespace

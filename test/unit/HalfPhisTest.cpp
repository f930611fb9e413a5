//===- HalfPhisTest.cpp - packHalfPhis on small IR ------------------------===//
//
// The transform runs on LLVM IR for ptxas, below the emulator's level:
// these tests check on hand-written IR that a loop-carried `<N x half>` in a
// kernel with warpgroup MMAs is carried as `<N/2 x i32>` and read back as
// the same bits, and that kernels without wgmma and odd or 32-bit vectors
// keep their phis.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/HalfPhis.h"
#include "ParsedIR.h"

#include "llvm/IR/Instructions.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>
#include <string>

using namespace llvm;
using flash::test::parseIR;

namespace {

/// A loop carrying %p (P for the next iteration) with element type ELEM and
/// N lanes, in a kernel that issues wgmma when `wgmma` is set.
std::string loopKernel(const char *elem, int lanes, bool wgmma) {
  std::string vec = "<" + std::to_string(lanes) + " x " + elem + ">";
  std::string fence = wgmma ? "  call void @llvm.nvvm.wgmma.fence.sync.aligned()\n" : "";
  return "declare void @llvm.nvvm.wgmma.fence.sync.aligned()\n"
         "define " + vec + " @kernel(" + vec + " %init, " + vec +
         " %next, i32 %n) {\n"
         "entry:\n  br label %loop\n"
         "loop:\n"
         "  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]\n"
         "  %p = phi " + vec + " [ %init, %entry ], [ %q, %loop ]\n" + fence +
         "  %q = fadd " + vec + " %p, %next\n"
         "  %i1 = add i32 %i, 1\n"
         "  %c = icmp slt i32 %i1, %n\n"
         "  br i1 %c, label %loop, label %exit\n"
         "exit:\n  ret " + vec + " %q\n}\n";
}

/// The types of the phis of `function`, block by block.
std::vector<std::string> phiTypes(Function &function) {
  std::vector<std::string> types;
  for (BasicBlock &block : function)
    for (PHINode &phi : block.phis()) {
      std::string text;
      raw_string_ostream os(text);
      phi.getType()->print(os);
      types.push_back(text);
    }
  return types;
}

TEST(HalfPhisTest, HalfVectorsCarriedAsWords) {
  for (const char *elem : {"half", "bfloat"}) {
    std::string source = loopKernel(elem, 40, /*wgmma=*/true);
    auto parsed = parseIR(source.c_str());
    ASSERT_TRUE(parsed->function);
    Function &f = *parsed->function;
    ASSERT_TRUE(flash::packHalfPhis(f)) << elem;
    EXPECT_FALSE(verifyFunction(f, &errs()));
    EXPECT_EQ(phiTypes(f), (std::vector<std::string>{"i32", "<20 x i32>"}));
    // The body reads the phi through one bitcast back to the 16-bit vector,
    // and the back edge carries %q bitcast to words.
    PHINode *words = nullptr;
    for (PHINode &phi : f.getEntryBlock().getNextNode()->phis())
      if (phi.getType()->isVectorTy())
        words = &phi;
    ASSERT_NE(words, nullptr);
    ASSERT_TRUE(words->hasOneUse());
    auto *back = dyn_cast<BitCastInst>(*words->user_begin());
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->getDestTy(), f.getReturnType());
    for (unsigned i = 0; i < 2; ++i) {
      auto *in = dyn_cast<BitCastInst>(words->getIncomingValue(i));
      ASSERT_NE(in, nullptr);
      EXPECT_EQ(in->getParent(), words->getIncomingBlock(i));
    }
  }
}

TEST(HalfPhisTest, OtherPhisKept) {
  for (auto [elem, lanes, wgmma] :
       {std::tuple{"half", 40, false}, std::tuple{"half", 3, true},
        std::tuple{"float", 4, true}}) {
    std::string source = loopKernel(elem, lanes, wgmma);
    auto parsed = parseIR(source.c_str());
    ASSERT_TRUE(parsed->function);
    EXPECT_FALSE(flash::packHalfPhis(*parsed->function))
        << elem << " x " << lanes << (wgmma ? " with wgmma" : "");
  }
}

} // namespace

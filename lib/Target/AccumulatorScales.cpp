//===- AccumulatorScales.cpp - Accumulator rescales next to their MMA -----===//
//
// See AccumulatorScales.h. The rescale reaches LLVM IR as one vector `fmul`
// of the accumulator by the broadcast factors, read lane by lane
// (`extractelement`) by the MMAs. Each lane an MMA reads becomes a scalar
// `fmul` of the two lanes just before that MMA: the same product, with every
// operand still dominating it. NVPTX's instruction selection keeps the IR
// order within a block, so the PTX shows each product where the MMA reads
// it.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/AccumulatorScales.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace {

/// Whether `call` is a warp-level MMA (its accumulator operands are passed
/// one by one).
bool isWarpMMA(const CallInst &call) {
  const Function *callee = call.getCalledFunction();
  return callee && callee->isIntrinsic() &&
         callee->getName().starts_with("llvm.nvvm.mma.");
}

/// The vector `fmul` that `operand` of `mma` reads one lane of (a constant
/// lane, in the MMA's block), or null.
BinaryOperator *scaledVector(Value *operand, const CallInst &mma) {
  auto *lane = dyn_cast<ExtractElementInst>(operand);
  if (!lane || !isa<ConstantInt>(lane->getIndexOperand()))
    return nullptr;
  auto *mul = dyn_cast<BinaryOperator>(lane->getVectorOperand());
  if (!mul || mul->getOpcode() != Instruction::FMul ||
      mul->getParent() != mma.getParent())
    return nullptr;
  return mul;
}

/// Replaces operand `index` of `mma` (a lane of `mul`) by the product of
/// that lane of `mul`'s operands, computed just before `mma`.
void scaleAtMMA(CallInst &mma, unsigned index, BinaryOperator &mul) {
  auto *lane = cast<ExtractElementInst>(mma.getArgOperand(index));
  IRBuilder<> builder(&mma);
  Value *position = lane->getIndexOperand();
  Value *product = builder.CreateFMulFMF(
      builder.CreateExtractElement(mul.getOperand(0), position),
      builder.CreateExtractElement(mul.getOperand(1), position), &mul);
  mma.setArgOperand(index, product);
  if (lane->use_empty())
    lane->eraseFromParent();
}
} // namespace

bool flash::sinkAccumulatorScales(Function &function) {
  SmallVector<CallInst *> mmas;
  for (Instruction &inst : instructions(function))
    if (auto *call = dyn_cast<CallInst>(&inst); call && isWarpMMA(*call))
      mmas.push_back(call);
  SmallPtrSet<BinaryOperator *, 4> scaled;
  for (CallInst *mma : mmas)
    for (unsigned i = 0, e = mma->arg_size(); i != e; ++i)
      if (BinaryOperator *mul = scaledVector(mma->getArgOperand(i), *mma)) {
        scaleAtMMA(*mma, i, *mul);
        scaled.insert(mul);
      }
  for (BinaryOperator *mul : scaled)
    if (mul->use_empty())
      mul->eraseFromParent();
  return !scaled.empty();
}

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

/// `value` if it is a constant lane of a vector (`extractelement`), else
/// null.
template <typename ValueT> auto *constantLane(ValueT *value) {
  auto *lane = dyn_cast<ExtractElementInst>(value);
  return lane && isa<ConstantInt>(lane->getIndexOperand()) ? lane : nullptr;
}

/// Whether only MMAs of `mul`'s block read `mul`, each a constant lane.
/// Another reader would keep the vector product, and NVPTX's instruction
/// selection (one DAG per block) would merge each scalar copy back into the
/// vector's lane, computed where the vector is: the rewrite would gain
/// nothing.
bool onlyMMAsRead(const BinaryOperator &mul) {
  auto isMMAOfBlock = [&](const User *user) {
    auto *call = dyn_cast<CallInst>(user);
    return call && isWarpMMA(*call) && call->getParent() == mul.getParent();
  };
  return all_of(mul.users(), [&](const User *user) {
    const auto *lane = constantLane(user);
    return lane && all_of(lane->users(), isMMAOfBlock);
  });
}

/// The vector `fmul` that `operand` of `mma` reads one lane of (a constant
/// lane, in the MMA's block, read only by that block's MMAs), or null.
BinaryOperator *scaledVector(Value *operand, const CallInst &mma) {
  ExtractElementInst *lane = constantLane(operand);
  auto *mul =
      lane ? dyn_cast<BinaryOperator>(lane->getVectorOperand()) : nullptr;
  if (!mul || mul->getOpcode() != Instruction::FMul ||
      mul->getParent() != mma.getParent() || !onlyMMAsRead(*mul))
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

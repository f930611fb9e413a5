//===- HalfPhis.cpp - 16-bit vector phis carried as 32-bit words ----------===//
//
// See HalfPhis.h. Only the phi's type changes: a bitcast between
// `<N x half>` and `<N/2 x i32>` is the register pairing NVPTX uses for
// `<2 x half>` values anyway, so the loop computes the same bits.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/HalfPhis.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

using namespace llvm;

namespace {

bool issuesWarpgroupMMAs(Function &function) {
  return any_of(instructions(function), [](Instruction &inst) {
    auto *call = dyn_cast<CallInst>(&inst);
    return call && call->getIntrinsicID() ==
                       Intrinsic::nvvm_wgmma_fence_sync_aligned;
  });
}

/// `<N/2 x i32>` for a `<N x half>` or `<N x bfloat>` with N even; null
/// for any other type.
FixedVectorType *wordsType(Type *type) {
  auto *vector = dyn_cast<FixedVectorType>(type);
  if (!vector || vector->getNumElements() % 2 != 0)
    return nullptr;
  Type *element = vector->getElementType();
  if (!element->isHalfTy() && !element->isBFloatTy())
    return nullptr;
  return FixedVectorType::get(Type::getInt32Ty(type->getContext()),
                              vector->getNumElements() / 2);
}

} // namespace

bool flash::packHalfPhis(Function &function) {
  if (!issuesWarpgroupMMAs(function))
    return false;
  SmallVector<PHINode *> halves;
  for (Instruction &inst : instructions(function))
    if (auto *phi = dyn_cast<PHINode>(&inst); phi && wordsType(phi->getType()))
      halves.push_back(phi);
  for (PHINode *phi : halves) {
    FixedVectorType *words = wordsType(phi->getType());
    PHINode *packed = PHINode::Create(words, phi->getNumIncomingValues(),
                                      phi->getName() + ".words",
                                      phi->getIterator());
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      BasicBlock *from = phi->getIncomingBlock(i);
      IRBuilder<> atEnd(from->getTerminator());
      packed->addIncoming(atEnd.CreateBitCast(phi->getIncomingValue(i), words),
                          from);
    }
    IRBuilder<> afterPhis(phi->getParent(),
                          phi->getParent()->getFirstInsertionPt());
    phi->replaceAllUsesWith(afterPhis.CreateBitCast(packed, phi->getType()));
    phi->eraseFromParent();
  }
  return !halves.empty();
}

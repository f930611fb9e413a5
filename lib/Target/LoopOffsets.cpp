//===- LoopOffsets.cpp - Loop-invariant offsets recomputed in loops -------===//
//
// fa2's 128-row tiles re-read Q from shared memory at every k-step. LLVM
// hoists the swizzled row offsets of Q's, K's and V's ldmatrix out of the KV
// loop (one per k-step modulo the swizzle's period: `base ^ 32 * k`), and
// LICM reassociates K's and V's copy addresses into one per-thread 64-bit
// pointer each; all of them stay live across the loop, where ptxas has no
// register to spare and spills. Recomputing each offset from its base in the
// loop costs one integer instruction per ldmatrix; see docs/perf.md, "Loop
// offsets and loop-exit fences".
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/LoopOffsets.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

/// Whether `inst` is a cheap integer, address or lane operation that the
/// loop may compute again from its operands.
bool isCheap(Instruction *inst) {
  switch (inst->getOpcode()) {
  case Instruction::Xor:
  case Instruction::Or:
  case Instruction::And:
  case Instruction::Add:
  case Instruction::Sub:
  case Instruction::Shl:
  case Instruction::LShr:
  case Instruction::Mul:
  case Instruction::ZExt:
  case Instruction::SExt:
  case Instruction::Trunc:
  case Instruction::GetElementPtr:
  case Instruction::InsertElement:
  case Instruction::ExtractElement:
  case Instruction::ShuffleVector:
    return true;
  default:
    return false;
  }
}

Value *commonRoot(Instruction *inst, DenseMap<Value *, Value *> &roots);

/// What `value` reduces to (`roots` memoizes it): itself unless it is a
/// cheap operation whose non-constant operands all reduce to one value.
Value *leafRoot(Value *value, DenseMap<Value *, Value *> &roots) {
  auto *inst = dyn_cast<Instruction>(value);
  if (!inst || !isCheap(inst))
    return value;
  if (Value *known = roots.lookup(value))
    return known;
  Value *root = commonRoot(inst, roots);
  roots[value] = root ? root : value;
  return roots[value];
}

/// The one value `inst`'s non-constant operands reduce to, or null. A
/// scalar operation has one such operand (`base ^ 32`); a vector one may
/// have several, all from the same root (the masked loop's column indices,
/// `lane_col | c` for sixteen c inserted lane by lane): left live across
/// the loop it takes a register per lane.
Value *commonRoot(Instruction *inst, DenseMap<Value *, Value *> &roots) {
  unsigned variables = count_if(
      inst->operands(), [](Value *operand) { return !isa<Constant>(operand); });
  if (variables > 1 && !inst->getType()->isVectorTy())
    return nullptr;
  Value *root = nullptr;
  for (Value *operand : inst->operands()) {
    if (isa<Constant>(operand))
      continue;
    Value *up = leafRoot(operand, roots);
    if (root && up != root)
      return nullptr;
    root = up;
  }
  return root;
}

/// The root of `value`'s expression of cheap operations with constants (the
/// one value its leaves reduce to) when `value` is such an expression and
/// the root is an i32 or i64 (what the opaque copy takes); null otherwise.
Value *chainRoot(Value *value, DenseMap<Value *, Value *> &roots) {
  auto *inst = dyn_cast<Instruction>(value);
  Value *root = inst && isCheap(inst) ? commonRoot(inst, roots) : nullptr;
  if (!root)
    return nullptr;
  Type *type = root->getType();
  return type->isIntegerTy(32) || type->isIntegerTy(64) ? root : nullptr;
}

/// The registers `value` takes: one per lane of a vector.
unsigned registersOf(Value *value) {
  auto *vector = dyn_cast<FixedVectorType>(value->getType());
  return vector ? vector->getNumElements() : 1;
}

/// `root` copied at the top of `header` by a side-effecting `mov`: a value
/// LLVM can neither hoist nor prove equal to `root`, so that neither LICM,
/// GVN nor MachineLICM moves the chains computed from it out of the loop.
Value *opaqueCopy(Value *root, BasicBlock *header) {
  bool wide = root->getType()->isIntegerTy(64);
  auto *type = FunctionType::get(root->getType(), {root->getType()}, false);
  InlineAsm *mov =
      InlineAsm::get(type, wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;",
                     wide ? "=l,l" : "=r,r", /*hasSideEffects=*/true);
  IRBuilder<> builder(header, header->getFirstInsertionPt());
  return builder.CreateCall(mov, {root}, root->getName() + ".inloop");
}

/// A copy of `original`'s chain from `copyOfRoot` instead of `root`,
/// inserted before `before`; `copies` holds the block's copies made so far.
Value *copyChain(Value *original, Value *root, Value *copyOfRoot,
                 Instruction *before, DenseMap<Value *, Value *> &copies) {
  if (original == root)
    return copyOfRoot;
  if (Value *known = copies.lookup(original))
    return known;
  Instruction *copy = cast<Instruction>(original)->clone();
  for (Use &operand : copy->operands())
    if (!isa<Constant>(operand.get()))
      operand.set(copyChain(operand.get(), root, copyOfRoot, before, copies));
  copy->insertBefore(before->getIterator());
  copy->setName(original->getName());
  copies[original] = copy;
  return copy;
}

/// Rewrites the uses in `loop` (phis aside) of `values`, chains from `root`,
/// to copies made once per block before the block's first use.
void recomputeInLoop(Loop &loop, Value *root,
                     const SetVector<Instruction *> &values) {
  Value *copyOfRoot = opaqueCopy(root, loop.getHeader());
  for (BasicBlock *block : loop.blocks()) {
    DenseMap<Value *, Value *> copies;
    for (Instruction &inst : *block) {
      if (isa<PHINode>(inst))
        continue;
      for (Use &operand : inst.operands()) {
        auto *value = dyn_cast<Instruction>(operand.get());
        if (value && values.contains(value))
          operand.set(copyChain(value, root, copyOfRoot, &inst, copies));
      }
    }
  }
}

/// `gep T, (gep T, base, inner), outer` in `loop`, the inner GEP outside it
/// (LICM's reassociation), becomes `gep T, base, outer + inner`: the loop
/// then holds `base`, uniform across the CTA where ptxas keeps it in a
/// uniform register, and `inner`, which the GEPs off other bases share (K's
/// and V's copies), instead of one per-thread 64-bit pointer per base.
bool reassociateInvariantGEPs(Loop &loop) {
  // Weak handles: one hoisted GEP may feed several outer ones, and deleting
  // one inner chain may delete another's operands.
  SmallVector<WeakTrackingVH> hoisted;
  for (BasicBlock *block : loop.blocks())
    for (Instruction &inst : *block) {
      auto *outer = dyn_cast<GetElementPtrInst>(&inst);
      auto *inner =
          outer ? dyn_cast<GetElementPtrInst>(outer->getPointerOperand())
                : nullptr;
      if (!inner || loop.contains(inner) || outer->getNumIndices() != 1 ||
          inner->getNumIndices() != 1 ||
          inner->getSourceElementType() != outer->getSourceElementType())
        continue;
      Value *innerIndex = inner->getOperand(1);
      Value *outerIndex = outer->getOperand(1);
      if (isa<Constant>(innerIndex) || isa<Constant>(outerIndex) ||
          innerIndex->getType() != outerIndex->getType())
        continue;
      IRBuilder<> builder(outer);
      outer->setOperand(0, inner->getPointerOperand());
      outer->setOperand(1, builder.CreateAdd(outerIndex, innerIndex));
      outer->setNoWrapFlags(GEPNoWrapFlags::none());
      hoisted.push_back(inner);
    }
  // Left in place, NVPTX's NaryReassociate would find them and undo this.
  bool changed = !hoisted.empty();
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(hoisted);
  return changed;
}

bool rematerializeInLoop(Loop &loop) {
  bool changed = reassociateInvariantGEPs(loop);
  MapVector<Value *, SetVector<Instruction *>> byRoot;
  DenseMap<Value *, Value *> roots;
  for (BasicBlock *block : loop.blocks())
    for (Instruction &inst : *block) {
      if (isa<PHINode>(inst))
        continue;
      for (Value *operand : inst.operands()) {
        auto *value = dyn_cast<Instruction>(operand);
        if (!value || loop.contains(value))
          continue;
        if (Value *root = chainRoot(value, roots))
          byRoot[root].insert(value);
      }
    }
  for (auto &[root, values] : byRoot) {
    // One register's value from the root frees no register.
    unsigned registers = 0;
    for (Instruction *value : values)
      registers += registersOf(value);
    if (registers < 2)
      continue;
    recomputeInLoop(loop, root, values);
    changed = true;
  }
  return changed;
}

/// The 32-bit words `loop`'s header phis carry.
unsigned carriedWords(Loop &loop, const DataLayout &layout) {
  uint64_t bits = 0;
  for (PHINode &phi : loop.getHeader()->phis())
    bits += layout.getTypeSizeInBits(phi.getType()).getFixedValue();
  return unsigned(divideCeil(bits, 32));
}

bool rematerializeInnermost(Function &function, unsigned minCarriedWords) {
  if (function.isDeclaration())
    return false;
  DominatorTree dominators(function);
  LoopInfo loops(dominators);
  const DataLayout &layout = function.getDataLayout();
  bool changed = false;
  for (Loop *loop : loops.getLoopsInPreorder())
    if (loop->isInnermost() &&
        carriedWords(*loop, layout) >= minCarriedWords)
      changed |= rematerializeInLoop(*loop);
  return changed;
}

} // namespace

bool flash::rematerializeLoopOffsets(Function &function) {
  return rematerializeInnermost(function, 0);
}

bool flash::rematerializeFullLoopOffsets(Function &function) {
  return rematerializeInnermost(function, kFullLoopCarriedWords);
}

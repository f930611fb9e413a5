//===- LoopExitFences.cpp - Code after a loop kept below it in ptxas ------===//
//
// fa2's 128 x 64 tile at d128 fills the KV loops' 255 registers. The masked
// loop's first copies, issued between the split loops, and the output's
// address, after the last loop, depend only on values computed before the
// loops. ptxas computed much of that code above the loop it follows (the
// first copies' zero-fill sizes, the output's base address), and those
// results, live across the whole loop, were what it spilled (24-36 bytes).
// Passing the values that cross a loop unused through an identity ptxas
// cannot see through, where they are first needed after it, keeps that code
// below the loop; see docs/perf.md, "Loop offsets and loop-exit fences".
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/LoopExitFences.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

using namespace llvm;

namespace {

/// NVPTX's shared address space: ptxas folds constant offsets from a shared
/// base into each access, so fencing those pointers would cost registers.
constexpr unsigned kSharedAddressSpace = 3;

/// The blocks reachable from `loop`'s exits, in breadth-first order; empty
/// when one of them leads back into the loop (the loop is in a cycle).
SetVector<BasicBlock *> blocksAfter(Loop &loop) {
  SmallVector<BasicBlock *> exits;
  loop.getUniqueExitBlocks(exits);
  SetVector<BasicBlock *> after(exits.begin(), exits.end());
  for (unsigned i = 0; i < after.size(); ++i)
    for (BasicBlock *next : successors(after[i])) {
      if (loop.contains(next))
        return {};
      after.insert(next);
    }
  return after;
}

/// Whether `value` is a fence candidate by kind: an integer or a pointer
/// outside shared memory, not a special register (`%tid.x`, `%ctaid.y`...:
/// ptxas reads those again where it needs them).
bool isFenceable(Instruction *value) {
  if (auto *call = dyn_cast<IntrinsicInst>(value))
    if (call->getCalledFunction()->getName().starts_with(
            "llvm.nvvm.read.ptx.sreg."))
      return false;
  Type *type = value->getType();
  if (auto *pointer = dyn_cast<PointerType>(type))
    return pointer->getAddressSpace() != kSharedAddressSpace;
  return type->isIntegerTy(32) || type->isIntegerTy(64);
}

/// The block a use reads its value in: a phi's incoming block, else the
/// user's.
BasicBlock *useBlock(Use &use) {
  auto *user = cast<Instruction>(use.getUser());
  if (auto *phi = dyn_cast<PHINode>(user))
    return phi->getIncomingBlock(use);
  return user->getParent();
}

/// Whether an instruction reaches a branch condition through its users
/// (through values and calls that return one, e.g. `llvm.smin`; not through
/// stores). A fenced copy there would make the branch depend on `%laneid`
/// for ptxas, so the branch and the loop it guards look divergent, and ptxas
/// sends the loop's warp shuffles through its slow path (a call that saves
/// registers to the stack). Answers are kept: a search that finds no branch
/// has visited everything its start reaches, none of which reaches one.
class BranchSteering {
public:
  bool steers(Instruction *user) {
    if (auto known = answers.find(user); known != answers.end())
      return known->second;
    SmallVector<Instruction *> work{user};
    SmallPtrSet<Instruction *, 32> seen{user};
    bool found = search(work, seen);
    if (found)
      answers[user] = true;
    else
      for (Instruction *inst : seen)
        answers[inst] = false;
    return found;
  }

private:
  /// Depth-first from `work` over users not yet `seen`; stops at a branch or
  /// at an instruction known to steer one.
  bool search(SmallVectorImpl<Instruction *> &work,
              SmallPtrSetImpl<Instruction *> &seen) {
    while (!work.empty()) {
      Instruction *inst = work.pop_back_val();
      auto known = answers.find(inst);
      if (known != answers.end()) {
        if (known->second)
          return true;
        continue;
      }
      if (isa<BranchInst, SwitchInst>(inst))
        return true;
      if (isa<StoreInst>(inst) || inst->getType()->isVoidTy())
        continue;
      for (User *next : inst->users())
        if (seen.insert(cast<Instruction>(next)).second)
          work.push_back(cast<Instruction>(next));
    }
    return false;
  }

  DenseMap<Instruction *, bool> answers;
};

/// The block for the fenced copy serving `uses`: their nearest common
/// dominator; null when that is not after the loop (`after`) or lies in
/// another loop (the copy would then run at every iteration).
BasicBlock *fencePoint(ArrayRef<Use *> uses, DominatorTree &dominators,
                       LoopInfo &loops, const SetVector<BasicBlock *> &after) {
  BasicBlock *point = useBlock(*uses.front());
  for (Use *use : uses.drop_front())
    point = dominators.findNearestCommonDominator(point, useBlock(*use));
  return after.contains(point) && !loops.getLoopFor(point) ? point : nullptr;
}

/// The uses after `loop` (blocks `after`) of the fenceable values computed
/// before it and not used in it, by value, in program order; uses that
/// steer a branch keep the value itself. A value used
/// in the loop is live across it anyway; one already fenced after an
/// earlier loop is used here only by that fence (`readers`), which is
/// fence enough.
MapVector<Instruction *, SmallVector<Use *>>
usesAfterLoop(Loop &loop, const SetVector<BasicBlock *> &after,
              DominatorTree &dominators,
              const SmallPtrSetImpl<Instruction *> &readers) {
  auto usedIn = [&](Instruction *value) {
    return any_of(value->users(), [&](User *user) {
      return readers.contains(cast<Instruction>(user)) ||
             loop.contains(cast<Instruction>(user));
    });
  };
  BranchSteering steering;
  MapVector<Instruction *, SmallVector<Use *>> uses;
  for (BasicBlock *block : after)
    for (Instruction &inst : *block)
      for (Use &use : inst.operands()) {
        auto *value = dyn_cast<Instruction>(use.get());
        if (value && !after.contains(value->getParent()) &&
            dominators.dominates(value->getParent(), loop.getHeader()) &&
            isFenceable(value) && !usedIn(value) && !steering.steers(&inst))
          uses[value].push_back(&use);
      }
  return uses;
}

/// Copies of values at the top of one block, each through an identity that
/// ptxas cannot see through: an AND with all ones computed as bit `%laneid`
/// of `activemask` (a thread that runs it is active), spread to every bit.
/// The inline asm has side effects, so LLVM neither moves nor merges it.
class Fence {
public:
  explicit Fence(BasicBlock *block)
      : builder(block, block->getFirstInsertionPt()) {
    auto *i32 = builder.getInt32Ty();
    InlineAsm *activemask =
        InlineAsm::get(FunctionType::get(i32, false), "activemask.b32 $0;",
                       "=r", /*hasSideEffects=*/true);
    Value *mask = builder.CreateCall(activemask, {}, "activemask");
    Value *lane = builder.CreateIntrinsic(
        Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {}, nullptr, "lane");
    Value *bit = builder.CreateAnd(builder.CreateLShr(mask, lane), 1);
    ones = builder.CreateNeg(bit, "ones");
  }

  /// `value`'s copy; the instruction that reads `value` joins `readers`.
  Value *copy(Value *value, SmallPtrSetImpl<Instruction *> &readers) {
    Type *type = value->getType();
    auto *pointer = dyn_cast<PointerType>(type);
    const DataLayout &layout = builder.GetInsertBlock()->getDataLayout();
    Type *integer = pointer ? layout.getIntPtrType(type) : type;
    Value *bits = pointer ? builder.CreatePtrToInt(value, integer) : nullptr;
    Value *kept = builder.CreateAnd(bits ? bits : value,
                                    builder.CreateSExtOrTrunc(ones, integer),
                                    value->getName() + ".after");
    readers.insert(cast<Instruction>(bits ? bits : kept));
    return pointer ? builder.CreateIntToPtr(kept, type) : kept;
  }

private:
  IRBuilder<> builder;
  Value *ones = nullptr;
};

/// A block's fence, shared by the loops before it.
using Fences = DenseMap<BasicBlock *, std::unique_ptr<Fence>>;

bool fenceAfter(Loop &loop, DominatorTree &dominators, LoopInfo &loops,
                SmallPtrSetImpl<Instruction *> &readers, Fences &fences) {
  SetVector<BasicBlock *> after = blocksAfter(loop);
  bool changed = false;
  for (auto &[value, uses] : usesAfterLoop(loop, after, dominators, readers)) {
    BasicBlock *point = fencePoint(uses, dominators, loops, after);
    if (!point)
      continue;
    std::unique_ptr<Fence> &fence = fences[point];
    if (!fence)
      fence = std::make_unique<Fence>(point);
    Value *copy = fence->copy(value, readers);
    for (Use *use : uses)
      use->set(copy);
    changed = true;
  }
  return changed;
}

} // namespace

bool flash::fenceLoopExits(Function &function) {
  if (function.isDeclaration())
    return false;
  DominatorTree dominators(function);
  LoopInfo loops(dominators);
  SmallPtrSet<Instruction *, 32> readers;
  Fences fences;
  bool changed = false;
  for (Loop *loop : loops.getLoopsInPreorder())
    if (loop->isOutermost())
      changed |= fenceAfter(*loop, dominators, loops, readers, fences);
  return changed;
}

//===- LoopExitFences.h - Values re-derived after loops for ptxas -*- C++ -*-===//
//
// An LLVM IR transform the PTX emitter runs after LLVM's optimizer (and after
// the loop-offsets transform) on register-bound kernels
// (flashc.register_bound). ptxas moves code that follows a loop and depends
// only on values computed before it (the masked loop's first copies: their
// addresses and zero-fill sizes; the output's address after the last loop)
// up above the loop, where its results stay live across the whole loop and,
// with the loop's registers full, spill. This transform makes such code
// depend on something ptxas cannot hoist: where the values are first needed
// after the loop, each is passed through `v & -((activemask >> %laneid) & 1)`
// (bit %laneid of activemask is set in a thread that runs it, so this is v,
// but ptxas cannot know).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_LOOPEXITFENCES_H
#define FLASH_LIB_TARGET_LOOPEXITFENCES_H

namespace llvm {
class Function;
} // namespace llvm

namespace flash {

/// For every top-level loop of `function`: every integer or non-shared
/// pointer value computed before the loop (special-register reads aside,
/// which ptxas re-reads itself) and used after it gets one fenced copy per
/// value, at the nearest block after the loop (outside any other loop) that
/// dominates those uses, and the uses after the loop take the copy, except
/// those that reach a branch condition (ptxas would take the branch as
/// divergent). Returns whether it changed anything.
bool fenceLoopExits(llvm::Function &function);

} // namespace flash

#endif // FLASH_LIB_TARGET_LOOPEXITFENCES_H

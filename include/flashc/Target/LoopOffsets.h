//===- LoopOffsets.h - Loop offsets recomputed in loops ---------*- C++ -*-===//
//
// An LLVM IR transform the PTX emitter runs after LLVM's optimizer on
// register-bound kernels (flashc.register_bound), and on the heavy loops of
// warp-specialized ones (flashc.warp_specialize). LICM leaves one register
// live across a loop for every loop-invariant offset, e.g. a swizzled
// ldmatrix row offset per k-step (`base ^ 32`, `base ^ 64`, `base ^ 96`),
// and a per-thread pointer for each tensor a loop copies from; where a
// kernel's registers are full, ptxas spills them. This transform recomputes
// such offsets inside the loop from their one root (`base`), so that only
// the root stays live across it.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_LOOPOFFSETS_H
#define FLASH_LIB_TARGET_LOOPOFFSETS_H

namespace llvm {
class Function;
} // namespace llvm

namespace flash {

/// In every innermost loop of `function`:
/// - `gep T, (gep T, base, i), j` with the inner GEP hoisted out of the loop
///   becomes `gep T, base, i + j` (K's and V's copies then share `i + j`);
/// - where two or more loop-invariant values used in the loop are chains of
///   cheap operations with constants (xor/or/and/add/sub/shl/lshr/mul by a
///   constant, zext/sext/trunc, getelementptr by constants or off a global)
///   from one i32/i64 root, the loop header copies the root through an
///   opaque `mov` (a side-effecting inline asm, so that neither LLVM's LICM,
///   GVN nor MachineLICM moves the chains back out) and each use in the loop
///   gets its chain recomputed from that copy, once per block.
/// Returns whether it changed anything.
bool rematerializeLoopOffsets(llvm::Function &function);

/// The words (32 bits each) an innermost loop must carry in its header's
/// phis for rematerializeFullLoopOffsets to touch it: the backward's dK and
/// dV at 128 keys and HEAD_DIM 128 on two consumer warpgroups.
inline constexpr unsigned kFullLoopCarriedWords = 128;

/// rematerializeLoopOffsets in the innermost loops that carry at least
/// kFullLoopCarriedWords words: in a warp-specialized kernel (setmaxnreg 240
/// for the consumers) such a loop has no register to spare for the
/// loop-invariant wgmma descriptors of a shared A operand (one 64-bit value
/// per k-step), while lighter loops keep what LICM gives them.
bool rematerializeFullLoopOffsets(llvm::Function &function);

} // namespace flash

#endif // FLASH_LIB_TARGET_LOOPOFFSETS_H

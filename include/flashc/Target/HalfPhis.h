//===- HalfPhis.h - 16-bit vector phis carried as 32-bit words --*- C++ -*-===//
//
// An LLVM IR transform the PTX emitter runs after LLVM's optimizer on
// kernels with warpgroup MMAs. tile-overlap-wgmma carries P, the f16 or
// bf16 A operand of the next P V, around the key loop; as a `<N x half>`
// phi NVPTX gives it N 16-bit registers and packs them into the wgmma's
// 32-bit registers at the top of the loop, where ptxas, having packed them
// in the other order, swaps halves with a PRMT each before the loop's first
// wgmma: instructions on the loop's critical path, between the wait for P V
// and the next Q K^T. Carried as `<N/2 x i32>`, the pairs are packed where
// P is converted, under the softmax.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_HALFPHIS_H
#define FLASH_LIB_TARGET_HALFPHIS_H

namespace llvm {
class Function;
} // namespace llvm

namespace flash {

/// In a function that issues warpgroup MMAs (calls
/// `llvm.nvvm.wgmma.fence.sync.aligned`), every phi of type `<N x half>` or
/// `<N x bfloat>` with N even becomes a phi of `<N/2 x i32>`: each incoming
/// value is bitcast at the end of its block, and the phi's uses read it
/// bitcast back after the block's phis. Returns whether it changed anything.
bool packHalfPhis(llvm::Function &function);

} // namespace flash

#endif // FLASH_LIB_TARGET_HALFPHIS_H

//===- AccumulatorScales.h - Accumulator rescales next to their MMA -*- C++ -*-===//
//
// An LLVM IR transform the PTX emitter runs after LLVM's optimizer on
// register-bound kernels (flashc.register_bound). The online softmax scales
// the whole accumulator by the rows' correction factors before the P @ V
// MMAs: one block of multiplies (128 per thread at HEAD_DIM 128 and 128
// rows) ahead of the MMAs that read them. ptxas 13.0 then gives the scaled
// values registers of their own and, with the loop's registers full,
// regroups them into the aligned quadruples an HMMA accumulator needs with
// a MOV each, every iteration (docs/perf.md, "Accumulator scales next to
// their MMA"). Moved next to the MMA that reads them, each product takes the
// register of the value it scales.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_ACCUMULATORSCALES_H
#define FLASH_LIB_TARGET_ACCUMULATORSCALES_H

namespace llvm {
class Function;
} // namespace llvm

namespace flash {

/// Every operand of an `llvm.nvvm.mma.*` call that is a constant lane of a
/// vector `fmul` in the call's block becomes a scalar `fmul` of that lane's
/// factors, placed just before the call, and the vector product is erased.
/// A product that anything but those MMAs reads, directly or through a
/// lane, is left as it is (see onlyMMAsRead). Returns whether it rewrote
/// any.
bool sinkAccumulatorScales(llvm::Function &function);

} // namespace flash

#endif // FLASH_LIB_TARGET_ACCUMULATORSCALES_H

//===- SharedStaging.h - shared-memory staging helpers ----------*- C++ -*-===//
#ifndef FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H
#define FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace flash {
/// Whether `op` may run more than once per kernel launch, inside a loop of its
/// function: shared memory it writes may then still be read by other warps
/// from the previous run.
inline bool isInsideLoop(mlir::Operation *op) {
  for (mlir::Operation *parent = op->getParentOp();
       parent && !mlir::isa<mlir::func::FuncOp>(parent);
       parent = parent->getParentOp())
    if (mlir::isa<mlir::LoopLikeOpInterface>(parent))
      return true;
  return false;
}

/// The single-slot buffer tile-stage-shared stages `load` through if the
/// load is an MMA operand (its layout aside): f16/bf16 without padding
/// (cp.async zero-fills), a 2-D tile whose dim 1 covers the tensor's whole
/// static last dim from offset 0, rows of whole 16-byte chunks, and for
/// gathered rows a chunk layout (gatherChunkLayout). Null when it cannot be.
/// On sm_90a a load whose layout is an operand of a warpgroup MMA
/// (WgmmaTarget.h) takes its buffer as wgmma reads it (wgmmaOperandBuffer).
tile::SharedType stagingBufferFor(tile::LoadOp load);

/// `buffer` (stagingBufferFor's choice for a load) in a layout wgmma reads
/// through a matrix descriptor, or null: the widest swizzle span (128, 64
/// or 32 bytes) that divides a row is the swizzle (a phase per 128 bytes of
/// rows, span / 16 phases); rows longer than it become column blocks
/// (block_cols) of one span, the layout CUTLASS gives K-major tiles of that
/// swizzle atom (96 f16: three 64-byte blocks; 80 f16: five 32-byte
/// blocks). Rows of an odd number of 16-byte chunks have none. f8e4m3 rows
/// take 32, 64 or whole 128-byte spans only.
tile::SharedType wgmmaOperandBuffer(tile::SharedType buffer);

/// The blocked layout (layout::gatherChunkParams) that spreads the 16-byte
/// chunks of a gathered copy into a slot of `buffer` over `numWarps` warps,
/// each chunk once; its slice along dim 1 is the layout of the copy's index
/// tiles. Null when none fits.
tile::BlockedLayoutAttr gatherChunkLayout(tile::SharedType buffer,
                                          int64_t numWarps);

/// Whether `op` (a loop, with everything inside it) may write global tensor
/// `global`: a store or atomic_add to it, or any other write to memory other
/// than shared memory. Loads of tensors a loop does not write may be read
/// ahead (tile-pipeline-copies) or once for the whole loop
/// (tile-stage-shared).
bool mayWrite(mlir::Operation *op, mlir::Value global);

} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H

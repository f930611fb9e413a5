//===- TmaCopyToSIMT.h - lowering of the TMA copies -------------*- C++ -*-===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H

#include "flashc/Dialect/Tile/LayoutFunctions.h"
#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace flash::simt {
/// tile.atomic_add attribute (i64), set by lowerTmaCopies: the byte offset
/// in @__flashc_smem of the staging buffer the op's registers are stored
/// to; the TMA reduce-adds around the op read it from there.
inline constexpr llvm::StringLiteral kTmaReduceStagingAttrName =
    "simt.tma_reduce_staging";

/// The shared staging of a tile.atomic_add that goes to global memory as
/// TMA reduce-adds: the [rows, cols] f32 tile as column blocks of 8 (32
/// bytes a row), unswizzled, each block one box. An MMA accumulator's
/// thread holds 2 columns of each 8: the 8 rows of a warp's v2 stores
/// fill 256 consecutive bytes (no bank conflict), and every register's
/// offset is the thread's first one plus a constant (one address register;
/// a wider swizzled block would XOR the column blocks and need more).
struct TmaReduceStaging {
  static constexpr int64_t kBlockCols = 8;
  int64_t rows = 0, cols = 0;

  int64_t bytes() const { return rows * cols * 4; }
  int64_t blocks() const { return cols / kBlockCols; }
  int64_t blockBytes() const { return rows * kBlockCols * 4; }
  tile::layout::SwizzleParams swizzle() const;
};

/// How `op` is staged when its adds go through the TMA unit (sm_90a, the op
/// marked tile.tma_reduce): an unmasked f32 add whose window is a 2-D box of whole rows (the tensor's
/// static last dim, a multiple of 8, and one other), at most 256 rows, a
/// multiple of 8.
std::optional<TmaReduceStaging> tmaReduceStagingOf(tile::AtomicAddOp op);

/// Lowers the copies and waits tile-tma-copies marked in `kernel` (after its
/// signature is expanded and its buffers are reserved): mbarrier init at the
/// entry, TMA boxes issued by thread 0, parity waits; adds a tensor map
/// parameter per tensor and box and lists them in flashc.tensor_maps. On
/// sm_90a also the atomic adds tmaReduceStagingOf accepts: a staging buffer
/// after the kernel's, and around each op the TMA reduce-adds that take its
/// registers from there (the op keeps the stores into the buffer).
mlir::LogicalResult lowerTmaCopies(mlir::func::FuncOp kernel);
} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H

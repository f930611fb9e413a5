//===- WgmmaTarget.h - whether a module targets warpgroup MMAs --*- C++ -*-===//
//
// On sm_90a the front end marks the module `tile.wgmma`; the passes that
// prepare and lower MMAs for wgmma (tile-assign-layouts,
// tile-allocate-shared, convert-tile-to-simt) read it here. The layout of
// a warpgroup MMA is the #tile.mma with warps = [4 G, 1, 1] and values =
// [1, 1, 1]: mma.sync's m16n8 atom over those warps holds exactly wgmma's
// m64nN accumulator and register-A fragments (WarpgroupLayouts.h), so only
// the instruction differs.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_DIALECT_TILE_WGMMATARGET_H
#define FLASHC_DIALECT_TILE_WGMMATARGET_H

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace flash::tile {
/// builtin.module attribute (unit): the target has warpgroup MMAs (sm_90a).
inline constexpr llvm::StringLiteral kWgmmaAttrName = "tile.wgmma";

/// Whether the module around `op` (or `op` itself) targets warpgroup MMAs.
inline bool targetsWgmma(mlir::Operation *op) {
  auto module = mlir::isa<mlir::ModuleOp>(op)
                    ? mlir::cast<mlir::ModuleOp>(op)
                    : op->getParentOfType<mlir::ModuleOp>();
  return module && module->hasAttr(kWgmmaAttrName);
}

/// Whether `layout` is a warpgroup MMA layout: whole warpgroups (4 warps)
/// along M, one m16n8 atom per warp and step.
inline bool isWarpgroupShaped(MmaLayoutAttr layout) {
  llvm::ArrayRef<int64_t> warps = layout.getWarps(), values = layout.getValues();
  return warps[0] % 4 == 0 && warps[1] == 1 && warps[2] == 1 &&
         values[0] == 1 && values[1] == 1 && values[2] == 1;
}
} // namespace flash::tile

#endif // FLASHC_DIALECT_TILE_WGMMATARGET_H

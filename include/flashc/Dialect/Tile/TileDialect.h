//===- TileDialect.h - the tile dialect: types, attributes, ops -*- C++ -*-===//
#ifndef FLASH_DIALECT_TILE_TILEDIALECT_H
#define FLASH_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/LayoutFunctions.h"

#include "flashc/Dialect/Tile/TileDialect.h.inc"
#include "flashc/Dialect/Tile/TileEnums.h.inc"
#include "flashc/Dialect/Tile/TileAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "flashc/Dialect/Tile/TileAttrs.h.inc"

namespace flash::tile {
/// The CTA's shared memory, as a side-effect resource of the shared-memory
/// ops (so that passes never reorder them across each other or a barrier).
struct SharedMemoryResource
    : mlir::SideEffects::Resource::Base<SharedMemoryResource> {
  llvm::StringRef getName() final { return "<SharedMemory>"; }
};
} // namespace flash::tile

#define GET_TYPEDEF_CLASSES
#include "flashc/Dialect/Tile/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "flashc/Dialect/Tile/TileOps.h.inc"

namespace flash::tile {
/// The MMA role a dot-operand layout plays.
inline layout::MmaRole operandRole(DotOperandLayoutAttr attr) {
  return attr.getOperandIndex() == 0 ? layout::MmaRole::OperandA
                                     : layout::MmaRole::OperandB;
}

/// The tile coordinate that register `reg` of (warp, lane) holds in `layout`
/// (a layout attribute), or with Space::Padded its position in the tile
/// padded to whole steps of the layout (see LayoutFunctions.h). `Int` is
/// int64_t to evaluate it, or an IR-building integer type to emit the index
/// arithmetic into a kernel.
template <typename Int>
layout::CoordOf<Int> layoutCoord(mlir::Attribute layout,
                                 llvm::ArrayRef<int64_t> shape, Int warp,
                                 Int lane, int64_t reg,
                                 layout::Space space = layout::Space::Tile) {
  if (auto mma = mlir::dyn_cast<MmaLayoutAttr>(layout))
    return layout::mmaCoord(mma.getParams(), layout::MmaRole::Acc, shape, warp,
                            lane, reg, space);
  if (auto operand = mlir::dyn_cast<DotOperandLayoutAttr>(layout)) {
    if (!operand.getTransposed())
      return layout::mmaCoord(operand.getParent().getParams(),
                              operandRole(operand), shape, warp, lane, reg,
                              space);
    llvm::SmallVector<int64_t, 2> logical = {shape[1], shape[0]};
    layout::CoordOf<Int> coord =
        layout::mmaCoord(operand.getParent().getParams(), operandRole(operand),
                         logical, warp, lane, reg, space);
    return {coord[1], coord[0]};
  }
  if (auto slice = mlir::dyn_cast<SliceLayoutAttr>(layout)) {
    if (auto mma = mlir::dyn_cast<MmaLayoutAttr>(slice.getParent()))
      return layout::mmaSliceCoord(mma.getParams(), slice.getDim(), shape,
                                   warp, lane, reg, space);
    return layout::blockedSliceCoord(
        mlir::cast<BlockedLayoutAttr>(slice.getParent()).getParams(),
        slice.getDim(), shape, warp, lane, reg, space);
  }
  return layout::blockedCoord(mlir::cast<BlockedLayoutAttr>(layout).getParams(),
                              shape, warp, lane, reg, space);
}

/// The extent of Space::Padded: `shape` padded to whole steps of `layout`.
layout::Shape layoutPaddedShape(mlir::Attribute layout,
                                llvm::ArrayRef<int64_t> shape);
} // namespace flash::tile

#endif // FLASH_DIALECT_TILE_TILEDIALECT_H

//===- TileDialect.h - the tile dialect: types, attributes, ops -*- C++ -*-===//
#ifndef FLASH_DIALECT_TILE_TILEDIALECT_H
#define FLASH_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/Tile/TileDialect.h.inc"
#include "dialect/Tile/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/Tile/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "dialect/Tile/TileOps.h.inc"

namespace flash::tile {
/// Names of the discardable attributes that make a func.func a tile kernel.
inline constexpr llvm::StringLiteral kGridAttrName = "tile.grid";
inline constexpr llvm::StringLiteral kNumWarpsAttrName = "tile.num_warps";
inline constexpr llvm::StringLiteral kConstantsAttrName = "tile.constants";
/// Argument attribute: the parameter's name in the source program.
inline constexpr llvm::StringLiteral kArgNameAttrName = "tile.name";
} // namespace flash::tile

#endif // FLASH_DIALECT_TILE_TILEDIALECT_H

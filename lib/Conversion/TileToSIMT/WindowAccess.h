//===- WindowAccess.h - addresses and loads of a global window --*- C++ -*-===//
//
// The IR of a window access to a global tensor: per register, its address
// and the bounds predicate it still needs (after WindowAnalysis' proofs), and
// the guarded loads of a tile.load's registers, whole or a few at a time (an
// MMA reading its fused B operand fragment by fragment).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWACCESS_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWACCESS_H

#include "Utility.h"

#include <functional>

namespace flash::simt {

/// Which window element each register of each thread accesses: a tile's
/// layout, or any other distribution (cp.async chunks).
struct AccessMap {
  int64_t regs = 0;
  std::function<tile::layout::Coord(int64_t thread, int64_t reg)> coord;
  std::function<tile::layout::CoordOf<IndexValue>(IndexValue warp,
                                                   IndexValue lane, int64_t reg)>
      emit;
  static AccessMap of(const TileInfo &tile);
};

/// Per-access address and bounds predicate of a window access (null when
/// nothing register-specific needs checking).
struct AccessPoint {
  mlir::Value address; // !llvm.ptr<1>
  mlir::Value inBounds;
};

/// Addresses and bounds predicates of the registers of one tile window.
/// The thread-dependent part of every index is computed once; each register
/// then adds constants, so all accesses of a tile share one base pointer with
/// immediate offsets (instead of one pointer per register, which loop
/// strength reduction would keep alive across the loop), and dims that the
/// window provably stays inside (markWindowsInBounds) are not checked.
class WindowAddressing {
public:
  WindowAddressing(mlir::OpBuilder &b, mlir::Location loc, IndexBuilder *ib,
                   const GlobalView &view, mlir::ValueRange offsets,
                   mlir::Operation *access, llvm::ArrayRef<int64_t> window,
                   AccessMap map, int64_t numThreads, IndexValue warp,
                   IndexValue lane);

  /// Bounds of the dims the tile does not run along (null: none to check):
  /// the same for every register, so checked once per tile.
  mlir::Value uniformInBounds() const { return uniform; }
  AccessPoint at(int64_t reg);

private:
  mlir::Value addressFromBase(int64_t reg);
  mlir::Value inRange(IndexValue idx, unsigned g);
  int64_t tileDimOf(int64_t g) const;
  mlir::Value linear(llvm::ArrayRef<IndexValue> idx);
  mlir::Value gep(mlir::Value ptr, mlir::Value elements);

  mlir::OpBuilder &b;
  mlir::Location loc;
  IndexBuilder *ib;
  const GlobalView &view;
  llvm::ArrayRef<int64_t> window;
  AccessMap map;
  IndexValue warp, lane;
  std::optional<std::vector<tile::layout::Coord>> registerOffsets;
  llvm::SmallVector<IndexValue, 4> index; // per global dim, without registers
  llvm::SmallVector<mlir::Value, 4> strides; // i64, elements
  llvm::SmallVector<std::optional<int64_t>, 4> staticStrides;
  llvm::SmallVector<bool, 4> checked;
  mlir::Value base, uniform;
};

/// Everything a tile.load needs to fetch any of its registers.
struct WindowLoad {
  GlobalView view;
  llvm::SmallVector<mlir::Value, 4> offsets;
  TileInfo tile;
  int64_t width; // registers per access
  mlir::Type accessType;
  mlir::Value padValue;
  IndexValue warp, lane;
};

/// `offsets`: the load's offsets, converted.
mlir::FailureOr<WindowLoad> prepareWindowLoad(mlir::OpBuilder &b,
                                              mlir::Location loc,
                                              IndexBuilder *ib,
                                              tile::LoadOp op,
                                              mlir::ValueRange offsets);

/// Loads registers [first, first + count) of the load's tile, as one vector;
/// out-of-bounds elements take the pad value and are never touched.
/// Per-register bounds guard each access; the tile-wide ones (dims the tile
/// does not run along) guard all of them at once.
mlir::Value emitWindowLoads(mlir::OpBuilder &b, mlir::Location loc,
                            WindowAddressing &addressing,
                            const WindowLoad &load, int64_t first,
                            int64_t count);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWACCESS_H

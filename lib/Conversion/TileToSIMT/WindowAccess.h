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

/// The rows of a gathered access (tile.load or tile.async_copy with
/// `gather`): the global dims the index tiles index, their registers
/// (converted: vector<K x i32>), and for every register of the access the
/// index register that holds its row in the same thread.
struct GatherRows {
  llvm::SmallVector<int64_t, 2> dims;
  llvm::SmallVector<mlir::Value, 2> indices;
  std::vector<int64_t> indexRegister;
};

/// For every register of `map`, the register of `index` (a 1-D tile of the
/// rows) that holds that register's row (coordinate 0) in the same thread,
/// the same register for every thread; failure when there is none (the index
/// tile's layout does not give each thread the rows it accesses).
mlir::FailureOr<std::vector<int64_t>>
gatherRegisterMap(const AccessMap &map, const TileInfo &index,
                  int64_t numThreads);

/// The window an access walks, one global dim per tile dim: `window`, after a
/// -1 for the gathered rows (tile dim 0) when `gathered`.
llvm::SmallVector<int64_t, 4> tileWindow(llvm::ArrayRef<int64_t> window,
                                         bool gathered);

/// Per-access address and bounds predicate of a window access (null when
/// nothing register-specific needs checking).
struct AccessPoint {
  mlir::Value address; // !llvm.ptr<1>
  mlir::Value inBounds;
};

/// Addresses and bounds predicates of the registers of one tile window
/// (`window`: one global dim per tile dim, -1 for gathered rows).
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
                   IndexValue lane, const GatherRows *gather = nullptr);

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
  /// Register `reg`'s index along gathered dim number `j`.
  IndexValue gatheredIndex(unsigned j, int64_t reg);

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
  const GatherRows *gather;
};

/// Everything a tile.load needs to fetch any of its registers.
struct WindowLoad {
  GlobalView view;
  llvm::SmallVector<mlir::Value, 4> offsets;
  llvm::SmallVector<int64_t, 4> window; // tileWindow of the load
  std::optional<GatherRows> gather;
  TileInfo tile;
  int64_t width; // registers per access
  mlir::Type accessType;
  mlir::Value padValue;
  IndexValue warp, lane;
};

/// `offsets`, `indices`: the load's offsets and index tiles, converted.
mlir::FailureOr<WindowLoad>
prepareWindowLoad(mlir::OpBuilder &b, mlir::Location loc, IndexBuilder *ib,
                  tile::LoadOp op, mlir::ValueRange offsets,
                  mlir::ValueRange indices = {});

/// Loads registers [first, first + count) of the load's tile, as one vector;
/// out-of-bounds elements take the pad value and are never touched.
/// Per-register bounds guard each access; the tile-wide ones (dims the tile
/// does not run along) guard all of them at once.
mlir::Value emitWindowLoads(mlir::OpBuilder &b, mlir::Location loc,
                            WindowAddressing &addressing,
                            const WindowLoad &load, int64_t first,
                            int64_t count);

/// tile.load_scalar: every thread loads the one element (a uniform address),
/// under its bounds check; the pad outside the tensor. `indices`: converted.
mlir::FailureOr<mlir::Value> emitScalarLoad(mlir::OpBuilder &b,
                                            mlir::Location loc,
                                            IndexBuilder *ib,
                                            tile::LoadScalarOp op,
                                            mlir::ValueRange indices);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWACCESS_H

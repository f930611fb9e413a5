//===- Lowering.h - what the tile -> SIMT lowering files share --*- C++ -*-===//
//
// TileToSIMT.cpp lowers registers, warps and global memory;
// SharedMemoryLowering.cpp lowers the shared-memory ops (buffers, cp.async,
// ldmatrix). This header is what one needs from the other: the compile-time
// view of a distributed tile, thread ids, global window addressing, the
// shared-memory global and the on-demand ldmatrix reader the MMA lowering
// uses for a fused B operand.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_LOWERING_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_LOWERING_H

#include "IndexBuilder.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <optional>
#include <vector>

namespace flash::simt {

inline constexpr int64_t kWarp = tile::layout::kWarpSize;

//===----------------------------------------------------------------------===//
// Compile-time view of a distributed tile
//===----------------------------------------------------------------------===//

/// A tile type with its layout, evaluated at compile time.
struct TileInfo {
  mlir::RankedTensorType type;
  mlir::Attribute layout;
  llvm::SmallVector<int64_t, 2> shape;
  int64_t regs = 0;

  static std::optional<TileInfo> get(mlir::Type type);

  int64_t numElements() const;
  tile::layout::Coord coord(int64_t thread, int64_t reg) const {
    return tile::layoutCoord<int64_t>(layout, shape, thread / kWarp,
                                      thread % kWarp, reg);
  }
  /// Row-major position of a coordinate in the tile.
  int64_t linear(llvm::ArrayRef<int64_t> c) const;
  int64_t linearCoord(int64_t thread, int64_t reg) const {
    return linear(coord(thread, reg));
  }
  /// Linear coordinates of every register of every thread: [thread][reg].
  std::vector<std::vector<int64_t>> table(int64_t numThreads) const;
  mlir::VectorType vectorType() const {
    return mlir::VectorType::get({regs}, type.getElementType());
  }
};

std::string describe(mlir::Attribute attr);

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

int64_t getNumWarps(mlir::Operation *op);

struct ThreadIds {
  mlir::Value tid, warp, lane;
};
/// tid.x, warp = tid / 32 and lane = tid % 32, created once at the top of the
/// kernel's entry block.
ThreadIds getThreadIds(mlir::OpBuilder &builder, mlir::Operation *op);

mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// a && c, where a null predicate is true.
mlir::Value andPredicates(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                          mlir::Value c);
/// Runs `body` under `pred` (or unconditionally when `pred` is null).
void emitGuarded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value pred,
                 llvm::function_ref<void()> body);
void barrier(mlir::OpBuilder &b, mlir::Location loc);

/// @__flashc_smem as !llvm.ptr<3>.
mlir::Value sharedGlobal(mlir::OpBuilder &b, mlir::Location loc);
/// `base` + `bytes` (i32 or a constant) as !llvm.ptr<3>.
mlir::Value sharedByteAddress(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value base, mlir::Value bytes);

//===----------------------------------------------------------------------===//
// Global windows: after signature expansion every !tile.global value is an
// unrealized_conversion_cast of (!llvm.ptr<1>, i32 dims...).
//===----------------------------------------------------------------------===//

struct GlobalView {
  tile::GlobalType type;
  mlir::Value ptr;
  llvm::SmallVector<IndexValue, 4> dims;
};
std::optional<GlobalView> getGlobalView(mlir::Value source, IndexBuilder *ib);

/// Marks the global dims along which a window access (tile.load, tile.store,
/// tile.async_copy) provably stays inside the tensor whenever it happens
/// (`pred`: the access's predicate, or null); set before the conversion, on
/// the original IR.
void markWindowInBounds(mlir::Operation *access, mlir::Value global,
                        mlir::ValueRange offsets, llvm::ArrayRef<int64_t> window,
                        llvm::ArrayRef<int64_t> tileShape,
                        mlir::Value pred = nullptr);

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
/// window provably stays inside (markWindowInBounds) are not checked.
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

//===----------------------------------------------------------------------===//
// Shared memory (SharedMemoryLowering.cpp)
//===----------------------------------------------------------------------===//

/// Rejects what the shared-memory lowering cannot take (a buffer without
/// an offset, a copy window that does not start at column 0), before any op
/// is rewritten.
mlir::LogicalResult verifySharedMemoryOps(mlir::Operation *kernel);

/// Reads the registers of a tile.local_load from shared memory, on demand:
/// with ldmatrix where the layout allows (layout::planLdMatrix), element by
/// element otherwise. Each ldmatrix is emitted at the first request of one of
/// its pairs, so a fused MMA operand is read one k-step at a time.
class SharedOperandReader {
public:
  /// `buffer`: the buffer's start (!llvm.ptr<3>); `slot`: i32.
  SharedOperandReader(mlir::OpBuilder &b, mlir::Location loc,
                      tile::LocalLoadOp op, mlir::Value buffer,
                      mlir::Value slot);
  SharedOperandReader(const SharedOperandReader &) = delete;
  SharedOperandReader &operator=(const SharedOperandReader &) = delete;

  int64_t numPairs() const { return tile.regs / 2; }
  /// Registers 2p, 2p + 1 as vector<2 x T>.
  mlir::Value pair(int64_t p);
  /// Every register, as the tile's vector.
  mlir::Value all();
  /// Position of the read that fetches pair p among all reads (using the
  /// pairs in this order keeps few fragments live).
  int64_t readOrder(int64_t p) const;

private:
  IndexValue emitRowOffset(int64_t load);
  void emitLoad(int64_t load);
  mlir::Value emitElement(int64_t reg);

  mlir::OpBuilder &b;
  mlir::Location loc;
  IndexBuilder ib; // referenced by the IndexValues below: not movable
  tile::SharedType sharedType;
  TileInfo tile;
  IndexValue warp, lane;
  mlir::Value slotBase;
  std::optional<tile::layout::LdMatrixPlan> plan;
  std::vector<int64_t> loadOfPair;
  /// Byte offset of the row each thread addresses, per load: [load][thread].
  std::vector<std::vector<int64_t>> rowOffsets;
  IndexValue laneOffset; // rowOffsets[0] of this thread, in IR
  llvm::DenseMap<int64_t, mlir::Value> pairs;
};

void populateSharedMemoryPatterns(mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_LOWERING_H

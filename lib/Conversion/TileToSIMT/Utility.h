//===- Utility.h - what every tile -> SIMT pattern builds on ----*- C++ -*-===//
//
// The compile-time view of a distributed tile, the thread ids and lane
// predicates, addressing in shared memory (the kernel's buffers and the
// conversion's own scratch), and the global tensors of a kernel whose
// signature has been expanded. The other files of the conversion build on
// this one; it includes none of them.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_UTILITY_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_UTILITY_H

#include "IndexBuilder.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>
#include <string>
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
  /// The shape padded to whole steps of the layout (layout::Space::Padded).
  llvm::SmallVector<int64_t, 2> padded;
  int64_t regs = 0;

  static std::optional<TileInfo> get(mlir::Type type);

  int64_t numElements() const;
  tile::layout::Coord coord(int64_t thread, int64_t reg) const {
    return tile::layoutCoord<int64_t>(layout, shape, thread / kWarp,
                                      thread % kWarp, reg);
  }
  tile::layout::Coord paddedCoord(int64_t thread, int64_t reg) const {
    return tile::layoutCoord<int64_t>(layout, shape, thread / kWarp,
                                      thread % kWarp, reg,
                                      tile::layout::Space::Padded);
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

/// The attribute as the IR prints it, for diagnostics.
std::string describe(mlir::Attribute attr);

/// Row-major position of a coordinate in a tile of `shape`, in IR.
IndexValue linearIndex(IndexBuilder *ib, llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<IndexValue> coord);

//===----------------------------------------------------------------------===//
// Threads, predicates, registers
//===----------------------------------------------------------------------===//

int64_t getNumWarps(mlir::Operation *op);

/// On the producer side of a role split: its threads' index from the split.
inline constexpr llvm::StringLiteral kProducerTidAttrName = "simt.producer_tid";
struct ThreadIds {
  mlir::Value tid, warp, lane;
};
/// tid.x, warp = tid / 32 and lane = tid % 32, created once at the top of the
/// kernel's entry block; on the producer side of a role split (a cp.async
/// producer warpgroup runs the consumers' layouts) tid counts from the split,
/// created once at the top of that side.
ThreadIds getThreadIds(mlir::OpBuilder &builder, mlir::Operation *op);

mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// a && c, where a null predicate is true.
mlir::Value andPredicates(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                          mlir::Value c);
/// Runs `body` under `pred` (or unconditionally when `pred` is null).
void emitGuarded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value pred,
                 llvm::function_ref<void()> body);
void barrier(mlir::OpBuilder &b, mlir::Location loc);

/// Which registers each thread writes so that every element is written once:
/// register r of (warp, lane) writes iff it is the first register of the
/// first thread (lowest id) holding the element. `table`: [thread][reg] linear coordinates.
/// Result: [reg][warp] lane masks.
std::vector<std::vector<uint32_t>>
firstHolderMasks(const std::vector<std::vector<int64_t>> &table,
                 int64_t numElements, int64_t numWarps);

/// A predicate that is true on the lanes set in `perWarp[warp]`, or null
/// when every lane of every warp is set.
mlir::Value lanePredicate(mlir::OpBuilder &b, mlir::Location loc, ThreadIds ids,
                          llvm::ArrayRef<uint32_t> perWarp);

/// The lanes whose register of `tile` lies in the layout's padding along
/// `dim` (its Space::Padded coordinate at or past the size): [reg][warp].
std::vector<std::vector<uint32_t>> paddingLanes(const TileInfo &tile,
                                                unsigned dim, int64_t numWarps);

/// Whether any lane is set in `perWarp`.
bool anyLane(llvm::ArrayRef<uint32_t> perWarp);
/// `value`, or `replacement` in the lanes set in `perWarp`.
mlir::Value replaceInLanes(mlir::OpBuilder &b, mlir::Location loc,
                           ThreadIds ids, llvm::ArrayRef<uint32_t> perWarp,
                           mlir::Value replacement, mlir::Value value);

/// The first `n` elements of the vector `vec`.
llvm::SmallVector<mlir::Value> extractAll(mlir::OpBuilder &b,
                                          mlir::Location loc, mlir::Value vec,
                                          int64_t n);

/// Bytes of an element in memory (i1 takes a byte).
int64_t byteWidth(mlir::Type elem);
/// The type an element is loaded and stored as in memory (i1 as i8).
mlir::Type storageType(mlir::Type elem);
/// An f8E4M3FN value (scalar or vector) as the bytes memory holds
/// (arith.bitcast to i8); any other value as it is.
mlir::Value toStorage(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
/// The inverse of toStorage for values of element type `elem`.
mlir::Value fromStorage(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        mlir::Type elem);

//===----------------------------------------------------------------------===//
// Shared memory: @__flashc_smem holds the kernel's buffers (their offsets
// set by tile-allocate-shared), then the conversion's scratch.
//===----------------------------------------------------------------------===//

/// @__flashc_smem as !llvm.ptr<3>.
mlir::Value sharedGlobal(mlir::OpBuilder &b, mlir::Location loc);
/// `base` + `bytes` (i32 or a constant) as !llvm.ptr<3>.
mlir::Value sharedByteAddress(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value base, mlir::Value bytes);

/// Records on the kernel of `op` that the conversion uses `bytes` of
/// scratch (layout exchanges, cross-warp reductions).
void noteSharedBytes(mlir::Operation *op, int64_t bytes);
/// Where the scratch starts: after the kernel's buffers, 16-byte aligned.
mlir::Value scratchBase(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Operation *op);
/// Element `index` of an array of `value`'s type at `base` (i1 as i8).
void storeShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                 mlir::Value value, mlir::Value index);
mlir::Value loadShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                       mlir::Type elem, mlir::Value index);

/// The swizzle of a shared buffer's slots.
tile::layout::SwizzleParams swizzleOf(tile::SharedType type);
/// The start of slot `slot` (i32) of the buffer at `buffer`.
mlir::Value slotStart(mlir::OpBuilder &b, mlir::Location loc, IndexBuilder *ib,
                      tile::SharedType type, mlir::Value buffer,
                      mlir::Value slot);
/// The i32 byte offset of one access of a swizzled tile from the offset
/// `first` of another, given both per thread at compile time (`from`, `to`):
/// `first` xor a constant plus a constant when such a relation holds for
/// every thread (layout::relateByXorAdd), `direct()` otherwise.
IndexValue relatedOffset(IndexValue first, llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to, tile::SharedType type,
                         llvm::function_ref<IndexValue()> direct);

//===----------------------------------------------------------------------===//
// Global tensors: after signature expansion every !tile.global value is an
// unrealized_conversion_cast of (!llvm.ptr<1>, i32 dims...).
//===----------------------------------------------------------------------===//

struct GlobalView {
  tile::GlobalType type;
  mlir::Value ptr;
  llvm::SmallVector<IndexValue, 4> dims;
};
std::optional<GlobalView> getGlobalView(mlir::Value source, IndexBuilder *ib);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_UTILITY_H

//===- SharedOperandReader.h - a tile.local_load's registers ----*- C++ -*-===//
//
// Reads the registers of a tile.local_load from shared memory, on demand,
// for the local_load lowering (all at once) and for an MMA whose B operand
// is a fused local_load (a pair at a time, one k-step after another).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_SHAREDOPERANDREADER_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_SHAREDOPERANDREADER_H

#include "Utility.h"

#include "llvm/ADT/DenseMap.h"

namespace flash::simt {

/// With ldmatrix where the layout allows (layout::planLdMatrix), element by
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
  void planRowOffsets(int64_t numWarps);
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

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_SHAREDOPERANDREADER_H

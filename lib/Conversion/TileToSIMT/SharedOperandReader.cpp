//===- SharedOperandReader.cpp - a tile.local_load's registers ------------===//
//
// Addresses of a swizzled tile: every thread computes one byte offset (the
// row its lane supplies to the first ldmatrix); every other ldmatrix address
// is that offset xor a constant plus a constant, found and checked for every
// thread at compile time (relatedOffset), so the reads of a tile share one
// per-thread register.
//
//===----------------------------------------------------------------------===//
#include "SharedOperandReader.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

SharedOperandReader::SharedOperandReader(OpBuilder &b, Location loc,
                                         LocalLoadOp op, Value buffer,
                                         Value slot)
    : b(b), loc(loc), ib{b, loc}, sharedType(op.getSource().getType()),
      tile(*TileInfo::get(op.getType())) {
  ThreadIds ids = getThreadIds(b, op);
  warp = IndexValue(&ib, ids.warp);
  lane = IndexValue(&ib, ids.lane);
  slotBase = slotStart(b, loc, &ib, sharedType, buffer, slot);
  int64_t numWarps = getNumWarps(op);
  plan = layout::planLdMatrix(
      tile.regs, numWarps, [&](int64_t w, int64_t l, int64_t r) {
        return layoutCoord<int64_t>(tile.layout, tile.shape, w, l, r);
      });
  if (!plan)
    return;
  loadOfPair.assign(numPairs(), 0);
  for (auto [i, load] : llvm::enumerate(plan->loads))
    for (int64_t p : load)
      loadOfPair[p] = i;
  planRowOffsets(numWarps);
  laneOffset = emitRowOffset(0);
}

/// Each load's row address of every thread, at compile time.
void SharedOperandReader::planRowOffsets(int64_t numWarps) {
  layout::SwizzleParams swizzle = swizzleOf(sharedType);
  for (int64_t i = 0, e = plan->loads.size(); i < e; ++i) {
    std::vector<int64_t> &row = rowOffsets.emplace_back();
    for (int64_t w = 0; w < numWarps; ++w)
      for (int64_t l = 0; l < kWarp; ++l) {
        layout::Coord c = layout::ldmatrixRowCoord<int64_t>(
            *plan, i, plan->origins[w][plan->loads[i][0]], l);
        row.push_back(layout::swizzledOffset<int64_t>(swizzle, c[0], c[1]));
      }
  }
}

IndexValue SharedOperandReader::emitRowOffset(int64_t load) {
  // The origin of the load's first matrix in this warp: the layout at lane
  // 0 of that pair's first register.
  layout::CoordOf<IndexValue> origin = layoutCoord<IndexValue>(
      tile.layout, tile.shape, warp, IndexValue(&ib, int64_t(0)),
      2 * plan->loads[load][0]);
  layout::CoordOf<IndexValue> c =
      layout::ldmatrixRowCoord<IndexValue>(*plan, load, origin, lane);
  return layout::swizzledOffset<IndexValue>(swizzleOf(sharedType), c[0], c[1]);
}

int64_t SharedOperandReader::readOrder(int64_t p) const {
  return plan ? loadOfPair[p] : 0;
}

void SharedOperandReader::emitLoad(int64_t load) {
  IndexValue offset =
      relatedOffset(laneOffset, rowOffsets[0], rowOffsets[load], sharedType,
                    [&] { return emitRowOffset(load); });
  Value address = sharedByteAddress(b, loc, slotBase, offset.get());
  ArrayRef<int64_t> pairsOfLoad = plan->loads[load];
  int64_t num = pairsOfLoad.size();
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type resultType =
      num == 1 ? i32
               : LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(num, i32));
  Value result = NVVM::LdMatrixOp::create(
      b, loc, resultType, address, num,
      plan->trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  auto pairType = VectorType::get({2}, tile.type.getElementType());
  for (int64_t m = 0; m < num; ++m) {
    Value reg = num == 1 ? result
                         : LLVM::ExtractValueOp::create(b, loc, result,
                                                        ArrayRef<int64_t>{m})
                               .getResult();
    pairs[pairsOfLoad[m]] = LLVM::BitcastOp::create(b, loc, pairType, reg);
  }
}

Value SharedOperandReader::emitElement(int64_t reg) {
  layout::CoordOf<IndexValue> c =
      layoutCoord<IndexValue>(tile.layout, tile.shape, warp, lane, reg);
  IndexValue offset =
      layout::swizzledOffset<IndexValue>(swizzleOf(sharedType), c[0], c[1]);
  Type elem = tile.type.getElementType();
  return LLVM::LoadOp::create(b, loc, elem,
                              sharedByteAddress(b, loc, slotBase, offset.get()),
                              sharedType.getElementBytes());
}

Value SharedOperandReader::pair(int64_t p) {
  if (Value v = pairs.lookup(p))
    return v;
  if (plan) {
    emitLoad(loadOfPair[p]);
    return pairs.lookup(p);
  }
  Value v = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, tile.type.getElementType()),
      ValueRange{emitElement(2 * p), emitElement(2 * p + 1)});
  pairs[p] = v;
  return v;
}

Value SharedOperandReader::all() {
  SmallVector<Value> elems;
  if (!plan) {
    for (int64_t r = 0; r < tile.regs; ++r)
      elems.push_back(emitElement(r));
  } else {
    for (int64_t p = 0; p < numPairs(); ++p) {
      Value v = pair(p);
      for (int64_t e = 0; e < 2; ++e)
        elems.push_back(vector::ExtractOp::create(b, loc, v, e));
    }
  }
  return vector::FromElementsOp::create(b, loc, tile.vectorType(), elems);
}

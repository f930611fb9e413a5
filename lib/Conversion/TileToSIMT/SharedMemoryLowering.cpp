//===- SharedMemoryLowering.cpp - buffers, cp.async, ldmatrix -------------===//
//
// The shared-memory ops of the tile dialect at the SIMT level:
//
//   tile.local_alloc {offset}   @__flashc_smem + offset, as !llvm.ptr<3>
//   tile.async_copy             one nvvm.cp.async (16 bytes, .cg) per 16-byte
//                               chunk; out-of-bounds chunks and all of them
//                               when the copy's predicate is false get
//                               src-size 0 (zero-fill, no read, no branch)
//   tile.async_commit / wait N  cp.async.commit_group / wait_group N
//   tile.barrier                bar.sync 0
//   tile.local_load             ldmatrix.x4 (x2, x1 for the rest; .trans
//                               when the registers run down the stored
//                               rows), planned at compile time from the
//                               result's layout (layout::planLdMatrix);
//                               ld.shared of each element when no plan fits
//
// Addresses of a swizzled tile: every thread computes one byte offset (the
// first chunk it copies, the row its lane supplies to the first ldmatrix);
// every other access is that offset xor a constant plus a constant, found
// and checked for every thread at compile time (layout::relateByXorAdd), so
// the accesses of a tile share one per-thread register.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

layout::SwizzleParams swizzleOf(SharedType type) {
  return {type.getRowBytes(), type.getElementBytes(), type.getPerPhase(),
          type.getMaxPhase()};
}

/// `offset` (i32 bytes) from the start of slot `slot` of a buffer.
Value slotStart(OpBuilder &b, Location loc, IndexBuilder *ib, SharedType type,
                Value buffer, Value slot) {
  return sharedByteAddress(
      b, loc, buffer, (IndexValue(ib, slot) * type.getSlotBytes()).get());
}

/// The i32 byte offset of access `i` from that of access 0 (`first`), per
/// `offsets[i][thread]` known at compile time; `direct` computes it from
/// scratch when no xor/add relation holds.
IndexValue relatedOffset(IndexValue first, ArrayRef<int64_t> from,
                         ArrayRef<int64_t> to, SharedType type,
                         llvm::function_ref<IndexValue()> direct) {
  if (auto rel = layout::relateByXorAdd(from, to, 16 * type.getMaxPhase()))
    return (first ^ rel->xorMask) + rel->add;
  return direct();
}

//===----------------------------------------------------------------------===//
// Buffers, groups, barriers
//===----------------------------------------------------------------------===//

struct LocalAllocLowering : OpConversionPattern<LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // verifySharedMemoryOps has checked that the offset is there.
    rewriter.replaceOp(op, sharedByteAddress(rewriter, loc,
                                             sharedGlobal(rewriter, loc),
                                             i32Const(rewriter, loc,
                                                      *op.getOffset())));
    return success();
  }
};

struct AsyncCommitLowering : OpConversionPattern<AsyncCommitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncCommitGroupOp::create(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

struct AsyncWaitLowering : OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(), op.getPending());
    rewriter.eraseOp(op);
    return success();
  }
};

struct BarrierLowering : OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    barrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// cp.async
//===----------------------------------------------------------------------===//

struct AsyncCopyLowering : OpConversionPattern<AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    IndexBuilder ib{b, loc};
    auto view = getGlobalView(op.getSource(), &ib);
    if (!view)
      return op.emitOpError("source is not a kernel tensor parameter");
    SharedType type = op.getDest().getType();
    int64_t perChunk = 16 / type.getElementBytes();
    int64_t chunksPerRow = type.getRowBytes() / 16;
    int64_t chunks = type.getRows() * chunksPerRow;
    int64_t numThreads = getNumWarps(op) * kWarp;
    int64_t perThread = llvm::divideCeil(chunks, numThreads);
    ThreadIds ids = getThreadIds(b, op);
    IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane), tid(&ib, ids.tid);

    // Register i of a thread = the first element of its chunk i.
    AccessMap map;
    map.regs = perThread;
    map.coord = [=](int64_t thread, int64_t i) -> layout::Coord {
      layout::Coord c =
          layout::copyChunkCoord<int64_t>(chunksPerRow, numThreads, thread, i);
      return {c[0], c[1] * perChunk};
    };
    map.emit = [=](IndexValue, IndexValue, int64_t i) {
      auto c = layout::copyChunkCoord(chunksPerRow, numThreads, tid, i);
      return layout::CoordOf<IndexValue>{c[0], c[1] * perChunk};
    };
    WindowAddressing global(b, loc, &ib, *view, adaptor.getOffsets(), op,
                            op.getWindow(), map, numThreads, warp, lane);

    layout::SwizzleParams swizzle = swizzleOf(type);
    auto sharedOffset = [&](int64_t thread, int64_t i) {
      layout::Coord c = map.coord(thread, i);
      return layout::swizzledOffset<int64_t>(swizzle, c[0], c[1]);
    };
    auto emitSharedOffset = [&](int64_t i) {
      layout::CoordOf<IndexValue> c = map.emit(warp, lane, i);
      return layout::swizzledOffset<IndexValue>(swizzle, c[0], c[1]);
    };
    Value slot = slotStart(b, loc, &ib, type, adaptor.getDest(),
                           adaptor.getSlot());
    IndexValue first = emitSharedOffset(0);
    Value full = i32Const(b, loc, 16), none = i32Const(b, loc, 0);
    for (int64_t i = 0; i < perThread; ++i) {
      // Threads past the last chunk (when the chunks do not divide evenly)
      // copy nothing: a zero-fill would write past the slot.
      int64_t active = std::min(numThreads, chunks - i * numThreads);
      SmallVector<int64_t> from, to;
      for (int64_t t = 0; t < active; ++t) {
        from.push_back(sharedOffset(t, 0));
        to.push_back(sharedOffset(t, i));
      }
      IndexValue offset = relatedOffset(first, from, to, type,
                                        [&] { return emitSharedOffset(i); });
      Value dst = sharedByteAddress(b, loc, slot, offset.get());
      AccessPoint src = global.at(i);
      Value valid = andPredicates(
          b, loc, andPredicates(b, loc, src.inBounds, global.uniformInBounds()),
          adaptor.getPred());
      Value srcSize =
          valid ? arith::SelectOp::create(b, loc, valid, full, none).getResult()
                : Value();
      Value guard;
      if (active < numThreads)
        guard = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      tid.get(), i32Const(b, loc, active));
      emitGuarded(b, loc, guard, [&] {
        NVVM::CpAsyncOp::create(b, loc, dst, src.address, 16,
                                NVVM::LoadCacheModifierKind::CG, srcSize);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// local_load
//===----------------------------------------------------------------------===//

struct LocalLoadLowering : OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (!tile)
      return op.emitOpError("result has no layout");
    if (op->hasAttr(kFusedIntoMmaAttrName)) { // the MMA reads its fragments
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, rewriter.getZeroAttr(tile->vectorType()));
      return success();
    }
    SharedOperandReader reader(rewriter, op.getLoc(), op, adaptor.getSource(),
                               adaptor.getSlot());
    rewriter.replaceOp(op, reader.all());
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// SharedOperandReader
//===----------------------------------------------------------------------===//

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
  // Each load's row address of every thread, at compile time.
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
  laneOffset = emitRowOffset(0);
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

//===----------------------------------------------------------------------===//
// Checks and registration
//===----------------------------------------------------------------------===//

LogicalResult flash::simt::verifySharedMemoryOps(Operation *kernel) {
  WalkResult result = kernel->walk([](Operation *op) {
    if (auto alloc = dyn_cast<LocalAllocOp>(op); alloc && !alloc.getOffset()) {
      alloc.emitOpError("has no offset: run tile-allocate-shared before "
                        "convert-tile-to-simt");
      return WalkResult::interrupt();
    }
    if (auto copy = dyn_cast<AsyncCopyOp>(op)) {
      auto c = copy.getOffsets().back().getDefiningOp<arith::ConstantIntOp>();
      if (!c || c.value() != 0) {
        copy.emitOpError("copies whole rows: its offset along the last dim "
                         "must be the constant 0");
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void flash::simt::populateSharedMemoryPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  converter.addConversion([](SharedType type) -> Type {
    return LLVM::LLVMPointerType::get(type.getContext(), 3);
  });
  patterns.add<LocalAllocLowering, AsyncCopyLowering, AsyncCommitLowering,
               AsyncWaitLowering, BarrierLowering, LocalLoadLowering>(
      converter, patterns.getContext());
}

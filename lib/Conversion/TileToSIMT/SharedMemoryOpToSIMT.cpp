//===- SharedMemoryOpToSIMT.cpp - buffers, cp.async, ldmatrix -------------===//
//
// The shared-memory ops of the tile dialect at the SIMT level:
//
//   tile.local_alloc {offset}   @__flashc_smem + offset, as !llvm.ptr<3>
//   tile.async_copy             one nvvm.cp.async (16 bytes, .cg) per 16-byte
//                               chunk; out-of-bounds chunks and all of them
//                               when the copy's predicate is false get
//                               src-size 0 (zero-fill, no read, no branch);
//                               gathered rows: each chunk's row address from
//                               the index registers the copying thread holds
//   tile.async_commit / wait N  cp.async.commit_group / wait_group N
//   tile.barrier                bar.sync 0
//   tile.local_load             ldmatrix.x4 (x2, x1 for the rest; .trans
//                               when the registers run down the stored
//                               rows), planned at compile time from the
//                               result's layout (layout::planLdMatrix);
//                               ld.shared of each element when no plan fits
//                               (SharedOperandReader)
//
// Addresses of a swizzled tile: every thread computes one byte offset (the
// first chunk it copies); every other chunk's offset is that offset xor a
// constant plus a constant (relatedOffset), so the accesses of a tile share
// one per-thread register.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "SharedOperandReader.h"
#include "WindowAccess.h"

#include "flashc/Dialect/Tile/WgmmaTarget.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

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
    // On sm_90a wgmma (the async proxy) reads what cp.async wrote (the
    // generic proxy): each thread orders its landed copies before the
    // barrier that follows the wait.
    if (targetsWgmma(op))
      NVVM::FenceProxyOp::create(
          rewriter, op.getLoc(), NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                     NVVM::SharedSpace::shared_cta));
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

/// The chunks of a copy into `type` spread over `numThreads` threads:
/// register i of a thread = the first element of its chunk i.
AccessMap copyChunkMap(SharedType type, int64_t numThreads, IndexValue tid) {
  int64_t perChunk = 16 / type.getElementBytes();
  int64_t chunksPerRow = type.getRowBytes() / 16;
  int64_t chunks = type.getRows() * chunksPerRow;
  AccessMap map;
  map.regs = llvm::divideCeil(chunks, numThreads);
  map.coord = [=](int64_t thread, int64_t i) -> layout::Coord {
    layout::Coord c =
        layout::copyChunkCoord<int64_t>(chunksPerRow, numThreads, thread, i);
    return {c[0], c[1] * perChunk};
  };
  map.emit = [=](IndexValue, IndexValue, int64_t i) {
    auto c = layout::copyChunkCoord(chunksPerRow, numThreads, tid, i);
    return layout::CoordOf<IndexValue>{c[0], c[1] * perChunk};
  };
  return map;
}

/// The chunks of a gathered copy: the blocked layout B of its index tiles'
/// `#tile.slice<1, B>` over the [rows, chunks per row] grid, each chunk held
/// by exactly one thread (the rows each thread copies are the ones whose
/// indices it holds).
FailureOr<AccessMap> gatheredChunkMap(AsyncCopyOp op, SharedType type,
                                      int64_t numWarps, IndexValue warp,
                                      IndexValue lane) {
  auto slice = dyn_cast_or_null<SliceLayoutAttr>(
      cast<RankedTensorType>(op.getIndices().front().getType()).getEncoding());
  auto blocked =
      slice ? dyn_cast<BlockedLayoutAttr>(slice.getParent()) : nullptr;
  if (!blocked || slice.getDim() != 1 ||
      llvm::any_of(op.getIndices().getTypes(), [&](Type t) {
        return t != op.getIndices().front().getType();
      }))
    return op.emitOpError("index tiles must share one #tile.slice<1, "
                          "#tile.blocked<...>> layout (the chunks each "
                          "thread copies)");
  int64_t perChunk = 16 / type.getElementBytes();
  SmallVector<int64_t, 2> grid = {type.getRows(), type.getRowBytes() / 16};
  layout::BlockedParams params = blocked.getParams();
  bool once = params.numWarps() == numWarps &&
              layout::checkBlockedShape(params, grid).empty();
  for (size_t d = 0; once && d < grid.size(); ++d)
    once = params.sizePerThread[d] * params.threadsPerWarp[d] *
               params.warpsPerCTA[d] <=
           grid[d];
  if (!once)
    return op.emitOpError("the index tiles' layout ")
           << describe(blocked) << " must spread the " << grid[0] << " x "
           << grid[1] << " chunks of the slot over the " << numWarps
           << " warps, each chunk once";
  AccessMap map;
  map.regs = layout::blockedNumRegisters(params, grid);
  map.coord = [=](int64_t thread, int64_t i) -> layout::Coord {
    layout::Coord c = layout::blockedCoord<int64_t>(params, grid, thread / kWarp,
                                                    thread % kWarp, i);
    return {c[0], c[1] * perChunk};
  };
  map.emit = [=](IndexValue w, IndexValue l, int64_t i) {
    auto c = layout::blockedCoord(params, grid, w, l, i);
    return layout::CoordOf<IndexValue>{c[0], c[1] * perChunk};
  };
  return map;
}

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
    int64_t chunks = type.getRows() * (type.getRowBytes() / 16);
    int64_t numThreads = getNumWarps(op) * kWarp;
    ThreadIds ids = getThreadIds(b, op);
    IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane), tid(&ib, ids.tid);
    AccessMap map = copyChunkMap(type, numThreads, tid);
    std::optional<GatherRows> gather;
    if (op.isGathered()) {
      FailureOr<AccessMap> chunks =
          gatheredChunkMap(op, type, getNumWarps(op), warp, lane);
      if (failed(chunks))
        return failure();
      map = *chunks;
      auto rows = gatherRegisterMap(
          map, *TileInfo::get(op.getIndices().front().getType()), numThreads);
      if (failed(rows))
        return op.emitOpError("the index tiles do not give every thread the "
                              "rows it copies");
      gather = GatherRows{llvm::to_vector(op.getGather()),
                          llvm::to_vector(adaptor.getIndices()), *rows};
    }
    SmallVector<int64_t, 4> window =
        tileWindow(op.getWindow(), op.isGathered());
    WindowAddressing global(b, loc, &ib, *view, adaptor.getOffsets(), op,
                            window, map, numThreads, warp, lane,
                            gather ? &*gather : nullptr);

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
    for (int64_t i = 0; i < map.regs; ++i) {
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
// Before the conversion
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

void flash::simt::reserveSharedBuffers(Operation *kernel) {
  int64_t buffers = 0;
  if (auto attr =
          kernel->getAttrOfType<IntegerAttr>(flash::tile::kSharedBytesAttrName))
    buffers = attr.getInt();
  kernel->walk([&](LocalAllocOp alloc) {
    buffers = std::max<int64_t>(buffers, *alloc.getOffset() +
                                             alloc.getType().getBytes());
  });
  if (buffers > 0) {
    auto bytes =
        IntegerAttr::get(IntegerType::get(kernel->getContext(), 64), buffers);
    kernel->setAttr(flash::tile::kSharedBytesAttrName, bytes);
    kernel->setAttr(flash::simt::kSharedBytesAttrName, bytes);
  }
}

void flash::simt::populateSharedMemoryOpToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  converter.addConversion([](SharedType type) -> Type {
    return LLVM::LLVMPointerType::get(type.getContext(), 3);
  });
  patterns.add<LocalAllocLowering, AsyncCopyLowering, AsyncCommitLowering,
               AsyncWaitLowering, BarrierLowering, LocalLoadLowering>(
      converter, patterns.getContext());
}

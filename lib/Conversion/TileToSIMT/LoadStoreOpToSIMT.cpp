//===- LoadStoreOpToSIMT.cpp - tile.load, tile.store, tile.atomic_add -----===//
//
// Each register of the tile is one element of the window; runs of registers
// that are consecutive and aligned in memory move as one vector
// (chooseVectorWidth). A gathered load adds each register's row index, read
// from the index tiles' registers, to its address. tile.load_scalar is one
// load of the same address in every thread. Loads give the pad value outside
// the tensor, stores and atomics write nothing there nor where their mask is
// false, and of the threads holding copies of an element only the first
// writes it (an atomic add from every holder would add it several times).
// Bools are bytes in memory. An atomic add that lowerTmaCopies stages for
// the TMA unit's reduce-adds (simt.tma_reduce_staging) stores its registers
// into the staging buffer instead.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "TmaCopyToSIMT.h"
#include "WindowAccess.h"
#include "WindowAnalysis.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

struct LoadLowering : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (op->hasAttr(kFusedIntoMmaAttrName)) { // the MMA fetches its registers
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, rewriter.getZeroAttr(tile->vectorType()));
      return success();
    }
    Location loc = op.getLoc();
    IndexBuilder ib{rewriter, loc};
    auto load = prepareWindowLoad(rewriter, loc, &ib, op, adaptor.getOffsets(),
                                  adaptor.getIndices());
    if (failed(load))
      return failure();
    WindowAddressing addressing(rewriter, loc, &ib, load->view, load->offsets,
                                op, load->window, AccessMap::of(load->tile),
                                getNumWarps(op) * kWarp, load->warp, load->lane,
                                load->gather ? &*load->gather : nullptr);
    rewriter.replaceOp(
        op, emitWindowLoads(rewriter, loc, addressing, *load, 0, tile->regs));
    return success();
  }
};

/// One element as a scalar: the same load in every thread (no tile, no
/// shuffles), the pad when out of bounds.
struct LoadScalarLowering : OpConversionPattern<LoadScalarOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadScalarOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    IndexBuilder ib{rewriter, op.getLoc()};
    FailureOr<Value> value = emitScalarLoad(rewriter, op.getLoc(), &ib, op,
                                            adaptor.getIndices());
    if (failed(value))
      return failure();
    rewriter.replaceOp(op, *value);
    return success();
  }
};

/// Registers [first, first + width) of `value`, as one access.
Value registerRun(OpBuilder &b, Location loc, Value value, int64_t first,
                  int64_t width) {
  if (width == 1)
    return vector::ExtractOp::create(b, loc, value, first);
  SmallVector<int64_t> indices;
  for (int64_t j = 0; j < width; ++j)
    indices.push_back(first + j);
  return vector::ShuffleOp::create(b, loc, value, value, indices);
}

/// What a window write does with each register run it keeps.
enum class WriteKind { Store, AtomicAdd };

/// tile.store and tile.atomic_add: each register run that has a writer is
/// written under the tile-wide bounds, its own bounds, its first-holder lane
/// predicate and its mask bit. Stores keep their vectors when the mask is
/// uniform over each vector (markUniformMasks); otherwise, and for atomics,
/// every element is its own access.
template <typename Op>
LogicalResult lowerWindowWrite(Op op, typename Op::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter,
                               WriteKind kind) {
  auto tile = TileInfo::get(op.getValue().getType());
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  IndexBuilder ib{b, loc};
  auto view = getGlobalView(op.getDest(), &ib);
  if (!view)
    return op.emitOpError("destination is not a kernel tensor parameter");
  Type elem = tile->type.getElementType();
  int64_t numWarps = getNumWarps(op);
  auto writers = firstHolderMasks(tile->table(numWarps * kWarp),
                                  tile->numElements(), numWarps);
  ArrayRef<int64_t> window = op.getWindow();
  Value mask = adaptor.getMask();
  bool vectors = kind == WriteKind::Store &&
                 (!mask || op->hasAttr(kUniformMaskAttrName));
  int64_t width = vectors ? chooseVectorWidth(*tile, window, *view,
                                              op.getOffsets().back(), numWarps,
                                              &writers)
                          : 1;
  ThreadIds ids = getThreadIds(b, op);
  IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
  WindowAddressing addressing(b, loc, &ib, *view, adaptor.getOffsets(), op,
                              window, AccessMap::of(*tile), numWarps * kWarp,
                              warp, lane);
  // fp8 values are bytes in memory: bitcast once, then split the bytes.
  Value value = toStorage(b, loc, adaptor.getValue());
  for (int64_t r0 = 0; r0 < tile->regs; r0 += width) {
    if (llvm::all_of(writers[r0], [](uint32_t m) { return m == 0; }))
      continue;
    AccessPoint at = addressing.at(r0);
    Value pred = andPredicates(b, loc, addressing.uniformInBounds(),
                               andPredicates(b, loc, at.inBounds,
                                             lanePredicate(b, loc, ids,
                                                           writers[r0])));
    if (mask)
      pred = andPredicates(b, loc, pred,
                           vector::ExtractOp::create(b, loc, mask, r0));
    Value part = registerRun(b, loc, value, r0, width);
    emitGuarded(b, loc, pred, [&] {
      if (kind == WriteKind::AtomicAdd) {
        LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::fadd, at.address,
                                  part, LLVM::AtomicOrdering::monotonic,
                                  StringRef("device"), byteWidth(elem));
        return;
      }
      if (elem.isInteger(1)) // bools are bytes in memory
        part = arith::ExtUIOp::create(b, loc, b.getI8Type(), part);
      LLVM::StoreOp::create(b, loc, part, at.address,
                            width * byteWidth(elem));
    });
  }
  rewriter.eraseOp(op);
  return success();
}

struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerWindowWrite(op, adaptor, rewriter, WriteKind::Store);
  }
};

/// The registers of a staged atomic add, stored into its staging buffer
/// at `offset` (each element once, by its first holder). One thread's
/// offset is computed, the others are it xor a constant plus a constant
/// where the layout allows (relateByXorAdd), and runs of registers
/// consecutive in the buffer for every thread are stored as one vector.
LogicalResult lowerStagedAdd(AtomicAddOp op, AtomicAddOp::Adaptor adaptor,
                             ConversionPatternRewriter &rewriter,
                             int64_t offset) {
  std::optional<TmaReduceStaging> staging = tmaReduceStagingOf(op);
  auto tile = TileInfo::get(op.getValue().getType());
  if (!staging || !tile)
    return op.emitOpError("staged for TMA reduce-adds but not a box of "
                          "whole rows of an f32 tensor");
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  IndexBuilder ib{b, loc};
  int64_t numWarps = getNumWarps(op);
  int64_t threads = numWarps * kWarp;
  auto writers = firstHolderMasks(tile->table(threads), tile->numElements(),
                                  numWarps);
  layout::SwizzleParams swizzle = staging->swizzle();
  // [reg][thread]: the byte offset of each register's element.
  std::vector<std::vector<int64_t>> at(tile->regs);
  for (int64_t r = 0; r < tile->regs; ++r)
    for (int64_t t = 0; t < threads; ++t) {
      layout::Coord c = tile->coord(t, r);
      at[r].push_back(layout::swizzledOffset<int64_t>(swizzle, c[0], c[1]));
    }
  // Registers [r, r + width) of every thread: one aligned run in memory.
  auto isRun = [&](int64_t r, int64_t width) {
    if (r % width != 0 || r + width > tile->regs)
      return false;
    for (int64_t t = 0; t < threads; ++t) {
      if (at[r][t] % (4 * width) != 0)
        return false;
      for (int64_t j = 1; j < width; ++j)
        if (at[r + j][t] != at[r][t] + 4 * j || writers[r + j] != writers[r])
          return false;
    }
    return true;
  };
  ThreadIds ids = getThreadIds(b, op);
  IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
  layout::CoordOf<IndexValue> c0 =
      layoutCoord<IndexValue>(tile->layout, tile->shape, warp, lane, 0);
  IndexValue first = layout::swizzledOffset<IndexValue>(swizzle, c0[0], c0[1]);
  Value base = sharedByteAddress(b, loc, sharedGlobal(b, loc),
                                 i32Const(b, loc, offset));
  Value value = adaptor.getValue();
  for (int64_t r0 = 0; r0 < tile->regs;) {
    int64_t width = isRun(r0, 4) ? 4 : isRun(r0, 2) ? 2 : 1;
    if (!anyLane(writers[r0])) {
      r0 += width;
      continue;
    }
    IndexValue off = first;
    if (auto rel = layout::relateByXorAdd(at[0], at[r0],
                                          16 * swizzle.maxPhase))
      off = (first ^ rel->xorMask) + rel->add;
    else {
      layout::CoordOf<IndexValue> c =
          layoutCoord<IndexValue>(tile->layout, tile->shape, warp, lane, r0);
      off = layout::swizzledOffset<IndexValue>(swizzle, c[0], c[1]);
    }
    Value part = registerRun(b, loc, value, r0, width);
    Value address = sharedByteAddress(b, loc, base, off.get());
    emitGuarded(b, loc, lanePredicate(b, loc, ids, writers[r0]), [&] {
      LLVM::StoreOp::create(b, loc, part, address, 4 * width);
    });
    r0 += width;
  }
  rewriter.eraseOp(op);
  return success();
}

/// Relaxed (monotonic), device-scope `atomicrmw fadd`s whose results are
/// unused: the NVPTX back end emits atom.global.add.f32 (PTX's defaults:
/// .relaxed, .gpu), which ptxas may issue as a reduction (RED) since nothing
/// reads the old value.
struct AtomicAddLowering : OpConversionPattern<AtomicAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AtomicAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (auto staged =
            op->getAttrOfType<IntegerAttr>(kTmaReduceStagingAttrName))
      return lowerStagedAdd(op, adaptor, rewriter, staged.getInt());
    return lowerWindowWrite(op, adaptor, rewriter, WriteKind::AtomicAdd);
  }
};

} // namespace

void flash::simt::populateLoadStoreOpToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadLowering, LoadScalarLowering, StoreLowering,
               AtomicAddLowering>(
      converter, patterns.getContext());
}

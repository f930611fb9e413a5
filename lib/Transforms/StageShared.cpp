//===- StageShared.cpp - stage MMA operand loads through shared memory ----===//
//
// An MMA operand loaded from global memory straight into its fragment layout
// costs many narrow, poorly coalesced loads. Staged through a swizzled
// shared-memory buffer it becomes 16-byte cp.async copies of whole rows and
// ldmatrix reads. The copies are completed right away here (wait 0 and a
// barrier); tile-pipeline-copies overlaps them with the loop that uses them.
// Gathered rows (a paged KV cache) stage the same way: each row's chunks are
// copied from the address its index tiles give (FlashAttention-2's and
// vLLM's paged KV path).
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace flash {
#define GEN_PASS_DEF_TILESTAGESHARED
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

static int64_t kernelWarps(Operation *op) {
  auto kernel = op->getParentOfType<func::FuncOp>();
  auto warps =
      kernel ? kernel->getAttrOfType<IntegerAttr>(kNumWarpsAttrName) : nullptr;
  return warps ? warps.getInt() : 1;
}

SharedType flash::stagingBufferFor(LoadOp load) {
  RankedTensorType tile = load.getType();
  Type element = tile.getElementType();
  if (!(element.isF16() || element.isBF16()) || tile.getRank() != 2)
    return {};
  auto pad = dyn_cast<FloatAttr>(load.getPad());
  if (!pad || !pad.getValue().isPosZero())
    return {};
  GlobalType global = load.getSource().getType();
  unsigned last = global.getRank() - 1;
  ArrayRef<int64_t> window = load.getWindow();
  if (window.back() != last || !global.isStaticDim(last) ||
      tile.getDimSize(1) != global.getShape()[last] ||
      !matchPattern(load.getOffsets()[last], m_Zero()))
    return {};
  int64_t rowBytes = tile.getDimSize(1) * element.getIntOrFloatBitWidth() / 8;
  if (rowBytes % 16 != 0)
    return {};
  // Eight rows of one 16-byte chunk column should span all 32 banks (128
  // bytes): XOR the chunk index with the row's phase. Rows narrower than 128
  // bytes share a phase between 8 / chunks consecutive rows. The phase must
  // stay inside an aligned power-of-two group of a row's chunks, hence the
  // largest power of two dividing the chunk count. One phase is no swizzle,
  // spelled [1, 1].
  int64_t chunks = rowBytes / 16;
  int64_t maxPhase = std::min<int64_t>(8, chunks & -chunks);
  int64_t perPhase = maxPhase == 1 ? 1 : std::max<int64_t>(1, 8 / chunks);
  auto buffer = SharedType::get(load.getContext(),
                                {1, tile.getDimSize(0), tile.getDimSize(1)},
                                element, perPhase, maxPhase);
  if (load.isGathered() && !gatherChunkLayout(buffer, kernelWarps(load)))
    return {};
  return buffer;
}

BlockedLayoutAttr flash::gatherChunkLayout(SharedType buffer,
                                           int64_t numWarps) {
  std::optional<layout::BlockedParams> params = layout::gatherChunkParams(
      buffer.getRows(), buffer.getRowBytes() / 16, numWarps);
  if (!params)
    return {};
  return BlockedLayoutAttr::get(buffer.getContext(), params->sizePerThread,
                                params->threadsPerWarp, params->warpsPerCTA,
                                params->order);
}

namespace {
/// The single-slot buffer that `load` is staged through, or null when the load
/// does not qualify: an MMA operand that stagingBufferFor accepts.
SharedType stagingBufferType(LoadOp load) {
  if (!isa_and_nonnull<DotOperandLayoutAttr>(load.getType().getEncoding()))
    return {};
  return flash::stagingBufferFor(load);
}

/// Whether every operand of `load` is available before `groupStart`, so that
/// its copy can join a group that starts there.
bool operandsAvailableAt(LoadOp load, Operation *groupStart) {
  return llvm::all_of(load->getOperands(), [&](Value value) {
    Operation *def = value.getDefiningOp();
    return !def || def->getBlock() != groupStart->getBlock() ||
           def->isBeforeInBlock(groupStart);
  });
}

/// Staged loads in runs that share one commit, wait and barrier: loads of one
/// block with only memory-effect-free ops between them.
SmallVector<SmallVector<LoadOp>> collectGroups(func::FuncOp func) {
  SmallVector<SmallVector<LoadOp>> groups;
  func.walk<WalkOrder::PreOrder>([&](Block *block) {
    SmallVector<LoadOp> group;
    auto flush = [&] {
      if (!group.empty())
        groups.push_back(std::move(group));
      group.clear();
    };
    for (Operation &op : *block) {
      auto load = dyn_cast<LoadOp>(op);
      if (load && stagingBufferType(load)) {
        if (!group.empty() && !operandsAvailableAt(load, group.front()))
          flush();
        group.push_back(load);
      } else if (!isMemoryEffectFree(&op)) {
        flush();
      }
    }
    flush();
  });
  return groups;
}

/// The index tiles of `load`'s copy, in the slice of its chunk layout (where
/// tile-assign-layouts computes them already, or converted).
SmallVector<Value> copyRows(OpBuilder &builder, LoadOp load) {
  SmallVector<Value> rows;
  if (!load.isGathered())
    return rows;
  auto wanted = SliceLayoutAttr::get(
      load.getContext(), 1,
      flash::gatherChunkLayout(stagingBufferType(load), kernelWarps(load)));
  for (Value index : load.getIndices()) {
    auto type = cast<RankedTensorType>(index.getType());
    if (type.getEncoding() != wanted)
      index = ConvertLayoutOp::create(
          builder, load.getLoc(),
          RankedTensorType::get(type.getShape(), type.getElementType(),
                                wanted),
          index);
    rows.push_back(index);
  }
  return rows;
}

struct TileStageSharedPass
    : flash::impl::TileStageSharedBase<TileStageSharedPass> {
  using TileStageSharedBase::TileStageSharedBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<SmallVector<LoadOp>> groups = collectGroups(func);
    if (groups.empty())
      return;

    // Buffers live for the whole kernel as far as this pass knows; the
    // allocation pass shrinks that to their uses.
    Block &entry = func.getBody().front();
    auto allocBuilder = OpBuilder::atBlockBegin(&entry);
    Location funcLoc = func.getLoc();
    Value slot0 = arith::ConstantIntOp::create(allocBuilder, funcLoc, 0, 32);

    for (SmallVector<LoadOp> &group : groups) {
      SmallVector<Value> buffers;
      for (LoadOp load : group)
        buffers.push_back(LocalAllocOp::create(allocBuilder, load.getLoc(),
                                               stagingBufferType(load),
                                               /*offset=*/nullptr));

      OpBuilder builder(group.front());
      Location loc = group.front().getLoc();
      // In a loop the copy overwrites what other warps read in the previous
      // iteration.
      if (flash::isInsideLoop(group.front()))
        BarrierOp::create(builder, loc);
      for (auto [load, buffer] : llvm::zip(group, buffers))
        AsyncCopyOp::create(builder, load.getLoc(), load.getSource(),
                            load.getOffsets(), load.getWindowAttr(),
                            load.getGatherAttr(), copyRows(builder, load),
                            buffer, slot0, /*pred=*/nullptr);
      AsyncCommitOp::create(builder, loc);
      AsyncWaitOp::create(builder, loc, 0);
      // The wait covers this thread's copies only; the tile is read by all.
      BarrierOp::create(builder, loc);

      for (auto [load, buffer] : llvm::zip(group, buffers)) {
        builder.setInsertionPoint(load);
        Value tile = LocalLoadOp::create(builder, load.getLoc(), load.getType(),
                                         buffer, slot0);
        load.replaceAllUsesWith(tile);
        load.erase();
      }
    }
  }
};
} // namespace

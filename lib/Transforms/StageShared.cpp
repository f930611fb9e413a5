//===- StageShared.cpp - stage MMA operand loads through shared memory ----===//
//
// An MMA operand loaded from global memory straight into its fragment layout
// costs many narrow, poorly coalesced loads. Staged through a swizzled
// shared-memory buffer it becomes 16-byte cp.async copies of whole rows and
// ldmatrix reads. The copies are completed right away here (wait 0 and a
// barrier); tile-pipeline-copies overlaps them with the loop that uses them.
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

namespace {
/// The single-slot buffer that `load` is staged through, or null when the load
/// does not qualify: an f16/bf16 MMA operand without padding (cp.async
/// zero-fills), a 2-D window whose last dim covers the tensor's whole static
/// last dim from offset 0, and rows of whole 16-byte chunks.
SharedType stagingBufferType(LoadOp load) {
  RankedTensorType tile = load.getType();
  Type element = tile.getElementType();
  if (!isa_and_nonnull<DotOperandLayoutAttr>(tile.getEncoding()) ||
      !(element.isF16() || element.isBF16()))
    return {};
  auto pad = dyn_cast<FloatAttr>(load.getPad());
  if (!pad || !pad.getValue().isPosZero())
    return {};
  GlobalType global = load.getSource().getType();
  unsigned last = global.getRank() - 1;
  ArrayRef<int64_t> window = load.getWindow();
  if (load.isGathered() || window.size() != 2 || window[1] != last || !global.isStaticDim(last) ||
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
  return SharedType::get(load.getContext(),
                         {1, tile.getDimSize(0), tile.getDimSize(1)}, element,
                         perPhase, maxPhase);
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
                            /*gather=*/nullptr, /*indices=*/ValueRange(),
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

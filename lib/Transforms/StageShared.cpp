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
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace flash {
#define GEN_PASS_DEF_TILESTAGESHARED
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

/// Whether `load` is an operand of a warpgroup MMA: a dot_op layout of a
/// warpgroup-shaped #tile.mma on sm_90a.
static bool feedsWarpgroupMma(Operation *load) {
  auto type = cast<RankedTensorType>(load->getResult(0).getType());
  auto operand = dyn_cast_or_null<DotOperandLayoutAttr>(type.getEncoding());
  auto mma =
      operand ? dyn_cast<MmaLayoutAttr>(operand.getParent()) : MmaLayoutAttr();
  return mma && isWarpgroupShaped(mma) && targetsWgmma(load);
}

static int64_t kernelWarps(Operation *op) {
  auto kernel = op->getParentOfType<func::FuncOp>();
  auto warps =
      kernel ? kernel->getAttrOfType<IntegerAttr>(kNumWarpsAttrName) : nullptr;
  return warps ? warps.getInt() : 1;
}

SharedType flash::stagingBufferFor(LoadOp load) {
  RankedTensorType tile = load.getType();
  Type element = tile.getElementType();
  // f8e4m3 tiles are staged only as MMA operands (wgmma's, which reads them
  // through descriptors).
  bool fp8Operand = isa<Float8E4M3FNType>(element) &&
                    llvm::any_of(load->getUsers(),
                                 [](Operation *u) { return isa<MmaOp>(u); });
  if (!(element.isF16() || element.isBF16() || fp8Operand) ||
      tile.getRank() != 2)
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
                                element, perPhase, maxPhase, /*blockCols=*/0);
  if (load.isGathered() && !gatherChunkLayout(buffer, kernelWarps(load)))
    return {};
  if (feedsWarpgroupMma(load))
    if (SharedType operand = wgmmaOperandBuffer(buffer))
      return operand;
  return buffer;
}

SharedType flash::wgmmaOperandBuffer(SharedType buffer) {
  int64_t rowBytes = buffer.getRowBytes();
  // f8e4m3 rows of 32 or 64 bytes (HEAD_DIM 32, 64) stage in the 32B / 64B
  // canonical layouts: a phase per 128 bytes of rows, a chunk per phase.
  if (isa<Float8E4M3FNType>(buffer.getElementType()) &&
      (rowBytes == 32 || rowBytes == 64))
    return buffer.getMaxPhase() == rowBytes / 16 &&
                   buffer.getPerPhase() * rowBytes == 128
               ? buffer
               : SharedType();
  // Longer f8e4m3 rows take 128-byte column blocks only (the fp8 kernels'
  // head dims are 128 and 256).
  if (isa<Float8E4M3FNType>(buffer.getElementType()) && rowBytes % 128 != 0)
    return {};
  // Rows of one swizzle span are swizzled over it as they are; longer rows
  // become column blocks of that span (layout::wgmmaRowSwizzle).
  std::optional<layout::SmemSwizzle> swizzle =
      layout::wgmmaRowSwizzle(rowBytes);
  if (!swizzle)
    return {};
  layout::SwizzleParams params = layout::canonicalSwizzleParams(
      *swizzle, buffer.getElementBytes(), buffer.getRows(), rowBytes);
  return SharedType::get(
      buffer.getContext(), buffer.getShape(), buffer.getElementType(),
      params.perPhase, params.maxPhase,
      /*blockCols=*/params.blockBytes / buffer.getElementBytes());
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

bool flash::mayWrite(Operation *op, Value global) {
  WalkResult written = op->walk([&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op))
      return store.getDest() == global ? WalkResult::interrupt()
                                       : WalkResult::advance();
    // A backward pass adds into dQ while it reads Q, dO, K and V.
    if (auto atomic = dyn_cast<AtomicAddOp>(op))
      return atomic.getDest() == global ? WalkResult::interrupt()
                                        : WalkResult::advance();
    // A device_assert stops the kernel and writes no tensor (the paged
    // kernels check their block table's size with one).
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || isa<DeviceAssertOp>(op))
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances)
      if (isa<MemoryEffects::Write>(effect.getEffect()) &&
          !isa<SharedMemoryResource>(effect.getResource()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return written.wasInterrupted();
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

/// Whether `value` is defined outside `loop`.
bool definedOutside(Value value, scf::ForOp loop) {
  return !loop.getRegion().isAncestor(value.getParentRegion());
}

/// The outermost loop around `load` that neither moves its window (every
/// operand is defined outside it) nor writes its tensor; null if none.
scf::ForOp invariantLoop(LoadOp load) {
  if (load.isGathered())
    return {};
  scf::ForOp outermost;
  for (auto loop = load->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    if (!llvm::all_of(load->getOperands(),
                      [&](Value v) { return definedOutside(v, loop); }) ||
        flash::mayWrite(loop, load.getSource()))
      break;
    outermost = loop;
  }
  return outermost;
}

/// Whether `a` and `b` load the same window into the same buffer type.
bool sameWindow(LoadOp a, LoadOp b) {
  return a.getSource() == b.getSource() && a.getOffsets() == b.getOffsets() &&
         a.getWindowAttr() == b.getWindowAttr() && a.getPad() == b.getPad() &&
         stagingBufferType(a) == stagingBufferType(b);
}

/// Whether an op after `first` and before `last` (in one block) may write
/// `global`: a copy made at `first` would then be stale at `last`.
bool writtenBetween(Operation *first, Operation *last, Value global) {
  for (Operation *op = first->getNextNode(); op != last; op = op->getNextNode())
    if (flash::mayWrite(op, global))
      return true;
  return false;
}

/// A staged load inside a loop whose window the loop does not move (the K
/// block that every query block of a backward pass reads) is copied once,
/// before the outermost such loop, by a clone there (one per window and
/// block, unless the tensor is written in between); the load itself becomes
/// a read of that buffer where it is, so its registers live only where the
/// program uses the tile. Pairs (load, clone).
SmallVector<std::pair<LoadOp, LoadOp>> hoistInvariantCopies(func::FuncOp func) {
  SmallVector<std::pair<LoadOp, LoadOp>> pairs;
  SmallVector<LoadOp> clones;
  func.walk([&](LoadOp load) {
    scf::ForOp loop = stagingBufferType(load) ? invariantLoop(load) : nullptr;
    if (!loop)
      return;
    auto found = llvm::find_if(clones, [&](LoadOp clone) {
      return clone->getBlock() == loop->getBlock() &&
             clone->isBeforeInBlock(loop) && sameWindow(clone, load) &&
             !writtenBetween(clone, loop, load.getSource());
    });
    LoadOp clone = found != clones.end() ? *found : LoadOp();
    if (!clone) {
      OpBuilder builder(loop);
      clone = cast<LoadOp>(builder.clone(*load.getOperation()));
      clones.push_back(clone);
    }
    pairs.push_back({load, clone});
  });
  return pairs;
}

/// Staged loads in runs that share one commit, wait and barrier: loads of one
/// block with only memory-effect-free ops between them (`reads`, which read
/// a buffer copied elsewhere, aside).
SmallVector<SmallVector<LoadOp>>
collectGroups(func::FuncOp func, const DenseSet<Operation *> &reads) {
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
      if (load && reads.contains(load))
        continue;
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

/// Reads `buffer` again, in its own layout, for each use of `load` that
/// converts it to another layout (an operand of two MMAs in different roles:
/// Q, dO and K in FlashAttention-2's backward). A read right before an MMA
/// user is fused into it (fragment by fragment) instead of a converted copy
/// held in registers; the buffer stays live for it (tile-allocate-shared).
void readConvertedUses(LoadOp load, Value buffer, Value slot) {
  for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
    auto convert = dyn_cast<ConvertLayoutOp>(user);
    if (!convert ||
        !isa<DotOperandLayoutAttr>(convert.getType().getEncoding()))
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(convert->getUses())) {
      OpBuilder builder(use.getOwner());
      use.set(LocalLoadOp::create(builder, convert.getLoc(), convert.getType(),
                                  buffer, slot));
    }
    convert.erase();
  }
}

/// 32-bit registers a thread holds of a tile (f16 and bf16 pairs share one).
int64_t registerWords(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  auto layout =
      tile ? dyn_cast_or_null<LayoutAttrInterface>(tile.getEncoding()) : nullptr;
  if (!layout)
    return 0;
  return llvm::divideCeil(layout.getNumRegisters(tile.getShape()) *
                              tile.getElementTypeBitWidth(),
                          32);
}

/// The registers of a thread that `loop`'s own tiles take at its busiest: the
/// loop-carried tiles (attention's accumulator and row statistics) and the
/// largest tile an MMA in it starts afresh (the scores).
int64_t loopTileRegisters(scf::ForOp loop) {
  int64_t carried = 0, fresh = 0;
  for (Value arg : loop.getRegionIterArgs())
    carried += registerWords(arg.getType());
  loop.walk([&](MmaOp mma) {
    if (definedOutside(mma.getAcc(), loop))
      fresh = std::max(fresh, registerWords(mma.getType()));
  });
  return carried + fresh;
}

/// Of the 255 registers a thread may use, what the tiles may take; the rest
/// holds addresses, indices, loop bounds and the operand fragments in flight.
/// Measured with ptxas 13 on fa2 (tiles with Q held): 168 words (HEAD_DIM 64,
/// 128 x 64) and 204 (HEAD_DIM 256, 64 x 16) fit in 255 registers, 232
/// (HEAD_DIM 64, 128 x 128) and 264 (HEAD_DIM 128, 128 x 64) spill.
constexpr int64_t kTileRegisterBudget = 216;

/// A tile read from shared memory before a loop and used inside it as an MMA
/// operand is re-read at that MMA (which then fetches it one k-step at a
/// time, convert-tile-to-simt) when holding it in registers across the loop
/// would pass the budget: Q of FlashAttention-2's 128-row tiles at HEAD_DIM
/// 128 (64 words beside 200) or with 128 keys at HEAD_DIM 64 (32 beside
/// 200), as FlashAttention-2 itself re-reads Q every iteration. Each re-read
/// costs shared-memory bandwidth (an ldmatrix.x4 per 16 x 16 of Q per
/// iteration), so a tile that fits stays in registers.
void rereadInLoops(LocalLoadOp read) {
  int64_t held = registerWords(read.getType());
  bool moved = false, overBudget = false;
  for (OpOperand &use : llvm::make_early_inc_range(read->getUses())) {
    auto mma = dyn_cast<MmaOp>(use.getOwner());
    auto loop = mma ? mma->getParentOfType<scf::ForOp>() : nullptr;
    if (!loop || use.getOperandNumber() > 1 ||
        !definedOutside(read.getResult(), loop))
      continue;
    // A warpgroup MMA reads B from shared memory through a descriptor: a B
    // read outside its loop (FlashAttention-1's K and V, held across the
    // query blocks) moves to the MMA, where it costs no registers. Not when
    // the buffer is no wgmma layout (the MMA is then an mma.sync).
    SharedType buffer = read.getSource().getType();
    bool wgmmaB = use.getOperandNumber() == 1 && feedsWarpgroupMma(read) &&
                  flash::wgmmaOperandBuffer(buffer) == buffer;
    // An f8e4m3 A too: wgmma reads it only through a descriptor (its
    // register fragment is not one the loop could hold).
    wgmmaB = wgmmaB || (use.getOperandNumber() == 0 &&
                        isa<Float8E4M3FNType>(buffer.getElementType()) &&
                        feedsWarpgroupMma(read) &&
                        flash::wgmmaOperandBuffer(buffer) == buffer);
    if (!wgmmaB && held + loopTileRegisters(loop) <= kTileRegisterBudget)
      continue;
    OpBuilder builder(mma);
    use.set(LocalLoadOp::create(builder, read.getLoc(), read.getType(),
                                read.getSource(), read.getSlot()));
    moved = true;
    overBudget = overBudget || !wgmmaB;
  }
  // The PTX emitter keeps this kernel's loop addressing plain (lib/Target/PTX.cpp).
  if (overBudget)
    read->getParentOfType<func::FuncOp>()->setAttr(
        flash::tile::kRegisterBoundAttrName, UnitAttr::get(read.getContext()));
  if (moved && read->use_empty())
    read.erase();
}

struct TileStageSharedPass
    : flash::impl::TileStageSharedBase<TileStageSharedPass> {
  using TileStageSharedBase::TileStageSharedBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<LoadOp, LoadOp>> hoisted = hoistInvariantCopies(func);
    DenseSet<Operation *> reads;
    for (auto [load, clone] : hoisted) {
      reads.insert(load);
      clones.insert(clone);
    }
    SmallVector<SmallVector<LoadOp>> groups = collectGroups(func, reads);
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
        bufferOf[load] = buffer;
        if (clones.contains(load))
          load.erase(); // only copies: its loads read the buffer
        else
          readBuffer(load, buffer, slot0);
      }
    }
    for (auto [load, clone] : hoisted)
      readBuffer(load, bufferOf.lookup(clone), slot0);
  }

  /// Replaces `load` by reads of `buffer`.
  static void readBuffer(LoadOp load, Value buffer, Value slot) {
    readConvertedUses(load, buffer, slot);
    OpBuilder builder(load);
    auto read =
        LocalLoadOp::create(builder, load.getLoc(), load.getType(), buffer, slot);
    load.replaceAllUsesWith(read.getResult());
    load.erase();
    rereadInLoops(read);
  }

  DenseMap<Operation *, Value> bufferOf;
  DenseSet<Operation *> clones;
};
} // namespace

//===- TmaCopies.cpp - pipelined copies through the TMA unit on sm_90a ----===//
//
// On sm_90a a pipelined loop's staged copies (tile-pipeline-copies) can go
// through the TMA unit instead of cp.async: one elected thread issues a
// tensor copy per box, and an mbarrier per slot counts the bytes landed. A
// copy qualifies when it is one or more full boxes of a row-major tensor:
// a 2-D window over the tensor's last dim and one other (the last two, or
// rows of one head of a packed batch [total, H, D], whose rows are H * D
// elements apart: the map keeps the tensor's rank, its box 1 in the dims
// the window skips), the whole static last dim
// in rows of whole 16-byte chunks (the map's row stride), at most 256 rows
// and elements per box row, into a slot whose swizzle is one of the TMA
// unit's (128B, 64B, 32B or none, over each column block's rows) on the
// swizzle's period. Gathered rows (paged KV) and loops inside other loops
// (whose barrier phases would carry over between runs) keep cp.async; a
// loop goes over as a whole or not at all. With `cp-async-producer` a
// kernel that tile-warp-specialize gives a cp.async producer warpgroup (one
// consumer warpgroup, a ring gathered through a table) keeps cp.async in
// every ring, its full blocks too, for that producer to issue.
//
// The pass marks such copies `tile.tma_barrier = I` (the index of the
// kernel's mbarrier for slot 0 of its loop; slot s uses I + s) and
// `tile.tma_swizzle`, marks the wait at the top of the loop body the same
// way (it becomes a parity wait on the barrier of the slot the iteration
// reads), drops the commits of the copies (TMA copies belong to no
// cp.async group) and records each barrier's arrival count (the copies per
// slot, each arriving once with its bytes) in the kernel's
// `tile.tma_barriers`. The wait after the loop stays: it retires no TMA copy
// (each one is waited for inside the loop) and ends the buffers' lifetimes
// for tile-allocate-shared. convert-tile-to-simt lowers the marks.
//
// With `shared-rings` (persistent kernels) a loop whose buffers match an
// earlier ring's takes over that ring's buffers and barriers: the key loops
// split from one source loop become one ring that a persistent kernel's
// producer can fill across tiles in bytes of its own (tile-allocate-shared's
// persistent-rings) without a second set, its blocks counted through both
// loops (tile-persistent).
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"
#include "StagedCopies.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "tile-tma-copies"

namespace flash {
#define GEN_PASS_DEF_TILETMACOPIES
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// The TMA swizzle whose smem layout is `type`'s over one box (a column
/// block of a slot), if any: "128B", "64B", "32B" or "none".
std::optional<StringRef> tmaSwizzleOf(SharedType type) {
  int64_t boxRowBytes = type.getStoredRowBytes();
  int64_t rows = type.getRows();
  struct Mode {
    StringRef name;
    int64_t bits, span, period;
  };
  for (Mode m : {Mode{"128B", 3, 128, 1024}, Mode{"64B", 2, 64, 512},
                 Mode{"32B", 1, 32, 256}, Mode{"none", 0, 256, 128}}) {
    if (boxRowBytes > m.span || (rows * boxRowBytes) % m.period != 0)
      continue;
    bool same = true;
    for (int64_t r = 0; r < rows && same; ++r)
      for (int64_t c = 0; c < boxRowBytes / 16 && same; ++c) {
        int64_t a = r * boxRowBytes + c * 16;
        int64_t tma = a ^ ((a & (((int64_t(1) << m.bits) - 1) << 7)) >> 3);
        int64_t phase = r / type.getPerPhase() % type.getMaxPhase();
        same = tma == r * boxRowBytes + (c ^ phase) * 16;
      }
    if (same)
      return m.name;
  }
  return std::nullopt;
}

/// The swizzle of `copy`'s boxes if the copy can go through the TMA unit.
std::optional<StringRef> tmaCopyOf(AsyncCopyOp copy) {
  if (copy.isGathered() || !copy.getPred())
    return std::nullopt;
  GlobalType global = copy.getSource().getType();
  SharedType type = copy.getDest().getType();
  ArrayRef<int64_t> window = copy.getWindow();
  unsigned rank = global.getRank();
  Type elem = global.getElementType();
  if (window.size() != 2 || window[1] != int64_t(rank) - 1 ||
      window[0] >= window[1] || !global.isStaticDim(rank - 1) ||
      global.getShape()[rank - 1] != type.getCols() ||
      !(elem.isF16() || elem.isBF16() || isa<Float8E4M3FNType>(elem)) ||
      type.getRowBytes() % 16 != 0 ||
      type.getRows() > 256 ||
      type.getStoredRowBytes() / type.getElementBytes() > 256)
    return std::nullopt;
  return tmaSwizzleOf(type);
}

/// The ring's buffers, one per copy of a slot, in the order of its copies.
SmallVector<LocalAllocOp> ringBuffers(const flash::PipelinedRing &ring) {
  SmallVector<LocalAllocOp> buffers;
  for (AsyncCopyOp copy : ring.copies) {
    auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
    if (!alloc)
      return {};
    if (!llvm::is_contained(buffers, alloc))
      buffers.push_back(alloc);
  }
  return buffers;
}

/// Whether tile-warp-specialize gives `func` a cp.async producer warpgroup
/// if its rings all keep cp.async: one consumer warpgroup and a ring that
/// gathers through a table.
bool takesCpAsyncProducer(func::FuncOp func) {
  auto warps = func->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
  return warps && warps.getInt() == 4 &&
         flash::tableGatheredRings(func, [](AsyncCopyOp) { return true; });
}

struct TileTmaCopiesPass
    : flash::impl::TileTmaCopiesBase<TileTmaCopiesPass> {
  using TileTmaCopiesBase::TileTmaCopiesBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!targetsWgmma(func))
      return;
    // A paged cache's full blocks (windows of one page) beside its gathered
    // blocks: a TMA ring on one warpgroup gets no producer, so the producer
    // warpgroup gathers them all (FlashAttention-3's PagedKVNonTMA; decode is
    // bound by memory, whole rows by cp.async cost no more bytes).
    if (cpAsyncProducer && takesCpAsyncProducer(func)) {
      LLVM_DEBUG(llvm::dbgs() << "keeps cp.async for the producer warpgroup\n");
      return;
    }
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) {
      if (!flash::isInsideLoop(loop))
        loops.push_back(loop);
    });
    Builder b(&getContext());
    SmallVector<int64_t> counts;
    // Rings so far: their buffers and first barrier.
    SmallVector<std::pair<SmallVector<LocalAllocOp>, IntegerAttr>> rings;
    for (scf::ForOp loop : loops) {
      std::optional<flash::PipelinedRing> ring = flash::matchPipelinedRing(
          loop, [](AsyncCopyOp copy) { return tmaCopyOf(copy).has_value(); });
      if (!ring) {
        LLVM_DEBUG(llvm::dbgs() << "keeps cp.async: " << loop.getLoc() << "\n");
        continue;
      }
      SmallVector<LocalAllocOp> buffers = ringBuffers(*ring);
      auto same = [&](std::pair<SmallVector<LocalAllocOp>, IntegerAttr> &ring) {
        if (buffers.size() != ring.first.size())
          return false;
        for (auto [mine, theirs] : llvm::zip(buffers, ring.first))
          if (mine == theirs || mine.getType() != theirs.getType())
            return false;
        return true;
      };
      auto *earlier = sharedRings && !buffers.empty()
                          ? llvm::find_if(rings, same)
                          : rings.end();
      IntegerAttr first;
      if (earlier != rings.end()) {
        first = earlier->second;
        for (auto [mine, theirs] : llvm::zip(buffers, earlier->first)) {
          mine.getResult().replaceAllUsesWith(theirs.getResult());
          mine.erase();
        }
      } else {
        first = b.getI64IntegerAttr(counts.size());
        counts.append(ring->stages, ring->perSlot);
        if (!buffers.empty())
          rings.push_back({buffers, first});
      }
      for (AsyncCopyOp copy : ring->copies) {
        copy->setAttr(kTmaBarrierAttrName, first);
        copy->setAttr(kTmaSwizzleAttrName, b.getStringAttr(*tmaCopyOf(copy)));
      }
      ring->wait->setAttr(kTmaBarrierAttrName, first);
      ring->wait->setAttr(kTmaStagesAttrName,
                          b.getI64IntegerAttr(ring->stages));
      for (AsyncCommitOp commit : ring->commits)
        commit.erase();
    }
    if (!counts.empty())
      func->setAttr(kTmaBarriersAttrName, b.getDenseI64ArrayAttr(counts));
  }
};
} // namespace

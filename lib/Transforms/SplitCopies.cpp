//===- SplitCopies.cpp - issue each staged copy once its buffer is free ---===//
//
// FlashAttention-2's schedule for a loop whose staged tiles are read at
// different points of the body (attention's K by S = Q K^T, V by O += P V):
// each tile keeps one buffer, and its copy starts as soon as every warp has
// read that buffer, so it overlaps the compute up to its own first read:
//
//   top: wait; barrier; copy V(j)       -- lands while S = Q K^T(j) computes
//   mid: wait; barrier; copy K(j + 1)   -- lands while softmax, P V(j) compute
//
// Half the shared memory of two pipeline stages (tile-pipeline-copies), for
// copies that each overlap a part of an iteration instead of all of it.
// With two stages (`stages = 2`) every copy starts at the last sync point,
// for the next iteration, and only the tiles read after that point take two
// buffers (V; K keeps one): fa2's 128 x 64 at HEAD_DIM 128 in 80 KiB where
// two stages of both take 96, with its copies at one point as there.
//
// In general: each read of a staged buffer moves to its first user; a sync
// point (`async_wait 0`, one barrier) precedes the first read of each tile; a
// tile's copy is issued at the first sync point after its last read, for the
// next iteration if that point lies later in the body (a prologue issues
// iteration 0's), for this one if it wraps around to an earlier point. With
// a single sync point nothing overlaps and the loop is left as it is. In a
// register-bound kernel the masked blocks of a split masked loop whose mask
// holds a limit per row (causal attention's diagonal) keep one stage instead.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"
#include "StagedCopies.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tile-split-copies"

namespace flash {
#define GEN_PASS_DEF_TILESPLITCOPIES
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// Where one staged tile is read in the body and where its copy goes.
struct TileSchedule {
  AsyncCopyOp copy;
  Operation *firstRead = nullptr, *lastRead = nullptr; // ops of the body
  size_t waitPoint = 0, issuePoint = 0;                // into syncPoints
  bool nextIteration = false; // issued for iteration j + 1 (else for j)
  bool twoSlots = false;      // read at slot j % 2, refilled at (j + 1) % 2
};

/// The first of the shared-memory reads right before `op` (Q's, re-read at
/// the same MMA as K's), or `op`: reads stay next to the MMA they feed.
Operation *firstOfReadsBefore(Operation *op) {
  while (isa_and_nonnull<LocalLoadOp>(op->getPrevNode()))
    op = op->getPrevNode();
  return op;
}

/// Moves each read of a staged buffer down to its first user, so that a sync
/// point between two MMAs leaves each read next to (fused into) its MMA.
void sinkReads(const flash::StagedLoop &staged, Block *body) {
  for (LocalLoadOp read : staged.reads) {
    Operation *first = nullptr;
    for (Operation *user : read->getUsers())
      if (Operation *anchor = body->findAncestorOpInBlock(*user);
          anchor && (!first || anchor->isBeforeInBlock(first)))
        first = anchor;
    if (!first || read->getBlock() != body || !read->isBeforeInBlock(first))
      continue;
    first = firstOfReadsBefore(first);
    if (first != read.getOperation())
      read->moveBefore(first);
  }
}

/// Places the sync points and each tile's copy; fails when a copy would be
/// issued at the sync point that waits for it (nothing to overlap).
FailureOr<SmallVector<TileSchedule>>
planSchedule(const flash::StagedLoop &staged, Block *body, int64_t stages,
             SmallVectorImpl<Operation *> &syncPoints) {
  SmallVector<TileSchedule> tiles;
  for (AsyncCopyOp copy : staged.copies) {
    TileSchedule tile{copy};
    for (LocalLoadOp read : staged.reads) {
      if (read.getSource() != copy.getDest())
        continue;
      Operation *anchor = body->findAncestorOpInBlock(*read);
      if (!tile.firstRead || anchor->isBeforeInBlock(tile.firstRead))
        tile.firstRead = anchor;
      if (!tile.lastRead || tile.lastRead->isBeforeInBlock(anchor))
        tile.lastRead = anchor;
    }
    if (!tile.firstRead)
      return failure();
    tile.firstRead = firstOfReadsBefore(tile.firstRead);
    syncPoints.push_back(tile.firstRead);
    tiles.push_back(tile);
  }
  llvm::sort(syncPoints,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  syncPoints.erase(llvm::unique(syncPoints), syncPoints.end());
  for (TileSchedule &tile : tiles) {
    tile.waitPoint = llvm::find(syncPoints, tile.firstRead) - syncPoints.begin();
    auto after = llvm::find_if(syncPoints, [&](Operation *point) {
      return tile.lastRead->isBeforeInBlock(point);
    });
    tile.nextIteration = after != syncPoints.end();
    tile.issuePoint = tile.nextIteration ? after - syncPoints.begin() : 0;
    if (tile.issuePoint == tile.waitPoint) {
      LLVM_DEBUG(llvm::dbgs() << "one sync point: nothing to overlap\n");
      return failure();
    }
    // Two stages: every copy starts at the last point, for the next
    // iteration; a tile still read after that point takes two slots.
    if (stages == 2) {
      tile.issuePoint = syncPoints.size() - 1;
      tile.nextIteration = true;
      tile.twoSlots = !tile.lastRead->isBeforeInBlock(syncPoints.back());
    }
  }
  return tiles;
}

/// Gives the two-slot tiles' buffers a second slot and makes their reads
/// take slot j % 2; returns slot (j + 1) % 2 for their copies (null if none).
/// Both are computed at the first sync point that needs them, not live
/// across the MMAs before it (fa2's 128-row tiles have no register to spare).
Value addSecondSlots(scf::ForOp loop, const flash::StagedLoop &staged,
                     ArrayRef<TileSchedule> tiles,
                     ArrayRef<Operation *> syncPoints) {
  size_t first = syncPoints.size();
  for (const TileSchedule &tile : tiles)
    if (tile.twoSlots)
      first = std::min(first, std::min(tile.waitPoint, tile.issuePoint));
  if (first == syncPoints.size())
    return Value();
  OpBuilder builder(syncPoints[first]);
  Location loc = loop.getLoc();
  Value two = arith::ConstantIntOp::create(builder, loc, 2, 32);
  Value one = arith::ConstantIntOp::create(builder, loc, 1, 32);
  Value since =
      arith::SubIOp::create(builder, loc, loop.getInductionVar(),
                            loop.getLowerBound());
  Value k = arith::DivUIOp::create(builder, loc, since, loop.getStep());
  Value readSlot = arith::RemUIOp::create(builder, loc, k, two);
  Value writeSlot = arith::RemUIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, k, one), two);
  for (TileSchedule tile : tiles) {
    if (!tile.twoSlots)
      continue;
    auto alloc = tile.copy.getDest().getDefiningOp<LocalAllocOp>();
    SharedType single = alloc.getType();
    alloc.getResult().setType(SharedType::get(
        single.getContext(), {2, single.getRows(), single.getCols()},
        single.getElementType(), single.getPerPhase(), single.getMaxPhase(),
        single.getBlockCols()));
    for (LocalLoadOp read : staged.reads)
      if (read.getSource() == alloc.getResult())
        read.getSlotMutable().assign(readSlot);
  }
  return writeSlot;
}

/// The copies committed as one group: at a sync point, for this iteration or
/// the next, into slot 0 or (two-slot tiles) slot (j + 1) % 2.
struct CopyGroup {
  size_t point;
  bool nextIteration, twoSlots;
  SmallVector<AsyncCopyOp> copies;
  SmallVector<size_t> waitPoints;
};

/// The groups of one iteration in commit order: at each point, this
/// iteration's copies, then the next one's into one slot, then into two.
/// This iteration's copies all start at point 0 (they wrapped around), so
/// the last groups of an iteration are the next one's, as in the prologue.
SmallVector<CopyGroup> groupCopies(ArrayRef<TileSchedule> tiles,
                                   size_t numPoints) {
  SmallVector<CopyGroup> groups;
  for (size_t point = 0; point < numPoints; ++point)
    for (auto [next, two] : {std::pair{false, false}, std::pair{true, false},
                             std::pair{true, true}}) {
      CopyGroup group{point, next, two};
      for (const TileSchedule &tile : tiles)
        if (tile.issuePoint == point && tile.nextIteration == next &&
            tile.twoSlots == two) {
          group.copies.push_back(tile.copy);
          group.waitPoints.push_back(tile.waitPoint);
        }
      if (!group.copies.empty())
        groups.push_back(std::move(group));
    }
  return groups;
}

/// The `async_wait` count at `point`: the groups committed since the last
/// one that `point` reads from (earlier in this iteration, else at the end of
/// the previous one) may stay in flight.
uint32_t groupsInFlightAt(size_t point, ArrayRef<CopyGroup> groups) {
  size_t before = llvm::count_if(
      groups, [&](const CopyGroup &g) { return g.point < point; });
  uint32_t inFlight = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const CopyGroup &group = groups[(before + groups.size() - 1 - i) %
                                    groups.size()];
    if (llvm::is_contained(group.waitPoints, point))
      return inFlight;
    ++inFlight;
  }
  return 0;
}

void split(scf::ForOp loop, flash::StagedLoop &staged,
           ArrayRef<TileSchedule> tiles, ArrayRef<Operation *> syncPoints) {
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value slot0 = staged.copies.front().getSlot(); // defined outside the loop
  Value writeSlot = addSecondSlots(loop, staged, tiles, syncPoints);
  SmallVector<CopyGroup> groups = groupCopies(tiles, syncPoints.size());

  // Prologue: iteration 0's copies of the tiles issued one iteration ahead,
  // in the groups the iterations commit them in.
  OpBuilder builder(loop);
  if (llvm::any_of(groups, [](const CopyGroup &g) { return g.nextIteration; })) {
    if (flash::isInsideLoop(loop) && !flash::barrierPrecedes(loop))
      BarrierOp::create(builder, loc);
    Value any = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                      lb, ub);
    for (const CopyGroup &group : groups)
      if (group.nextIteration)
        flash::emitStagedCopies(builder, loop, staged, group.copies, lb, slot0,
                                any);
  }

  // Each sync point: the copies it reads have landed (RAW across threads
  // after the barrier), and every warp is done with the buffers whose last
  // read precedes it (WAR before the barrier), which are refilled here.
  Value iv = loop.getInductionVar();
  for (auto [point, op] : llvm::enumerate(syncPoints)) {
    builder.setInsertionPoint(op);
    AsyncWaitOp::create(builder, loc, groupsInFlightAt(point, groups));
    BarrierOp::create(builder, loc);
    Value nextIv, more;
    for (const CopyGroup &group : groups) {
      if (group.point != point)
        continue;
      if (!group.nextIteration) {
        flash::emitStagedCopies(builder, loop, staged, group.copies, iv, slot0,
                                Value());
        continue;
      }
      if (!nextIv) {
        nextIv = arith::AddIOp::create(builder, loc, iv, loop.getStep());
        more = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                     nextIv, ub);
      }
      flash::emitStagedCopies(builder, loop, staged, group.copies, nextIv,
                              group.twoSlots ? writeSlot : slot0, more);
    }
  }
  flash::eraseStagedCopies(staged);

  // The copies for the iteration after the last (zero-fills) may still land.
  builder.setInsertionPointAfter(loop);
  AsyncWaitOp::create(builder, loc, 0);
}

/// Whether `value` holds one integer per row of a tile: `[M, 1]` or its
/// broadcast to `[M, N]`, M > 1.
bool isPerRowLimit(Value value) {
  auto rowsOnly = [](Type type) {
    auto tile = dyn_cast<RankedTensorType>(type);
    return tile && tile.getElementType().isInteger() && tile.getRank() == 2 &&
           tile.getDimSize(0) > 1 && tile.getDimSize(1) == 1;
  };
  if (rowsOnly(value.getType()))
    return true;
  auto broadcast = value.getDefiningOp<BroadcastOp>();
  return broadcast && rowsOnly(broadcast.getInput().getType());
}

/// Whether a comparison in `loop`'s body reads a per-row limit from outside
/// the loop (causal attention's diagonal: one limit per row a thread holds,
/// in registers through the whole body).
bool comparesPerRowLimits(scf::ForOp loop) {
  SmallVector<Operation *> work;
  loop.getBody()->walk([&](arith::CmpIOp cmp) { work.push_back(cmp); });
  DenseSet<Operation *> seen(work.begin(), work.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value operand : op->getOperands()) {
      if (loop.isDefinedOutsideOfLoop(operand)) {
        if (isPerRowLimit(operand))
          return true;
        continue;
      }
      Operation *def = operand.getDefiningOp();
      if (def && seen.insert(def).second)
        work.push_back(def);
    }
  }
  return false;
}

/// In a register-bound kernel, the masked blocks of a split masked loop
/// whose masks compare per-row limits keep one stage (each copy at the top,
/// for its own iteration; tile-pipeline-copies leaves it so) in their
/// single-slot buffers: those limits and the split schedule's copies at its
/// second sync point overfill the registers (fa2's causal 128 x 64 at d128:
/// ptxas spills 20 bytes on sm_80, 152 at d64's 128 x 128; one stage: 0).
/// These loops run the few blocks on the diagonal; with two CTAs per SM the
/// other CTA computes while one waits for its copies.
bool keepsOneStage(scf::ForOp loop, func::FuncOp kernel) {
  return kernel->hasAttr(kRegisterBoundAttrName) &&
         loop->hasAttr(kMaskSplitAttrName) && comparesPerRowLimits(loop);
}

struct TileSplitCopiesPass
    : flash::impl::TileSplitCopiesBase<TileSplitCopiesPass> {
  using TileSplitCopiesBase::TileSplitCopiesBase;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (loop->hasAttr(kSplitCopiesAttrName) &&
          loop.getInductionVar().getType().isInteger(32))
        loops.push_back(loop);
    });
    DenseSet<Location> warned;
    for (scf::ForOp loop : loops) {
      if (keepsOneStage(loop, getOperation())) {
        if (remarks)
          loop.emitRemark()
              << "staged loop" << flash::rangeLabel(loop)
              << " keeps one stage (split_copies dropped): the "
                 "kernel is register-bound and the mask compares a limit "
                 "per row";
        loop->removeAttr(kSplitCopiesAttrName);
        loop->setAttr(kNumStagesAttrName,
                      OpBuilder(loop).getI64IntegerAttr(1));
        continue;
      }
      auto stages = loop->getAttrOfType<IntegerAttr>(kNumStagesAttrName);
      flash::StagingFailure why;
      std::optional<flash::StagedLoop> staged =
          flash::analyzeStagedLoop(loop, &why);
      if (!staged) {
        flash::reportUnstaged(loop, why, remarks, warned);
        continue;
      }
      Block *body = loop.getBody();
      sinkReads(*staged, body);
      SmallVector<Operation *> syncPoints;
      FailureOr<SmallVector<TileSchedule>> tiles =
          planSchedule(*staged, body, stages ? stages.getInt() : 1,
                       syncPoints);
      if (failed(tiles)) {
        LLVM_DEBUG(llvm::dbgs() << "not split: " << loop.getLoc() << "\n");
        flash::reportUnstaged(
            loop,
            {nullptr, Value(),
             "split_copies finds all its tiles read at one point, so no copy "
             "overlaps anything"},
            remarks, warned);
        continue;
      }
      if (remarks) {
        SmallVector<AsyncCopyOp> one, two;
        for (const TileSchedule &tile : *tiles)
          (tile.twoSlots ? two : one).push_back(tile.copy);
        InFlightDiagnostic remark = loop.emitRemark();
        remark << "staged loop" << flash::rangeLabel(loop)
               << " with split copies (stages = "
               << (stages ? stages.getInt() : 1)
               << "): each copy is issued once its buffer is read";
        if (!one.empty())
          remark << "; 1 buffer: " << flash::describeCopies(one);
        if (!two.empty())
          remark << "; 2 buffers: " << flash::describeCopies(two);
      }
      split(loop, *staged, *tiles, syncPoints);
    }
  }
};
} // namespace

//===- PipelineCopies.cpp - software-pipeline staged copies of loops ------===//
//
// tile-stage-shared leaves each loop iteration copying its tiles into shared
// memory and waiting for them before it computes. Here the copies of an
// scf.for run S - 1 iterations ahead into S slots per buffer, so that the
// tensor cores work on slot k % S while later tiles are in flight.
//
// The copies' offsets (and a gathered copy's index tiles) are recomputed for
// other iterations by cloning the ops that derive them from the induction
// variable: pure ops, and loads of tensors the loop does not write. Group accounting: the
// prologue commits S - 1 groups and every iteration one, unconditionally, so
// at the top of iteration k the groups of iterations 0 .. k + S - 2 are
// committed and `async_wait S-2` retires those up to k.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"
#include "StagedCopies.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tile-pipeline-copies"

namespace flash {
#define GEN_PASS_DEF_TILEPIPELINECOPIES
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
void pipeline(scf::ForOp loop, flash::StagedLoop &staged, int64_t stages) {
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Type type = lb.getType();
  OpBuilder builder(loop);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(builder, loc, type, value);
  };
  auto before = [&](Value a, Value b) -> Value {
    return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt, a, b);
  };

  for (AsyncCopyOp copy : staged.copies) {
    auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
    SharedType single = alloc.getType();
    alloc.getResult().setType(SharedType::get(
        single.getContext(), {stages, single.getRows(), single.getCols()},
        single.getElementType(), single.getPerPhase(), single.getMaxPhase(),
        single.getBlockCols()));
  }

  // Prologue: iterations 0 .. S-2 into slots 0 .. S-2.
  if (flash::isInsideLoop(loop) && !flash::barrierPrecedes(loop))
    BarrierOp::create(builder, loc);
  for (int64_t j = 0; j < stages - 1; ++j) {
    Value slot = constant(j);
    Value iv = lb;
    if (j > 0) {
      Value offset = arith::MulIOp::create(builder, loc, step, slot);
      iv = arith::AddIOp::create(builder, loc, lb, offset);
    }
    Value pred = before(iv, ub);
    flash::emitStagedCopies(builder, loop, staged, staged.copies, iv, slot,
                            pred);
  }
  Value numSlots = constant(stages);
  Value lastSlot = constant(stages - 1);
  Value ahead = arith::MulIOp::create(builder, loc, step, lastSlot);

  // Body: wait for this iteration's slot (RAW across threads after the
  // barrier), then refill the slot every thread finished reading in the
  // previous iteration (WAR before the barrier). Iteration numbers are
  // non-negative, hence the unsigned division.
  builder.setInsertionPointToStart(loop.getBody());
  Value iv = loop.getInductionVar();
  Value sinceStart = arith::SubIOp::create(builder, loc, iv, lb);
  Value k = arith::DivUIOp::create(builder, loc, sinceStart, step);
  Value readSlot = arith::RemUIOp::create(builder, loc, k, numSlots);
  Value writeIteration = arith::AddIOp::create(builder, loc, k, lastSlot);
  Value writeSlot =
      arith::RemUIOp::create(builder, loc, writeIteration, numSlots);
  Value next = arith::AddIOp::create(builder, loc, iv, ahead);
  Value more = before(next, ub);
  AsyncWaitOp::create(builder, loc, static_cast<uint32_t>(stages - 2));
  BarrierOp::create(builder, loc);
  flash::emitStagedCopies(builder, loop, staged, staged.copies, next,
                          writeSlot, more);

  for (LocalLoadOp read : staged.reads)
    read.getSlotMutable().assign(readSlot);
  flash::eraseStagedCopies(staged);

  // The last S-1 groups (zero-fills past the end) may still be writing.
  builder.setInsertionPointAfter(loop);
  AsyncWaitOp::create(builder, loc, 0);
}

struct TilePipelineCopiesPass
    : flash::impl::TilePipelineCopiesBase<TilePipelineCopiesPass> {
  using TilePipelineCopiesBase::TilePipelineCopiesBase;

  void runOnOperation() override {
    if (stages < 1) {
      getOperation().emitError() << "tile-pipeline-copies: stages must be at "
                                    "least 1, got "
                                 << stages.getValue();
      return signalPassFailure();
    }
    // Outer loops first: the pipelined body's barrier then precedes the
    // inner loops, whose prologues need no barrier of their own.
    SmallVector<scf::ForOp> loops;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    DenseSet<Location> warned;
    for (scf::ForOp loop : loops) {
      // The attribute's verifier guarantees at least 1.
      int64_t loopStages = stages;
      if (auto attr = loop->getAttrOfType<IntegerAttr>(kNumStagesAttrName))
        loopStages = attr.getInt();
      // tile-split-copies schedules the copies of a split loop.
      if (loopStages == 1 || loop->hasAttr(kSplitCopiesAttrName) ||
          !loop.getInductionVar().getType().isInteger(32))
        continue;
      flash::StagingFailure why;
      std::optional<flash::StagedLoop> staged =
          flash::analyzeStagedLoop(loop, &why);
      if (!staged) {
        LLVM_DEBUG(llvm::dbgs() << "not pipelined: " << loop.getLoc() << "\n");
        flash::reportUnstaged(loop, why, remarks, warned);
        continue;
      }
      if (remarks)
        loop.emitRemark() << "staged loop" << flash::rangeLabel(loop)
                          << " pipelined over " << loopStages << " stages: "
                          << flash::describeCopies(staged->copies) << " run "
                          << loopStages - 1 << " iteration(s) ahead, "
                          << loopStages << " buffers each";
      pipeline(loop, *staged, loopStages);
    }
  }
};
} // namespace

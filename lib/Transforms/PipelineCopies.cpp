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

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tile-pipeline-copies"

namespace flash {
#define GEN_PASS_DEF_TILEPIPELINECOPIES
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// The staged copies of one loop body and everything that gets rewritten.
struct StagedLoop {
  SmallVector<AsyncCopyOp> copies;
  /// The ops the copies' operands are computed by inside the body, in
  /// def-before-use order; cloned for other iterations.
  llvm::SetVector<Operation *> slice;
  SmallVector<LocalLoadOp> reads;
  /// The commits, waits and barriers that tile-stage-shared put around the
  /// copies; the pipelined schedule replaces them.
  SmallVector<Operation *> sync;
};

/// Whether `op` reads global memory only, from a tensor `loop` never writes
/// (a gathered copy's page indices, a bound read as a scalar): it may be
/// evaluated for another iteration. Its loads are bounds-masked, so
/// evaluating it past the loop's end reads nothing out of bounds.
bool isLoopInvariantRead(Operation *op, scf::ForOp loop) {
  Value source;
  if (auto load = dyn_cast<LoadOp>(op))
    source = load.getSource();
  else if (auto load = dyn_cast<LoadScalarOp>(op))
    source = load.getSource();
  return source && !flash::mayWrite(loop, source);
}

/// Adds to `slice` the body ops that `value` is computed by, if they can be
/// evaluated for another iteration: pure (or reads of tensors the loop does
/// not write) and fed only by the induction variable and values from outside
/// the loop.
bool collectSlice(Value value, scf::ForOp loop,
                  llvm::SetVector<Operation *> &slice) {
  if (value == loop.getInductionVar())
    return true;
  if (!loop->isAncestor(value.getParentRegion()->getParentOp()))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def) {
    LLVM_DEBUG(llvm::dbgs() << "copy offset is a loop-carried value\n");
    return false;
  }
  if (slice.contains(def))
    return true;
  if (!(isPure(def) || isLoopInvariantRead(def, loop)) ||
      def->getNumRegions() != 0) {
    LLVM_DEBUG(llvm::dbgs() << "copy offset computed by " << *def << "\n");
    return false;
  }
  for (Value operand : def->getOperands())
    if (!collectSlice(operand, loop, slice))
      return false;
  slice.insert(def);
  return true;
}

bool isSlotZero(Value slot) { return matchPattern(slot, m_Zero()); }

/// Matches one run of staged copies starting at `first`: an optional barrier
/// before it and `async_commit; async_wait 0; barrier` after it. Returns the
/// op after the run, or null if the shape differs.
Operation *matchCopyRun(AsyncCopyOp first, StagedLoop &staged) {
  // A barrier that ends the previous run is already taken.
  if (auto barrier = dyn_cast_or_null<BarrierOp>(first->getPrevNode());
      barrier && !llvm::is_contained(staged.sync, barrier.getOperation()))
    staged.sync.push_back(barrier);
  Operation *op = first;
  while (auto copy = dyn_cast_or_null<AsyncCopyOp>(op)) {
    staged.copies.push_back(copy);
    op = op->getNextNode();
  }
  auto commit = dyn_cast_or_null<AsyncCommitOp>(op);
  auto wait = commit ? dyn_cast_or_null<AsyncWaitOp>(commit->getNextNode())
                     : AsyncWaitOp();
  auto barrier =
      wait ? dyn_cast_or_null<BarrierOp>(wait->getNextNode()) : BarrierOp();
  if (!barrier || wait.getPending() != 0)
    return nullptr;
  staged.sync.append(
      {commit.getOperation(), wait.getOperation(), barrier.getOperation()});
  return barrier->getNextNode();
}

/// Whether `copy` is a staged copy this loop can pipeline: into slot 0 of a
/// single-slot buffer that only this loop reads, from a tensor the loop does
/// not write, at offsets computable for any iteration.
bool analyzeCopy(AsyncCopyOp copy, scf::ForOp loop, StagedLoop &staged) {
  auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
  if (copy.getPred() || !isSlotZero(copy.getSlot()) || !alloc ||
      alloc.getType().getSlots() != 1)
    return false;
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    auto read = dyn_cast<LocalLoadOp>(user);
    if (!read || !loop->isProperAncestor(read) || !isSlotZero(read.getSlot()))
      return false;
    staged.reads.push_back(read);
  }
  if (flash::mayWrite(loop, copy.getSource()))
    return false;
  for (Value operand : copy->getOperands())
    if (operand != copy.getDest() && operand != copy.getSlot() &&
        !collectSlice(operand, loop, staged.slice))
      return false;
  return true;
}

/// The staged copies of `loop`'s body if all of them can be pipelined.
std::optional<StagedLoop> analyzeLoop(scf::ForOp loop) {
  StagedLoop staged;
  Block *body = loop.getBody();
  for (Operation *op = &body->front(); op;) {
    auto copy = dyn_cast<AsyncCopyOp>(op);
    if (!copy) {
      op = op->getNextNode();
      continue;
    }
    size_t runStart = staged.copies.size();
    op = matchCopyRun(copy, staged);
    if (!op) {
      LLVM_DEBUG(llvm::dbgs() << "copies not in staged form\n");
      return std::nullopt;
    }
    for (AsyncCopyOp run : ArrayRef(staged.copies).drop_front(runStart))
      if (!analyzeCopy(run, loop, staged))
        return std::nullopt;
  }
  if (staged.copies.empty())
    return std::nullopt;
  return staged;
}

/// Whether a barrier precedes `op` in its block. A loop nested in another
/// runs again after other warps read its buffers; such a barrier separates
/// those reads from the prologue's copies.
bool barrierPrecedes(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (isa<BarrierOp>(prev))
      return true;
  return false;
}

/// Starts the copies of the iteration whose induction variable is `iv` into
/// `slot`, zero-filling instead if `pred` is false, and commits them.
void emitCopies(OpBuilder &builder, scf::ForOp loop, const StagedLoop &staged,
                Value iv, Value slot, Value pred) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (Operation *op : staged.slice)
    builder.clone(*op, mapping);
  for (AsyncCopyOp copy : staged.copies) {
    auto remap = [&](ValueRange values) {
      return llvm::map_to_vector(
          values, [&](Value v) { return mapping.lookupOrDefault(v); });
    };
    AsyncCopyOp::create(builder, copy.getLoc(),
                        mapping.lookupOrDefault(copy.getSource()),
                        remap(copy.getOffsets()), copy.getWindowAttr(),
                        copy.getGatherAttr(), remap(copy.getIndices()),
                        copy.getDest(), slot, pred);
  }
  AsyncCommitOp::create(builder, loop.getLoc());
}

void pipeline(scf::ForOp loop, StagedLoop &staged, int64_t stages) {
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
        single.getElementType(), single.getPerPhase(), single.getMaxPhase()));
  }

  // Prologue: iterations 0 .. S-2 into slots 0 .. S-2.
  if (flash::isInsideLoop(loop) && !barrierPrecedes(loop))
    BarrierOp::create(builder, loc);
  for (int64_t j = 0; j < stages - 1; ++j) {
    Value slot = constant(j);
    Value iv = lb;
    if (j > 0) {
      Value offset = arith::MulIOp::create(builder, loc, step, slot);
      iv = arith::AddIOp::create(builder, loc, lb, offset);
    }
    Value pred = before(iv, ub);
    emitCopies(builder, loop, staged, iv, slot, pred);
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
  emitCopies(builder, loop, staged, next, writeSlot, more);

  for (LocalLoadOp read : staged.reads)
    read.getSlotMutable().assign(readSlot);
  for (Operation *op : staged.sync)
    op->erase();
  for (AsyncCopyOp copy : staged.copies)
    copy.erase();
  for (Operation *op : llvm::reverse(staged.slice))
    if (op->use_empty())
      op->erase();

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
    for (scf::ForOp loop : loops) {
      // The attribute's verifier guarantees at least 1.
      int64_t loopStages = stages;
      if (auto attr = loop->getAttrOfType<IntegerAttr>(kNumStagesAttrName))
        loopStages = attr.getInt();
      if (loopStages == 1 || !loop.getInductionVar().getType().isInteger(32))
        continue;
      std::optional<StagedLoop> staged = analyzeLoop(loop);
      if (!staged) {
        LLVM_DEBUG(llvm::dbgs() << "not pipelined: " << loop.getLoc() << "\n");
        continue;
      }
      pipeline(loop, *staged, loopStages);
    }
  }
};
} // namespace

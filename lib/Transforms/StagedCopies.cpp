//===- StagedCopies.cpp - the staged copies of a loop body ----------------===//
//
// Finding the runs of staged copies that tile-stage-shared leaves in a loop
// body, and issuing them again for another iteration (StagedCopies.h).
//
//===----------------------------------------------------------------------===//
#include "StagedCopies.h"
#include "Remarks.h"
#include "SharedStaging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tile-staged-copies"

using namespace mlir;
using namespace flash;
using namespace flash::tile;

namespace {
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

/// Whether `op` divides by a value that is at least 1 by construction
/// (max(x, c) with a constant c >= 1): the division cannot fault (no zero,
/// no INT_MIN / -1), so it may be evaluated for another iteration.
bool isDivisionByPositive(Operation *op) {
  if (!isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp,
           arith::CeilDivSIOp, arith::FloorDivSIOp>(op))
    return false;
  auto max = op->getOperand(1).getDefiningOp<arith::MaxSIOp>();
  if (!max)
    return false;
  return llvm::any_of(max->getOperands(), [](Value bound) {
    APInt c;
    return matchPattern(bound, m_ConstantInt(&c)) && c.isStrictlyPositive();
  });
}

/// Adds to `slice` the body ops that `value` is computed by, if they can be
/// evaluated for another iteration: pure (or reads of tensors the loop does
/// not write) and fed only by the induction variable and values from outside
/// the loop.
bool collectSlice(Value value, scf::ForOp loop,
                  llvm::SetVector<Operation *> &slice, StagingFailure *why) {
  if (value == loop.getInductionVar())
    return true;
  if (!loop->isAncestor(value.getParentRegion()->getParentOp()))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def) {
    LLVM_DEBUG(llvm::dbgs() << "copy offset is a loop-carried value\n");
    if (why)
      *why = {nullptr, value,
              "its offset depends on a value carried from one iteration to "
              "the next"};
    return false;
  }
  if (slice.contains(def))
    return true;
  if (!(isPure(def) || isDivisionByPositive(def) ||
        isLoopInvariantRead(def, loop)) ||
      def->getNumRegions() != 0) {
    LLVM_DEBUG(llvm::dbgs() << "copy offset computed by " << *def << "\n");
    if (why)
      *why = {nullptr, def->getResult(0),
              ("its offset is computed in the loop by '" +
               def->getName().getStringRef() +
               (isMemoryEffectFree(def) ? "', which is not speculatable"
                                        : "', which has memory effects"))
                  .str()};
    return false;
  }
  for (Value operand : def->getOperands())
    if (!collectSlice(operand, loop, slice, why))
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
bool analyzeCopy(AsyncCopyOp copy, scf::ForOp loop, StagedLoop &staged,
                 StagingFailure *why) {
  auto fail = [&](const char *reason, Value blocker = Value()) {
    if (why)
      *why = {copy, blocker, reason};
    return false;
  };
  auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
  if (copy.getPred() || !isSlotZero(copy.getSlot()) || !alloc ||
      alloc.getType().getSlots() != 1)
    return fail("it is predicated or already has several slots");
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    auto read = dyn_cast<LocalLoadOp>(user);
    if (!read || !loop->isProperAncestor(read) || !isSlotZero(read.getSlot()))
      return fail("its buffer is also read outside the loop",
                  user->getNumResults() ? user->getResult(0) : Value());
    staged.reads.push_back(read);
  }
  if (flash::mayWrite(loop, copy.getSource()))
    return fail("the loop writes the tensor it copies from");
  for (Value operand : copy->getOperands())
    if (operand != copy.getDest() && operand != copy.getSlot() &&
        !collectSlice(operand, loop, staged.slice, why)) {
      if (why)
        why->copy = copy;
      return false;
    }
  return true;
}

} // namespace

std::optional<StagedLoop> flash::analyzeStagedLoop(scf::ForOp loop,
                                                   StagingFailure *why) {
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
      if (why)
        *why = {copy, Value(),
                "it is not followed by async_commit, async_wait 0 and a "
                "barrier"};
      return std::nullopt;
    }
    for (AsyncCopyOp run : ArrayRef(staged.copies).drop_front(runStart))
      if (!analyzeCopy(run, loop, staged, why))
        return std::nullopt;
  }
  if (staged.copies.empty()) {
    if (why)
      *why = {nullptr, Value(), "nothing in it is copied to shared memory",
              /*nothingStaged=*/true};
    return std::nullopt;
  }
  return staged;
}

std::string flash::describeCopies(ArrayRef<AsyncCopyOp> copies) {
  std::string places = llvm::join(
      llvm::map_range(copies,
                      [](AsyncCopyOp copy) { return lineCol(copy.getLoc()); }),
      ", ");
  return (copies.size() == 1 ? "the copy at " : "the copies at ") + places;
}

std::string flash::rangeLabel(scf::ForOp loop) {
  if (loop->hasAttr(kMaskSplitAttrName))
    return " (its masked blocks)";
  for (Operation &op : *loop->getBlock())
    if (&op != loop.getOperation() && isa<scf::ForOp>(op) &&
        op.getLoc() == loop.getLoc())
      return " (its unmasked blocks)";
  return "";
}

void flash::reportUnstaged(scf::ForOp loop, const StagingFailure &why,
                           bool remarks, DenseSet<Location> &warned) {
  auto asked = loop->getAttrOfType<IntegerAttr>(kNumStagesAttrName);
  bool warn = asked && asked.getInt() > 1 && !why.nothingStaged;
  if ((!warn && !remarks) || (why.nothingStaged && !asked))
    return;
  if (warn && !warned.insert(loop.getLoc()).second)
    return;
  InFlightDiagnostic diag = warn ? loop.emitWarning() : loop.emitRemark();
  if (warn)
    diag << "loop asks for " << asked.getInt()
         << " stages but its copies get 1: ";
  else
    diag << (why.nothingStaged ? "loop" : "staged loop") << rangeLabel(loop)
         << " not pipelined: ";
  if (why.copy)
    diag << describeCopies(cast<AsyncCopyOp>(why.copy))
         << " cannot be issued ahead: ";
  diag << why.reason;
  if (why.blocker && !isa<UnknownLoc>(why.blocker.getLoc()))
    diag.attachNote(why.blocker.getLoc()) << "this value prevents staging";
}

bool flash::barrierPrecedes(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (isa<BarrierOp>(prev))
      return true;
  return false;
}


void flash::emitStagedCopies(OpBuilder &builder, scf::ForOp loop,
                             const StagedLoop &staged,
                             ArrayRef<AsyncCopyOp> copies, Value iv, Value slot,
                             Value pred) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (Operation *op : staged.slice)
    builder.clone(*op, mapping);
  auto remap = [&](ValueRange values) {
    return llvm::map_to_vector(
        values, [&](Value v) { return mapping.lookupOrDefault(v); });
  };
  for (AsyncCopyOp copy : copies)
    AsyncCopyOp::create(builder, copy.getLoc(),
                        mapping.lookupOrDefault(copy.getSource()),
                        remap(copy.getOffsets()), copy.getWindowAttr(),
                        copy.getGatherAttr(), remap(copy.getIndices()),
                        copy.getDest(), slot, pred);
  AsyncCommitOp::create(builder, loop.getLoc());
}

void flash::eraseStagedCopies(StagedLoop &staged) {
  for (Operation *op : staged.sync)
    op->erase();
  for (AsyncCopyOp copy : staged.copies)
    copy.erase();
  for (Operation *op : llvm::reverse(staged.slice))
    if (op->use_empty())
      op->erase();
}

std::optional<PipelinedRing>
flash::matchPipelinedRing(scf::ForOp loop,
                          llvm::function_ref<bool(AsyncCopyOp)> qualifies) {
  PipelinedRing ring;
  ring.loop = loop;
  bool nested = false;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<AsyncCopyOp, AsyncCommitOp, AsyncWaitOp>(op) &&
        op->getBlock() != loop.getBody())
      nested = true;
  });
  if (nested)
    return std::nullopt;
  SmallVector<AsyncCopyOp> body;
  for (Operation &op : *loop.getBody()) {
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      body.push_back(copy);
    else if (auto commit = dyn_cast<AsyncCommitOp>(op))
      ring.commits.push_back(commit);
    else if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
      if (ring.wait)
        return std::nullopt;
      ring.wait = wait;
    }
  }
  if (body.empty() || !ring.wait || ring.commits.size() != 1 ||
      !isa_and_nonnull<BarrierOp>(ring.wait->getNextNode()) ||
      !isa_and_nonnull<AsyncCopyOp>(ring.commits[0]->getPrevNode()) ||
      !ring.wait->isBeforeInBlock(ring.commits[0]))
    return std::nullopt;
  llvm::SmallPtrSet<Value, 4> buffers;
  for (AsyncCopyOp copy : body) {
    auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
    int64_t slots = copy.getDest().getType().getSlots();
    if (!alloc || slots < 2 || (ring.stages && slots != ring.stages) ||
        !qualifies(copy))
      return std::nullopt;
    ring.stages = slots;
    buffers.insert(copy.getDest());
  }
  ring.perSlot = body.size();
  // Every other use of the buffers: the prologue's copies, reads in the body.
  for (Value buffer : buffers)
    for (Operation *user : buffer.getUsers()) {
      if (loop->isProperAncestor(user))
        continue;
      auto copy = dyn_cast<AsyncCopyOp>(user);
      if (!copy || copy->getBlock() != loop->getBlock() ||
          !copy->isBeforeInBlock(loop) || !qualifies(copy))
        return std::nullopt;
      ring.copies.push_back(copy);
    }
  for (Operation *op = loop->getPrevNode(); op; op = op->getPrevNode())
    if (auto commit = dyn_cast<AsyncCommitOp>(op))
      if (auto copy = dyn_cast_or_null<AsyncCopyOp>(commit->getPrevNode());
          copy && llvm::is_contained(ring.copies, copy))
        ring.commits.push_back(commit);
  if (ring.copies.size() != size_t(ring.stages - 1) * body.size() ||
      ring.commits.size() != size_t(ring.stages))
    return std::nullopt;
  ring.copies.append(body.begin(), body.end());
  return ring;
}

namespace {
/// Whether `ring` gathers its rows through a table its loop reads: not
/// varlen's gathers of its own rows past the sequence, which keep their four
/// warps (at HEAD_DIM 224 its dropout variant spilled 44 bytes with a
/// producer).
bool gathersThroughTable(const PipelinedRing &ring) {
  bool tableLoads = false;
  scf::ForOp loop = ring.loop;
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      tableLoads |= isa<IntegerType>(load.getType().getElementType());
    else if (auto load = dyn_cast<LoadScalarOp>(op))
      tableLoads |= isa<IntegerType>(load.getType());
  });
  return tableLoads && llvm::any_of(ring.copies, [](AsyncCopyOp c) {
           return c.isGathered();
         });
}
} // namespace

std::optional<SmallVector<PipelinedRing>>
flash::tableGatheredRings(func::FuncOp func,
                          llvm::function_ref<bool(AsyncCopyOp)> qualifies) {
  SmallVector<PipelinedRing> rings;
  bool gathered = false;
  for (auto loop : func.getBody().front().getOps<scf::ForOp>()) {
    bool copies = false;
    loop.getBody()->walk([&](AsyncCopyOp) { copies = true; });
    if (!copies)
      continue;
    std::optional<PipelinedRing> ring = matchPipelinedRing(loop, qualifies);
    if (!ring)
      return std::nullopt;
    gathered |= gathersThroughTable(*ring);
    rings.push_back(std::move(*ring));
  }
  if (!gathered)
    return std::nullopt;
  return rings;
}

//===- DeferWgmmaWaits.cpp - wgmma.wait_group where the results are read --===//
//
// convert-tile-to-simt closes every tile.mma it lowers to wgmma with
// commit_group and wait_group 0. This pass moves each such wait down its
// block to the first op that needs the group retired, so that the
// instructions in between run while the tensor cores compute:
//
//   * an op that reads a result of the group's wgmmas other than a move
//     (extractvalue, insertvalue, vector extract / insert / shuffle /
//     from_elements / broadcast: renames, no instruction; their results join
//     the group's values);
//   * an op with memory effects (the group may still read shared memory a
//     store or an mbarrier release hands back), a region (scf.if, scf.for),
//     another wait, a terminator.
//
// It passes pure ops, shuffles, wgmma.fence, the named-barrier arrivals of
// tile-pingpong-warpgroups (marked `tile.pingpong`: they hand the tensor
// cores to the next warpgroup right after the issue, and that warpgroup's
// wgmmas only read the shared memory this group reads), the consumers'
// transposed copy of an f8e4m3 V (marked `simt.fp8_transpose`: it writes
// only the copy's buffer) unless the group reads that copy, and the wgmmas of
// later groups that do not read the group's results; each commit_group it passes adds
// one to the wait's count (wait_group N retires all but the newest N groups,
// so after k more commits the same groups are retired by N + k). A loop
// body that issues S = Q K^T and then O += P V (tile-overlap-wgmma's order)
// so waits with wait_group 1 before the softmax reads S, and with 0 where
// the rescale reads O: the P V wgmmas run under the softmax.
//
// A wait_group 0 that moved past a softmax's worth of instructions gets a
// CTA-scope membar right before it. ptxas does not move
// WARPGROUP.DEPBAR above a memory barrier; without one it hoists the wait
// for P V into the row-max reduction (ahead of the F2FPs that write the
// next P into the registers P V still reads), and P V then runs under the
// max alone. The consumers have no memory access of their own in flight
// there (TMA and wgmma go through the async proxy), so the barrier has
// nothing to wait for.
//
//===----------------------------------------------------------------------===//
#include "flashc/Conversion/Passes.h"

#include "flashc/Dialect/Tile/TmaAttributes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace flash {
#define GEN_PASS_DEF_SIMTDEFERWGMMAWAITS
#include "flashc/Conversion/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {

/// Ops a wait_group 0 passes before it is pinned with a membar: a softmax
/// over one 64-row block's scores (hundreds of ops), not the few index and
/// descriptor ops around a group that nothing overlaps.
constexpr int64_t kPinnedSpan = 64;

bool isWgmmaIssue(Operation *op) {
  if (isa<NVVM::WgmmaMmaAsyncOp>(op))
    return true;
  auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op);
  return asmOp && asmOp.getAsmString().contains("wgmma.mma_async");
}

/// Ops that only rename registers: what the emulator's wgmma sanitizer lets
/// carry an in-flight accumulator.
bool isRename(Operation *op) {
  return isa<LLVM::ExtractValueOp, LLVM::InsertValueOp, vector::ExtractOp,
             vector::InsertOp, vector::ShuffleOp, vector::FromElementsOp,
             vector::BroadcastOp>(op);
}

bool readsAny(Operation *op, const llvm::DenseSet<Value> &values) {
  return llvm::any_of(op->getOperands(),
                      [&](Value v) { return values.contains(v); });
}

/// Moves `wait` (wait_group 0 right after its group's commit_group) down to
/// the first op that needs the group retired; returns whether it moved.
bool deferWait(NVVM::WgmmaWaitGroupSyncOp wait) {
  if (wait.getGroup() != 0)
    return false;
  auto commit =
      dyn_cast_or_null<NVVM::WgmmaGroupSyncAlignedOp>(wait->getPrevNode());
  if (!commit)
    return false;
  // The group: the wgmmas since the previous wait of the block, and the
  // renames of their results up to the wait (the lowering extracts each
  // accumulator register right after its wgmma).
  Operation *first = commit;
  while (first->getPrevNode() &&
         !isa<NVVM::WgmmaWaitGroupSyncOp>(first->getPrevNode()))
    first = first->getPrevNode();
  llvm::DenseSet<Value> results;
  bool readsTranspose = false;
  for (Operation *op = first; op != wait.getOperation(); op = op->getNextNode()) {
    if (isWgmmaIssue(op) || (isRename(op) && readsAny(op, results)))
      results.insert(op->result_begin(), op->result_end());
    if (isWgmmaIssue(op) && op->hasAttr(flash::tile::kFp8TransposeAttrName))
      readsTranspose = true;
  }
  if (results.empty())
    return false;

  int64_t commits = 0, passed = 0;
  Operation *stop = wait->getNextNode();
  for (; stop; stop = stop->getNextNode()) {
    if (stop->hasTrait<OpTrait::IsTerminator>() ||
        stop->getNumRegions() != 0 || isa<NVVM::WgmmaWaitGroupSyncOp>(stop))
      break;
    bool reads = readsAny(stop, results);
    if (isRename(stop)) {
      if (reads)
        results.insert(stop->result_begin(), stop->result_end());
      continue;
    }
    if (reads)
      break;
    if (isa<NVVM::WgmmaGroupSyncAlignedOp>(stop)) {
      ++commits;
      continue;
    }
    if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::ShflOp>(stop) ||
        (isa<NVVM::BarrierArriveOp>(stop) &&
         stop->hasAttr(flash::tile::kPingPongAttrName)) ||
        (!readsTranspose && !isWgmmaIssue(stop) &&
         stop->hasAttr(flash::tile::kFp8TransposeAttrName)) ||
        isWgmmaIssue(stop) || isMemoryEffectFree(stop)) {
      if (!isWgmmaIssue(stop) && !stop->hasTrait<OpTrait::ConstantLike>())
        ++passed;
      continue;
    }
    break;
  }
  if (!stop || stop == wait->getNextNode())
    return false;
  wait->moveBefore(stop);
  wait.setGroup(commits);
  if (commits == 0 && passed >= kPinnedSpan) {
    OpBuilder builder(wait);
    NVVM::MembarOp::create(builder, wait.getLoc(), NVVM::MemScopeKind::CTA);
  }
  return true;
}

struct SIMTDeferWgmmaWaits
    : flash::impl::SIMTDeferWgmmaWaitsBase<SIMTDeferWgmmaWaits> {
  void runOnOperation() override {
    SmallVector<NVVM::WgmmaWaitGroupSyncOp> waits;
    getOperation()->walk(
        [&](NVVM::WgmmaWaitGroupSyncOp wait) { waits.push_back(wait); });
    // Last first: a wait stops at the next one, already in its place.
    for (NVVM::WgmmaWaitGroupSyncOp wait : llvm::reverse(waits))
      deferWait(wait);
  }
};

} // namespace

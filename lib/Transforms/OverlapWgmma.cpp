//===- OverlapWgmma.cpp - P V of block k under the softmax of block k + 1 -===//
//
// FlashAttention-3's intra-warpgroup overlap. A warp-specialized consumer
// loop computing, per key block k,
//
//   S = Q K[k]^T (zero accumulator); softmax(S) -> P, acc2 = rescale(acc);
//   acc' = acc2 + P V[k]; yield acc'
//
// issues P V one iteration later, right after the next block's Q K^T:
//
//   S = Q K[k]^T; acc = accPending + Pprev V[slotPrev];
//   softmax(S) -> P, acc2 = rescale(acc); yield acc2, P, slot(k)
//
// and the last block's P V after the loop (guarded: an empty loop has
// none). P's conversion (truncf, convert_layout) moves after the rescale.
// The first iteration's Pprev is zero against its own V block (loaded by
// then). Lowered, the body's wgmma groups are S then P V, and
// simt-defer-wgmma-waits waits for S with wait_group 1 before the softmax
// and for P V only where the rescale reads acc: the tensor cores run P V
// while the warps exponentiate.
//
// V's slot of block k is read in iteration k + 1, so the loop's TMA wait
// releases the slot of iteration k - 2 (`tile.tma_release_lag = 2`) instead
// of k - 1's. Loops whose copies are pipelined by the consumers themselves
// (cp.async, which refills the slot of k - 1 during iteration k) and loops
// of another shape are left alone.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace flash {
#define GEN_PASS_DEF_TILEOVERLAPWGMMA
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {

/// The loop's wgmma pair: S = Q K^T, then O += P V with O yielded.
struct OverlapCandidate {
  MmaOp qk, pv;
  LocalLoadOp v;
  AsyncWaitOp wait;
  unsigned accIndex;
};

bool lowersToWarpgroupMma(MmaOp mma) {
  auto layout = dyn_cast_if_present<MmaLayoutAttr>(
      cast<RankedTensorType>(mma.getAcc().getType()).getEncoding());
  return layout && isWarpgroupShaped(layout);
}

std::optional<OverlapCandidate> match(scf::ForOp loop) {
  Block *body = loop.getBody();
  SmallVector<MmaOp> mmas;
  AsyncWaitOp wait;
  for (Operation &op : *body) {
    if (auto mma = dyn_cast<MmaOp>(op))
      mmas.push_back(mma);
    else if (auto w = dyn_cast<AsyncWaitOp>(op)) {
      if (wait || !w->hasAttr(kTmaReleaseAttrName))
        return std::nullopt;
      wait = w;
    } else if (isa<AsyncCopyOp, AsyncCommitOp, BarrierOp>(op))
      return std::nullopt; // the consumers refill slots themselves
    else if (op.getNumRegions() != 0 &&
             op.walk([](MmaOp) { return WalkResult::interrupt(); })
                 .wasInterrupted())
      return std::nullopt;
  }
  auto stages = wait ? wait->getAttrOfType<IntegerAttr>(kTmaStagesAttrName)
                     : IntegerAttr();
  if (!wait || !stages || stages.getInt() < 2 || mmas.size() != 2 ||
      wait->hasAttr(kTmaReleaseLagAttrName))
    return std::nullopt;
  MmaOp qk = mmas[0], pv = mmas[1];
  if (!lowersToWarpgroupMma(qk) || !lowersToWarpgroupMma(pv) ||
      !wait->isBeforeInBlock(qk))
    return std::nullopt;
  // S starts from a constant: nothing carried into Q K^T.
  if (!matchPattern(qk.getAcc(), m_Constant()))
    return std::nullopt;
  // O += P V is yielded and read by nothing else.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  if (!pv->hasOneUse() || *pv->getUsers().begin() != yield)
    return std::nullopt;
  unsigned accIndex = pv->getUses().begin()->getOperandNumber();
  // V from its staging buffer, read right for P V (fused into the wgmma).
  auto v = pv.getB().getDefiningOp<LocalLoadOp>();
  if (!v || !v->hasOneUse() || v->getBlock() != body ||
      !loop.isDefinedOutsideOfLoop(v.getSource()))
    return std::nullopt;
  // Every read of the carried O comes after Q K^T (it becomes the moved
  // P V's result there).
  BlockArgument acc = loop.getRegionIterArgs()[accIndex];
  for (Operation *user : acc.getUsers())
    if (user->getBlock() != body || !qk->isBeforeInBlock(user))
      return std::nullopt;
  // O is read before P V (the rescale): that read waits for the moved P V,
  // which orders the next P's conversion after it. With P V its only reader
  // (a backward's dv += P^T dO) nothing would, the conversion would write P
  // V's A registers while it runs, and ptxas would serialize every wgmma of
  // the kernel (C7513).
  if (llvm::all_of(acc.getUsers(),
                   [&](Operation *user) { return user == pv.getOperation(); }))
    return std::nullopt;
  return OverlapCandidate{qk, pv, v, wait, accIndex};
}

/// The ops of the body that compute `value` from the induction variable and
/// values defined outside the loop, cloned before the loop with the
/// induction variable at the lower bound.
FailureOr<Value> valueAtLowerBound(scf::ForOp loop, Value value,
                                   OpBuilder &b) {
  if (loop.isDefinedOutsideOfLoop(value))
    return value;
  if (value == loop.getInductionVar())
    return loop.getLowerBound();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || !isPure(def) ||
      def->getNumRegions() != 0)
    return failure();
  IRMapping map;
  for (Value operand : def->getOperands()) {
    FailureOr<Value> at = valueAtLowerBound(loop, operand, b);
    if (failed(at))
      return failure();
    map.map(operand, *at);
  }
  return b.clone(*def, map)->getResult(cast<OpResult>(value).getResultNumber());
}

/// P's conversion: the chain of single-use pure ops with one operand that
/// ends in P V's A (e.g. truncf, convert_layout), last op first.
SmallVector<Operation *> conversionChain(MmaOp pv) {
  SmallVector<Operation *> chain;
  Block *body = pv->getBlock();
  for (Operation *op = pv.getA().getDefiningOp();
       op && op->getBlock() == body && op->getNumResults() == 1 &&
       op->getNumOperands() == 1 && op->getResult(0).hasOneUse() &&
       isPure(op) && op->getNumRegions() == 0;
       op = op->getOperand(0).getDefiningOp())
    chain.push_back(op);
  return chain;
}

LogicalResult overlap(scf::ForOp loop, OverlapCandidate c) {
  Location loc = c.pv.getLoc();
  OpBuilder b(loop);
  FailureOr<Value> firstSlot = valueAtLowerBound(loop, c.v.getSlot(), b);
  if (failed(firstSlot))
    return failure();
  // P's conversion (e.g. truncf, convert_layout) moves to the end of the
  // body, after the rescale reads the previous P V's result: converted in
  // the softmax, P's carried registers would be written while that P V
  // still reads them, and ptxas then serializes every wgmma of the kernel
  // (C7513). (Carrying the f32 scores and converting next to P V instead
  // spills at d128: 64 more registers live across the loop.)
  SmallVector<Operation *> chain = conversionChain(c.pv);
  auto pType = cast<RankedTensorType>(c.pv.getA().getType());
  Value zero = arith::ConstantOp::create(
      b, loc, pType,
      DenseElementsAttr::get(pType, b.getZeroAttr(pType.getElementType())));

  // The loop with P and V's slot carried; O carried before P V.
  SmallVector<Value> inits(loop.getInitArgs());
  inits.push_back(zero);
  inits.push_back(*firstSlot);
  auto newLoop = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(),
                                    inits);
  newLoop->setAttrs(loop->getAttrs());
  Block *newBody = newLoop.getBody();
  newBody->getOperations().splice(newBody->begin(),
                                  loop.getBody()->getOperations());
  // The new block may come with its own terminator: the spliced yield is
  // the one to keep.
  for (Operation &op : llvm::make_early_inc_range(*newBody))
    if (isa<scf::YieldOp>(op) && &op != &newBody->back())
      op.erase();
  unsigned numOld = loop.getNumRegionIterArgs();
  loop.getInductionVar().replaceAllUsesWith(newLoop.getInductionVar());
  for (unsigned i = 0; i < numOld; ++i)
    loop.getRegionIterArgs()[i].replaceAllUsesWith(
        newLoop.getRegionIterArgs()[i]);
  Value pPrev = newLoop.getRegionIterArgs()[numOld];
  Value slotPrev = newLoop.getRegionIterArgs()[numOld + 1];
  BlockArgument accPending = newLoop.getRegionIterArgs()[c.accIndex];

  // P V of the previous block, right after Q K^T; the carried O's readers
  // read its result.
  b.setInsertionPointAfter(c.qk);
  auto vPrev = cast<LocalLoadOp>(b.clone(*c.v));
  vPrev.getSlotMutable().assign(slotPrev);
  auto pvPrev = cast<MmaOp>(b.clone(*c.pv));
  pvPrev.getAMutable().assign(pPrev);
  pvPrev.getBMutable().assign(vPrev);
  pvPrev.getAccMutable().assign(accPending);
  accPending.replaceAllUsesExcept(pvPrev.getResult(), pvPrev);

  // Yield O before this block's P V, P and V's slot.
  auto yield = cast<scf::YieldOp>(newBody->getTerminator());
  for (Operation *op : llvm::reverse(chain))
    op->moveBefore(yield);
  SmallVector<Value> yielded(yield.getOperands());
  yielded[c.accIndex] = c.pv.getAcc();
  yielded.push_back(c.pv.getA());
  yielded.push_back(c.v.getSlot());
  b.setInsertionPoint(yield);
  scf::YieldOp::create(b, yield.getLoc(), yielded);
  yield.erase();
  c.pv.erase();
  c.v.erase();

  // The last block's P V, where the loop ran.
  b.setInsertionPointAfter(newLoop);
  Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                    loop.getLowerBound(), loop.getUpperBound());
  Value accOut = newLoop.getResult(c.accIndex);
  auto last = scf::IfOp::create(b, loc, TypeRange{accOut.getType()}, ran,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&last.getThenRegion().front());
    auto vLast = cast<LocalLoadOp>(b.clone(*vPrev));
    vLast.getSlotMutable().assign(newLoop.getResult(numOld + 1));
    auto pvLast = cast<MmaOp>(b.clone(*pvPrev));
    pvLast.getAMutable().assign(newLoop.getResult(numOld));
    pvLast.getBMutable().assign(vLast);
    pvLast.getAccMutable().assign(accOut);
    scf::YieldOp::create(b, loc, pvLast.getResult());
    b.setInsertionPointToStart(&last.getElseRegion().front());
    scf::YieldOp::create(b, loc, accOut);
  }
  for (unsigned i = 0; i < numOld; ++i)
    loop.getResult(i).replaceAllUsesWith(i == c.accIndex
                                             ? last.getResult(0)
                                             : newLoop.getResult(i));
  c.wait->setAttr(kTmaReleaseLagAttrName, b.getI64IntegerAttr(2));
  loop.erase();
  return success();
}

struct TileOverlapWgmma
    : flash::impl::TileOverlapWgmmaBase<TileOverlapWgmma> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!targetsWgmma(kernel))
      return;
    SmallVector<scf::ForOp> loops;
    kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      if (std::optional<OverlapCandidate> c = match(loop))
        if (failed(overlap(loop, *c)))
          continue;
  }
};

} // namespace

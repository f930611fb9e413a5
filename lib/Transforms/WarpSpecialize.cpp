//===- WarpSpecialize.cpp - a producer warpgroup for the TMA rings --------===//
//
// On sm_90a the TMA rings of tile-tma-copies are filled by one thread of
// the consumer warps, which also recycle each slot behind a CTA barrier.
// Here one more warpgroup takes the copies over (FlashAttention-3's
// organisation): its first warp runs the rings' copies alone, waiting on a
// slot's "empty" mbarrier before refilling it, while the consumers only
// wait on "full", compute, and release the slot when the wgmma that read
// it has retired. The producer keeps few registers (setmaxnreg.dec) so that
// the consumers can take more (setmaxnreg.inc).
//
// A copy's operands and its loop's bounds are recomputed by the producer:
// pure ops, and scalar reads of kernel tensors nothing writes (a packed
// batch's cu_seqlens, which place a sequence's rows and bound its loops).
//
// Rings the TMA unit cannot fill (a paged KV cache's gathered rows, which
// must stay zero past the sequence: FlashAttention-3's PagedKVNonTMA) keep
// cp.async, and so do the kernel's other rings (tile-tma-copies'
// cp-async-producer: a cache's blocks within one page): with one consumer
// warpgroup (4 warps) and no TMA ring, a producer WARPGROUP runs the copies
// in the consumers' layouts, all 128 of its threads, and re-reads the block
// table (a tile load of a tensor nothing writes, or a block's page). Each
// stage's commit becomes every producer thread's
// cp.async.mbarrier.arrive.noinc on the slot's full barrier (count 128),
// which fires once that thread's copies have landed; the consumers wait on
// full, fence the generic proxy's writes for wgmma, and release the slot on
// its empty barrier, as for TMA rings. Only kernels with a gathered ring
// split so: a dense cp.async ring on sm_90a is one whose copies did not
// qualify for TMA for other reasons, and keeps its four warps.
//
// The split is structural and happens at the tile level, after
// tile-allocate-shared (which needs the single-block body and places the
// buffers): the body moves into the consumer side of an scf.if on the
// thread index, and the producer side is rebuilt from the copies and the
// ops their operands need. The mbarrier arithmetic stays with the rest of
// the TMA lowering in convert-tile-to-simt, which reads the marks.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"
#include "StagedCopies.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tile-warp-specialize"

namespace flash {
#define GEN_PASS_DEF_TILEWARPSPECIALIZE
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// setmaxnreg per consumer warpgroup count (FlashAttention-3's split):
/// producer + consumers * consumer registers stay within 512 per thread of
/// a warpgroup, the CTA's 64K registers. One consumer warpgroup gains no
/// registers (it has 255 at entry already) and ptxas spilled the consumers
/// of flash_attn and flash_attn_alibi so: those kernels keep their copies.
struct RegisterSplit {
  int64_t producer, consumer;
};
/// A cp.async producer warpgroup and one consumer warpgroup: the consumers
/// keep all they had at entry (256 for 256 threads, the most a thread can
/// hold), so the producer need give up little; it computes each thread's
/// share of the rows' addresses and page indices. ptxas 13 spills the paged
/// kernels (flash_attn_kvcache, _split) with the producer at 56 to 72 on
/// gathered rows alone (4 to 12 bytes), and with whole-page windows beside
/// them (pages a multiple of BLOCK_N) up to 168 (HEAD_DIM 240: 120 bytes at
/// 80, 4 at 168 packed with a window and soft-capping).
constexpr RegisterSplit kCpAsyncRegisters{240, 256};
std::optional<RegisterSplit> registerSplit(int64_t consumerGroups) {
  switch (consumerGroups) {
  case 2:
    return RegisterSplit{24, 240};
  case 3:
    return RegisterSplit{32, 160};
  default:
    return std::nullopt;
  }
}

bool isTma(Operation *op) { return op->hasAttr(kTmaBarrierAttrName); }

/// Whether `op` reads one element of a kernel tensor parameter that no op
/// of `func` writes (cu_seqlens, a block table; flash::mayWrite): the
/// producer reads it again and gets the consumers' value, so a copy's row
/// offset or a loop bound may come from memory. Parameters that something
/// may write stay refused: the producer could read them before or after the
/// consumers' write. `tiles` (a cp.async producer warpgroup): tile loads
/// too, not just scalars.
bool readsUnwrittenParam(Operation *op, func::FuncOp func, bool tiles) {
  Value source;
  if (auto load = dyn_cast<LoadScalarOp>(op))
    source = load.getSource();
  // A tile of them (a block table's pages for a gathered copy's rows), for
  // a producer warpgroup that runs the consumers' layouts.
  else if (auto load = dyn_cast<LoadOp>(op); load && tiles)
    source = load.getSource();
  auto arg = source ? dyn_cast<BlockArgument>(source) : nullptr;
  return arg && arg.getOwner()->getParentOp() == func.getOperation() &&
         !flash::mayWrite(func, arg);
}

struct Plan {
  /// Ops the producer runs, in the consumers' order: the copies, what their
  /// operands and the loops' bounds need, the loops holding copies.
  llvm::SetVector<Operation *> producer;
  SmallVector<scf::ForOp> loops;
  /// Per loop: its full wait and the CTA barrier after it.
  SmallVector<std::pair<AsyncWaitOp, BarrierOp>> waits;
  /// tile.barrier ops before a ring's first copies.
  llvm::SmallPtrSet<Operation *, 4> handovers;
};

/// Why the kernel stays as it is, or the plan.
FailureOr<Plan> planSplit(func::FuncOp func, bool cpAsync, std::string &why) {
  Plan plan;
  Block &entry = func.getBody().front();
  SmallVector<AsyncCopyOp> copies;
  bool nested = false;
  auto producerCopy = [&](Operation *copy) {
    return cpAsync ? copy->hasAttr(kCpAsyncBarrierAttrName) : isTma(copy);
  };
  func.walk([&](AsyncCopyOp copy) {
    if (!producerCopy(copy))
      return;
    copies.push_back(copy);
    Operation *parent = copy->getParentOp();
    if (copy->getBlock() == &entry)
      return;
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (!loop || loop->getBlock() != &entry) {
      nested = true;
      return;
    }
    if (!llvm::is_contained(plan.loops, loop))
      plan.loops.push_back(loop);
  });
  if (nested) {
    why = "a TMA copy outside the body and its rings' loops";
    return failure();
  }
  // Each ring's loop: the full wait, then the CTA barrier that recycles the
  // previous slot; nothing else in the body writes shared memory.
  for (scf::ForOp loop : plan.loops) {
    AsyncWaitOp wait;
    for (Operation &op : *loop.getBody())
      if (auto w = dyn_cast<AsyncWaitOp>(op); w && isTma(w))
        wait = w;
    auto barrier = wait ? dyn_cast_or_null<BarrierOp>(wait->getNextNode())
                        : BarrierOp();
    if (!barrier) {
      why = "a ring's loop without its full wait and barrier";
      return failure();
    }
    bool writes = false;
    loop.getBody()->walk([&](Operation *op) {
      if (isa<AsyncCopyOp>(op) && !producerCopy(op))
        writes = true;
      if (isa<AsyncCommitOp>(op) && !(cpAsync && producerCopy(op)))
        writes = true;
    });
    if (writes) {
      why = "a ring's loop with other copies into shared memory";
      return failure();
    }
    plan.waits.push_back({wait, barrier});
  }

  // The backward slice of the copies' operands and the loops' bounds.
  SmallVector<Operation *> work(copies.begin(), copies.end());
  for (scf::ForOp loop : plan.loops)
    work.push_back(loop);
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    SmallVector<Value> operands(op->getOperands());
    if (auto loop = dyn_cast<scf::ForOp>(op))
      operands = {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
    for (Value v : operands) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        Operation *owner = arg.getOwner()->getParentOp();
        auto loop = dyn_cast<scf::ForOp>(owner);
        if (owner == func.getOperation() ||
            (loop && llvm::is_contained(plan.loops, loop) &&
             arg == loop.getInductionVar()))
          continue;
        why = "a copy operand carried by a loop";
        return failure();
      }
      Operation *def = v.getDefiningOp();
      // Buffers stay above the split, where both roles see them.
      if (isa<LocalAllocOp>(def) && def->getBlock() == &entry)
        continue;
      Operation *parent = def->getParentOp();
      bool placed = def->getBlock() == &entry ||
                    (isa<scf::ForOp>(parent) &&
                     llvm::is_contained(plan.loops, cast<scf::ForOp>(parent)));
      if (!placed || def->getNumRegions() ||
          !(isMemoryEffectFree(def) ||
            readsUnwrittenParam(def, func, cpAsync))) {
        why = "a copy operand computed by '" +
              def->getName().getStringRef().str() + "'";
        return failure();
      }
      work.push_back(def);
    }
  }
  // Keep the consumers' order (program order, the loops' bodies in place).
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (seen.contains(op) || (isa<AsyncCommitOp>(op) && producerCopy(op)))
      plan.producer.insert(op);
  });

  // A ring whose first copy follows a CTA barrier reuses bytes the
  // consumers read before it: the producer waits for their hand-over.
  for (AsyncCopyOp copy : copies) {
    if (copy->getBlock() != &entry)
      continue;
    Operation *prev = copy->getPrevNode();
    while (prev && plan.producer.contains(prev) && !isa<AsyncCopyOp>(prev))
      prev = prev->getPrevNode();
    if (isa_and_nonnull<BarrierOp>(prev))
      plan.handovers.insert(prev);
  }
  return plan;
}

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

struct TileWarpSpecializePass
    : flash::impl::TileWarpSpecializeBase<TileWarpSpecializePass> {
  using TileWarpSpecializeBase::TileWarpSpecializeBase;

  /// cp.async mode: marks the rings (their copies and commits
  /// tile.cp_async_barrier = I, their waits as tile-tma-copies marks a TMA
  /// ring's) and records the full barriers' counts, the producer
  /// warpgroup's threads. Nothing, and false, unless a ring gathers its rows
  /// (a paged KV cache, which the TMA unit cannot read).
  bool markCpAsyncRings(func::FuncOp func) {
    std::optional<SmallVector<flash::PipelinedRing>> rings =
        flash::tableGatheredRings(
            func, [](AsyncCopyOp copy) { return !isTma(copy); });
    if (!rings)
      return false;
    Builder b(func.getContext());
    SmallVector<int64_t> counts;
    for (flash::PipelinedRing &ring : *rings) {
      auto first = b.getI64IntegerAttr(counts.size());
      counts.append(ring.stages, kProducerThreads);
      for (AsyncCopyOp copy : ring.copies)
        copy->setAttr(kCpAsyncBarrierAttrName, first);
      for (AsyncCommitOp commit : ring.commits)
        commit->setAttr(kCpAsyncBarrierAttrName, first);
      ring.wait->setAttr(kTmaBarrierAttrName, first);
      ring.wait->setAttr(kTmaStagesAttrName, b.getI64IntegerAttr(ring.stages));
      ring.wait->setAttr(kCpAsyncBarrierAttrName, first);
    }
    func->setAttr(kTmaBarriersAttrName, b.getDenseI64ArrayAttr(counts));
    return true;
  }

  void unmarkCpAsyncRings(func::FuncOp func) {
    func->removeAttr(kTmaBarriersAttrName);
    func.walk([](Operation *op) {
      if (op->removeAttr(kCpAsyncBarrierAttrName)) {
        op->removeAttr(kTmaBarrierAttrName);
        op->removeAttr(kTmaStagesAttrName);
      }
    });
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!targetsWgmma(func) || func->hasAttr(kWarpSpecializeAttrName) ||
        !llvm::hasSingleElement(func.getBody()))
      return;
    auto warps = func->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
    if (!warps || warps.getInt() % 4 != 0)
      return;
    // TMA rings: one producer warp beside two or three consumer
    // warpgroups. cp.async rings (no TMA ring, some copy gathered): a
    // producer warpgroup that runs the consumers' copy layouts, hence one
    // consumer warpgroup.
    bool cpAsync = !func->hasAttr(kTmaBarriersAttrName);
    if (cpAsync &&
        (!cpAsyncRings || warps.getInt() != 4 || !markCpAsyncRings(func)))
      return;
    std::optional<RegisterSplit> regs =
        cpAsync ? std::optional(kCpAsyncRegisters)
                : registerSplit(warps.getInt() / 4);
    if (!regs)
      return;
    std::string why;
    FailureOr<Plan> plan = planSplit(func, cpAsync, why);
    if (failed(plan)) {
      LLVM_DEBUG(llvm::dbgs() << "not specialized: " << why << "\n");
      if (cpAsync)
        unmarkCpAsyncRings(func);
      return;
    }
    int64_t consumers = warps.getInt() * 32;
    Location loc = func.getLoc();
    Block &entry = func.getBody().front();
    Operation *ret = entry.getTerminator();

    // tid >= C: the producer; the body moves into the consumers' side.
    OpBuilder b(ret);
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value isProducer = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, tid, i32(b, loc, consumers));
    auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
    roles->setAttr(kWarpRolesAttrName, b.getUnitAttr());
    Block *consumerBlock = &roles.getElseRegion().front();
    SmallVector<Operation *> body;
    for (Operation &op : entry) {
      if (&op == tid.getDefiningOp())
        break;
      if (!isa<LocalAllocOp>(op))
        body.push_back(&op);
    }
    for (Operation *op : body)
      op->moveBefore(consumerBlock->getTerminator());

    // Producer: fewer registers; warp 0 of the warpgroup runs the TMA
    // copies, all of its threads the cp.async ones.
    int64_t issuers = cpAsync ? kProducerThreads : 32;
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    NVVM::SetMaxRegisterOp::create(b, loc, regs->producer,
                                   NVVM::SetMaxRegisterAction::decrease);
    if (!cpAsync) {
      Value issuer = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, tid, i32(b, loc, consumers + 32));
      auto warp0 = scf::IfOp::create(b, loc, issuer, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&warp0.getThenRegion().front());
    }
    IRMapping map;
    for (Operation &op : *consumerBlock) {
      if (plan->handovers.contains(&op)) {
        NVVM::BarrierOp::create(b, loc, Type(), i32(b, loc, kHandoverBarrierId),
                                i32(b, loc, consumers + issuers),
                                NVVM::BarrierReductionAttr(), Value());
        continue;
      }
      if (!plan->producer.contains(&op))
        continue;
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop) {
        Operation *clone = b.clone(op, map);
        if (isa<AsyncCopyOp>(clone) && !cpAsync)
          clone->setAttr(kTmaProducerAttrName, b.getUnitAttr());
        continue;
      }
      auto refill = scf::ForOp::create(
          b, loop.getLoc(), map.lookupOrDefault(loop.getLowerBound()),
          map.lookupOrDefault(loop.getUpperBound()), map.lookupOrDefault(loop.getStep()));
      map.map(loop.getInductionVar(), refill.getInductionVar());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(refill.getBody()->getTerminator());
      for (Operation &inner : *loop.getBody()) {
        if (!plan->producer.contains(&inner))
          continue;
        Operation *clone = b.clone(inner, map);
        if (isa<AsyncCopyOp>(clone) && !cpAsync)
          clone->setAttr(kTmaProducerAttrName, b.getUnitAttr());
      }
    }
    // Each thread's last copies land before it exits.
    if (cpAsync)
      AsyncWaitOp::create(b, loc, 0);

    // Consumers: more registers, no copies; the hand-over arrives, the
    // in-loop barriers give way to the empty barriers.
    b.setInsertionPointToStart(consumerBlock);
    NVVM::SetMaxRegisterOp::create(b, loc, regs->consumer,
                                   NVVM::SetMaxRegisterAction::increase);
    for (Operation *barrier : plan->handovers) {
      b.setInsertionPointAfter(barrier);
      NVVM::BarrierArriveOp::create(b, barrier->getLoc(),
                                    i32(b, loc, kHandoverBarrierId),
                                    i32(b, loc, consumers + issuers));
    }
    for (auto [wait, barrier] : plan->waits) {
      wait->setAttr(kTmaReleaseAttrName, b.getUnitAttr());
      barrier.erase();
    }
    for (Operation *op : llvm::reverse(plan->producer)) {
      if (isa<AsyncCopyOp, AsyncCommitOp>(op) ||
          (!isa<scf::ForOp>(op) && op->use_empty()))
        op->erase();
    }

    Builder attrs(&getContext());
    func->setAttr(kWarpSpecializeAttrName,
                  attrs.getDictionaryAttr({
                      attrs.getNamedAttr("consumer_warps", warps),
                      attrs.getNamedAttr("producer_regs",
                                         attrs.getI64IntegerAttr(regs->producer)),
                      attrs.getNamedAttr("consumer_regs",
                                         attrs.getI64IntegerAttr(regs->consumer)),
                  }));
  }
};
} // namespace

//===- Persistent.cpp - persistent CTAs looping over a tile scheduler -----===//
//
// FlashAttention-3 launches about one CTA per SM slot and lets each CTA loop
// over output tiles instead of launching one CTA per tile: the launch and
// prologue cost is paid once per CTA, and the order of the tiles is the
// scheduler's. Here the scheduler is static round robin: CTA c takes tiles
// c, c + P, c + 2P, ... of a fixed numbering (P CTAs), which is either the
// launch's own (axis 0 fastest) or longest-first for causal kernels.
//
// The pass runs last on the tile level, after tile-allocate-shared: the body
// it wraps is final, so the shared-memory plan inside one tile is unchanged
// and only the hand-over between tiles needs a barrier.
//
// TMA rings (sm_90a) keep going from tile to tile: the loop over the tiles
// carries, per ring, the blocks it filled in the CTA's earlier tiles, and
// the lowering takes each block's slot and mbarrier phase from that count
// plus its iteration, as FlashAttention-3's pipeline state runs on across
// tiles. A warp-specialized kernel's producer and consumers each loop over
// the same tiles inside their own side of the role split (below their
// setmaxnreg): the producer fills the next tile's first slots while the
// consumers finish this tile, held back only by the empty barriers, and the
// consumers' end-of-tile barrier is theirs alone (named barrier 1). That
// needs the rings' bytes to be theirs throughout the body
// (tile-allocate-shared's persistent-rings), which the pass checks.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/PersistentAttributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

namespace flash {
#define GEN_PASS_DEF_TILEPERSISTENT
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
namespace tile = flash::tile;

namespace {
/// What one SM of an arch's datacenter GPU holds (CUDA C Programming Guide,
/// "Technical Specifications per Compute Capability"; SM counts of the A100,
/// A40, L40S and H100/H200 SXM).
struct SMLimits {
  int64_t sms;
  int64_t sharedBytes; ///< per SM, what CTAs can use
  int64_t threads;
};

std::optional<SMLimits> smLimits(int64_t arch) {
  switch (arch) {
  case 80:
    return SMLimits{108, 164 * 1024, 2048};
  case 86:
    return SMLimits{84, 100 * 1024, 1536};
  case 89:
    return SMLimits{142, 100 * 1024, 1536};
  case 90:
    return SMLimits{132, 228 * 1024, 2048};
  default:
    return std::nullopt;
  }
}

/// CTAs the GPU of `arch` runs at once by threads and shared memory (the
/// driver reserves 1 KiB per CTA); registers may allow fewer, and then the
/// CTAs beyond them wait for a slot, as a non-persistent grid's do.
int64_t defaultCtas(const SMLimits &limits, int64_t threads,
                    int64_t sharedBytes) {
  int64_t perSM = std::max<int64_t>(1, limits.threads / threads);
  if (sharedBytes > 0)
    perSM = std::min(perSM, limits.sharedBytes / (sharedBytes + 1024));
  return limits.sms * std::max<int64_t>(1, perSM);
}

Value constI32(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// The tiles a kernel loops over: the grid it asks for, their number, and
/// the CTA's first tile and stride (its program id and the launch's size).
struct TileSpace {
  Value dims[3];
  Value tiles, first, step;
  StringRef order;
};

/// The first barrier index of the TMA ring `loop` runs (its full wait, or
/// the producer's copies), if any.
std::optional<int64_t> ringOf(scf::ForOp loop) {
  for (Operation &op : *loop.getBody())
    if (isa<tile::AsyncWaitOp, tile::AsyncCopyOp>(op))
      if (auto first = op.getAttrOfType<IntegerAttr>(tile::kTmaBarrierAttrName))
        return first.getInt();
  return std::nullopt;
}

/// The iterations `loop` (positive step) runs.
Value tripCount(OpBuilder &b, Location loc, scf::ForOp loop) {
  Value span = arith::MaxSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, loop.getUpperBound(), loop.getLowerBound()),
      constI32(b, loc, 0));
  Value roundedUp = arith::AddIOp::create(
      b, loc, span,
      arith::SubIOp::create(b, loc, loop.getStep(), constI32(b, loc, 1)));
  return arith::DivUIOp::create(b, loc, roundedUp, loop.getStep());
}

/// The ops of `block` a loop over the tiles takes: all but its terminator
/// and a role's register count, which it sets once.
SmallVector<Operation *> tileOps(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    if (!isa<NVVM::SetMaxRegisterOp>(op))
      ops.push_back(&op);
  return ops;
}

/// Moves `ops` of `block` into a loop over the tiles of `space`, with
/// `program_id` and `num_programs` inside it the tile's coordinates and the
/// asked-for grid. The loop carries, per TMA ring its body runs, the blocks the
/// ring filled in the CTA's earlier tiles (`tile.tma_ring_counts`); `barrier`
/// ends each tile with a tile.barrier.
void loopOverTiles(func::FuncOp kernel, Block &block, ArrayRef<Operation *> ops,
                   const TileSpace &space, bool barrier) {
  // Each ring's loops, in order: the key loops one source loop was split
  // into share a ring (tile-tma-copies' shared-rings).
  SmallVector<int64_t> rings;
  SmallVector<SmallVector<scf::ForOp>> ringLoops;
  for (Operation *op : ops) {
    auto loop = dyn_cast<scf::ForOp>(op);
    std::optional<int64_t> ring = loop ? ringOf(loop) : std::nullopt;
    if (!ring)
      continue;
    auto *at = llvm::find(rings, *ring);
    if (at == rings.end()) {
      rings.push_back(*ring);
      ringLoops.emplace_back();
      at = rings.end() - 1;
    }
    ringLoops[at - rings.begin()].push_back(loop);
  }

  Location loc = kernel.getLoc();
  OpBuilder b(block.getTerminator());
  SmallVector<Value> none;
  if (!rings.empty())
    none.assign(rings.size(), constI32(b, loc, 0));
  auto loop =
      scf::ForOp::create(b, loc, space.first, space.tiles, space.step, none);
  if (!rings.empty())
    loop->setAttr(tile::kTmaRingCountsAttrName, b.getDenseI64ArrayAttr(rings));
  Block *tileBody = loop.getBody();
  // The builder's own yield, without iter_args: the counts' goes last.
  if (!tileBody->empty())
    tileBody->getTerminator()->erase();
  // Buffers and constants stay outside: allocations are the kernel's, not
  // a tile's, and constants need no recomputing.
  for (Operation *op : ops) {
    if (isa<tile::LocalAllocOp, arith::ConstantOp>(op))
      op->moveBefore(loop);
    else
      op->moveBefore(tileBody, tileBody->end());
  }
  b.setInsertionPointToEnd(tileBody);
  if (barrier)
    tile::BarrierOp::create(b, loc);
  // A ring's count before each of its loops after the first: the marked
  // sum goes right before the loop's prologue copies (the producer's, or a
  // single role's) or the loop itself, after what the earlier loop's last
  // blocks are still read by (the consumers' last P V).
  SmallVector<Value> counts;
  for (auto [n, loops] : llvm::enumerate(ringLoops)) {
    Value count = loop.getRegionIterArgs()[n];
    for (size_t m = 1; m < loops.size(); ++m) {
      Operation *start = loops[m];
      for (Operation *op = start->getPrevNode(); op != loops[m - 1];
           op = op->getPrevNode())
        if (auto attr =
                op->getAttrOfType<IntegerAttr>(tile::kTmaBarrierAttrName);
            attr && attr.getInt() == rings[n] && isa<tile::AsyncCopyOp>(op))
          start = op;
      OpBuilder before(start);
      auto base = arith::AddIOp::create(before, loc, count,
                                        tripCount(before, loc, loops[m - 1]));
      base->setAttr(tile::kTmaRingBaseAttrName,
                    before.getI64IntegerAttr(rings[n]));
      count = base;
    }
    scf::ForOp last = loops.back();
    OpBuilder after(last->getBlock(), ++Block::iterator(last));
    counts.push_back(
        arith::AddIOp::create(after, loc, count, tripCount(after, loc, last)));
  }
  scf::YieldOp::create(b, loc, counts);

  // The coordinates of tile t.
  b.setInsertionPointToStart(tileBody);
  Value t = loop.getInductionVar();
  Value coords[3];
  const Value *dims = space.dims;
  if (space.order == "longest-first") {
    Value inner = arith::MulIOp::create(b, loc, dims[1], dims[2]);
    Value rank = arith::DivSIOp::create(b, loc, t, inner);
    Value last = arith::SubIOp::create(b, loc, dims[0], constI32(b, loc, 1));
    coords[0] = arith::SubIOp::create(b, loc, last, rank);
    Value rest = arith::RemSIOp::create(b, loc, t, inner);
    coords[1] = arith::RemSIOp::create(b, loc, rest, dims[1]);
    coords[2] = arith::DivSIOp::create(b, loc, rest, dims[1]);
  } else {
    coords[0] = arith::RemSIOp::create(b, loc, t, dims[0]);
    Value rest = arith::DivSIOp::create(b, loc, t, dims[0]);
    coords[1] = arith::RemSIOp::create(b, loc, rest, dims[1]);
    coords[2] = arith::DivSIOp::create(b, loc, rest, dims[1]);
  }
  SmallVector<tile::ProgramIdOp> ids;
  SmallVector<tile::NumProgramsOp> sizes;
  loop.walk([&](tile::ProgramIdOp op) { ids.push_back(op); });
  loop.walk([&](tile::NumProgramsOp op) { sizes.push_back(op); });
  for (tile::ProgramIdOp op : ids) {
    op.replaceAllUsesWith(coords[op.getAxis()]);
    op.erase();
  }
  for (tile::NumProgramsOp op : sizes) {
    op.replaceAllUsesWith(dims[op.getAxis()]);
    op.erase();
  }
}

class TilePersistentPass
    : public flash::impl::TilePersistentBase<TilePersistentPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (schedule != "auto" && schedule != "static" &&
        schedule != "longest-first") {
      module.emitError() << "tile-persistent: unknown schedule '" << schedule
                         << "' (expected auto, static or longest-first)";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(tile::kGridAttrName) &&
          !func->hasAttr(tile::kPersistentAttrName))
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels)
      if (failed(makePersistent(module, kernel)))
        return signalPassFailure();
  }

private:
  StringRef scheduleOf(func::FuncOp kernel) const {
    if (schedule != "auto")
      return schedule;
    auto constants =
        kernel->getAttrOfType<DictionaryAttr>(tile::kConstantsAttrName);
    auto causal = constants ? dyn_cast_or_null<BoolAttr>(constants.get("CAUSAL"))
                            : BoolAttr();
    return causal && causal.getValue() ? "longest-first" : "static";
  }

  FailureOr<int64_t> ctasOf(ModuleOp module, func::FuncOp kernel) const {
    if (ctas > 0)
      return int64_t(ctas);
    auto arch = module->getAttrOfType<IntegerAttr>(tile::kArchAttrName);
    std::optional<SMLimits> limits =
        arch ? smLimits(arch.getInt()) : std::nullopt;
    if (!limits)
      return kernel.emitError()
             << "tile-persistent: no 'ctas' option and no known '"
             << tile::kArchAttrName
             << "' on the module to derive the CTA count from";
    auto warps = kernel->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName);
    auto bytes = kernel->getAttrOfType<IntegerAttr>(tile::kSharedBytesAttrName);
    return defaultCtas(*limits, 32 * (warps ? warps.getInt() : 1),
                       bytes ? bytes.getInt() : 0);
  }

  /// What a persistent kernel's TMA rings need: a producer warpgroup's
  /// rings keep their bytes to themselves (the producer fills the next
  /// tile's slots while the consumers still use their own buffers), and no
  /// ring is filled by cp.async (tile-allocate-shared, which keeps the
  /// rings' bytes, cannot tell those rings from the consumers' buffers).
  LogicalResult checkRings(func::FuncOp kernel) {
    SmallVector<tile::LocalAllocOp> rings, others;
    WalkResult cpAsync = kernel.walk([&](Operation *op) {
      if (op->hasAttr(tile::kCpAsyncBarrierAttrName))
        return WalkResult::interrupt();
      if (auto alloc = dyn_cast<tile::LocalAllocOp>(op)) {
        bool ring = llvm::any_of(alloc->getUsers(), [](Operation *user) {
          return isa<tile::AsyncCopyOp>(user) &&
                 user->hasAttr(tile::kTmaBarrierAttrName);
        });
        (ring ? rings : others).push_back(alloc);
      }
      return WalkResult::advance();
    });
    if (cpAsync.wasInterrupted())
      return kernel.emitError()
             << "a persistent kernel cannot carry a cp.async producer's "
                "rings from tile to tile (compile without --persistent)";
    if (!kernel->hasAttr(tile::kWarpSpecializeAttrName))
      return success();
    for (tile::LocalAllocOp ring : rings)
      for (tile::LocalAllocOp other : others) {
        if (!ring.getOffset() || !other.getOffset())
          return ring.emitError() << "a persistent kernel's buffers need "
                                     "their offsets (tile-allocate-shared)";
        int64_t at = *ring.getOffset(), otherAt = *other.getOffset();
        if (at >= otherAt + other.getType().getBytes() ||
            otherAt >= at + ring.getType().getBytes())
          continue;
        InFlightDiagnostic diag =
            other.emitError()
            << "shares bytes with a TMA ring whose producer fills the next "
               "tile's slots while the consumers still use this buffer "
               "(tile-allocate-shared{persistent-rings} keeps the rings' "
               "bytes apart)";
        diag.attachNote(ring.getLoc()) << "the ring's buffer";
        return diag;
      }
    return success();
  }

  LogicalResult makePersistent(ModuleOp module, func::FuncOp kernel) {
    if (!kernel.getBody().hasOneBlock())
      return kernel.emitError()
             << "a persistent kernel needs a single-block body";
    auto gridRef = kernel->getAttrOfType<FlatSymbolRefAttr>(tile::kGridAttrName);
    auto grid = module.lookupSymbol<func::FuncOp>(gridRef);
    if (!grid || !grid.getBody().hasOneBlock() ||
        !isa<func::ReturnOp>(grid.getBody().front().getTerminator()))
      return kernel.emitError() << "the grid function " << gridRef
                                << " must be one block ending in return";
    // Divisions may divide by zero (flash_attn's check that H_KV divides
    // H): the launch grid evaluates the same expressions first and refuses
    // such a launch, so the kernel's copy never divides by zero.
    for (Operation &op : grid.getBody().front().without_terminator())
      if (!isMemoryEffectFree(&op))
        return op.emitError()
               << "a persistent kernel clones its grid function, which must "
                  "be free of memory effects: '"
               << op.getName() << "' is not";
    if (failed(checkRings(kernel)))
      return failure();
    FailureOr<int64_t> count = ctasOf(module, kernel);
    if (failed(count))
      return failure();

    // The grid the kernel asks for, computed in the kernel from its
    // arguments as the grid function computes it.
    Block &body = kernel.getBody().front();
    SmallVector<Operation *> original = tileOps(body);
    Location loc = kernel.getLoc();
    OpBuilder b(&body, body.begin());
    IRMapping map;
    map.map(grid.getArguments(), kernel.getArguments());
    for (Operation &op : grid.getBody().front().without_terminator())
      b.clone(op, map);
    auto gridRet = cast<func::ReturnOp>(grid.getBody().front().getTerminator());
    TileSpace space;
    space.order = scheduleOf(kernel);
    for (auto [i, v] : llvm::enumerate(gridRet.getOperands()))
      space.dims[i] = map.lookupOrDefault(v);
    space.tiles = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, space.dims[0], space.dims[1]),
        space.dims[2]);
    space.first = tile::ProgramIdOp::create(b, loc, b.getI32Type(), 0);
    space.step = tile::NumProgramsOp::create(b, loc, b.getI32Type(), 0);

    // A warp-specialized kernel's roles each loop over the tiles on their
    // own, below their register counts: the producer runs ahead into the
    // next tile's key blocks while the consumers finish this one, held back
    // only by the rings' empty barriers. The consumers end each tile with
    // their own barrier (named barrier 1, not the producer's), before the
    // next tile's copies reuse their buffers (Q's).
    scf::IfOp roles;
    for (auto op : body.getOps<scf::IfOp>())
      if (op->hasAttr(tile::kWarpRolesAttrName))
        roles = op;
    if (roles) {
      Block &consumers = roles.getElseRegion().front();
      Block *producer = &roles.getThenRegion().front();
      // TMA copies: warp 0 of the producer warpgroup issues them.
      auto issuers = producer->getOps<scf::IfOp>();
      if (!issuers.empty())
        producer = &(*issuers.begin()).getThenRegion().front();
      loopOverTiles(kernel, consumers, tileOps(consumers), space,
                    /*barrier=*/true);
      loopOverTiles(kernel, *producer, tileOps(*producer), space,
                    /*barrier=*/false);
    } else {
      loopOverTiles(kernel, body, original, space, /*barrier=*/true);
    }
    WalkResult stray = kernel.walk([&](Operation *op) {
      bool id = isa<tile::ProgramIdOp, tile::NumProgramsOp>(op) &&
                op != space.first.getDefiningOp() &&
                op != space.step.getDefiningOp();
      return id ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (stray.wasInterrupted())
      return kernel.emitError() << "a persistent kernel's program ids must "
                                   "lie inside its loops over the tiles";
    kernel->setAttr(tile::kPersistentAttrName, b.getStringAttr(space.order));

    // The launch: one CTA per tile up to `count`.
    b.setInsertionPoint(gridRet);
    Location gridLoc = grid.getLoc();
    Value all = arith::MulIOp::create(
        b, gridLoc,
        arith::MulIOp::create(b, gridLoc, gridRet.getOperand(0),
                              gridRet.getOperand(1)),
        gridRet.getOperand(2));
    Value launched =
        arith::MinSIOp::create(b, gridLoc, all, constI32(b, gridLoc, *count));
    Value one = constI32(b, gridLoc, 1);
    gridRet->setOperands({launched, one, one});
    return success();
  }
};
} // namespace

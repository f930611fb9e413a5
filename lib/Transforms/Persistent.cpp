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
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/PersistentAttributes.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
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

  LogicalResult makePersistent(ModuleOp module, func::FuncOp kernel) {
    if (kernel->hasAttr(tile::kTmaBarriersAttrName))
      return kernel.emitError()
             << "a persistent kernel cannot use TMA copies: their mbarrier "
                "phases follow the key loop's iteration and would restart "
                "with every tile (compile for sm_90 or sm_80, or without "
                "--persistent)";
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
    FailureOr<int64_t> count = ctasOf(module, kernel);
    if (failed(count))
      return failure();
    StringRef order = scheduleOf(kernel);

    Block &body = kernel.getBody().front();
    Operation *ret = body.getTerminator();
    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);
    SmallVector<tile::ProgramIdOp> ids;
    SmallVector<tile::NumProgramsOp> sizes;
    kernel.walk([&](tile::ProgramIdOp op) { ids.push_back(op); });
    kernel.walk([&](tile::NumProgramsOp op) { sizes.push_back(op); });

    // The grid the kernel asks for, computed in the kernel from its
    // arguments as the grid function computes it.
    Location loc = kernel.getLoc();
    OpBuilder b(&body, body.begin());
    IRMapping map;
    map.map(grid.getArguments(), kernel.getArguments());
    for (Operation &op : grid.getBody().front().without_terminator())
      b.clone(op, map);
    auto gridRet = cast<func::ReturnOp>(grid.getBody().front().getTerminator());
    SmallVector<Value, 3> dims;
    for (Value v : gridRet.getOperands())
      dims.push_back(map.lookupOrDefault(v));
    Value tiles = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, dims[0], dims[1]), dims[2]);
    Value first = tile::ProgramIdOp::create(b, loc, b.getI32Type(), 0);
    Value step = tile::NumProgramsOp::create(b, loc, b.getI32Type(), 0);

    b.setInsertionPoint(ret);
    auto loop = scf::ForOp::create(b, loc, first, tiles, step);
    Operation *yield = loop.getBody()->getTerminator();
    // Buffers and constants stay outside: allocations are the kernel's, not
    // a tile's, and constants need no recomputing.
    for (Operation *op : original) {
      if (isa<tile::LocalAllocOp, arith::ConstantOp>(op))
        op->moveBefore(loop);
      else
        op->moveBefore(yield);
    }
    b.setInsertionPoint(yield);
    tile::BarrierOp::create(b, loc);

    // The coordinates of tile t.
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value coords[3];
    if (order == "longest-first") {
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
    for (tile::ProgramIdOp op : ids) {
      op.replaceAllUsesWith(coords[op.getAxis()]);
      op.erase();
    }
    for (tile::NumProgramsOp op : sizes) {
      op.replaceAllUsesWith(dims[op.getAxis()]);
      op.erase();
    }
    kernel->setAttr(tile::kPersistentAttrName, b.getStringAttr(order));

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

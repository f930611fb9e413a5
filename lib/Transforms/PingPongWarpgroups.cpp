//===- PingPongWarpgroups.cpp - consumer warpgroups take turns on wgmma ----===//
//
// FlashAttention-3's inter-warpgroup schedule. In a warp-specialized kernel
// the N consumer warpgroups (2 or 3) run the same key loop on their own
// rows; left alone, they issue their GEMMs at the same time and then all
// compute their softmax while the tensor cores idle. Here each GEMM section
// (a run of warpgroup MMAs with nothing between them that reads their
// results: after tile-overlap-wgmma, block k's Q K^T and block k - 1's P V)
// is bracketed by named barriers that pass a token around the warpgroups:
//
//   bar.sync    kPingPongBarrierId + g,           256   // my turn
//   <the section's wgmmas>
//   bar.arrive  kPingPongBarrierId + (g + 1) % N, 256   // the next one's
//
// so one warpgroup's softmax runs under the other's GEMMs. Warpgroup N - 1
// hands warpgroup 0 the first token at the consumers' entry, and warpgroup
// 0 takes back the last one at their exit (every phase of every barrier
// completes: the barriers end idle). Each barrier counts the 128 threads
// that wait on it and the 128 that arrive.
//
// Every warpgroup must run the same sections the same number of times, so
// the sections' enclosing loops and conditions must not depend on the
// thread index. Kernels with one consumer warpgroup, without a role split,
// or whose sections sit under other control flow are left alone (a remark
// with `remarks`); so are, with `head-dims`, kernels of other head dims
// (flashc turns it on at d128 alone: docs/perf.md, "Ping-pong between
// consumer warpgroups").
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace flash {
#define GEN_PASS_DEF_TILEPINGPONGWARPGROUPS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {

constexpr int64_t kWarpgroupThreads = 128;

bool isWarpgroupMma(Operation *op) {
  auto mma = dyn_cast<MmaOp>(op);
  if (!mma)
    return false;
  auto layout = dyn_cast_if_present<MmaLayoutAttr>(
      cast<RankedTensorType>(mma.getAcc().getType()).getEncoding());
  return layout && isWarpgroupShaped(layout);
}

/// A run of warpgroup MMAs in one block: [first, last].
struct Section {
  Operation *first, *last;
};

/// The block's sections: an MMA joins the open section when it reads no
/// result of the section's MMAs and nothing since the section's first MMA
/// does or has regions or memory effects other than reads (a shared-memory
/// operand's `tile.local_load`).
void collectSections(Block &block, SmallVectorImpl<Section> &sections) {
  std::optional<Section> open;
  llvm::SmallPtrSet<Value, 8> results;
  auto close = [&] {
    if (open)
      sections.push_back(*open);
    open.reset();
    results.clear();
  };
  for (Operation &op : block) {
    if (isWarpgroupMma(&op)) {
      bool reads = llvm::any_of(op.getOperands(),
                                [&](Value v) { return results.contains(v); });
      if (!open || reads) {
        close();
        open = Section{&op, &op};
      }
      open->last = &op;
      results.insert(op.getResult(0));
      continue;
    }
    if (!open)
      continue;
    bool reads = llvm::any_of(op.getOperands(),
                              [&](Value v) { return results.contains(v); });
    bool quiet = op.getNumRegions() == 0 &&
                 (isMemoryEffectFree(&op) || isa<LocalLoadOp>(op));
    if (reads || !quiet)
      close();
  }
  close();
}

/// Whether `value` is computed from the thread index (an NVVM register
/// read or an op that does not compute scalars from scalars).
bool dependsOnThread(Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        continue;
      // An induction variable: its loop's bounds decide.
      if (auto loop = dyn_cast<scf::ForOp>(owner);
          loop && arg == loop.getInductionVar()) {
        work.append({loop.getLowerBound(), loop.getUpperBound(),
                     loop.getStep()});
        continue;
      }
      return true;
    }
    Operation *def = v.getDefiningOp();
    if (def->getName().getDialectNamespace() == "nvvm" || def->getNumRegions() ||
        !isMemoryEffectFree(def) || !isa<IntegerType, IndexType>(v.getType()))
      return true;
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  return false;
}

/// Why the sections cannot take turns, or an empty string.
std::string checkUniform(ArrayRef<Section> sections, Block &consumers) {
  Region &region = *consumers.getParent();
  for (const Section &s : sections) {
    for (Operation *op = s.first->getParentOp(); op != region.getParentOp();
         op = op->getParentOp()) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (Value v : {loop.getLowerBound(), loop.getUpperBound(),
                        loop.getStep()})
          if (dependsOnThread(v))
            return "a GEMM in a loop whose bounds may differ between "
                   "warpgroups";
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        if (dependsOnThread(branch.getCondition()))
          return "a GEMM under a condition that may differ between "
                 "warpgroups";
        continue;
      }
      return "a GEMM inside '" + op->getName().getStringRef().str() + "'";
    }
  }
  return "";
}

/// Moves the single-use `tile.local_load`s of the section's MMA operands
/// that precede it in its block down to its first MMA, where nothing that
/// writes memory lies in between; returns the first op of the section with
/// them.
Operation *gatherOperandLoads(const Section &s) {
  Operation *turn = s.first;
  SmallVector<Operation *> loads;
  for (Operation *op = s.first; op != s.last->getNextNode();
       op = op->getNextNode())
    for (Value v : op->getOperands())
      if (auto load = v.getDefiningOp<LocalLoadOp>();
          load && load->getBlock() == s.first->getBlock() &&
          load->isBeforeInBlock(s.first) && load->hasOneUse())
        loads.push_back(load);
  llvm::sort(loads, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *load : llvm::reverse(loads)) {
    bool writes = false;
    for (Operation *op = load->getNextNode(); op != turn && !writes;
         op = op->getNextNode()) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      writes = !effects ? !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                              op->getNumRegions() != 0
                        : effects.hasEffect<MemoryEffects::Write>();
    }
    if (writes)
      continue;
    load->moveBefore(turn);
    turn = load;
  }
  return turn;
}

/// The head dim: the longest contraction of a warpgroup MMA from a
/// constant accumulator (S = Q K^T).
std::optional<int64_t> headDim(func::FuncOp func) {
  std::optional<int64_t> d;
  func.walk([&](MmaOp mma) {
    if (!isWarpgroupMma(mma) || !matchPattern(mma.getAcc(), m_Constant()))
      return;
    int64_t k = cast<RankedTensorType>(mma.getA().getType()).getShape()[1];
    d = std::max(d.value_or(0), k);
  });
  return d;
}

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

struct TilePingPongWarpgroups
    : flash::impl::TilePingPongWarpgroupsBase<TilePingPongWarpgroups> {
  using Base::Base;

  void leave(func::FuncOp func, const Twine &why) {
    if (remarks)
      func.emitRemark() << "consumer warpgroups do not take turns: " << why;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!targetsWgmma(func) ||
        !func.walk([](Operation *op) {
               return isWarpgroupMma(op) ? WalkResult::interrupt()
                                         : WalkResult::advance();
             }).wasInterrupted())
      return;
    auto split = func->getAttrOfType<DictionaryAttr>(kWarpSpecializeAttrName);
    if (!split)
      return leave(func, "the kernel has no producer warpgroup");
    auto warps = split.getAs<IntegerAttr>("consumer_warps");
    int64_t groups = warps ? warps.getInt() / 4 : 0;
    if (!warps || warps.getInt() % 4 != 0 || groups < 2)
      return leave(func, "one consumer warpgroup");
    if (kPingPongBarrierId + groups > 16)
      return leave(func, "not enough named barriers");
    scf::IfOp roles;
    func.walk([&](scf::IfOp op) {
      if (op->hasAttr(kWarpRolesAttrName))
        roles = op;
    });
    if (!roles || roles.getElseRegion().empty())
      return leave(func, "no role split");
    Block &consumers = roles.getElseRegion().front();

    SmallVector<Section> sections;
    bool outside = false;
    func.walk([&](Block *block) {
      if (!consumers.getParent()->isAncestor(block->getParent())) {
        outside |= llvm::any_of(
            *block, [](Operation &op) { return isWarpgroupMma(&op); });
        return;
      }
      collectSections(*block, sections);
    });
    if (outside)
      return leave(func, "a GEMM outside the consumers' side");
    if (sections.empty())
      return leave(func, "the consumers issue no GEMM");
    // An e4m3 P V transposes V in shared memory by all the consumers between
    // two of their barriers: inside one warpgroup's turn it would wait for
    // the others forever.
    WalkResult fp8 = roles.getElseRegion().walk([](MmaOp mma) {
      return getElementTypeOrSelf(mma.getB().getType()).getIntOrFloatBitWidth() == 8
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (fp8.wasInterrupted())
      return leave(func, "an 8-bit GEMM (its V transpose syncs all consumers)");
    std::string why = checkUniform(sections, consumers);
    if (!why.empty())
      return leave(func, why);
    if (!headDims.empty()) {
      std::optional<int64_t> d = headDim(func);
      if (!d || !llvm::is_contained(headDims, *d))
        return leave(func, d ? "head dim " + std::to_string(*d) +
                                   " is not one of the turns' head dims"
                             : std::string("no S = Q K^T to read the head "
                                           "dim from"));
    }

    // The warpgroup's own barrier and the next one's, at the consumers'
    // entry (the producer's threads come after theirs).
    Location loc = roles.getLoc();
    // After the register count's increase, which the split puts first.
    Block::iterator entry = consumers.begin();
    while (isa<NVVM::SetMaxRegisterOp>(*entry))
      ++entry;
    OpBuilder b(&consumers, entry);
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value group = arith::DivUIOp::create(b, loc, tid,
                                         i32(b, loc, kWarpgroupThreads));
    Value base = i32(b, loc, kPingPongBarrierId);
    Value mine = arith::AddIOp::create(b, loc, base, group);
    Value following = arith::RemUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, group, i32(b, loc, 1)),
        i32(b, loc, groups));
    Value next = arith::AddIOp::create(b, loc, base, following);
    Value pair = i32(b, loc, 2 * kWarpgroupThreads);

    // The first token: the last warpgroup hands it to warpgroup 0.
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                       i32(b, loc, groups - 1));
    auto start = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&start.getThenRegion().front());
      NVVM::BarrierArriveOp::create(b, loc, base, pair);
    }

    // The shared-memory reads of a section's operands go right before it,
    // behind the turn's wait: convert-tile-to-simt fuses such a read into
    // the wgmma only when no op with effects sits between them.
    SmallVector<Operation *> turns;
    for (const Section &s : sections)
      turns.push_back(gatherOperandLoads(s));
    for (auto [s, turn] : llvm::zip(sections, turns)) {
      b.setInsertionPoint(turn);
      NVVM::BarrierOp::create(b, s.first->getLoc(), Type(), mine, pair,
                              NVVM::BarrierReductionAttr(), Value());
      b.setInsertionPointAfter(s.last);
      auto pass = NVVM::BarrierArriveOp::create(b, s.last->getLoc(), next, pair);
      // simt-defer-wgmma-waits moves the section's waits past it.
      pass->setAttr(kPingPongAttrName, b.getUnitAttr());
    }

    // The last token: warpgroup 0 takes it back.
    b.setInsertionPoint(consumers.getTerminator());
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        group, i32(b, loc, 0));
    auto end = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&end.getThenRegion().front());
    NVVM::BarrierOp::create(b, loc, Type(), base, pair,
                            NVVM::BarrierReductionAttr(), Value());

    roles->setAttr(kPingPongAttrName, b.getI64IntegerAttr(groups));
    if (remarks)
      func.emitRemark() << "consumer warpgroups take turns: " << groups
                        << " warpgroups, named barriers " << kPingPongBarrierId
                        << ".." << kPingPongBarrierId + groups - 1 << ", "
                        << sections.size() << " GEMM sections";
  }
};

} // namespace

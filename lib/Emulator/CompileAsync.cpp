//===- CompileAsync.cpp - mbarrier, named barrier, elect, fence, TMA ops --===//
//
// The sm_90 synchronization and copy ops (AsyncExec.h runs them): the
// mbarrier family, bar.sync / bar.arrive with a thread count, elect.sync,
// fence.mbarrier_init, TMA tensor loads and stores
// with their bulk async-groups, and the address-space casts between
// shared::cta and shared::cluster (one CTA per cluster: the same window)
// and between global and generic pointers.
//
//===----------------------------------------------------------------------===//

#include "AsyncExec.h"
#include "AsyncUnit.h"
#include "ExecHandlers.h"
#include "Program.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace flash::emu {

/// The value id of `v`, or -1 for a null (absent optional) operand.
static int32_t idOrNone(ProgramBuilder &b, Value v) {
  return v ? b.idOf(v) : -1;
}

static bool compileMbarrierInit(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::MBarrierInitOp>(op);
  Instr I = ProgramBuilder::instr(op, execMbarrierInit);
  I.a = b.idOf(o.getAddr());
  I.b = b.idOf(o.getCount());
  I.imm2 = idOrNone(b, o.getPredicate());
  b.emit(I);
  return true;
}

static bool compileMbarrierInval(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execMbarrierInval);
  I.a = b.idOf(cast<NVVM::MBarrierInvalOp>(op).getAddr());
  b.emit(I);
  return true;
}

/// arrive / arrive_drop / arrive.expect_tx: (addr, count, txcount,
/// predicate, result).
static bool compileArriveOf(ProgramBuilder &b, Operation *op, Value addr,
                            Value count, Value tx, Value pred, Value res,
                            bool drop) {
  Instr I = ProgramBuilder::instr(op, execMbarrierArrive);
  I.a = b.idOf(addr);
  I.b = idOrNone(b, count);
  I.c = idOrNone(b, tx);
  I.imm = drop;
  I.imm2 = idOrNone(b, pred);
  if (res && !b.define(op, res, I.res))
    return false;
  b.emit(I);
  return true;
}

static bool compileMbarrierArrive(ProgramBuilder &b, Operation *op) {
  if (auto o = dyn_cast<NVVM::MBarrierArriveOp>(op))
    return compileArriveOf(b, op, o.getAddr(), o.getCount(), {}, {},
                           o.getRes(), false);
  if (auto o = dyn_cast<NVVM::MBarrierArriveDropOp>(op))
    return compileArriveOf(b, op, o.getAddr(), o.getCount(), {}, {},
                           o.getRes(), true);
  if (auto o = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op))
    return compileArriveOf(b, op, o.getAddr(), {}, o.getTxcount(),
                           o.getPredicate(), o.getRes(), false);
  auto o = cast<NVVM::MBarrierArriveDropExpectTxOp>(op);
  return compileArriveOf(b, op, o.getAddr(), {}, o.getTxcount(), {},
                         o.getRes(), true);
}

static bool compileMbarrierTx(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execMbarrierTx);
  if (auto o = dyn_cast<NVVM::MBarrierExpectTxOp>(op)) {
    I.a = b.idOf(o.getAddr());
    I.b = b.idOf(o.getTxcount());
  } else {
    auto c = cast<NVVM::MBarrierCompleteTxOp>(op);
    I.a = b.idOf(c.getAddr());
    I.b = b.idOf(c.getTxcount());
    I.imm = 1;
  }
  b.emit(I);
  return true;
}

static bool compileMbarrierWait(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execMbarrierWait);
  Value state;
  if (auto o = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
    // The op is the spin loop: it returns once the phase has completed.
    I.a = b.idOf(o.getAddr());
    I.b = b.idOf(o.getPhase());
    I.imm = 1;
    b.emit(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::MBarrierTestWaitOp>(op)) {
    I.a = b.idOf(o.getAddr());
    state = o.getStateOrPhase();
  } else {
    auto w = cast<NVVM::MBarrierTryWaitOp>(op);
    I.a = b.idOf(w.getAddr());
    state = w.getStateOrPhase();
  }
  I.b = b.idOf(state);
  I.imm2 = state.getType().isInteger(64);
  if (!b.defineResult(I))
    return false;
  b.emit(I);
  return true;
}

bool compileNamedBarrier(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execNamedBarrier);
  if (auto o = dyn_cast<NVVM::BarrierOp>(op)) {
    if (op->getNumResults() || o.getReductionOp())
      return b.fail(op, "barriers with a reduction are not supported");
    I.a = idOrNone(b, o.getBarrierId());
    I.b = idOrNone(b, o.getNumberOfThreads());
    I.imm = 1;
  } else {
    auto a = cast<NVVM::BarrierArriveOp>(op);
    I.a = idOrNone(b, a.getBarrierId());
    I.b = b.idOf(a.getNumberOfThreads());
  }
  b.emit(I);
  return true;
}

static bool compileSetMaxNReg(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::SetMaxRegisterOp>(op);
  Instr I = ProgramBuilder::instr(op, execSetMaxNReg);
  I.imm = o.getRegCount();
  I.imm2 = o.getAction() == NVVM::SetMaxRegisterAction::increase;
  b.emit(I);
  return true;
}

static bool compileElect(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::ElectSyncOp>(op);
  Instr I = ProgramBuilder::instr(op, execElect);
  I.a = idOrNone(b, o.getMembermask());
  if (!b.defineResult(I))
    return false;
  b.emit(I);
  return true;
}

/// fence.mbarrier_init publishes inits to the cluster's async proxy: with
/// one CTA per cluster and the TMA engine reading barrier state directly,
/// there is nothing to order.
static bool compileFenceMbarrierInit(ProgramBuilder &, Operation *) {
  return true;
}

static bool compileTmaLoad(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
  if (o.getMode() != NVVM::TMALoadMode::TILE || !o.getIm2colOffsets().empty())
    return b.fail(op, "only tile-mode TMA loads are supported");
  if (o.getMulticastMask() || o.getGroup())
    return b.fail(op, "multicast and CTA-group TMA loads are not supported "
                      "(one CTA per cluster)");
  size_t rank = o.getCoordinates().size();
  if (rank < 1 || rank > kTmaMaxRank)
    return b.fail(op, "a TMA box has 1 to 5 coordinates");
  Instr I = ProgramBuilder::instr(op, execTmaLoad);
  std::vector<int32_t> ops = {b.idOf(o.getDstMem()),
                              b.idOf(o.getTmaDescriptor()),
                              b.idOf(o.getMbar())};
  for (Value c : o.getCoordinates())
    ops.push_back(b.idOf(c));
  I.aux = b.program.lists.size();
  b.program.lists.push_back(std::move(ops));
  I.imm2 = idOrNone(b, o.getPredicate());
  b.emit(I);
  return true;
}

/// A TMA store, or with `add` a reduce-add (Instr::imm = 1), of the box
/// at shared `src` to `coords` through `map`.
static bool compileBoxFromShared(ProgramBuilder &b, Operation *op, Value map,
                                 Value src, ValueRange coords, Value pred,
                                 bool add) {
  if (coords.empty() || coords.size() > kTmaMaxRank)
    return b.fail(op, "a TMA box has 1 to 5 coordinates");
  Instr I = ProgramBuilder::instr(op, execTmaStore);
  std::vector<int32_t> ops = {b.idOf(map), b.idOf(src)};
  for (Value c : coords)
    ops.push_back(b.idOf(c));
  I.aux = b.program.lists.size();
  b.program.lists.push_back(std::move(ops));
  I.imm = add;
  I.imm2 = idOrNone(b, pred);
  b.emit(I);
  return true;
}

static bool compileTmaStore(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(op);
  if (o.getMode() != NVVM::TMAStoreMode::TILE)
    return b.fail(op, "only tile-mode TMA stores are supported");
  return compileBoxFromShared(b, op, o.getTmaDescriptor(), o.getSrcMem(),
                              o.getCoordinates(), o.getPredicate(),
                              /*add=*/false);
}

/// Its f32 sums round in the order the CTAs add, as atomicrmw fadd's do:
/// the launch runs them in grid order.
static bool compileTmaReduce(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::CpAsyncBulkTensorReduceOp>(op);
  if (o.getMode() != NVVM::TMAStoreMode::TILE ||
      o.getRedKind() != NVVM::TMAReduxKind::ADD)
    return b.fail(op, "only tile-mode TMA reduce-adds are supported");
  b.program.serialCTAs = true;
  return compileBoxFromShared(b, op, o.getTmaDescriptor(), o.getSrcMem(),
                              o.getCoordinates(), Value(), /*add=*/true);
}

static bool compileCpAsyncArrive(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::CpAsyncMBarrierArriveOp>(op);
  Instr I = ProgramBuilder::instr(op, execCpAsyncArrive);
  I.a = b.idOf(o.getAddr());
  I.imm = o.getNoinc();
  b.emit(I);
  return true;
}

static bool compileBulkCommit(ProgramBuilder &b, Operation *op) {
  b.emit(ProgramBuilder::instr(op, execBulkCommit));
  return true;
}

static bool compileBulkWait(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execBulkWait);
  I.imm = cast<NVVM::CpAsyncBulkWaitGroupOp>(op).getGroup();
  b.emit(I);
  return true;
}

/// Pointers keep their value across shared::cta -> shared::cluster and
/// global <-> generic casts; other casts would need the generic window.
static bool compileAddrSpaceCast(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::AddrSpaceCastOp>(op);
  auto space = [](Type t) {
    return cast<LLVM::LLVMPointerType>(t).getAddressSpace();
  };
  unsigned from = space(o.getArg().getType()), to = space(o.getType());
  bool shared = (from == 3 || from == 7) && (to == 3 || to == 7);
  bool global = (from == 0 || from == 1) && (to == 0 || to == 1);
  if (!shared && !global)
    return b.fail(op, "only casts between shared::cta and shared::cluster, "
                      "or global and generic, pointers are supported");
  return b.emitMove(op);
}

void addAsyncOps(OpHandlers &handlers) {
  handlers.add<NVVM::MBarrierInitOp>(compileMbarrierInit);
  handlers.add<NVVM::MBarrierInvalOp>(compileMbarrierInval);
  handlers.add<NVVM::MBarrierArriveOp, NVVM::MBarrierArriveDropOp,
               NVVM::MBarrierArriveExpectTxOp,
               NVVM::MBarrierArriveDropExpectTxOp>(compileMbarrierArrive);
  handlers.add<NVVM::MBarrierExpectTxOp, NVVM::MBarrierCompleteTxOp>(
      compileMbarrierTx);
  handlers.add<NVVM::MBarrierTryWaitParityOp, NVVM::MBarrierTestWaitOp,
               NVVM::MBarrierTryWaitOp>(compileMbarrierWait);
  handlers.add<NVVM::BarrierArriveOp>(compileNamedBarrier);
  handlers.add<NVVM::ElectSyncOp>(compileElect);
  handlers.add<NVVM::SetMaxRegisterOp>(compileSetMaxNReg);
  handlers.add<NVVM::FenceMbarrierInitOp>(compileFenceMbarrierInit);
  handlers.add<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(compileTmaLoad);
  handlers.add<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(compileTmaStore);
  handlers.add<NVVM::CpAsyncBulkTensorReduceOp>(compileTmaReduce);
  handlers.add<NVVM::CpAsyncBulkCommitGroupOp>(compileBulkCommit);
  handlers.add<NVVM::CpAsyncMBarrierArriveOp>(compileCpAsyncArrive);
  handlers.add<NVVM::CpAsyncBulkWaitGroupOp>(compileBulkWait);
  handlers.add<LLVM::AddrSpaceCastOp>(compileAddrSpaceCast);
}

} // namespace flash::emu

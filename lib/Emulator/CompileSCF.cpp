//===- CompileSCF.cpp - scf.if, scf.for, scf.yield, cf.assert -------------===//
//
// A structured op is one instruction followed by its regions' code; its
// Instr::next skips them, and its side table (IfInfo, ForInfo) holds the
// regions' index ranges and the values that flow in and out.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Program.h"

#include "flashc/Dialect/Tile/TmaAttributes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace flash::emu {

static std::vector<int32_t> idsOf(ProgramBuilder &b, ValueRange vs) {
  std::vector<int32_t> ids;
  for (Value v : vs)
    ids.push_back(b.idOf(v));
  return ids;
}

static bool compileIf(ProgramBuilder &b, Operation *op) {
  auto o = cast<scf::IfOp>(op);
  Instr I = ProgramBuilder::instr(op, execIf);
  I.a = b.idOf(o.getCondition());
  if (b.val(I.a).n != 1)
    return b.fail(op, "vector condition", Error::Kind::Internal);
  IfInfo info;
  if (!b.defineAll(op, op->getResults(), info.results))
    return false;
  info.roles = op->hasAttr(flash::tile::kWarpRolesAttrName);
  if (info.roles && (o.getElseRegion().empty() || op->getNumResults()))
    return b.fail(op, "a role split needs both sides and no results");
  if (auto groups =
          op->getAttrOfType<IntegerAttr>(flash::tile::kPingPongAttrName)) {
    if (!info.roles || groups.getInt() < 1 || groups.getInt() > 4)
      return b.fail(op, "`tile.pingpong` needs a role split of 1 to 4 "
                        "consumer warpgroups");
    info.consumerGroups = groups.getInt();
  }
  I.aux = b.program.ifs.size();
  b.program.ifs.emplace_back();
  uint32_t at = b.emit(I);
  info.thenBegin = b.here();
  if (!b.compileRegion(o.getThenRegion().front()))
    return false;
  info.thenEnd = b.here();
  info.thenYield = idsOf(b, o.thenYield().getOperands());
  info.elseBegin = info.elseEnd = b.here();
  if (!o.getElseRegion().empty()) {
    if (!b.compileRegion(o.getElseRegion().front()))
      return false;
    info.elseEnd = b.here();
    info.elseYield = idsOf(b, o.elseYield().getOperands());
  }
  b.program.code[at].next = info.elseEnd;
  b.program.ifs[I.aux] = std::move(info);
  return true;
}

static bool compileFor(ProgramBuilder &b, Operation *op) {
  auto o = cast<scf::ForOp>(op);
  Instr I = ProgramBuilder::instr(op, execFor);
  ForInfo info;
  info.lb = b.idOf(o.getLowerBound());
  info.ub = b.idOf(o.getUpperBound());
  info.step = b.idOf(o.getStep());
  info.unsignedCmp = o.getUnsignedCmp();
  info.inits = idsOf(b, o.getInitArgs());
  if (!b.define(op, o.getInductionVar(), info.iv))
    return false;
  if (!b.defineAll(op, o.getRegionIterArgs(), info.iterArgs) ||
      !b.defineAll(op, o.getResults(), info.results))
    return false;
  I.aux = b.program.fors.size();
  b.program.fors.emplace_back();
  uint32_t at = b.emit(I);
  info.bodyBegin = b.here();
  if (!b.compileRegion(*o.getBody()))
    return false;
  info.bodyEnd = b.here();
  info.yields = idsOf(b, o.getBody()->getTerminator()->getOperands());
  b.program.code[at].next = info.bodyEnd;
  b.program.fors[I.aux] = std::move(info);
  return true;
}

/// scf.yield: its operands are read by the parent (IfInfo, ForInfo).
static bool compileYield(ProgramBuilder &, Operation *) { return true; }

/// cf.assert (a device_assert): condition a; the message is the op's.
static bool compileAssert(ProgramBuilder &b, Operation *op) {
  auto o = cast<cf::AssertOp>(op);
  Instr I = ProgramBuilder::instr(op, execAssert);
  I.a = b.idOf(o.getArg());
  if (b.val(I.a).n != 1)
    return b.fail(op, "vector condition", Error::Kind::Internal);
  b.emit(I);
  return true;
}

void addSCFOps(OpHandlers &handlers) {
  handlers.add<cf::AssertOp>(compileAssert);
  handlers.add<scf::IfOp>(compileIf);
  handlers.add<scf::ForOp>(compileFor);
  handlers.add<scf::YieldOp>(compileYield);
}

} // namespace flash::emu

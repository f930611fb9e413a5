//===- CompileVector.cpp - vector dialect ops -----------------------------===//
//
// 1-D vectors only: a value's elements are its cells (ValueModel.h), so
// every vector op here is a move of whole element columns.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Program.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace flash::emu {

static bool compileBroadcast(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execBroadcast);
  I.a = b.idOf(op->getOperand(0));
  if (!b.defineResult(I))
    return false;
  if (b.val(I.a).n != 1 && b.val(I.a).n != b.val(I.res).n)
    return b.fail(op, "unsupported broadcast shape");
  b.emit(I);
  return true;
}

static bool compileSplat(ProgramBuilder &b, Operation *op) {
  return b.emitMove(op);
}

static bool compileFromElements(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execFromElements);
  if (!b.defineResult(I))
    return false;
  std::vector<int32_t> ops;
  for (Value v : op->getOperands())
    ops.push_back(b.idOf(v));
  I.aux = b.program.lists.size();
  b.program.lists.push_back(std::move(ops));
  b.emit(I);
  return true;
}

/// Defines the result, then sets the 1-D position of an extract or insert
/// (I.imm, or I.b with I.imm = -1 when dynamic).
template <typename OpTy>
static bool compilePosition(ProgramBuilder &b, OpTy o, Instr &I,
                            const char *what) {
  if (!b.defineResult(I))
    return false;
  auto pos = o.getStaticPosition();
  if (pos.size() != 1)
    return b.fail(o, std::string("only 1-D ") + what + " are supported");
  if (pos[0] == ShapedType::kDynamic) {
    I.b = b.idOf(o.getDynamicPosition()[0]);
    I.imm = -1;
  } else {
    I.imm = pos[0];
  }
  b.emit(I);
  return true;
}

static bool compileExtract(ProgramBuilder &b, Operation *op) {
  auto o = cast<vector::ExtractOp>(op);
  Instr I = ProgramBuilder::instr(op, execExtract);
  I.a = b.idOf(o.getSource());
  return compilePosition(b, o, I, "extracts");
}

static bool compileInsert(ProgramBuilder &b, Operation *op) {
  auto o = cast<vector::InsertOp>(op);
  Instr I = ProgramBuilder::instr(op, execInsert);
  I.a = b.idOf(o.getValueToStore());
  I.c = b.idOf(o.getDest());
  return compilePosition(b, o, I, "inserts");
}

static bool compileShuffle(ProgramBuilder &b, Operation *op) {
  auto o = cast<vector::ShuffleOp>(op);
  Instr I = ProgramBuilder::instr(op, execShuffle);
  I.a = b.idOf(o.getV1());
  I.b = b.idOf(o.getV2());
  if (!b.defineResult(I))
    return false;
  I.aux = b.program.ilists.size();
  b.program.ilists.emplace_back(o.getMask().begin(), o.getMask().end());
  b.emit(I);
  return true;
}

void addVectorOps(OpHandlers &handlers) {
  handlers.add<vector::BroadcastOp>(compileBroadcast);
  handlers.add("vector.splat", compileSplat);
  handlers.add<vector::FromElementsOp>(compileFromElements);
  handlers.add<vector::ExtractOp>(compileExtract);
  handlers.add<vector::InsertOp>(compileInsert);
  handlers.add<vector::ShuffleOp>(compileShuffle);
}

} // namespace flash::emu

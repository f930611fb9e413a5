//===- CompileArith.cpp - arith/math ops and constants --------------------===//
//
// The arith/math ops of flashc/Semantics become one instruction evaluated by
// ArithMathOps; constants of every dialect (arith, llvm, ub) become cells
// filled once per launch.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Program.h"

#include "flashc/Semantics/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"

#include <limits>

using namespace mlir;

namespace flash::emu {

bool compileArithMath(ProgramBuilder &b, Operation *op,
                      const sem::ArithMathOp &arith) {
  Instr I = ProgramBuilder::instr(op, execArithMath);
  I.arith = arith;
  bool pair = arith.kind() == sem::ArithMathKind::IntMulExtended;
  if (op->getNumResults() != (pair ? 2u : 1u))
    return b.fail(op, pair ? "expected two results" : "expected one result",
                  Error::Kind::Internal);
  if (!b.defineResult(I))
    return false;
  if (pair && !b.define(op, op->getResult(1), I.res2))
    return false;
  I.a = b.idOf(op->getOperand(0));
  if (op->getNumOperands() > 1)
    I.b = b.idOf(op->getOperand(1));
  if (op->getNumOperands() > 2)
    I.c = b.idOf(op->getOperand(2));
  I.sk = b.val(I.res).sk;
  I.sk2 = b.val(I.a).sk;
  // Operand/result cell counts must agree (a scalar select condition may
  // pick whole vectors).
  uint32_t n = b.val(I.res).n;
  for (int32_t id : {I.a, I.b, I.c}) {
    if (id < 0)
      continue;
    if (b.val(id).n != n && !(arith.kind() == sem::ArithMathKind::Select &&
                              id == I.a && b.val(id).n == 1))
      return b.fail(op, "operand and result shapes differ",
                    Error::Kind::Internal);
  }
  b.emit(I);
  return true;
}

/// The cells of one thread of a constant of shape `ti` with value `attr`
/// (null: zero; `poison`: undef or poison, NaN in float elements so that
/// an element the program never fills shows in what it flows into, zero in
/// the others).
static std::vector<Cell> constantCells(Attribute attr, const TypeInfo &ti,
                                       bool poison) {
  std::vector<Cell> elems(ti.n, Cell{0});
  if (poison)
    for (unsigned e = 0; e < ti.n; ++e)
      if (isFloat(ti.kindAt(e)))
        elems[e].d = std::numeric_limits<double>::quiet_NaN();
  auto fromAttr = [&](Attribute x, unsigned e) {
    SK s = ti.kindAt(e);
    if (auto ia = dyn_cast<IntegerAttr>(x))
      elems[e].i = sem::wrapInt(ia.getValue().getSExtValue(), intWidth(s));
    else if (auto fa = dyn_cast<FloatAttr>(x))
      elems[e].d = sem::roundTo(scalarType(s), fa.getValueAsDouble());
    else if (auto ba = dyn_cast<BoolAttr>(x))
      elems[e].i = ba.getValue();
  };
  if (!attr)
    return elems;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat()) {
      Attribute s = dense.getSplatValue<Attribute>();
      for (unsigned e = 0; e < ti.n; ++e)
        fromAttr(s, e);
    } else {
      unsigned e = 0;
      for (Attribute x : dense.getValues<Attribute>())
        if (e < ti.n)
          fromAttr(x, e++);
    }
  } else {
    fromAttr(attr, 0);
  }
  return elems;
}

static bool compileConstant(ProgramBuilder &b, Operation *op) {
  int32_t id;
  if (!b.define(op, op->getResult(0), id))
    return false;
  Attribute attr;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    attr = c.getValue();
  else if (auto c = dyn_cast<LLVM::ConstantOp>(op))
    attr = c.getValue();
  if (attr && !isa<IntegerAttr, FloatAttr, DenseElementsAttr, BoolAttr>(attr)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << attr;
    return b.fail(op, "constant attribute " + s + " is not supported");
  }
  bool poison = isa<LLVM::UndefOp, LLVM::PoisonOp, ub::PoisonOp>(op);
  b.program.constants.push_back(
      {id, constantCells(attr, *typeInfo(op->getResult(0).getType()), poison)});
  return true;
}

void addArithOps(OpHandlers &handlers) {
  handlers.add<arith::ConstantOp, LLVM::ConstantOp, LLVM::UndefOp,
               LLVM::PoisonOp, LLVM::ZeroOp, ub::PoisonOp>(compileConstant);
}

} // namespace flash::emu

//===- Executor.cpp - Blocks, control flow and the dispatch ---------------===//

#include "Executor.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flash::interp {

Executor::Executor(const Program &program)
    : program(program), slots(program.numSlots) {}

bool Executor::run(llvm::ArrayRef<RtValue> args, const LaunchContext &context,
                   std::vector<RtValue> *results, InterpError &error) {
  ctx = &context;
  err = &error;
  err->loc.reset();
  const CBlock &entryBlock = program.blocks[program.entry];
  if (args.size() != entryBlock.args.size()) {
    mlir::func::FuncOp func = program.func; // getName() is not const
    error = {ErrorKind::Internal,
             "function '" + func.getName().str() + "' takes " +
                 std::to_string(entryBlock.args.size()) +
                 " arguments but got " + std::to_string(args.size())};
    return false;
  }
  for (size_t i = 0; i < args.size(); ++i)
    slots[entryBlock.args[i]] = args[i];
  std::vector<RtValue> yielded;
  if (!execBlock(program.entry, yielded))
    return false;
  if (results)
    *results = std::move(yielded);
  return true;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RtValue &Executor::prep(const Inst &inst, unsigned k) {
  const OutInfo &o = inst.out[k];
  RtValue &r = slots[o.slot];
  r.kind = o.isTensor ? RtValue::Kind::Tensor : RtValue::Kind::Scalar;
  r.elem = o.elem;
  r.shape.assign(o.shape.begin(), o.shape.end());
  r.data.resize(o.numel);
  r.global = nullptr;
  return r;
}

bool Executor::fail(ErrorKind kind, std::string msg) {
  err->kind = kind;
  err->message = std::move(msg);
  return false;
}

bool Executor::runtimeError(const Inst &inst, const std::string &what) {
  return fail(ErrorKind::Runtime, what + " in " + describeOp(inst.op));
}

bool Executor::internalError(const Inst &inst, const std::string &what) {
  return fail(ErrorKind::Internal, what + " in " + describeOp(inst.op));
}

bool Executor::strideFor(const Inst &inst, const RtValue &v, size_t n,
                         size_t &s) {
  if (v.kind == RtValue::Kind::None)
    return internalError(inst, "use of an undefined value");
  if (v.data.size() == n) {
    s = 1;
    return true;
  }
  if (v.data.size() == 1) {
    s = 0;
    return true;
  }
  return internalError(inst, "operand shape mismatch");
}

//===----------------------------------------------------------------------===//
// Blocks and control flow
//===----------------------------------------------------------------------===//

bool Executor::execBlock(int idx, std::vector<RtValue> &yielded) {
  const CBlock &block = program.blocks[idx];
  for (const Inst &inst : block.insts) {
    if (inst.opc == Opc::Yield || inst.opc == Opc::Return) {
      yielded.resize(inst.in.size());
      for (size_t i = 0; i < inst.in.size(); ++i) {
        if (inst.movable[i])
          yielded[i] = std::move(slots[inst.in[i]]);
        else
          yielded[i] = slots[inst.in[i]];
      }
      return true;
    }
    if (!exec(inst)) {
      // The innermost op that failed (a loop's body reports before the loop).
      if (!err->loc)
        err->loc = inst.op->getLoc();
      return false;
    }
  }
  return internalError(block.insts.back(), "block fell through");
}

bool Executor::execFor(const Inst &inst) {
  auto forOp = mlir::cast<mlir::scf::ForOp>(inst.op);
  const RtValue &lbV = val(inst.in[0]), &ubV = val(inst.in[1]),
                &stV = val(inst.in[2]);
  unsigned w = lbV.elem.width;
  int64_t lb = static_cast<int64_t>(lbV.data[0]);
  int64_t ub = static_cast<int64_t>(ubV.data[0]);
  int64_t step = static_cast<int64_t>(stV.data[0]);
  if (forOp.getUnsignedCmp()) {
    if (w >= 64)
      return fail(ErrorKind::Unsupported,
                  "unsigned 64-bit scf.for is not supported");
    lb = sem::asUnsigned(lb, w);
    ub = sem::asUnsigned(ub, w);
    step = sem::asUnsigned(step, w);
    if (step == 0)
      return runtimeError(inst, "scf.for step is 0 (must be positive)");
  } else {
    lb = sem::asSigned(lb, w);
    ub = sem::asSigned(ub, w);
    step = sem::asSigned(step, w);
    if (step <= 0)
      return runtimeError(inst, "scf.for step is " + std::to_string(step) +
                                    " (must be positive)");
  }
  const CBlock &body = program.blocks[inst.region0];
  size_t numIter = inst.in.size() - 3;
  for (size_t i = 0; i < numIter; ++i)
    slots[body.args[i + 1]] = slots[inst.in[i + 3]];
  ElemType ivType = lbV.elem;
  std::vector<RtValue> yielded;
  for (int64_t iv = lb; iv < ub;) {
    RtValue &ivSlot = slots[body.args[0]];
    ivSlot.kind = RtValue::Kind::Scalar;
    ivSlot.elem = ivType;
    ivSlot.shape.clear();
    ivSlot.data.assign(1, static_cast<double>(sem::wrapInt(iv, w)));
    if (!execBlock(inst.region0, yielded))
      return false;
    if (yielded.size() != numIter)
      return internalError(inst, "scf.yield arity mismatch");
    for (size_t i = 0; i < numIter; ++i)
      std::swap(slots[body.args[i + 1]], yielded[i]);
    if (ub - iv <= step)
      break;
    iv += step;
  }
  for (size_t i = 0; i < numIter; ++i)
    slots[inst.out[i].slot] = std::move(slots[body.args[i + 1]]);
  return true;
}

bool Executor::execIf(const Inst &inst) {
  bool cond = val(inst.in[0]).data[0] != 0;
  int region = cond ? inst.region0 : inst.region1;
  if (region < 0) {
    if (!inst.out.empty())
      return internalError(inst, "scf.if with results has no else");
    return true;
  }
  std::vector<RtValue> yielded;
  if (!execBlock(region, yielded))
    return false;
  if (yielded.size() != inst.out.size())
    return internalError(inst, "scf.yield arity mismatch");
  for (size_t i = 0; i < yielded.size(); ++i)
    slots[inst.out[i].slot] = std::move(yielded[i]);
  return true;
}

bool Executor::execConstant(const Inst &inst) {
  if (inst.constIdx < 0)
    return fail(ErrorKind::Unsupported,
                "unsupported constant in " + describeOp(inst.op));
  const RtValue &c = program.constants[inst.constIdx];
  RtValue &r = slots[inst.out[0].slot];
  r.kind = c.kind;
  r.elem = c.elem;
  r.shape = c.shape;
  r.data.assign(c.data.begin(), c.data.end());
  r.global = nullptr;
  return true;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

bool Executor::exec(const Inst &inst) {
  switch (inst.opc) {
  case Opc::Yield:
  case Opc::Return:
    return internalError(inst, "unexpected op");
  case Opc::For:
    return execFor(inst);
  case Opc::If:
    return execIf(inst);
  case Opc::Constant:
    return execConstant(inst);
  case Opc::ArithMath:
    return execArithMath(inst);
  case Opc::ProgramId:
  case Opc::NumPrograms:
    return execProgramCoordinate(inst);
  case Opc::Dim:
    return execDim(inst);
  case Opc::Splat:
  case Opc::TensorSplat:
    return execSplat(inst);
  case Opc::Iota:
    return execIota(inst);
  case Opc::Load:
    return execLoad(inst);
  case Opc::LoadScalar:
    return execLoadScalar(inst);
  case Opc::Store:
    return execStore(inst);
  case Opc::AtomicAdd:
    return execAtomicAdd(inst);
  case Opc::DeviceAssert:
    return execDeviceAssert(inst);
  case Opc::ExpandDims:
  case Opc::TensorReshape:
    return execReshape(inst);
  case Opc::Broadcast:
    return execBroadcast(inst);
  case Opc::Trans:
    return execTrans(inst);
  case Opc::Reduce:
    return execReduce(inst);
  case Opc::Mma:
    return execMma(inst);
  case Opc::OnlineSoftmax:
    return execOnlineSoftmax(inst);
  case Opc::Finalize:
    return execFinalize(inst);
  case Opc::TensorExtract:
    return execTensorExtract(inst);
  case Opc::TensorFromElements:
    return execTensorFromElements(inst);
  case Opc::TensorEmpty:
    return execTensorEmpty(inst);
  }
  return internalError(inst, "unhandled opcode");
}

} // namespace flash::interp

//===- Compiler.cpp - func.func to the interpreter's Program --------------===//
//
// Classifies every op once (arith / math through flashc/Semantics), assigns
// each SSA value a slot, records result types and shapes, and decodes
// constants.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace flash::interp {

std::string describeOp(Operation *op) {
  return "'" + op->getName().getStringRef().str() + "'";
}

static std::string typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static double apfloatToDouble(llvm::APFloat f) {
  bool loses = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

static double apintToDouble(const llvm::APInt &v) {
  if (v.getBitWidth() == 1)
    return static_cast<double>(v.getZExtValue() & 1);
  if (v.getBitWidth() > 64)
    return static_cast<double>(v.trunc(64).getSExtValue());
  return static_cast<double>(v.getSExtValue());
}

bool scalarAttrToDouble(Attribute attr, double &out) {
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    out = apfloatToDouble(f.getValue());
    return true;
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    out = apintToDouble(i.getValue());
    return true;
  }
  if (auto b = dyn_cast<BoolAttr>(attr)) {
    out = b.getValue() ? 1 : 0;
    return true;
  }
  return false;
}

/// The opcode of a non-arith/math op, or nullopt when unsupported.
static std::optional<Opc> classifyOther(Operation *op) {
  using Result = std::optional<Opc>;
  auto is = [](Opc opc) {
    return [opc](Operation *) -> Result { return opc; };
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<scf::YieldOp>(is(Opc::Yield))
      .Case<func::ReturnOp>(is(Opc::Return))
      .Case<scf::ForOp>(is(Opc::For))
      .Case<scf::IfOp>(is(Opc::If))
      .Case<arith::ConstantOp>(is(Opc::Constant))
      .Case<tile::ProgramIdOp>(is(Opc::ProgramId))
      .Case<tile::NumProgramsOp>(is(Opc::NumPrograms))
      .Case<tile::DimOp>(is(Opc::Dim))
      .Case<tile::SplatOp>(is(Opc::Splat))
      .Case<tile::IotaOp>(is(Opc::Iota))
      .Case<tile::LoadOp>(is(Opc::Load))
      .Case<tile::LoadScalarOp>(is(Opc::LoadScalar))
      .Case<tile::StoreOp>(is(Opc::Store))
      .Case<tile::AtomicAddOp>(is(Opc::AtomicAdd))
      .Case<tile::DeviceAssertOp>(is(Opc::DeviceAssert))
      .Case<tile::ExpandDimsOp>(is(Opc::ExpandDims))
      .Case<tile::BroadcastOp>(is(Opc::Broadcast))
      .Case<tile::TransOp>(is(Opc::Trans))
      .Case<tile::ReduceOp>(is(Opc::Reduce))
      .Case<tile::MmaOp>(is(Opc::Mma))
      .Case<tile::OnlineSoftmaxOp>(is(Opc::OnlineSoftmax))
      .Case<tile::OnlineSoftmaxFinalizeOp>(is(Opc::Finalize))
      .Case<tensor::SplatOp>(is(Opc::TensorSplat))
      .Case<tensor::ExtractOp>(is(Opc::TensorExtract))
      .Case<tensor::FromElementsOp>(is(Opc::TensorFromElements))
      .Case<tensor::EmptyOp>([](Operation *op) -> Result {
        if (op->getNumOperands() != 0)
          return std::nullopt; // dynamic sizes
        return Opc::TensorEmpty;
      })
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
          is(Opc::TensorReshape))
      .Default([](Operation *) -> Result { return std::nullopt; });
}

namespace {
class Compiler {
public:
  explicit Compiler(Program &program) : program(program) {}

  void compileFunction() {
    func::FuncOp func = program.func;
    if (func.isExternal()) {
      setError(ErrorKind::Internal,
               "function '" + func.getName().str() + "' has no body");
      return;
    }
    if (!func.getBody().hasOneBlock()) {
      setError(ErrorKind::Unsupported,
               "function '" + func.getName().str() +
                   "' has more than one block (unstructured control "
                   "flow is not supported)",
               func);
      return;
    }
    program.entry = compileBlock(func.getBody().front());
    program.numSlots = slotOf.size();
  }

private:
  /// The first error wins; `at` is the op it is about.
  void setError(ErrorKind kind, std::string msg, Operation *at = nullptr) {
    if (program.error)
      return;
    program.error = InterpError{kind, std::move(msg)};
    if (at)
      program.error->loc = at->getLoc();
  }

  unsigned slotFor(Value v) {
    auto [it, inserted] = slotOf.try_emplace(v, slotOf.size());
    return it->second;
  }

  int compileBlock(Block &block);
  std::optional<Inst> compileOp(Operation &op);
  void compileOperands(Operation &op, Inst &inst);
  OutInfo compileResult(Operation &op, Value result);
  void compileRegions(Operation &op, Inst &inst);
  bool compileConstant(Operation *op, const OutInfo &o, RtValue &c);
  bool decodeDense(Operation *op, DenseElementsAttr dense, const OutInfo &o,
                   RtValue &c);

  Program &program;
  llvm::DenseMap<Value, unsigned> slotOf;
};
} // namespace

int Compiler::compileBlock(Block &block) {
  int idx = program.blocks.size();
  program.blocks.emplace_back();
  llvm::SmallVector<unsigned, 4> args;
  for (BlockArgument a : block.getArguments())
    args.push_back(slotFor(a));
  std::vector<Inst> insts;
  for (Operation &op : block)
    if (std::optional<Inst> inst = compileOp(op))
      insts.push_back(std::move(*inst));
  if (insts.empty() ||
      (insts.back().opc != Opc::Yield && insts.back().opc != Opc::Return))
    setError(ErrorKind::Unsupported,
             "block without a supported terminator in '" +
                 program.func.getName().str() + "'");
  // compileOp may have added blocks: index, don't hold a reference.
  program.blocks[idx].args = std::move(args);
  program.blocks[idx].insts = std::move(insts);
  return idx;
}

std::optional<Inst> Compiler::compileOp(Operation &op) {
  Inst inst;
  inst.op = &op;
  if (std::optional<sem::ArithMathOp> arith = sem::classifyArithMath(&op)) {
    inst.opc = Opc::ArithMath;
    inst.arith = *arith;
  } else if (std::optional<Opc> opc = classifyOther(&op)) {
    inst.opc = *opc;
  } else {
    setError(ErrorKind::Unsupported, "unsupported op " + describeOp(&op), &op);
    return std::nullopt;
  }
  compileOperands(op, inst);
  for (Value r : op.getResults())
    inst.out.push_back(compileResult(op, r));
  if (inst.opc == Opc::Constant) {
    RtValue c;
    if (compileConstant(&op, inst.out[0], c)) {
      inst.constIdx = program.constants.size();
      program.constants.push_back(std::move(c));
    }
  }
  compileRegions(op, inst);
  return inst;
}

void Compiler::compileOperands(Operation &op, Inst &inst) {
  for (Value v : op.getOperands()) {
    auto it = slotOf.find(v);
    if (it == slotOf.end()) {
      setError(ErrorKind::Internal,
               "operand defined outside the function in " + describeOp(&op),
               &op);
      inst.in.push_back(0);
      continue;
    }
    inst.in.push_back(it->second);
  }
  if (inst.opc != Opc::Yield && inst.opc != Opc::Return)
    return;
  // A terminator may move a value out of its slot when nothing else reads
  // it: defined inside the region and yielded once.
  Region *region = op.getParentRegion();
  for (Value v : op.getOperands()) {
    bool unique = llvm::count(op.getOperands(), v) == 1;
    bool inside = v.getDefiningOp() && region->isAncestor(v.getParentRegion());
    inst.movable.push_back(unique && inside);
  }
}

OutInfo Compiler::compileResult(Operation &op, Value result) {
  OutInfo o;
  o.slot = slotFor(result);
  o.isTensor = false;
  o.numel = 1;
  Type t = result.getType();
  Type et = t;
  if (auto rt = dyn_cast<RankedTensorType>(t)) {
    if (!rt.hasStaticShape()) {
      setError(ErrorKind::Unsupported,
               "dynamic tensor shape " + typeToString(t) + " in " +
                   describeOp(&op),
               &op);
    } else {
      o.isTensor = true;
      o.shape.assign(rt.getShape().begin(), rt.getShape().end());
      o.numel = rt.getNumElements();
    }
    et = rt.getElementType();
  }
  std::optional<ElemType> e = ElemType::get(et);
  if (!e)
    setError(ErrorKind::Unsupported,
             "unsupported type " + typeToString(t) + " in " + describeOp(&op),
             &op);
  o.elem = e.value_or(ElemType());
  return o;
}

void Compiler::compileRegions(Operation &op, Inst &inst) {
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    if (!forOp.getRegion().hasOneBlock())
      setError(ErrorKind::Internal, "scf.for without a single block", &op);
    else
      inst.region0 = compileBlock(forOp.getRegion().front());
  } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (!ifOp.getThenRegion().hasOneBlock())
      setError(ErrorKind::Internal, "scf.if without a then block", &op);
    else
      inst.region0 = compileBlock(ifOp.getThenRegion().front());
    if (!ifOp.getElseRegion().empty())
      inst.region1 = compileBlock(ifOp.getElseRegion().front());
  } else if (op.getNumRegions() != 0) {
    setError(ErrorKind::Unsupported,
             "unsupported op with regions " + describeOp(&op), &op);
  }
}

bool Compiler::compileConstant(Operation *op, const OutInfo &o, RtValue &c) {
  Attribute attr = cast<arith::ConstantOp>(op).getValue();
  c.kind = o.isTensor ? RtValue::Kind::Tensor : RtValue::Kind::Scalar;
  c.elem = o.elem;
  c.shape.assign(o.shape.begin(), o.shape.end());
  double v;
  if (scalarAttrToDouble(attr, v)) {
    c.data.assign(o.numel, roundTo(o.elem, v));
    return true;
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return decodeDense(op, dense, o, c);
  setError(ErrorKind::Unsupported,
           "unsupported constant attribute in " + describeOp(op), op);
  return false;
}

bool Compiler::decodeDense(Operation *op, DenseElementsAttr dense,
                           const OutInfo &o, RtValue &c) {
  bool isFloat = isa<FloatType>(dense.getElementType());
  if (dense.isSplat()) {
    double s = isFloat ? apfloatToDouble(dense.getSplatValue<llvm::APFloat>())
                       : apintToDouble(dense.getSplatValue<llvm::APInt>());
    c.data.assign(o.numel, roundTo(o.elem, s));
    return true;
  }
  c.data.clear();
  c.data.reserve(o.numel);
  if (isFloat) {
    for (const llvm::APFloat &f : dense.getValues<llvm::APFloat>())
      c.data.push_back(roundTo(o.elem, apfloatToDouble(f)));
  } else {
    for (const llvm::APInt &i : dense.getValues<llvm::APInt>())
      c.data.push_back(roundTo(o.elem, apintToDouble(i)));
  }
  if (c.data.size() != o.numel) {
    setError(ErrorKind::Internal, "constant size mismatch in " + describeOp(op),
             op);
    return false;
  }
  return true;
}

Program compileFunction(func::FuncOp func) {
  Program program;
  program.func = func;
  Compiler(program).compileFunction();
  return program;
}

} // namespace flash::interp

//===- Interpreter.cpp - Tile-level reference interpreter -----------------===//
//
// Functions are "compiled" once into per-block instruction lists whose
// operands and results are indices into a flat slot array; executing an
// instruction is a switch on a precomputed opcode. Every value is a vector of
// doubles rounded to its element type after each op.
//
//===----------------------------------------------------------------------===//

#include "flashc/Interp/Interpreter.h"
#include "flashc/Support/SourceLocation.h"
#include "flashc/Semantics/ScalarOps.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace flash {
namespace interp {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

using sem::asSigned;
using sem::asUnsigned;
using sem::wrapInt;

static inline double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

static double roundIntResult(ElemType t, int64_t v) {
  return static_cast<double>(wrapInt(v, t.width));
}

int64_t GlobalBuffer::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

RtValue RtValue::scalar(ElemType elem, double v) {
  RtValue r;
  r.kind = Kind::Scalar;
  r.elem = elem;
  r.data.assign(1, roundTo(elem, v));
  return r;
}

RtValue RtValue::tensor(ElemType elem, std::vector<int64_t> shape,
                        std::vector<double> data) {
  RtValue r;
  r.kind = Kind::Tensor;
  r.elem = elem;
  r.shape = std::move(shape);
  r.data = std::move(data);
  return r;
}

RtValue RtValue::globalRef(GlobalBuffer *buffer) {
  RtValue r;
  r.kind = Kind::Global;
  r.elem = buffer->elem;
  r.global = buffer;
  return r;
}

static std::string typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

//===----------------------------------------------------------------------===//
// Compiled form
//===----------------------------------------------------------------------===//

namespace {
enum class Opc : uint8_t {
  Yield, Return, For, If, Constant, ArithMath,
  // tile
  ProgramId, NumPrograms, Dim, Splat, Iota, Load, Store, ExpandDims,
  Broadcast, Trans, Reduce, Mma, OnlineSoftmax, Finalize,
  // tensor ops canonicalization may leave behind
  TensorSplat, TensorExtract, TensorFromElements, TensorEmpty, TensorReshape,
  Unsupported,
};

struct OutInfo {
  unsigned slot;
  ElemType elem;
  bool isTensor;
  llvm::SmallVector<int64_t, 4> shape;
  size_t numel;
};

struct Inst {
  Operation *op;
  Opc opc;
  sem::ArithMathOp arith; ///< Opc::ArithMath only
  llvm::SmallVector<unsigned, 4> in;
  llvm::SmallVector<OutInfo, 1> out;
  llvm::SmallVector<bool, 4> movable; ///< terminators: operand may be moved
  int region0 = -1, region1 = -1;      ///< compiled block indices
  int constIdx = -1;
};

struct CBlock {
  llvm::SmallVector<unsigned, 4> args;
  std::vector<Inst> insts; ///< ends with the terminator
};
} // namespace

static Opc classify(Operation *op) {
  return llvm::TypeSwitch<Operation *, Opc>(op)
      .Case<scf::YieldOp>([](auto) { return Opc::Yield; })
      .Case<func::ReturnOp>([](auto) { return Opc::Return; })
      .Case<scf::ForOp>([](auto) { return Opc::For; })
      .Case<scf::IfOp>([](auto) { return Opc::If; })
      .Case<arith::ConstantOp>([](auto) { return Opc::Constant; })
      .Case<tile::ProgramIdOp>([](auto) { return Opc::ProgramId; })
      .Case<tile::NumProgramsOp>([](auto) { return Opc::NumPrograms; })
      .Case<tile::DimOp>([](auto) { return Opc::Dim; })
      .Case<tile::SplatOp>([](auto) { return Opc::Splat; })
      .Case<tile::IotaOp>([](auto) { return Opc::Iota; })
      .Case<tile::LoadOp>([](auto) { return Opc::Load; })
      .Case<tile::StoreOp>([](auto) { return Opc::Store; })
      .Case<tile::ExpandDimsOp>([](auto) { return Opc::ExpandDims; })
      .Case<tile::BroadcastOp>([](auto) { return Opc::Broadcast; })
      .Case<tile::TransOp>([](auto) { return Opc::Trans; })
      .Case<tile::ReduceOp>([](auto) { return Opc::Reduce; })
      .Case<tile::MmaOp>([](auto) { return Opc::Mma; })
      .Case<tile::OnlineSoftmaxOp>([](auto) { return Opc::OnlineSoftmax; })
      .Case<tile::OnlineSoftmaxFinalizeOp>(
          [](auto) { return Opc::Finalize; })
      .Case<tensor::SplatOp>([](auto) { return Opc::TensorSplat; })
      .Case<tensor::ExtractOp>([](auto) { return Opc::TensorExtract; })
      .Case<tensor::FromElementsOp>(
          [](auto) { return Opc::TensorFromElements; })
      .Case<tensor::EmptyOp>([](Operation *op) {
        return op->getNumOperands() == 0 ? Opc::TensorEmpty
                                         : Opc::Unsupported;
      })
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
          [](auto) { return Opc::TensorReshape; })
      .Default([](Operation *) { return Opc::Unsupported; });
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

/// Decodes a scalar attribute (IntegerAttr / FloatAttr) to a double.
static bool scalarAttrToDouble(Attribute attr, double &out) {
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

/// A double-held value as a sem::ScalarValue of type `t`, and back.
static sem::ScalarValue toScalar(ElemType t, double v) {
  return t.isFloat() ? sem::ScalarValue::ofFloat(v)
                     : sem::ScalarValue::ofInt(static_cast<int64_t>(v));
}
static double fromScalar(ElemType t, sem::ScalarValue v) {
  return t.isFloat() ? v.f : static_cast<double>(v.i);
}

//===----------------------------------------------------------------------===//
// FunctionRunner::Impl
//===----------------------------------------------------------------------===//

struct FunctionRunner::Impl {
  func::FuncOp func;
  llvm::DenseMap<Value, unsigned> slotOf;
  std::vector<RtValue> slots;
  std::vector<CBlock> blocks;
  std::vector<RtValue> constants;
  std::optional<InterpError> compileError;
  const LaunchContext *ctx = nullptr;
  InterpError *err = nullptr;
  int entry = -1;

  explicit Impl(func::FuncOp func) : func(func) {
    if (func.isExternal()) {
      setCompileError(ErrorKind::Internal,
                      "function '" + func.getName().str() + "' has no body");
      return;
    }
    if (!func.getBody().hasOneBlock()) {
      setCompileError(ErrorKind::Unsupported,
                      "function '" + func.getName().str() +
                          "' has more than one block (unstructured control "
                          "flow is not supported) at " +
                          formatSourceLocation(func.getLoc()));
      return;
    }
    entry = compileBlock(func.getBody().front());
    slots.resize(slotOf.size());
  }

  void setCompileError(ErrorKind kind, std::string msg) {
    if (!compileError)
      compileError = InterpError{kind, std::move(msg)};
  }

  unsigned slotFor(Value v) {
    auto it = slotOf.find(v);
    if (it != slotOf.end())
      return it->second;
    unsigned s = slotOf.size();
    slotOf[v] = s;
    return s;
  }

  static std::string opDesc(Operation *op) {
    return "'" + op->getName().getStringRef().str() + "' at " +
           formatSourceLocation(op->getLoc());
  }

  int compileBlock(Block &block) {
    int idx = blocks.size();
    blocks.emplace_back();
    llvm::SmallVector<unsigned, 4> args;
    for (BlockArgument a : block.getArguments())
      args.push_back(slotFor(a));
    std::vector<Inst> insts;
    for (Operation &op : block) {
      Inst inst;
      inst.op = &op;
      if (auto arith = sem::classifyArithMath(&op)) {
        inst.opc = Opc::ArithMath;
        inst.arith = *arith;
      } else {
        inst.opc = classify(&op);
      }
      if (inst.opc == Opc::Unsupported) {
        setCompileError(ErrorKind::Unsupported,
                        "unsupported op " + opDesc(&op));
        continue;
      }
      for (Value v : op.getOperands()) {
        auto it = slotOf.find(v);
        if (it == slotOf.end()) {
          setCompileError(ErrorKind::Internal,
                          "operand defined outside the function in " +
                              opDesc(&op));
          inst.in.push_back(0);
          continue;
        }
        inst.in.push_back(it->second);
      }
      for (Value r : op.getResults()) {
        OutInfo o;
        o.slot = slotFor(r);
        o.isTensor = false;
        o.numel = 1;
        Type t = r.getType();
        Type et = t;
        if (auto rt = dyn_cast<RankedTensorType>(t)) {
          if (!rt.hasStaticShape()) {
            setCompileError(ErrorKind::Unsupported,
                            "dynamic tensor shape " + typeToString(t) +
                                " in " + opDesc(&op));
          } else {
            o.isTensor = true;
            o.shape.assign(rt.getShape().begin(), rt.getShape().end());
            o.numel = rt.getNumElements();
          }
          et = rt.getElementType();
        }
        auto e = ElemType::get(et);
        if (!e) {
          setCompileError(ErrorKind::Unsupported,
                          "unsupported type " + typeToString(t) + " in " +
                              opDesc(&op));
          e = ElemType();
        }
        o.elem = *e;
        inst.out.push_back(o);
      }
      if (inst.opc == Opc::Yield || inst.opc == Opc::Return) {
        Region *region = op.getParentRegion();
        for (unsigned i = 0; i < op.getNumOperands(); ++i) {
          Value v = op.getOperand(i);
          bool unique = llvm::count(op.getOperands(), v) == 1;
          bool inside = v.getDefiningOp() &&
                        region->isAncestor(v.getParentRegion());
          inst.movable.push_back(unique && inside);
        }
      }
      if (inst.opc == Opc::Constant) {
        RtValue c;
        if (compileConstant(&op, inst.out[0], c)) {
          inst.constIdx = constants.size();
          constants.push_back(std::move(c));
        }
      }
      if (inst.opc == Opc::For) {
        auto forOp = cast<scf::ForOp>(op);
        if (!forOp.getRegion().hasOneBlock())
          setCompileError(ErrorKind::Internal,
                          "scf.for without a single block at " +
                              formatSourceLocation(op.getLoc()));
        else
          inst.region0 = compileBlock(forOp.getRegion().front());
      } else if (inst.opc == Opc::If) {
        auto ifOp = cast<scf::IfOp>(op);
        if (!ifOp.getThenRegion().hasOneBlock())
          setCompileError(ErrorKind::Internal,
                          "scf.if without a then block at " +
                              formatSourceLocation(op.getLoc()));
        else
          inst.region0 = compileBlock(ifOp.getThenRegion().front());
        if (!ifOp.getElseRegion().empty())
          inst.region1 = compileBlock(ifOp.getElseRegion().front());
      } else if (op.getNumRegions() != 0) {
        setCompileError(ErrorKind::Unsupported,
                        "unsupported op with regions " + opDesc(&op));
      }
      insts.push_back(std::move(inst));
    }
    if (insts.empty() || (insts.back().opc != Opc::Yield &&
                          insts.back().opc != Opc::Return))
      setCompileError(ErrorKind::Unsupported,
                      "block without a supported terminator in '" +
                          func.getName().str() + "'");
    blocks[idx].args = std::move(args);
    blocks[idx].insts = std::move(insts);
    return idx;
  }

  bool compileConstant(Operation *op, const OutInfo &o, RtValue &c) {
    auto cst = cast<arith::ConstantOp>(op);
    Attribute attr = cst.getValue();
    c.kind = o.isTensor ? RtValue::Kind::Tensor : RtValue::Kind::Scalar;
    c.elem = o.elem;
    c.shape.assign(o.shape.begin(), o.shape.end());
    double v;
    if (scalarAttrToDouble(attr, v)) {
      c.data.assign(o.numel, roundTo(o.elem, v));
      return true;
    }
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      Type et = dense.getElementType();
      if (dense.isSplat()) {
        double s = isa<FloatType>(et)
                       ? apfloatToDouble(dense.getSplatValue<llvm::APFloat>())
                       : apintToDouble(dense.getSplatValue<llvm::APInt>());
        c.data.assign(o.numel, roundTo(o.elem, s));
        return true;
      }
      c.data.clear();
      c.data.reserve(o.numel);
      if (isa<FloatType>(et)) {
        for (const llvm::APFloat &f : dense.getValues<llvm::APFloat>())
          c.data.push_back(roundTo(o.elem, apfloatToDouble(f)));
      } else {
        for (const llvm::APInt &i : dense.getValues<llvm::APInt>())
          c.data.push_back(roundTo(o.elem, apintToDouble(i)));
      }
      if (c.data.size() != o.numel) {
        setCompileError(ErrorKind::Internal,
                        "constant size mismatch in " + opDesc(op));
        return false;
      }
      return true;
    }
    setCompileError(ErrorKind::Unsupported,
                    "unsupported constant attribute in " + opDesc(op));
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Execution helpers
  //===--------------------------------------------------------------------===//

  RtValue &val(unsigned slot) { return slots[slot]; }

  RtValue &prep(const Inst &inst, unsigned k) {
    const OutInfo &o = inst.out[k];
    RtValue &r = slots[o.slot];
    r.kind = o.isTensor ? RtValue::Kind::Tensor : RtValue::Kind::Scalar;
    r.elem = o.elem;
    r.shape.assign(o.shape.begin(), o.shape.end());
    r.data.resize(o.numel);
    r.global = nullptr;
    return r;
  }

  bool fail(ErrorKind kind, std::string msg) {
    err->kind = kind;
    err->message = std::move(msg);
    return false;
  }
  bool runtimeError(const Inst &inst, const std::string &what) {
    return fail(ErrorKind::Runtime, what + " in " + opDesc(inst.op));
  }
  bool internalError(const Inst &inst, const std::string &what) {
    return fail(ErrorKind::Internal, what + " in " + opDesc(inst.op));
  }

  /// Stride (0 or 1) to read an operand of `size` elements against `n`.
  bool strideFor(const Inst &inst, const RtValue &v, size_t n, size_t &s) {
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

  bool execArithMath(const Inst &inst) {
    sem::ArithMathOpcode opc = inst.arith.opcode;
    switch (inst.arith.kind()) {
    case sem::ArithMathKind::IntBinary:
      return sem::visitIntBinary(opc, [&](auto f) { return intBinary(inst, f); });
    case sem::ArithMathKind::FloatBinary:
      return sem::visitFloatBinary(opc,
                                   [&](auto f) { return floatBinary(inst, f); });
    case sem::ArithMathKind::FloatUnary:
      return sem::visitFloatUnary(opc,
                                  [&](auto f) { return floatUnary(inst, f); });
    case sem::ArithMathKind::IntUnary:
      return intUnary(inst);
    case sem::ArithMathKind::FloatTernary:
      return floatTernary(inst);
    case sem::ArithMathKind::CmpI:
      return cmpI(inst);
    case sem::ArithMathKind::CmpF:
      return cmpF(inst);
    case sem::ArithMathKind::Select:
      return select(inst);
    case sem::ArithMathKind::Cast:
      return convert(inst);
    }
    return internalError(inst, "unhandled arith/math kind");
  }

  template <typename F> bool intBinary(const Inst &inst, F f) {
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0, sb = 0;
    if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
      return false;
    unsigned w = r.elem.width;
    const double *pa = a.data.data(), *pb = b.data.data();
    double *pr = r.data.data();
    for (size_t i = 0; i < n; ++i) {
      int64_t out;
      if (!f(static_cast<int64_t>(pa[i * sa]), static_cast<int64_t>(pb[i * sb]),
             w, out))
        return runtimeError(inst, "integer division by zero");
      pr[i] = static_cast<double>(sem::wrapInt(out, w));
    }
    return true;
  }

  template <typename F> bool floatBinary(const Inst &inst, F f) {
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0, sb = 0;
    if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
      return false;
    const double *pa = a.data.data(), *pb = b.data.data();
    double *pr = r.data.data();
    ElemType t = r.elem;
    // f32, the common case, without a switch per element.
    if (t.kind == ElemType::F32) {
      for (size_t i = 0; i < n; ++i)
        pr[i] = static_cast<double>(static_cast<float>(f(pa[i * sa], pb[i * sb])));
    } else {
      for (size_t i = 0; i < n; ++i)
        pr[i] = roundTo(t, f(pa[i * sa], pb[i * sb]));
    }
    return true;
  }

  template <typename F> bool floatUnary(const Inst &inst, F f) {
    const RtValue &a = val(inst.in[0]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0;
    if (!strideFor(inst, a, n, sa))
      return false;
    const double *pa = a.data.data();
    double *pr = r.data.data();
    ElemType t = r.elem;
    if (t.kind == ElemType::F32) {
      for (size_t i = 0; i < n; ++i)
        pr[i] = static_cast<double>(static_cast<float>(f(pa[i * sa])));
    } else {
      for (size_t i = 0; i < n; ++i)
        pr[i] = roundTo(t, f(pa[i * sa]));
    }
    return true;
  }

  bool intUnary(const Inst &inst) {
    const RtValue &a = val(inst.in[0]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0;
    if (!strideFor(inst, a, n, sa))
      return false;
    unsigned w = r.elem.width;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = static_cast<double>(sem::evalIntUnary(
          inst.arith.opcode, static_cast<int64_t>(a.data[i * sa]), w));
    return true;
  }

  bool floatTernary(const Inst &inst) {
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]),
                  &c = val(inst.in[2]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0, sb = 0, sc = 0;
    if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb) ||
        !strideFor(inst, c, n, sc))
      return false;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = sem::evalFloatTernary(inst.arith.opcode, r.elem,
                                        a.data[i * sa], b.data[i * sb],
                                        c.data[i * sc]);
    return true;
  }

  bool cmpI(const Inst &inst) {
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0, sb = 0;
    if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
      return false;
    unsigned w = a.elem.width;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = sem::evalCmpI(inst.arith.intPredicate,
                                static_cast<int64_t>(a.data[i * sa]),
                                static_cast<int64_t>(b.data[i * sb]), w);
    return true;
  }

  bool cmpF(const Inst &inst) {
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0, sb = 0;
    if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
      return false;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = sem::evalCmpF(inst.arith.floatPredicate, a.data[i * sa],
                                b.data[i * sb]);
    return true;
  }

  bool select(const Inst &inst) {
    const RtValue &c = val(inst.in[0]), &a = val(inst.in[1]),
                  &b = val(inst.in[2]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sc = 0, sa = 0, sb = 0;
    if (!strideFor(inst, c, n, sc) || !strideFor(inst, a, n, sa) ||
        !strideFor(inst, b, n, sb))
      return false;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = c.data[i * sc] != 0 ? a.data[i * sa] : b.data[i * sb];
    return true;
  }

  bool convert(const Inst &inst) {
    const RtValue &a = val(inst.in[0]);
    RtValue &r = prep(inst, 0);
    size_t n = r.data.size(), sa = 0;
    if (!strideFor(inst, a, n, sa))
      return false;
    ElemType src = a.elem, dst = r.elem;
    for (size_t i = 0; i < n; ++i)
      r.data[i] = fromScalar(
          dst, sem::evalCast(inst.arith.opcode, src, dst,
                             toScalar(src, a.data[i * sa])));
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Block / control flow
  //===--------------------------------------------------------------------===//

  /// Runs block `idx`; its terminator's operands land in `yielded`.
  bool execBlock(int idx, std::vector<RtValue> &yielded) {
    CBlock &block = blocks[idx];
    for (Inst &inst : block.insts) {
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
      if (!exec(inst))
        return false;
    }
    return internalError(block.insts.back(), "block fell through");
  }

  bool execFor(const Inst &inst) {
    auto forOp = cast<scf::ForOp>(inst.op);
    const RtValue &lbV = val(inst.in[0]), &ubV = val(inst.in[1]),
                  &stV = val(inst.in[2]);
    unsigned w = lbV.elem.width;
    bool isUnsigned = forOp.getUnsignedCmp();
    int64_t lb = static_cast<int64_t>(lbV.data[0]);
    int64_t ub = static_cast<int64_t>(ubV.data[0]);
    int64_t step = static_cast<int64_t>(stV.data[0]);
    if (isUnsigned) {
      if (w >= 64)
        return fail(ErrorKind::Unsupported,
                    "unsigned 64-bit scf.for is not supported at " +
                        formatSourceLocation(inst.op->getLoc()));
      lb = asUnsigned(lb, w);
      ub = asUnsigned(ub, w);
      step = asUnsigned(step, w);
      if (step == 0)
        return runtimeError(inst, "scf.for step is 0 (must be positive)");
    } else {
      lb = asSigned(lb, w);
      ub = asSigned(ub, w);
      step = asSigned(step, w);
      if (step <= 0)
        return runtimeError(inst, "scf.for step is " + std::to_string(step) +
                                      " (must be positive)");
    }
    CBlock &body = blocks[inst.region0];
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
      ivSlot.data.assign(1, static_cast<double>(wrapInt(iv, w)));
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

  bool execIf(const Inst &inst) {
    const RtValue &c = val(inst.in[0]);
    bool cond = c.data[0] != 0;
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

  //===--------------------------------------------------------------------===//
  // Tile ops
  //===--------------------------------------------------------------------===//

  /// Calls f(tileLinearIndex, globalLinearIndex or -1) for every element of
  /// a tile window.
  template <typename F>
  static void forEachWindowElement(llvm::ArrayRef<int64_t> tshape,
                                   const std::vector<int64_t> &gshape,
                                   llvm::ArrayRef<int64_t> offsets,
                                   llvm::ArrayRef<int64_t> window, F f) {
    size_t grank = gshape.size(), trank = tshape.size();
    int64_t n = 1;
    for (int64_t d : tshape)
      n *= d;
    if (n == 0)
      return;
    llvm::SmallVector<int64_t, 4> gstride(grank, 1);
    for (int d = static_cast<int>(grank) - 2; d >= 0; --d)
      gstride[d] = gstride[d + 1] * gshape[d + 1];
    llvm::SmallVector<bool, 4> inWindow(grank, false);
    for (int64_t w : window)
      inWindow[w] = true;
    bool baseOk = true;
    int64_t base = 0;
    for (size_t d = 0; d < grank; ++d) {
      if (!inWindow[d] && (offsets[d] < 0 || offsets[d] >= gshape[d]))
        baseOk = false;
      base += offsets[d] * gstride[d];
    }
    if (!baseOk) {
      for (int64_t t = 0; t < n; ++t)
        f(t, int64_t(-1));
      return;
    }
    if (trank == 0) {
      f(0, base);
      return;
    }
    // Per tile dim: global stride, offset and size along its global dim.
    llvm::SmallVector<int64_t, 4> st(trank), off(trank), sz(trank);
    for (size_t i = 0; i < trank; ++i) {
      st[i] = gstride[window[i]];
      off[i] = offsets[window[i]];
      sz[i] = gshape[window[i]];
    }
    const size_t last = trank - 1;
    const int64_t inner = tshape[last];
    const int64_t lo = std::max<int64_t>(0, -off[last]);
    const int64_t hi = std::min<int64_t>(inner, sz[last] - off[last]);
    llvm::SmallVector<int64_t, 4> idx(trank, 0);
    int64_t t = 0;
    while (true) {
      bool rowOk = true;
      int64_t rowBase = base;
      for (size_t i = 0; i < last; ++i) {
        int64_t g = off[i] + idx[i];
        if (g < 0 || g >= sz[i])
          rowOk = false;
        rowBase += idx[i] * st[i];
      }
      for (int64_t j = 0; j < inner; ++j, ++t) {
        bool ok = rowOk && j >= lo && j < hi;
        f(t, ok ? rowBase + j * st[last] : int64_t(-1));
      }
      // Advance the outer odometer.
      int i = static_cast<int>(last) - 1;
      for (; i >= 0; --i) {
        if (++idx[i] < tshape[i])
          break;
        idx[i] = 0;
      }
      if (i < 0)
        break;
    }
  }

  bool readOffsets(const Inst &inst, size_t first, size_t count,
                   llvm::SmallVectorImpl<int64_t> &offsets) {
    offsets.clear();
    for (size_t i = 0; i < count; ++i) {
      const RtValue &v = val(inst.in[first + i]);
      offsets.push_back(asSigned(static_cast<int64_t>(v.data[0]), v.elem.width));
    }
    return true;
  }

  bool execLoad(const Inst &inst) {
    auto load = cast<tile::LoadOp>(inst.op);
    const RtValue &src = val(inst.in[0]);
    if (!src.global)
      return internalError(inst, "load from a non-global value");
    GlobalBuffer &g = *src.global;
    llvm::SmallVector<int64_t, 4> offsets;
    if (inst.in.size() - 1 != g.shape.size())
      return internalError(inst, "offset count does not match the rank");
    readOffsets(inst, 1, g.shape.size(), offsets);
    double pad = 0;
    if (!scalarAttrToDouble(load.getPad(), pad))
      return fail(ErrorKind::Unsupported,
                  "unsupported pad attribute in " + opDesc(inst.op));
    RtValue &r = prep(inst, 0);
    pad = roundTo(r.elem, pad);
    llvm::ArrayRef<int64_t> window = load.getWindow();
    if (window.size() != r.shape.size())
      return internalError(inst, "window rank does not match the tile");
    double *pr = r.data.data();
    const double *pg = g.data.data();
    bool sameType = r.elem == g.elem;
    ElemType rt = r.elem;
    forEachWindowElement(r.shape, g.shape, offsets, window,
                         [&](int64_t t, int64_t gi) {
                           if (gi < 0)
                             pr[t] = pad;
                           else
                             pr[t] = sameType ? pg[gi] : roundTo(rt, pg[gi]);
                         });
    return true;
  }

  bool execStore(const Inst &inst) {
    auto store = cast<tile::StoreOp>(inst.op);
    const RtValue &v = val(inst.in[0]);
    const RtValue &dst = val(inst.in[1]);
    if (!dst.global)
      return internalError(inst, "store to a non-global value");
    GlobalBuffer &g = *dst.global;
    if (inst.in.size() - 2 != g.shape.size())
      return internalError(inst, "offset count does not match the rank");
    llvm::SmallVector<int64_t, 4> offsets;
    readOffsets(inst, 2, g.shape.size(), offsets);
    llvm::ArrayRef<int64_t> window = store.getWindow();
    if (window.size() != v.shape.size())
      return internalError(inst, "window rank does not match the tile");
    const double *pv = v.data.data();
    double *pg = g.data.data();
    bool sameType = v.elem == g.elem;
    ElemType gt = g.elem;
    forEachWindowElement(v.shape, g.shape, offsets, window,
                         [&](int64_t t, int64_t gi) {
                           if (gi >= 0)
                             pg[gi] = sameType ? pv[t] : roundTo(gt, pv[t]);
                         });
    return true;
  }

  bool execBroadcast(const Inst &inst) {
    const RtValue &a = val(inst.in[0]);
    RtValue &r = prep(inst, 0);
    size_t rank = r.shape.size();
    if (a.shape.size() != rank)
      return internalError(inst, "rank mismatch");
    llvm::SmallVector<int64_t, 4> ist(rank, 0);
    int64_t s = 1;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      ist[d] = a.shape[d] == 1 ? 0 : s;
      s *= a.shape[d];
    }
    size_t n = r.data.size();
    if (n == 0)
      return true;
    if (rank == 0) {
      r.data[0] = a.data[0];
      return true;
    }
    llvm::SmallVector<int64_t, 4> idx(rank, 0);
    int64_t src = 0;
    for (size_t t = 0; t < n; ++t) {
      r.data[t] = a.data[src];
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        src += ist[d];
        if (++idx[d] < r.shape[d])
          break;
        src -= ist[d] * idx[d];
        idx[d] = 0;
      }
    }
    return true;
  }

  bool execReduce(const Inst &inst) {
    auto red = cast<tile::ReduceOp>(inst.op);
    const RtValue &a = val(inst.in[0]);
    RtValue &r = prep(inst, 0);
    size_t axis = red.getAxis();
    if (axis >= a.shape.size())
      return internalError(inst, "reduction axis out of range");
    int64_t outer = 1, len = a.shape[axis], inner = 1;
    for (size_t d = 0; d < axis; ++d)
      outer *= a.shape[d];
    for (size_t d = axis + 1; d < a.shape.size(); ++d)
      inner *= a.shape[d];
    bool isMax = red.getKind() == tile::ReduceKind::Max;
    ElemType t = r.elem;
    const double *pa = a.data.data();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const double *p = pa + o * len * inner + i;
        double acc;
        if (t.isFloat()) {
          if (isMax) {
            acc = -std::numeric_limits<double>::infinity();
            for (int64_t k = 0; k < len; ++k) {
              double x = p[k * inner];
              if (x != x) {
                acc = x;
                break;
              }
              if (x > acc)
                acc = x;
            }
          } else {
            acc = 0;
            for (int64_t k = 0; k < len; ++k)
              acc += p[k * inner];
          }
          acc = roundTo(t, acc);
        } else {
          int64_t iacc;
          if (isMax) {
            iacc = std::numeric_limits<int64_t>::min();
            for (int64_t k = 0; k < len; ++k) {
              int64_t x = static_cast<int64_t>(p[k * inner]);
              if (t.width != 1)
                x = asSigned(x, t.width);
              iacc = std::max(iacc, x);
            }
            if (len == 0)
              iacc = t.width == 1 ? 0 : -(int64_t(1) << (t.width - 1 < 63 ? t.width - 1 : 62));
          } else {
            uint64_t u = 0;
            for (int64_t k = 0; k < len; ++k)
              u += static_cast<uint64_t>(static_cast<int64_t>(p[k * inner]));
            iacc = static_cast<int64_t>(u);
          }
          acc = roundIntResult(t, iacc);
        }
        r.data[o * inner + i] = acc;
      }
    }
    return true;
  }

  bool execMma(const Inst &inst) {
    auto mma = cast<tile::MmaOp>(inst.op);
    const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]),
                  &c = val(inst.in[2]);
    RtValue &r = prep(inst, 0);
    if (a.shape.size() != 2 || b.shape.size() != 2 || r.shape.size() != 2)
      return internalError(inst, "mma operands must be 2-D");
    bool ta = mma.getTransposeA(), tb = mma.getTransposeB();
    int64_t M = r.shape[0], N = r.shape[1];
    int64_t K = ta ? a.shape[0] : a.shape[1];
    if ((ta ? a.shape[1] : a.shape[0]) != M ||
        (tb ? b.shape[1] : b.shape[0]) != K ||
        (tb ? b.shape[0] : b.shape[1]) != N || c.data.size() != r.data.size())
      return internalError(inst, "mma shape mismatch");
    // A as M x K and B^T as N x K, both contiguous along K.
    std::vector<double> A(M * K), BT(N * K);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k)
        A[i * K + k] = ta ? a.data[k * M + i] : a.data[i * K + k];
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        BT[j * K + k] = tb ? b.data[j * K + k] : b.data[k * N + j];
    for (int64_t i = 0; i < M; ++i) {
      const double *ai = A.data() + i * K;
      for (int64_t j = 0; j < N; ++j) {
        const double *bj = BT.data() + j * K;
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += ai[k] * bj[k];
        r.data[i * N + j] = f32(c.data[i * N + j] + s);
      }
    }
    return true;
  }

  bool execOnlineSoftmax(const Inst &inst) {
    auto os = cast<tile::OnlineSoftmaxOp>(inst.op);
    const RtValue &S = val(inst.in[0]), &V = val(inst.in[1]),
                  &m = val(inst.in[2]), &l = val(inst.in[3]),
                  &acc = val(inst.in[4]);
    if (S.shape.size() != 2 || V.shape.size() != 2 || acc.shape.size() != 2)
      return internalError(inst, "online_softmax operands must be 2-D");
    int64_t M = S.shape[0], N = S.shape[1], D = V.shape[1];
    if (V.shape[0] != N || acc.shape[0] != M || acc.shape[1] != D ||
        m.data.size() != static_cast<size_t>(M) ||
        l.data.size() != static_cast<size_t>(M))
      return internalError(inst, "online_softmax shape mismatch");
    bool eager = os.getNormalization() == tile::Normalization::Eager;
    bool useExp2 = os.getExp2();
    // With a scale c, S stands for c * scores. The verifier rejects only
    // constant scales <= 0; a runtime one is checked here.
    bool scaled = static_cast<bool>(os.getScale());
    double scale = scaled ? val(inst.in[5]).data[0] : 1.0;
    if (!(scale > 0)) {
      std::string shown;
      llvm::raw_string_ostream(shown) << llvm::format("%g", scale);
      return runtimeError(inst,
                          "online_softmax scale must be positive, got " + shown);
    }
    // Results may not alias operands (distinct SSA values), but copy the
    // operands we read after writing results' storage is resized.
    RtValue &newMax = prep(inst, 0);
    RtValue &newSum = prep(inst, 1);
    RtValue &newAcc = prep(inst, 2);
    ElemType vt = V.elem;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> P(N), PV(D);
    for (int64_t i = 0; i < M; ++i) {
      const double *s = S.data.data() + i * N;
      double mi = m.data[i], li = l.data[i];
      double rowMax = -inf;
      for (int64_t j = 0; j < N; ++j) {
        double x = s[j];
        if (x != x) {
          rowMax = x;
          break;
        }
        if (x > rowMax)
          rowMax = x;
      }
      // As the decomposition: scale the row max of the raw scores, then one
      // fused multiply-add per score.
      if (scaled)
        rowMax = f32(scale * rowMax);
      double mNew = (mi != mi || rowMax != rowMax)
                        ? std::numeric_limits<double>::quiet_NaN()
                        : std::max(mi, rowMax);
      double base = mNew == -inf ? 0.0 : mNew;
      auto E = [&](double x) { return useExp2 ? std::exp2(x) : std::exp(x); };
      double alpha = f32(E(f32(mi - base)));
      double sumP = 0;
      for (int64_t j = 0; j < N; ++j) {
        double x =
            f32(scaled ? std::fma(s[j], scale, -base) : s[j] - base);
        P[j] = f32(E(x));
        sumP += P[j];
      }
      double lNew = f32(alpha * li + sumP);
      std::fill(PV.begin(), PV.end(), 0.0);
      for (int64_t j = 0; j < N; ++j) {
        double pc = roundTo(vt, P[j]);
        if (pc == 0)
          continue;
        const double *vj = V.data.data() + j * D;
        for (int64_t d = 0; d < D; ++d)
          PV[d] += pc * vj[d];
      }
      const double *ai = acc.data.data() + i * D;
      double *ri = newAcc.data.data() + i * D;
      if (eager) {
        for (int64_t d = 0; d < D; ++d)
          ri[d] = lNew == 0 ? 0.0 : f32((alpha * li * ai[d] + PV[d]) / lNew);
      } else {
        for (int64_t d = 0; d < D; ++d)
          ri[d] = f32(alpha * ai[d] + PV[d]);
      }
      newMax.data[i] = mNew;
      newSum.data[i] = lNew;
    }
    return true;
  }

  bool execFinalize(const Inst &inst) {
    const RtValue &acc = val(inst.in[0]), &l = val(inst.in[1]);
    RtValue &r = prep(inst, 0);
    if (acc.shape.size() != 2 ||
        l.data.size() != static_cast<size_t>(acc.shape[0]))
      return internalError(inst, "online_softmax_finalize shape mismatch");
    int64_t M = acc.shape[0], D = acc.shape[1];
    for (int64_t i = 0; i < M; ++i) {
      double li = l.data[i];
      for (int64_t d = 0; d < D; ++d)
        r.data[i * D + d] = li == 0 ? 0.0 : f32(acc.data[i * D + d] / li);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Dispatch
  //===--------------------------------------------------------------------===//

  bool exec(const Inst &inst) {
    switch (inst.opc) {
    case Opc::Yield:
    case Opc::Return:
    case Opc::Unsupported:
      return internalError(inst, "unexpected op");
    case Opc::For:
      return execFor(inst);
    case Opc::If:
      return execIf(inst);
    case Opc::Constant: {
      if (inst.constIdx < 0)
        return fail(ErrorKind::Unsupported,
                    "unsupported constant in " + opDesc(inst.op));
      const RtValue &c = constants[inst.constIdx];
      RtValue &r = slots[inst.out[0].slot];
      r.kind = c.kind;
      r.elem = c.elem;
      r.shape = c.shape;
      r.data.assign(c.data.begin(), c.data.end());
      r.global = nullptr;
      return true;
    }
    case Opc::ArithMath:
      return execArithMath(inst);
    case Opc::ProgramId:
    case Opc::NumPrograms: {
      unsigned axis = inst.opc == Opc::ProgramId
                          ? cast<tile::ProgramIdOp>(inst.op).getAxis()
                          : cast<tile::NumProgramsOp>(inst.op).getAxis();
      if (!ctx->hasProgram)
        return runtimeError(inst, "program coordinates are not available "
                                  "while evaluating the grid");
      if (axis > 2)
        return internalError(inst, "grid axis out of range");
      RtValue &r = prep(inst, 0);
      int64_t v = inst.opc == Opc::ProgramId ? ctx->programId[axis]
                                             : ctx->numPrograms[axis];
      r.data[0] = roundIntResult(r.elem, v);
      return true;
    }
    case Opc::Dim: {
      auto dim = cast<tile::DimOp>(inst.op);
      const RtValue &src = val(inst.in[0]);
      if (!src.global || dim.getIndex() >= src.global->shape.size())
        return internalError(inst, "bad tile.dim operand");
      RtValue &r = prep(inst, 0);
      r.data[0] = roundIntResult(r.elem, src.global->shape[dim.getIndex()]);
      return true;
    }
    case Opc::TensorExtract: {
      const RtValue &a = val(inst.in[0]);
      RtValue &r = prep(inst, 0);
      if (inst.in.size() - 1 != a.shape.size())
        return internalError(inst, "index count does not match the rank");
      int64_t linear = 0;
      for (size_t d = 0; d < a.shape.size(); ++d) {
        const RtValue &iv = val(inst.in[d + 1]);
        int64_t i = asSigned(static_cast<int64_t>(iv.data[0]), iv.elem.width);
        if (i < 0 || i >= a.shape[d])
          return runtimeError(inst, "tensor.extract index " +
                                        std::to_string(i) +
                                        " out of bounds in dim " +
                                        std::to_string(d));
        linear = linear * a.shape[d] + i;
      }
      r.data[0] = a.data[linear];
      return true;
    }
    case Opc::TensorFromElements: {
      RtValue &r = prep(inst, 0);
      if (inst.in.size() != r.data.size())
        return internalError(inst, "element count mismatch");
      for (size_t i = 0; i < inst.in.size(); ++i)
        r.data[i] = roundTo(r.elem, val(inst.in[i]).data[0]);
      return true;
    }
    case Opc::TensorEmpty: {
      RtValue &r = prep(inst, 0);
      std::fill(r.data.begin(), r.data.end(), 0.0);
      return true;
    }
    case Opc::TensorReshape: {
      const RtValue &a = val(inst.in[0]);
      RtValue &r = prep(inst, 0);
      if (a.data.size() != r.data.size())
        return internalError(inst, "size mismatch");
      std::copy(a.data.begin(), a.data.end(), r.data.begin());
      return true;
    }
    case Opc::TensorSplat:
    case Opc::Splat: {
      const RtValue &a = val(inst.in[0]);
      RtValue &r = prep(inst, 0);
      double v = roundTo(r.elem, a.data[0]);
      std::fill(r.data.begin(), r.data.end(), v);
      return true;
    }
    case Opc::Iota: {
      RtValue &r = prep(inst, 0);
      for (size_t i = 0; i < r.data.size(); ++i)
        r.data[i] = roundTo(r.elem, static_cast<double>(i));
      return true;
    }
    case Opc::Load:
      return execLoad(inst);
    case Opc::Store:
      return execStore(inst);
    case Opc::ExpandDims: {
      const RtValue &a = val(inst.in[0]);
      RtValue &r = prep(inst, 0);
      if (a.data.size() != r.data.size())
        return internalError(inst, "size mismatch");
      std::copy(a.data.begin(), a.data.end(), r.data.begin());
      return true;
    }
    case Opc::Broadcast:
      return execBroadcast(inst);
    case Opc::Trans: {
      const RtValue &a = val(inst.in[0]);
      RtValue &r = prep(inst, 0);
      if (a.shape.size() != 2 || r.shape.size() != 2)
        return internalError(inst, "tile.trans needs 2-D tiles");
      int64_t R = a.shape[0], C = a.shape[1];
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < C; ++j)
          r.data[j * R + i] = a.data[i * C + j];
      return true;
    }
    case Opc::Reduce:
      return execReduce(inst);
    case Opc::Mma:
      return execMma(inst);
    case Opc::OnlineSoftmax:
      return execOnlineSoftmax(inst);
    case Opc::Finalize:
      return execFinalize(inst);
    }
    return internalError(inst, "unhandled opcode");
  }

  bool run(llvm::ArrayRef<RtValue> args, const LaunchContext &context,
           std::vector<RtValue> *results, InterpError &error) {
    if (compileError) {
      error = *compileError;
      return false;
    }
    ctx = &context;
    err = &error;
    CBlock &entryBlock = blocks[entry];
    if (args.size() != entryBlock.args.size()) {
      error = {ErrorKind::Internal,
               "function '" + func.getName().str() + "' takes " +
                   std::to_string(entryBlock.args.size()) +
                   " arguments but got " + std::to_string(args.size())};
      return false;
    }
    for (size_t i = 0; i < args.size(); ++i)
      slots[entryBlock.args[i]] = args[i];
    std::vector<RtValue> yielded;
    if (!execBlock(entry, yielded))
      return false;
    if (results)
      *results = std::move(yielded);
    return true;
  }
};

FunctionRunner::FunctionRunner(func::FuncOp func)
    : impl(std::make_unique<Impl>(func)) {}
FunctionRunner::~FunctionRunner() = default;

bool FunctionRunner::run(llvm::ArrayRef<RtValue> args,
                         const LaunchContext &ctx,
                         std::vector<RtValue> *results, InterpError &error) {
  return impl->run(args, ctx, results, error);
}

//===----------------------------------------------------------------------===//
// Kernel-level entry points
//===----------------------------------------------------------------------===//

bool findKernel(ModuleOp module, func::FuncOp &kernel, func::FuncOp &grid,
                std::string &error) {
  llvm::SmallVector<func::FuncOp, 2> kernels;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("tile.grid"))
      kernels.push_back(f);
  if (kernels.empty()) {
    error = "the module has no kernel (a func.func with 'tile.grid')";
    return false;
  }
  if (kernels.size() > 1) {
    error = "the module has " + std::to_string(kernels.size()) +
            " kernels (func.func with 'tile.grid'); expected one";
    return false;
  }
  kernel = kernels.front();
  auto sym = kernel->getAttrOfType<FlatSymbolRefAttr>("tile.grid");
  if (!sym) {
    error = "'tile.grid' of kernel '" + kernel.getName().str() +
            "' is not a symbol reference";
    return false;
  }
  grid = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(kernel, sym);
  if (!grid) {
    error = "grid function '" + sym.getValue().str() + "' of kernel '" +
            kernel.getName().str() + "' not found";
    return false;
  }
  if (grid.getNumArguments() != kernel.getNumArguments()) {
    error = "grid function '" + grid.getName().str() + "' takes " +
            std::to_string(grid.getNumArguments()) +
            " arguments but the kernel takes " +
            std::to_string(kernel.getNumArguments());
    return false;
  }
  if (kernel.isExternal() || grid.isExternal()) {
    error = "kernel or grid function has no body";
    return false;
  }
  return true;
}

bool evaluateGrid(func::FuncOp gridFn, llvm::ArrayRef<RtValue> args,
                  std::array<int64_t, 3> &grid, InterpError &error) {
  FunctionRunner runner(gridFn);
  LaunchContext ctx;
  ctx.hasProgram = false;
  std::vector<RtValue> results;
  if (!runner.run(args, ctx, &results, error))
    return false;
  if (results.size() != 3) {
    error = {ErrorKind::Internal, "grid function '" + gridFn.getName().str() +
                                      "' returns " +
                                      std::to_string(results.size()) +
                                      " values instead of 3"};
    return false;
  }
  for (int axis = 0; axis < 3; ++axis) {
    const RtValue &r = results[axis];
    if (r.kind != RtValue::Kind::Scalar || r.elem.kind != ElemType::Int) {
      error = {ErrorKind::Internal, "grid function result " +
                                        std::to_string(axis) +
                                        " is not an integer scalar"};
      return false;
    }
    int64_t v = asSigned(static_cast<int64_t>(r.data[0]), r.elem.width);
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
      error = {ErrorKind::Runtime,
               "grid size along axis " + std::to_string(axis) + " is " +
                   std::to_string(v) + " (must be in [0, 2^31))"};
      return false;
    }
    grid[axis] = v;
  }
  return true;
}

bool runAllPrograms(func::FuncOp kernel, llvm::ArrayRef<RtValue> args,
                    const std::array<int64_t, 3> &grid, InterpError &error) {
  FunctionRunner runner(kernel);
  LaunchContext ctx;
  ctx.numPrograms = grid;
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        ctx.programId = {{x, y, z}};
        if (!runner.run(args, ctx, nullptr, error)) {
          if (error.kind == ErrorKind::Runtime)
            error.message += " (program id (" + std::to_string(x) + ", " +
                             std::to_string(y) + ", " + std::to_string(z) +
                             "))";
          return false;
        }
      }
  return true;
}

} // namespace interp
} // namespace flash

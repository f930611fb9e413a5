//===- Program.h - A function compiled for the interpreter ------*- C++ -*-===//
//
// A func.func is compiled once into per-block instruction lists whose
// operands and results are indices into a flat slot array, so that running
// an instruction is a switch on a precomputed opcode.
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_INTERP_PROGRAM_H
#define FLASHC_INTERP_PROGRAM_H

#include "flashc/Interp/Interpreter.h"
#include "flashc/Semantics/ArithMathOpcode.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace flash::interp {

/// What the executor switches on: control flow, the arith / math ops (one
/// entry; their opcode comes from flashc/Semantics), tile ops and the tensor
/// ops canonicalization may leave behind.
enum class Opc : uint8_t {
  Yield,
  Return,
  For,
  If,
  Constant,
  ArithMath,
  ProgramId,
  NumPrograms,
  Dim,
  Splat,
  Iota,
  Load,
  LoadScalar,
  Store,
  AtomicAdd,
  DeviceAssert,
  ExpandDims,
  Broadcast,
  Trans,
  Reduce,
  Mma,
  OnlineSoftmax,
  Finalize,
  TensorSplat,
  TensorExtract,
  TensorFromElements,
  TensorEmpty,
  TensorReshape,
};

/// Where an instruction's result goes and what it holds.
struct OutInfo {
  unsigned slot;
  ElemType elem;
  bool isTensor;
  llvm::SmallVector<int64_t, 4> shape;
  size_t numel;
};

struct Inst {
  mlir::Operation *op;
  Opc opc;
  sem::ArithMathOp arith; ///< Opc::ArithMath only
  llvm::SmallVector<unsigned, 4> in;
  llvm::SmallVector<OutInfo, 1> out;
  llvm::SmallVector<bool, 4> movable; ///< terminators: operand may be moved
  int region0 = -1, region1 = -1;     ///< compiled block indices
  int constIdx = -1;                  ///< Opc::Constant: Program::constants
};

struct CBlock {
  llvm::SmallVector<unsigned, 4> args;
  std::vector<Inst> insts; ///< ends with the terminator
};

struct Program {
  mlir::func::FuncOp func;
  std::vector<CBlock> blocks;
  std::vector<RtValue> constants;
  unsigned numSlots = 0;
  int entry = -1;
  /// The first problem found; a program with one never runs.
  std::optional<InterpError> error;
};

/// Compiles `func`; problems land in Program::error.
Program compileFunction(mlir::func::FuncOp func);

/// "'op.name'", for messages (the location goes into InterpError::loc).
std::string describeOp(mlir::Operation *op);

/// Decodes a scalar attribute (IntegerAttr / FloatAttr / BoolAttr).
bool scalarAttrToDouble(mlir::Attribute attr, double &out);

} // namespace flash::interp

#endif // FLASHC_INTERP_PROGRAM_H

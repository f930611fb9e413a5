//===- Executor.h - Runs a compiled Program ---------------------*- C++ -*-===//
//
// The executor's state (the slot array, the launch context, where errors go)
// and its exec functions, one file per family:
//   Executor.cpp      blocks, scf.for / scf.if, constants, the dispatch
//   ArithMathOps.cpp  the arith / math ops, through flashc/Semantics
//   TileOps.cpp       grid coordinates, splat, iota, broadcast, trans, reduce
//   WindowOps.cpp     tile.load / tile.store / tile.atomic_add through windows
//                     (gathered rows too), tile.load_scalar
//   AttentionOps.cpp  tile.mma, tile.online_softmax and its finalize
//   TensorOps.cpp     the tensor.* ops canonicalization may leave behind
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_INTERP_EXECUTOR_H
#define FLASHC_INTERP_EXECUTOR_H

#include "Program.h"

namespace flash::interp {

class Executor {
public:
  /// `program` must outlive the executor and have no compile error.
  explicit Executor(const Program &program);

  /// Runs the program's entry block with `args` bound to its arguments.
  bool run(llvm::ArrayRef<RtValue> args, const LaunchContext &ctx,
           std::vector<RtValue> *results, InterpError &error);

private:
  // Executor.cpp
  bool execBlock(int idx, std::vector<RtValue> &yielded);
  bool exec(const Inst &inst);
  bool execFor(const Inst &inst);
  bool execIf(const Inst &inst);
  bool execConstant(const Inst &inst);

  // ArithMathOps.cpp
  bool execArithMath(const Inst &inst);
  template <typename F> bool intBinary(const Inst &inst, F f);
  template <typename F> bool floatBinary(const Inst &inst, F f);
  template <typename F> bool floatUnary(const Inst &inst, F f);
  bool intUnary(const Inst &inst);
  bool intMulExtended(const Inst &inst);
  bool floatTernary(const Inst &inst);
  bool cmpI(const Inst &inst);
  bool cmpF(const Inst &inst);
  bool select(const Inst &inst);
  bool convert(const Inst &inst);

  // TileOps.cpp
  bool execProgramCoordinate(const Inst &inst);
  bool execDim(const Inst &inst);
  bool execSplat(const Inst &inst);
  bool execIota(const Inst &inst);
  bool execLoad(const Inst &inst);
  bool execLoadScalar(const Inst &inst);
  bool execStore(const Inst &inst);
  bool execAtomicAdd(const Inst &inst);
  bool execDeviceAssert(const Inst &inst);
  bool writeWindow(const Inst &inst, llvm::ArrayRef<int64_t> window,
                   bool hasMask, bool accumulate);
  bool execBroadcast(const Inst &inst);
  bool execTrans(const Inst &inst);
  bool execReduce(const Inst &inst);
  bool execMma(const Inst &inst);
  bool execOnlineSoftmax(const Inst &inst);
  bool execFinalize(const Inst &inst);
  void readOffsets(const Inst &inst, size_t first, size_t count,
                   llvm::SmallVectorImpl<int64_t> &offsets);

  // TensorOps.cpp
  bool execTensorExtract(const Inst &inst);
  bool execTensorFromElements(const Inst &inst);
  bool execTensorEmpty(const Inst &inst);
  /// tile.expand_dims and the tensor reshapes: the data as it is.
  bool execReshape(const Inst &inst);

  // Shared helpers (Executor.cpp).
  RtValue &val(unsigned slot) { return slots[slot]; }
  /// The result slot `k` of `inst`, shaped and typed, its data resized.
  RtValue &prep(const Inst &inst, unsigned k);
  bool fail(ErrorKind kind, std::string msg);
  bool runtimeError(const Inst &inst, const std::string &what);
  bool internalError(const Inst &inst, const std::string &what);
  /// Stride (0 or 1) to read an operand `v` against `n` result elements.
  bool strideFor(const Inst &inst, const RtValue &v, size_t n, size_t &s);

  const Program &program;
  std::vector<RtValue> slots;
  const LaunchContext *ctx = nullptr;
  InterpError *err = nullptr;
};

} // namespace flash::interp

#endif // FLASHC_INTERP_EXECUTOR_H

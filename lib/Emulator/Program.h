//===- Program.h - A kernel compiled to the emulator's instructions -*- C++
//-*-//
//
// prepare() resolves the gpu.func once into a Program: a flat list of
// instructions whose operands are value ids (cells in the register file,
// ValueModel.h) and whose regions are index ranges. Each instruction carries
// the function that executes it, so the executor has no per-op switch.
//
// Compilation goes op by op through an OpHandlers table: one compile handler
// per op name, registered by the family file that defines it
// (CompileArith, CompileVector, CompileLLVM, CompileNVVM, CompileSCF). A new
// op is one compile handler there plus one exec handler (ExecHandlers.h).
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_PROGRAM_H
#define FLASH_LIB_EMULATOR_PROGRAM_H

#include "ValueModel.h"

#include "flashc/Emulator/Emulator.h"
#include "flashc/Emulator/WarpOps.h"
#include "flashc/Semantics/ArithMathOpcode.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace flash::emu {

class Executor;
struct ActiveThreads;
struct Instr;
struct WgmmaPlan;

/// Runs one instruction for the active threads; false once it has reported
/// an error.
using ExecFn = bool (*)(Executor &, const Instr &, const ActiveThreads &);

/// Where a value's cells are: n per thread from `base`, of kind `sk` (the
/// first field's kind for structs).
struct ValInfo {
  uint32_t base = 0;
  uint32_t n = 1;
  SK sk = SK::I32;
};

/// One instruction. Which fields mean what is the business of the pair of
/// compile and exec handlers that write and read them.
struct Instr {
  ExecFn exec = nullptr;
  uint32_t next = 0; ///< the instruction after this one and its regions
  SK sk = SK::I32;   ///< result kind (or operand kind for compares / casts)
  SK sk2 = SK::I32;  ///< the other kind for casts (source)
  sem::ArithMathOp arith; ///< arith/math ops: what they compute
  int32_t res = -1;
  int32_t res2 = -1; ///< a second result (arith.mului_extended's high word)
  int32_t a = -1, b = -1, c = -1;
  uint32_t aux = 0; ///< index into a side table
  int64_t imm = 0, imm2 = 0;
  mlir::Operation *op = nullptr;
};

struct IfInfo {
  uint32_t thenBegin, thenEnd, elseBegin, elseEnd;
  std::vector<int32_t> thenYield, elseYield, results;
  /// A warp-specialized kernel's role split: the sides run side by side.
  bool roles = false;
  /// With `tile.pingpong`: the consumer side's warpgroups (its threads in
  /// blocks of 128), each run as a side of its own, since they wait on
  /// each other's named barriers; 0 or 1: the consumer side is one.
  int64_t consumerGroups = 0;
};
struct ForInfo {
  uint32_t bodyBegin, bodyEnd;
  int32_t lb, ub, step, iv;
  bool unsignedCmp = false;
  std::vector<int32_t> inits, iterArgs, yields, results;
};
struct GepInfo {
  int64_t constOffset = 0;
  std::vector<std::pair<int32_t, int64_t>> dyn; ///< (value, byte scale)
};
struct MmaInfo {
  std::array<int32_t, 4> a;
  std::array<int32_t, 2> b;
  std::array<int32_t, 4> c;
  ElementType type;
  bool aPacked; ///< A/B registers are i32 (packed) rather than vector<2x16>
};

/// The CTA's shared window: every addr-space-3 global of the gpu.module, in
/// order, each at its alignment.
struct SharedLayout {
  llvm::DenseMap<mlir::Operation *, int64_t> base; ///< LLVM::GlobalOp -> offset
  int64_t total = 0;
  int64_t limit = 0;    ///< accesses must stay below (<= total)
  std::string limitWhy; ///< where `limit` comes from, for messages
};

/// A compiled kernel: immutable once prepare() has succeeded.
struct Program {
  std::string kernelName;
  std::array<int64_t, 3> block{{1, 1, 1}};
  int64_t T = 0; ///< threads per CTA
  int64_t numWarps = 0;
  SharedLayout shared;
  unsigned numArgs = 0; ///< the first numArgs values are the arguments

  std::vector<ValInfo> vals;
  std::vector<Instr> code;
  uint32_t topEnd = 0;   ///< the kernel body is code[0, topEnd)
  unsigned maxDepth = 0; ///< deepest region nesting
  /// Some op makes CTAs depend on the order they run in through global
  /// memory (a float atomic add rounds differently in another order): the
  /// launch runs CTAs one after another, in grid order.
  bool serialCTAs = false;
  uint32_t numCells = 0;
  /// Values filled once per launch, never dispatched: (value id, its cells
  /// of one thread).
  std::vector<std::pair<int32_t, std::vector<Cell>>> constants;

  // Side tables of the instructions (Instr::aux).
  std::vector<IfInfo> ifs;
  std::vector<ForInfo> fors;
  std::vector<GepInfo> geps;
  std::vector<MmaInfo> mmas;
  std::vector<std::vector<int32_t>> lists;  ///< operand lists
  std::vector<std::vector<int64_t>> ilists; ///< integer lists (shuffle masks)
};

/// Compiles one gpu.func into a Program; the compile handlers' toolbox.
class ProgramBuilder {
public:
  ProgramBuilder(Program &program, Error &error)
      : program(program), error(error) {}

  /// Fills `program`; false (with the error) on IR it cannot run.
  bool compileKernel(mlir::gpu::GPUFuncOp f);

  /// Reports `what` about `op` as a preparation error; returns false.
  bool fail(mlir::Operation *op, const std::string &what,
            Error::Kind kind = Error::Kind::Unsupported);

  /// Gives `v` its cells; error if its type has no cell shape.
  bool define(mlir::Operation *op, mlir::Value v, int32_t &id);
  /// Defines each of `vs`, appending their ids to `ids`.
  bool defineAll(mlir::Operation *op, mlir::ValueRange vs,
                 std::vector<int32_t> &ids);
  /// Defines result 0 of I.op as I.res.
  bool defineResult(Instr &I) {
    return define(I.op, I.op->getResult(0), I.res);
  }
  /// The id of an already defined value, -1 if none.
  int32_t idOf(mlir::Value v) const {
    auto it = valueIds.find(v);
    return it == valueIds.end() ? -1 : it->second;
  }
  const ValInfo &val(int32_t id) const { return program.vals[id]; }

  /// A new instruction for `op`, executed by `exec`.
  static Instr instr(mlir::Operation *op, ExecFn exec) {
    Instr I;
    I.op = op;
    I.exec = exec;
    return I;
  }
  /// Appends `I`; returns its index.
  uint32_t emit(Instr I);
  /// Compiles `op` as a register move: result 0 takes operand 0's cells
  /// (splats, and pointer casts that keep the address).
  bool emitMove(mlir::Operation *op);
  /// Index of the next instruction to be emitted.
  uint32_t here() const { return program.code.size(); }
  /// Compiles the ops of a block nested one region deeper.
  bool compileRegion(mlir::Block &block);

  Program &program;
  /// WgmmaExec.cpp's analysis of the kernel's wgmma registers (null when
  /// the kernel has no wgmma).
  std::shared_ptr<WgmmaPlan> wgmmaPlan;

private:
  bool compileBlock(mlir::Block &block);
  bool compileOp(mlir::Operation *op);
  bool layOutShared(mlir::gpu::GPUFuncOp f);

  Error &error;
  llvm::DenseMap<mlir::Value, int32_t> valueIds;
  unsigned depth = 0;
};

/// Compiles one op: emits its instructions or defines its values.
using CompileFn = bool (*)(ProgramBuilder &, mlir::Operation *);

/// The compile handler of each op the emulator runs, by op name. The
/// arith/math ops of flashc/Semantics go to compileArithMath instead.
class OpHandlers {
public:
  template <typename... OpTys> void add(CompileFn fn) {
    (add(OpTys::getOperationName(), fn), ...);
  }
  void add(llvm::StringRef name, CompileFn fn) { byName[name] = fn; }
  CompileFn lookup(llvm::StringRef name) const { return byName.lookup(name); }

private:
  llvm::StringMap<CompileFn> byName;
};

/// Each family file registers its ops.
void addArithOps(OpHandlers &handlers);
void addVectorOps(OpHandlers &handlers);
void addLLVMOps(OpHandlers &handlers);
void addNVVMOps(OpHandlers &handlers);
void addSCFOps(OpHandlers &handlers);
/// WgmmaExec.cpp: the wgmma ops (registered by addNVVMOps), and the hooks
/// that place its register checks: planWgmma before the kernel body is
/// compiled, wgmmaBeforeOp / wgmmaAfterOp around each op, finishWgmmaPlan
/// after the body.
void addWgmmaOps(OpHandlers &handlers);
bool planWgmma(ProgramBuilder &b, mlir::gpu::GPUFuncOp f);
bool wgmmaBeforeOp(ProgramBuilder &b, mlir::Operation *op);
bool wgmmaAfterOp(ProgramBuilder &b, mlir::Operation *op);
void finishWgmmaPlan(ProgramBuilder &b);

/// Compiles an arith/math op that sem::classifyArithMath classified as `arith`
/// to one instruction (ArithMathOps.h).
bool compileArithMath(ProgramBuilder &b, mlir::Operation *op,
                      const sem::ArithMathOp &arith);

/// The printed form of a type, for messages.
std::string typeStr(mlir::Type t);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_PROGRAM_H

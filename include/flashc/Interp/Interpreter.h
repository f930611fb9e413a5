//===- Interpreter.h - Tile-level reference interpreter ------------*- C++ -*-===//
//
// The semantic oracle of flashc: executes a tile-dialect kernel (plus arith,
// math, scf) on the CPU with every value held as doubles rounded to its
// element type after each op. Global tensors are shared buffers that persist
// across program instances.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_INTERP_INTERPRETER_H
#define FLASH_INTERP_INTERPRETER_H

#include "flashc/Semantics/ScalarOps.h"
#include "flashc/Semantics/ScalarType.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flash {
namespace interp {

/// An element type the interpreter can hold: f16, bf16, f32, f64, iN
/// (N <= 64) and index. Values are doubles: floats rounded to their type,
/// integers in stored form (see flashc/Semantics/ScalarType.h).
using ElemType = sem::ScalarType;

/// Rounds `v` to `t`: floats to nearest even, integers wrap (i1 -> 0/1).
using sem::roundTo;

/// A global tensor: row-major, element values already rounded to `elem`.
struct GlobalBuffer {
  ElemType elem;
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t numElements() const;
};

/// One runtime value: a scalar, a tile (tensor) or a reference to a global.
struct RtValue {
  enum class Kind : uint8_t { None, Scalar, Tensor, Global };
  Kind kind = Kind::None;
  ElemType elem;
  std::vector<int64_t> shape; ///< empty for scalars and globals
  std::vector<double> data;   ///< one element for scalars
  GlobalBuffer *global = nullptr;

  static RtValue scalar(ElemType elem, double v);
  static RtValue tensor(ElemType elem, std::vector<int64_t> shape,
                        std::vector<double> data);
  static RtValue globalRef(GlobalBuffer *buffer);
};

enum class ErrorKind {
  Runtime,     ///< the program did something invalid (division by zero, ...)
  Unsupported, ///< an op or type the interpreter does not handle
  Internal,    ///< malformed IR the verifier should have rejected
};

struct InterpError {
  ErrorKind kind = ErrorKind::Internal;
  std::string message; ///< one line, no "error: " prefix, no location
  /// The op it happened at, when there is one: `flashc run` prints it
  /// clang-style, with the source line (flashc/Support/SourceDiagnostics.h).
  std::optional<mlir::Location> loc;
};

/// Program coordinates visible to tile.program_id / tile.num_programs.
struct LaunchContext {
  std::array<int64_t, 3> programId{{0, 0, 0}};
  std::array<int64_t, 3> numPrograms{{1, 1, 1}};
  /// False while evaluating the grid function (program ids are an error).
  bool hasProgram = true;
};

/// A function prepared once (operands resolved to slots) and run many times.
class FunctionRunner {
public:
  explicit FunctionRunner(mlir::func::FuncOp func);
  ~FunctionRunner();
  FunctionRunner(const FunctionRunner &) = delete;
  FunctionRunner &operator=(const FunctionRunner &) = delete;

  /// Runs the body once with `args` bound to the entry block arguments;
  /// `results` (optional) receives the func.return operands.
  bool run(llvm::ArrayRef<RtValue> args, const LaunchContext &ctx,
           std::vector<RtValue> *results, InterpError &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Finds the kernel (the func.func with `tile.grid`) and its grid function.
bool findKernel(mlir::ModuleOp module, mlir::func::FuncOp &kernel,
                mlir::func::FuncOp &grid, std::string &error);

/// Runs the grid function; each size must be in [0, 2^31).
bool evaluateGrid(mlir::func::FuncOp gridFn, llvm::ArrayRef<RtValue> args,
                  std::array<int64_t, 3> &grid, InterpError &error);

/// Runs every program instance of `kernel` (axis 0 fastest) in order.
bool runAllPrograms(mlir::func::FuncOp kernel, llvm::ArrayRef<RtValue> args,
                    const std::array<int64_t, 3> &grid, InterpError &error);

} // namespace interp
} // namespace flash

#endif // FLASH_INTERP_INTERPRETER_H

//===- Kernel.cpp - Finding a kernel, its grid, and running every program -===//

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Interp/Interpreter.h"
#include "flashc/Runtime/Arch.h"

#include "mlir/IR/SymbolTable.h"

#include <limits>

using namespace mlir;

namespace flash::interp {

bool findKernel(ModuleOp module, func::FuncOp &kernel, func::FuncOp &grid,
                std::string &error) {
  llvm::SmallVector<func::FuncOp, 2> kernels;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(tile::kGridAttrName))
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
  auto sym = kernel->getAttrOfType<FlatSymbolRefAttr>(tile::kGridAttrName);
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
    error = {ErrorKind::Internal,
             "grid function '" + gridFn.getName().str() + "' returns " +
                 std::to_string(results.size()) + " values instead of 3"};
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
    int64_t v = sem::asSigned(static_cast<int64_t>(r.data[0]), r.elem.width);
    if (v < 0 || v > kMaxGridDims[axis]) {
      error = {ErrorKind::Runtime,
               "grid size along axis " + std::to_string(axis) + " is " +
                   std::to_string(v) + " (must be in [0, " +
                   std::to_string(kMaxGridDims[axis]) +
                   "], the GPU's limit)"};
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

} // namespace flash::interp

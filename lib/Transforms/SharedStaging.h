//===- SharedStaging.h - shared-memory staging helpers ----------*- C++ -*-===//
#ifndef FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H
#define FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace flash {
/// Whether `op` may run more than once per kernel launch, inside a loop of its
/// function: shared memory it writes may then still be read by other warps
/// from the previous run.
inline bool isInsideLoop(mlir::Operation *op) {
  for (mlir::Operation *parent = op->getParentOp();
       parent && !mlir::isa<mlir::func::FuncOp>(parent);
       parent = parent->getParentOp())
    if (mlir::isa<mlir::LoopLikeOpInterface>(parent))
      return true;
  return false;
}
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_SHAREDSTAGING_H

//===- Passes.h - flashc transformation passes ------------------*- C++ -*-===//
#ifndef FLASH_LIB_TRANSFORMS_PASSES_H
#define FLASH_LIB_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace flash {
#define GEN_PASS_DECL
#include "flashc/Transforms/Passes.h.inc"

/// Patterns that expand tile.online_softmax{,_finalize} into primitive ops.
void populateDecomposeOnlineSoftmaxPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that merge a mask's comparisons of one value in one direction
/// (`c < a && c <= b` -> `c <= min(a - 1, b)`) into one.
void populateMergeMaskBoundsPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that move a comparison's scalar offset to the side with fewer
/// registers (`start_n + iota <= limit` -> `iota <= limit - start_n`).
void populateShiftCompareOffsetsPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_PASSES_H

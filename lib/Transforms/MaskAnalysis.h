//===- MaskAnalysis.h - which blocks of a loop a mask hides -----*- C++ -*-===//
//
// The analysis behind tile-split-masked-loops. A loop over key blocks,
// `scf.for %n = lb to ub step s`, masks a 2-D tile of scores: element
// (i, j) of the mask is a condition on the block's row i, column j and the
// induction variable n. When the condition is built from comparisons of
// integer expressions of the form d * n + g(i, j) (d a constant, g monotone
// in i and in j: iota, splats of values from outside the loop, +, -, * and
// signed / by constants, min, max, expand_dims, broadcast), combined with
// `and` / `or`, the iterations in which the mask is all true and those in
// which it is all false are intervals of n whose bounds are evaluated once,
// before the loop, from the corners of the block (where g takes its extremes).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_MASKANALYSIS_H
#define FLASH_LIB_TRANSFORMS_MASKANALYSIS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace flash {

/// The iterations {n : lower <= n < upper} of a loop (a null bound is
/// absent), or none (`empty`).
struct IterationSet {
  mlir::Value lower, upper;
  bool empty = false;

  bool isFull() const { return !empty && !lower && !upper; }
};

/// What a mask says about the blocks of a loop: in the iterations of
/// `visible` every element of the mask is true; outside `live`, every one is
/// false. Both are safe approximations (visible may miss some iterations,
/// live may hold extra ones).
struct BlockSets {
  IterationSet visible, live;
};

/// Why a mask was not analysed: the value the analysis stopped at (the
/// first that is not of the form above) and what it lacks.
struct MaskFailure {
  mlir::Value value;
  std::string reason;
};

/// Analyses the i1 tiles of one loop's masks. The bound arithmetic goes
/// before the loop; what an analysis that fails has built is erased.
class MaskAnalysis {
public:
  explicit MaskAnalysis(mlir::scf::ForOp loop);

  /// The sets of `mask` (an i1 tile), or failure when it is not built from
  /// comparisons this analysis understands (a loaded mask, say).
  mlir::FailureOr<BlockSets> analyze(mlir::Value mask);

  /// Where the last failed `analyze` stopped.
  const MaskFailure &lastFailure() const { return stop; }

  /// a ∩ b, for the `and` of two masks (exact for both sets).
  IterationSet intersect(const IterationSet &a, const IterationSet &b);

private:
  mlir::FailureOr<BlockSets> analyzeCondition(mlir::Value mask);
  mlir::FailureOr<BlockSets> analyzeComparison(mlir::Operation *cmp);
  IterationSet halfLine(int64_t d, mlir::Value c);
  IterationSet unionWithin(const IterationSet &a, const IterationSet &b);
  IterationSet hull(const IterationSet &a, const IterationSet &b);
  mlir::Value evaluate(mlir::Value v, llvm::ArrayRef<int64_t> index);
  mlir::Value evaluateOp(mlir::Operation *op, llvm::ArrayRef<int64_t> index);
  mlir::Value constant(int64_t value);

  mlir::scf::ForOp loop;
  mlir::OpBuilder builder;
  mlir::Type indexType;
  MaskFailure stop;
};

} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_MASKANALYSIS_H

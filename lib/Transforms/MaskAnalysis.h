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
// Two more forms are normalised to that one. A side that is monotone in n
// but not affine (n under a division by a positive constant or by a
// loop-invariant value, as in `j / W >= i / W - 3`) is inverted op by op at
// the corner: `x / w >= t` becomes `x >= t * w` (t > 0) or
// `x >= t * w - w + 1` (t <= 0), the truncating division's exact inverse
// (flashc/Transforms/DivisionBounds.h); a runtime divisor must be positive,
// which the bounds check before the loop (otherwise nothing is skipped). A
// scalar computed in the loop from loop-invariant values only (a
// per-sequence length read from a tensor inside a mask function, when the
// loop writes no memory) is a loop-invariant value: the bounds read it again
// before the loop.
//
// An `or` of conditions whose intervals do not join (attention sinks
// `j < S` beside a sliding window) gives a union of disjoint pieces, each
// with its own visible and live intervals, and the loop visits each.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_MASKANALYSIS_H
#define FLASH_LIB_TRANSFORMS_MASKANALYSIS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace flash {

/// Whether the loop body has an op that may write memory.
bool loopBodyWritesMemory(mlir::scf::ForOp loop);

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

/// The sets of a mask as a union: its live blocks lie in the union of the
/// pieces' live sets, and the blocks of each piece's visible set are all
/// visible. No piece means no live block. Pieces whose live sets are both
/// unbounded on one side are merged (their union is an interval).
using BlockUnion = llvm::SmallVector<BlockSets, 2>;

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
  mlir::FailureOr<BlockUnion> analyze(mlir::Value mask);

  /// Where the last failed `analyze` stopped.
  const MaskFailure &lastFailure() const { return stop; }

  /// a ∩ b, for the `and` of two masks (exact for both sets).
  IterationSet intersect(const IterationSet &a, const IterationSet &b);

  /// The `and` of two unions: the pieces' pairwise intersections.
  BlockUnion intersect(const BlockUnion &a, const BlockUnion &b);

  /// `pieces` with empty pieces dropped and pieces whose union is an
  /// interval merged; more than `maxPieces` merge into one (a subset of
  /// the visible blocks, the hull of the live ones).
  BlockUnion normalize(BlockUnion pieces);

  /// One piece for the whole union: a subset of its visible blocks, the hull
  /// of its live ones.
  BlockSets merge(const BlockUnion &pieces);

  /// The most pieces a union keeps (the loop becomes up to 3 ranges each).
  static constexpr unsigned maxPieces = 3;

private:
  mlir::FailureOr<BlockUnion> analyzeCondition(mlir::Value mask);
  mlir::FailureOr<BlockSets> analyzeComparison(mlir::Operation *cmp);
  mlir::FailureOr<IterationSet> solveAtLeast(mlir::Value v,
                                             llvm::ArrayRef<int64_t> index,
                                             mlir::Value t);
  mlir::FailureOr<IterationSet> solveAtMost(mlir::Value v,
                                            llvm::ArrayRef<int64_t> index,
                                            mlir::Value t);
  BlockSets guardDivisors(BlockSets sets);
  IterationSet halfLine(int64_t d, mlir::Value c);
  IterationSet unionWithin(const IterationSet &a, const IterationSet &b);
  IterationSet hull(const IterationSet &a, const IterationSet &b);
  mlir::Value evaluate(mlir::Value v, llvm::ArrayRef<int64_t> index);
  mlir::Value evaluateOp(mlir::Operation *op, llvm::ArrayRef<int64_t> index);
  mlir::Value hoistInvariant(mlir::Value v);
  mlir::Value positiveDivisor(mlir::Value w);
  mlir::Value constant(int64_t value);

  mlir::scf::ForOp loop;
  mlir::OpBuilder builder;
  mlir::Type indexType;
  MaskFailure stop;
  /// Whether the loop body writes memory (a read in it is then not
  /// loop-invariant).
  bool loopWrites;
  /// The runtime divisors the last comparison assumed positive.
  llvm::SmallVector<mlir::Value> divisors;
  /// Clones before the loop of the loop-invariant scalars computed in it.
  llvm::DenseMap<mlir::Value, mlir::Value> hoisted;
};

} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_MASKANALYSIS_H

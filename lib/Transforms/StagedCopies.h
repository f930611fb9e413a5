//===- StagedCopies.h - the staged copies of a loop body --------*- C++ -*-===//
//
// tile-stage-shared leaves each staged copy of a loop body in a run of
// `async_copy ...; async_commit; async_wait 0; barrier`. tile-pipeline-copies
// and tile-split-copies both find those runs and re-issue the copies for
// other iterations or at other points of the body.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_STAGEDCOPIES_H
#define FLASH_LIB_TRANSFORMS_STAGEDCOPIES_H

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace flash {
/// The staged copies of one loop body and everything that gets rewritten.
struct StagedLoop {
  llvm::SmallVector<tile::AsyncCopyOp> copies;
  /// The ops the copies' operands are computed by inside the body, in
  /// def-before-use order; cloned for other iterations.
  llvm::SetVector<mlir::Operation *> slice;
  llvm::SmallVector<tile::LocalLoadOp> reads;
  /// The commits, waits and barriers that tile-stage-shared put around the
  /// copies; the new schedule replaces them.
  llvm::SmallVector<mlir::Operation *> sync;
};

/// Why a loop's copies cannot be re-issued: the copy, the op or value that
/// stops it (null when the copy itself is the reason) and the reason.
struct StagingFailure {
  mlir::Operation *copy = nullptr;
  mlir::Value blocker;
  std::string reason;
  /// The loop copies nothing to shared memory: a remark only where it asked
  /// for stages.
  bool nothingStaged = false;
};

/// The staged copies of `loop`'s body if all of them can be re-issued for
/// other iterations: each into slot 0 of a single-slot buffer that only this
/// loop reads, from a tensor the loop does not write, at offsets that pure
/// ops (or reads of tensors the loop does not write) derive from the
/// induction variable and values from outside the loop. Otherwise, with
/// `why`, records the reason there.
std::optional<StagedLoop> analyzeStagedLoop(mlir::scf::ForOp loop,
                                            StagingFailure *why = nullptr);

/// Says at `loop` that its copies keep one stage, and why: a warning when
/// the loop asked for more (`tile.num_stages` > 1; once per location in
/// `warned`: the ranges of a split key loop share one), else a remark when
/// `remarks` is set.
void reportUnstaged(mlir::scf::ForOp loop, const StagingFailure &why,
                    bool remarks, llvm::DenseSet<mlir::Location> &warned);

/// "the copies at 26:13, 27:13": where `copies` come from in the source.
std::string describeCopies(llvm::ArrayRef<tile::AsyncCopyOp> copies);

/// " (its masked blocks)" for a range of a split key loop that keeps the
/// mask, " (its unmasked blocks)" for the one without, "" for a loop that
/// was not split: which of the loops at one source location a remark is of.
std::string rangeLabel(mlir::scf::ForOp loop);

/// Whether a barrier precedes `op` in its block. A loop nested in another
/// runs again after other warps read its buffers; such a barrier separates
/// those reads from copies issued before the loop.
bool barrierPrecedes(mlir::Operation *op);

/// Starts `copies` (of `staged`) for the iteration whose induction variable
/// is `iv`, into `slot`, zero-filling instead if `pred` is non-null and
/// false, and commits them as one group.
void emitStagedCopies(mlir::OpBuilder &builder, mlir::scf::ForOp loop,
                      const StagedLoop &staged,
                      llvm::ArrayRef<tile::AsyncCopyOp> copies, mlir::Value iv,
                      mlir::Value slot, mlir::Value pred);

/// Erases the original copies, their sync ops and the slice ops left unused.
void eraseStagedCopies(StagedLoop &staged);
/// A loop in the form tile-pipeline-copies leaves: in the body one
/// `async_wait; barrier`, then the copies of a later iteration into slotted
/// buffers (2 slots or more, one count for all) and one commit after them;
/// before the loop, in its block, the prologue's copies into the same
/// buffers, each stage's run followed by its commit.
struct PipelinedRing {
  mlir::scf::ForOp loop;
  llvm::SmallVector<tile::AsyncCopyOp> copies; // prologue and body
  llvm::SmallVector<tile::AsyncCommitOp> commits;
  tile::AsyncWaitOp wait;
  int64_t stages = 0, perSlot = 0;
};

/// The ring of `loop` when it has that form and `qualifies` accepts each of
/// its copies.
std::optional<PipelinedRing>
matchPipelinedRing(mlir::scf::ForOp loop,
                   llvm::function_ref<bool(tile::AsyncCopyOp)> qualifies);

/// The rings of the loops of `func`'s body that copy, when a cp.async
/// producer warpgroup (tile-warp-specialize) issues them: each is a
/// pipelined ring whose copies `qualifies` accepts, and one of them gathers
/// its rows through a table (a paged KV cache: a copy of the ring gathers
/// and its loop reads integers from memory, the pages, a tile of them or
/// one per block).
std::optional<llvm::SmallVector<PipelinedRing>>
tableGatheredRings(mlir::func::FuncOp func,
                   llvm::function_ref<bool(tile::AsyncCopyOp)> qualifies);
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_STAGEDCOPIES_H

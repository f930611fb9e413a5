//===- Pipelines.h - the named pass pipelines of flashc ---------*- C++ -*-===//
//
// flashc and flash-opt (hence lit) build their pipelines from these
// functions, so what the driver runs can be replayed from the command line:
//   flash-opt --flashc-tile file.mlir
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_PIPELINES_H
#define FLASH_LIB_TRANSFORMS_PIPELINES_H

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace flash {
/// What the tile pipeline does beyond clean-up.
struct TilePipelineOptions {
  /// tile-split-masked-loops: skip the key blocks a mask hides, drop the
  /// mask from blocks it shows whole (flashc --split-masked-loops=false
  /// turns it off, to compare).
  bool splitMaskedLoops = true;
  /// tile-merge-mask-bounds after the split: one comparison per bound of a
  /// mask (fa2 causal: one select per score instead of two). On by default;
  /// flashc --merge-mask-bounds=false turns it off, to compare (docs/perf.md,
  /// "Masked loops").
  bool mergeMaskBounds = true;
  /// The whole lean masked loop (flashc --lean-masks, off by default):
  /// tile-merge-mask-bounds, tile-shift-compare-offsets in the layout
  /// pipeline and convert-tile-to-simt's iota-immediates; ptxas spills at
  /// fa2's causal sm_80 defaults with it.
  bool leanMasks = false;
};

/// What the layout pipeline checks against the target, before any lowering
/// (0 / empty: nothing; flash-opt's registered pipelines check nothing).
struct LayoutPipelineOptions {
  int64_t maxSharedBytes = 0; ///< per CTA (flash::maxSharedBytesPerCTA)
  std::string arch;           ///< named in the message
  TilePipelineOptions tile;   ///< the tile pipeline it starts with
  /// tile-defer-loop-sums: loop-carried row sums added up across lanes once,
  /// after the loop, saving fa2's loop 16 instructions per iteration at
  /// HEAD_DIM 64 (docs/perf.md). On by default; flashc
  /// --defer-loop-sums=false turns it off, to compare.
  bool deferLoopSums = true;
};

/// Tile IR as the front end hands it over -> the canonical tile IR that
/// `flashc --emit=tile` prints and the interpreter runs: cleaned up, and
/// masked key loops split into skipped, unmasked and masked blocks.
void buildTilePipeline(mlir::OpPassManager &pm,
                       const TilePipelineOptions &options = {});

/// Canonical tile IR -> tile IR in which every tile has a distributed layout
/// (what `flashc --emit=layout` prints): online softmax decomposed, layouts
/// assigned, redundant conversions folded away, shared memory placed (and,
/// with `options`, checked against the target's limit).
void buildLayoutPipeline(mlir::OpPassManager &pm,
                         const LayoutPipelineOptions &options = {});

/// Layout-assigned tile IR -> the SIMT level: one thread's program in a
/// gpu.module, with mma.sync, shuffles and explicit memory accesses.
/// `iotaImmediates`: convert-tile-to-simt's iota-immediates (--lean-masks).
void buildLayoutToSIMTPipeline(mlir::OpPassManager &pm,
                               bool iotaImmediates = false);

/// buildLayoutPipeline then buildLayoutToSIMTPipeline (`--emit=simt`).
void buildSIMTPipeline(mlir::OpPassManager &pm,
                       const LayoutPipelineOptions &options = {});

/// Registers the pipelines above with MLIR's pass registry (for flash-opt).
void registerFlashPipelines();
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_PIPELINES_H

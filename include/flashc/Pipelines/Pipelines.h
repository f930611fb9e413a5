//===- Pipelines.h - the named pass pipelines of flashc ---------*- C++ -*-===//
//
// flashc and flash-opt (hence lit) build their pipelines from these
// functions, so what the driver runs can be replayed from the command line:
//   flash-opt --flashc-tile file.mlir
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_PIPELINES_H
#define FLASH_LIB_TRANSFORMS_PIPELINES_H

#include "flashc/Support/CompileOptions.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace flash {
/// What the layout pipeline checks against the target, before any lowering
/// (0 / empty: nothing; flash-opt's registered pipelines check nothing), and
/// the switches every stage reads (CompileOptions.def).
struct LayoutPipelineOptions {
  int64_t maxSharedBytes = 0; ///< per CTA (flash::maxSharedBytesPerCTA)
  std::string arch;           ///< named in the message
  CompileOptions compile;
};

/// Tile IR as the front end hands it over -> the canonical tile IR that
/// `flashc --emit=tile` prints and the interpreter runs: cleaned up, and
/// masked key loops split into skipped, unmasked and masked blocks.
/// With `splitMaskedLoops` (and `mergeMaskBounds` or `leanMasks`) the masked
/// loops' rewrites.
void buildTilePipeline(mlir::OpPassManager &pm,
                       const CompileOptions &options = {});

/// Canonical tile IR -> tile IR in which every tile has a distributed layout
/// (what `flashc --emit=layout` prints): online softmax decomposed, layouts
/// assigned, redundant conversions folded away, shared memory placed (and,
/// with `options`, checked against the target's limit).
void buildLayoutPipeline(mlir::OpPassManager &pm,
                         const LayoutPipelineOptions &options = {});

/// buildLayoutPipeline without its tile pipeline: canonical tile IR (what
/// buildTilePipeline leaves) -> layouts. The driver runs the tile pipeline
/// once and continues with this one.
void buildTileToLayoutPipeline(mlir::OpPassManager &pm,
                               const LayoutPipelineOptions &options = {});

/// Layout-assigned tile IR -> the SIMT level: one thread's program in a
/// gpu.module, with mma.sync, shuffles and explicit memory accesses.
/// `options.leanMasks`: convert-tile-to-simt's iota-immediates;
/// `options.wgmmaOverlap`: simt-defer-wgmma-waits.
void buildLayoutToSIMTPipeline(mlir::OpPassManager &pm,
                               const CompileOptions &options = {});

/// buildLayoutPipeline then buildLayoutToSIMTPipeline (`--emit=simt`).
void buildSIMTPipeline(mlir::OpPassManager &pm,
                       const LayoutPipelineOptions &options = {});

/// Registers the pipelines above with MLIR's pass registry (for flash-opt).
void registerFlashPipelines();
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_PIPELINES_H

//===- Pipelines.h - the named pass pipelines of flashc ---------*- C++ -*-===//
//
// flashc and flash-opt (hence lit) build their pipelines from these
// functions, so what the driver runs can be replayed from the command line:
//   flash-opt --flashc-tile file.mlir
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_PIPELINES_H
#define FLASH_LIB_TRANSFORMS_PIPELINES_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace flash {
/// Tile IR as the front end hands it over -> the canonical tile IR that
/// `flashc --emit=tile` prints and the interpreter runs.
void buildTilePipeline(mlir::OpPassManager &pm);

/// Canonical tile IR -> tile IR in which every tile has a distributed layout
/// (what `flashc --emit=layout` prints): online softmax decomposed, layouts
/// assigned, redundant conversions folded away.
void buildLayoutPipeline(mlir::OpPassManager &pm);

/// Layout-assigned tile IR -> the SIMT level: one thread's program in a
/// gpu.module, with mma.sync, shuffles and explicit memory accesses.
void buildLayoutToSIMTPipeline(mlir::OpPassManager &pm);

/// buildLayoutPipeline then buildLayoutToSIMTPipeline (`--emit=simt`).
void buildSIMTPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above with MLIR's pass registry (for flash-opt).
void registerFlashPipelines();
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_PIPELINES_H

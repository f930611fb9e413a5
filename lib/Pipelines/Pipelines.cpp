//===- Pipelines.cpp - the named pass pipelines of flashc -----------------===//
#include "flashc/Pipelines/Pipelines.h"

#include "flashc/Conversion/Passes.h"
#include "flashc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void flash::buildTilePipeline(mlir::OpPassManager &pm,
                              const CompileOptions &options) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (!options.splitMaskedLoops)
    return;
  // On canonical IR (constant masks folded); the clean-up after it folds the
  // unmasked loop's constant-true conditions and their arithmetic away.
  TileSplitMaskedLoopsOptions split;
  split.remarks = options.remarks;
  pm.nest<mlir::func::FuncOp>().addPass(createTileSplitMaskedLoops(split));
  // After the split, which reads the mask's comparisons one by one.
  if (options.mergeMaskBounds || options.leanMasks)
    pm.nest<mlir::func::FuncOp>().addPass(createTileMergeMaskBounds());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void flash::buildLayoutPipeline(mlir::OpPassManager &pm,
                                const LayoutPipelineOptions &options) {
  buildTilePipeline(pm, options.compile);
  buildTileToLayoutPipeline(pm, options);
}

void flash::buildTileToLayoutPipeline(mlir::OpPassManager &pm,
                                      const LayoutPipelineOptions &options) {
  auto &kernel = pm.nest<mlir::func::FuncOp>();
  // Limits first: everything after it unrolls tiles and stages.
  kernel.addPass(createTileCheckResources());
  kernel.addPass(createTileDecomposeOnlineSoftmax());
  kernel.addPass(mlir::createCanonicalizerPass());
  kernel.addPass(createTileAssignLayouts());
  // Before LICM, which then hoists the columns the masks compare.
  if (options.compile.leanMasks)
    kernel.addPass(createTileShiftCompareOffsets());
  kernel.addPass(mlir::createCanonicalizerPass());
  kernel.addPass(mlir::createCSEPass());
  kernel.addPass(mlir::createLoopInvariantCodeMotionPass());
  // Then the invariant divisions by runtime values, which LICM leaves, and
  // what depends on them: staged copies whose offsets they compute are
  // pipelined only when invariant. Nothing moves (and the code stays as
  // LICM left it) where no such division is.
  kernel.addPass(createTileHoistInvariantScalars());
  kernel.addPass(mlir::createLoopInvariantCodeMotionPass());
  // MMA operands through shared memory: cp.async copies, pipelined over the
  // loop's stages, buffers placed last (pipelining multiplies their slots).
  kernel.addPass(createTileStageShared());
  // After tile-stage-shared, which marks the kernels it found register-bound.
  if (options.compile.deferLoopSums)
    kernel.addPass(createTileDeferLoopSums());
  TileSplitCopiesOptions splitCopies;
  splitCopies.remarks = options.compile.remarks;
  kernel.addPass(createTileSplitCopies(splitCopies));
  TilePipelineCopiesOptions pipelineCopies;
  pipelineCopies.remarks = options.compile.remarks;
  kernel.addPass(createTilePipelineCopies(pipelineCopies));
  // sm_90a only: the pipelined copies of full boxes go through the TMA unit.
  // Persistent kernels keep their rings' bytes across tiles: the key loops
  // of one source loop share one ring rather than doubling the bytes. A
  // paged cache's kernel keeps its full blocks on cp.async where
  // tile-warp-specialize gives it a cp.async producer warpgroup (not in
  // persistent kernels, below).
  TileTmaCopiesOptions tmaCopies;
  tmaCopies.sharedRings = options.compile.persistent;
  tmaCopies.cpAsyncProducer =
      options.compile.warpSpecialize && !options.compile.persistent;
  kernel.addPass(createTileTmaCopies(tmaCopies));
  kernel.addPass(mlir::createCanonicalizerPass());
  kernel.addPass(mlir::createCSEPass());
  TileAllocateSharedOptions allocate;
  allocate.maxSharedBytes = options.maxSharedBytes;
  allocate.arch = options.arch;
  // A persistent kernel's producer fills the next tile's ring slots while
  // the consumers finish this tile: the rings keep their bytes throughout.
  allocate.persistentRings = options.compile.persistent;
  kernel.addPass(createTileAllocateShared(allocate));
  // After the buffers are placed: the split moves the body into regions.
  // Not the cp.async rings of persistent kernels: tile-allocate-shared
  // cannot tell them from the consumers' own buffers, which may take their
  // bytes while the producer would fill the next tile's slots.
  if (options.compile.warpSpecialize) {
    TileWarpSpecializeOptions warpSpecialize;
    warpSpecialize.cpAsyncRings = !options.compile.persistent;
    kernel.addPass(createTileWarpSpecialize(warpSpecialize));
  }
  // On the consumers' loops, whose slots the producer refills.
  if (options.compile.wgmmaOverlap)
    kernel.addPass(createTileOverlapWgmma());
  // After the rotation, which puts block k's Q K^T and block k - 1's P V
  // next to each other: one turn per iteration instead of one per GEMM.
  // d128 only: FlashAttention-3 takes turns at d <= 128 in 16 bits, and the
  // static profile has d64 lose issue cycles to the barriers
  // (docs/perf.md, "Ping-pong between consumer warpgroups").
  if (options.compile.pingpong) {
    TilePingPongWarpgroupsOptions pingpong;
    pingpong.remarks = options.compile.remarks;
    pingpong.headDims = {128};
    kernel.addPass(createTilePingPongWarpgroups(pingpong));
  }
  // Last: it wraps the finished body of each kernel in its loop over tiles
  // (and rewrites the grid function, hence a module pass).
  if (options.compile.persistent) {
    TilePersistentOptions persistent;
    persistent.ctas = options.compile.persistentCtas;
    pm.addPass(createTilePersistent(persistent));
  }
}

void flash::buildLayoutToSIMTPipeline(mlir::OpPassManager &pm,
                                      const CompileOptions &options) {
  ConvertTileToSIMTOptions convert;
  convert.iotaImmediates = options.leanMasks;
  pm.addPass(createConvertTileToSIMT(convert));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // The per-lane index arithmetic of every access is loop-invariant; hoisted
  // here, the emulator (which runs this level) executes it once too.
  pm.addPass(mlir::createLoopInvariantCodeMotionPass());
  // Last: nothing after it reorders the ops between a wgmma and its wait.
  if (options.wgmmaOverlap)
    pm.addPass(createSIMTDeferWgmmaWaits());
}

void flash::buildSIMTPipeline(mlir::OpPassManager &pm,
                              const LayoutPipelineOptions &options) {
  buildLayoutPipeline(pm, options);
  buildLayoutToSIMTPipeline(pm, options.compile);
}

void flash::registerFlashPipelines() {
  mlir::PassPipelineRegistration<>(
      "flashc-tile",
      "Canonical tile IR: what `flashc --emit=tile` prints and the "
      "interpreter runs",
      [](mlir::OpPassManager &pm) { buildTilePipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "flashc-layout",
      "Tile IR with a distributed layout on every tile: what `flashc "
      "--emit=layout` prints",
      [](mlir::OpPassManager &pm) { buildLayoutPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "flashc-layout-to-simt",
      "Layout-assigned tile IR (`flashc --emit=layout`) -> the SIMT level: "
      "what `flashc run` and flash-emulate do with such input",
      [](mlir::OpPassManager &pm) { buildLayoutToSIMTPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "flashc-simt",
      "The SIMT level, one thread's program: what `flashc --emit=simt` "
      "prints and the emulator runs",
      [](mlir::OpPassManager &pm) { buildSIMTPipeline(pm); });
}

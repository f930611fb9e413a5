//===- Pipelines.cpp - the named pass pipelines of flashc -----------------===//
#include "lib/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void flash::buildTilePipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void flash::registerFlashPipelines() {
  mlir::PassPipelineRegistration<>(
      "flashc-tile",
      "Canonical tile IR: what `flashc --emit=tile` prints and the "
      "interpreter runs",
      buildTilePipeline);
}

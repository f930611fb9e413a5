//===- StageShared.cpp - TileStageShared (in progress) ------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flash {
#define GEN_PASS_DEF_TILESTAGESHARED
#include "lib/Transforms/Passes.h.inc"
} // namespace flash

namespace {
struct TileStageSharedPass : flash::impl::TileStageSharedBase<TileStageSharedPass> {
  using TileStageSharedBase::TileStageSharedBase;
  void runOnOperation() override {}
};
} // namespace

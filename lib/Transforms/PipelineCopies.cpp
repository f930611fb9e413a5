//===- PipelineCopies.cpp - TilePipelineCopies (in progress) ------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flash {
#define GEN_PASS_DEF_TILEPIPELINECOPIES
#include "lib/Transforms/Passes.h.inc"
} // namespace flash

namespace {
struct TilePipelineCopiesPass : flash::impl::TilePipelineCopiesBase<TilePipelineCopiesPass> {
  using TilePipelineCopiesBase::TilePipelineCopiesBase;
  void runOnOperation() override {}
};
} // namespace

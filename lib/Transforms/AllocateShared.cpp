//===- AllocateShared.cpp - TileAllocateShared (in progress) ------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flash {
#define GEN_PASS_DEF_TILEALLOCATESHARED
#include "lib/Transforms/Passes.h.inc"
} // namespace flash

namespace {
struct TileAllocateSharedPass : flash::impl::TileAllocateSharedBase<TileAllocateSharedPass> {
  using TileAllocateSharedBase::TileAllocateSharedBase;
  void runOnOperation() override {}
};
} // namespace

#ifndef FLASH_TRANSFORMS_PASSES_TD
#define FLASH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileDecomposeOnlineSoftmax
    : Pass<"tile-decompose-online-softmax", "mlir::func::FuncOp"> {
  let summary = "Expand tile.online_softmax into reductions, exp and mma";
  let description = [{
    Rewrites every `tile.online_softmax` and `tile.online_softmax_finalize`
    into the primitive tile ops of its documented semantics (row max and sum
    reductions, broadcasts, `math.exp`/`math.exp2`, `tile.mma`, selects for
    the fully-masked-row guards). The eager (FlashAttention-1) and deferred
    (FlashAttention-2) forms differ only in how the accumulator is rescaled.
    After this pass every remaining op maps onto warps and registers.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def TileAssignLayouts : Pass<"tile-assign-layouts", "mlir::func::FuncOp"> {
  let summary = "Give every tile of a kernel a distributed layout";
  let description = [{
    Chooses a TiledMMA for the kernel — by default FlashAttention-2's: all
    `tile.num_warps` warps along M and ValueLayoutMNK [M / (16 warps), 1, 1],
    so a warp owns whole rows; or the kernel's `tile.mma_layout` — and
    propagates layouts through element-wise ops, broadcasts, reductions and
    loops: accumulators and the element-wise tiles around them get `#tile.mma`,
    MMA operands `#tile.dot_op` (transposed for a transposed operand), row and
    column vectors the `#tile.slice` of their 2-D tiles. A kernel without MMA
    uses a `#tile.blocked` layout sized for 16-byte accesses. Values that must
    change layout (an accumulator reused as an operand, as P in attention) get
    an explicit `tile.convert_layout`; nothing else does.

    Runs on kernels (functions with `tile.num_warps`); expects
    `tile.online_softmax` to be decomposed already.
  }];
}

#endif // FLASH_TRANSFORMS_PASSES_TD

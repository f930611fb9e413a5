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

#endif // FLASH_TRANSFORMS_PASSES_TD

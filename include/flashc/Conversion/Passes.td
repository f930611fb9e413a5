#ifndef FLASH_CONVERSION_PASSES_TD
#define FLASH_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToSIMT : Pass<"convert-tile-to-simt", "mlir::ModuleOp"> {
  let summary = "Lower layout-assigned tile IR to one thread's program (SIMT level)";
  let description = [{
    Every kernel `func.func` (one with `tile.num_warps`) becomes a `gpu.func`
    kernel in `gpu.module @flashc_kernels`: tiles become `vector<R x T>` of
    the thread's registers (R from the layout), global tensors a
    `!llvm.ptr<1>` plus one i32 per dim, layout conversions register repacks
    (decided at compile time from the layout functions) or shared-memory
    round trips, reductions in-thread folds plus `nvvm.shfl.sync bfly`, and
    `tile.mma` one `nvvm.mma.sync` m16n8k16 per atom and k-step. Grid
    functions stay on the host side unchanged. The form is documented in
    docs/ir-conventions.md, "SIMT level".

    With `iota-immediates` (flashc --lean-masks), a signed comparison of a
    column index tile (`tile.iota` under expand_dims/broadcast) with a
    broadcast limit compares each register's constant offset, an
    immediate, with `limit - part` (the thread's part of the index): no
    register per column. Off by default: ptxas then allocates some kernels
    fewer registers and spills (docs/perf.md, "Masked loops").
  }];
  let options = [
    Option<"iotaImmediates", "iota-immediates", "bool", "false",
           "Compare column indices with per-row limits as immediates">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
    "mlir::gpu::GPUDialect",
    "mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"];
}

def SIMTDeferWgmmaWaits : Pass<"simt-defer-wgmma-waits"> {
  let summary = "Move each wgmma.wait_group to the first op that needs its "
                "group retired";
  let description = [{
    On the SIMT level: each `nvvm.wgmma.wait.group.sync.aligned 0` that
    follows its group's `commit.group` moves down its block past pure ops,
    shuffles, renames of the group's results (extractvalue, vector moves),
    `wgmma.fence` and the wgmmas of later groups, and stops before the first
    op that reads a result of the group, has memory effects or regions, or
    is another wait or a terminator; each commit it passes raises its count
    by one. After tile-overlap-wgmma's order (S = Q K^T issued, then
    O += P V) the loop waits with `wait_group 1` before the softmax and
    `wait_group 0` before the rescale of O. A `wait_group 0` that passed 64
    or more ops gets an `nvvm.memory.barrier <cta>` (membar.cta) right
    before it: ptxas does not hoist WARPGROUP.DEPBAR above it, so P V stays
    in flight under the softmax in the SASS too.
  }];
}

#endif // FLASH_CONVERSION_PASSES_TD

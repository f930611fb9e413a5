#ifndef FLASH_TRANSFORMS_PASSES_TD
#define FLASH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileSplitMaskedLoops
    : Pass<"tile-split-masked-loops", "mlir::func::FuncOp"> {
  let summary = "Split a masked key loop into skipped, unmasked and masked blocks";
  let description = [{
    Finds `scf.for` loops whose `tile.online_softmax` takes scores masked by
    `arith.select(mask, s, -inf)` (a chain of them; the masks' `and`s are
    taken apart into conjuncts). A conjunct built from signed comparisons
    (`arith.cmpi` sge/sgt/sle/slt, combined with `andi`/`ori`, through
    `expand_dims`/`broadcast`/`splat`) of integers of the form
    d * n + g(i, j) (n the induction variable, d a constant, g monotone along
    each dim: `tile.iota`, values from outside the loop, `+`, `-`, `*` by a
    constant, signed division by a positive constant, min/max) is analysed:
    the iterations in which it holds on the whole block, and those in which
    it fails on the whole block, are intervals whose bounds are computed
    before the loop from the block's corners. The loop is replaced by up to
    three loops over consecutive iterations: masked blocks, blocks in which
    every analysed conjunct is true (they are replaced by constants, so the
    mask arithmetic folds away; conjuncts it could not analyse, such as a
    loaded key mask, stay), masked blocks. Iterations in which an analysed
    conjunct is false everywhere are dropped when such a block changes
    nothing: the body writes no memory and every carried value is the
    online-softmax state it updates (all -inf scores leave m, l and acc as
    they were) or passes through. The masked loops are marked
    `tile.mask_split` and not split again. Index arithmetic is assumed not to
    overflow.

    With `remarks`, each loop with an online-softmax step gets a remark: the
    ranges it was split into and the blocks skipped (with the conditions
    that bound them), or why it was not split; each mask condition not
    analysed gets one naming the value the analysis stopped at.
  }];
  let options = [Option<"remarks", "remarks", "bool", /*default=*/"false",
                        "Say at each key loop how it was split">];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileMergeMaskBounds : Pass<"tile-merge-mask-bounds", "mlir::func::FuncOp"> {
  let summary = "One comparison per subject and direction in a mask's and/or tree";
  let description = [{
    Tile level (tiles without layouts). In a tree of `arith.andi` (or of
    `arith.ori`) over i1 tiles, through `tile.broadcast`, the signed
    comparisons (`arith.cmpi` slt/sle/sgt/sge) that bound one value (the
    same SSA value under its broadcasts, on either side) from the same side
    become one: `c < a && c <= b` is `c <= min(a - 1, b)`, `c >= a && c > b`
    is `c >= max(a, b + 1)`, and a disjunction takes the max (min) instead.
    The limit is combined at the shape of the limits under their broadcasts
    (a splat's scalar, or a per-row tile), so a causal mask with a key
    bound, `col < Nk && col <= row + Nk - Nq`, costs one comparison per
    score against a limit computed once per row (LLVM lowers the
    conjunction of two comparisons as two selects per score). Groups whose
    limits are tiles of different shapes stay as written. Exact but for
    overflow: making a strict bound inclusive subtracts (adds) one, which a
    constant INT_MIN (INT_MAX) limit would wrap, so such a group stays; other
    limits are index values (Nk - 1 >= -1), assumed not to overflow, as in
    tile-split-masked-loops. A negative limit (a row that sees no key)
    stays negative through the min. A band (the value also bounded from
    the other side: a sliding window) stays as written when both sides
    compare per-row limits: its merged limit is one more per-row value
    beside the other side's, and ptxas spilled for it at 255 registers. A
    side whose limits are all scalars (splats, constants) is merged into
    one scalar limit, and a side opposite only scalar limits (`col >= 0`)
    is merged as without it. The pipeline runs it after
    tile-split-masked-loops by default (flashc --merge-mask-bounds=false
    turns it off; docs/perf.md, "Masked loops").
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileShiftCompareOffsets
    : Pass<"tile-shift-compare-offsets", "mlir::func::FuncOp"> {
  let summary = "Move a comparison's scalar offset to the side with fewer registers";
  let description = [{
    Layout level. An `arith.cmpi` (signed or eq/ne) of tiles whose one
    operand is `x + tile.splat(s)` (through `tile.expand_dims` and
    `tile.broadcast`) and whose other operand `y` is, under its broadcasts,
    a tile (not a splat) with fewer registers per thread becomes
    `x <pred> y - s`. A mask's columns `start_n + iota` compared with
    per-row limits then cost one subtraction per row and iteration instead
    of one addition per column, and the columns are loop-invariant (the
    conversion to SIMT compares them as immediates). A scalar limit (the
    key-length tail alone) stays: its columns would be registers held
    across the loop for one addition each. Index arithmetic is assumed not
    to overflow, as in tile-split-masked-loops (|limit - start_n| is at most
    Nq + Nk). Off by default: the pipeline runs it with flashc --lean-masks
    only, as ptxas 13 then spills at fa2's causal sm_80 defaults (80 bytes
    at HEAD_DIM 64, 16 at 128; docs/perf.md, "What was tried and did not
    pay").
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

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

def TileDeferLoopSums : Pass<"tile-defer-loop-sums", "mlir::func::FuncOp"> {
  let summary = "Add a loop-carried row sum up across lanes once, after the loop";
  let description = [{
    Layout level. Where an `scf.for` carries a sum `l` updated as
    `l = u * l + tile.reduce sum(p)` (the online softmax's row sum; `u`, the
    rescale factor, any tile of `l`'s layout), the loop carries `l` in
    lane-partial form instead: the reduction becomes `lane_partial` (each
    thread adds its own columns, no shuffles) and one
    `tile.sum_lane_partials` after the loop adds the lanes' parts, as
    FlashAttention-2 does. Valid because the update is linear in `l` and in
    the parts, and `u` is the same in every lane holding an element.
    Applies when the carried value is f32 with a layout that keeps each
    element in one warp (no cross-warp reduction), `l` and the update have
    no other use in the loop, and the initial value is zero or the result
    of a loop this pass rewrote (the masked loop after the unmasked one);
    other loops keep their per-iteration reduction. In kernels marked
    `tile.register_bound` (by tile-stage-shared, which runs first) only
    loops whose carried tiles and summed scores take at most 168 registers
    per thread are rewritten: above that ptxas spills more with the lanes'
    parts live in the loop.
  }];
}

def TileCheckResources
    : Pass<"tile-check-resources", "mlir::func::FuncOp"> {
  let summary = "Reject kernels beyond what one CTA can hold, before lowering";
  let description = [{
    Checks a kernel (a function with `tile.num_warps`) against the limits
    that bound the lowering's work and a GPU's resources, so that a huge
    compile-time constant fails in milliseconds instead of unrolling for
    minutes: every tile at most 2^20 elements; every tile's registers per
    thread, at least its 32-bit words divided by the CTA's threads (a
    lower bound whatever the layout), at most `max-registers`; every loop's
    `tile.num_stages` at most `max-stages`. The error is at the op, and
    names the kernel constants (`tile.constants`) whose value is one of the
    offending sizes: the ones to change.
  }];
  let options = [
    Option<"maxRegisters", "max-registers", "int64_t", /*default=*/"255",
           "32-bit registers a thread has (PTX: 255)">,
    Option<"maxStages", "max-stages", "int64_t", /*default=*/"16",
           "Pipeline stages a loop may have">,
  ];
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

def TileHoistInvariantScalars
    : Pass<"tile-hoist-invariant-scalars", "mlir::func::FuncOp"> {
  let summary = "Hoist loop-invariant scalar ops, divisions by runtime values "
                "included, out of scf.for loops";
  let description = [{
    Moves every scalar op without memory effects or regions whose operands
    are defined outside an `scf.for` to before it, inner loops first.
    Unlike MLIR's LICM it also moves an integer division or remainder
    (`arith.divsi`, `divui`, `remsi`, `remui`, `ceildivsi`, `ceildivui`,
    `floordivsi`) by a value that may be zero: its divisor becomes
    `select(lb < ub, d, 1)` (`ult` for an unsigned loop), so it computes what
    every iteration did, and cannot fault when the loop runs no iteration.
    Copy offsets computed that way (a KV head `h / (H / H_KV)` written in the
    key loop) are then loop-invariant, and tile-pipeline-copies can issue
    them ahead. Tiles stay for LICM, which the pipeline runs right after.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileStageShared : Pass<"tile-stage-shared", "mlir::func::FuncOp"> {
  let summary = "Stage MMA operand loads through shared memory with cp.async";
  let description = [{
    Replaces each `tile.load` of an MMA operand (f16/bf16, zero pad, a 2-D
    window of whole rows) by a copy into a shared-memory buffer and a
    `tile.local_load` in the operand's layout, which lowers to ldmatrix:
    `tile.async_copy`, `tile.async_commit`, `tile.async_wait 0`,
    `tile.barrier`, then the `tile.local_load` (inside a loop, a barrier also
    precedes the copy, which overwrites what the previous iteration read).
    Consecutive staged loads share one commit, wait and barrier. Buffers get
    an XOR swizzle that keeps 16-byte accesses to one chunk column of eight
    rows on distinct banks. Other loads stay register loads.

    A tile read before a loop and taken by an MMA inside it is held in
    registers across the loop, unless it and the loop's tiles (loop-carried,
    and the largest an MMA starts afresh) would take more than 216 32-bit
    registers a thread: then each such MMA reads it again from the buffer,
    right before it (Q of FlashAttention-2's 128-row tiles at HEAD_DIM 128).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileSplitCopies : Pass<"tile-split-copies", "mlir::func::FuncOp"> {
  let summary = "FlashAttention-2's copy schedule for loops marked "
                "tile.split_copies";
  let description = [{
    In an `scf.for` marked `tile.split_copies` (`range(..., split_copies =
    true)`), each staged tile keeps its one buffer and its copy is issued as
    soon as every warp has read that buffer: the reads of each buffer move to
    their first user; before the first read of each tile goes a sync point
    (`tile.async_wait 0` and one barrier); a tile's copy is issued at the
    first sync point after its last read, for the next iteration (predicated
    off past the loop's end; a prologue issues iteration 0's) if that point
    lies later in the body, for the current one if it wraps around. In
    attention: the top of the body waits for K(j) and issues V(j), which
    lands while S = Q K^T(j) computes; the point before O += P V(j) waits for
    V(j) and issues K(j+1), which lands during P V(j). A final
    `tile.async_wait 0` after the loop retires the last zero-fills.
    A loop is left as it is when its copies cannot be re-issued (as in
    tile-pipeline-copies) or all its tiles are first read at one point.
    In a kernel marked `tile.register_bound`, a loop of masked blocks
    (`tile.mask_split`) whose comparisons read a per-row limit from outside
    the loop (an integer `[M, 1]` tile or its broadcast: causal attention's
    diagonal) loses `tile.split_copies` and takes `tile.num_stages = 1`:
    each copy stays at the top for its own iteration, in its one buffer.

    A loop whose copies cannot be re-issued gets the warning of
    tile-pipeline-copies when it asks for more than one stage; with
    `remarks`, each loop marked `tile.split_copies` gets a remark saying
    what it got.
  }];
  let options = [Option<"remarks", "remarks", "bool", /*default=*/"false",
                        "Say at each split_copies loop what it got">];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TilePipelineCopies : Pass<"tile-pipeline-copies", "mlir::func::FuncOp"> {
  let summary = "Software-pipeline the staged copies of scf.for loops";
  let description = [{
    Multi-buffers the shared-memory copies staged inside an `scf.for` over S
    slots, S being the loop's `tile.num_stages` or the `stages` option: a
    prologue starts the copies of the first S-1 iterations; iteration k waits
    for its own copies (`tile.async_wait S-2`), passes one barrier, starts the
    copies of iteration k+S-1 (predicated off past the loop's end, so nothing
    is read twice or out of range) and reads slot k % S. A final
    `tile.async_wait 0` after the loop retires the copies still in flight.
    Every iteration commits one group, so the wait counts are uniform.

    The copies' offsets may depend on the induction variable through pure
    ops of the body, which are cloned for the other iterations. Loops over
    i32 (all the front end emits) are pipelined; a loop is left as it is
    when one of its copies depends on anything else of the body (an
    iter_arg, an op with effects), reads a tensor the loop stores to, or
    fills a buffer read outside the loop. A nested loop's prologue starts
    with a barrier unless one precedes the loop in its block: the previous
    run of the loop read the slots it overwrites.

    A loop left as it is whose `tile.num_stages` (`range(..., stages = S)`)
    asks for more than one stage gets a warning at the loop naming the copy
    and the value or op that prevents it (once per source loop). With
    `remarks`, every staged loop gets a remark: the stages it got and which
    copies, or why it got none.
  }];
  let options = [Option<"stages", "stages", "int64_t", /*default=*/"2",
                        "Slots per staged buffer when the loop has no "
                        "tile.num_stages (1 leaves loops unpipelined)">,
                 Option<"remarks", "remarks", "bool", /*default=*/"false",
                        "Say at each staged loop what it got">];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileTmaCopies : Pass<"tile-tma-copies", "mlir::func::FuncOp"> {
  let summary = "On sm_90a, move pipelined copies of full boxes to the TMA "
                "unit";
  let description = [{
    In a module marked `tile.wgmma` (sm_90a), the staged copies of an
    `scf.for` that tile-pipeline-copies multi-buffered go through the TMA
    unit when every one of them is a full box of a row-major tensor: a 2-D
    window over the last two dims, the whole static last dim in rows of
    whole 16-byte chunks, at most 256 rows and 256 elements per box row,
    into a slot whose swizzle over each column block is one of the TMA
    unit's. The copies are marked `tile.tma_barrier` (the kernel's mbarrier
    for slot 0 of the loop) and `tile.tma_swizzle`, the wait at the top of
    the body `tile.tma_barrier` and `tile.tma_stages`, the copies' commits
    are dropped, and the kernel records each barrier's arrival count in
    `tile.tma_barriers`. Gathered copies, loops inside loops and loops not in
    the pipelined form keep cp.async. convert-tile-to-simt lowers the marks:
    one thread arms the slot's barrier with the bytes and issues the boxes,
    every thread waits on the barrier's parity for the round.

    With `shared-rings` (flashc's `--persistent`) a ring whose buffers match
    an earlier ring's, in number, order and type (the key loops one source
    loop was split into), fills those buffers on the earlier ring's
    barriers: one ring of the kernel runs through both loops, so that its
    bytes can stay the ring's across the tiles of a persistent kernel
    without doubling, and its slots and phases follow one count of blocks.

    With `cp-async-producer` (tile-warp-specialize's `cp-async-rings` runs
    next) a kernel of one warpgroup (4 warps) whose loops are all pipelined
    rings, one of them gathered through a table (a paged KV cache's blocks
    that end in the sequence, beside whole blocks within one page), keeps
    every ring on cp.async: a TMA ring on one warpgroup gets no producer,
    the cp.async producer warpgroup issues them all.
  }];
  let options = [
    Option<"sharedRings", "shared-rings", "bool", /*default=*/"false",
           "One ring for loops whose buffers match (persistent kernels)">,
    Option<"cpAsyncProducer", "cp-async-producer", "bool", /*default=*/"false",
           "Leave the rings of a kernel that tile-warp-specialize gives a "
           "cp.async producer warpgroup on cp.async">,
  ];
}

def TileOverlapWgmma : Pass<"tile-overlap-wgmma", "mlir::func::FuncOp"> {
  let summary = "On sm_90a, issue block k's P V after block k + 1's Q K^T "
                "(FlashAttention-3's intra-warpgroup overlap)";
  let description = [{
    A warp-specialized consumer loop (its only wait `tile.tma_release`, no
    copies of its own) whose body holds two warpgroup MMAs, S = Q K^T from
    a constant accumulator and then O += P V with V a `tile.local_load` of
    its staging buffer and O yielded, is rotated: P V of the previous block
    follows Q K^T (P and V's slot are carried, zero P against the first
    block's V in the first iteration), the carried O is yielded before its
    P V, P's conversion (the single-use chain ending in P V's operand, e.g.
    truncf and convert_layout) moves to the end of the body, after the
    previous P V's result is read (ptxas serializes the kernel's wgmmas when
    an input register of one is written while it is in flight, C7513), and
    the last block's P V follows the loop under `lb < ub`. Once
    simt-defer-wgmma-waits places the waits, P V runs while the softmax of
    the next block computes. V's slot of block k is read in iteration
    k + 1: the wait gets `tile.tma_release_lag = 2`. Other loops are left
    alone.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def TilePingPongWarpgroups
    : Pass<"tile-pingpong-warpgroups", "mlir::func::FuncOp"> {
  let summary = "On sm_90a, the consumer warpgroups take turns issuing their "
                "GEMMs (FlashAttention-3's ping-pong)";
  let description = [{
    In a warp-specialized kernel (tile-warp-specialize) with 2 or 3 consumer
    warpgroups, each run of warpgroup MMAs in the consumers' side with
    nothing between them that reads their results (after
    tile-overlap-wgmma: block k's Q K^T and block k - 1's P V) waits on its
    warpgroup's named barrier (`kPingPongBarrierId` + g, 3..5, 256 threads)
    and then arrives on the next warpgroup's: GEMM issue alternates between
    the warpgroups, so one's softmax runs under the other's GEMMs. The last
    warpgroup gives warpgroup 0 the first turn at the consumers' entry and
    warpgroup 0 takes the last one back at their exit. The role split's
    scf.if gets `tile.pingpong` (the warpgroup count). Kernels with one
    consumer warpgroup, no role split, GEMMs under loops or conditions
    that may depend on the thread index, or (with `head-dims`) a head dim
    not listed are left alone (a remark with `remarks`).
  }];
  let options = [Option<"remarks", "remarks", "bool", /*default=*/"false",
                        "Say whether the consumer warpgroups take turns">,
                 ListOption<"headDims", "head-dims", "int64_t",
                            "The head dims (the contraction of a GEMM from a "
                            "constant accumulator, S = Q K^T) where the "
                            "warpgroups take turns; none given: all">];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def TileWarpSpecialize : Pass<"tile-warp-specialize", "mlir::func::FuncOp"> {
  let summary = "On sm_90a, a producer warpgroup issues the TMA rings' (or gathered cp.async rings') copies";
  let description = [{
    A kernel whose TMA rings (tile-tma-copies) all qualify is split into
    two roles by thread index: the existing warps (2 or 3 warpgroups) are
    the consumers, and one more warpgroup, threads `[C, C + 128)`, the
    producer. Runs after tile-allocate-shared (offsets are final; the
    split moves the body into regions). The kernel becomes
    `scf.if tid >= C {producer} else {consumers}` marked `tile.warp_roles`:

    - producer: `nvvm.setmaxregister decrease` (24 or 32 registers for 2
      or 3 consumer warpgroups), then its first warp alone runs the
      copies with what computes their operands (a backward slice that must
      be free of side effects and of loop-carried values): each ring's
      prologue, then a loop over the same key range holding only the body's
      copies, marked `tile.tma_producer` (convert-tile-to-simt makes them
      wait on the slot's "empty" mbarrier before the refill). Where the
      consumers passed a `tile.barrier` before a ring's first copies (the
      ring reuses bytes they read), the producer syncs on named barrier 2
      with the consumers' `nvvm.barrier.arrive`.
    - consumers: `nvvm.setmaxregister increase` (240 or 160), the body
      without the TMA copies; in each ring's loop the `tile.barrier` after
      the "full" wait goes and the wait is marked `tile.tma_release` (each
      warp releases the slot the previous iteration read, whose wgmmas that
      iteration's end waited for, on its "empty" barrier). Their CTA
      barriers become named barrier 1 over the consumer threads.

    The kernel records `tile.warp_specialize = {consumer_warps, producer_regs,
    consumer_regs}`; the SIMT kernel's block has 128 more threads. Kernels
    with another number of warps (one warpgroup has 255 registers per
    thread already: nothing to gain), rings in nested regions, or copies whose
    operands need loop-carried or side-effecting values are left alone.

    cp.async rings (`cp-async-rings`): a kernel with no TMA ring, one
    warpgroup, its loops all pipelined cp.async rings and one of them
    gathering its rows through a table (a paged KV cache; its blocks within
    one page are rings of windows, which tile-tma-copies'
    `cp-async-producer` leaves on cp.async) gets a producer warpgroup whose
    128 threads run the copies in the consumers' layouts (re-reading tensors
    the kernel does not write, such as a block table), each commit marked
    `tile.cp_async_barrier` for convert-tile-to-simt to make it the thread's
    `cp.async.mbarrier.arrive.noinc` on the slot's full barrier (count 128
    in `tile.tma_barriers`); setmaxnreg 240 / 256.
  }];
  let options = [
    Option<"cpAsyncRings", "cp-async-rings", "bool", /*default=*/"true",
           "Split kernels whose gathered rings keep cp.async (off for "
           "persistent kernels: tile-allocate-shared cannot keep those "
           "rings' bytes apart from the consumers' buffers)">,
  ];
  let dependentDialects = ["mlir::NVVM::NVVMDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TileAllocateShared : Pass<"tile-allocate-shared", "mlir::func::FuncOp"> {
  let summary = "Assign shared-memory offsets to buffers by liveness";
  let description = [{
    Gives every `tile.local_alloc` a 16-byte aligned `offset`: buffers whose
    live ranges do not overlap share bytes (first fit, in order of first
    use). A live range runs over the ops of the function body from a
    buffer's first use to its last, a use in a loop (or any region) covering
    the whole op; a `tile.async_copy` keeps its buffer live until the first
    `tile.async_wait 0` after it, when the copy has surely landed. Records
    the total in the kernel's `tile.shared_bytes` (i64; none when the
    function has no buffer). A buffer that reuses bytes of an earlier one
    gets a `tile.barrier` before its first use (other warps may still be
    reading the earlier buffer) unless every access of it already follows a
    barrier that nothing touching those bytes precedes.

    Buffers may be used only by `tile.async_copy` and `tile.local_load`, in a
    single-block function body. Re-running the pass recomputes the offsets
    and adds no barrier: it is idempotent.

    With `max-shared-bytes`, a kernel whose buffers need more is an error
    at the kernel, with a note at each buffer's load, before any lowering
    (flashc passes its arch's limit).

    With `persistent-rings` (flashc's `--persistent`) the buffers a TMA
    ring fills (the destinations of copies marked `tile.tma_barrier`) are
    live across the whole body and share bytes with no other buffer: a
    persistent kernel's producer refills them for the next tile while the
    consumers still finish this one.
  }];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", /*default=*/"0",
           "Shared memory per CTA the target allows (0: no check)">,
    Option<"persistentRings", "persistent-rings", "bool", /*default=*/"false",
           "Keep TMA rings' buffers live across the whole body (persistent "
           "kernels)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "The target named in the error">,
  ];
}

def TilePersistent : Pass<"tile-persistent", "mlir::ModuleOp"> {
  let summary = "Persistent CTAs: each CTA loops over the kernel's tiles";
  let description = [{
    FlashAttention-3's persistent kernels. Every kernel (a func.func with
    `tile.grid`) gets its body wrapped in
    `scf.for %t = program_id(0) to G0 * G1 * G2 step num_programs(0)`,
    where (G0, G1, G2) is the grid the kernel asks for (its grid function,
    cloned into the kernel). Inside the loop `tile.program_id` becomes the
    coordinates of tile `%t` in the schedule's order and `tile.num_programs`
    the asked-for grid; a `tile.barrier` ends each tile, so that no warp
    starts the next tile's copies into buffers other warps still read.
    Buffers (`tile.local_alloc`) and constants stay before the loop. The
    grid function then returns `(min(G0 * G1 * G2, ctas), 1, 1)`, which the
    sidecar and every launcher read as they read any grid.

    Schedules: `static` numbers tiles as a launch numbers CTAs (axis 0
    fastest); `longest-first` takes axis 0 slowest and reversed, so all
    tiles of the last query block (the longest with bottom-right aligned
    causal masks) come first and the short ones form the tail; `auto`
    (default) takes `longest-first` where the kernel's constants hold
    `CAUSAL = true`, else `static` (axis 0 read as the query blocks: the
    forward and dQ kernels'). The kernel records the schedule in
    `tile.persistent`; a kernel that has it already is left alone.

    `ctas` 0 derives the count from the module's `tile.arch`: the SMs of
    the arch's datacenter GPU (108 for sm_80, 132 for sm_90) times the CTAs
    one SM holds by threads and shared memory (`tile.shared_bytes`).

    TMA rings (sm_90a) carry on across tiles: the loop over the tiles has
    one i32 iter_arg per ring, the blocks the ring's loops ran in the CTA's
    earlier tiles, and names the rings in `tile.tma_ring_counts`; a ring's
    later loop in the tile (tile-tma-copies' shared-rings) starts from an
    `arith.addi` marked `tile.tma_ring_base` that adds the earlier loop's
    trip count, and each tile adds its last loop's. convert-tile-to-simt
    takes block k's slot and mbarrier phase from that count plus k. In a warp-specialized
    kernel (`tile.warp_roles`) the producer's issuing warp and the
    consumers each loop over the tiles in their own side of the split,
    after their `setmaxnreg`; only the consumers end a tile with a
    `tile.barrier` (their named barrier), the producer runs ahead as far as
    the rings' empty barriers let it.

    Rejected with an error: a body of more than one block; a grid function
    with memory effects; `ctas` 0 without `tile.arch`; a cp.async
    producer's rings (`tile.cp_async_barrier`); in a warp-specialized
    kernel, a buffer sharing bytes with a TMA ring's (the producer would
    fill the next tile's slots over it: tile-allocate-shared's
    `persistent-rings` keeps them apart).
  }];
  let options = [
    Option<"ctas", "ctas", "int64_t", /*default=*/"0",
           "CTAs to launch at most (0: the arch's SMs x CTAs per SM)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"auto\"",
           "Tile order: auto, static or longest-first">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

#endif // FLASH_TRANSFORMS_PASSES_TD

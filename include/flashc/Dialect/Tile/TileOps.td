#ifndef FLASH_TILE_OPS_TD
#define FLASH_TILE_OPS_TD

include "flashc/Dialect/Tile/TileDialect.td"
include "flashc/Dialect/Tile/TileTypes.td"
include "flashc/Dialect/Tile/TileLayouts.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Tiles are statically shaped ranked tensors; the element types a tile may
// hold are checked by the verifiers so that the message can name them.
def Tile_Tile : RankedTensorOf<[F16, BF16, F8E4M3FN, F32, I1, I32]>;
def Tile_MmaOperand : RankedTensorOf<[F16, BF16, F8E4M3FN]>;
def Tile_F32Tile : RankedTensorOf<[F32]>;
def Tile_Scalar : AnyTypeOf<[F16, BF16, F8E4M3FN, F32, I1, I32]>;

//===----------------------------------------------------------------------===//
// Program instance and shapes
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid axis";
  let description = [{
    The coordinate (0-based) of the running program instance along grid axis
    `axis` (0, 1 or 2), like CUDA's `blockIdx`.

    ```mlir
    %pid = tile.program_id 0 : i32
    ```
  }];
  let arguments = (ins I32Attr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "number of program instances along a grid axis";
  let arguments = (ins I32Attr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_DimOp : Tile_Op<"dim", [Pure]> {
  let summary = "size of one dim of a global tensor";
  let description = [{
    The size of dim `index` of a global tensor as i32. Folds to a constant
    when the dim is static.

    ```mlir
    %nq = tile.dim %Q[2] : !tile.global<[B, H, Nq, 64], f16>
    ```
  }];
  let arguments = (ins Tile_GlobalType:$source, I64Attr:$index);
  let results = (outs I32:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` qualified(type($source))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Tile construction
//===----------------------------------------------------------------------===//

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "a tile whose every element is one scalar";
  let arguments = (ins Tile_Scalar:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "the 1-D i32 tile 0, 1, ..., N-1";
  let description = [{
    `tile.iota : tensor<Nxi32>` produces `[0, 1, ..., N-1]`; adding a scalar
    offset gives the global indices of a window, from which masks are built.
  }];
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Global memory windows
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "read a rectangular window of a global tensor into a tile";
  let description = [{
    Reads the window of `source` that starts at element `offsets` (one i32
    per dim of `source`). Tile dim `i` runs along global dim `window[i]`
    (strictly increasing); every global dim not named in `window` contributes
    a single index. Element `t` of the result is
    `source[offsets + embed(t)]`, or `pad` when that index is outside the
    tensor (negative or past the dim's size): loads are bounds-masked, so a
    window may hang over any edge.

    ```mlir
    %q = tile.load %Q[%b, %h, %m0, %c0] window [2, 3] pad 0.0 : f16
        : !tile.global<[B, H, Nq, 64], f16> -> tensor<128x64xf16>
    ```

    A gathered load (`gather [g0, ...] (%i0, ... : types)`) takes its rows
    from runtime indices: every `%ij` is a 1-D i32 tile of R elements, tile
    dim 0 has size R and tile dim `i + 1` runs along global dim `window[i]`.
    Row `r` reads at `offsets + sum_j ij[r] * e_gj + embed(t)`, each index
    bounds-masked like the others. The gathered dims are strictly increasing
    and none of them is in `window`. A paged KV cache's rows: page
    `table[n / 16]` and slot `n % 16` of token n.

    ```mlir
    %k = tile.load %K[%c0, %c0, %h, %c0] window [3] gather [0, 1]
        (%pages, %slots : tensor<64xi32>, tensor<64xi32>) pad 0.0 : f16
        : !tile.global<[P, 16, H, 64], f16> -> tensor<64x64xf16>
    ```
  }];
  let arguments = (ins Tile_GlobalType:$source, Variadic<I32>:$offsets,
                       DenseI64ArrayAttr:$window,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$gather,
                       Variadic<Tile_Tile>:$indices,
                       TypedAttrInterface:$pad);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` `window` $window
    (`gather` $gather^ ` ` `(` $indices `:` type($indices) `)`)?
    `pad` $pad attr-dict `:` qualified(type($source)) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the rows come from index tiles.
    bool isGathered() { return !getGather().empty(); }
  }];
}

def Tile_LoadScalarOp : Tile_Op<"load_scalar", [MemoryEffects<[MemRead]>]> {
  let summary = "read one element of a global tensor as a scalar";
  let description = [{
    Reads element `source[indices]` (one i32 per dim), or `pad` when any
    index is outside its dim. Every thread of a program reads the same
    element: the value is uniform, for window offsets and loop bounds read
    from memory (cu_seqlens, block tables).

    ```mlir
    %start = tile.load_scalar %cu_seqlens[%b] pad 0 : i32
        : !tile.global<[B1], i32> -> i32
    ```
  }];
  let arguments = (ins Tile_GlobalType:$source, Variadic<I32>:$indices,
                       TypedAttrInterface:$pad);
  let results = (outs Tile_Scalar:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` `pad` $pad attr-dict `:` qualified(type($source))
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [AttrSizedOperandSegments,
                                     MemoryEffects<[MemWrite]>]> {
  let summary = "write a tile into a rectangular window of a global tensor";
  let description = [{
    The inverse of `tile.load` with the same window rules; elements whose
    global index is out of bounds are never written, nor are the elements
    where the optional `mask` (an i1 tile of the value's shape and layout)
    is false.

    ```mlir
    tile.store %o, %O[%b, %h, %m0, %c0] window [2, 3]
        : tensor<128x64xf16> -> !tile.global<[B, H, Nq, 64], f16>
    tile.store %o, %O[%m0, %c0] window [0, 1] mask %keep
        : tensor<128x64xf32>, tensor<128x64xi1> -> !tile.global<[N, 64], f32>
    ```
  }];
  let arguments = (ins Tile_Tile:$value, Tile_GlobalType:$dest,
                       Variadic<I32>:$offsets, DenseI64ArrayAttr:$window,
                       Optional<Tile_Tile>:$mask);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` `window` $window (`mask` $mask^)?
    attr-dict `:` type($value) (`,` type($mask)^)? `->` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomically add an f32 tile into a window of a global tensor";
  let description = [{
    Adds every element of `value` to the element of the f32 tensor `dest`
    it lands on (the window rules of `tile.store`: out-of-bounds elements,
    and those where the optional `mask` is false, are left alone), each
    addition one relaxed, device-scope atomic read-modify-write rounded to
    f32 (PTX `atom.global.add.f32` / `red.global.add.f32`). Additions from
    different program instances to one element commute up to f32 rounding;
    no other order is promised. Nothing is returned.

    ```mlir
    tile.atomic_add %dq, %DQ[%b, %m0, %c0] window [1, 2]
        : tensor<64x64xf32> -> !tile.global<[B, N, 64], f32>
    ```
  }];
  let arguments = (ins Tile_Tile:$value, Tile_GlobalType:$dest,
                       Variadic<I32>:$offsets, DenseI64ArrayAttr:$window,
                       Optional<Tile_Tile>:$mask);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` `window` $window (`mask` $mask^)?
    attr-dict `:` type($value) (`,` type($mask)^)? `->` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure]> {
  let summary = "insert a dim of size 1";
  let arguments = (ins Tile_Tile:$input, I64Attr:$axis);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat =
      "$input `axis` `=` $axis attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "repeat size-1 dims to a larger shape";
  let description = [{
    Same rank in and out; every input dim equals the result dim or is 1 (then
    repeated). Together with `tile.expand_dims` this gives numpy-style
    broadcasting, e.g. subtracting a row vector of maxima from a score tile.
  }];
  let arguments = (ins Tile_Tile:$input);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure]> {
  let summary = "transpose a 2-D tile";
  let arguments = (ins Tile_Tile:$input);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduce a tile along one axis with max or sum";
  let description = [{
    Removes dim `axis`. `max` of f32 treats -inf as the identity; `sum`
    accumulates in the element type (f32 for scores).

    `lane_partial` (layout level only: a `sum` of f32 with a layout on the
    result) leaves the result in lane-partial form: each register holds a
    part of its element, and the element is the sum of that register over
    the lanes of the warp that hold the element in it (its replicas).
    Sums of such values and their products with ordinary tiles of the same
    layout stay in that form; `tile.sum_lane_partials` adds the parts up.
    `tile-defer-loop-sums` uses it to reduce a loop-carried row sum across
    lanes once, after the loop.

    `uniform` (a `max`) states that all elements along `axis` are equal (the
    product with a column of ones that `online_softmax`'s `sum_by_mma`
    decomposes to): the result is that value, and lowering takes it from
    each thread's own registers, without shuffles.

    ```mlir
    %rowmax = tile.reduce max %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_Tile:$input,
                       I64Attr:$axis, UnitAttr:$lane_partial,
                       UnitAttr:$uniform);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $kind $input `axis` `=` $axis (`lane_partial` $lane_partial^)?
    (`uniform` $uniform^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_SumLanePartialsOp : Tile_Op<"sum_lane_partials",
                                    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "add up a tile held in lane-partial form";
  let description = [{
    Layout level only. `input` is in lane-partial form (see `tile.reduce`'s
    `lane_partial`): each element is the sum of its register over the lanes
    of a warp that hold the element in that register. The result holds every
    element whole in every such lane (butterfly shuffles).

    ```mlir
    %l = tile.sum_lane_partials %part : tensor<128xf32, #tile.slice<1, #mma>>
    ```
  }];
  let arguments = (ins Tile_F32Tile:$input);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure]> {
  let summary = "move a tile to another distributed layout";
  let description = [{
    Same shape, same element type, same values; only the encoding (which
    thread holds which element) changes. Lowering picks the cheapest way the
    two layouts allow: a register repack when every thread already holds the
    elements it needs (FlashAttention-2's S accumulator to P operand), shared
    memory with barriers otherwise.

    ```mlir
    %p = tile.convert_layout %s : tensor<128x64xf16, #mma>
                               -> tensor<128x64xf16, #tile.dot_op<0, #mma>>
    ```
  }];
  let arguments = (ins Tile_Tile:$input);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Tensor-core math and online softmax
//===----------------------------------------------------------------------===//

def Tile_MmaOp : Tile_Op<"mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix multiply-accumulate: result = acc + A * B";
  let description = [{
    `A` is M x K (K x M with `transpose_a`), `B` is K x N (N x K with
    `transpose_b`), `acc` and the result are M x N f32. A and B are both f16,
    both bf16, or both f8E4M3FN (warpgroup MMAs on sm_90a only); products are
    accumulated in f32. With `transpose_b`,
    `Q * K^T` is written directly on a K tile loaded row by row.

    ```mlir
    %s = tile.mma %q, %k, %zero {transpose_b}
        : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_MmaOperand:$a, Tile_MmaOperand:$b,
                       Tile_F32Tile:$acc, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tile_OnlineSoftmaxOp : Tile_Op<"online_softmax", [Pure,
    AllTypesMatch<["running_max", "running_sum", "new_max", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one step of the online-softmax update of attention";
  let description = [{
    One key/value block of attention for a block of M query rows. Operands:
    `scores` S (M x N f32; masked entries are -inf), `values` V (N x D, f16
    or bf16), the running row max `m` and row sum `l` (M f32) and the
    accumulator `acc` (M x D f32). With the optional `scale` (an f32 that must
    be positive), S stands for `scale * scores`: lowering then takes the row
    max of the unscaled scores and folds the scaling into the one FMA that
    feeds each exponential (max(c * x) = c * max(x) only for c > 0). With
    `exp2`, S and m are in log2 units and every exponential below is 2^x
    instead of e^x; P's are flushed to 0 below 2^-126 (PTX ex2.approx.ftz;
    the decomposition emits `math.exp2 fastmath<afn>`, which means that).
    Per row i (all reductions over the N columns):

    ```
    m_new  = max(m, max_j S[i, j])
    base   = m_new == -inf ? 0 : m_new      // a row with no key so far
    alpha  = exp(m - base)                  // rescales the old statistics
    P      = exp(S - base)                  // masked entries give 0
    l_new  = alpha * l + sum_j P[i, j]
    PV     = convert(P, type(V)) * V        // f32 accumulation
    ```

    and the new accumulator depends on `normalization`:
    - `deferred` (FlashAttention-2): `acc_new = alpha * acc + PV`; the
      accumulator stays unnormalized and `tile.online_softmax_finalize`
      divides by l once after the last block.
    - `eager` (FlashAttention-1): `acc` holds the normalized output so far and
      `acc_new = (alpha * l * acc + PV) / l_new`, or 0 where `l_new` is 0.

    Initial state: m = -inf, l = 0, acc = 0.

    With `sum_by_mma`, the row sum adds P as the P @ V product sees it,
    rounded to V's type: `l_new = alpha * l + sum_j convert(P[i, j])`, and
    lowering computes it on the tensor cores, as P times a column of ones
    accumulated onto `alpha * l` (one m16n8k16 per 16 rows and 16 keys):
    no per-score add and no shuffle. It pays where the tensor pipe has room
    to spare, i.e. in loops bound by shared memory.
  }];
  let arguments = (ins Tile_F32Tile:$scores, Tile_MmaOperand:$values,
                       Tile_F32Tile:$running_max, Tile_F32Tile:$running_sum,
                       Tile_F32Tile:$acc, Optional<F32>:$scale,
                       Tile_Normalization:$normalization, UnitAttr:$exp2,
                       UnitAttr:$sum_by_mma);
  let results = (outs Tile_F32Tile:$new_max, Tile_F32Tile:$new_sum,
                      Tile_F32Tile:$new_acc);
  let assemblyFormat = [{
    $normalization (`exp2` $exp2^)? (`sum_by_mma` $sum_by_mma^)? $scores `,`
    $values `,` $running_max `,`
    $running_sum `,` $acc (`scale` $scale^)? attr-dict `:` type($scores) `,`
    type($values) `,` type($running_max) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_OnlineSoftmaxFinalizeOp : Tile_Op<"online_softmax_finalize",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "divide a deferred online-softmax accumulator by the row sums";
  let description = [{
    `result[i, j] = acc[i, j] / l[i]`, or 0 where `l[i]` is 0 (a row that saw
    no key, e.g. causal attention with more queries than keys).
  }];
  let arguments = (ins Tile_F32Tile:$acc, Tile_F32Tile:$running_sum);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = [{
    $acc `,` $running_sum attr-dict `:` type($acc) `,` type($running_sum)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory: staging global tiles on chip (after layout assignment)
//===----------------------------------------------------------------------===//

def Tile_SharedMemory : Resource<"::flash::tile::SharedMemoryResource">;
def Tile_Shared : Type<CPred<"::llvm::isa<::flash::tile::SharedType>($_self)">,
                       "shared-memory buffer", "::flash::tile::SharedType">;

def Tile_LocalAllocOp : Tile_Op<"local_alloc",
    [MemoryEffects<[MemAlloc<Tile_SharedMemory>]>]> {
  let summary = "a shared-memory buffer for the whole CTA";
  let description = [{
    Reserves a shared-memory buffer. `tile-allocate-shared` sets `offset`,
    the buffer's byte offset in the kernel's shared memory, reusing the bytes
    of buffers whose live ranges do not overlap.

    ```mlir
    %kbuf = tile.local_alloc {offset = 0 : i64}
        : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Tile_Shared:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_AsyncCopyOp : Tile_Op<"async_copy", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite<Tile_SharedMemory>]>]> {
  let summary = "start copying a global window into a shared-memory slot";
  let description = [{
    Starts an asynchronous copy (cp.async) of the `rows x cols` window of
    `source` at `offsets` (as in `tile.load`; the window's last dim must be
    the tensor's whole last dim, which is static) into slot `slot` of `dest`.
    Elements outside the tensor, and every element when `pred` is false, are
    written as zero and not read. The copy is part of the group that the next
    `tile.async_commit` closes; it may land any time until a
    `tile.async_wait` retires that group, and other threads see it only after
    a `tile.barrier` that follows the wait.

    ```mlir
    tile.async_copy %K[%b, %h, %n, %c0] window [2, 3] into %kbuf[%slot]
        if %more : !tile.global<[B, H, Nk, 64], f16>
        -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
    ```

    With `gather` (as in `tile.load`; the window is then the last dim only)
    row r of the slot is copied from the row the index tiles name, each row
    a run of 16-byte chunks with its own base address, and a row with an
    index out of bounds is zero-filled. After layout assignment the index
    tiles are in `#tile.slice<1, B>`, where the blocked layout B over the
    slot's `[rows, chunks per row]` grid says which thread copies which
    chunk (each chunk exactly once): every thread holds the indices of the
    rows it copies.

    ```mlir
    tile.async_copy %K[%c0, %c0, %h, %c0] window [3] gather [0, 1]
        (%pages, %slots : tensor<64xi32, #rows>, tensor<64xi32, #rows>)
        into %kbuf[%slot] : !tile.global<[P, 16, H, 64], f16>
        -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
    ```
  }];
  let arguments = (ins Tile_GlobalType:$source, Variadic<I32>:$offsets,
                       DenseI64ArrayAttr:$window,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr, "{}">:$gather,
                       Variadic<Tile_Tile>:$indices, Tile_Shared:$dest,
                       I32:$slot, Optional<I1>:$pred);
  let assemblyFormat = [{
    $source `[` $offsets `]` `window` $window
    (`gather` $gather^ ` ` `(` $indices `:` type($indices) `)`)?
    `into` $dest `[` $slot `]`
    (`if` $pred^)? attr-dict `:` qualified(type($source)) `->`
    qualified(type($dest))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isGathered() { return !getGather().empty(); }
  }];
}

def Tile_AsyncCommitOp : Tile_Op<"async_commit",
    [MemoryEffects<[MemWrite<Tile_SharedMemory>]>]> {
  let summary = "close the group of async copies started since the last one";
  let assemblyFormat = "attr-dict";
}

def Tile_AsyncWaitOp : Tile_Op<"async_wait",
    [MemoryEffects<[MemWrite<Tile_SharedMemory>]>]> {
  let summary = "wait until at most `pending` committed copy groups are "
                "in flight";
  let description = [{
    Blocks the thread until all but the `pending` most recently committed
    groups of its own async copies have landed (cp.async.wait_group).
  }];
  let arguments = (ins I32Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def Tile_BarrierOp : Tile_Op<"barrier",
    [MemoryEffects<[MemRead<Tile_SharedMemory>, MemWrite<Tile_SharedMemory>]>]> {
  let summary = "CTA-wide barrier; orders shared-memory accesses";
  let assemblyFormat = "attr-dict";
}

def Tile_LocalLoadOp : Tile_Op<"local_load",
    [MemoryEffects<[MemRead<Tile_SharedMemory>]>]> {
  let summary = "read one slot of a shared-memory buffer into a tile";
  let description = [{
    Reads slot `slot` of `source` into a tile of the slot's shape whose
    layout (required) says which thread holds what; an MMA operand layout
    lowers to ldmatrix (`.trans` for a B operand stored K-major, such as V).

    ```mlir
    %k = tile.local_load %kbuf[%slot]
        : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
        -> tensor<64x64xf16, #dot_b_t>
    ```
  }];
  let arguments = (ins Tile_Shared:$source, I32:$slot);
  let results = (outs Tile_MmaOperand:$result);
  let assemblyFormat = [{
    $source `[` $slot `]` attr-dict `:` qualified(type($source)) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Runtime checks
//===----------------------------------------------------------------------===//

def Tile_DeviceAssertOp : Tile_Op<"device_assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "stop the kernel with a message where a condition is false";
  let description = [{
    `condition` is an i1 scalar or an i1 tile. When any element is false the
    launch fails with `message` and the op's source location (CUDA's
    `assert`): the interpreter reports the first false element's index, the
    emulator the thread, and the GPU calls `__assertfail`. The op has a
    write effect so that no pass drops or hoists it.

    ```mlir
    tile.device_assert %ok, "page index past the block table" : i1
    tile.device_assert %in_range, "n out of range" : tensor<64xi1>
    ```
  }];
  let arguments = (ins AnyType:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
  let hasVerifier = 1;
}

#endif // FLASH_TILE_OPS_TD

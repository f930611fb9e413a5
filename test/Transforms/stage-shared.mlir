// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-stage-shared))' | FileCheck %s

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>

// FlashAttention-2's loads: Q once before the loop, K (the transposed
// operand, still [keys, head_dim] in memory order) and V in the loop. Buffers
// are allocated at the top of the kernel; K and V share one commit, wait and
// barrier, and only the loop's copies need the leading (WAR) barrier.
// CHECK-LABEL: func.func @attention
// CHECK-NOT:     tile.register_bound
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[QB:.*]] = tile.local_alloc : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[VB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 64 : i32
// CHECK-NEXT:    %[[ACC0:.*]] = arith.constant
// CHECK-NEXT:    tile.async_copy %[[Q:.*]][%[[Z]], %[[Z]]] window [0, 1] into %[[QB]][%[[C0]]] : !tile.global<[N, 64], f16> -> !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    %[[QT:.*]] = tile.local_load %[[QB]][%[[C0]]] : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]> -> tensor<128x64xf16, #[[A:.*]]>
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[Z]] to %{{.*}} step %[[STEP]] iter_args(%[[ACC:.*]] = %[[ACC0]])
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %{{.*}}[%[[I]], %[[Z]]] window [0, 1] into %[[KB]][%[[C0]]] : !tile.global<[N, 64], f16> -> !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:      tile.async_copy %{{.*}}[%[[I]], %[[Z]]] window [0, 1] into %[[VB]][%[[C0]]] : !tile.global<[N, 64], f16> -> !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      %[[K:.*]] = tile.local_load %[[KB]][%[[C0]]] : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #[[BT:.*]]>
// CHECK-NEXT:      %[[V:.*]] = tile.local_load %[[VB]][%[[C0]]] : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #[[B:.*]]>
// CHECK-NEXT:      %[[S:.*]] = tile.mma %[[QT]], %[[K]], %[[ACC]] {transpose_b}
// CHECK-NEXT:      %[[P:.*]] = arith.truncf %[[S]]
// CHECK-NEXT:      %[[PA:.*]] = tile.convert_layout %[[P]]
// CHECK-NEXT:      tile.mma %[[PA]], %[[V]], %[[ACC]]
// CHECK-NOT:   tile.load
// CHECK:       return
func.func @attention(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                     %V: !tile.global<[N, 64], f16>, %n: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16, #dot_a>
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    %k = tile.load %K[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_b_t>
    %v = tile.load %V[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %acc {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>

// The default swizzle by row width: 16 bytes none, 32 bytes [4, 2], 64 bytes [2, 4], 128 and 256 bytes [1, 8], bf16 alike.
// Rows of 6 chunks keep the phase inside aligned pairs of chunks: [1, 2].
// Loads of one block with only pure ops between them share one group; a
// load whose offsets are computed after the group starts begins another.
// CHECK-LABEL: func.func @swizzles
// CHECK-DAG:   %[[B8:.*]] = tile.local_alloc : !tile.shared<[1, 64, 8], f16>
// CHECK-DAG:   %[[B16:.*]] = tile.local_alloc : !tile.shared<[1, 64, 16], f16, swizzle = [4, 2]>
// CHECK-DAG:   %[[B32:.*]] = tile.local_alloc : !tile.shared<[1, 64, 32], bf16, swizzle = [2, 4]>
// CHECK-DAG:   %[[B64:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-DAG:   %[[B128:.*]] = tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8]>
// CHECK-DAG:   %[[B48:.*]] = tile.local_alloc : !tile.shared<[1, 64, 48], f16, swizzle = [1, 2]>
// CHECK:       tile.async_copy {{.*}} into %[[B8]]
// CHECK-NEXT:  tile.async_copy {{.*}} into %[[B16]]
// CHECK-NEXT:  tile.async_copy {{.*}} into %[[B32]]
// CHECK-NEXT:  tile.async_commit
// CHECK-NEXT:  tile.async_wait 0
// CHECK-NEXT:  tile.barrier
// CHECK-NEXT:  tile.local_load %[[B8]]
// CHECK-NEXT:  arith.addi
// CHECK-NEXT:  tile.local_load %[[B16]]
// CHECK-NEXT:  tile.local_load %[[B32]]
// CHECK-NEXT:  %[[ROW:.*]] = arith.muli
// CHECK-NEXT:  tile.async_copy %{{.*}}[%[[ROW]], %{{.*}}] window [0, 1] into %[[B64]]
// CHECK-NEXT:  tile.async_copy {{.*}} into %[[B128]]
// CHECK-NEXT:  tile.async_commit
// CHECK-NEXT:  tile.async_wait 0
// CHECK-NEXT:  tile.barrier
// CHECK-NEXT:  tile.local_load %[[B64]]
// CHECK-NEXT:  tile.local_load %[[B128]]
// CHECK-NEXT:  tile.iota
// CHECK-NEXT:  tile.store
// CHECK-NEXT:  tile.async_copy {{.*}} into %[[B48]]
// CHECK-NEXT:  tile.async_commit
// CHECK-NEXT:  tile.async_wait 0
// CHECK-NEXT:  tile.barrier
// CHECK-NEXT:  tile.local_load %[[B48]]
func.func @swizzles(%A8: !tile.global<[N, 8], f16>, %A16: !tile.global<[N, 16], f16>,
                    %A32: !tile.global<[N, 32], bf16>, %A64: !tile.global<[N, 64], f16>,
                    %A128: !tile.global<[N, 128], f16>, %A48: !tile.global<[N, 48], f16>,
                    %O: !tile.global<[N], i32>, %m: i32)
    -> (tensor<64x8xf16, #dot_b>, tensor<64x16xf16, #dot_b>, tensor<64x32xbf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x128xf16, #dot_a>, tensor<64x48xf16, #dot_b>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %a8 = tile.load %A8[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 8], f16> -> tensor<64x8xf16, #dot_b>
  %m1 = arith.addi %m, %m : i32
  %a16 = tile.load %A16[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 16], f16> -> tensor<64x16xf16, #dot_b>
  %a32 = tile.load %A32[%m, %c0] window [0, 1] pad 0.0 : bf16 : !tile.global<[N, 32], bf16> -> tensor<64x32xbf16, #dot_a>
  %row = arith.muli %m1, %m : i32
  %a64 = tile.load %A64[%row, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
  %a128 = tile.load %A128[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #dot_a>
  %ids = tile.iota : tensor<64xi32, #tile.slice<1, #mma>>
  tile.store %ids, %O[%m] window [0] : tensor<64xi32, #tile.slice<1, #mma>> -> !tile.global<[N], i32>
  %a48 = tile.load %A48[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 48], f16> -> tensor<64x48xf16, #dot_b>
  return %a8, %a16, %a32, %a64, %a128, %a48 : tensor<64x8xf16, #dot_b>, tensor<64x16xf16, #dot_b>, tensor<64x32xbf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x128xf16, #dot_a>, tensor<64x48xf16, #dot_b>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>

// Loads that stay register loads: not an MMA operand, f32, a non-zero pad, a
// window that is not whole rows (a part of the last dim, a last-dim offset not
// known to be 0, a window along a leading dim only), a symbolic last dim.
// CHECK-LABEL: func.func @not_staged
// CHECK-NOT:   tile.local_alloc
// CHECK-NOT:   tile.async_copy
// CHECK-COUNT-8: tile.load
// CHECK-NOT:   tile.local_load
func.func @not_staged(%A: !tile.global<[N, 64], f16>, %F: !tile.global<[N, 64], f32>,
                      %W: !tile.global<[N, 128], f16>, %D: !tile.global<[N, M], f16>,
                      %T: !tile.global<[N, 64, 64], f16>, %m: i32)
    -> (tensor<64x64xf16, #blocked>, tensor<64x64xf32, #blocked>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %0 = tile.load %A[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #blocked>
  %1 = tile.load %F[%m, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[N, 64], f32> -> tensor<64x64xf32, #blocked>
  %2 = tile.load %A[%m, %c0] window [0, 1] pad 1.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
  %3 = tile.load %W[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x64xf16, #dot_a>
  %4 = tile.load %A[%m, %m] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
  %5 = tile.load %D[%m, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, M], f16> -> tensor<64x64xf16, #dot_a>
  %6 = tile.load %T[%m, %c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64, 64], f16> -> tensor<64x64xf16, #dot_a>
  %7 = tile.load %A[%m, %c0] window [0, 1] pad -0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<64x64xf16, #blocked>, tensor<64x64xf32, #blocked>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_a>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#cols = #tile.slice<0, #mma>

// Index tiles in another layout are converted to the slice of the copy's
// chunk layout first (tile-assign-layouts computes them there directly).
// CHECK-LABEL: func.func @gathered_convert
// CHECK:         %[[ROWS:.*]] = tile.convert_layout %{{.*}} : tensor<64xi32, #{{.*}}> -> tensor<64xi32, #[[SLICE:rows.*]]>
// CHECK-NEXT:    tile.async_copy %{{.*}} gather [0] (%[[ROWS]] : tensor<64xi32, #[[SLICE]]>)
func.func @gathered_convert(%K: !tile.global<[P, 64], f16>, %rows_idx: tensor<64xi32, #cols>)
    -> tensor<64x64xf16, #dot_b> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %k = tile.load %K[%c0, %c0] window [1] gather [0] (%rows_idx : tensor<64xi32, #cols>)
      pad 0.0 : f16 : !tile.global<[P, 64], f16> -> tensor<64x64xf16, #dot_b>
  return %k : tensor<64x64xf16, #dot_b>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>

// A load in a conditional block of a loop also overwrites what the previous
// iteration read: its group starts with a barrier too.
// CHECK-LABEL: func.func @in_branch
// CHECK:         scf.for
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        tile.barrier
// CHECK-NEXT:        tile.async_copy
// CHECK-NEXT:        tile.async_commit
// CHECK-NEXT:        tile.async_wait 0
// CHECK-NEXT:        tile.barrier
// CHECK-NEXT:        tile.local_load
func.func @in_branch(%K: !tile.global<[N, 64], f16>, %n: i32, %c: i1)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  scf.for %i = %c0 to %n step %c32 : i32 {
    scf.if %c {
      %k = tile.load %K[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<32x64xf16, #dot_b>
    }
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>

// Gathered rows (pages of a KV cache) stage like a window: the copy carries
// the gather and its index tiles, each row copied from its own address.
// CHECK-LABEL: func.func @gathered
// CHECK:         %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         tile.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [3] gather [0, 1] (%{{.*}}, %{{.*}} : tensor<64xi32, #[[ROWS:.*]]>, tensor<64xi32, #[[ROWS]]>) into %[[KB]][%{{.*}}] : !tile.global<[P, 16, H, 64], f16> -> !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    tile.local_load %[[KB]]
// CHECK-NOT:     tile.load %
func.func @gathered(%K: !tile.global<[P, 16, H, 64], f16>, %h: i32,
                    %pages: tensor<64xi32, #rows>, %slots: tensor<64xi32, #rows>)
    -> tensor<64x64xf16, #dot_b_t> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %k = tile.load %K[%c0, %c0, %h, %c0] window [3] gather [0, 1] (%pages, %slots : tensor<64xi32, #rows>, tensor<64xi32, #rows>)
      pad 0.0 : f16 : !tile.global<[P, 16, H, 64], f16> -> tensor<64x64xf16, #dot_b_t>
  return %k : tensor<64x64xf16, #dot_b_t>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#cols = #tile.slice<0, #mma>

// Index tiles in another layout are converted to the slice of the copy's
// chunk layout first (tile-assign-layouts computes them there directly).
// CHECK-LABEL: func.func @gathered_convert
// CHECK:         %[[ROWS:.*]] = tile.convert_layout %{{.*}} : tensor<64xi32, #{{.*}}> -> tensor<64xi32, #[[SLICE:rows.*]]>
// CHECK-NEXT:    tile.async_copy %{{.*}} gather [0] (%[[ROWS]] : tensor<64xi32, #[[SLICE]]>)
func.func @gathered_convert(%K: !tile.global<[P, 64], f16>, %rows_idx: tensor<64xi32, #cols>)
    -> tensor<64x64xf16, #dot_b> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %k = tile.load %K[%c0, %c0] window [1] gather [0] (%rows_idx : tensor<64xi32, #cols>)
      pad 0.0 : f16 : !tile.global<[P, 64], f16> -> tensor<64x64xf16, #dot_b>
  return %k : tensor<64x64xf16, #dot_b>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>

// A gathered load padded with 1.0 is not staged (cp.async zero-fills).
// CHECK-LABEL: func.func @gathered_padded
// CHECK-NOT:     tile.async_copy
// CHECK:         tile.load %{{.*}} gather [0]
func.func @gathered_padded(%K: !tile.global<[P, 64], f16>, %rows_idx: tensor<64xi32, #rows>)
    -> tensor<64x64xf16, #dot_b> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %k = tile.load %K[%c0, %c0] window [1] gather [0] (%rows_idx : tensor<64xi32, #rows>)
      pad 1.0 : f16 : !tile.global<[P, 64], f16> -> tensor<64x64xf16, #dot_b>
  return %k : tensor<64x64xf16, #dot_b>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>

// FlashAttention-2's backward: Q is the (transposed) B operand of k q^T and
// the B operand of dk += ds^T q. Its one copy is read twice, once in each
// layout, right before each MMA (so each read fuses into its MMA) instead
// of converting one register copy into the other.
// CHECK-LABEL: func.func @two_roles
// CHECK:         tile.async_copy
// CHECK-NOT:     tile.async_copy
// CHECK:         %[[QT:.*]] = tile.local_load %[[QB:.*]][%{{.*}}] : {{.*}} -> tensor<64x64xf16, #[[BT:.*]]>
// CHECK-NEXT:    %[[S:.*]] = tile.mma %{{.*}}, %[[QT]], %{{.*}} {transpose_b}
// CHECK-NEXT:    %[[P:.*]] = arith.truncf %[[S]]
// CHECK-NEXT:    %[[PA:.*]] = tile.convert_layout %[[P]]
// CHECK-NEXT:    %[[QN:.*]] = tile.local_load %[[QB]][%{{.*}}] : {{.*}} -> tensor<64x64xf16, #[[B:dot_b[0-9]*]]>
// CHECK-NEXT:    tile.mma %[[PA]], %[[QN]], %{{.*}} :
// CHECK-NOT:     tile.convert_layout
func.func @two_roles(%Q: !tile.global<[N, 64], f16>, %k: tensor<64x64xf16, #dot_a>)
    -> tensor<64x64xf32, #mma> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_b_t>
  %s = tile.mma %k, %q, %zero {transpose_b} : tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<64x64xf32, #mma>
  %p = arith.truncf %s : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
  %pa = tile.convert_layout %p : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #dot_a>
  %qb = tile.convert_layout %q : tensor<64x64xf16, #dot_b_t> -> tensor<64x64xf16, #dot_b>
  %dk = tile.mma %pa, %qb, %zero : tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
  return %dk : tensor<64x64xf32, #mma>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>

// A staged load inside loops that do not move its window (the K block of a
// backward program, read for every query block of every head) is copied
// once, before the outermost such loop, and read where it is: one buffer
// for the loads of both loop nests. A loop that writes the tensor (the
// third) keeps its copy inside, and the loop after it gets a copy of its
// own (the first is stale).
// CHECK-LABEL: func.func @invariant
// CHECK:         %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         %[[K2B:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         %[[WB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NOT:     tile.local_alloc
// CHECK:         tile.async_copy %[[K:.*]][%[[ROW:.*]], %{{.*}}] window [0, 1] into %[[KB]]
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        tile.local_load %[[KB]]
// CHECK-NEXT:        tile.mma
// CHECK:         scf.for
// CHECK-NEXT:      tile.local_load %[[KB]]
// CHECK-NEXT:      tile.mma
// CHECK:         scf.for
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %[[K]][%[[ROW]], %{{.*}}] window [0, 1] into %[[WB]]
// CHECK:           tile.local_load %[[WB]]
// CHECK:           tile.store
// CHECK:         tile.async_copy %[[K]][%[[ROW]], %{{.*}}] window [0, 1] into %[[K2B]]
// CHECK:         scf.for
// CHECK-NEXT:      tile.local_load %[[K2B]]
func.func @invariant(%K: !tile.global<[N, 64], f16>, %row: i32, %n: i32,
                     %q: tensor<64x64xf16, #dot_b_t>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  scf.for %h = %c0 to %n step %c1 : i32 {
    scf.for %i = %c0 to %n step %c1 : i32 {
      %k = tile.load %K[%row, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
      %s = tile.mma %k, %q, %zero {transpose_b} : tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<64x64xf32, #mma>
    }
  }
  scf.for %i = %c0 to %n step %c1 : i32 {
    %k = tile.load %K[%row, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
    %s = tile.mma %k, %q, %zero {transpose_b} : tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<64x64xf32, #mma>
  }
  scf.for %i = %c0 to %n step %c1 : i32 {
    %k = tile.load %K[%row, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
    tile.store %k, %K[%i, %c0] window [0, 1] : tensor<64x64xf16, #dot_a> -> !tile.global<[N, 64], f16>
  }
  scf.for %i = %c0 to %n step %c1 : i32 {
    %k = tile.load %K[%row, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #dot_a>
    %s = tile.mma %k, %q, %zero {transpose_b} : tensor<64x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<64x64xf32, #mma>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>

// FlashAttention-2 at HEAD_DIM 128 with 128-row tiles: Q (64 registers a
// thread) beside the loop's accumulator (128) and fresh scores (64) would
// pass the budget of tile registers (216), so each MMA that takes Q re-reads
// it from its buffer right before it (convert-tile-to-simt fuses that read
// into the MMA: one k-step at a time) and nothing holds it across the loop.
// @attention above (Q 32, accumulator 64) keeps Q in registers. The kernel
// is marked tile.register_bound (the PTX emitter then keeps its loop
// addressing plain); @attention is not.
// CHECK-LABEL: func.func @reread_in_loop
// CHECK-SAME:    tile.register_bound
// CHECK:         %[[QB:.*]] = tile.local_alloc : !tile.shared<[1, 128, 128], f16, swizzle = [1, 8]>
// CHECK:         tile.async_copy %{{.*}} into %[[QB]]
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    scf.for
// CHECK:           tile.local_load %{{.*}} -> tensor<64x128xf16, #{{.*}}>
// CHECK-NEXT:      tile.local_load %{{.*}} -> tensor<64x128xf16, #{{.*}}>
// CHECK-NEXT:      %[[Q:.*]] = tile.local_load %[[QB]][%{{.*}}] : !tile.shared<[1, 128, 128], f16, swizzle = [1, 8]> -> tensor<128x128xf16, #[[A:.*]]>
// CHECK-NEXT:      tile.mma %[[Q]], %{{.*}}, %{{.*}} {transpose_b}
// CHECK:           scf.yield
// CHECK-NOT:     tile.local_load %[[QB]]
// CHECK:         return
func.func @reread_in_loop(%Q: !tile.global<[N, 128], f16>, %K: !tile.global<[N, 128], f16>,
                          %V: !tile.global<[N, 128], f16>, %n: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero_s = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32, #mma>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<128x128xf16, #dot_a>
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32, #mma>) : i32 {
    %k = tile.load %K[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #dot_b_t>
    %v = tile.load %V[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #dot_b>
    %s = tile.mma %q, %k, %zero_s {transpose_b} : tensor<128x128xf16, #dot_a>, tensor<64x128xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x128xf16, #dot_b> -> tensor<128x128xf32, #mma>
    scf.yield %o : tensor<128x128xf32, #mma>
  }
  return
}

// -----

// On sm_90a the operands of a warpgroup MMA (dot_op layouts of
// #tile.mma<warps = [4 G, 1, 1], values = [1, 1, 1]>) are staged in column
// blocks of the widest swizzle span that divides their rows, the layout
// wgmma's descriptors address; Q too, so that a wgmma may read it from
// shared memory: 128-byte blocks (block_cols = 64 f16, swizzle [1, 8]) for
// 256- and 512-byte rows, 64-byte blocks (32 f16, [2, 4]) for 96 f16,
// 32-byte blocks (16 f16, [4, 2]) for 80 f16. The same loads without
// tile.wgmma on the module or with an mma.sync layout keep the row-major
// layout.
#wg = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#wg_a = #tile.dot_op<0, #wg>
#wg_b = #tile.dot_op<1, #wg>
#wg_b_t = #tile.dot_op<1, #wg, transposed = true>
// CHECK-LABEL: func.func @wgmma_blocks
// CHECK:         tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 256], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 96], f16, swizzle = [2, 4], block_cols = 32>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 80], f16, swizzle = [4, 2], block_cols = 16>
// CHECK:         tile.local_load {{.*}} : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #{{.*}}>
// CHECK:         tile.local_load {{.*}} : !tile.shared<[1, 64, 256], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x256xf16, #{{.*}}>
// CHECK:         tile.local_load {{.*}} : !tile.shared<[1, 64, 96], f16, swizzle = [2, 4], block_cols = 32> -> tensor<64x96xf16, #{{.*}}>
// CHECK:         tile.local_load {{.*}} : !tile.shared<[1, 64, 80], f16, swizzle = [4, 2], block_cols = 16> -> tensor<64x80xf16, #{{.*}}>
module attributes {tile.wgmma} {
func.func @wgmma_blocks(%Q: !tile.global<[N, 128], f16>, %K: !tile.global<[N, 128], f16>,
                        %V: !tile.global<[N, 256], f16>, %W: !tile.global<[N, 96], f16>,
                        %X: !tile.global<[N, 80], f16>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero_s = arith.constant dense<0.0> : tensor<64x64xf32, #wg>
  %zero = arith.constant dense<0.0> : tensor<64x256xf32, #wg>
  %zero_w = arith.constant dense<0.0> : tensor<64x96xf32, #wg>
  %zero_x = arith.constant dense<0.0> : tensor<64x80xf32, #wg>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #wg_a>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #wg_b_t>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 256], f16> -> tensor<64x256xf16, #wg_b>
  %w = tile.load %W[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 96], f16> -> tensor<64x96xf16, #wg_b>
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 80], f16> -> tensor<64x80xf16, #wg_b>
  %s = tile.mma %q, %k, %zero_s {transpose_b} : tensor<64x128xf16, #wg_a>, tensor<64x128xf16, #wg_b_t> -> tensor<64x64xf32, #wg>
  %p = arith.truncf %s : tensor<64x64xf32, #wg> to tensor<64x64xf16, #wg>
  %pa = tile.convert_layout %p : tensor<64x64xf16, #wg> -> tensor<64x64xf16, #wg_a>
  %o = tile.mma %pa, %v, %zero : tensor<64x64xf16, #wg_a>, tensor<64x256xf16, #wg_b> -> tensor<64x256xf32, #wg>
  %o2 = tile.mma %pa, %w, %zero_w : tensor<64x64xf16, #wg_a>, tensor<64x96xf16, #wg_b> -> tensor<64x96xf32, #wg>
  %o3 = tile.mma %pa, %x, %zero_x : tensor<64x64xf16, #wg_a>, tensor<64x80xf16, #wg_b> -> tensor<64x80xf32, #wg>
  return
}
}

// -----

#wg = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#wg_a = #tile.dot_op<0, #wg>
#wg_b_t = #tile.dot_op<1, #wg, transposed = true>
// CHECK-LABEL: func.func @no_wgmma_module
// CHECK:         tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8]>
func.func @no_wgmma_module(%Q: !tile.global<[N, 128], f16>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #wg>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #wg_a>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #wg_b_t>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x128xf16, #wg_a>, tensor<64x128xf16, #wg_b_t> -> tensor<64x64xf32, #wg>
  return
}

// -----

#ms = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#ms_a = #tile.dot_op<0, #ms>
#ms_b_t = #tile.dot_op<1, #ms, transposed = true>
// CHECK-LABEL: func.func @mma_sync_layout
// CHECK:         tile.local_alloc : !tile.shared<[1, 128, 128], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8]>
module attributes {tile.wgmma} {
func.func @mma_sync_layout(%Q: !tile.global<[N, 128], f16>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #ms>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<128x128xf16, #ms_a>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #ms_b_t>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x128xf16, #ms_a>, tensor<64x128xf16, #ms_b_t> -> tensor<128x64xf32, #ms>
  return
}
}

// -----

// A gathered operand of a warpgroup MMA takes the wgmma buffer too (its
// rows copied chunk by chunk, here into 128-byte column blocks), and a B
// read before a loop whose warpgroup MMA uses it (FlashAttention-1's K and
// V across the query blocks) is read again right before that MMA, which
// wgmma reads through a descriptor; the kernel is not register-bound for it.
#wg = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#wg_a = #tile.dot_op<0, #wg>
#wg_b = #tile.dot_op<1, #wg>
#cols = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
// CHECK-LABEL: func.func @wgmma_gathered_and_held
// CHECK-NOT:     tile.register_bound
// CHECK:         tile.local_alloc : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK:         tile.async_copy {{.*}} gather [0]
// CHECK-NOT:     tile.local_load
// CHECK:         scf.for
// CHECK:           tile.local_load {{.*}} -> tensor<64x64xf16, #{{.*}}>
// CHECK-NEXT:      tile.local_load {{.*}} block_cols = 64> -> tensor<64x128xf16, #{{.*}}>
// CHECK-NEXT:      tile.mma
module attributes {tile.wgmma} {
func.func @wgmma_gathered_and_held(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 128], f16>,
                                   %idx: tensor<64xi32, #cols>, %n: i32)
    -> tensor<64x128xf32, #wg> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x128xf32, #wg>
  %v = tile.load %V[%c0, %c0] window [1] gather [0] (%idx : tensor<64xi32, #cols>)
      pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16, #wg_b>
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x128xf32, #wg>) : i32 {
    %p = tile.load %P[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #wg_a>
    %o = tile.mma %p, %v, %acc : tensor<64x64xf16, #wg_a>, tensor<64x128xf16, #wg_b> -> tensor<64x128xf32, #wg>
    scf.yield %o : tensor<64x128xf32, #wg>
  }
  return %r : tensor<64x128xf32, #wg>
}
}

// -----

// A B whose buffer is no wgmma layout (80-byte rows: an odd number of
// 16-byte chunks, which no swizzle span divides) is an mma.sync operand
// even in a warpgroup-shaped layout: read before the loop, it stays in
// registers across it.
#wg = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#wg_a = #tile.dot_op<0, #wg>
#wg_b = #tile.dot_op<1, #wg>
// CHECK-LABEL: func.func @held_b_not_wgmma_layout
// CHECK:         tile.local_load {{.*}} : !tile.shared<[1, 64, 40], f16> -> tensor<64x40xf16, #{{.*}}>
// CHECK:         scf.for
// CHECK-NOT:       tile.local_load {{.*}} -> tensor<64x40xf16
// CHECK:           tile.mma
module attributes {tile.wgmma} {
func.func @held_b_not_wgmma_layout(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 40], f16>, %n: i32)
    -> tensor<64x40xf32, #wg> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x40xf32, #wg>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 40], f16> -> tensor<64x40xf16, #wg_b>
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x40xf32, #wg>) : i32 {
    %p = tile.load %P[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16, #wg_a>
    %o = tile.mma %p, %v, %acc : tensor<64x64xf16, #wg_a>, tensor<64x40xf16, #wg_b> -> tensor<64x40xf32, #wg>
    scf.yield %o : tensor<64x40xf32, #wg>
  }
  return %r : tensor<64x40xf32, #wg>
}
}

// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-split-copies))' | FileCheck %s
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-split-copies,tile-pipeline-copies))' | FileCheck %s --check-prefix=PIPE

// The input is tile-stage-shared's output: K read by S = Q K^T, V by O += P V.

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// One stage, FlashAttention-2's schedule: each read moves to its MMA; the
// top waits for K(j) and copies V(j) (this iteration, no predicate), the
// point before P V waits for V(j) and copies K(j + 1) (zero-filled past the
// end); the prologue copies K(0); the buffers keep one slot.
// CHECK-LABEL: func.func @fa2_split(
// CHECK-SAME:      %[[K:[^:]*]]: !tile.global<[N, 64], f16>, %[[V:[^:]*]]: !tile.global<[N, 64], f16>, %[[Q:[^:]*]]: tensor<128x64xf16, #{{.*}}>, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[VB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         %[[ANY:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK-NEXT:    tile.async_copy %[[K]][%[[LB]], %[[C0]]] window [0, 1] into %[[KB]][%[[C0]]] if %[[ANY]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    scf.for %[[I:[^ ]*]] = %[[LB]] to %[[UB]] step %[[STEP:[^ ]*]] iter_args
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %[[V]][%[[I]], %[[C0]]] window [0, 1] into %[[VB]][%[[C0]]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[KT:.*]] = tile.local_load %[[KB]][%[[C0]]]
// CHECK-NEXT:      tile.mma %[[Q]], %[[KT]]
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      tile.convert_layout
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[STEP]] : i32
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK-NEXT:      tile.async_copy %[[K]][%[[NEXT]], %[[C0]]] window [0, 1] into %[[KB]][%[[C0]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[VT:.*]] = tile.local_load %[[VB]][%[[C0]]]
// CHECK-NEXT:      tile.mma %{{.*}}, %[[VT]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } {tile.split_copies}
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    return
// tile-pipeline-copies leaves a split loop alone.
// PIPE-LABEL: func.func @fa2_split(
// PIPE-NOT:     tile.shared<[2
// PIPE:         } {tile.split_copies}
func.func @fa2_split(%K: !K, %V: !K, %q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %acc {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {tile.split_copies}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// Two stages: both copies start at the point before P V, for the next
// iteration; K (read before it) keeps one slot, V (read after it) gets two,
// read at slot j % 2 and refilled at (j + 1) % 2. K commits first, so the
// top waits for it alone (`async_wait 1`: V(j) may still land until P V).
// CHECK-LABEL: func.func @fa2_split_two(
// CHECK-SAME:      %[[K:[^:]*]]: !tile.global<[N, 64], f16>, %[[V:[^:]*]]: !tile.global<[N, 64], f16>, %{{[^:]*}}: tensor<128x64xf16, #{{.*}}>, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[VB:.*]] = tile.local_alloc : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         %[[ANY:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK-NEXT:    tile.async_copy %[[K]][%[[LB]], %[[C0]]] window [0, 1] into %[[KB]][%[[C0]]] if %[[ANY]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_copy %[[V]][%[[LB]], %[[C0]]] window [0, 1] into %[[VB]][%[[C0]]] if %[[ANY]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    scf.for %[[I:[^ ]*]] = %[[LB]] to %[[UB]] step %[[STEP:[^ ]*]] iter_args
// CHECK-NEXT:      tile.async_wait 1
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      %[[KT:.*]] = tile.local_load %[[KB]][%[[C0]]]
// CHECK-NEXT:      tile.mma
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      tile.convert_layout
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[SINCE:.*]] = arith.subi %[[I]], %[[LB]] : i32
// CHECK-NEXT:      %[[IT:.*]] = arith.divui %[[SINCE]], %[[STEP]] : i32
// CHECK-NEXT:      %[[READ:.*]] = arith.remui %[[IT]], %[[C2]] : i32
// CHECK-NEXT:      %[[IT1:.*]] = arith.addi %[[IT]], %[[C1]] : i32
// CHECK-NEXT:      %[[WRITE:.*]] = arith.remui %[[IT1]], %[[C2]] : i32
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[STEP]] : i32
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK-NEXT:      tile.async_copy %[[K]][%[[NEXT]], %[[C0]]] window [0, 1] into %[[KB]][%[[C0]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_copy %[[V]][%[[NEXT]], %[[C0]]] window [0, 1] into %[[VB]][%[[WRITE]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[VT:.*]] = tile.local_load %[[VB]][%[[READ]]]
// CHECK-NEXT:      tile.mma %{{.*}}, %[[VT]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } {tile.num_stages = 2 : i64, tile.split_copies}
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    return
func.func @fa2_split_two(%K: !K, %V: !K, %q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %acc {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {tile.num_stages = 2 : i64, tile.split_copies}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// Every tile first read at one point: nothing would overlap, the loop keeps
// tile-stage-shared's form.
// CHECK-LABEL: func.func @one_point
// CHECK:         scf.for
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.local_load
// CHECK-NEXT:      tile.mma
func.func @one_point(%K: !K, %q: tensor<128x64xf16, #dot_a>, %n: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %s = tile.mma %q, %k, %acc {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    scf.yield %s : tensor<128x64xf32, #mma>
  } {tile.split_copies}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#cols = #tile.slice<0, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// The masked blocks (tile.mask_split) of a register-bound kernel whose mask
// compares the columns with a limit per row (causal attention's diagonal,
// %limits from before the loop) keep one stage: tile-stage-shared's form,
// each copy at the top for its own iteration, in the buffers as they are
// (no second slot), and no split_copies for tile-pipeline-copies to skip.
// CHECK-LABEL: func.func @masked_per_row(
// CHECK:         %[[KB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[VB:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK:         scf.for
// CHECK:           arith.cmpi sle
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %{{.*}} into %[[KB]]
// CHECK-NEXT:      tile.async_copy %{{.*}} into %[[VB]]
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NOT:       tile.async_wait
// CHECK:           scf.yield
// CHECK-NEXT:    } {tile.mask_split, tile.num_stages = 1 : i64}
// CHECK-NOT:     tile.async_wait
// CHECK:         return
// PIPE-LABEL: func.func @masked_per_row(
// PIPE:         scf.for
// PIPE:           arith.cmpi sle
// PIPE-NEXT:      tile.barrier
// PIPE-NEXT:      tile.async_copy
// PIPE-NEXT:      tile.async_copy
// PIPE-NEXT:      tile.async_commit
// PIPE-NEXT:      tile.async_wait 0
// PIPE-NEXT:      tile.barrier
// PIPE-NOT:       tile.async_copy
// PIPE:         } {tile.mask_split, tile.num_stages = 1 : i64}
func.func @masked_per_row(%K: !K, %V: !K, %q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32,
                          %limit: tensor<128x1xi32, #mma>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32, #mma>
  %iota = tile.iota : tensor<64xi32, #cols>
  %limits = tile.broadcast %limit : tensor<128x1xi32, #mma> -> tensor<128x64xi32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    %start = tile.splat %i : i32 -> tensor<64xi32, #cols>
    %col = arith.addi %start, %iota : tensor<64xi32, #cols>
    %col2 = tile.expand_dims %col axis = 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #mma>
    %cols = tile.broadcast %col2 : tensor<1x64xi32, #mma> -> tensor<128x64xi32, #mma>
    %visible = arith.cmpi sle, %cols, %limits : tensor<128x64xi32, #mma>
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %m = arith.select %visible, %s, %ninf : tensor<128x64xi1, #mma>, tensor<128x64xf32, #mma>
    %p = arith.truncf %m : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {tile.mask_split, tile.num_stages = 2 : i64, tile.split_copies}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#cols = #tile.slice<0, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// Still split: masked blocks whose limit is one scalar for every row (the
// key tail, `col < Nk`), and per-row limits in a kernel that is not
// register-bound.
// CHECK-LABEL: func.func @masked_per_column(
// CHECK:         scf.for
// CHECK-NEXT:      tile.splat
// CHECK:           tile.async_wait 1
// CHECK:           tile.async_wait 0
// CHECK:         } {tile.mask_split, tile.num_stages = 2 : i64, tile.split_copies}
// CHECK-LABEL: func.func @per_row_not_register_bound(
// CHECK:         scf.for
// CHECK:           tile.async_wait 1
// CHECK:           tile.async_wait 0
// CHECK:         } {tile.mask_split, tile.num_stages = 2 : i64, tile.split_copies}
func.func @masked_per_column(%K: !K, %V: !K, %q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32,
                             %n: i32)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32, #mma>
  %iota = tile.iota : tensor<64xi32, #cols>
  %limits = tile.splat %n : i32 -> tensor<128x64xi32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    %start = tile.splat %i : i32 -> tensor<64xi32, #cols>
    %col = arith.addi %start, %iota : tensor<64xi32, #cols>
    %col2 = tile.expand_dims %col axis = 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #mma>
    %cols = tile.broadcast %col2 : tensor<1x64xi32, #mma> -> tensor<128x64xi32, #mma>
    %visible = arith.cmpi slt, %cols, %limits : tensor<128x64xi32, #mma>
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %m = arith.select %visible, %s, %ninf : tensor<128x64xi1, #mma>, tensor<128x64xf32, #mma>
    %p = arith.truncf %m : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {tile.mask_split, tile.num_stages = 2 : i64, tile.split_copies}
  return
}

func.func @per_row_not_register_bound(%K: !K, %V: !K, %q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32,
                                      %limit: tensor<128x1xi32, #mma>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32, #mma>
  %iota = tile.iota : tensor<64xi32, #cols>
  %limits = tile.broadcast %limit : tensor<128x1xi32, #mma> -> tensor<128x64xi32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    %start = tile.splat %i : i32 -> tensor<64xi32, #cols>
    %col = arith.addi %start, %iota : tensor<64xi32, #cols>
    %col2 = tile.expand_dims %col axis = 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #mma>
    %cols = tile.broadcast %col2 : tensor<1x64xi32, #mma> -> tensor<128x64xi32, #mma>
    %visible = arith.cmpi sle, %cols, %limits : tensor<128x64xi32, #mma>
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %m = arith.select %visible, %s, %ninf : tensor<128x64xi1, #mma>, tensor<128x64xf32, #mma>
    %p = arith.truncf %m : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {tile.mask_split, tile.num_stages = 2 : i64, tile.split_copies}
  return
}

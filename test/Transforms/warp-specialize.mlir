// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies,tile-tma-copies{cp-async-producer=true},tile-allocate-shared,tile-warp-specialize))' | FileCheck %s
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies,tile-tma-copies,tile-allocate-shared,tile-warp-specialize{cp-async-rings=false}))' | FileCheck %s --check-prefix=NOCP

// The input is tile-stage-shared's output; tile-pipeline-copies makes the
// two-stage ring, tile-tma-copies moves it to the TMA unit and
// tile-allocate-shared places the buffers, as in flashc's pipeline.

// Two consumer warpgroups (8 warps): the producer is threads [256, 384),
// setmaxnreg 24 / 240. The producer's first warp (tid < 288) runs the
// prologue's copies and a loop over the same range with only the body's
// copies (marked tile.tma_producer), with what their operands need; the
// consumers keep the rest: no copies, no barrier after the full wait, which
// releases the slot (tile.tma_release). The buffers stay above the split.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME:      tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 8 : i32, producer_regs = 24 : i64}
// CHECK:         %[[KB:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK:         %[[VB:.*]] = tile.local_alloc {offset = 32768 : i64}
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[PRODUCER:.*]] = arith.cmpi uge, %[[TID]], %c256_i32
// CHECK:         scf.if %[[PRODUCER]] {
// CHECK-NEXT:      nvvm.setmaxregister decrease 24
// CHECK:           %[[WARP0:.*]] = arith.cmpi ult, %[[TID]], %c288_i32
// CHECK:           scf.if %[[WARP0]] {
// CHECK-NOT:         nvvm.barrier
// CHECK:             tile.async_copy %arg0{{.*}} into %[[KB]]{{.*}} {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"}
// CHECK-NEXT:        tile.async_copy %arg1{{.*}} into %[[VB]]{{.*}} {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"}
// CHECK:             scf.for %[[I:.*]] = %arg3 to %arg4 step
// CHECK-NOT:           tile.local_load
// CHECK:               %[[NEXT:.*]] = arith.addi %[[I]],
// CHECK:               tile.async_copy %arg0[%arg2, %[[NEXT]], {{.*}} into %[[KB]]{{.*}}tile.tma_producer
// CHECK-NEXT:          tile.async_copy %arg1[%arg2, %[[NEXT]], {{.*}} into %[[VB]]{{.*}}tile.tma_producer
// CHECK-NEXT:        }{{$}}
// CHECK-NEXT:      }{{$}}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      nvvm.setmaxregister increase 240
// CHECK-NOT:       tile.async_copy
// CHECK:           scf.for
// CHECK:             tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
// CHECK-NEXT:        tile.local_load %[[KB]]
// CHECK-NEXT:        tile.local_load %[[VB]]
// CHECK-NEXT:        scf.yield
// CHECK:           tile.async_wait 0{{$}}
// CHECK-NEXT:    } {tile.warp_roles}
// CHECK-NEXT:    return

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @ring(%K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// Q's buffer shares bytes with K's ring: the consumers load Q, pass the
// barrier tile-allocate-shared put before the ring's first copy, and hand
// the bytes over (bar.arrive 2 over the 256 consumers and the producer's
// warp); the producer syncs on it before its first copy.
// CHECK-LABEL: func.func @handover(
// CHECK:         scf.if
// CHECK:           scf.if
// CHECK-NOT:         tile.async_copy
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %[[N:.*]]{{$}}
// CHECK-NEXT:        tile.async_copy %arg1{{.*}}tile.tma_producer
// CHECK:         } else {
// CHECK:           tile.async_copy %arg0{{.*}} : !tile.global
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.local_load
// CHECK:           tile.barrier
// CHECK:           %[[N2:.*]] = arith.constant 288 : i32
// CHECK:           nvvm.barrier.arrive id = %{{.*}} number_of_threads = %[[N2]]
// CHECK:           scf.for
// CHECK-NOT:         tile.barrier
// CHECK:           } {flash.keep}

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @handover(%Q: !K, %K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %qb = tile.local_alloc : !buf
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  tile.async_copy %Q[%b, %c0, %c0] window [1, 2] into %qb[%c0] : !K -> !buf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qb[%c0] : !buf -> tensor<64x128xf16, #dot_a>
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// Left alone: one warpgroup (4 warps, 255 registers per thread already),
// five (no register split for them).
// CHECK-LABEL: func.func @one_warpgroup(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     nvvm.
// CHECK:         scf.for
// CHECK:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy
// CHECK-LABEL: func.func @five_warpgroups(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     nvvm.
// CHECK:         scf.for
// CHECK:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @one_warpgroup(%K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
func.func @five_warpgroups(%K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 20 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}
// -----

// Left alone: no TMA ring (sm_80 .. sm_90, cp.async).
// CHECK-LABEL: func.func @no_tma(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     nvvm.
// CHECK:         tile.async_commit

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module {
func.func @no_tma(%K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// A packed batch: the copies' row offset and the loop's bounds come from
// scalar reads of %cu, which nothing in the kernel writes. The producer
// reads it again (its own tile.load_scalar) for the offsets and the bounds.
// CHECK-LABEL: func.func @packed_rows(
// CHECK-SAME:      tile.warp_specialize
// CHECK:         scf.if
// CHECK:           scf.if
// CHECK:             %[[START:.*]] = tile.load_scalar %arg2[%arg3]
// CHECK:             %[[END:.*]] = tile.load_scalar %arg2[
// CHECK:             tile.async_copy %arg0[%[[START]], {{.*}}tile.tma_producer
// CHECK:             scf.for %{{.*}} = %[[START]] to %[[END]] step
// CHECK:               tile.async_copy %arg0{{.*}}tile.tma_producer
// CHECK:         } else {
// CHECK:           tile.load_scalar %arg2[%arg3]
// CHECK-NOT:       tile.async_copy
// CHECK:           tile.store
// CHECK:         } {tile.warp_roles}

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[T, H, 128], f16>
!cu = !tile.global<[B1], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @packed_rows(%K: !K, %V: !K, %cu: !cu, %b: i32, %h: i32, %O: !tile.global<[T, 64], f32>)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %start = tile.load_scalar %cu[%b] pad 0 : i32 : !cu -> i32
  %b1 = arith.addi %b, %c1 : i32
  %end = tile.load_scalar %cu[%b1] pad 0 : i32 : !cu -> i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %start to %end step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %h, %c0] window [0, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %h, %c0] window [0, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  tile.store %r, %O[%start, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[T, 64], f32>
  return
}
}

// -----

// Left alone: the row offset is read from %cu, which the kernel also
// writes; the producer's read could see either value.
// CHECK-LABEL: func.func @written_offsets(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     nvvm.
// CHECK:         scf.for
// CHECK:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
// CHECK-NEXT:      tile.barrier

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[T, H, 128], f16>
!cu = !tile.global<[B1], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @written_offsets(%K: !K, %V: !K, %cu: !cu, %b: i32, %h: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %start = tile.load_scalar %cu[%b] pad 0 : i32 : !cu -> i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %start to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %h, %c0] window [0, 2] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %h, %c0] window [0, 2] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  %ones = arith.constant dense<7> : tensor<4xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>>
  tile.store %ones, %cu[%c0] window [0] : tensor<4xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>> -> !cu
  return
}
}

// -----

// A paged ring (cp.async: gathered rows, zero past the sequence, which the
// TMA unit cannot read) on one consumer warpgroup: a producer warpgroup,
// threads [128, 256), setmaxnreg 240 / 256, all of whose threads run the
// prologue's and the loop's copies in the consumers' layouts, reading the
// block table again (a tile load of a tensor nothing writes, under the
// kernel's device_assert). Copies and commits carry the ring's first full
// barrier (tile.cp_async_barrier), whose count is the producer's 128
// threads; the producer's threads wait for their last copies before they
// exit. The consumers keep the full wait, now a barrier wait that
// releases the slot and is marked as landed by cp.async.
// With cp-async-rings=false (persistent kernels) the paged ring stays.
// NOCP-LABEL: func.func @paged(
// NOCP-NOT:     tile.warp_specialize
// NOCP-NOT:     tile.cp_async_barrier
// NOCP-NOT:     nvvm.
// NOCP:         tile.async_commit
// NOCP:         return
// CHECK-LABEL: func.func @paged(
// CHECK-SAME:      tile.tma_barriers = array<i64: 128, 128>
// CHECK-SAME:      tile.warp_specialize = {consumer_regs = 256 : i64, consumer_warps = 4 : i32, producer_regs = 240 : i64}
// CHECK:         %[[KB:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[PRODUCER:.*]] = arith.cmpi uge, %[[TID]], %c128_i32
// CHECK:         scf.if %[[PRODUCER]] {
// CHECK-NEXT:      nvvm.setmaxregister decrease 240
// CHECK-NOT:       scf.if
// CHECK:           %[[PAGES:.*]] = tile.load %arg2
// CHECK:           tile.async_copy %arg0{{.*}} gather [0, 1] (%[[PAGES]], {{.*}} into %[[KB]]{{.*}} {tile.cp_async_barrier = 0 : i64}
// CHECK-NEXT:      tile.async_commit {tile.cp_async_barrier = 0 : i64}
// CHECK:           scf.for
// CHECK:             tile.load %arg2
// CHECK:             tile.async_copy %arg0{{.*}} {tile.cp_async_barrier = 0 : i64}
// CHECK-NEXT:        tile.async_commit {tile.cp_async_barrier = 0 : i64}
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.async_wait 0{{$}}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      nvvm.setmaxregister increase 256
// CHECK:           tile.device_assert
// CHECK-NOT:       tile.async_copy
// CHECK-NOT:       tile.load %arg2
// CHECK:           scf.for
// CHECK:             tile.async_wait 0 {tile.cp_async_barrier = 0 : i64, tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
// CHECK-NEXT:        tile.local_load %[[KB]]
// CHECK-NEXT:        scf.yield
// CHECK:         } {tile.warp_roles}

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#blocked = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
!KC = !tile.global<[Pages, 16, 128], f16>
!table = !tile.global<[B, MaxPages], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @paged(%K: !KC, %seqlens: !tile.global<[B], i32>, %table: !table, %b: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %len = tile.load_scalar %seqlens[%b] pad 0 : i32 : !tile.global<[B], i32> -> i32
  %ok = arith.cmpi sle, %len, %ub : i32
  tile.device_assert %ok, "past the table" : i1
  %c64 = arith.constant 64 : i32
  %c16 = arith.constant dense<16> : tensor<64xi32, #rows>
  %iota = tile.iota : tensor<64xi32, #rows>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %c0 to %len step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    %n0 = tile.splat %i : i32 -> tensor<64xi32, #rows>
    %n = arith.addi %n0, %iota : tensor<64xi32, #rows>
    %p = arith.divsi %n, %c16 : tensor<64xi32, #rows>
    %pages = tile.load %table[%b, %c0] window [] gather [1] (%p : tensor<64xi32, #rows>) pad 0 : i32 : !table -> tensor<64xi32, #rows>
    %slots = arith.remsi %n, %c16 : tensor<64xi32, #rows>
    tile.barrier
    tile.async_copy %K[%c0, %c0, %c0] window [2] gather [0, 1] (%pages, %slots : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// A paged cache's whole blocks within one page (windows, which
// tile-tma-copies' cp-async-producer left on cp.async) beside its gathered
// last block: the producer warpgroup issues both rings, reading each
// block's page again (a scalar of the table); barriers 0-1 are the windows'
// ring's, 2-3 the gathered one's, 128 arrivals each. With cp-async-rings=false
// the windows are a TMA ring on one warpgroup, which gets no producer.
// NOCP-LABEL: func.func @paged_whole_pages(
// NOCP-NOT:     tile.warp_specialize
// NOCP:         tile.async_copy {{.*}} window [1, 2] {{.*}}tile.tma_swizzle
// NOCP-NOT:     nvvm.
// NOCP:         return
// CHECK-LABEL: func.func @paged_whole_pages(
// CHECK-SAME:      tile.tma_barriers = array<i64: 128, 128, 128, 128>
// CHECK-SAME:      tile.warp_specialize = {consumer_regs = 256 : i64, consumer_warps = 4 : i32, producer_regs = 240 : i64}
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      nvvm.setmaxregister decrease 240
// CHECK:           tile.async_copy %arg0{{.*}} window [1, 2] {{.*}}{tile.cp_async_barrier = 0 : i64}
// CHECK:           scf.for
// CHECK:             tile.load_scalar %arg1
// CHECK:             tile.async_copy %arg0{{.*}} window [1, 2] {{.*}}{tile.cp_async_barrier = 0 : i64}
// CHECK-NEXT:        tile.async_commit {tile.cp_async_barrier = 0 : i64}
// CHECK:           tile.async_copy %arg0{{.*}} gather [1] {{.*}}{tile.cp_async_barrier = 2 : i64}
// CHECK:           scf.for
// CHECK:             tile.load_scalar %arg1
// CHECK:             tile.async_copy %arg0{{.*}} gather [1] {{.*}}{tile.cp_async_barrier = 2 : i64}
// CHECK-NEXT:        tile.async_commit {tile.cp_async_barrier = 2 : i64}
// CHECK:           tile.async_wait 0{{$}}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      nvvm.setmaxregister increase 256
// CHECK-NOT:       tile.async_copy
// CHECK:             tile.async_wait 0 {tile.cp_async_barrier = 0 : i64, tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
// CHECK-NOT:       tile.async_copy
// CHECK:             tile.async_wait 0 {tile.cp_async_barrier = 2 : i64, tile.tma_barrier = 2 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
// CHECK-NOT:       tile.async_copy
// CHECK:         } {tile.warp_roles}

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
!KC = !tile.global<[Pages, 64, 128], f16>
!table = !tile.global<[B, MaxPages], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @paged_whole_pages(%K: !KC, %table: !table, %b: i32, %full: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc : !buf
  %mb = tile.local_alloc : !buf
  %iota = tile.iota : tensor<64xi32, #rows>
  %none = arith.constant dense<-1> : tensor<64xi32, #rows>
  %end = tile.splat %ub : i32 -> tensor<64xi32, #rows>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %c0 to %full step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    tile.barrier
    tile.async_copy %K[%page, %c0, %c0] window [1, 2] into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  %s = scf.for %i = %full to %ub step %c64 iter_args(%acc = %r) -> (tensor<64x64xf32, #mma>) : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    %n0 = tile.splat %i : i32 -> tensor<64xi32, #rows>
    %n = arith.addi %n0, %iota : tensor<64xi32, #rows>
    %in = arith.cmpi slt, %n, %end : tensor<64xi32, #rows>
    %slots = arith.select %in, %iota, %none : tensor<64xi1, #rows>, tensor<64xi32, #rows>
    tile.barrier
    tile.async_copy %K[%page, %c0, %c0] window [2] gather [1] (%slots : tensor<64xi32, #rows>) into %mb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %mb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// Left alone, its marks dropped: a paged ring whose block table the kernel
// also writes (the producer's read could see either value), and a paged ring
// on eight warps (the producer warpgroup runs the consumers' layouts, which
// span 256 threads there).
// CHECK-LABEL: func.func @paged_written_table(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     tile.cp_async_barrier
// CHECK-NOT:     tile.tma_barrier
// CHECK-NOT:     nvvm.
// CHECK:         tile.async_commit
// CHECK-LABEL: func.func @paged_eight_warps(
// CHECK-NOT:     tile.warp_specialize
// CHECK-NOT:     tile.cp_async_barrier
// CHECK-NOT:     nvvm.
// CHECK:         tile.async_commit

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#rows4 = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
#rows8 = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]>>
!KC = !tile.global<[Pages, 16, 128], f16>
!table = !tile.global<[B, MaxPages], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @paged_written_table(%K: !KC, %table: !table, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %c16 = arith.constant dense<16> : tensor<64xi32, #rows4>
  %iota = tile.iota : tensor<64xi32, #rows4>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    %n0 = tile.splat %i : i32 -> tensor<64xi32, #rows4>
    %n = arith.addi %n0, %iota : tensor<64xi32, #rows4>
    %p = arith.divsi %n, %c16 : tensor<64xi32, #rows4>
    %pages = tile.load %table[%b, %c0] window [] gather [1] (%p : tensor<64xi32, #rows4>) pad 0 : i32 : !table -> tensor<64xi32, #rows4>
    %slots = arith.remsi %n, %c16 : tensor<64xi32, #rows4>
    tile.barrier
    tile.async_copy %K[%c0, %c0, %c0] window [2] gather [0, 1] (%pages, %slots : tensor<64xi32, #rows4>, tensor<64xi32, #rows4>) into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  tile.store %iota, %table[%b, %c0] window [1] : tensor<64xi32, #rows4> -> !table
  return
}
func.func @paged_eight_warps(%K: !KC, %pages: tensor<64xi32, #rows8>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%c0, %c0, %c0] window [2] gather [0, 1] (%pages, %pages : tensor<64xi32, #rows8>, tensor<64xi32, #rows8>) into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies,tile-tma-copies))' | FileCheck %s
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies,tile-tma-copies{shared-rings}))' | FileCheck %s --check-prefix=SHARED
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies,tile-tma-copies{cp-async-producer=true}))' | FileCheck %s --check-prefix=PRODUCER

// The input is tile-stage-shared's output; tile-pipeline-copies makes the
// two-stage ring that tile-tma-copies moves to the TMA unit.

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

// sm_90a: K and V (rows of 256 bytes, two 128-byte column blocks) go through
// the TMA unit: the copies of the prologue and the body take barrier 0 (slot
// s: barrier s) and the 128B swizzle, their commits are gone, the wait at
// the top of the body becomes a parity wait on those barriers, and each
// barrier expects two arrivals (K and V). The wait after the loop stays.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME:      tile.tma_barriers = array<i64: 2, 2>
// CHECK-NOT:     tile.async_commit
// CHECK:         tile.async_copy {{.*}} if %{{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-NEXT:    tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
// CHECK-NOT:     tile.async_commit
// CHECK:         scf.for
// CHECK:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
// CHECK-NEXT:      tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
// CHECK-NEXT:      tile.local_load
// CHECK:         } {flash.keep}
// CHECK-NEXT:    tile.async_wait 0{{$}}
// CHECK-NEXT:    return
module attributes {tile.wgmma} {
func.func @ring(%K: !K, %V: !K, %b: i32, %lb: i32, %ub: i32)
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

// The same loop without tile.wgmma (sm_80 .. sm_90): cp.async stays.
// CHECK-LABEL: func.func @not_sm90a(
// CHECK-NOT:     tile.tma
// CHECK:         tile.async_commit
// CHECK:         scf.for
// CHECK:           tile.async_wait 0{{$}}
// CHECK:           tile.async_commit
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
func.func @not_sm90a(%K: !K, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>>>
  } {flash.keep}
  return
}

// -----

// Rejected, cp.async kept: 4 rows of 128 bytes are half the 128B swizzle's
// 1024-byte period, so a box would not start on it; a loop inside another
// loop (its barriers' phases would carry over between runs); one stage.
// CHECK-LABEL: func.func @short_box(
// CHECK-NOT:     tile.tma
// CHECK:         tile.async_commit
// CHECK-LABEL: func.func @nested(
// CHECK-NOT:     tile.tma
// CHECK:         tile.async_commit
// CHECK-LABEL: func.func @one_stage(
// CHECK-NOT:     tile.tma
// CHECK:         tile.async_commit
// CHECK-NOT:     tile.tma
!K = !tile.global<[N, 64], f16>
!short = !tile.shared<[1, 4, 64], f16, swizzle = [1, 8]>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
#b = #tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>>
module attributes {tile.wgmma} {
func.func @short_box(%K: !K, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !short
  %c4 = arith.constant 4 : i32
  scf.for %i = %lb to %ub step %c4 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !short
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !short -> tensor<4x64xf16, #b>
  } {flash.keep}
  return
}
func.func @nested(%K: !K, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %j = %c0 to %c2 step %c1 : i32 {
    scf.for %i = %lb to %ub step %c64 : i32 {
      tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
      tile.async_commit
      tile.async_wait 0
      tile.barrier
      %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #b>
    } {flash.keep}
  } {flash.keep}
  return
}
func.func @one_stage(%K: !K, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #b>
  } {flash.keep, tile.num_stages = 1 : i64}
  return
}
}

// -----

// The slot's swizzle decides the box's: 64-byte rows swizzled [2, 4] are
// TMA's 64B pattern, 32-byte rows swizzled [4, 2] its 32B pattern, unswizzled
// rows its plain layout; 128-byte rows swizzled [2, 4] are none of TMA's
// patterns and keep cp.async.
// CHECK-LABEL: func.func @swizzles(
// CHECK-SAME:      tile.tma_barriers = array<i64: 1, 1, 1, 1, 1, 1>
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "64B"}
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}} {tile.tma_barrier = 2 : i64, tile.tma_swizzle = "32B"}
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}} {tile.tma_barrier = 4 : i64, tile.tma_swizzle = "none"}
// CHECK:         scf.for
// CHECK-NOT:       tile.tma
// CHECK:           tile.async_commit
!K32 = !tile.global<[N, 32], f16>
!K16 = !tile.global<[N, 16], f16>
!K64 = !tile.global<[N, 64], f16>
!b64 = !tile.shared<[1, 64, 32], f16, swizzle = [2, 4]>
!b32 = !tile.shared<[1, 64, 16], f16, swizzle = [4, 2]>
!bnone = !tile.shared<[1, 64, 16], f16>
!bbad = !tile.shared<[1, 64, 64], f16, swizzle = [2, 4]>
#b = #tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>>
module attributes {tile.wgmma} {
func.func @swizzles(%K: !K32, %L: !K16, %M: !K16, %P: !K64, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc : !b64
  %lbuf = tile.local_alloc : !b32
  %mbuf = tile.local_alloc : !bnone
  %pbuf = tile.local_alloc : !bbad
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K32 -> !b64
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !b64 -> tensor<64x32xf16, #b>
  } {flash.keep}
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %L[%i, %c0] window [0, 1] into %lbuf[%c0] : !K16 -> !b32
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %l = tile.local_load %lbuf[%c0] : !b32 -> tensor<64x16xf16, #b>
  } {flash.keep}
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %M[%i, %c0] window [0, 1] into %mbuf[%c0] : !K16 -> !bnone
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %m = tile.local_load %mbuf[%c0] : !bnone -> tensor<64x16xf16, #b>
  } {flash.keep}
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %P[%i, %c0] window [0, 1] into %pbuf[%c0] : !K64 -> !bbad
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %p = tile.local_load %pbuf[%c0] : !bbad -> tensor<64x64xf16, #b>
  } {flash.keep}
  return
}
}

// -----

// Column-blocked slots take the pattern of one block, each block one box:
// 96 f16 rows in 64-byte blocks swizzled [2, 4] are three 64B boxes, 80 f16
// rows in 32-byte blocks swizzled [4, 2] five 32B boxes.
// CHECK-LABEL: func.func @blocked_swizzles(
// CHECK:         tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "64B"} : !tile.global<[N, 96], f16> -> !tile.shared<[2, 64, 96], f16, swizzle = [2, 4], block_cols = 32>
// CHECK:         tile.async_copy {{.*}} {tile.tma_barrier = 2 : i64, tile.tma_swizzle = "32B"} : !tile.global<[N, 80], f16> -> !tile.shared<[2, 64, 80], f16, swizzle = [4, 2], block_cols = 16>
!K96 = !tile.global<[N, 96], f16>
!K80 = !tile.global<[N, 80], f16>
!b96 = !tile.shared<[1, 64, 96], f16, swizzle = [2, 4], block_cols = 32>
!b80 = !tile.shared<[1, 64, 80], f16, swizzle = [4, 2], block_cols = 16>
#b = #tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>>
module attributes {tile.wgmma} {
func.func @blocked_swizzles(%K: !K96, %L: !K80, %lb: i32, %ub: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc : !b96
  %lbuf = tile.local_alloc : !b80
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K96 -> !b96
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !b96 -> tensor<64x96xf16, #b>
  } {flash.keep}
  scf.for %i = %lb to %ub step %c64 : i32 {
    tile.async_copy %L[%i, %c0] window [0, 1] into %lbuf[%c0] : !K80 -> !b80
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %l = tile.local_load %lbuf[%c0] : !b80 -> tensor<64x80xf16, #b>
  } {flash.keep}
  return
}
}

// -----

// Two key loops over buffers of one shape (one source loop split in two):
// two rings, each with its buffers and barriers; with shared-rings (a
// persistent kernel) the second loop fills the first's buffers on the
// first's barriers, one ring through both loops.
// CHECK-LABEL: func.func @split_loops(
// CHECK-SAME:      tile.tma_barriers = array<i64: 2, 2, 2, 2>
// CHECK-COUNT-5: tile.local_alloc
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}}tile.tma_barrier = 0
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}}tile.tma_barrier = 2
// SHARED-LABEL: func.func @split_loops(
// SHARED-SAME:      tile.tma_barriers = array<i64: 2, 2>
// SHARED-NEXT:    arith.constant
// SHARED-NEXT:    tile.local_alloc
// SHARED-NEXT:    %[[K:.*]] = tile.local_alloc
// SHARED-NEXT:    %[[V:.*]] = tile.local_alloc
// SHARED-NOT:     tile.local_alloc
// SHARED:         scf.for
// SHARED:           tile.async_copy %arg1{{.*}} into %[[K]]{{.*}}tile.tma_barrier = 0
// SHARED:         tile.async_copy %arg1{{.*}} into %[[K]]{{.*}}tile.tma_barrier = 0
// SHARED-NEXT:    tile.async_copy %arg2{{.*}} into %[[V]]{{.*}}tile.tma_barrier = 0
// SHARED:         scf.for
// SHARED:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
// SHARED:           tile.local_load %[[K]]
// SHARED-NEXT:      tile.local_load %[[V]]

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

module attributes {tile.wgmma} {
func.func @split_loops(%Q: !K, %K: !K, %V: !K, %b: i32, %lb: i32, %mid: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %qb = tile.local_alloc : !buf
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %kb2 = tile.local_alloc : !buf
  %vb2 = tile.local_alloc : !buf
  %pid = tile.program_id 0 : i32
  tile.async_copy %Q[%b, %pid, %c0] window [1, 2] into %qb[%c0] : !K -> !buf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qb[%c0] : !buf -> tensor<64x128xf16, #dot_a>
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %r = scf.for %i = %lb to %mid step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
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
  %r2 = scf.for %i = %mid to %ub step %c64 iter_args(%acc = %r) -> (tensor<64x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%b, %i, %c0] window [1, 2] into %kb2[%c0] : !K -> !buf
    tile.async_copy %V[%b, %i, %c0] window [1, 2] into %vb2[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb2[%c0] : !buf -> tensor<64x128xf16, #dot_b_t>
    %v = tile.local_load %vb2[%c0] : !buf -> tensor<64x128xf16, #dot_b>
    scf.yield %acc : tensor<64x64xf32, #mma>
  } {flash.keep}
  return
}
}

// -----

// A paged cache's key blocks: a ring of whole blocks within one page (a
// window at the page the table names for the block) and a ring gathering
// the slots of the sequence's last block (index -1 past its end: zeros,
// which the TMA unit cannot leave). The whole blocks go through the TMA
// unit; with cp-async-producer, on one warpgroup, both rings keep cp.async
// for tile-warp-specialize's cp.async producer warpgroup to issue, and on
// two warpgroups (no such producer) the whole blocks still take the TMA unit.
// CHECK-LABEL: func.func @whole_pages(
// CHECK-SAME:      tile.tma_barriers = array<i64: 1, 1>
// CHECK:         scf.for
// CHECK:           tile.async_copy {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
// CHECK:         scf.for
// CHECK-NOT:       tile.tma
// CHECK:           tile.async_commit
// CHECK-LABEL: func.func @whole_pages_two_warpgroups(
// CHECK-SAME:      tile.tma_barriers = array<i64: 1, 1>
// PRODUCER-LABEL: func.func @whole_pages(
// PRODUCER-NOT:     tile.tma
// PRODUCER:         scf.for
// PRODUCER:           tile.async_copy %arg0[{{.*}}] window [1, 2] into
// PRODUCER-NEXT:      tile.async_commit
// PRODUCER:         scf.for
// PRODUCER:           tile.async_copy %arg0[{{.*}}] window [2] gather [1]
// PRODUCER-NEXT:      tile.async_commit
// PRODUCER-NOT:     tile.tma
// PRODUCER-LABEL: func.func @whole_pages_two_warpgroups(
// PRODUCER-SAME:      tile.tma_barriers = array<i64: 1, 1>
// PRODUCER:           tile.async_copy {{.*}} window [1, 2] {{.*}} {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
#rows4 = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
#rows8 = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]>>
#b = #tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>, transposed = true>
!KC = !tile.global<[Pages, 64, 128], f16>
!table = !tile.global<[B, MaxPages], i32>
!buf = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
module attributes {tile.wgmma} {
func.func @whole_pages(%K: !KC, %table: !table, %b: i32, %full: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc : !buf
  %mb = tile.local_alloc : !buf
  %iota = tile.iota : tensor<64xi32, #rows4>
  %none = arith.constant dense<-1> : tensor<64xi32, #rows4>
  %end = tile.splat %ub : i32 -> tensor<64xi32, #rows4>
  scf.for %i = %c0 to %full step %c64 : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    tile.async_copy %K[%page, %c0, %c0] window [1, 2] into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #b>
  } {flash.keep}
  scf.for %i = %full to %ub step %c64 : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    %n0 = tile.splat %i : i32 -> tensor<64xi32, #rows4>
    %n = arith.addi %n0, %iota : tensor<64xi32, #rows4>
    %in = arith.cmpi slt, %n, %end : tensor<64xi32, #rows4>
    %slots = arith.select %in, %iota, %none : tensor<64xi1, #rows4>, tensor<64xi32, #rows4>
    tile.async_copy %K[%page, %c0, %c0] window [2] gather [1] (%slots : tensor<64xi32, #rows4>) into %mb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %mb[%c0] : !buf -> tensor<64x128xf16, #b>
  } {flash.keep}
  return
}
func.func @whole_pages_two_warpgroups(%K: !KC, %table: !table, %b: i32, %full: i32, %ub: i32)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc : !buf
  %mb = tile.local_alloc : !buf
  %iota = tile.iota : tensor<64xi32, #rows8>
  %none = arith.constant dense<-1> : tensor<64xi32, #rows8>
  %end = tile.splat %ub : i32 -> tensor<64xi32, #rows8>
  scf.for %i = %c0 to %full step %c64 : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    tile.async_copy %K[%page, %c0, %c0] window [1, 2] into %kb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x128xf16, #b>
  } {flash.keep}
  scf.for %i = %full to %ub step %c64 : i32 {
    %j = arith.divui %i, %c64 : i32
    %page = tile.load_scalar %table[%b, %j] pad 0 : i32 : !table -> i32
    %n0 = tile.splat %i : i32 -> tensor<64xi32, #rows8>
    %n = arith.addi %n0, %iota : tensor<64xi32, #rows8>
    %in = arith.cmpi slt, %n, %end : tensor<64xi32, #rows8>
    %slots = arith.select %in, %iota, %none : tensor<64xi1, #rows8>, tensor<64xi32, #rows8>
    tile.async_copy %K[%page, %c0, %c0] window [2] gather [1] (%slots : tensor<64xi32, #rows8>) into %mb[%c0] : !KC -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %mb[%c0] : !buf -> tensor<64x128xf16, #b>
  } {flash.keep}
  return
}
}

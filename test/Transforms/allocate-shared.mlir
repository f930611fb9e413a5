// RUN: flash-opt %s --pass-pipeline='builtin.module(func.func(tile-allocate-shared))' | FileCheck %s
// Idempotent: a second run recomputes the same offsets and finds the barriers
// the first one inserted.
// RUN: flash-opt %s --pass-pipeline='builtin.module(func.func(tile-allocate-shared))' | flash-opt --pass-pipeline='builtin.module(func.func(tile-allocate-shared))' | FileCheck %s
// persistent-rings: a TMA ring's buffers keep their bytes across the body.
// RUN: flash-opt %s --pass-pipeline='builtin.module(func.func(tile-allocate-shared{persistent-rings}))' | FileCheck %s --check-prefix=RINGS

#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>

// FlashAttention-2's shape after tile-stage-shared and tile-pipeline-copies:
// Q staged once and dead at its local_load; each KV loop's buffers (2 slots,
// 4 KiB each) live from its prologue to the drain after it. K of both loops
// reuses Q's bytes, the second loop's K and V those of the first loop's:
// 8 KiB in all. A barrier precedes each loop's first copy (other warps may
// still read Q, resp. the first loop's last K and V); the V copies right
// after it need none.
// CHECK-LABEL: func.func @fa2_like
// CHECK-SAME: tile.shared_bytes = 8192 : i64
// CHECK: %[[Q:.*]] = tile.local_alloc {offset = 0 : i64} : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
// CHECK: %[[K1:.*]] = tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
// CHECK: %[[V1:.*]] = tile.local_alloc {offset = 4096 : i64}
// CHECK: %[[K2:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[V2:.*]] = tile.local_alloc {offset = 4096 : i64}
// CHECK: tile.async_copy {{.*}} into %[[Q]]
// CHECK-NEXT: tile.async_commit
// CHECK-NEXT: tile.async_wait 0
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.local_load %[[Q]]
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.async_copy {{.*}} into %[[K1]]
// CHECK-NEXT: tile.async_copy {{.*}} into %[[V1]]
// CHECK-NEXT: tile.async_commit
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK-NOT:    tile.barrier
// CHECK:      }
// CHECK-NEXT: tile.async_wait 0
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.async_copy {{.*}} into %[[K2]]
// CHECK-NEXT: tile.async_copy {{.*}} into %[[V2]]
// CHECK-NEXT: tile.async_commit
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK-NOT:    tile.barrier
// CHECK:      }
// CHECK-NEXT: tile.async_wait 0
// CHECK-NEXT: return
func.func @fa2_like(%Q: !tile.global<[M, 64], f16>, %K: !tile.global<[N, 64], f16>,
                    %V: !tile.global<[N, 64], f16>, %m: i32, %full: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  // Offsets already there (stale) are recomputed.
  %qbuf = tile.local_alloc {offset = 512 : i64} : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %k1 = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %v1 = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %k2 = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %v2 = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %Q[%m, %c0] window [0, 1] into %qbuf[%c0]
      : !tile.global<[M, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qbuf[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_a>

  %any1 = arith.cmpi slt, %c0, %full : i32
  tile.async_copy %K[%c0, %c0] window [0, 1] into %k1[%c0] if %any1
      : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %V[%c0, %c0] window [0, 1] into %v1[%c0] if %any1
      : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  scf.for %i = %c0 to %full step %c16 : i32 {
    tile.async_wait 0
    tile.barrier
    %next = arith.addi %i, %c16 : i32
    %more = arith.cmpi slt, %next, %full : i32
    tile.async_copy %K[%next, %c0] window [0, 1] into %k1[%c1] if %more
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
    tile.async_copy %V[%next, %c0] window [0, 1] into %v1[%c1] if %more
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    %k = tile.local_load %k1[%c0] : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b_t>
    %v = tile.local_load %v1[%c0] : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  }
  tile.async_wait 0

  %any2 = arith.cmpi slt, %full, %n : i32
  tile.async_copy %K[%full, %c0] window [0, 1] into %k2[%c0] if %any2
      : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %V[%full, %c0] window [0, 1] into %v2[%c0] if %any2
      : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  scf.for %i = %full to %n step %c16 : i32 {
    tile.async_wait 0
    tile.barrier
    %next = arith.addi %i, %c16 : i32
    %more = arith.cmpi slt, %next, %n : i32
    tile.async_copy %K[%next, %c0] window [0, 1] into %k2[%c1] if %more
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
    tile.async_copy %V[%next, %c0] window [0, 1] into %v2[%c1] if %more
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    %k = tile.local_load %k2[%c0] : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b_t>
    %v = tile.local_load %v2[%c0] : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  }
  tile.async_wait 0
  return
}

// A use inside a loop covers the whole loop: %a is read at the top of the
// body, %b staged further down, yet they are live together (%b's copy in
// iteration i precedes %a's read in iteration i + 1), so no sharing and no
// barrier.
// CHECK-LABEL: func.func @use_in_loop
// CHECK-SAME: tile.shared_bytes = 4096 : i64
// CHECK: %[[A:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[B:.*]] = tile.local_alloc {offset = 2048 : i64}
// CHECK: tile.async_copy {{.*}} into %[[A]]
// CHECK-NEXT: tile.async_commit
// CHECK-NEXT: tile.async_wait 0
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.local_load %[[A]]
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.async_copy {{.*}} into %[[B]]
// CHECK-NEXT:   tile.async_commit
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.local_load %[[B]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @use_in_loop(%G: !tile.global<[N, 64], f16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %a = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %b = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c0, %c0] window [0, 1] into %a[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  scf.for %i = %c0 to %n step %c16 : i32 {
    %x = tile.local_load %a[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_a>
    tile.barrier
    tile.async_copy %G[%i, %c0] window [0, 1] into %b[%c0]
        : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %y = tile.local_load %b[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  }
  return
}

// A barrier that already separates the last read of %a from the first copy
// into %b (which reuses %a's bytes) is enough: the copy into %c between them
// touches other bytes.
// CHECK-LABEL: func.func @existing_barrier
// CHECK-SAME: tile.shared_bytes = 4096 : i64
// CHECK: %[[A:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[B:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[C:.*]] = tile.local_alloc {offset = 2048 : i64}
// CHECK: tile.local_load %[[A]]
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.async_copy {{.*}} into %[[C]]
// CHECK-NEXT: tile.async_copy {{.*}} into %[[B]]
// CHECK-NEXT: tile.async_commit
func.func @existing_barrier(%G: !tile.global<[N, 64], f16>) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %a = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %b = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %c = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c0, %c0] window [0, 1] into %a[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c16, %c0] window [0, 1] into %c[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %x = tile.local_load %a[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_a>
  tile.barrier
  tile.async_copy %G[%c16, %c0] window [0, 1] into %c[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c0, %c0] window [0, 1] into %b[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %y = tile.local_load %b[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  %z = tile.local_load %c[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  return
}

// Without `tile.async_wait 0` after the pipelined loop, its zero-filled
// prefetches may land in %a until the wait after %b's copy: %a stays live
// until then, and %b gets its own bytes.
// CHECK-LABEL: func.func @undrained
// CHECK-SAME: tile.shared_bytes = 6144 : i64
// CHECK: tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 16, 64]
// CHECK: %[[B:.*]] = tile.local_alloc {offset = 4096 : i64} : !tile.shared<[1, 16, 64]
// CHECK: scf.for
// CHECK: }
// CHECK-NEXT: tile.async_copy {{.*}} into %[[B]]
func.func @undrained(%G: !tile.global<[N, 64], f16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %a = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %b = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c0, %c0] window [0, 1] into %a[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  scf.for %i = %c0 to %n step %c16 : i32 {
    tile.async_wait 0
    tile.barrier
    %next = arith.addi %i, %c16 : i32
    %more = arith.cmpi slt, %next, %n : i32
    tile.async_copy %G[%next, %c0] window [0, 1] into %a[%c1] if %more
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    %x = tile.local_load %a[%c0] : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_a>
  }
  tile.async_copy %G[%c0, %c0] window [0, 1] into %b[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %y = tile.local_load %b[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b>
  return
}

// Loops that stage without pipelining (one slot, copy and drain inside the
// body): the second loop's buffer reuses the first one's bytes, and the
// barrier at the top of its body, which every one of its accesses follows,
// already separates it from the first loop's reads. Where an access comes
// before any barrier of the body (third loop), one goes before the loop.
// CHECK-LABEL: func.func @unpipelined
// CHECK-SAME: tile.shared_bytes = 2048 : i64
// CHECK: %[[K1:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[K2:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: %[[K3:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK: scf.for
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.async_copy {{.*}} into %[[K1]]
// CHECK:      }
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.async_copy {{.*}} into %[[K2]]
// CHECK:      }
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.async_copy {{.*}} into %[[K3]]
func.func @unpipelined(%K: !tile.global<[N, 64], f16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %k1 = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %k2 = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  %k3 = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  scf.for %i = %c0 to %n step %c16 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %k1[%c0]
        : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %k1[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b_t>
  }
  scf.for %i = %c0 to %n step %c16 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %k2[%c0]
        : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %k2[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b_t>
  }
  scf.for %i = %c0 to %n step %c16 : i32 {
    tile.async_copy %K[%i, %c0] window [0, 1] into %k3[%c0]
        : !tile.global<[N, 64], f16> -> !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %k3[%c0] : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]> -> tensor<16x64xf16, #dot_b_t>
  }
  return
}

// A buffer nothing uses still gets an offset (live at its own position).
// CHECK-LABEL: func.func @unused
// CHECK-SAME: tile.shared_bytes = 2048 : i64
// CHECK: tile.local_alloc {offset = 0 : i64}
func.func @unused() {
  %a = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  return
}

// No buffers: no tile.shared_bytes (a stale one is dropped).
// CHECK-LABEL: func.func @no_buffers
// CHECK-NOT: tile.shared_bytes
// CHECK: return
func.func @no_buffers() attributes {tile.shared_bytes = 64 : i64} {
  return
}

// A TMA ring's buffer (its copy marked tile.tma_barrier) after Q's, which
// is dead before the ring's first copy: the ring takes Q's bytes. With
// persistent-rings the ring is live across the whole body (a persistent
// kernel's producer fills the next tile's slots while the consumers read
// this tile's Q): it comes first and Q gets bytes of its own.
// CHECK-LABEL: func.func @tma_ring(
// CHECK:         tile.local_alloc {offset = 0 : i64} : !tile.shared<[1, 64, 64]
// CHECK-NEXT:    tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 64]
// RINGS-LABEL: func.func @tma_ring(
// RINGS:         tile.local_alloc {offset = 16384 : i64} : !tile.shared<[1, 64, 64]
// RINGS-NEXT:    tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 64]
func.func @tma_ring(%G: !tile.global<[N, 64], f16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
  %k = tile.local_alloc : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
  tile.async_copy %G[%c0, %c0] window [0, 1] into %q[%c0]
      : !tile.global<[N, 64], f16> -> !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %qt = tile.local_load %q[%c0] : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #dot_a>
  scf.for %i = %c0 to %n step %c1 : i32 {
    tile.async_copy %G[%i, %c0] window [0, 1] into %k[%c0] {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"}
        : !tile.global<[N, 64], f16> -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
    tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
    %kt = tile.local_load %k[%c0] : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #dot_b_t>
  }
  return
}

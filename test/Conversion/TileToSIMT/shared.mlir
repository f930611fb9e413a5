// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s

// Shared-memory staging at the SIMT level: buffers at their offsets in
// @__flashc_smem, cp.async with zero-fill instead of branches, groups and
// barriers, ldmatrix for MMA operands (whole-tile for A, per k-step inside
// the MMA for a fused B; .trans for V), one per-lane address per tile.

#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!qs = !tile.shared<[1, 16, 32], f16, swizzle = [2, 4]>
!kvs = !tile.shared<[2, 16, 32], f16, swizzle = [2, 4]>

// CHECK: llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<5120 x i8>
// CHECK-LABEL: gpu.func @attn
// CHECK-SAME: flashc.shared_bytes = 5120 : i64
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
// CHECK: %[[KBUF:.*]] = llvm.getelementptr %[[SMEM]][%c1024_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[VBUF:.*]] = llvm.getelementptr %[[SMEM]][%c3072_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// Q: 64 chunks of 16 bytes, two per thread; in bounds, so no src-size. The
// second chunk is 8 rows further: the same swizzle phase, a constant offset.
// CHECK-NOT: scf.if
// CHECK: %[[Q0:.*]] = llvm.getelementptr %[[SMEM]][%[[C0OFF:.*]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.cp.async.shared.global %[[Q0]], %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: %[[C1OFF:.*]] = arith.addi %[[C0OFF]], %c512_i32 overflow<nsw> : i32
// CHECK: %[[Q1:.*]] = llvm.getelementptr %[[SMEM]][%[[C1OFF]]]
// CHECK: nvvm.cp.async.shared.global %[[Q1]], %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier
// Q as operand A, whole: two ldmatrix.x4, the second one xor 32 bytes away
// (the next two 16-byte chunks of the same rows), before any mma.
// CHECK-NOT: nvvm.mma.sync
// CHECK: %[[QROW:.*]] = llvm.getelementptr %[[SMEM]][%[[LANEOFF:.*]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.ldmatrix %[[QROW]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[X32:.*]] = arith.xori %[[LANEOFF]], %c32_i32 : i32
// CHECK: llvm.getelementptr %[[SMEM]][%[[X32]]]
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-NOT: nvvm.mma.sync
// K and V into slot 1, guarded by their predicate and the row bound: the
// src-size is 16 or 0, never a branch.
// CHECK: %[[KSLOT:.*]] = llvm.getelementptr %[[KBUF]][%c1024_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[KDST:.*]] = llvm.getelementptr %[[KSLOT]][%[[C0OFF]]]
// CHECK: %[[SIZE:.*]] = arith.select %{{.*}}, %c16_i32, %c0_i32 : i32
// CHECK: nvvm.cp.async.shared.global %[[KDST]], %{{.*}}, 16, cache =  cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: %[[VSLOT:.*]] = llvm.getelementptr %[[VBUF]][%c1024_i32]
// CHECK-COUNT-2: nvvm.cp.async.shared.global {{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier
// S = Q K^T with K fused: each ldmatrix.x4 feeds the two mma of its k-step.
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-COUNT-2: nvvm.mma.sync
// O = P V with V fused, transposed (layout col): two n-atoms per ldmatrix.
// CHECK: llvm.getelementptr %[[VSLOT]][%[[LANEOFF]]]
// CHECK-NEXT: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK: gpu.return
func.func @attn(%Q: !tile.global<[16, 32], f16> {tile.name = "Q"},
                %K: !tile.global<[N, 32], f16> {tile.name = "K"},
                %V: !tile.global<[N, 32], f16> {tile.name = "V"},
                %O: !tile.global<[16, 32], f32> {tile.name = "O"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #mma>
  %acc = arith.constant dense<0.0> : tensor<16x32xf32, #mma>
  %qbuf = tile.local_alloc {offset = 0 : i64} : !qs
  %kbuf = tile.local_alloc {offset = 1024 : i64} : !kvs
  %vbuf = tile.local_alloc {offset = 3072 : i64} : !kvs
  tile.async_copy %Q[%c0, %c0] window [0, 1] into %qbuf[%c0] : !tile.global<[16, 32], f16> -> !qs
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qbuf[%c0] : !qs -> tensor<16x32xf16, #A>
  %n = tile.dim %K[0] : !tile.global<[N, 32], f16>
  %more = arith.cmpi sgt, %n, %c0 : i32
  tile.async_copy %K[%c0, %c0] window [0, 1] into %kbuf[%c1] if %more : !tile.global<[N, 32], f16> -> !kvs
  tile.async_copy %V[%c0, %c0] window [0, 1] into %vbuf[%c1] if %more : !tile.global<[N, 32], f16> -> !kvs
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %k = tile.local_load %kbuf[%c1] : !kvs -> tensor<16x32xf16, #BT>
  %v = tile.local_load %vbuf[%c1] : !kvs -> tensor<16x32xf16, #B>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<16x32xf16, #A>, tensor<16x32xf16, #BT> -> tensor<16x16xf32, #mma>
  %p = arith.truncf %s : tensor<16x16xf32, #mma> to tensor<16x16xf16, #mma>
  %pa = tile.convert_layout %p : tensor<16x16xf16, #mma> -> tensor<16x16xf16, #A>
  %o = tile.mma %pa, %v, %acc : tensor<16x16xf16, #A>, tensor<16x32xf16, #B> -> tensor<16x32xf32, #mma>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<16x32xf32, #mma> -> !tile.global<[16, 32], f32>
  return
}

// -----

// The conversion's own scratch (here a layout exchange) goes after the
// buffers, 16-byte aligned; the global holds both. 32 chunks over 64
// threads: the second warp copies nothing (a zero-fill would write past the
// buffer). A layout ldmatrix cannot serve is read element by element.

#mma = #tile.mma<warps = [2, 1, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]>
!buf = !tile.shared<[1, 8, 32], f16, swizzle = [2, 4]>

// CHECK: llvm.mlir.global internal @__flashc_smem() {{.*}} : !llvm.array<2576 x i8>
// CHECK-LABEL: gpu.func @scratch
// CHECK-SAME: flashc.shared_bytes = 2576 : i64
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
// CHECK: %[[BUF:.*]] = llvm.getelementptr %[[SMEM]][%c16_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[ACTIVE:.*]] = arith.cmpi ult, %[[TID]], %c32_i32 : i32
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.ldmatrix
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> f16
// CHECK: %[[SCRATCH:.*]] = llvm.getelementptr %[[SMEM]][%c528_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: llvm.getelementptr %[[SCRATCH]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
func.func @scratch(%X: !tile.global<[8, 32], f16> {tile.name = "X"},
                   %Y: !tile.global<[32, 16], f32> {tile.name = "Y"},
                   %Z: !tile.global<[8, 32], f16> {tile.name = "Z"})
    attributes {tile.num_warps = 2 : i32} {
  %c0 = arith.constant 0 : i32
  %b = tile.local_alloc {offset = 16 : i64} : !buf
  tile.async_copy %X[%c0, %c0] window [0, 1] into %b[%c0] : !tile.global<[8, 32], f16> -> !buf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %x = tile.local_load %b[%c0] : !buf -> tensor<8x32xf16, #blocked>
  tile.store %x, %Z[%c0, %c0] window [0, 1] : tensor<8x32xf16, #blocked> -> !tile.global<[8, 32], f16>
  %y = tile.load %Y[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #blocked>
  %z = tile.convert_layout %y : tensor<32x16xf32, #blocked> -> tensor<32x16xf32, #mma>
  tile.store %z, %Y[%c0, %c0] window [0, 1] : tensor<32x16xf32, #mma> -> !tile.global<[32, 16], f32>
  return
}

// -----

// A pipelined loop over K's full 16-row blocks prefetches block i + 16 only
// when i + 16 < full, a multiple of 16 no larger than N: then the whole block
// is inside K (and V, whose rows are N too), so the predicate alone picks
// the src-size, one select for every chunk and no row compare. A prefetch
// bounded by N itself may hang over the end: its rows are compared with N.

!kvs = !tile.shared<[2, 16, 32], f16, swizzle = [2, 4]>

// CHECK-LABEL: gpu.func @prefetch
// CHECK-SAME: %[[KN:[a-z0-9]*]]: i32 {tile.name = "K.d0"}
// CHECK: scf.for
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c16_i32 : i32
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %{{.*}} : i32
// CHECK-NOT: arith.cmpi
// CHECK: %[[SIZE:.*]] = arith.select %[[MORE]], %c16_i32, %c0_i32 : i32
// CHECK-COUNT-4: nvvm.cp.async.shared.global {{.*}}, 16, cache =  cg, %[[SIZE]]
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %[[KN]] : i32
// CHECK: nvvm.cp.async.shared.global
func.func @prefetch(%K: !tile.global<[N, 32], f16> {tile.name = "K"},
                    %V: !tile.global<[N, 32], f16> {tile.name = "V"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !kvs
  %vbuf = tile.local_alloc {offset = 2048 : i64} : !kvs
  %n = tile.dim %K[0] : !tile.global<[N, 32], f16>
  %blocks = arith.divsi %n, %c16 : i32
  %full = arith.muli %blocks, %c16 : i32
  scf.for %i = %c0 to %full step %c16 : i32 {
    %next = arith.addi %i, %c16 : i32
    %more = arith.cmpi slt, %next, %full : i32
    tile.async_copy %K[%next, %c0] window [0, 1] into %kbuf[%c1] if %more : !tile.global<[N, 32], f16> -> !kvs
    tile.async_copy %V[%next, %c0] window [0, 1] into %vbuf[%c1] if %more : !tile.global<[N, 32], f16> -> !kvs
    tile.async_commit
  }
  scf.for %i = %c0 to %full step %c16 : i32 {
    %next = arith.addi %i, %c16 : i32
    %more = arith.cmpi slt, %next, %n : i32
    tile.async_copy %K[%next, %c0] window [0, 1] into %kbuf[%c1] if %more : !tile.global<[N, 32], f16> -> !kvs
    tile.async_commit
  }
  tile.async_wait 0
  return
}

// -----

// A gathered copy (a paged KV cache, pages [P, 16, 64]): the chunks are
// spread by the index tiles' parent layout (8 lanes along a row of 8 chunks,
// as for a window), and every chunk's source address is its own row's:
// page * 1024 + slot * 64 elements from the tensor's base, both indices from
// the register that holds that row, and a row with an index out of bounds
// (page -1 past the sequence) is zero-filled (src-size 0) without a read.
// The shared side is the window's: one offset per thread, then xor/add.

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#chunks = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #chunks>
!pbuf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// CHECK-LABEL: gpu.func @paged_copy
// CHECK-SAME: (%[[C:.*]]: !llvm.ptr<1> {tile.name = "C"}, %[[NP:.*]]: i32 {tile.name = "C.d0"},
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// The page of each of the thread's 4 rows (block-table entries 0..3).
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK-NOT:  nvvm.cp.async.shared.global
// CHECK:      %[[PAGE:.*]] = vector.extract %[[PAGES:.*]][0] : i32 from vector<4xi32>
// CHECK:      arith.cmpi sge, %[[PAGE]], %c0_i32 : i32
// CHECK:      arith.cmpi slt, %[[PAGE]], %[[NP]] : i32
// CHECK:      %[[P64:.*]] = arith.extsi %[[PAGE]] : i32 to i64
// CHECK:      %[[POFF:.*]] = arith.muli %[[P64]], %{{.*}} : i64
// CHECK:      %[[SLOT:.*]] = vector.extract %[[SLOTS:.*]][0] : i32 from vector<4xi32>
// CHECK:      %[[S64:.*]] = arith.extsi %[[SLOT]] : i32 to i64
// CHECK:      %[[SOFF:.*]] = arith.muli %[[S64]], %{{.*}} : i64
// CHECK:      %[[ROFF:.*]] = arith.addi %[[POFF]], %[[SOFF]] : i64
// CHECK:      %[[SRC:.*]] = llvm.getelementptr %{{.*}}[%[[ROFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK:      %[[SIZE:.*]] = arith.select %{{.*}}, %c16_i32, %c0_i32 : i32
// CHECK:      nvvm.cp.async.shared.global %{{.*}}, %[[SRC]], 16, cache =  cg, %[[SIZE]]
// CHECK:      vector.extract %[[PAGES]][1] : i32 from vector<4xi32>
// CHECK:      nvvm.cp.async.shared.global
// CHECK:      vector.extract %[[PAGES]][2] : i32 from vector<4xi32>
// CHECK:      nvvm.cp.async.shared.global
// CHECK:      vector.extract %[[PAGES]][3] : i32 from vector<4xi32>
// CHECK:      nvvm.cp.async.shared.global
// CHECK-NOT:  nvvm.cp.async.shared.global
func.func @paged_copy(%Q: !tile.global<[64, 64], f16> {tile.name = "Q"},
                      %C: !tile.global<[P, 16, 64], f16> {tile.name = "C"},
                      %T: !tile.global<[16], i32> {tile.name = "T"},
                      %O: !tile.global<[64, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant dense<16> : tensor<64xi32, #rows>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %qbuf = tile.local_alloc {offset = 0 : i64} : !pbuf
  %kbuf = tile.local_alloc {offset = 8192 : i64} : !pbuf
  tile.async_copy %Q[%c0, %c0] window [0, 1] into %qbuf[%c0] : !tile.global<[64, 64], f16> -> !pbuf
  %n = tile.iota : tensor<64xi32, #rows>
  %pi = arith.divsi %n, %c16 : tensor<64xi32, #rows>
  %pages = tile.load %T[%c0] window [] gather [0] (%pi : tensor<64xi32, #rows>) pad 0 : i32 : !tile.global<[16], i32> -> tensor<64xi32, #rows>
  %slots = arith.remsi %n, %c16 : tensor<64xi32, #rows>
  tile.async_copy %C[%c0, %c0, %c0] window [2] gather [0, 1] (%pages, %slots : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %kbuf[%c0] : !tile.global<[P, 16, 64], f16> -> !pbuf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qbuf[%c0] : !pbuf -> tensor<64x64xf16, #tile.dot_op<0, #mma>>
  %k = tile.local_load %kbuf[%c0] : !pbuf -> tensor<64x64xf16, #tile.dot_op<1, #mma, transposed = true>>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x64xf16, #tile.dot_op<0, #mma>>, tensor<64x64xf16, #tile.dot_op<1, #mma, transposed = true>> -> tensor<64x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}

// -----

// A read from shared memory right before the MMA that uses it as its A
// operand is fused like B: one ldmatrix.x4 of A per k-step, k-steps
// outermost, so before the first mma.sync only the first k-step's A and B
// fragments are read (a backward pass reads K and V this way for every
// query block).
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[1, 16, 32], f16, swizzle = [2, 4]>
// CHECK-LABEL: gpu.func @fused_a
// CHECK: nvvm.ldmatrix
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvvm.ldmatrix
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK: gpu.return
func.func @fused_a(%O: !tile.global<[16, 16], f32> {tile.name = "O"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #mma>
  %abuf = tile.local_alloc {offset = 0 : i64} : !buf
  %bbuf = tile.local_alloc {offset = 1024 : i64} : !buf
  %a = tile.local_load %abuf[%c0] : !buf -> tensor<16x32xf16, #A>
  %b = tile.local_load %bbuf[%c0] : !buf -> tensor<16x32xf16, #BT>
  %s = tile.mma %a, %b, %zero {transpose_b} : tensor<16x32xf16, #A>, tensor<16x32xf16, #BT> -> tensor<16x16xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<16x16xf32, #mma> -> !tile.global<[16, 16], f32>
  return
}

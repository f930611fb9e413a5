// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s

// On sm_90a an atomic add marked tile.tma_reduce whose window is a box of
// whole rows of an f32 tensor goes through the TMA unit: the registers are
// stored into one staging buffer (after the kernel's 1000 bytes of buffers,
// on the next 128-byte boundary, as large as the larger tile) of
// unswizzled 8-column blocks, each one box. Before the stores thread 0 waits
// for the reads of its last reduce-adds and all meet; after them each
// thread fences the generic proxy, all meet, and thread 0 issues one
// reduce-add per column block (coordinates innermost first, the block's
// start in the last dim) and commits the bulk group. Thread 0 waits for the
// group before the kernel returns. DQ (128 columns) has 16 boxes, E (80
// columns) 10; each thread's registers are one offset plus constants.

#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
!DQ = !tile.global<[B, N, 128], f32>
!E = !tile.global<[N, 80], f32>

// CHECK-LABEL: gpu.func @staged(
// CHECK-SAME:      %[[DQMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tile.name = "DQ.tmap"}
// CHECK-SAME:      %[[EMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tile.name = "E.tmap"}
// CHECK-SAME:      flashc.shared_bytes = 17408 : i64
// CHECK-SAME:      flashc.tensor_maps = [{box = array<i64: 1, 32, 8>, name = "DQ.tmap", oob = "zero", swizzle = "none", tensor = "DQ"}, {box = array<i64: 32, 8>, name = "E.tmap", oob = "zero", swizzle = "none", tensor = "E"}]
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[LEADER:.*]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK-NOT:     nvvm.mbarrier.init
// CHECK:         scf.if %[[LEADER]] {
// CHECK-NEXT:      nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.barrier
// CHECK:         %[[BASE:.*]] = llvm.getelementptr %{{.*}}[%c1024_i32]
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:    nvvm.barrier
// CHECK-NEXT:    scf.if %[[LEADER]] {
// CHECK-NEXT:      %[[COL0:.*]] = arith.addi %c0_i32, %c0_i32 : i32
// CHECK-NEXT:      nvvm.cp.async.bulk.tensor.reduce %[[DQMAP]], %[[BASE]], box[%[[COL0]], %[[ROW:.*]], %[[B:.*]]] {redKind = #nvvm.tma_redux_kind<add>}
// CHECK-NEXT:      %[[COL1:.*]] = arith.addi %c0_i32, %c8_i32 : i32
// CHECK:           %[[S1:.*]] = llvm.getelementptr %{{.*}}[%c2048_i32{{.*}}]
// CHECK-NEXT:      nvvm.cp.async.bulk.tensor.reduce %[[DQMAP]], %[[S1]], box[%[[COL1]], %[[ROW]], %[[B]]]
// CHECK-COUNT-14:  nvvm.cp.async.bulk.tensor.reduce %[[DQMAP]]
// CHECK-NEXT:      nvvm.cp.async.bulk.commit.group
// CHECK-NEXT:    }
// CHECK:         scf.if %[[LEADER]] {
// CHECK-NEXT:      nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.barrier
// CHECK:         nvvm.fence.proxy
// CHECK-NEXT:    nvvm.barrier
// CHECK-NEXT:    scf.if %[[LEADER]] {
// CHECK:           nvvm.cp.async.bulk.tensor.reduce %[[EMAP]], %[[BASE]], box[%[[COL0]], %[[ROW]]]
// CHECK-COUNT-9:   nvvm.cp.async.bulk.tensor.reduce %[[EMAP]]
// CHECK-NEXT:      nvvm.cp.async.bulk.commit.group
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %[[LEADER]] {
// CHECK-NEXT:      nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT:       {read}
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.return
module attributes {tile.wgmma} {
func.func @staged(%DQ: !DQ {tile.name = "DQ"}, %E: !E {tile.name = "E"}, %b: i32)
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 1000 : i64} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %pid = tile.program_id 0 : i32
  %row = arith.muli %pid, %c32 : i32
  %dq = arith.constant dense<1.0> : tensor<32x128xf32, #blocked>
  tile.atomic_add %dq, %DQ[%b, %row, %c0] window [1, 2] {tile.tma_reduce} : tensor<32x128xf32, #blocked> -> !DQ
  %e = arith.constant dense<2.0> : tensor<32x80xf32, #blocked>
  tile.atomic_add %e, %E[%row, %c0] window [0, 1] {tile.tma_reduce} : tensor<32x80xf32, #blocked> -> !E
  return
}
}

// -----

// What keeps its per-element atomics, marked or not: an unmarked add, a
// masked add, a window that is not whole rows of a static last dim, a box
// of 4 rows (not a multiple of 8), rows of 12 columns (not of 8), and any
// add off sm_90a (next case).
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @kept(
// CHECK-NOT:     tensor_maps
// CHECK-NOT:     nvvm.cp.async.bulk
// CHECK:         llvm.atomicrmw fadd
// CHECK-NOT:     nvvm.cp.async.bulk
// CHECK:         gpu.return
module attributes {tile.wgmma} {
func.func @kept(%X: !tile.global<[N, 128], f32> {tile.name = "X"},
                %Y: !tile.global<[N, M], f32> {tile.name = "Y"},
                %Z: !tile.global<[N, 32], f32> {tile.name = "Z"},
                %W: !tile.global<[N, 12], f32> {tile.name = "W"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %x = arith.constant dense<1.0> : tensor<32x128xf32, #blocked>
  tile.atomic_add %x, %X[%c0, %c0] window [0, 1] : tensor<32x128xf32, #blocked> -> !tile.global<[N, 128], f32>
  %zero = arith.constant dense<0.0> : tensor<32x128xf32, #blocked>
  %pos = arith.cmpf ogt, %x, %zero : tensor<32x128xf32, #blocked>
  tile.atomic_add %x, %X[%c0, %c0] window [0, 1] mask %pos {tile.tma_reduce} : tensor<32x128xf32, #blocked>, tensor<32x128xi1, #blocked> -> !tile.global<[N, 128], f32>
  tile.atomic_add %x, %Y[%c0, %c0] window [0, 1] {tile.tma_reduce} : tensor<32x128xf32, #blocked> -> !tile.global<[N, M], f32>
  %z = arith.constant dense<1.0> : tensor<4x32xf32, #blocked>
  tile.atomic_add %z, %Z[%c0, %c0] window [0, 1] {tile.tma_reduce} : tensor<4x32xf32, #blocked> -> !tile.global<[N, 32], f32>
  %w = arith.constant dense<1.0> : tensor<32x12xf32, #blocked>
  tile.atomic_add %w, %W[%c0, %c0] window [0, 1] {tile.tma_reduce} : tensor<32x12xf32, #blocked> -> !tile.global<[N, 12], f32>
  return
}
}

// -----

#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @sm80(
// CHECK-NOT:     nvvm.cp.async.bulk
// CHECK:         llvm.atomicrmw fadd
func.func @sm80(%X: !tile.global<[N, 128], f32> {tile.name = "X"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %x = arith.constant dense<1.0> : tensor<32x128xf32, #blocked>
  tile.atomic_add %x, %X[%c0, %c0] window [0, 1] {tile.tma_reduce} : tensor<32x128xf32, #blocked> -> !tile.global<[N, 128], f32>
  return
}

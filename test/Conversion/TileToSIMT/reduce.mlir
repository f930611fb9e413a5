// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

// Reductions: in-thread, butterflies, across warps.

// A row max of an accumulator tile: in-thread, then butterflies over the
// quad (lane bits 0 and 1) only; no shared memory.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @row_max
// CHECK-NOT: llvm.mlir.addressof
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK: vector.from_elements %{{.*}} : vector<4xf32>
// CHECK: gpu.return
func.func @row_max(%S: !tile.global<[128, 64], f32> {tile.name = "S"},
                   %M: !tile.global<[128], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[128, 64], f32> -> tensor<128x64xf32, #mma>
  %m = tile.reduce max %s axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
  tile.store %m, %M[%c0] window [0] : tensor<128xf32, #rows> -> !tile.global<[128], f32>
  return
}

// -----

// Warps along N: a row sum combines the quad by shuffles, then the two warps
// of a row through shared memory.
#mma = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @row_sum_across_warps
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK: llvm.mlir.addressof @__flashc_smem
// CHECK: scf.if
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.addf
// CHECK: nvvm.barrier
func.func @row_sum_across_warps(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                                %L: !tile.global<[32], f32> {tile.name = "L"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma>
  %l = tile.reduce sum %s axis = 1 : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<32xf32, #rows> -> !tile.global<[32], f32>
  return
}

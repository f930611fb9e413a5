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

// -----

// A row sum over 12 columns, padded to 16 by the layout: each thread's
// registers for columns 8 + 2q, 9 + 2q hold copies of columns 0..3 in lanes
// with q >= 2 (lane mask 0xcccccccc); there they count as 0, and the
// butterflies combine the quad as usual.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @padded_row_sum
// CHECK: %[[PAD:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32 : i32
// CHECK-COUNT-4: arith.select %[[PAD]], %cst, %{{.*}} : f32
// CHECK-COUNT-2: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-COUNT-2: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NOT: nvvm.shfl
func.func @padded_row_sum(%S: !tile.global<[16, 12], f32> {tile.name = "S"},
                          %L: !tile.global<[16], f32> {tile.name = "L"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[16, 12], f32> -> tensor<16x12xf32, #mma>
  %l = tile.reduce sum %s axis = 1 : tensor<16x12xf32, #mma> -> tensor<16xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<16xf32, #rows> -> !tile.global<[16], f32>
  return
}

// -----

// Four rows padded to the atom's 16: rows g and g + 8 of a thread are one
// row (g % 4), each output register combines that row's two columns once
// (registers 0 and 1; 2 and 3 are their copies).
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @rows_below_the_atom
// CHECK: %[[R0:.*]] = vector.extract %[[IN:.*]][0] : f32 from vector<4xf32>
// CHECK: %[[R1:.*]] = vector.extract %[[IN]][1] : f32 from vector<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[R0]], %[[R1]] : f32
// CHECK-NOT: arith.addf %[[SUM]]
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %[[SUM]], %c1_i32, %c31_i32 : f32 -> f32
func.func @rows_below_the_atom(%S: !tile.global<[4, 8], f32> {tile.name = "S"},
                               %L: !tile.global<[4], f32> {tile.name = "L"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[4, 8], f32> -> tensor<4x8xf32, #mma>
  %l = tile.reduce sum %s axis = 1 : tensor<4x8xf32, #mma> -> tensor<4xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<4xf32, #rows> -> !tile.global<[4], f32>
  return
}

// -----

// f16 tiles are reduced in f32 (shuffles move 32 bits) and rounded once.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @reduce_f16
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
func.func @reduce_f16(%S: !tile.global<[16, 8], f16> {tile.name = "S"},
                      %M: !tile.global<[16], f16> {tile.name = "M"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 8], f16> -> tensor<16x8xf16, #mma>
  %m = tile.reduce max %s axis = 1 : tensor<16x8xf16, #mma> -> tensor<16xf16, #rows>
  tile.store %m, %M[%c0] window [0] : tensor<16xf16, #rows> -> !tile.global<[16], f16>
  return
}

// -----

// A lane-partial row sum (tile-defer-loop-sums) stops before the butterflies
// when they would combine exactly the lanes holding each row (the quad):
// each thread adds its own columns. tile.sum_lane_partials is then the
// butterflies alone.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @lane_partial_row_sum
// CHECK-NOT: nvvm.shfl
// CHECK: arith.mulf
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NOT: nvvm.shfl
// CHECK: gpu.return
func.func @lane_partial_row_sum(%S: !tile.global<[128, 64], f32> {tile.name = "S"},
                                %L: !tile.global<[128], f32> {tile.name = "L"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[128, 64], f32> -> tensor<128x64xf32, #mma>
  %part = tile.reduce sum %s axis = 1 lane_partial : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
  %two = arith.constant dense<2.0> : tensor<128xf32, #rows>
  %twice = arith.mulf %two, %part : tensor<128xf32, #rows>
  %l = tile.sum_lane_partials %twice : tensor<128xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<128xf32, #rows> -> !tile.global<[128], f32>
  return
}

// -----

// Warps along N: the lane-partial form of a sum that needs shared memory is
// the whole sum kept in one lane of each quad (0 in the other three).
#mma = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @lane_partial_across_warps
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.barrier
// CHECK: nvvm.barrier
// CHECK: arith.select
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
func.func @lane_partial_across_warps(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                                     %L: !tile.global<[32], f32> {tile.name = "L"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma>
  %part = tile.reduce sum %s axis = 1 lane_partial : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
  %l = tile.sum_lane_partials %part : tensor<32xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<32xf32, #rows> -> !tile.global<[32], f32>
  return
}

// -----

// A uniform max (every column of a row equal, as online_softmax's row sums
// on the tensor cores): each thread's first register of each row, no
// combining, no shuffles, no shared memory.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @uniform_row_max
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: arith.maximumf
// CHECK-NOT: llvm.mlir.addressof
// CHECK: vector.from_elements %{{.*}} : vector<4xf32>
// CHECK: gpu.return
func.func @uniform_row_max(%S: !tile.global<[128, 8], f32> {tile.name = "S"},
                           %M: !tile.global<[128], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[128, 8], f32> -> tensor<128x8xf32, #mma>
  %m = tile.reduce max %s axis = 1 uniform : tensor<128x8xf32, #mma> -> tensor<128xf32, #rows>
  tile.store %m, %M[%c0] window [0] : tensor<128xf32, #rows> -> !tile.global<[128], f32>
  return
}

// -----

// Warps along N: still each thread's own registers; a max would need the
// other warp through shared memory.
#mma = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @uniform_across_warps
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
func.func @uniform_across_warps(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                                %M: !tile.global<[32], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma>
  %m = tile.reduce max %s axis = 1 uniform : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
  tile.store %m, %M[%c0] window [0] : tensor<32xf32, #rows> -> !tile.global<[32], f32>
  return
}

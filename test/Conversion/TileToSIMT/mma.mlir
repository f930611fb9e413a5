// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

// tile.mma: mma.sync atoms, bf16 operands, fused B loads.

// 128x64x64 with warps [4, 1, 1] and values [2, 1, 1]: per warp 2 m-atoms x
// 8 n-atoms x 4 k-steps = 64 mma.sync.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
// CHECK-LABEL: gpu.func @mma_count
// CHECK-COUNT-64: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<64xf32>
func.func @mma_count(%A: !tile.global<[128, 64], f16> {tile.name = "A"},
                     %B: !tile.global<[64, 64], f16> {tile.name = "B"},
                     %C: !tile.global<[128, 64], f32> {tile.name = "C"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[128, 64], f16> -> tensor<128x64xf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %c = tile.mma %a, %b, %zero : tensor<128x64xf16, #A>, tensor<64x64xf16, #B> -> tensor<128x64xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<128x64xf32, #mma> -> !tile.global<[128, 64], f32>
  return
}

// -----

// bf16 operands are packed into i32 registers for mma.sync.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
// CHECK-LABEL: gpu.func @mma_bf16
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_bf16(%A: !tile.global<[16, 16], bf16> {tile.name = "A"},
                    %B: !tile.global<[8, 16], bf16> {tile.name = "B"},
                    %C: !tile.global<[16, 8], f32> {tile.name = "C"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : bf16 : !tile.global<[16, 16], bf16> -> tensor<16x16xbf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : bf16 : !tile.global<[8, 16], bf16> -> tensor<8x16xbf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<16x8xf32, #mma>
  %c = tile.mma %a, %b, %zero {transpose_b} : tensor<16x16xbf16, #A>, tensor<8x16xbf16, #BT> -> tensor<16x8xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<16x8xf32, #mma> -> !tile.global<[16, 8], f32>
  return
}

// -----

// A write between a load and the MMA that uses it keeps the load in place
// (all 16 B registers loaded before the store); a load with no write in
// between is fused (4 registers per fragment, loaded after the store).
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
// CHECK-LABEL: gpu.func @fusion
// CHECK: %[[B1:.*]] = vector.from_elements {{.*}} : vector<16xf16>
// CHECK: llvm.store
// CHECK: vector.shuffle %[[B1]], %[[B1]] [0, 1]
// CHECK: nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<4xf16>
// CHECK-NOT: vector<16xf16>
// CHECK: nvvm.mma.sync
func.func @fusion(%G: !tile.global<[16, 32], f16> {tile.name = "G"},
                  %R: !tile.global<[16, 32], f32> {tile.name = "R"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<16x32xf32, #mma>
  %a = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x16xf16, #A>
  %b1 = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x32xf16, #B>
  tile.store %zero, %R[%c0, %c0] window [0, 1] : tensor<16x32xf32, #mma> -> !tile.global<[16, 32], f32>
  %c1 = tile.mma %a, %b1, %zero : tensor<16x16xf16, #A>, tensor<16x32xf16, #B> -> tensor<16x32xf32, #mma>
  %b2 = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x32xf16, #B>
  %c2 = tile.mma %a, %b2, %c1 : tensor<16x16xf16, #A>, tensor<16x32xf16, #B> -> tensor<16x32xf32, #mma>
  tile.store %c2, %R[%c0, %c0] window [0, 1] : tensor<16x32xf32, #mma> -> !tile.global<[16, 32], f32>
  return
}

// -----

// Single-token decode: one row (M = 1). A pads it to the atom's 16 rows
// (every row a copy of row 0, so every result row is row 0's); the [1, 64]
// accumulator holds one register per column, passed as both c0 and c2 (and
// c1 and c3) of each atom. 4 warps along N: 2 n-atoms x 4 k-steps = 8
// mma.sync per warp, one atom along M.
#mma = #tile.mma<warps = [1, 4, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
// CHECK-LABEL: gpu.func @decode
// CHECK-COUNT-8: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[X:[0-9]+]], %[[Y:[0-9]+]], %[[X]], %[[Y]]]
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<4xf32>
func.func @decode(%Q: !tile.global<[1, 64], f16> {tile.name = "Q"},
                  %K: !tile.global<[64, 64], f16> {tile.name = "K"},
                  %S: !tile.global<[1, 64], f32> {tile.name = "S"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[1, 64], f16> -> tensor<1x64xf16, #A>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<1x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<1x64xf16, #A>, tensor<64x64xf16, #BT> -> tensor<1x64xf32, #mma>
  tile.store %s, %S[%c0, %c0] window [0, 1] : tensor<1x64xf32, #mma> -> !tile.global<[1, 64], f32>
  return
}

// -----

// K = 20 is padded to two k-steps of 16; the operand registers in the
// padding (k >= 20) are zeroed before the second mma.sync: in lanes with
// 2 (lane % 4) + 16 >= 20 (lane mask 0xcccccccc) for A's first column of
// registers and B's first register, in every lane for the others.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
// CHECK-LABEL: gpu.func @k_padding
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32
// CHECK: nvvm.mma.sync
// CHECK: %[[MASK:.*]] = arith.shrui %c-858993460_i32, %[[LANE]]
// CHECK: %[[BIT:.*]] = arith.andi %[[MASK]], %c1_i32
// CHECK: %[[PAD:.*]] = arith.cmpi ne, %[[BIT]], %c0_i32
// CHECK: arith.select %[[PAD]], %[[ZERO:.*]], %{{.*}} : f16
// CHECK: %[[B0:.*]] = vector.from_elements
// CHECK: %[[ZEROS:.*]] = vector.from_elements %[[ZERO]], %[[ZERO]] : vector<2xf16>
// CHECK: %[[A0:.*]] = vector.from_elements
// CHECK: %[[A1:.*]] = vector.from_elements
// CHECK: nvvm.mma.sync A[%[[A0]], %[[A1]], %[[ZEROS]], %[[ZEROS]]]  B[%[[B0]], %[[ZEROS]]]
// CHECK-NOT: nvvm.mma.sync
func.func @k_padding(%A: !tile.global<[16, 20], f16> {tile.name = "A"},
                     %B: !tile.global<[20, 8], f16> {tile.name = "B"},
                     %C: !tile.global<[16, 8], f32> {tile.name = "C"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 20], f16> -> tensor<16x20xf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[20, 8], f16> -> tensor<20x8xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<16x8xf32, #mma>
  %c = tile.mma %a, %b, %zero : tensor<16x20xf16, #A>, tensor<20x8xf16, #B> -> tensor<16x8xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<16x8xf32, #mma> -> !tile.global<[16, 8], f32>
  return
}

// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

// Layout moves: register repacks and shared-memory exchanges.

// FlashAttention-2's S accumulator -> P operand: every thread already holds
// what it needs, so the conversion is one register repack.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#A = #tile.dot_op<0, #mma>
// CHECK-LABEL: gpu.func @s_to_p
// CHECK-SAME: (%[[S:.*]]: !llvm.ptr<1>
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: llvm.mlir.addressof
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15, 16, {{.*}}] : vector<64xf16>, vector<64xf16>
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: llvm.mlir.addressof
// CHECK: gpu.return
func.func @s_to_p(%S: !tile.global<[128, 64], f16> {tile.name = "S"},
                  %P: !tile.global<[128, 64], f16> {tile.name = "P"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[128, 64], f16> -> tensor<128x64xf16, #mma>
  %p = tile.convert_layout %s : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #A>
  tile.store %p, %P[%c0, %c0] window [0, 1] : tensor<128x64xf16, #A> -> !tile.global<[128, 64], f16>
  return
}

// -----

// A conversion that moves elements between threads goes through shared
// memory: each element written once (first holder), a barrier, reads, and a
// barrier before the buffer can be reused. The 16x64 f32 tile needs 4096
// bytes.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: gpu.module @flashc_kernels {
// CHECK: llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x i8>
// CHECK-LABEL: gpu.func @through_shared
// CHECK-SAME: flashc.shared_bytes = 4096 : i64
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: llvm.store %{{.*}}, %[[DST]] {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: vector.from_elements {{.*}} : vector<32xf32>
// A blocked layout with 4 contiguous f32 per thread stores 16-byte vectors.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
func.func @through_shared(%X: !tile.global<[16, 64], f32> {tile.name = "X"},
                          %Y: !tile.global<[16, 64], f32> {tile.name = "Y"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[16, 64], f32> -> tensor<16x64xf32, #mma>
  %y = tile.convert_layout %x : tensor<16x64xf32, #mma> -> tensor<16x64xf32, #blocked>
  tile.store %y, %Y[%c0, %c0] window [0, 1] : tensor<16x64xf32, #blocked> -> !tile.global<[16, 64], f32>
  return
}

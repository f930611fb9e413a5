// RUN: flash-opt %s | FileCheck %s
// RUN: flash-opt %s | flash-opt | FileCheck %s
// RUN: flash-opt -mlir-print-op-generic %s | flash-opt | FileCheck %s

// The shared-memory ops and the !tile.shared type round-trip; a swizzle of
// [1, 1] is the plain row-major layout and is not printed.

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>

// CHECK-LABEL: func.func @staged
func.func @staged(%K: !tile.global<[B, H, Nk, 64], f16>, %V: !tile.global<[B, H, Nk, 64], f16>,
                  %Kc: !tile.global<[P, 16, H, 64], f16>,
                  %pages: tensor<64xi32, #rows>, %slots: tensor<64xi32, #rows>,
                  %b: i32, %h: i32, %n: i32, %slot: i32, %more: i1) {
  %c0 = arith.constant 0 : i32
  // CHECK: %[[K:.*]] = tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
  %kbuf = tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
  // CHECK: %[[V:.*]] = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  %vbuf = tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 1]>
  // CHECK: tile.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [2, 3] into %[[K]][%{{.*}}] if %{{.*}} : !tile.global<[B, H, Nk, 64], f16> -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
  tile.async_copy %K[%b, %h, %n, %c0] window [2, 3] into %kbuf[%slot] if %more
      : !tile.global<[B, H, Nk, 64], f16> -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
  // CHECK: tile.async_copy %{{.*}} window [2, 3] into %[[V]][%{{.*}}] : !tile.global
  tile.async_copy %V[%b, %h, %n, %c0] window [2, 3] into %vbuf[%c0]
      : !tile.global<[B, H, Nk, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  // CHECK: tile.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [3] gather [0, 1] (%{{.*}}, %{{.*}} : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %[[V]][%{{.*}}] if %{{.*}} : !tile.global<[P, 16, H, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  tile.async_copy %Kc[%c0, %c0, %h, %c0] window [3] gather [0, 1] (%pages, %slots : tensor<64xi32, #rows>, tensor<64xi32, #rows>)
      into %vbuf[%c0] if %more : !tile.global<[P, 16, H, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  // CHECK-NEXT: tile.async_commit
  tile.async_commit
  // CHECK-NEXT: tile.async_wait 1
  tile.async_wait 1
  // CHECK-NEXT: tile.barrier
  tile.barrier
  // CHECK-NEXT: tile.local_load %[[K]][%{{.*}}] : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #dot_b_t>
  %k = tile.local_load %kbuf[%slot] : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #dot_b_t>
  // CHECK-NEXT: tile.local_load %[[V]]
  %v = tile.local_load %vbuf[%c0] : !tile.shared<[1, 64, 64], f16> -> tensor<64x64xf16, #dot_b>
  return
}

// CHECK-LABEL: func.func @scaled_softmax
// CHECK: tile.online_softmax deferred exp2 %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale %{{.*}} :
func.func @scaled_softmax(%s: tensor<16x16xf32>, %v: tensor<16x16xf16>,
                          %m: tensor<16xf32>, %l: tensor<16xf32>,
                          %acc: tensor<16x16xf32>, %scale: f32) {
  %0:3 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc scale %scale
      : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16xf32>, tensor<16x16xf32>
  return
}

// Column blocks (block_cols, after the swizzle); one block is not printed.
// CHECK-LABEL: func.func private @blocked
// CHECK-SAME: !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-SAME: !tile.shared<[1, 64, 256], bf16, swizzle = [1, 8], block_cols = 64>
// CHECK-SAME: !tile.shared<[1, 16, 32], f16, block_cols = 16>
func.func private @blocked(!tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>,
                           !tile.shared<[1, 64, 256], bf16, swizzle = [1, 8], block_cols = 64>,
                           !tile.shared<[1, 16, 32], f16, block_cols = 16>)

// An f8E4M3FN buffer: 128 one-byte elements per row, 128B swizzle.
// CHECK-LABEL: func.func private @f8_buffer
// CHECK-SAME: !tile.shared<[2, 64, 128], f8E4M3FN, swizzle = [1, 8]>
func.func private @f8_buffer(!tile.shared<[2, 64, 128], f8E4M3FN, swizzle = [1, 8]>)

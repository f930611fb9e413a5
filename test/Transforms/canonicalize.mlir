// RUN: flash-opt %s --canonicalize --split-input-file | FileCheck %s
// The tile ops' folders and canonicalization patterns.

// A transposed operand is read by the MMA directly: no transposed copy.
// CHECK-LABEL: func.func @trans_into_mma
// CHECK-NOT: tile.trans
// CHECK: tile.mma %arg0, %arg1, %arg2 {transpose_a, transpose_b} : tensor<16x32xf16>, tensor<8x16xf16> -> tensor<32x8xf32>
func.func @trans_into_mma(%a: tensor<16x32xf16>, %b: tensor<8x16xf16>, %c: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %at = tile.trans %a : tensor<16x32xf16> -> tensor<32x16xf16>
  %bt = tile.trans %b : tensor<8x16xf16> -> tensor<16x8xf16>
  %d = tile.mma %at, %bt, %c : tensor<32x16xf16>, tensor<16x8xf16> -> tensor<32x8xf32>
  return %d : tensor<32x8xf32>
}

// -----

// Transposing an already transposed operand cancels the flag.
// CHECK-LABEL: func.func @trans_cancels_flag
// CHECK: tile.mma %arg0, %arg1, %arg2 : tensor<32x16xf16>, tensor<16x8xf16>
func.func @trans_cancels_flag(%a: tensor<32x16xf16>, %b: tensor<16x8xf16>, %c: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %bt = tile.trans %b : tensor<16x8xf16> -> tensor<8x16xf16>
  %d = tile.mma %a, %bt, %c {transpose_b} : tensor<32x16xf16>, tensor<8x16xf16> -> tensor<32x8xf32>
  return %d : tensor<32x8xf32>
}

// -----

// CHECK-LABEL: func.func @folds
// CHECK-DAG: %[[D:.*]] = arith.constant 64 : i32
// CHECK-DAG: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[N:.*]] = tile.dim %arg0[0]
// CHECK: return %[[D]], %[[N]], %[[S]], %arg1
func.func @folds(%g: !tile.global<[N, 64], f16>, %t: tensor<4x8xf32>) -> (i32, i32, tensor<4x8xf32>, tensor<4x8xf32>) {
  %d = tile.dim %g[1] : !tile.global<[N, 64], f16>
  %n = tile.dim %g[0] : !tile.global<[N, 64], f16>
  %two = arith.constant 2.0 : f32
  %s = tile.splat %two : f32 -> tensor<4x1xf32>
  %b = tile.broadcast %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %same = tile.broadcast %t : tensor<4x8xf32> -> tensor<4x8xf32>
  %tt = tile.trans %same : tensor<4x8xf32> -> tensor<8x4xf32>
  %back = tile.trans %tt : tensor<8x4xf32> -> tensor<4x8xf32>
  return %d, %n, %b, %back : i32, i32, tensor<4x8xf32>, tensor<4x8xf32>
}

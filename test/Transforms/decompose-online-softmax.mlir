// RUN: flash-opt %s --tile-decompose-online-softmax --split-input-file | FileCheck %s
// RUN: flash-opt %s --tile-decompose-online-softmax --split-input-file | FileCheck %s --check-prefix=NONE

// NONE-NOT: tile.online_softmax

// FlashAttention-2's deferred form: rescale the accumulator, accumulate P*V into it.
// CHECK-LABEL: func.func @deferred
// CHECK-SAME: (%[[S:.*]]: tensor<16x32xf32>, %[[V:.*]]: tensor<32x64xf16>, %[[M:.*]]: tensor<16xf32>, %[[L:.*]]: tensor<16xf32>, %[[ACC:.*]]: tensor<16x64xf32>)
// CHECK: %[[BLOCKMAX:.*]] = tile.reduce max %[[S]] axis = 1
// CHECK: %[[NEWMAX:.*]] = arith.maximumf %[[M]], %[[BLOCKMAX]]
// CHECK: %[[NOKEY:.*]] = arith.cmpf oeq, %[[NEWMAX]]
// CHECK: %[[BASE:.*]] = arith.select %[[NOKEY]], %{{.*}}, %[[NEWMAX]]
// CHECK: %[[MDIFF:.*]] = arith.subf %[[M]], %[[BASE]]
// CHECK: %[[ALPHA:.*]] = math.exp2 %[[MDIFF]] fastmath<afn> : tensor<16xf32>
// CHECK: tile.expand_dims %[[BASE]] axis = 1
// CHECK-NOT: math.fma
// CHECK: %[[SDIFF:.*]] = arith.subf %[[S]]
// CHECK: %[[P:.*]] = math.exp2 %[[SDIFF]] fastmath<afn> : tensor<16x32xf32>
// CHECK: %[[ROWSUM:.*]] = tile.reduce sum %[[P]] axis = 1
// CHECK-NOT: arith.mulf {{.*}} : tensor<16xf32>
// CHECK: %[[P16:.*]] = arith.truncf %[[P]] : tensor<16x32xf32> to tensor<16x32xf16>
// CHECK: %[[NEWSUM:.*]] = math.fma %[[ALPHA]], %[[L]], %[[ROWSUM]] : tensor<16xf32>
// CHECK: %[[RESCALED:.*]] = arith.mulf %{{.*}}, %[[ACC]] : tensor<16x64xf32>
// CHECK: %[[NEWACC:.*]] = tile.mma %[[P16]], %[[V]], %[[RESCALED]]
// CHECK: return %[[NEWMAX]], %[[NEWSUM]], %[[NEWACC]]
func.func @deferred(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>,
                    %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// With a scale c: the row max of the raw scores, scaled per row (c > 0), and
// one FMA c * S - base per score feeding the exponential.
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: (%[[S:.*]]: tensor<16x32xf32>, %{{.*}}: tensor<32x64xf16>, %[[M:.*]]: tensor<16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<16x64xf32>, %[[C:.*]]: f32)
// CHECK: %[[RAWMAX:.*]] = tile.reduce max %[[S]] axis = 1 : tensor<16x32xf32> -> tensor<16xf32>
// CHECK: %[[CROW:.*]] = tile.splat %[[C]] : f32 -> tensor<16xf32>
// CHECK: %[[BLOCKMAX:.*]] = arith.mulf %[[CROW]], %[[RAWMAX]] : tensor<16xf32>
// CHECK: %[[NEWMAX:.*]] = arith.maximumf %[[M]], %[[BLOCKMAX]]
// CHECK: %[[BASE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEWMAX]]
// CHECK: %[[ALPHA:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<16xf32>
// CHECK: %[[NEGBASE:.*]] = arith.negf %[[BASE]] : tensor<16xf32>
// CHECK: %[[COL:.*]] = tile.expand_dims %[[NEGBASE]] axis = 1
// CHECK: %[[ROWS:.*]] = tile.broadcast %[[COL]] : tensor<16x1xf32> -> tensor<16x32xf32>
// CHECK: %[[CTILE:.*]] = tile.splat %[[C]] : f32 -> tensor<16x32xf32>
// CHECK: %[[X:.*]] = math.fma %[[S]], %[[CTILE]], %[[ROWS]] : tensor<16x32xf32>
// CHECK: %[[P:.*]] = math.exp2 %[[X]] fastmath<afn> : tensor<16x32xf32>
// CHECK-NOT: arith.subf {{.*}} : tensor<16x32xf32>
// CHECK: tile.reduce sum %[[P]] axis = 1
// CHECK: return %[[NEWMAX]]
func.func @scaled(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>,
                  %l: tensor<16xf32>, %acc: tensor<16x64xf32>, %c: f32)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc scale %c
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// The scaled eager form exponentiates base e.
// CHECK-LABEL: func.func @scaled_eager
// CHECK: %[[X:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf32>
// CHECK: math.exp %[[X]] : tensor<16x32xf32>
func.func @scaled_eager(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>,
                        %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %c = arith.constant 0.125 : f32
  %m1, %l1, %acc1 = tile.online_softmax eager %s, %v, %m, %l, %acc scale %c
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// FlashAttention-1's eager form: base-e exponentials, and the accumulator is
// renormalized by the new row sum every step (guarded against rows with sum 0).
// CHECK-LABEL: func.func @eager
// CHECK: math.exp %{{.*}} : tensor<16xf32>
// CHECK: math.exp %{{.*}} : tensor<16x32xf32>
// CHECK: %[[P16:.*]] = arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xbf16>
// CHECK: %[[OLD:.*]] = arith.mulf
// CHECK: %[[NEWSUM:.*]] = arith.addf %[[OLD]]
// CHECK: %[[W:.*]] = tile.expand_dims %[[OLD]] axis = 1
// CHECK: %[[UNNORM:.*]] = tile.mma %[[P16]]
// CHECK: tile.expand_dims %[[NEWSUM]] axis = 1
// CHECK: %[[ISZERO:.*]] = arith.cmpf oeq, %{{.*}}, %[[ZERO:.*]] : tensor<16x64xf32>
// CHECK: %[[Q:.*]] = arith.divf %[[UNNORM]]
// CHECK: arith.select %[[ISZERO]], %[[ZERO]], %[[Q]]
func.func @eager(%s: tensor<16x32xf32>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>,
                 %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %acc1 = tile.online_softmax eager %s, %v, %m, %l, %acc
      : tensor<16x32xf32>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// sum_by_mma: the row sum on the tensor cores, after P @ V: P (rounded to
// V's type) times 8 columns of ones, accumulated onto alpha * l, read back
// as a uniform max (every column holds the sum). No per-score add.
// CHECK-LABEL: func.func @sum_by_mma
// CHECK-SAME: (%{{.*}}: tensor<16x32xf32>, %[[V:.*]]: tensor<32x64xf16>, %{{.*}}: tensor<16xf32>, %[[L:.*]]: tensor<16xf32>, %{{.*}}: tensor<16x64xf32>)
// CHECK-NOT: tile.reduce sum
// CHECK: %[[P16:.*]] = arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xf16>
// CHECK-NOT: math.fma
// CHECK: %[[NEWACC:.*]] = tile.mma %[[P16]], %[[V]], %{{.*}} : tensor<16x32xf16>, tensor<32x64xf16> -> tensor<16x64xf32>
// CHECK: %[[OLD:.*]] = arith.mulf %[[ALPHA:.*]], %[[L]] : tensor<16xf32>
// CHECK: %[[OLDCOL:.*]] = tile.expand_dims %[[OLD]] axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
// CHECK: %[[OLD8:.*]] = tile.broadcast %[[OLDCOL]] : tensor<16x1xf32> -> tensor<16x8xf32>
// CHECK: %[[SUMS:.*]] = tile.mma %[[P16]], %[[ONES:.*]], %[[OLD8]] : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
// CHECK: %[[NEWSUM:.*]] = tile.reduce max %[[SUMS]] axis = 1 uniform : tensor<16x8xf32> -> tensor<16xf32>
// CHECK: return %{{.*}}, %[[NEWSUM]], %[[NEWACC]]
func.func @sum_by_mma(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>,
                      %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 sum_by_mma %s, %v, %m, %l, %acc
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// Eager with sum_by_mma: the same sum, onto alpha * l (the old weight).
// CHECK-LABEL: func.func @sum_by_mma_eager
// CHECK-NOT: tile.reduce sum
// CHECK: %[[W:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: %[[WCOL:.*]] = tile.expand_dims %[[W]] axis = 1
// CHECK: %[[W8:.*]] = tile.broadcast %[[WCOL]] : tensor<16x1xf32> -> tensor<16x8xf32>
// CHECK: %[[SUMS:.*]] = tile.mma %{{.*}}, %{{.*}}, %[[W8]] : tensor<16x32xbf16>, tensor<32x8xbf16> -> tensor<16x8xf32>
// CHECK: tile.reduce max %[[SUMS]] axis = 1 uniform
func.func @sum_by_mma_eager(%s: tensor<16x32xf32>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>,
                            %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %m1, %l1, %acc1 = tile.online_softmax eager sum_by_mma %s, %v, %m, %l, %acc
      : tensor<16x32xf32>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// CHECK-LABEL: func.func @finalize
// CHECK: %[[COL:.*]] = tile.expand_dims %arg1 axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
// CHECK: %[[ROWS:.*]] = tile.broadcast %[[COL]] : tensor<16x1xf32> -> tensor<16x64xf32>
// CHECK: %[[ISZERO:.*]] = arith.cmpf oeq, %[[ROWS]]
// CHECK: %[[Q:.*]] = arith.divf %arg0, %[[ROWS]]
// CHECK: arith.select %[[ISZERO]], %{{.*}}, %[[Q]]
func.func @finalize(%acc: tensor<16x64xf32>, %l: tensor<16xf32>) -> tensor<16x64xf32> {
  %o = tile.online_softmax_finalize %acc, %l : tensor<16x64xf32>, tensor<16xf32>
  return %o : tensor<16x64xf32>
}

// -----

// Unmasked scores (an MMA's, scaled by a scalar, soft-capped) taking 128
// registers per thread and twice the accumulator's: every row has a finite
// max, so the guard against rows without a key is left out and the new max
// itself is the exponent's base.
// CHECK-LABEL: func.func @unmasked
// CHECK: %[[NEWMAX:.*]] = arith.maximumf
// CHECK-NOT: arith.cmpf
// CHECK-NOT: arith.select
// CHECK: arith.subf %{{.*}}, %[[NEWMAX]] : tensor<32xf32>
// CHECK: tile.expand_dims %[[NEWMAX]] axis = 1
// CHECK: return %[[NEWMAX]]
func.func @unmasked(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>,
                    %m: tensor<32xf32>, %l: tensor<32xf32>, %acc: tensor<32x64xf32>, %c: f32)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) attributes {tile.num_warps = 1 : i32} {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %cap = arith.constant dense<30.0> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %cs = tile.splat %c : f32 -> tensor<32x128xf32>
  %scaled = arith.mulf %s, %cs : tensor<32x128xf32>
  %t = math.tanh %scaled : tensor<32x128xf32>
  %capped = arith.mulf %t, %cap : tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %capped, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

// -----

// Scores that may hold a mask keep the guard: selected with -inf, or with a
// tensor added (a bias may be -inf).
// CHECK-LABEL: func.func @masked
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK-LABEL: func.func @biased
// CHECK: arith.cmpf oeq
// CHECK: arith.select
func.func @masked(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>,
                  %visible: tensor<32x128xi1>, %m: tensor<32xf32>, %l: tensor<32xf32>,
                  %acc: tensor<32x64xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) attributes {tile.num_warps = 1 : i32} {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %masked = arith.select %visible, %s, %ninf : tensor<32x128xi1>, tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %masked, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}
func.func @biased(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>,
                  %bias: tensor<32x128xf32>, %m: tensor<32xf32>, %l: tensor<32xf32>,
                  %acc: tensor<32x64xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) attributes {tile.num_warps = 1 : i32} {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %biased = arith.addf %s, %bias : tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %biased, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

// -----

// Unmasked scores keep the guard where they take fewer registers: below
// twice the accumulator's (32 x 128 against 32 x 128), below 128 per thread
// (32 x 128 on 2 warps: 64), or without the kernel's warp count. ptxas 13
// spills fa2 at HEAD_DIM 128 causal on sm_80 and flash_attn at HEAD_DIM 80
// on sm_90 without it.
// CHECK-LABEL: func.func @large_accumulator
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK-LABEL: func.func @few_scores_per_thread
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK-LABEL: func.func @no_warps
// CHECK: arith.cmpf oeq
// CHECK: arith.select
func.func @large_accumulator(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x128xf16>,
                             %m: tensor<32xf32>, %l: tensor<32xf32>, %acc: tensor<32x128xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>) attributes {tile.num_warps = 1 : i32} {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x128xf16>, tensor<32xf32>, tensor<32x128xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>
}
func.func @few_scores_per_thread(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>,
                                 %m: tensor<32xf32>, %l: tensor<32xf32>, %acc: tensor<32x64xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) attributes {tile.num_warps = 2 : i32} {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}
func.func @no_warps(%q: tensor<32x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>,
                    %m: tensor<32xf32>, %l: tensor<32xf32>, %acc: tensor<32x64xf32>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) {
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16>, tensor<128x64xf16> -> tensor<32x128xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %m, %l, %acc
      : tensor<32x128xf32>, tensor<128x64xf16>, tensor<32xf32>, tensor<32x64xf32>
  return %m1, %l1, %acc1 : tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>
}

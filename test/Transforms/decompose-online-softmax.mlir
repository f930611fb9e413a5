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

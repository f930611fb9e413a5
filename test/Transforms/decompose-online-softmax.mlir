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
// CHECK: %[[ALPHA:.*]] = math.exp2 %[[MDIFF]] : tensor<16xf32>
// CHECK: tile.expand_dims %[[BASE]] axis = 1
// CHECK: %[[SDIFF:.*]] = arith.subf %[[S]]
// CHECK: %[[P:.*]] = math.exp2 %[[SDIFF]] : tensor<16x32xf32>
// CHECK: %[[OLD:.*]] = arith.mulf %[[ALPHA]], %[[L]]
// CHECK: %[[ROWSUM:.*]] = tile.reduce sum %[[P]] axis = 1
// CHECK: %[[NEWSUM:.*]] = arith.addf %[[OLD]], %[[ROWSUM]]
// CHECK: %[[P16:.*]] = arith.truncf %[[P]] : tensor<16x32xf32> to tensor<16x32xf16>
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

// FlashAttention-1's eager form: base-e exponentials, and the accumulator is
// renormalized by the new row sum every step (guarded against rows with sum 0).
// CHECK-LABEL: func.func @eager
// CHECK: math.exp %{{.*}} : tensor<16xf32>
// CHECK: math.exp %{{.*}} : tensor<16x32xf32>
// CHECK: %[[OLD:.*]] = arith.mulf
// CHECK: %[[NEWSUM:.*]] = arith.addf %[[OLD]]
// CHECK: %[[P16:.*]] = arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xbf16>
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

// RUN: flash-opt %s --split-input-file --tile-split-masked-loops --canonicalize | FileCheck %s

// What tile-split-masked-loops leaves alone, or splits without skipping.
// Each loop masks the scores of keys [n, n + 16) for query rows 0..15.

// A comparison it does not analyse (equality): one loop, as it was.
// CHECK-LABEL: func.func @equality(
// CHECK:         scf.for
// CHECK-NOT:     tile.mask_split
// CHECK-NOT:     scf.for
func.func @equality(%k: tensor<16x16xf32>, %v: tensor<16x16xf16>, %ub: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<0.0> : tensor<16x16xf32>
  %rows = tile.iota : tensor<16xi32>
  %r:3 = scf.for %n = %c0 to %ub step %c16 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>) : i32 {
    %iota = tile.iota : tensor<16xi32>
    %base = tile.splat %n : i32 -> tensor<16xi32>
    %cols = arith.addi %base, %iota : tensor<16xi32>
    %c2 = tile.expand_dims %cols axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %cb = tile.broadcast %c2 : tensor<1x16xi32> -> tensor<16x16xi32>
    %rb = tile.broadcast %r2 : tensor<16x1xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi eq, %cb, %rb : tensor<16x16xi32>
    %s = arith.select %mask, %k, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
    %nm, %nl, %na = tile.online_softmax deferred exp2 %s, %v, %m, %l, %a : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16xf32>, tensor<16x16xf32>
    scf.yield %nm, %nl, %na : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>
  }
  return %r#2 : tensor<16x16xf32>
}

// -----

// Scores masked to 0, not -inf: a hidden block would still count; left alone.
// CHECK-LABEL: func.func @not_minus_infinity(
// CHECK:         scf.for
// CHECK-NOT:     tile.mask_split
// CHECK-NOT:     scf.for
func.func @not_minus_infinity(%k: tensor<16x16xf32>, %v: tensor<16x16xf16>, %ub: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %rows = tile.iota : tensor<16xi32>
  %r:3 = scf.for %n = %c0 to %ub step %c16 iter_args(%m = %m0, %l = %l0, %a = %zero) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>) : i32 {
    %iota = tile.iota : tensor<16xi32>
    %base = tile.splat %n : i32 -> tensor<16xi32>
    %cols = arith.addi %base, %iota : tensor<16xi32>
    %c2 = tile.expand_dims %cols axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %cb = tile.broadcast %c2 : tensor<1x16xi32> -> tensor<16x16xi32>
    %rb = tile.broadcast %r2 : tensor<16x1xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sle, %cb, %rb : tensor<16x16xi32>
    %s = arith.select %mask, %k, %zero : tensor<16x16xi1>, tensor<16x16xf32>
    %nm, %nl, %na = tile.online_softmax deferred exp2 %s, %v, %m, %l, %a : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16xf32>, tensor<16x16xf32>
    scf.yield %nm, %nl, %na : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>
  }
  return %r#2 : tensor<16x16xf32>
}

// -----

// Causal, but the loop also counts its iterations (a carried value that is
// not the softmax state): hidden blocks are not the identity, so none is
// skipped. The loop is still split: unmasked blocks, then masked blocks up to
// the original end.
// CHECK-LABEL: func.func @carries_a_count(
// CHECK-SAME:      %[[UB:[^:]*]]: i32)
// CHECK:         %[[R:.*]]:4 = scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         }{{$}}
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[UB]] step
// CHECK:           arith.cmpi sle
// CHECK:         } {tile.mask_split}
func.func @carries_a_count(%k: tensor<16x16xf32>, %v: tensor<16x16xf16>, %ub: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<0.0> : tensor<16x16xf32>
  %rows = tile.iota : tensor<16xi32>
  %r:4 = scf.for %n = %c0 to %ub step %c16 iter_args(%m = %m0, %l = %l0, %a = %a0, %count = %c0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, i32) : i32 {
    %iota = tile.iota : tensor<16xi32>
    %base = tile.splat %n : i32 -> tensor<16xi32>
    %cols = arith.addi %base, %iota : tensor<16xi32>
    %c2 = tile.expand_dims %cols axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %cb = tile.broadcast %c2 : tensor<1x16xi32> -> tensor<16x16xi32>
    %rb = tile.broadcast %r2 : tensor<16x1xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sle, %cb, %rb : tensor<16x16xi32>
    %s = arith.select %mask, %k, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
    %nm, %nl, %na = tile.online_softmax deferred exp2 %s, %v, %m, %l, %a : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16xf32>, tensor<16x16xf32>
    %next = arith.addi %count, %c1 : i32
    scf.yield %nm, %nl, %na, %next : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, i32
  }
  return %r#3 : i32
}

// -----

// Columns that depend on n other than linearly (n * n): left alone.
// CHECK-LABEL: func.func @not_affine_in_n(
// CHECK:         scf.for
// CHECK-NOT:     tile.mask_split
// CHECK-NOT:     scf.for
func.func @not_affine_in_n(%k: tensor<16x16xf32>, %v: tensor<16x16xf16>, %ub: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<0.0> : tensor<16x16xf32>
  %rows = tile.iota : tensor<16xi32>
  %r:3 = scf.for %n = %c0 to %ub step %c16 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>) : i32 {
    %iota = tile.iota : tensor<16xi32>
    %sq = arith.muli %n, %n : i32
    %base = tile.splat %sq : i32 -> tensor<16xi32>
    %cols = arith.addi %base, %iota : tensor<16xi32>
    %c2 = tile.expand_dims %cols axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %cb = tile.broadcast %c2 : tensor<1x16xi32> -> tensor<16x16xi32>
    %rb = tile.broadcast %r2 : tensor<16x1xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sle, %cb, %rb : tensor<16x16xi32>
    %s = arith.select %mask, %k, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
    %nm, %nl, %na = tile.online_softmax deferred exp2 %s, %v, %m, %l, %a : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16xf32>, tensor<16x16xf32>
    scf.yield %nm, %nl, %na : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>
  }
  return %r#2 : tensor<16x16xf32>
}

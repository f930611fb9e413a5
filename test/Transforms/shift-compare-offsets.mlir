// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-shift-compare-offsets))' | FileCheck %s

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#cols = #tile.slice<0, #mma>

// The masked loop's causal comparison, `start_n + iota <= limit` with a
// per-row limit (64x1: 2 registers per thread, the columns 4):
// `iota <= limit - start_n`, the subtraction on the limit's tile,
// the columns without start_n (loop-invariant), and every other use of the
// offset columns left as it was.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:    %[[N:.*]]: i32, %[[LIM:.*]]: tensor<64x1xi32, #mma>)
// CHECK:         %[[IOTA:.*]] = tile.iota : tensor<16xi32, #cols>
// CHECK:         %[[COLS:.*]] = arith.addi %{{.*}}, %[[IOTA]]
// CHECK:         %[[NS:.*]] = tile.splat %[[N]] : i32 -> tensor<64x1xi32, #mma>
// CHECK:         %[[SHIFT:.*]] = arith.subi %[[LIM]], %[[NS]] : tensor<64x1xi32, #mma>
// CHECK:         %[[SHIFTB:.*]] = tile.broadcast %[[SHIFT]] : tensor<64x1xi32, #mma> -> tensor<64x16xi32, #mma>
// CHECK:         %[[X:.*]] = tile.expand_dims %[[IOTA]] axis = 0
// CHECK:         %[[XB:.*]] = tile.broadcast %[[X]] : tensor<1x16xi32, #mma> -> tensor<64x16xi32, #mma>
// CHECK:         %[[M:.*]] = arith.cmpi sle, %[[XB]], %[[SHIFTB]] : tensor<64x16xi32, #mma>
// CHECK:         return %[[M]], %[[COLS]]
func.func @causal(%n: i32, %lim: tensor<64x1xi32, #mma>)
    -> (tensor<64x16xi1, #mma>, tensor<16xi32, #cols>) {
  %iota = tile.iota : tensor<16xi32, #cols>
  %ns = tile.splat %n : i32 -> tensor<16xi32, #cols>
  %cols = arith.addi %ns, %iota : tensor<16xi32, #cols>
  %e = tile.expand_dims %cols axis = 0 : tensor<16xi32, #cols> -> tensor<1x16xi32, #mma>
  %eb = tile.broadcast %e : tensor<1x16xi32, #mma> -> tensor<64x16xi32, #mma>
  %lb = tile.broadcast %lim : tensor<64x1xi32, #mma> -> tensor<64x16xi32, #mma>
  %m = arith.cmpi sle, %eb, %lb : tensor<64x16xi32, #mma>
  return %m, %cols : tensor<64x16xi1, #mma>, tensor<16xi32, #cols>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#cols = #tile.slice<0, #mma>

// The offset columns on the right-hand side: the predicate is kept, the
// shifted limit on the left.
// CHECK-LABEL: func.func @swapped(
// CHECK:         %[[SHIFT:.*]] = arith.subi
// CHECK:         %[[SHIFTB:.*]] = tile.broadcast %[[SHIFT]]
// CHECK:         %[[XB:.*]] = tile.broadcast
// CHECK:         arith.cmpi sge, %[[SHIFTB]], %[[XB]]
func.func @swapped(%n: i32, %lim: tensor<64x1xi32, #mma>) -> tensor<64x16xi1, #mma> {
  %iota = tile.iota : tensor<16xi32, #cols>
  %ns = tile.splat %n : i32 -> tensor<16xi32, #cols>
  %cols = arith.addi %iota, %ns : tensor<16xi32, #cols>
  %e = tile.expand_dims %cols axis = 0 : tensor<16xi32, #cols> -> tensor<1x16xi32, #mma>
  %eb = tile.broadcast %e : tensor<1x16xi32, #mma> -> tensor<64x16xi32, #mma>
  %lb = tile.broadcast %lim : tensor<64x1xi32, #mma> -> tensor<64x16xi32, #mma>
  %m = arith.cmpi sge, %lb, %eb : tensor<64x16xi32, #mma>
  return %m : tensor<64x16xi1, #mma>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#cols = #tile.slice<0, #mma>

// Left alone: a scalar limit (the key tail: the columns would be held in
// registers across the loop for one addition each), an unsigned comparison,
// a limit with as many registers as the columns, and tiles without a layout
// (the pass counts registers).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     arith.subi
// CHECK:         return
func.func @kept(%n: i32, %nk: i32, %lim: tensor<64x1xi32, #mma>, %full: tensor<64x16xi32, #mma>,
                %plain: tensor<16xi32>)
    -> (tensor<64x16xi1, #mma>, tensor<64x16xi1, #mma>, tensor<64x16xi1, #mma>, tensor<16xi1>) {
  %iota = tile.iota : tensor<16xi32, #cols>
  %ns = tile.splat %n : i32 -> tensor<16xi32, #cols>
  %cols = arith.addi %ns, %iota : tensor<16xi32, #cols>
  %e = tile.expand_dims %cols axis = 0 : tensor<16xi32, #cols> -> tensor<1x16xi32, #mma>
  %eb = tile.broadcast %e : tensor<1x16xi32, #mma> -> tensor<64x16xi32, #mma>
  %nks = tile.splat %nk : i32 -> tensor<64x1xi32, #mma>
  %nkb = tile.broadcast %nks : tensor<64x1xi32, #mma> -> tensor<64x16xi32, #mma>
  %tail = arith.cmpi slt, %eb, %nkb : tensor<64x16xi32, #mma>
  %lb = tile.broadcast %lim : tensor<64x1xi32, #mma> -> tensor<64x16xi32, #mma>
  %unsigned = arith.cmpi ule, %eb, %lb : tensor<64x16xi32, #mma>
  %same = arith.cmpi sle, %eb, %full : tensor<64x16xi32, #mma>
  %piota = tile.iota : tensor<16xi32>
  %pns = tile.splat %n : i32 -> tensor<16xi32>
  %pcols = arith.addi %pns, %piota : tensor<16xi32>
  %nolayout = arith.cmpi sle, %pcols, %plain : tensor<16xi32>
  return %tail, %unsigned, %same, %nolayout : tensor<64x16xi1, #mma>, tensor<64x16xi1, #mma>, tensor<64x16xi1, #mma>, tensor<16xi1>
}

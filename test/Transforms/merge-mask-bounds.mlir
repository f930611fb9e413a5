// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-merge-mask-bounds))' | FileCheck %s

// Causal with the key tail, `col < Nk && col <= row limit`: one comparison
// with the per-row limit min(limit, Nk - 1), computed at the limit's shape
// (64x1), not per score.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:    %[[NK:.*]]: i32, %[[COL:.*]]: tensor<1x16xi32>, %[[LIM:.*]]: tensor<64x1xi32>)
// CHECK:         %[[NK1:.*]] = arith.subi %[[NK]], %c1_i32 : i32
// CHECK:         %[[NKS:.*]] = tile.splat %[[NK1]] : i32 -> tensor<64x1xi32>
// CHECK:         %[[MIN:.*]] = arith.minsi %[[LIM]], %[[NKS]] : tensor<64x1xi32>
// CHECK:         %[[MINB:.*]] = tile.broadcast %[[MIN]] : tensor<64x1xi32> -> tensor<64x16xi32>
// CHECK:         %[[COLB:.*]] = tile.broadcast %[[COL]] : tensor<1x16xi32> -> tensor<64x16xi32>
// CHECK:         %[[M:.*]] = arith.cmpi sle, %[[COLB]], %[[MINB]] : tensor<64x16xi32>
// CHECK-NOT:     arith.andi
// CHECK:         return %[[M]]
func.func @causal(%nk: i32, %col: tensor<1x16xi32>, %lim: tensor<64x1xi32>) -> tensor<64x16xi1> {
  %nks = tile.splat %nk : i32 -> tensor<1x16xi32>
  %tail = arith.cmpi slt, %col, %nks : tensor<1x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<64x16xi32>
  %lb = tile.broadcast %lim : tensor<64x1xi32> -> tensor<64x16xi32>
  %diag = arith.cmpi sle, %cb, %lb : tensor<64x16xi32>
  %tb = tile.broadcast %tail : tensor<1x16xi1> -> tensor<64x16xi1>
  %m = arith.andi %tb, %diag : tensor<64x16xi1>
  return %m : tensor<64x16xi1>
}

// -----

// Sliding window: the subject is bounded from both sides by per-row limits
// (a band), so the two upper bounds (the tail and `hi >= col`) stay as
// written: their merged limit would be a third per-row value beside the
// lower one.
// CHECK-LABEL: func.func @window(
// CHECK-NOT:     arith.minsi
// CHECK:         %[[TAIL:.*]] = arith.cmpi slt
// CHECK:         %[[LEFT:.*]] = arith.cmpi sge
// CHECK:         %[[RIGHT:.*]] = arith.cmpi sge
// CHECK:         %[[A:.*]] = arith.andi %{{.*}}, %[[LEFT]]
// CHECK:         %[[M:.*]] = arith.andi %[[A]], %[[RIGHT]]
// CHECK-NOT:     arith.minsi
// CHECK:         return %[[M]]
func.func @window(%nk: i32, %col: tensor<1x16xi32>, %lo: tensor<64x1xi32>, %hi: tensor<64x1xi32>) -> tensor<64x16xi1> {
  %nks = tile.splat %nk : i32 -> tensor<1x16xi32>
  %tail = arith.cmpi slt, %col, %nks : tensor<1x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<64x16xi32>
  %lob = tile.broadcast %lo : tensor<64x1xi32> -> tensor<64x16xi32>
  %hib = tile.broadcast %hi : tensor<64x1xi32> -> tensor<64x16xi32>
  %left = arith.cmpi sge, %cb, %lob : tensor<64x16xi32>
  %right = arith.cmpi sge, %hib, %cb : tensor<64x16xi32>
  %tb = tile.broadcast %tail : tensor<1x16xi1> -> tensor<64x16xi1>
  %a = arith.andi %tb, %left : tensor<64x16xi1>
  %m = arith.andi %a, %right : tensor<64x16xi1>
  return %m : tensor<64x16xi1>
}

// -----

// A band whose lower side is a constant, `col >= 0`: no per-row value
// beside the merged upper limit, so the upper bounds merge as in @causal
// and the constant comparison stays.
// CHECK-LABEL: func.func @band_constant_lower(
// CHECK-SAME:    %[[NK:.*]]: i32, %[[COL:.*]]: tensor<1x16xi32>, %[[HI:.*]]: tensor<64x1xi32>)
// CHECK:         %[[LEFT:.*]] = arith.cmpi sge, %{{.*}}, %cst : tensor<64x16xi32>
// CHECK:         %[[NK1:.*]] = arith.subi %[[NK]], %c1_i32 : i32
// CHECK:         %[[NKS:.*]] = tile.splat %[[NK1]] : i32 -> tensor<64x1xi32>
// CHECK:         %[[MIN:.*]] = arith.minsi %[[HI]], %[[NKS]] : tensor<64x1xi32>
// CHECK:         %[[MINB:.*]] = tile.broadcast %[[MIN]] : tensor<64x1xi32> -> tensor<64x16xi32>
// CHECK:         %[[UPPER:.*]] = arith.cmpi sle, %{{.*}}, %[[MINB]] : tensor<64x16xi32>
// CHECK:         %[[M:.*]] = arith.andi %[[UPPER]], %[[LEFT]] : tensor<64x16xi1>
// CHECK-NOT:     arith.andi
// CHECK:         return %[[M]]
func.func @band_constant_lower(%nk: i32, %col: tensor<1x16xi32>, %hi: tensor<64x1xi32>) -> tensor<64x16xi1> {
  %zero = arith.constant dense<0> : tensor<64x16xi32>
  %nks = tile.splat %nk : i32 -> tensor<1x16xi32>
  %tail = arith.cmpi slt, %col, %nks : tensor<1x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<64x16xi32>
  %hib = tile.broadcast %hi : tensor<64x1xi32> -> tensor<64x16xi32>
  %left = arith.cmpi sge, %cb, %zero : tensor<64x16xi32>
  %right = arith.cmpi sge, %hib, %cb : tensor<64x16xi32>
  %tb = tile.broadcast %tail : tensor<1x16xi1> -> tensor<64x16xi1>
  %a = arith.andi %tb, %left : tensor<64x16xi1>
  %m = arith.andi %a, %right : tensor<64x16xi1>
  return %m : tensor<64x16xi1>
}

// -----

// A band whose upper bounds are all scalars, `col < Nk && col < 40`, beside
// a per-row lower limit: their merged limit is one scalar, min(Nk - 1, 39),
// and the per-row comparison stays.
// CHECK-LABEL: func.func @band_scalar_upper(
// CHECK-SAME:    %[[NK:.*]]: i32, %[[COL:.*]]: tensor<1x16xi32>, %[[LO:.*]]: tensor<64x1xi32>)
// CHECK:         %[[LEFT:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<64x16xi32>
// CHECK:         %[[NK1:.*]] = arith.subi %[[NK]], %c1_i32 : i32
// CHECK:         %[[MIN:.*]] = arith.minsi %[[NK1]], %c39_i32 : i32
// CHECK:         %[[MINS:.*]] = tile.splat %[[MIN]] : i32 -> tensor<64x16xi32>
// CHECK:         %[[UPPER:.*]] = arith.cmpi sle, %{{.*}}, %[[MINS]] : tensor<64x16xi32>
// CHECK:         %[[M:.*]] = arith.andi %[[UPPER]], %[[LEFT]] : tensor<64x16xi1>
// CHECK-NOT:     arith.andi
// CHECK:         return %[[M]]
func.func @band_scalar_upper(%nk: i32, %col: tensor<1x16xi32>, %lo: tensor<64x1xi32>) -> tensor<64x16xi1> {
  %c40 = arith.constant dense<40> : tensor<1x16xi32>
  %nks = tile.splat %nk : i32 -> tensor<1x16xi32>
  %tail = arith.cmpi slt, %col, %nks : tensor<1x16xi32>
  %cap = arith.cmpi slt, %col, %c40 : tensor<1x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<64x16xi32>
  %lob = tile.broadcast %lo : tensor<64x1xi32> -> tensor<64x16xi32>
  %left = arith.cmpi sge, %cb, %lob : tensor<64x16xi32>
  %tc = arith.andi %tail, %cap : tensor<1x16xi1>
  %tb = tile.broadcast %tc : tensor<1x16xi1> -> tensor<64x16xi1>
  %m = arith.andi %tb, %left : tensor<64x16xi1>
  return %m : tensor<64x16xi1>
}

// -----

// Prefix-LM, `col <= limit || col < 24`: a disjunction keeps the loosest
// upper bound, max(limit, 23).
// CHECK-LABEL: func.func @prefix(
// CHECK-SAME:    %[[COL:.*]]: tensor<64x16xi32>, %[[LIM:.*]]: tensor<64x1xi32>)
// CHECK:         %[[C23:.*]] = arith.constant dense<23> : tensor<64x1xi32>
// CHECK:         %[[MAX:.*]] = arith.maxsi %[[LIM]], %[[C23]]
// CHECK:         %[[MAXB:.*]] = tile.broadcast %[[MAX]]
// CHECK:         %[[M:.*]] = arith.cmpi sle, %[[COL]], %[[MAXB]]
// CHECK-NOT:     arith.ori
// CHECK:         return %[[M]]
func.func @prefix(%col: tensor<64x16xi32>, %lim: tensor<64x1xi32>) -> tensor<64x16xi1> {
  %c24 = arith.constant dense<24> : tensor<64x16xi32>
  %lb = tile.broadcast %lim : tensor<64x1xi32> -> tensor<64x16xi32>
  %diag = arith.cmpi sle, %col, %lb : tensor<64x16xi32>
  %pre = arith.cmpi slt, %col, %c24 : tensor<64x16xi32>
  %m = arith.ori %diag, %pre : tensor<64x16xi1>
  return %m : tensor<64x16xi1>
}

// -----

// Lower bounds, `col >= a && col > b`: col >= max(a, b + 1), on scalars.
// CHECK-LABEL: func.func @lower(
// CHECK-SAME:    %[[A:.*]]: i32, %[[B:.*]]: i32, %[[COL:.*]]: tensor<16xi32>)
// CHECK:         %[[B1:.*]] = arith.addi %[[B]], %c1_i32 : i32
// CHECK:         %[[MAX:.*]] = arith.maxsi %[[A]], %[[B1]] : i32
// CHECK:         %[[S:.*]] = tile.splat %[[MAX]] : i32 -> tensor<16xi32>
// CHECK:         %[[M:.*]] = arith.cmpi sge, %[[COL]], %[[S]]
// CHECK-NEXT:    return %[[M]]
func.func @lower(%a: i32, %b: i32, %col: tensor<16xi32>) -> tensor<16xi1> {
  %as = tile.splat %a : i32 -> tensor<16xi32>
  %bs = tile.splat %b : i32 -> tensor<16xi32>
  %x = arith.cmpi sge, %col, %as : tensor<16xi32>
  %y = arith.cmpi sgt, %col, %bs : tensor<16xi32>
  %m = arith.andi %x, %y : tensor<16xi1>
  return %m : tensor<16xi1>
}

// -----

// Left alone: bounds in opposite directions, unsigned and equality
// comparisons, limits that are tiles of different shapes (combined per
// score they would cost what they save), a strict bound whose inclusive form
// would wrap (`col < INT_MIN` holds for no column), and tiles with a layout
// (the pass runs before layouts are assigned).
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[MIN:.*]] = arith.constant dense<-2147483648>
// CHECK-NOT:     arith.minsi
// CHECK-NOT:     arith.maxsi
// CHECK:         %[[W:.*]] = arith.cmpi slt, %{{.*}}, %[[MIN]]
// CHECK-NEXT:    %[[WRAP:.*]] = arith.andi %[[W]],
// CHECK-NOT:     arith.minsi
// CHECK:         return {{.*}}, %[[WRAP]] :
func.func @kept(%col: tensor<64x16xi32>, %a: tensor<64x1xi32>, %b: tensor<64x16xi32>,
                %c: i32) -> (tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>) {
  %cs = tile.splat %c : i32 -> tensor<64x16xi32>
  %ab = tile.broadcast %a : tensor<64x1xi32> -> tensor<64x16xi32>
  %lo = arith.cmpi sge, %col, %cs : tensor<64x16xi32>
  %hi = arith.cmpi sle, %col, %ab : tensor<64x16xi32>
  %range = arith.andi %lo, %hi : tensor<64x16xi1>
  %u1 = arith.cmpi ult, %col, %cs : tensor<64x16xi32>
  %u2 = arith.cmpi ule, %col, %ab : tensor<64x16xi32>
  %unsigned = arith.andi %u1, %u2 : tensor<64x16xi1>
  %e = arith.cmpi ne, %col, %cs : tensor<64x16xi32>
  %equality = arith.andi %e, %hi : tensor<64x16xi1>
  %t = arith.cmpi sle, %col, %b : tensor<64x16xi32>
  %shapes = arith.andi %hi, %t : tensor<64x16xi1>
  %min = arith.constant dense<-2147483648> : tensor<64x16xi32>
  %w = arith.cmpi slt, %col, %min : tensor<64x16xi32>
  %wrap = arith.andi %w, %hi : tensor<64x16xi1>
  return %range, %unsigned, %equality, %shapes, %wrap : tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>, tensor<64x16xi1>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>

// CHECK-LABEL: func.func @layouts(
// CHECK-NOT:     arith.minsi
// CHECK:         arith.andi
func.func @layouts(%col: tensor<64x16xi32, #mma>, %a: tensor<64x16xi32, #mma>,
                   %b: tensor<64x16xi32, #mma>) -> tensor<64x16xi1, #mma> {
  %x = arith.cmpi slt, %col, %a : tensor<64x16xi32, #mma>
  %y = arith.cmpi sle, %col, %b : tensor<64x16xi32, #mma>
  %m = arith.andi %x, %y : tensor<64x16xi1, #mma>
  return %m : tensor<64x16xi1, #mma>
}

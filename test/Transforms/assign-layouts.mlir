// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-assign-layouts))' | FileCheck %s

// FlashAttention-2's layouts: warps along M only, values covering BLOCK_M;
// Q and K loaded straight into their operand layouts (K transposed), row
// statistics as slices, and exactly one conversion: P from the accumulator
// layout into the A-operand layout.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[B:.*]] = #tile.dot_op<1, #[[MMA]]>
// CHECK-DAG: #[[BT:.*]] = #tile.dot_op<1, #[[MMA]], transposed = true>
// CHECK-DAG: #[[ROWS:.*]] = #tile.slice<1, #[[MMA]]>
// CHECK-LABEL: func.func @attention
// CHECK: %[[Q:.*]] = tile.load {{.*}} -> tensor<128x64xf16, #[[A]]>
// CHECK: scf.for {{.*}} -> (tensor<128xf32, #[[ROWS]]>, tensor<128x64xf32, #[[MMA]]>)
// CHECK:   %[[K:.*]] = tile.load {{.*}} -> tensor<64x64xf16, #[[BT]]>
// CHECK:   %[[V:.*]] = tile.load {{.*}} -> tensor<64x64xf16, #[[B]]>
// CHECK:   %[[S:.*]] = tile.mma %[[Q]], %[[K]], {{.*}} {transpose_b} {{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   tile.reduce max %[[S]] axis = 1 : tensor<128x64xf32, #[[MMA]]> -> tensor<128xf32, #[[ROWS]]>
// CHECK:   tile.expand_dims {{.*}} -> tensor<128x1xf32, #[[MMA]]>
// CHECK:   tile.broadcast {{.*}} : tensor<128x1xf32, #[[MMA]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   %[[P:.*]] = arith.truncf {{.*}} to tensor<128x64xf16, #[[MMA]]>
// CHECK:   %[[PA:.*]] = tile.convert_layout %[[P]] : tensor<128x64xf16, #[[MMA]]> -> tensor<128x64xf16, #[[A]]>
// CHECK:   tile.mma %[[PA]], %[[V]], {{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return
func.func @attention(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                     %V: !tile.global<[N, 64], f16>, %n: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%m = %ninf, %acc = %zero)
      -> (tensor<128xf32>, tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
    %v = tile.load %V[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
    %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %bm = tile.reduce max %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %m2 = arith.maximumf %m, %bm : tensor<128xf32>
    %col = tile.expand_dims %m2 axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %b = tile.broadcast %col : tensor<128x1xf32> -> tensor<128x64xf32>
    %d = arith.subf %s, %b : tensor<128x64xf32>
    %p = math.exp2 %d : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %acc2 = tile.mma %p16, %v, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    scf.yield %m2, %acc2 : tensor<128xf32>, tensor<128x64xf32>
  }
  return
}

// -----

// A kernel without MMA gets a blocked layout with 4 contiguous f32 per
// thread; its row reductions and the vectors built from an iota get slices.
// CHECK-DAG: #[[BLOCKED:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [2, 1], order = [1, 0]>
// CHECK-DAG: #[[R:.*]] = #tile.slice<1, #[[BLOCKED]]>
// CHECK-DAG: #[[C:.*]] = #tile.slice<0, #[[BLOCKED]]>
// CHECK-LABEL: func.func @softmax_rows
// CHECK: tile.load {{.*}} -> tensor<16x128xf32, #[[BLOCKED]]>
// CHECK: tile.reduce max {{.*}} -> tensor<16xf32, #[[R]]>
// CHECK: tile.iota : tensor<128xi32, #[[C]]>
// CHECK-NOT: tile.convert_layout
func.func @softmax_rows(%X: !tile.global<[R, C], f32>, %c: i32) attributes {tile.num_warps = 2 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[R, C], f32> -> tensor<16x128xf32>
  %mx = tile.reduce max %x axis = 1 : tensor<16x128xf32> -> tensor<16xf32>
  %col = tile.expand_dims %mx axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
  %b = tile.broadcast %col : tensor<16x1xf32> -> tensor<16x128xf32>
  %cols = tile.iota : tensor<128xi32>
  %limit = tile.splat %c : i32 -> tensor<128xi32>
  %in = arith.cmpi slt, %cols, %limit : tensor<128xi32>
  %row = tile.expand_dims %in axis = 0 : tensor<128xi1> -> tensor<1x128xi1>
  %mask = tile.broadcast %row : tensor<1x128xi1> -> tensor<16x128xi1>
  %y = arith.subf %x, %b : tensor<16x128xf32>
  %z = arith.select %mask, %y, %x : tensor<16x128xi1>, tensor<16x128xf32>
  tile.store %z, %X[%c0, %c0] window [0, 1] : tensor<16x128xf32> -> !tile.global<[R, C], f32>
  return
}

// -----

// The kernel's own TiledMMA wins over the default; an accumulator used as an
// operand is converted at that use only.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [2, 2, 1], values = [1, 2, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[B:.*]] = #tile.dot_op<1, #[[MMA]]>
// CHECK-LABEL: func.func @chosen
// CHECK: %[[G:.*]] = tile.load {{.*}} -> tensor<64x64xf16, #[[A]]>
// CHECK: %[[GB:.*]] = tile.convert_layout %[[G]] {{.*}} -> tensor<64x64xf16, #[[B]]>
// CHECK: %[[C:.*]] = tile.mma %[[G]], %[[GB]], {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: %[[H:.*]] = arith.truncf %[[C]] {{.*}} to tensor<64x64xf16, #[[MMA]]>
// CHECK: %[[HB:.*]] = tile.convert_layout %[[H]] {{.*}} -> tensor<64x64xf16, #[[B]]>
// CHECK: tile.mma %{{.*}}, %[[HB]]
func.func @chosen(%G: !tile.global<[64, 64], f16>, %R: !tile.global<[64, 64], f32>)
    attributes {tile.num_warps = 4 : i32,
                tile.mma_layout = #tile.mma<warps = [2, 2, 1], values = [1, 2, 1]>} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c = tile.mma %a, %a, %zero : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %c : tensor<64x64xf32> to tensor<64x64xf16>
  %d = tile.mma %a, %h, %zero : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  tile.store %d, %R[%c0, %c0] window [0, 1] : tensor<64x64xf32> -> !tile.global<[64, 64], f32>
  return
}

// -----

// Functions that are not kernels (no tile.num_warps) are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK: tensor<16x16xf32>)
func.func @not_a_kernel(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %y = arith.addf %x, %x : tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// Paged attention's K block: rows gathered through a block table. The
// index tiles of the staged (MMA operand) gather take the slice of the copy's
// chunk layout, so that each thread holds the rows it copies; the block-table
// load (a 1-D gather) shares its indices' class. The token numbers `n` also
// feed a column mask: the index arithmetic is split per use, so the mask's
// copy takes the columns' slice and nothing is converted.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[CHUNKS:.*]] = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[ROWS:.*]] = #tile.slice<1, #[[CHUNKS]]>
// CHECK-DAG: #[[COLS:.*]] = #tile.slice<0, #[[MMA]]>
// CHECK-DAG: #[[BT:.*]] = #tile.dot_op<1, #[[MMA]], transposed = true>
// CHECK-LABEL: func.func @paged
// CHECK:     %[[PAGE:.*]] = tile.load %{{.*}} gather [0] (%{{.*}} : tensor<64xi32, #[[ROWS]]>) {{.*}} -> tensor<64xi32, #[[ROWS]]>
// CHECK:     %[[SLOT:.*]] = arith.remsi {{.*}} : tensor<64xi32, #[[ROWS]]>
// CHECK:     tile.load %{{.*}} gather [0, 1] (%[[PAGE]], %[[SLOT]] : tensor<64xi32, #[[ROWS]]>, tensor<64xi32, #[[ROWS]]>) {{.*}} -> tensor<64x64xf16, #[[BT]]>
// CHECK:     tile.expand_dims %{{.*}} axis = 0 : tensor<64xi32, #[[COLS]]> -> tensor<1x64xi32, #[[MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK:     return
func.func @paged(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[P, 16, 64], f16>,
                 %T: !tile.global<[MaxPages], i32>, %O: !tile.global<[64, 64], f32>,
                 %start: i32, %len: i32) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant dense<16> : tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %iota = tile.iota : tensor<64xi32>
  %s0 = tile.splat %start : i32 -> tensor<64xi32>
  %n = arith.addi %s0, %iota : tensor<64xi32>
  %pi = arith.divsi %n, %c16 : tensor<64xi32>
  %page = tile.load %T[%c0] window [] gather [0] (%pi : tensor<64xi32>) pad 0 : i32 : !tile.global<[MaxPages], i32> -> tensor<64xi32>
  %slot = arith.remsi %n, %c16 : tensor<64xi32>
  %k = tile.load %K[%c0, %c0, %c0] window [2] gather [0, 1] (%page, %slot : tensor<64xi32>, tensor<64xi32>)
      pad 0.0 : f16 : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %ncol = tile.expand_dims %n axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %lens = tile.splat %len : i32 -> tensor<1x64xi32>
  %in = arith.cmpi slt, %ncol, %lens : tensor<1x64xi32>
  %inb = tile.broadcast %in : tensor<1x64xi1> -> tensor<64x64xi1>
  %masked = arith.select %inb, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
  tile.store %masked, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32> -> !tile.global<[64, 64], f32>
  return
}

// -----

// A gather that cannot be staged (f32) keeps its layout; its index tile takes
// the slice of that layout along dim 1.
// CHECK-DAG: #[[BLOCKED:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[R:.*]] = #tile.slice<1, #[[BLOCKED]]>
// CHECK-LABEL: func.func @gather_rows
// CHECK: tile.load %{{.*}} gather [0] (%{{.*}} : tensor<32xi32, #[[R]]>) {{.*}} -> tensor<32x64xf32, #[[BLOCKED]]>
func.func @gather_rows(%X: !tile.global<[N, 64], f32>, %Y: !tile.global<[M, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant dense<3> : tensor<32xi32>
  %iota = tile.iota : tensor<32xi32>
  %rows = arith.muli %iota, %c3 : tensor<32xi32>
  %x = tile.load %X[%c0, %c0] window [1] gather [0] (%rows : tensor<32xi32>) pad 0.0 : f32 : !tile.global<[N, 64], f32> -> tensor<32x64xf32>
  tile.store %x, %Y[%c0, %c0] window [0, 1] : tensor<32x64xf32> -> !tile.global<[M, 64], f32>
  return
}

// -----

// A store's mask joins its value's class, whatever else it is computed
// from: a mask of the signs of an MMA operand is computed in the MMA layout
// (the operand converted to the A layout at the MMA), so that every thread
// holds the mask bits of the elements it writes.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-LABEL: func.func @masked_accumulator
// CHECK: %[[L:.*]] = tile.load {{.*}} -> tensor<64x64xf16, #[[MMA]]>
// CHECK: %[[LA:.*]] = tile.convert_layout %[[L]] : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #[[A]]>
// CHECK: %[[S:.*]] = tile.mma %[[LA]], {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: %[[M:.*]] = arith.cmpf ogt, %[[L]], {{.*}} : tensor<64x64xf16, #[[MMA]]>
// CHECK: tile.store %[[S]], {{.*}} mask %[[M]] : tensor<64x64xf32, #[[MMA]]>, tensor<64x64xi1, #[[MMA]]>
// CHECK: tile.atomic_add %[[S]], {{.*}} mask %[[M]] : tensor<64x64xf32, #[[MMA]]>, tensor<64x64xi1, #[[MMA]]>
func.func @masked_accumulator(%A: !tile.global<[N, 64], f16>, %O: !tile.global<[N, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zero16 = arith.constant dense<0.0> : tensor<64x64xf16>
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %a, %a, %zero {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %m = arith.cmpf ogt, %a, %zero16 : tensor<64x64xf16>
  tile.store %s, %O[%c0, %c0] window [0, 1] mask %m : tensor<64x64xf32>, tensor<64x64xi1> -> !tile.global<[N, 64], f32>
  tile.atomic_add %s, %O[%c0, %c0] window [0, 1] mask %m : tensor<64x64xf32>, tensor<64x64xi1> -> !tile.global<[N, 64], f32>
  return
}

// -----

// ALiBi: a per-head slope loaded as a [1, 1] tile and broadcast into the
// scores joins the scores' class and takes their MMA layout (size-1 dims
// broadcast into any layout: every thread holds the one element).
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-LABEL: func.func @alibi
// CHECK: %[[SLOPE:.*]] = tile.load {{.*}} -> tensor<1x1xf32, #[[MMA]]>
// CHECK: tile.broadcast %[[SLOPE]] : tensor<1x1xf32, #[[MMA]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK-NOT: tile.convert_layout
func.func @alibi(%Q: !tile.global<[N, 64], f16>, %S: !tile.global<[H, 1], f32>,
                 %O: !tile.global<[N, 64], f32>, %h: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  %slope = tile.load %S[%h, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[H, 1], f32> -> tensor<1x1xf32>
  %b = tile.broadcast %slope : tensor<1x1xf32> -> tensor<128x64xf32>
  %r = arith.addf %s, %b : tensor<128x64xf32>
  tile.store %r, %O[%c0, %c0] window [0, 1] : tensor<128x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// Single-token decode (one row) with row statistics: the row is padded to
// one 16-row atom, which all 4 warps hold (the rows of an accumulator that
// is reduced along them stay in one warp); the row max is a [1] slice.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[ROWS:.*]] = #tile.slice<1, #[[MMA]]>
// CHECK-LABEL: func.func @decode
// CHECK: tile.load {{.*}} -> tensor<1x64xf16, #[[A]]>
// CHECK: tile.mma {{.*}} -> tensor<1x64xf32, #[[MMA]]>
// CHECK: tile.reduce max {{.*}} -> tensor<1xf32, #[[ROWS]]>
// CHECK: tile.expand_dims {{.*}} -> tensor<1x1xf32, #[[MMA]]>
// CHECK-NOT: tile.convert_layout
func.func @decode(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                  %O: !tile.global<[N, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<1x64xf16>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<1x64xf16>, tensor<64x64xf16> -> tensor<1x64xf32>
  %m = tile.reduce max %s axis = 1 : tensor<1x64xf32> -> tensor<1xf32>
  %mc = tile.expand_dims %m axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %mb = tile.broadcast %mc : tensor<1x1xf32> -> tensor<1x64xf32>
  %d = arith.subf %s, %mb : tensor<1x64xf32>
  tile.store %d, %O[%c0, %c0] window [0, 1] : tensor<1x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// One row without row statistics (a matrix-vector product): no warp needs
// another's columns, so the 4 warps go along N and nothing is computed twice.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [1, 4, 1], values = [1, 1, 1]>
// CHECK-LABEL: func.func @one_row
// CHECK: tile.mma {{.*}} -> tensor<1x64xf32, #[[MMA]]>
func.func @one_row(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                   %O: !tile.global<[N, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<1x64xf16>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<1x64xf16>, tensor<64x64xf16> -> tensor<1x64xf32>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<1x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// 96 rows on 4 warps, no row statistics: six 16-row atoms split evenly
// over 2 warps along M (3 atoms each in registers), the other 2 warps go
// along N. A reduction of an MMA operand reads it in the accumulator layout
// (operand layouts have no slices).
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [2, 2, 1], values = [3, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[ROWS:.*]] = #tile.slice<1, #[[MMA]]>
// CHECK-LABEL: func.func @rows96
// CHECK: %[[Q:.*]] = tile.load {{.*}} -> tensor<96x64xf16, #[[A]]>
// CHECK: tile.mma {{.*}} -> tensor<96x64xf32, #[[MMA]]>
// CHECK: %[[QC:.*]] = tile.convert_layout %[[Q]] : tensor<96x64xf16, #[[A]]> -> tensor<96x64xf16, #[[MMA]]>
// CHECK: tile.reduce max %[[QC]] axis = 1 : tensor<96x64xf16, #[[MMA]]> -> tensor<96xf16, #[[ROWS]]>
func.func @rows96(%Q: !tile.global<[N, 64], f16>, %O: !tile.global<[N, 64], f32>,
                  %R: !tile.global<[N], f16>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<96x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<96x64xf16>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<96x64xf16>, tensor<64x64xf16> -> tensor<96x64xf32>
  %rs = tile.reduce max %q axis = 1 : tensor<96x64xf16> -> tensor<96xf16>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<96x64xf32> -> !tile.global<[N, 64], f32>
  tile.store %rs, %R[%c0] window [0] : tensor<96xf16> -> !tile.global<[N], f16>
  return
}

// -----

// Rank-3 tiles are blocked (4 f32 per thread along the last dim, lanes
// along the last two dims, warps along the first); a 2-D tile expanded
// into them takes their slice, so that neither side converts.
// CHECK-DAG: #[[B3:.*]] = #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [1, 2, 16], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
// CHECK-DAG: #[[S0:.*]] = #tile.slice<0, #[[B3]]>
// CHECK-LABEL: func.func @cube
// CHECK: tile.load {{.*}} -> tensor<2x8x64xf32, #[[B3]]>
// CHECK: tile.reduce sum {{.*}} axis = 0 : tensor<2x8x64xf32, #[[B3]]> -> tensor<8x64xf32, #[[S0]]>
// CHECK: tile.expand_dims {{.*}} : tensor<8x64xf32, #[[S0]]> -> tensor<1x8x64xf32, #[[B3]]>
// CHECK-NOT: tile.convert_layout
func.func @cube(%X: !tile.global<[A, B, C], f32>, %Y: !tile.global<[B, C], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0, %c0] window [0, 1, 2] pad 0.0 : f32 : !tile.global<[A, B, C], f32> -> tensor<2x8x64xf32>
  %y = tile.reduce sum %x axis = 0 : tensor<2x8x64xf32> -> tensor<8x64xf32>
  %ye = tile.expand_dims %y axis = 0 : tensor<8x64xf32> -> tensor<1x8x64xf32>
  %yb = tile.broadcast %ye : tensor<1x8x64xf32> -> tensor<2x8x64xf32>
  %z = arith.subf %x, %yb : tensor<2x8x64xf32>
  tile.store %z, %X[%c0, %c0, %c0] window [0, 1, 2] : tensor<2x8x64xf32> -> !tile.global<[A, B, C], f32>
  tile.store %y, %Y[%c0, %c0] window [0, 1] : tensor<8x64xf32> -> !tile.global<[B, C], f32>
  return
}

// -----

// 96 rows on 4 warps in attention (S becomes P, an A operand): all warps
// along M, 2 atoms each, the last step padded to 128 rows.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-LABEL: func.func @rows96_attention
// CHECK: tile.mma {{.*}} -> tensor<96x64xf32, #[[MMA]]>
func.func @rows96_attention(%Q: !tile.global<[N, 64], f16>, %O: !tile.global<[N, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<96x64xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<96x64xf16>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<96x64xf16>, tensor<64x64xf16> -> tensor<96x64xf32>
  %p = arith.truncf %s : tensor<96x64xf32> to tensor<96x64xf16>
  %o = tile.mma %p, %k, %zero : tensor<96x64xf16>, tensor<64x64xf16> -> tensor<96x64xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<96x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// FlashAttention-2's backward on 8 warps: the transposed scores k q^T (128
// keys) become the A operands of dv and dk, so their rows meet (all warps
// along M). dQ (64 query rows, 4 atoms) is only added into memory: it takes
// its own TiledMMA, warps along N, instead of computing each row twice;
// its operands follow it (ds^T converted, K read in dQ's B layout). The
// accumulator dv (128 rows) fits the kernel's layout.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[DQ:.*]] = #tile.mma<warps = [4, 2, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[AT_DQ:.*]] = #tile.dot_op<0, #[[DQ]], transposed = true>
// CHECK-DAG: #[[B_DQ:.*]] = #tile.dot_op<1, #[[DQ]]>
// CHECK-LABEL: func.func @backward
// CHECK:   %[[K:.*]] = tile.load {{.*}} -> tensor<128x64xf16, #[[A]]>
// CHECK:   %[[ST:.*]] = tile.mma %[[K]], {{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   %[[DS:.*]] = arith.truncf %[[ST]] {{.*}} to tensor<128x64xf16, #[[MMA]]>
// CHECK-DAG:   %[[DSA:.*]] = tile.convert_layout %[[DS]] : {{.*}} -> tensor<128x64xf16, #[[AT_DQ]]>
// CHECK-DAG:   %[[KB:.*]] = tile.convert_layout %[[K]] : {{.*}} -> tensor<128x64xf16, #[[B_DQ]]>
// CHECK:   %[[DQV:.*]] = tile.mma %[[DSA]], %[[KB]], {{.*}} {transpose_a} {{.*}} -> tensor<64x64xf32, #[[DQ]]>
// CHECK:   tile.atomic_add %[[DQV]], {{.*}} : tensor<64x64xf32, #[[DQ]]>
// CHECK:   tile.mma {{.*}} -> tensor<128x64xf32, #[[MMA]]>
func.func @backward(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                    %DQ: !tile.global<[N, 64], f32>) attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x64xf32>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %st = tile.mma %k, %q, %zero {transpose_b} : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
  %dq = tile.mma %ds, %k, %zq {transpose_a} : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<64x64xf32>
  tile.atomic_add %dq, %DQ[%c0, %c0] window [0, 1] : tensor<64x64xf32> -> !tile.global<[N, 64], f32>
  %dv = tile.mma %ds, %q, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  return
}

// -----

// 64 keys on 8 warps (a backward pass at HEAD_DIM 128): the transposed
// scores s^T, minus a per-query vector broadcast along the keys, become the
// A operand of dv. Never reduced along their rows, they take warps along N
// ([4, 2, 1]) rather than computing each row twice, and so does dv. The
// scores of the second kernel have a row maximum broadcast back into them
// (a forward pass): they keep all warps along M.
// CHECK-DAG: #[[OWN:.*]] = #tile.mma<warps = [4, 2, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[M8:.*]] = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
// CHECK-LABEL: func.func @replicated_rows
// CHECK: %[[ST:.*]] = tile.mma {{.*}} -> tensor<64x32xf32, #[[OWN]]>
// CHECK: tile.broadcast {{.*}} -> tensor<64x32xf32, #[[OWN]]>
// CHECK: tile.mma {{.*}} -> tensor<64x128xf32, #[[OWN]]>
func.func @replicated_rows(%Q: !tile.global<[N, 128], f16>, %L: !tile.global<[N], f32>,
                           %O: !tile.global<[N, 128], f32>)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %zs = arith.constant dense<0.0> : tensor<64x32xf32>
  %zo = arith.constant dense<0.0> : tensor<64x128xf32>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<32x128xf16>
  %l = tile.load %L[%c0] window [0] pad 0.0 : f32 : !tile.global<[N], f32> -> tensor<32xf32>
  %st = tile.mma %k, %q, %zs {transpose_b} : tensor<64x128xf16>, tensor<32x128xf16> -> tensor<64x32xf32>
  %lr = tile.expand_dims %l axis = 0 : tensor<32xf32> -> tensor<1x32xf32>
  %lb = tile.broadcast %lr : tensor<1x32xf32> -> tensor<64x32xf32>
  %d = arith.subf %st, %lb : tensor<64x32xf32>
  %p = arith.truncf %d : tensor<64x32xf32> to tensor<64x32xf16>
  %dv = tile.mma %p, %q, %zo : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  tile.store %dv, %O[%c0, %c0] window [0, 1] : tensor<64x128xf32> -> !tile.global<[N, 128], f32>
  return
}
// CHECK-LABEL: func.func @row_statistics
// CHECK: tile.mma {{.*}} -> tensor<64x32xf32, #[[M8]]>
// CHECK: tile.mma {{.*}} -> tensor<64x128xf32, #[[M8]]>
func.func @row_statistics(%Q: !tile.global<[N, 128], f16>, %O: !tile.global<[N, 128], f32>)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %zs = arith.constant dense<0.0> : tensor<64x32xf32>
  %zo = arith.constant dense<0.0> : tensor<64x128xf32>
  %k = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<32x128xf16>
  %s = tile.mma %k, %q, %zs {transpose_b} : tensor<64x128xf16>, tensor<32x128xf16> -> tensor<64x32xf32>
  %m = tile.reduce max %s axis = 1 : tensor<64x32xf32> -> tensor<64xf32>
  %mc = tile.expand_dims %m axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tile.broadcast %mc : tensor<64x1xf32> -> tensor<64x128xf32>
  %p = arith.truncf %s : tensor<64x32xf32> to tensor<64x32xf16>
  %acc = tile.mma %p, %q, %zo : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %r = arith.mulf %acc, %mb : tensor<64x128xf32>
  tile.store %r, %O[%c0, %c0] window [0, 1] : tensor<64x128xf32> -> !tile.global<[N, 128], f32>
  return
}

// -----

// On sm_90a (tile.wgmma on the module) attention's MMAs are warpgroup MMAs:
// warps along M in warpgroups, one atom per warp and step (128 rows on one
// warpgroup: two 64-row repeats, where mma.sync's layout gives each warp
// 32 consecutive rows); the row statistics are slices of that layout and
// P's conversion is the same register repack as with mma.sync.
// CHECK-DAG: #[[WG:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[WGA:.*]] = #tile.dot_op<0, #[[WG]]>
// CHECK-DAG: #[[WGB:.*]] = #tile.dot_op<1, #[[WG]]>
// CHECK-DAG: #[[WGBT:.*]] = #tile.dot_op<1, #[[WG]], transposed = true>
// CHECK-DAG: #[[WGROWS:.*]] = #tile.slice<1, #[[WG]]>
// CHECK-LABEL: func.func @attention_wgmma
// CHECK: tile.load {{.*}} -> tensor<128x64xf16, #[[WGA]]>
// CHECK:   tile.load {{.*}} -> tensor<128x64xf16, #[[WGBT]]>
// CHECK:   tile.load {{.*}} -> tensor<128x64xf16, #[[WGB]]>
// CHECK:   %[[S:.*]] = tile.mma {{.*}} {transpose_b} {{.*}} -> tensor<128x128xf32, #[[WG]]>
// CHECK:   tile.reduce max %[[S]] axis = 1 : tensor<128x128xf32, #[[WG]]> -> tensor<128xf32, #[[WGROWS]]>
// CHECK:   tile.convert_layout {{.*}} : tensor<128x128xf16, #[[WG]]> -> tensor<128x128xf16, #[[WGA]]>
// CHECK:   tile.mma {{.*}} -> tensor<128x64xf32, #[[WG]]>
module attributes {tile.wgmma} {
func.func @attention_wgmma(%Q: !tile.global<[N, 64], f16>, %K: !tile.global<[N, 64], f16>,
                           %V: !tile.global<[N, 64], f16>, %n: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %szero = arith.constant dense<0.0> : tensor<128x128xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %r:2 = scf.for %i = %c0 to %n step %c128 iter_args(%m = %ninf, %acc = %zero)
      -> (tensor<128xf32>, tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
    %v = tile.load %V[%i, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
    %s = tile.mma %q, %k, %szero {transpose_b} : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
    %bm = tile.reduce max %s axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %m2 = arith.maximumf %m, %bm : tensor<128xf32>
    %col = tile.expand_dims %m2 axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %b = tile.broadcast %col : tensor<128x1xf32> -> tensor<128x128xf32>
    %d = arith.subf %s, %b : tensor<128x128xf32>
    %p = math.exp2 %d : tensor<128x128xf32>
    %p16 = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf16>
    %acc2 = tile.mma %p16, %v, %acc : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    scf.yield %m2, %acc2 : tensor<128xf32>, tensor<128x64xf32>
  }
  return
}
}

// -----

// On sm_90a a kernel with an MMA that cannot be a warpgroup MMA (here B
// is computed, not loaded: wgmma reads B from shared memory) keeps the
// mma.sync layout for all its MMAs; so does one whose warps are not whole
// warpgroups.
// CHECK-DAG: #[[M4:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-DAG: #[[M2:.*]] = #tile.mma<warps = [2, 1, 1], values = [4, 1, 1]>
// CHECK-LABEL: func.func @wgmma_b_computed
// CHECK: tile.mma {{.*}} -> tensor<128x64xf32, #[[M4]]>
// CHECK-LABEL: func.func @wgmma_two_warps
// CHECK: tile.mma {{.*}} -> tensor<128x64xf32, #[[M2]]>
module attributes {tile.wgmma} {
func.func @wgmma_b_computed(%A: !tile.global<[N, 64], f16>, %B: !tile.global<[64, 64], f16>,
                            %O: !tile.global<[N, 64], f32>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16>
  %b2 = arith.addf %b, %b : tensor<64x64xf16>
  %c = tile.mma %a, %b2, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  tile.store %c, %O[%c0, %c0] window [0, 1] : tensor<128x64xf32> -> !tile.global<[N, 64], f32>
  return
}
func.func @wgmma_two_warps(%A: !tile.global<[N, 64], f16>, %B: !tile.global<[64, 64], f16>,
                           %O: !tile.global<[N, 64], f32>) attributes {tile.num_warps = 2 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16>
  %c = tile.mma %a, %b, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  tile.store %c, %O[%c0, %c0] window [0, 1] : tensor<128x64xf32> -> !tile.global<[N, 64], f32>
  return
}
}

// -----

// B rows longer than the 128-byte swizzle span are wgmma operands too
// (tile-stage-shared stores them as column blocks of the widest span that
// divides them): 256- and 512-byte rows (f16 head dims 128 and 256, 128-byte
// blocks) and 192-byte rows (96 columns, 64-byte blocks) take the warpgroup
// layout; 40 columns (80 bytes, an odd number of 16-byte chunks, which no
// swizzle span divides) keep mma.sync.
// CHECK-DAG: #[[WGW:.*]] = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[WG4:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-DAG: #[[SYNC:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-LABEL: func.func @wgmma_d128
// CHECK: tile.mma {{.*}} -> tensor<128x64xf32, #[[WGW]]>
// CHECK: tile.mma {{.*}} -> tensor<128x128xf32, #[[WGW]]>
// CHECK-LABEL: func.func @wgmma_d256
// CHECK: tile.mma {{.*}} -> tensor<128x256xf32, #[[WGW]]>
// CHECK-LABEL: func.func @wgmma_d96
// CHECK: tile.mma {{.*}} -> tensor<128x96xf32, #[[WG4]]>
// CHECK-LABEL: func.func @odd_chunks_keep_mma_sync
// CHECK: tile.mma {{.*}} -> tensor<128x40xf32, #[[SYNC]]>
module attributes {tile.wgmma} {
func.func @wgmma_d128(%Q: !tile.global<[N, 128], f16>, %K: !tile.global<[N, 128], f16>,
                      %V: !tile.global<[N, 128], f16>, %O: !tile.global<[N, 128], f32>)
    attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %szero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<128x128xf16>
  %k = tile.load %K[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16>
  %s = tile.mma %q, %k, %szero {transpose_b} : tensor<128x128xf16>, tensor<64x128xf16> -> tensor<128x64xf32>
  %p = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xf16>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x128xf32> -> !tile.global<[N, 128], f32>
  return
}
func.func @wgmma_d256(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 256], f16>,
                      %O: !tile.global<[N, 256], f32>) attributes {tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 256], f16> -> tensor<64x256xf16>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x256xf32> -> !tile.global<[N, 256], f32>
  return
}
func.func @wgmma_d96(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 96], f16>,
                     %O: !tile.global<[N, 96], f32>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x96xf32>
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 96], f16> -> tensor<64x96xf16>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16>, tensor<64x96xf16> -> tensor<128x96xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x96xf32> -> !tile.global<[N, 96], f32>
  return
}
func.func @odd_chunks_keep_mma_sync(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 40], f16>,
                                    %O: !tile.global<[N, 40], f32>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x40xf32>
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %v = tile.load %V[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 40], f16> -> tensor<64x40xf16>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16>, tensor<64x40xf16> -> tensor<128x40xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x40xf32> -> !tile.global<[N, 40], f32>
  return
}
}

// -----

// A gathered B (paged or masked KV rows) is a wgmma operand like any other
// load: its rows are copied chunk by chunk into the same staging buffer.
// CHECK-DAG: #[[WGG:.*]] = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
// CHECK-LABEL: func.func @wgmma_gathered_b
// CHECK: tile.mma {{.*}} -> tensor<128x128xf32, #[[WGG]]>
module attributes {tile.wgmma} {
func.func @wgmma_gathered_b(%P: !tile.global<[N, 64], f16>, %V: !tile.global<[N, 128], f16>,
                            %rows: !tile.global<[64], i32>, %O: !tile.global<[N, 128], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %idx = tile.load %rows[%c0] window [0] pad 0 : i32 : !tile.global<[64], i32> -> tensor<64xi32>
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<128x64xf16>
  %v = tile.load %V[%c0, %c0] window [1] gather [0] (%idx : tensor<64xi32>) pad 0.0 : f16 : !tile.global<[N, 128], f16> -> tensor<64x128xf16>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x128xf32> -> !tile.global<[N, 128], f32>
  return
}
}

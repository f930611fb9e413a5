// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-defer-loop-sums))' | FileCheck %s

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>

// The online softmax's row sum, l = alpha * l + rowsum(p), in an unmasked
// loop and a masked loop after it (tile-split-masked-loops): both loops
// carry the lanes' parts, the first loop's parts seed the second, and the
// parts are added up once, after the second loop, for every use there.
// CHECK-LABEL: func.func @two_loops
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128xf32, #[[ROWS:.*]]>
// CHECK:         %[[FIRST:.*]] = scf.for {{.*}} iter_args(%[[L1:.*]] = %[[ZERO]])
// CHECK:           %[[A1:.*]] = arith.mulf %{{.*}}, %[[L1]]
// CHECK:           %[[S1:.*]] = tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK:           %[[N1:.*]] = arith.addf %[[A1]], %[[S1]]
// CHECK:           scf.yield %[[N1]]
// CHECK-NOT:     tile.sum_lane_partials
// CHECK:         %[[SECOND:.*]] = scf.for {{.*}} iter_args(%[[L2:.*]] = %[[FIRST]])
// CHECK:           tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK:         %[[L:.*]] = tile.sum_lane_partials %[[SECOND]] : tensor<128xf32, #[[ROWS]]>
// CHECK:         tile.store %[[L]]
// CHECK:         math.log %[[L]]
func.func @two_loops(%n: i32, %m: i32, %p: tensor<128x64xf32, #mma>,
                     %alpha: tensor<128xf32, #rows>,
                     %L: !tile.global<[128], f32> {tile.name = "L"})
    -> tensor<128xf32, #rows> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %first = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  %second = scf.for %i = %n to %m step %c64 iter_args(%l = %first) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %l, %alpha : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %sum, %scaled : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  tile.store %second, %L[%c0] window [0] : tensor<128xf32, #rows> -> !tile.global<[128], f32>
  %log = math.log %second : tensor<128xf32, #rows>
  return %log : tensor<128xf32, #rows>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>

// The update as tile-decompose-online-softmax emits it, one FMA
// alpha * l + rowsum(p), is deferred the same way; an FMA that carries the
// sum in its addend (alpha * p + l, not a rescale of l) is left alone.
// CHECK-LABEL: func.func @fma_update
// CHECK:         %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[L:.*]] = %{{.*}})
// CHECK:           %[[S:.*]] = tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK:           math.fma %{{.*}}, %[[L]], %[[S]]
// CHECK:         %[[SUM:.*]] = tile.sum_lane_partials %[[LOOP]]
// CHECK:         scf.for
// CHECK-NOT:       lane_partial
// CHECK:         return %[[SUM]]
func.func @fma_update(%n: i32, %p: tensor<128x64xf32, #mma>,
                      %alpha: tensor<128xf32, #rows>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %deferred = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = math.fma %alpha, %l, %sum : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  %addend = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = math.fma %alpha, %sum, %l : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  return %deferred, %addend : tensor<128xf32, #rows>, tensor<128xf32, #rows>
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>

// Left alone: the new sum is used in the loop before it is carried (the
// eager softmax divides by it), the initial value is neither zero nor a
// deferred loop's, a row max (not linear), and an update used besides the
// yield.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: lane_partial
// CHECK-NOT: tile.sum_lane_partials
// CHECK: return
func.func @kept(%n: i32, %p: tensor<128x64xf32, #mma>,
                %alpha: tensor<128xf32, #rows>, %init: tensor<128xf32, #rows>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128xf32, #rows>)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %used = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %div = arith.divf %next, %alpha : tensor<128xf32, #rows>
    scf.yield %div : tensor<128xf32, #rows>
  }
  %seeded = scf.for %i = %c0 to %n step %c64 iter_args(%l = %init) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  %max = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %red = tile.reduce max %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %red : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  %twice = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %again = arith.addf %next, %scaled : tensor<128xf32, #rows>
    scf.yield %again : tensor<128xf32, #rows>
  }
  return %used, %seeded, %max, %twice : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128xf32, #rows>
}

// -----

// Warps along N: a row is spread over two warps, so its sum goes through
// shared memory; the loop keeps its reduction.
#mma = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: func.func @rows_across_warps
// CHECK-NOT: lane_partial
// CHECK-NOT: tile.sum_lane_partials
// CHECK: return
func.func @rows_across_warps(%n: i32, %p: tensor<32x16xf32, #mma>,
                             %alpha: tensor<32xf32, #rows>)
    -> tensor<32xf32, #rows> attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<32xf32, #rows>
  %l = scf.for %i = %c0 to %n step %c16 iter_args(%l = %zero) -> (tensor<32xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<32xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<32xf32, #rows>
    scf.yield %next : tensor<32xf32, #rows>
  }
  return %l : tensor<32xf32, #rows>
}

// -----

// A register-bound kernel (tile-stage-shared re-reads an MMA operand there)
// whose loop tiles fill the registers: 128 accumulator registers per thread
// carried, 64 of scores and 4 of the row sum, above the 168 up to which the
// partial sums fit (fa2 d128 128 x 64 on sm_90 spilled 64-72 bytes with
// them): the loop keeps its reduction.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: func.func @register_bound_full
// CHECK-NOT: lane_partial
// CHECK-NOT: tile.sum_lane_partials
// CHECK: return
func.func @register_bound_full(%n: i32, %p: tensor<128x64xf32, #mma>,
                               %alpha: tensor<128xf32, #rows>,
                               %acc0: tensor<128x128xf32, #mma>)
    -> (tensor<128xf32, #rows>, tensor<128x128xf32, #mma>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l, %acc = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero, %acc = %acc0)
      -> (tensor<128xf32, #rows>, tensor<128x128xf32, #mma>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %twice = arith.addf %acc, %acc : tensor<128x128xf32, #mma>
    scf.yield %next, %twice : tensor<128xf32, #rows>, tensor<128x128xf32, #mma>
  }
  return %l, %acc : tensor<128xf32, #rows>, tensor<128x128xf32, #mma>
}

// -----

// A register-bound kernel whose loop tiles leave room (68 registers per
// thread: 64 of scores, 4 of the row sum; fa2 d128 128 x 32 holds 168 and
// keeps 0 spills): the row sum is deferred as elsewhere.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: func.func @register_bound_room
// CHECK: scf.for
// CHECK: tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK: tile.sum_lane_partials
func.func @register_bound_room(%n: i32, %p: tensor<128x64xf32, #mma>,
                               %alpha: tensor<128xf32, #rows>)
    -> tensor<128xf32, #rows> attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l = scf.for %i = %c0 to %n step %c64 iter_args(%l = %zero) -> (tensor<128xf32, #rows>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    scf.yield %next : tensor<128xf32, #rows>
  }
  return %l : tensor<128xf32, #rows>
}

// -----

// A register-bound kernel's loop tiles exactly at the limit: 64 registers
// per thread of scores, 4 of the row sum, 4 of the row maximum and 96 of
// the accumulator carried: 168, the row sum is deferred.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: func.func @register_bound_at_limit
// CHECK: scf.for
// CHECK: tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK: tile.sum_lane_partials
func.func @register_bound_at_limit(%n: i32, %p: tensor<128x64xf32, #mma>,
                                   %alpha: tensor<128xf32, #rows>,
                                   %acc0: tensor<128x96xf32, #mma>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l, %m, %acc = scf.for %i = %c0 to %n step %c64
      iter_args(%l = %zero, %m = %alpha, %acc = %acc0)
      -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %max = arith.maximumf %m, %alpha : tensor<128xf32, #rows>
    %twice = arith.addf %acc, %acc : tensor<128x96xf32, #mma>
    scf.yield %next, %max, %twice : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>
  }
  return %l, %m, %acc : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>
}

// -----

// One register past the limit (the loop above and a row count of one
// register per thread carried): 169, the loop keeps its reduction.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
#lanes = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @register_bound_past_limit
// CHECK-NOT: lane_partial
// CHECK-NOT: tile.sum_lane_partials
// CHECK: return
func.func @register_bound_past_limit(%n: i32, %p: tensor<128x64xf32, #mma>,
                                     %alpha: tensor<128xf32, #rows>,
                                     %acc0: tensor<128x96xf32, #mma>,
                                     %count0: tensor<128xi32, #lanes>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>, tensor<128xi32, #lanes>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l, %m, %acc, %count = scf.for %i = %c0 to %n step %c64
      iter_args(%l = %zero, %m = %alpha, %acc = %acc0, %count = %count0)
      -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>, tensor<128xi32, #lanes>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %max = arith.maximumf %m, %alpha : tensor<128xf32, #rows>
    %twice = arith.addf %acc, %acc : tensor<128x96xf32, #mma>
    %more = arith.addi %count, %count0 : tensor<128xi32, #lanes>
    scf.yield %next, %max, %twice, %more : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>, tensor<128xi32, #lanes>
  }
  return %l, %m, %acc, %count : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x96xf32, #mma>, tensor<128xi32, #lanes>
}

// -----

// A register-bound loop whose carried tiles are small, whatever its scores
// take: 128 registers per thread of scores, 4 of the row sum, 4 of the row
// maximum and 64 of the accumulator carried (fa2 d64 128 x 128: 200, but
// only 72 carried, and 0 spills with the lanes' parts): deferred.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: func.func @register_bound_small_carry
// CHECK: scf.for
// CHECK: tile.reduce sum %{{.*}} axis = 1 lane_partial
// CHECK: tile.sum_lane_partials
func.func @register_bound_small_carry(%n: i32, %p: tensor<128x128xf32, #mma>,
                                      %alpha: tensor<128xf32, #rows>,
                                      %acc0: tensor<128x64xf32, #mma>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l, %m, %acc = scf.for %i = %c0 to %n step %c128
      iter_args(%l = %zero, %m = %alpha, %acc = %acc0)
      -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x128xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %max = arith.maximumf %m, %alpha : tensor<128xf32, #rows>
    %twice = arith.addf %acc, %acc : tensor<128x64xf32, #mma>
    scf.yield %next, %max, %twice : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>
  }
  return %l, %m, %acc : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>
}

// -----

// The same with one more register carried (73) and the scores over 168
// with it: the loop keeps its reduction.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
#lanes = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @register_bound_carry_past_limit
// CHECK-NOT: lane_partial
// CHECK-NOT: tile.sum_lane_partials
// CHECK: return
func.func @register_bound_carry_past_limit(%n: i32, %p: tensor<128x128xf32, #mma>,
                                           %alpha: tensor<128xf32, #rows>,
                                           %acc0: tensor<128x64xf32, #mma>,
                                           %count0: tensor<128xi32, #lanes>)
    -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>, tensor<128xi32, #lanes>)
    attributes {tile.num_warps = 4 : i32, tile.register_bound} {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32, #rows>
  %l, %m, %acc, %count = scf.for %i = %c0 to %n step %c128
      iter_args(%l = %zero, %m = %alpha, %acc = %acc0, %count = %count0)
      -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>, tensor<128xi32, #lanes>) : i32 {
    %scaled = arith.mulf %alpha, %l : tensor<128xf32, #rows>
    %sum = tile.reduce sum %p axis = 1 : tensor<128x128xf32, #mma> -> tensor<128xf32, #rows>
    %next = arith.addf %scaled, %sum : tensor<128xf32, #rows>
    %max = arith.maximumf %m, %alpha : tensor<128xf32, #rows>
    %twice = arith.addf %acc, %acc : tensor<128x64xf32, #mma>
    %more = arith.addi %count, %count0 : tensor<128xi32, #lanes>
    scf.yield %next, %max, %twice, %more : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>, tensor<128xi32, #lanes>
  }
  return %l, %m, %acc, %count : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>, tensor<128xi32, #lanes>
}

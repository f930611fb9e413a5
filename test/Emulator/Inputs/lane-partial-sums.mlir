// Layout-level kernel: row sums of S (32 x 16) taken in lane-partial form
// (tile.reduce ... lane_partial), updated as 2 * part + part (linear, as the
// online softmax updates its carried sum) and added up across lanes by
// tile.sum_lane_partials: L = 3 * rowsum(S), in three layouts:
//  - A, #tile.mma with warps along M: each row in one quad of one warp; rows
//    16-31 of warps 2 and 3 are padding copies (each warp adds its own);
//  - B, #tile.blocked: each row in 4 lanes of one warp, 4 columns each;
//  - C, #tile.mma with warps along N: each row in two warps, so the parts
//    are whole sums (through shared memory) kept in one lane of each quad.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#mma_n = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #mma>
#rows_n = #tile.slice<1, #mma_n>
#rows_b = #tile.slice<1, #blocked>
module {
  func.func @sums_grid(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                       %A: !tile.global<[32], f32> {tile.name = "A"},
                       %B: !tile.global<[32], f32> {tile.name = "B"},
                       %C: !tile.global<[32], f32> {tile.name = "C"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  func.func @sums(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                  %A: !tile.global<[32], f32> {tile.name = "A"},
                  %B: !tile.global<[32], f32> {tile.name = "B"},
                  %C: !tile.global<[32], f32> {tile.name = "C"})
      attributes {tile.grid = @sums_grid, tile.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %sa = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma>
    %pa = tile.reduce sum %sa axis = 1 lane_partial : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
    %two_a = arith.constant dense<2.0> : tensor<32xf32, #rows>
    %ta = arith.mulf %two_a, %pa : tensor<32xf32, #rows>
    %ua = arith.addf %ta, %pa : tensor<32xf32, #rows>
    %la = tile.sum_lane_partials %ua : tensor<32xf32, #rows>
    tile.store %la, %A[%c0] window [0] : tensor<32xf32, #rows> -> !tile.global<[32], f32>
    %sb = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #blocked>
    %pb = tile.reduce sum %sb axis = 1 lane_partial : tensor<32x16xf32, #blocked> -> tensor<32xf32, #rows_b>
    %two_b = arith.constant dense<2.0> : tensor<32xf32, #rows_b>
    %tb = arith.mulf %two_b, %pb : tensor<32xf32, #rows_b>
    %ub = arith.addf %tb, %pb : tensor<32xf32, #rows_b>
    %lb = tile.sum_lane_partials %ub : tensor<32xf32, #rows_b>
    tile.store %lb, %B[%c0] window [0] : tensor<32xf32, #rows_b> -> !tile.global<[32], f32>
    %sc = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma_n>
    %pc = tile.reduce sum %sc axis = 1 lane_partial : tensor<32x16xf32, #mma_n> -> tensor<32xf32, #rows_n>
    %two_c = arith.constant dense<2.0> : tensor<32xf32, #rows_n>
    %tc = arith.mulf %two_c, %pc : tensor<32xf32, #rows_n>
    %uc = arith.addf %tc, %pc : tensor<32xf32, #rows_n>
    %lc = tile.sum_lane_partials %uc : tensor<32xf32, #rows_n>
    tile.store %lc, %C[%c0] window [0] : tensor<32xf32, #rows_n> -> !tile.global<[32], f32>
    return
  }
}

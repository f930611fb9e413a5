// RUN: flash-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-persistent)' -o /dev/null
// What tile-persistent rejects, each with an error at the kernel.

// TMA copies, whose mbarrier parities restart with each key loop.
module {
  func.func @tma_grid(%X: !tile.global<[N, 64], f16> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  // expected-error @below {{a persistent kernel cannot use TMA copies}}
  func.func @tma(%X: !tile.global<[N, 64], f16> {tile.name = "X"})
      attributes {tile.grid = @tma_grid, tile.num_warps = 4 : i32,
                  tile.tma_barriers = array<i64: 1, 1>} {
    return
  }
}


// -----

// No CTA count and no arch to derive it from.
module {
  func.func @noarch_grid(%X: !tile.global<[N, 64], f16> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  // expected-error @below {{no 'ctas' option and no known 'tile.arch'}}
  func.func @noarch(%X: !tile.global<[N, 64], f16> {tile.name = "X"})
      attributes {tile.grid = @noarch_grid, tile.num_warps = 4 : i32} {
    return
  }
}

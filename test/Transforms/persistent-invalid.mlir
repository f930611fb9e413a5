// RUN: flash-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-persistent)' -o /dev/null
// What tile-persistent rejects, each with an error at the kernel.

// A cp.async producer's ring (tile.cp_async_barrier): tile-allocate-shared
// cannot keep its bytes apart from the consumers' buffers.
module {
  func.func @cp_async_grid(%X: !tile.global<[N, 64], f16> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  // expected-error @below {{a persistent kernel cannot carry a cp.async producer's rings from tile to tile}}
  func.func @cp_async(%X: !tile.global<[N, 64], f16> {tile.name = "X"})
      attributes {tile.grid = @cp_async_grid, tile.num_warps = 4 : i32,
                  tile.tma_barriers = array<i64: 128, 128>} {
    tile.async_commit {tile.cp_async_barrier = 0 : i64}
    return
  }
}

// -----

// A warp-specialized kernel whose Q buffer shares bytes with the ring the
// producer would fill for the next tile while the consumers still read Q.
!X = !tile.global<[N, 64], f16>
!one = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
!ring = !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
module {
  func.func @shared_grid(%X: !X {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  func.func @shared(%X: !X {tile.name = "X"})
      attributes {tile.grid = @shared_grid, tile.num_warps = 8 : i32,
                  tile.tma_barriers = array<i64: 1, 1>,
                  tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 8 : i32, producer_regs = 24 : i64}} {
    %c0 = arith.constant 0 : i32
    // expected-error @below {{shares bytes with a TMA ring whose producer fills the next tile's slots}}
    %q = tile.local_alloc {offset = 8192 : i64} : !one
    // expected-note @below {{the ring's buffer}}
    %k = tile.local_alloc {offset = 0 : i64} : !ring
    tile.async_copy %X[%c0, %c0] window [0, 1] into %q[%c0] : !X -> !one
    tile.async_copy %X[%c0, %c0] window [0, 1] into %k[%c0] {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !X -> !ring
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

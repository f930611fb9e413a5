// A bounds-masked copy of X[N, 64] (f16) to Y, 16 rows per program: the
// window of the last program hangs over N. Input of planted-oob.test.
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
module {
  func.func @copy_grid(%X: !tile.global<[N, 64], f16> {tile.name = "X"},
                       %Y: !tile.global<[N, 64], f16> {tile.name = "Y"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %n = tile.dim %X[0] : !tile.global<[N, 64], f16>
    %g = arith.ceildivsi %n, %c16 : i32
    return %g, %c1, %c1 : i32, i32, i32
  }
  func.func @copy(%X: !tile.global<[N, 64], f16> {tile.name = "X"},
                  %Y: !tile.global<[N, 64], f16> {tile.name = "Y"})
      attributes {tile.grid = @copy_grid, tile.num_warps = 4 : i32} {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %pid = tile.program_id 0 : i32
    %r0 = arith.muli %pid, %c16 : i32
    %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<16x64xf16, #blocked>
    tile.store %x, %Y[%r0, %c0] window [0, 1] : tensor<16x64xf16, #blocked> -> !tile.global<[N, 64], f16>
    return
  }
}

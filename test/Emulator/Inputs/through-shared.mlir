// A layout conversion that goes through shared memory (store, barrier, load,
// barrier) and a masked 2-D copy over a dynamic dim: the tile-level inputs of
// the planted-bug tests (test/Emulator/planted-*.test).
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [1, 1], order = [1, 0]>
func.func @through_shared(%X: !tile.global<[16, 64], f32> {tile.name = "X"},
                          %Y: !tile.global<[16, 64], f32> {tile.name = "Y"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[16, 64], f32> -> tensor<16x64xf32, #mma>
  %y = tile.convert_layout %x : tensor<16x64xf32, #mma> -> tensor<16x64xf32, #blocked>
  tile.store %y, %Y[%c0, %c0] window [0, 1] : tensor<16x64xf32, #blocked> -> !tile.global<[16, 64], f32>
  return
}

// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-assign-layouts))' -verify-diagnostics

func.func @not_decomposed(%G: !tile.global<[N, 64], f16>) attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %v = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<16x64xf16>
  %m = arith.constant dense<0.0> : tensor<16xf32>
  %acc = arith.constant dense<0.0> : tensor<16x64xf32>
  %sc = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @below {{must be decomposed before layout assignment (run tile-decompose-online-softmax first)}}
  %r:3 = tile.online_softmax deferred %sc, %v, %m, %m, %acc : tensor<16x16xf32>, tensor<16x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @does_not_fit(%G: !tile.global<[N, 64], f16>, %R: !tile.global<[N, 64], f32>) attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-error @below {{cannot lay out a tile of shape [48, 64] as #tile.dot_op<0, <warps = [4, 1, 1], values = [1, 1, 1]>>: M size 48 and the layout's step 64 must divide one another}}
  %a = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<48x64xf16>
  %b = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<64x64xf16>
  %zero = arith.constant dense<0.0> : tensor<48x64xf32>
  %c = tile.mma %a, %b, %zero : tensor<48x64xf16>, tensor<64x64xf16> -> tensor<48x64xf32>
  tile.store %c, %R[%c0, %c0] window [0, 1] : tensor<48x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// expected-error @below {{MMA layout #tile.mma<warps = [2, 1, 1], values = [1, 1, 1]> spreads over 2 warps but the kernel has 4}}
func.func @warps_mismatch() attributes {tile.num_warps = 4 : i32,
    tile.mma_layout = #tile.mma<warps = [2, 1, 1], values = [1, 1, 1]>} {
  return
}

// -----

func.func @rank3(%G: !tile.global<[A, B, C], f32>) attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-error @below {{produces a tile of rank 3; only 1-D and 2-D tiles can be laid out over threads}}
  %x = tile.load %G[%c0, %c0, %c0] window [0, 1, 2] pad 0.0 : f32 : !tile.global<[A, B, C], f32> -> tensor<2x16x16xf32>
  return
}

// -----

// expected-error @below {{takes a tile argument ('tensor<16x16xf32>'); kernel arguments are global tensors and scalars}}
func.func @tile_argument(%x: tensor<16x16xf32>) attributes {tile.num_warps = 1 : i32} {
  return
}

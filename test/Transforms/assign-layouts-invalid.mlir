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

// Tiles have at least one dim (every shape of rank >= 1 has a layout).
func.func @rank0() attributes {tile.num_warps = 1 : i32} {
  // expected-error @below {{'arith.constant' op produces a tile of rank 0; tiles have at least one dim}}
  %c = arith.constant dense<0.0> : tensor<f32>
  return
}

// -----

// expected-error @below {{MMA layout #tile.mma<warps = [2, 1, 1], values = [1, 1, 1]> spreads over 2 warps but the kernel has 4}}
func.func @warps_mismatch() attributes {tile.num_warps = 4 : i32,
    tile.mma_layout = #tile.mma<warps = [2, 1, 1], values = [1, 1, 1]>} {
  return
}

// -----

// expected-error @below {{takes a tile argument ('tensor<16x16xf32>'); kernel arguments are global tensors and scalars}}
func.func @tile_argument(%x: tensor<16x16xf32>) attributes {tile.num_warps = 1 : i32} {
  return
}

// -----

// An MMA on f8e4m3 operands has no layout off sm_90a.
func.func @f8_mma(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x8xf8E4M3FN>) attributes {tile.num_warps = 1 : i32} {
  %acc = arith.constant dense<0.0> : tensor<16x8xf32>
  // expected-error @below {{'dot' on f8e4m3 tiles needs --arch=sm_90a (wgmma with e4m3 operands); it runs on --target=interp}}
  %d = tile.mma %a, %b, %acc : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf32>
  return
}

// tile-check-resources: a kernel's tiles and loops against what one CTA can
// hold, before any lowering. The errors name the constants whose value is
// one of the offending sizes; kernels within the limits pass unchanged.
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-check-resources))' -verify-diagnostics
// With the options raised, only the tile of more than 2^20 elements fails
// (`not`): the other functions pass unchanged.
// RUN: not flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-check-resources{max-registers=256 max-stages=1000000}))' 2>/dev/null | FileCheck %s --check-prefix=RAISED

// [256, 128] f32 over 4 warps: 256 registers per thread.
// RAISED-LABEL: func.func @too_many_registers
func.func @too_many_registers(%X: !tile.global<[R, C], f32>, %i: i32)
    attributes {tile.constants = {BLOCK_R = 256 : i64, BLOCK_C = 128 : i64, CAUSAL = false, ONE = 1 : i64},
                tile.num_warps = 4 : i32} {
  // expected-error @below {{tile of type 'tensor<256x128xf32>' needs at least 256 registers per thread (128 threads per CTA), more than the 255 a thread has; change BLOCK_C (128) or BLOCK_R (256), or give the kernel more warps}}
  %x = tile.load %X[%i, %i] window [0, 1] pad 0.0 : f32 : !tile.global<[R, C], f32> -> tensor<256x128xf32>
  return
}

// -----

// The same tile over 8 warps fits (128 registers per thread).
// RAISED-LABEL: func.func @fits_more_warps
func.func @fits_more_warps(%X: !tile.global<[R, C], f32>, %i: i32)
    attributes {tile.num_warps = 8 : i32} {
  %x = tile.load %X[%i, %i] window [0, 1] pad 0.0 : f32 : !tile.global<[R, C], f32> -> tensor<256x128xf32>
  return
}

// -----

// A loop's tile argument (the loop is reported), named without a matching
// constant.
func.func @carried(%n: i32, %z: tensor<128x128xf16>) attributes {tile.constants = {BLOCK = 64 : i64}, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{tile of type 'tensor<128x128xf16>' needs at least 256 registers per thread (32 threads per CTA), more than the 255 a thread has; lower the constants that set it, or give the kernel more warps}}
  scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<128x128xf16>) : i32 {
    scf.yield %a : tensor<128x128xf16>
  }
  return
}

// -----

// More than 2^20 elements in one tile.
func.func @huge_tile(%X: !tile.global<[R, C], f16>, %i: i32)
    attributes {tile.constants = {BLOCK_M = 2048 : i64}, tile.num_warps = 32 : i32} {
  // expected-error @below {{tile of type 'tensor<2048x1024xf16>' has 2097152 elements, more than the 2^20 a tile may have; change BLOCK_M (2048)}}
  %x = tile.load %X[%i, %i] window [0, 1] pad 0.0 : f16 : !tile.global<[R, C], f16> -> tensor<2048x1024xf16>
  return
}

// -----

// Stages: 17 is over the default 16.
// RAISED-LABEL: func.func @stages
func.func @stages(%n: i32) attributes {tile.constants = {STAGES = 17 : i64}, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{the loop has 17 pipeline stages, more than the 16 a kernel may have; change STAGES (17)}}
  scf.for %k = %c0 to %n step %c1 : i32 {
  } {tile.num_stages = 17 : i64}
  return
}

// -----

// Within every limit, and functions without tile.num_warps (grid
// functions) are not kernels.
// RAISED-LABEL: func.func @fine
func.func @fine(%n: i32) attributes {tile.constants = {STAGES = 16 : i64}, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  scf.for %k = %c0 to %n step %c1 : i32 {
  } {tile.num_stages = 16 : i64}
  return
}
// RAISED-LABEL: func.func @not_a_kernel
func.func @not_a_kernel() {
  %z = arith.constant dense<0.0> : tensor<1024x1024xf32>
  return
}

// -----

// A value without a source location (a constant the canonicalizer hoisted)
// is reported at its first user that has one.
func.func @hoisted(%X: !tile.global<[R, C], f16>, %i: i32) attributes {tile.num_warps = 1 : i32} {
  %z = arith.constant dense<0.0> : tensor<128x128xf16> loc(unknown)
  // expected-error @below {{tile of type 'tensor<128x128xf16>' needs at least 256 registers per thread (32 threads per CTA)}}
  tile.store %z, %X[%i, %i] window [0, 1] : tensor<128x128xf16> -> !tile.global<[R, C], f16>
  return
}

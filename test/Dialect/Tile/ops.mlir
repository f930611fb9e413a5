// RUN: flash-opt %s | FileCheck %s
// RUN: flash-opt %s | flash-opt | FileCheck %s
// RUN: flash-opt -mlir-print-op-generic %s | flash-opt | FileCheck %s

// Every tile op and the kernel attributes round-trip through the printer.

// CHECK-LABEL: func.func @grid
// CHECK-SAME: !tile.global<[B, H, Nq, 64], f16> {tile.name = "Q"}
func.func @grid(%Q: !tile.global<[B, H, Nq, 64], f16> {tile.name = "Q"},
                %O: !tile.global<[B, H, Nq, 64], f16> {tile.name = "O"},
                %scale: f32 {tile.name = "sm_scale"}) -> (i32, i32, i32) {
  // CHECK: tile.dim %{{.*}}[2] : !tile.global<[B, H, Nq, 64], f16>
  %nq = tile.dim %Q[2] : !tile.global<[B, H, Nq, 64], f16>
  %b = tile.dim %Q[0] : !tile.global<[B, H, Nq, 64], f16>
  %one = arith.constant 1 : i32
  return %nq, %b, %one : i32, i32, i32
}

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: attributes {tile.constants = {BLOCK_M = 128 : i64, CAUSAL = false, SCALE = 5.000000e-01 : f64}, tile.grid = @grid, tile.num_warps = 4 : i32}
func.func @kernel(%Q: !tile.global<[B, H, Nq, 64], f16> {tile.name = "Q"},
                  %O: !tile.global<[B, H, Nq, 64], f16> {tile.name = "O"},
                  %scale: f32 {tile.name = "sm_scale"})
    attributes {tile.grid = @grid, tile.num_warps = 4 : i32,
                tile.constants = {BLOCK_M = 128 : i64, CAUSAL = false, SCALE = 0.5 : f64}} {
  // CHECK: tile.program_id 0 : i32
  %pid = tile.program_id 0 : i32
  // CHECK: tile.num_programs 1 : i32
  %np = tile.num_programs 1 : i32
  %c0 = arith.constant 0 : i32
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [2, 3] pad 0.000000e+00 : f16 : !tile.global<[B, H, Nq, 64], f16> -> tensor<128x64xf16>
  %q = tile.load %Q[%c0, %c0, %pid, %c0] window [2, 3] pad 0.0 : f16
      : !tile.global<[B, H, Nq, 64], f16> -> tensor<128x64xf16>
  // CHECK: tile.load {{.*}} window [3] pad {{.*}} -> tensor<64xf16>
  %row = tile.load %Q[%c0, %c0, %pid, %c0] window [3] pad 1.0 : f16
      : !tile.global<[B, H, Nq, 64], f16> -> tensor<64xf16>
  // CHECK: tile.load_scalar %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] pad -1.000000e+00 : f16 : !tile.global<[B, H, Nq, 64], f16> -> f16
  %one = tile.load_scalar %Q[%c0, %c0, %pid, %c0] pad -1.0 : f16
      : !tile.global<[B, H, Nq, 64], f16> -> f16
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [3] gather [0, 2] (%{{.*}}, %{{.*}} : tensor<64xi32>, tensor<64xi32>) pad 0.000000e+00 : f16 : !tile.global<[B, H, Nq, 64], f16> -> tensor<64x64xf16>
  %rows = tile.iota : tensor<64xi32>
  %gathered = tile.load %Q[%c0, %pid, %c0, %c0] window [3] gather [0, 2] (%rows, %rows : tensor<64xi32>, tensor<64xi32>)
      pad 0.0 : f16 : !tile.global<[B, H, Nq, 64], f16> -> tensor<64x64xf16>
  // CHECK: tile.load {{.*}} window [] gather [2] (%{{.*}} : tensor<64xi32>) pad {{.*}} -> tensor<64xf16>
  %column = tile.load %Q[%c0, %c0, %c0, %pid] window [] gather [2] (%rows : tensor<64xi32>)
      pad 0.0 : f16 : !tile.global<[B, H, Nq, 64], f16> -> tensor<64xf16>
  // CHECK: tile.splat %{{.*}} : f32 -> tensor<128xf32>
  %m = tile.splat %scale : f32 -> tensor<128xf32>
  // CHECK: tile.iota : tensor<64xi32>
  %cols = tile.iota : tensor<64xi32>
  // CHECK: tile.expand_dims %{{.*}} axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %mcol = tile.expand_dims %m axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<128x1xf32> -> tensor<128x64xf32>
  %mb = tile.broadcast %mcol : tensor<128x1xf32> -> tensor<128x64xf32>
  // CHECK: tile.trans %{{.*}} : tensor<128x64xf16> -> tensor<64x128xf16>
  %qt = tile.trans %q : tensor<128x64xf16> -> tensor<64x128xf16>
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %s = tile.mma %q, %q, %zero {transpose_b}
      : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
  // CHECK: tile.mma {{.*}} {transpose_a} : tensor<64x128xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  %s2 = tile.mma %qt, %qt, %zero {transpose_a}
      : tensor<64x128xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  // CHECK: tile.reduce max %{{.*}} axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  %rowmax = tile.reduce max %mb axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  // CHECK: tile.reduce sum %{{.*}} axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  %colsum = tile.reduce sum %s2 axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  %v = tile.load %Q[%c0, %c0, %pid, %c0] window [2, 3] pad 0.0 : f16
      : !tile.global<[B, H, Nq, 64], f16> -> tensor<128x64xf16>
  %acc = arith.constant dense<0.0> : tensor<128x64xf32>
  // CHECK: tile.online_softmax deferred exp2 %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128xf32>, tensor<128x64xf16>, tensor<128xf32>, tensor<128x64xf32>
  %m1, %l1, %acc1 = tile.online_softmax deferred exp2 %s, %v, %rowmax, %rowmax, %acc
      : tensor<128x128xf32>, tensor<128x64xf16>, tensor<128xf32>, tensor<128x64xf32>
  // CHECK: tile.online_softmax eager %{{.*}} : tensor<128x128xf32>
  %m2, %l2, %acc2 = tile.online_softmax eager %s, %v, %m1, %l1, %acc1
      : tensor<128x128xf32>, tensor<128x64xf16>, tensor<128xf32>, tensor<128x64xf32>
  // CHECK: tile.online_softmax_finalize %{{.*}}, %{{.*}} : tensor<128x64xf32>, tensor<128xf32>
  %out = tile.online_softmax_finalize %acc2, %l2 : tensor<128x64xf32>, tensor<128xf32>
  %out16 = arith.truncf %out : tensor<128x64xf32> to tensor<128x64xf16>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] window [2, 3] : tensor<128x64xf16> -> !tile.global<[B, H, Nq, 64], f16>
  tile.store %out16, %O[%c0, %c0, %pid, %c0] window [2, 3]
      : tensor<128x64xf16> -> !tile.global<[B, H, Nq, 64], f16>
  return
}

// A masked store, an atomic add with and without a mask, and a bool tensor.
// CHECK-LABEL: func.func @masked_writes
func.func @masked_writes(%Y: !tile.global<[N, 64], f32>, %M: !tile.global<[N, 64], i1>,
                         %i: i32) {
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] window [0, 1] pad false : !tile.global<[N, 64], i1> -> tensor<16x64xi1>
  %keep = tile.load %M[%i, %i] window [0, 1] pad false : !tile.global<[N, 64], i1> -> tensor<16x64xi1>
  %v = arith.constant dense<1.0> : tensor<16x64xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] window [0, 1] mask %{{.*}} : tensor<16x64xf32>, tensor<16x64xi1> -> !tile.global<[N, 64], f32>
  tile.store %v, %Y[%i, %i] window [0, 1] mask %keep : tensor<16x64xf32>, tensor<16x64xi1> -> !tile.global<[N, 64], f32>
  // CHECK: tile.atomic_add %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] window [0, 1] : tensor<16x64xf32> -> !tile.global<[N, 64], f32>
  tile.atomic_add %v, %Y[%i, %i] window [0, 1] : tensor<16x64xf32> -> !tile.global<[N, 64], f32>
  // CHECK: tile.atomic_add %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] window [1] mask %{{.*}} : tensor<64xf32>, tensor<64xi1> -> !tile.global<[N, 64], f32>
  %row = arith.constant dense<2.0> : tensor<64xf32>
  %rowkeep = arith.constant dense<true> : tensor<64xi1>
  tile.atomic_add %row, %Y[%i, %i] window [1] mask %rowkeep : tensor<64xf32>, tensor<64xi1> -> !tile.global<[N, 64], f32>
  // CHECK: tile.device_assert %{{.*}}, "rows kept" : tensor<64xi1>
  tile.device_assert %rowkeep, "rows kept" : tensor<64xi1>
  %small = arith.cmpi slt, %i, %i : i32
  // CHECK: tile.device_assert %{{.*}}, "i \22in\22 range" : i1
  tile.device_assert %small, "i \22in\22 range" : i1
  return
}

// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

// Every kernel at once: FlashAttention-2's loop (signature expansion,
// outlining, every op family).

// FlashAttention-2 as the layout assignment leaves it: Q in the A-operand
// layout, K in the transposed B layout, V in the B layout, row statistics in
// the slice of the accumulator layout, P converted from the accumulator to
// the A layout, a column mask built from an iota, a bounds-masked store.

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
#rows = #tile.slice<1, #mma>
#cols = #tile.slice<0, #mma>

// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @fa2_grid(%{{.*}}: !tile.global<[B, H, N, 64], f16> {tile.name = "Q"}
// CHECK: gpu.module @flashc_kernels {
// CHECK-NOT: llvm.mlir.global
// CHECK: gpu.func @fa2(%[[Q:.*]]: !llvm.ptr<1> {tile.name = "Q"}, %{{.*}}: i32 {tile.name = "Q.d0"}, %{{.*}}: i32 {tile.name = "Q.d1"}, %[[QN:.*]]: i32 {tile.name = "Q.d2"}, %{{.*}}: i32 {tile.name = "Q.d3"}, %[[K:.*]]: !llvm.ptr<1> {tile.name = "K"}
// CHECK-SAME: %[[O:[a-z0-9]*]]: !llvm.ptr<1> {tile.name = "O"}, %{{.*}}: i32 {tile.name = "O.d0"}, %{{.*}}: i32 {tile.name = "O.d1"}, %{{.*}}: i32 {tile.name = "O.d2"}, %{{.*}}: i32 {tile.name = "O.d3"}, %[[SCALE:.*]]: f32 {tile.name = "sm_scale"})
// CHECK-SAME: kernel
// CHECK-SAME: flashc.grid = @fa2_grid
// CHECK-SAME: flashc.num_warps = 4 : i32
// CHECK-SAME: flashc.params = [{dims = ["B", "H", "N", "64"], element = f16, kind = "tensor", name = "Q"}, {{.*}}, {element = f32, kind = "scalar", name = "sm_scale"}]
// CHECK-SAME: flashc.shared_bytes = 0 : i64
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: tile.constants = {BLOCK_M = 128 : i64}
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32
// CHECK: nvvm.read.ptx.sreg.ctaid.x : i32
// Q: 64 f16 registers, read as aligned pairs (a0a1 are adjacent columns),
// each pair bounds-checked.
// CHECK: scf.if %{{.*}} -> (vector<2xf16>) {
// CHECK:   llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xf16>
// CHECK: } else {
// CHECK: vector.from_elements {{.*}} : vector<64xf16>
// The loop carries m, l (4 rows per thread) and the accumulator (64 f32).
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<64xf32>) : i32 {
// K^T and V are only used by one MMA each: their loads are fused into it, one
// B fragment (4 registers) before the MMAs that use it, instead of 128
// registers held across the whole product. K^T's pairs are adjacent in
// memory; V's B layout runs k down the rows, so its loads are scalar.
// CHECK-NOT: vector<128xf16>
// CHECK:   llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xf16>
// CHECK:   vector.from_elements {{.*}} : vector<4xf16>
// CHECK:   nvvm.mma.sync
// CHECK:   nvvm.mma.sync
// The row max: in-thread maximum, then lanes 1 and 2 apart (the quad).
// CHECK:   nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK:   nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK:   vector.from_elements {{.*}} : vector<4xf32>
// expand_dims + broadcast of the row max: register repacks.
// CHECK:   vector.shuffle {{.*}} : vector<4xf32>, vector<4xf32>
// CHECK:   math.exp2 %{{.*}} : vector<64xf32>
// CHECK:   arith.truncf %{{.*}} : vector<64xf32> to vector<64xf16>
// S -> P: a register repack.
// CHECK:   vector.shuffle {{.*}} : vector<64xf16>, vector<64xf16>
// CHECK:   llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK:   vector.from_elements {{.*}} : vector<4xf16>
// CHECK:   nvvm.mma.sync
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>, vector<64xf32>
// Store of O: pairs of the accumulator layout, masked, each element once.
// CHECK: scf.if
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<1>
// CHECK: gpu.return
module {
  func.func @fa2_grid(%Q: !tile.global<[B, H, N, 64], f16> {tile.name = "Q"},
                      %K: !tile.global<[B, H, N, 64], f16> {tile.name = "K"},
                      %V: !tile.global<[B, H, N, 64], f16> {tile.name = "V"},
                      %O: !tile.global<[B, H, N, 64], f16> {tile.name = "O"},
                      %sm_scale: f32 {tile.name = "sm_scale"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  func.func @fa2(%Q: !tile.global<[B, H, N, 64], f16> {tile.name = "Q"},
                 %K: !tile.global<[B, H, N, 64], f16> {tile.name = "K"},
                 %V: !tile.global<[B, H, N, 64], f16> {tile.name = "V"},
                 %O: !tile.global<[B, H, N, 64], f16> {tile.name = "O"},
                 %sm_scale: f32 {tile.name = "sm_scale"})
      attributes {tile.grid = @fa2_grid, tile.num_warps = 4 : i32,
                  tile.constants = {BLOCK_M = 128 : i64}} {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %pid = tile.program_id 0 : i32
    %h = tile.program_id 1 : i32
    %b = tile.program_id 2 : i32
    %m0 = arith.muli %pid, %c128 : i32
    %n = tile.dim %K[2] : !tile.global<[B, H, N, 64], f16>
    %q = tile.load %Q[%b, %h, %m0, %c0] window [2, 3] pad 0.0 : f16
        : !tile.global<[B, H, N, 64], f16> -> tensor<128x64xf16, #A>
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %ninf = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
    %lzero = arith.constant dense<0.0> : tensor<128xf32, #rows>
    %scale = tile.splat %sm_scale : f32 -> tensor<128x64xf32, #mma>
    %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%m = %ninf, %l = %lzero, %acc = %zero)
        -> (tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>) : i32 {
      %k = tile.load %K[%b, %h, %j, %c0] window [2, 3] pad 0.0 : f16
          : !tile.global<[B, H, N, 64], f16> -> tensor<64x64xf16, #BT>
      %v = tile.load %V[%b, %h, %j, %c0] window [2, 3] pad 0.0 : f16
          : !tile.global<[B, H, N, 64], f16> -> tensor<64x64xf16, #B>
      %s0 = tile.mma %q, %k, %zero {transpose_b}
          : tensor<128x64xf16, #A>, tensor<64x64xf16, #BT> -> tensor<128x64xf32, #mma>
      %s = arith.mulf %s0, %scale : tensor<128x64xf32, #mma>
      %iota = tile.iota : tensor<64xi32, #cols>
      %jv = tile.splat %j : i32 -> tensor<64xi32, #cols>
      %idx = arith.addi %iota, %jv : tensor<64xi32, #cols>
      %nv = tile.splat %n : i32 -> tensor<64xi32, #cols>
      %valid = arith.cmpi slt, %idx, %nv : tensor<64xi32, #cols>
      %vrow = tile.expand_dims %valid axis = 0 : tensor<64xi1, #cols> -> tensor<1x64xi1, #mma>
      %vmask = tile.broadcast %vrow : tensor<1x64xi1, #mma> -> tensor<128x64xi1, #mma>
      %ninf2 = arith.constant dense<0xFF800000> : tensor<128x64xf32, #mma>
      %sm = arith.select %vmask, %s, %ninf2 : tensor<128x64xi1, #mma>, tensor<128x64xf32, #mma>
      %bm = tile.reduce max %sm axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
      %m2 = arith.maximumf %m, %bm : tensor<128xf32, #rows>
      %mcol = tile.expand_dims %m2 axis = 1 : tensor<128xf32, #rows> -> tensor<128x1xf32, #mma>
      %mb = tile.broadcast %mcol : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
      %d = arith.subf %sm, %mb : tensor<128x64xf32, #mma>
      %p = math.exp2 %d : tensor<128x64xf32, #mma>
      %dm = arith.subf %m, %m2 : tensor<128xf32, #rows>
      %alpha = math.exp2 %dm : tensor<128xf32, #rows>
      %rs = tile.reduce sum %p axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
      %l1 = arith.mulf %l, %alpha : tensor<128xf32, #rows>
      %l2 = arith.addf %l1, %rs : tensor<128xf32, #rows>
      %acol = tile.expand_dims %alpha axis = 1 : tensor<128xf32, #rows> -> tensor<128x1xf32, #mma>
      %ab = tile.broadcast %acol : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
      %accs = arith.mulf %acc, %ab : tensor<128x64xf32, #mma>
      %p16 = arith.truncf %p : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %pa = tile.convert_layout %p16 : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #A>
      %acc2 = tile.mma %pa, %v, %accs
          : tensor<128x64xf16, #A>, tensor<64x64xf16, #B> -> tensor<128x64xf32, #mma>
      scf.yield %m2, %l2, %acc2 : tensor<128xf32, #rows>, tensor<128xf32, #rows>, tensor<128x64xf32, #mma>
    }
    %lcol = tile.expand_dims %r#1 axis = 1 : tensor<128xf32, #rows> -> tensor<128x1xf32, #mma>
    %lb = tile.broadcast %lcol : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
    %o = arith.divf %r#2, %lb : tensor<128x64xf32, #mma>
    %o16 = arith.truncf %o : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    tile.store %o16, %O[%b, %h, %m0, %c0] window [2, 3]
        : tensor<128x64xf16, #mma> -> !tile.global<[B, H, N, 64], f16>
    return
  }
}

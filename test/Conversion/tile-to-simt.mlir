// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

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

// -----

// FlashAttention-2's S accumulator -> P operand: every thread already holds
// what it needs, so the conversion is one register repack.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#A = #tile.dot_op<0, #mma>
// CHECK-LABEL: gpu.func @s_to_p
// CHECK-SAME: (%[[S:.*]]: !llvm.ptr<1>
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: llvm.mlir.addressof
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15, 16, {{.*}}] : vector<64xf16>, vector<64xf16>
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: llvm.mlir.addressof
// CHECK: gpu.return
func.func @s_to_p(%S: !tile.global<[128, 64], f16> {tile.name = "S"},
                  %P: !tile.global<[128, 64], f16> {tile.name = "P"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[128, 64], f16> -> tensor<128x64xf16, #mma>
  %p = tile.convert_layout %s : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #A>
  tile.store %p, %P[%c0, %c0] window [0, 1] : tensor<128x64xf16, #A> -> !tile.global<[128, 64], f16>
  return
}

// -----

// A row max of an accumulator tile: in-thread, then butterflies over the
// quad (lane bits 0 and 1) only; no shared memory.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @row_max
// CHECK-NOT: llvm.mlir.addressof
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NOT: nvvm.shfl
// CHECK-NOT: nvvm.barrier
// CHECK: vector.from_elements %{{.*}} : vector<4xf32>
// CHECK: gpu.return
func.func @row_max(%S: !tile.global<[128, 64], f32> {tile.name = "S"},
                   %M: !tile.global<[128], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[128, 64], f32> -> tensor<128x64xf32, #mma>
  %m = tile.reduce max %s axis = 1 : tensor<128x64xf32, #mma> -> tensor<128xf32, #rows>
  tile.store %m, %M[%c0] window [0] : tensor<128xf32, #rows> -> !tile.global<[128], f32>
  return
}

// -----

// 128x64x64 with warps [4, 1, 1] and values [2, 1, 1]: per warp 2 m-atoms x
// 8 n-atoms x 4 k-steps = 64 mma.sync.
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
// CHECK-LABEL: gpu.func @mma_count
// CHECK-COUNT-64: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<64xf32>
func.func @mma_count(%A: !tile.global<[128, 64], f16> {tile.name = "A"},
                     %B: !tile.global<[64, 64], f16> {tile.name = "B"},
                     %C: !tile.global<[128, 64], f32> {tile.name = "C"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[128, 64], f16> -> tensor<128x64xf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %c = tile.mma %a, %b, %zero : tensor<128x64xf16, #A>, tensor<64x64xf16, #B> -> tensor<128x64xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<128x64xf32, #mma> -> !tile.global<[128, 64], f32>
  return
}

// -----

// bf16 operands are packed into i32 registers for mma.sync.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
// CHECK-LABEL: gpu.func @mma_bf16
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_bf16(%A: !tile.global<[16, 16], bf16> {tile.name = "A"},
                    %B: !tile.global<[8, 16], bf16> {tile.name = "B"},
                    %C: !tile.global<[16, 8], f32> {tile.name = "C"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : bf16 : !tile.global<[16, 16], bf16> -> tensor<16x16xbf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : bf16 : !tile.global<[8, 16], bf16> -> tensor<8x16xbf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<16x8xf32, #mma>
  %c = tile.mma %a, %b, %zero {transpose_b} : tensor<16x16xbf16, #A>, tensor<8x16xbf16, #BT> -> tensor<16x8xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<16x8xf32, #mma> -> !tile.global<[16, 8], f32>
  return
}

// -----

// A conversion that moves elements between threads goes through shared
// memory: each element written once (first holder), a barrier, reads, and a
// barrier before the buffer can be reused. The 16x64 f32 tile needs 4096
// bytes.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: gpu.module @flashc_kernels {
// CHECK: llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x i8>
// CHECK-LABEL: gpu.func @through_shared
// CHECK-SAME: flashc.shared_bytes = 4096 : i64
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: llvm.store %{{.*}}, %[[DST]] {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: vector.from_elements {{.*}} : vector<32xf32>
// A blocked layout with 4 contiguous f32 per thread stores 16-byte vectors.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
func.func @through_shared(%X: !tile.global<[16, 64], f32> {tile.name = "X"},
                          %Y: !tile.global<[16, 64], f32> {tile.name = "Y"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[16, 64], f32> -> tensor<16x64xf32, #mma>
  %y = tile.convert_layout %x : tensor<16x64xf32, #mma> -> tensor<16x64xf32, #blocked>
  tile.store %y, %Y[%c0, %c0] window [0, 1] : tensor<16x64xf32, #blocked> -> !tile.global<[16, 64], f32>
  return
}

// -----

// Warps along N: a row sum combines the quad by shuffles, then the two warps
// of a row through shared memory.
#mma = #tile.mma<warps = [2, 2, 1], values = [1, 1, 1]>
#rows = #tile.slice<1, #mma>
// CHECK-LABEL: gpu.func @row_sum_across_warps
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK: llvm.mlir.addressof @__flashc_smem
// CHECK: scf.if
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.addf
// CHECK: nvvm.barrier
func.func @row_sum_across_warps(%S: !tile.global<[32, 16], f32> {tile.name = "S"},
                                %L: !tile.global<[32], f32> {tile.name = "L"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %s = tile.load %S[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[32, 16], f32> -> tensor<32x16xf32, #mma>
  %l = tile.reduce sum %s axis = 1 : tensor<32x16xf32, #mma> -> tensor<32xf32, #rows>
  tile.store %l, %L[%c0] window [0] : tensor<32xf32, #rows> -> !tile.global<[32], f32>
  return
}

// -----

// Masked loads and stores: a window that can hang over a dim checks
// 0 <= index < dim for it, loads give the pad when out of bounds, stores
// write nothing; the 8 contiguous f16 per thread of a blocked layout move as
// 16-byte vectors; the 1-D slice held by several lanes is stored once
// (a lane-mask predicate).
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
// CHECK-LABEL: gpu.func @masked
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1> {tile.name = "X"}, %[[N:.*]]: i32 {tile.name = "X.d0"}, %{{.*}}: i32 {tile.name = "X.d1"}, %[[Y:.*]]: !llvm.ptr<1>
// The thread's address is computed once; the column window [0, 64) lies
// inside the static dim, so only rows are checked.
// CHECK: %[[PTR:.*]] = llvm.getelementptr %[[X]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK-NOT: %c64_i32 : i32
// CHECK: arith.cmpi sge, %[[ROW:.*]], %c0_i32 : i32
// CHECK: arith.cmpi slt, %[[ROW]], %[[N]] : i32
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: scf.if %[[IN]] -> (vector<8xf16>) {
// CHECK:   %[[V:.*]] = llvm.load %[[PTR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK:   scf.yield %[[V]] : vector<8xf16>
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : vector<8xf16>
// CHECK: }
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: }
// Row maxima: the lanes of a row hold copies; only the first writes.
// CHECK: nvvm.shfl.sync bfly
// CHECK: arith.shrui %c16843009_i32, %{{.*}} : i32
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
func.func @masked(%X: !tile.global<[N, 64], f16> {tile.name = "X"},
                  %Y: !tile.global<[N, 64], f16> {tile.name = "Y"},
                  %M: !tile.global<[N], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = tile.program_id 0 : i32
  %r0 = arith.muli %pid, %c16 : i32
  %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<16x64xf16, #blocked>
  tile.store %x, %Y[%r0, %c0] window [0, 1] : tensor<16x64xf16, #blocked> -> !tile.global<[N, 64], f16>
  %x32 = arith.extf %x : tensor<16x64xf16, #blocked> to tensor<16x64xf32, #blocked>
  %m = tile.reduce max %x32 axis = 1 : tensor<16x64xf32, #blocked> -> tensor<16xf32, #rows>
  tile.store %m, %M[%r0] window [0] : tensor<16xf32, #rows> -> !tile.global<[N], f32>
  return
}

// -----

// A write between a load and the MMA that uses it keeps the load in place
// (all 16 B registers loaded before the store); a load with no write in
// between is fused (4 registers per fragment, loaded after the store).
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
// CHECK-LABEL: gpu.func @fusion
// CHECK: %[[B1:.*]] = vector.from_elements {{.*}} : vector<16xf16>
// CHECK: llvm.store
// CHECK: vector.shuffle %[[B1]], %[[B1]] [0, 1]
// CHECK: nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<4xf16>
// CHECK-NOT: vector<16xf16>
// CHECK: nvvm.mma.sync
func.func @fusion(%G: !tile.global<[16, 32], f16> {tile.name = "G"},
                  %R: !tile.global<[16, 32], f32> {tile.name = "R"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<16x32xf32, #mma>
  %a = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x16xf16, #A>
  %b1 = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x32xf16, #B>
  tile.store %zero, %R[%c0, %c0] window [0, 1] : tensor<16x32xf32, #mma> -> !tile.global<[16, 32], f32>
  %c1 = tile.mma %a, %b1, %zero : tensor<16x16xf16, #A>, tensor<16x32xf16, #B> -> tensor<16x32xf32, #mma>
  %b2 = tile.load %G[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[16, 32], f16> -> tensor<16x32xf16, #B>
  %c2 = tile.mma %a, %b2, %c1 : tensor<16x16xf16, #A>, tensor<16x32xf16, #B> -> tensor<16x32xf32, #mma>
  tile.store %c2, %R[%c0, %c0] window [0, 1] : tensor<16x32xf32, #mma> -> !tile.global<[16, 32], f32>
  return
}

// -----

// Rows [i, i + 16) of a loop whose upper bound is (N / 16) * 16 of X's dim
// and whose step is 16 never leave X, nor Y, whose dim has the same symbol N
// (equal at launch): no row checks in the first loop, but for Z, whose rows
// are M. The second loop runs to N itself: its last block may hang over, so
// rows are checked. The batch index is checked once per tile, not per
// register.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @proven_in_bounds
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1> {tile.name = "X"}, %[[B:.*]]: i32 {tile.name = "X.d0"}, %[[N:.*]]: i32 {tile.name = "X.d1"}
// CHECK-SAME: %[[YN:[a-z0-9]*]]: i32 {tile.name = "Y.d1"}
// CHECK-SAME: %[[ZM:[a-z0-9]*]]: i32 {tile.name = "Z.d1"}
// CHECK: scf.for
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: scf.if %{{.*}} -> (vector<16xf32>)
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: arith.cmpi slt, %{{.*}}, %[[ZM]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %[[N]]
func.func @proven_in_bounds(%X: !tile.global<[B, N, 32], f32> {tile.name = "X"},
                            %Y: !tile.global<[B, N, 32], f32> {tile.name = "Y"},
                            %Z: !tile.global<[B, M, 32], f32> {tile.name = "Z"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %b = tile.program_id 0 : i32
  %n = tile.dim %X[1] : !tile.global<[B, N, 32], f32>
  %blocks = arith.divsi %n, %c16 : i32
  %full = arith.muli %blocks, %c16 : i32
  scf.for %i = %c0 to %full step %c16 : i32 {
    %x = tile.load %X[%b, %i, %c0] window [1, 2] pad 0.0 : f32 : !tile.global<[B, N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, N, 32], f32>
    tile.store %x, %Z[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, M, 32], f32>
  }
  scf.for %i = %full to %n step %c16 : i32 {
    %x = tile.load %X[%b, %i, %c0] window [1, 2] pad 0.0 : f32 : !tile.global<[B, N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, N, 32], f32>
  }
  return
}

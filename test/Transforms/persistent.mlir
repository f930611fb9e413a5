// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(tile-persistent{ctas=3})' | FileCheck %s
// Idempotent: a kernel with tile.persistent is left alone.
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(tile-persistent{ctas=3},tile-persistent{ctas=5})' | FileCheck %s
// Schedules by option, and the CTA count from the arch (132 SMs x 2 CTAs of
// 256 threads and 80 KiB of shared memory on sm_90).
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(tile-persistent{schedule=longest-first})' | FileCheck %s --check-prefix=LPT

#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>

// A 2-D grid (query blocks, B * H); not causal: static order, axis 0
// fastest. The grid function launches min(tiles, 3) CTAs along x.
// CHECK-LABEL: func.func @copy_grid
// CHECK:      %[[G0:.*]] = arith.ceildivsi
// CHECK:      %[[G1:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:      %[[ALL:.*]] = arith.muli %[[G0]], %[[G1]] : i32
// CHECK-NEXT: %[[TILES:.*]] = arith.muli %[[ALL]], %[[C1:.*]] : i32
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[N:.*]] = arith.minsi %[[TILES]], %[[C3]] : i32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: return %[[N]], %[[ONE]], %[[ONE]] : i32, i32, i32

// CHECK-LABEL: func.func @copy(
// CHECK-SAME: tile.persistent = "static"
// The asked-for grid, cloned from the grid function.
// CHECK:      %[[K0:.*]] = arith.ceildivsi
// CHECK:      %[[K1:.*]] = arith.muli
// CHECK:      %[[KT0:.*]] = arith.muli %[[K0]], %[[K1]] : i32
// CHECK-NEXT: %[[KT:.*]] = arith.muli %[[KT0]], %{{.*}} : i32
// CHECK-NEXT: %[[PID:.*]] = tile.program_id 0 : i32
// CHECK-NEXT: %[[NP:.*]] = tile.num_programs 0 : i32
// Buffers and constants before the loop.
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 128 : i32
// CHECK-NEXT: tile.local_alloc
// CHECK-NEXT: scf.for %[[T:.*]] = %[[PID]] to %[[KT]] step %[[NP]] : i32 {
// CHECK-NEXT:   %[[X:.*]] = arith.remsi %[[T]], %[[K0]] : i32
// CHECK-NEXT:   %[[REST:.*]] = arith.divsi %[[T]], %[[K0]] : i32
// CHECK-NEXT:   %[[Y:.*]] = arith.remsi %[[REST]], %[[K1]] : i32
// CHECK-NEXT:   arith.divsi %[[REST]], %[[K1]] : i32
// CHECK-NEXT:   arith.muli %[[X]], %{{.*}} : i32
// num_programs(1) is the asked-for grid's, not the launch's.
// CHECK-NEXT:   arith.addi %[[Y]], %[[K1]] : i32
// CHECK:        tile.async_copy
// CHECK:        tile.store
// The hand-over to the next tile.
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT: }
// CHECK-NEXT: return

// LPT-LABEL: func.func @copy_grid
// LPT:      arith.constant 264 : i32
// LPT-LABEL: func.func @copy(
// LPT-SAME: tile.persistent = "longest-first"
// LPT:      %[[K0:.*]] = arith.ceildivsi
// LPT:      %[[K1:.*]] = arith.muli
// LPT:      scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// Axis 0 slowest and reversed: the last query block's tiles first.
// LPT-NEXT:   %[[INNER:.*]] = arith.muli %[[K1]], %[[KZ:.*]] : i32
// LPT-NEXT:   %[[RANK:.*]] = arith.divsi %[[T]], %[[INNER]] : i32
// LPT-NEXT:   %[[ONE:.*]] = arith.constant 1 : i32
// LPT-NEXT:   %[[LAST:.*]] = arith.subi %[[K0]], %[[ONE]] : i32
// LPT-NEXT:   %[[X:.*]] = arith.subi %[[LAST]], %[[RANK]] : i32
// LPT-NEXT:   %[[REST:.*]] = arith.remsi %[[T]], %[[INNER]] : i32
// LPT-NEXT:   %[[Y:.*]] = arith.remsi %[[REST]], %[[K1]] : i32
// LPT-NEXT:   arith.divsi %[[REST]], %[[K1]] : i32
// LPT-NEXT:   arith.muli %[[X]], %{{.*}} : i32
module attributes {tile.arch = 90 : i64} {
  func.func @copy_grid(%X: !tile.global<[B, H, N, 64], f16> {tile.name = "X"},
                       %Y: !tile.global<[B, H, N, 64], f16> {tile.name = "Y"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    %n = tile.dim %X[2] : !tile.global<[B, H, N, 64], f16>
    %b = tile.dim %X[0] : !tile.global<[B, H, N, 64], f16>
    %h = tile.dim %X[1] : !tile.global<[B, H, N, 64], f16>
    %g0 = arith.ceildivsi %n, %c128 : i32
    %g1 = arith.muli %b, %h : i32
    return %g0, %g1, %c1 : i32, i32, i32
  }
  func.func @copy(%X: !tile.global<[B, H, N, 64], f16> {tile.name = "X"},
                  %Y: !tile.global<[B, H, N, 64], f16> {tile.name = "Y"})
      attributes {tile.grid = @copy_grid, tile.num_warps = 8 : i32,
                  tile.shared_bytes = 81920 : i64,
                  tile.constants = {CAUSAL = false}} {
    %c0 = arith.constant 0 : i32
    %c128 = arith.constant 128 : i32
    %buf = tile.local_alloc {offset = 0 : i64} : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
    %pid = tile.program_id 0 : i32
    %bh = tile.program_id 1 : i32
    %nbh = tile.num_programs 1 : i32
    %r0 = arith.muli %pid, %c128 : i32
    %shifted = arith.addi %bh, %nbh : i32
    tile.async_copy %X[%c0, %c0, %r0, %c0] window [2, 3] into %buf[%c0]
        : !tile.global<[B, H, N, 64], f16> -> !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %x = tile.load %X[%c0, %c0, %r0, %c0] window [2, 3] pad 0.0 : f16 : !tile.global<[B, H, N, 64], f16> -> tensor<128x64xf16, #blocked>
    tile.store %x, %Y[%c0, %c0, %r0, %c0] window [2, 3] : tensor<128x64xf16, #blocked> -> !tile.global<[B, H, N, 64], f16>
    return
  }
}

// -----

// CAUSAL = true: longest first without asking.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME: tile.persistent = "longest-first"
// CHECK:      scf.for
// CHECK-NEXT:   arith.muli
// CHECK-NEXT:   arith.divsi
// CHECK-NEXT:   arith.constant 1 : i32
// CHECK-NEXT:   arith.subi
// CHECK-NEXT:   arith.subi
module attributes {tile.arch = 80 : i64} {
  func.func @causal_grid(%X: !tile.global<[N, 64], f16> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %n = tile.dim %X[0] : !tile.global<[N, 64], f16>
    return %n, %c1, %c1 : i32, i32, i32
  }
  func.func @causal(%X: !tile.global<[N, 64], f16> {tile.name = "X"})
      attributes {tile.grid = @causal_grid, tile.num_warps = 1 : i32,
                  tile.constants = {CAUSAL = true}} {
    %pid = tile.program_id 0 : i32
    %v = tile.load_scalar %X[%pid, %pid] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> f16
    return
  }
}

// -----

// A warp-specialized kernel (tile-warp-specialize's output, its two key
// loops one TMA ring: tile-tma-copies{shared-rings}, the ring's bytes its
// own: tile-allocate-shared{persistent-rings}). The producer's issuing warp
// and the consumers each loop over the tiles inside their side of the split,
// after their setmaxnreg. Both loops carry ring 0's count of blocks: the
// second key loop's (and its prologue copies') count is the first's plus
// the first loop's trip count (marked tile.tma_ring_base), and each tile
// adds the second's. Only the consumers end a tile with a barrier (their
// named barrier once converted): the producer runs on into the next tile.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME:      tile.persistent = "static"
// CHECK:         %[[PID:.*]] = tile.program_id 0 : i32
// CHECK-NEXT:    %[[NP:.*]] = tile.num_programs 0 : i32
// CHECK:         scf.if
// CHECK-NEXT:      nvvm.setmaxregister decrease 24
// CHECK:           scf.if
// CHECK:             %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:             scf.for %{{.*}} = %[[PID]] to %{{.*}} step %[[NP]] iter_args(%[[N:.*]] = %[[ZERO]]) -> (i32)
// CHECK-NOT:           tile.barrier
// CHECK:               tile.async_copy {{.*}}tile.tma_barrier = 0
// CHECK:               scf.for %{{.*}} = %[[LB:arg4]] to %[[MID:arg5]] step %[[STEP:.*]] :
// CHECK:               %[[SPAN:.*]] = arith.subi %[[MID]], %[[LB]] : i32
// CHECK:               %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : i32
// CHECK:               %[[UP:.*]] = arith.addi %[[POS]], %{{.*}} : i32
// CHECK-NEXT:          %[[TRIP:.*]] = arith.divui %[[UP]], %[[STEP]] : i32
// CHECK-NEXT:          %[[BASE:.*]] = arith.addi %[[N]], %[[TRIP]] {tile.tma_ring_base = 0 : i64} : i32
// CHECK-NEXT:          tile.async_copy {{.*}}tile.tma_barrier = 0
// CHECK:               scf.for %{{.*}} = %[[MID]] to %[[UB:arg6]] step
// CHECK:               %[[NEXT:.*]] = arith.addi %[[BASE]], %{{.*}} : i32
// CHECK-NEXT:          scf.yield %[[NEXT]] : i32
// CHECK-NEXT:        } {tile.tma_ring_counts = array<i64: 0>}
// CHECK:         } else {
// CHECK-NEXT:      nvvm.setmaxregister increase 240
// CHECK:           scf.for %[[T:.*]] = %[[PID]] to %{{.*}} step %[[NP]] iter_args(%[[CN:.*]] = %{{.*}}) -> (i32)
// CHECK-NEXT:        %[[X:.*]] = arith.remsi %[[T]], %{{.*}} : i32
// CHECK:             tile.async_copy %arg0[%arg3, %[[X]],
// CHECK:             %[[CBASE:.*]] = arith.addi %[[CN]], %{{.*}} {tile.tma_ring_base = 0 : i64} : i32
// CHECK-NEXT:        scf.for %{{.*}} = %[[MID]] to %[[UB]]
// CHECK:             %[[CNEXT:.*]] = arith.addi %[[CBASE]], %{{.*}} : i32
// CHECK-NEXT:        tile.async_wait 0{{$}}
// CHECK-NEXT:        tile.barrier
// CHECK-NEXT:        scf.yield %[[CNEXT]] : i32
// CHECK-NEXT:      } {tile.tma_ring_counts = array<i64: 0>}
// CHECK-NEXT:    } {tile.warp_roles}

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  func.func @ring_grid(%arg0: !tile.global<[B, N, 128], f16>, %arg1: !tile.global<[B, N, 128], f16>, %arg2: !tile.global<[B, N, 128], f16>, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %n = tile.dim %arg0[1] : !tile.global<[B, N, 128], f16>
    return %n, %c1, %c1 : i32, i32, i32
  }
  func.func @ring(%arg0: !tile.global<[B, N, 128], f16>, %arg1: !tile.global<[B, N, 128], f16>, %arg2: !tile.global<[B, N, 128], f16>, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32) attributes {tile.grid = @ring_grid, tile.num_warps = 8 : i32, tile.shared_bytes = 81920 : i64, tile.tma_barriers = array<i64: 2, 2>, tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 8 : i32, producer_regs = 24 : i64}} {
    %0 = tile.local_alloc {offset = 65536 : i64} : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
    %1 = tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
    %2 = tile.local_alloc {offset = 32768 : i64} : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
    %3 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32 = arith.constant 256 : i32
    %4 = arith.cmpi uge, %3, %c256_i32 : i32
    scf.if %4 {
      nvvm.setmaxregister  decrease 24
      %c288_i32 = arith.constant 288 : i32
      %5 = arith.cmpi ult, %3, %c288_i32 : i32
      scf.if %5 {
        %c0_i32 = arith.constant 0 : i32
        %c64_i32 = arith.constant 64 : i32
        %c0_i32_0 = arith.constant 0 : i32
        %6 = arith.cmpi slt, %arg4, %arg5 : i32
        tile.async_copy %arg1[%arg3, %arg4, %c0_i32] window [1, 2] into %1[%c0_i32_0] if %6 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        tile.async_copy %arg2[%arg3, %arg4, %c0_i32] window [1, 2] into %2[%c0_i32_0] if %6 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        %c2_i32 = arith.constant 2 : i32
        %c1_i32 = arith.constant 1 : i32
        %7 = arith.muli %c64_i32, %c1_i32 : i32
        scf.for %arg7 = %arg4 to %arg5 step %c64_i32  : i32 {
          %10 = arith.subi %arg7, %arg4 : i32
          %11 = arith.divui %10, %c64_i32 : i32
          %12 = arith.addi %11, %c1_i32 : i32
          %13 = arith.remui %12, %c2_i32 : i32
          %14 = arith.addi %arg7, %7 : i32
          %15 = arith.cmpi slt, %14, %arg5 : i32
          tile.async_copy %arg1[%arg3, %14, %c0_i32] window [1, 2] into %1[%13] if %15 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
          tile.async_copy %arg2[%arg3, %14, %c0_i32] window [1, 2] into %2[%13] if %15 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        }
        %c0_i32_1 = arith.constant 0 : i32
        %8 = arith.cmpi slt, %arg5, %arg6 : i32
        tile.async_copy %arg1[%arg3, %arg5, %c0_i32] window [1, 2] into %1[%c0_i32_1] if %8 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        tile.async_copy %arg2[%arg3, %arg5, %c0_i32] window [1, 2] into %2[%c0_i32_1] if %8 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        %c2_i32_2 = arith.constant 2 : i32
        %c1_i32_3 = arith.constant 1 : i32
        %9 = arith.muli %c64_i32, %c1_i32_3 : i32
        scf.for %arg7 = %arg5 to %arg6 step %c64_i32  : i32 {
          %10 = arith.subi %arg7, %arg5 : i32
          %11 = arith.divui %10, %c64_i32 : i32
          %12 = arith.addi %11, %c1_i32_3 : i32
          %13 = arith.remui %12, %c2_i32_2 : i32
          %14 = arith.addi %arg7, %9 : i32
          %15 = arith.cmpi slt, %14, %arg6 : i32
          tile.async_copy %arg1[%arg3, %14, %c0_i32] window [1, 2] into %1[%13] if %15 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
          tile.async_copy %arg2[%arg3, %14, %c0_i32] window [1, 2] into %2[%13] if %15 {tile.tma_barrier = 0 : i64, tile.tma_producer, tile.tma_swizzle = "128B"} : !tile.global<[B, N, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        }
      }
    } else {
      nvvm.setmaxregister  increase 240
      %c0_i32 = arith.constant 0 : i32
      %5 = tile.program_id 0 : i32
      tile.async_copy %arg0[%arg3, %5, %c0_i32] window [1, 2] into %0[%c0_i32] : !tile.global<[B, N, 128], f16> -> !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
      tile.async_commit
      tile.async_wait 0
      tile.barrier
      %6 = tile.local_load %0[%c0_i32] : !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_a>
      %c64_i32 = arith.constant 64 : i32
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
      %c2_i32 = arith.constant 2 : i32
      %7 = scf.for %arg7 = %arg4 to %arg5 step %c64_i32 iter_args(%arg8 = %cst) -> (tensor<64x64xf32, #mma>)  : i32 {
        %9 = arith.subi %arg7, %arg4 : i32
        %10 = arith.divui %9, %c64_i32 : i32
        %11 = arith.remui %10, %c2_i32 : i32
        tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
        %12 = tile.local_load %1[%11] : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_b_t>
        %13 = tile.local_load %2[%11] : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_b>
        scf.yield %arg8 : tensor<64x64xf32, #mma>
      } {flash.keep}
      tile.async_wait 0
      %c2_i32_0 = arith.constant 2 : i32
      %8 = scf.for %arg7 = %arg5 to %arg6 step %c64_i32 iter_args(%arg8 = %7) -> (tensor<64x64xf32, #mma>)  : i32 {
        %9 = arith.subi %arg7, %arg5 : i32
        %10 = arith.divui %9, %c64_i32 : i32
        %11 = arith.remui %10, %c2_i32_0 : i32
        tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
        %12 = tile.local_load %1[%11] : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_b_t>
        %13 = tile.local_load %2[%11] : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_b>
        scf.yield %arg8 : tensor<64x64xf32, #mma>
      } {flash.keep}
      tile.async_wait 0
    } {tile.warp_roles}
    return
  }
}


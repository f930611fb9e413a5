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

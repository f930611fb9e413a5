// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s

// The TMA copies tile-tma-copies marks, at the SIMT level: thread 0 inits
// the loop's two mbarriers (after the 32 KiB of buffers) with two arrivals
// each, fences the inits and passes a barrier; each copy (thread 0, under its
// predicate) arms its slot's barrier with the slot's 16 KiB and issues two
// 128B-swizzled boxes of 64 x 64 (its column blocks), coordinates innermost
// first; each iteration waits on its slot's barrier for the parity of its
// round. One map per tensor: K.tmap and V.tmap, __grid_constant__ parameters
// after the expanded tensors, listed in flashc.tensor_maps.

!T = !tile.global<[B, N, 128], f16>
!buf = !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

// CHECK-LABEL: gpu.func @ring(
// CHECK-SAME:      %[[KMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tile.name = "K.tmap"}
// CHECK-SAME:      %[[VMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tile.name = "V.tmap"}
// CHECK-SAME:      flashc.shared_bytes = 65552 : i64
// CHECK-SAME:      flashc.tensor_maps = [{box = array<i64: 1, 64, 64>, name = "K.tmap", oob = "zero", swizzle = "128B", tensor = "K"}, {box = array<i64: 1, 64, 64>, name = "V.tmap", oob = "zero", swizzle = "128B", tensor = "V"}]
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK:         %[[LEADER:.*]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK:         scf.if %[[LEADER]] {
// CHECK:           %[[B0:.*]] = llvm.getelementptr %{{.*}}[%c65536_i32]
// CHECK:           nvvm.mbarrier.init %[[B0]], %c2_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:           %[[B1:.*]] = llvm.getelementptr %{{.*}}[%c65544_i32]
// CHECK:           nvvm.mbarrier.init %[[B1]], %c2_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         }
// CHECK-NEXT:    nvvm.fence.mbarrier.init
// CHECK-NEXT:    nvvm.barrier
// CHECK:         scf.if
// CHECK:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32 : !llvm.ptr<3>, i32
// CHECK:           %[[D0:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %[[D0]], %[[KMAP]], %{{.*}}, box[%c0_i32, %{{.*}}, %{{.*}}]
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%c64_i32, %{{.*}}, %{{.*}}]
// CHECK:         scf.for %[[I:.*]] = %[[LB:.*]] to
// CHECK:           %[[REL:.*]] = arith.subi %[[I]], %[[LB]] : i32
// CHECK:           %[[K:.*]] = arith.divui %[[REL]], %{{.*}} : i32
// CHECK:           %[[SLOT:.*]] = arith.remui %[[K]], %c2_i32 : i32
// CHECK:           %[[ROUND:.*]] = arith.divui %[[K]], %c2_i32 : i32
// CHECK:           %[[PAR:.*]] = arith.andi %[[ROUND]], %c1_i32 : i32
// CHECK:           nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PAR]], %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK-NEXT:      nvvm.barrier
// CHECK:           nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2:   nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[KMAP]]
// CHECK:           nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2:   nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[VMAP]]
// CHECK-NOT:       nvvm.cp.async.shared.global
// CHECK:         nvvm.cp.async.wait.group 0
module attributes {tile.wgmma} {
func.func @ring(%K: !T {tile.name = "K"}, %V: !T {tile.name = "V"}, %b: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 65536 : i64,
                tile.tma_barriers = array<i64: 2, 2>} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc {offset = 0 : i64} : !buf
  %vb = tile.local_alloc {offset = 32768 : i64} : !buf
  %p0 = arith.cmpi slt, %lb, %ub : i32
  tile.async_copy %K[%b, %lb, %c0] window [1, 2] into %kb[%c0] if %p0 {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !T -> !buf
  tile.async_copy %V[%b, %lb, %c0] window [1, 2] into %vb[%c0] if %p0 {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !T -> !buf
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    %rel = arith.subi %i, %lb : i32
    %k = arith.divui %rel, %c64 : i32
    %w = arith.addi %k, %c1 : i32
    %ws = arith.remui %w, %c2 : i32
    %next = arith.addi %i, %c64 : i32
    %more = arith.cmpi slt, %next, %ub : i32
    tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
    tile.barrier
    tile.async_copy %K[%b, %next, %c0] window [1, 2] into %kb[%ws] if %more {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !T -> !buf
    tile.async_copy %V[%b, %next, %c0] window [1, 2] into %vb[%ws] if %more {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !T -> !buf
  } {flash.keep}
  tile.async_wait 0
  return
}
}

// -----

// A packed batch's rows (varlen K [T, H, 128]): the window runs over dims 0
// and 2, so the map keeps the tensor's rank with a box of one head, {64, 1,
// 64}, whose rows are H * 128 elements apart; the coordinates innermost
// first are the column block, the head and the row.
!P = !tile.global<[T, H, 128], f16>
!pbuf = !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>

// CHECK-LABEL: gpu.func @packed_rows(
// CHECK-SAME:      %[[H:[^:]*]]: i32 {tile.name = "h"}
// CHECK-SAME:      %[[KMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tile.name = "K.tmap"}
// CHECK-SAME:      flashc.tensor_maps = [{box = array<i64: 64, 1, 64>, name = "K.tmap", oob = "zero", swizzle = "128B", tensor = "K"}]
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%c0_i32, %[[H]], %[[ROW:arg[0-9]+]]]
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%c64_i32, %[[H]], %[[ROW]]]
module attributes {tile.wgmma} {
func.func @packed_rows(%K: !P {tile.name = "K"}, %h: i32 {tile.name = "h"}, %row: i32, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 32768 : i64,
                tile.tma_barriers = array<i64: 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %kb = tile.local_alloc {offset = 0 : i64} : !pbuf
  %p0 = arith.cmpi slt, %lb, %ub : i32
  tile.async_copy %K[%row, %h, %c0] window [0, 2] into %kb[%c0] if %p0 {tile.tma_barrier = 0 : i64, tile.tma_swizzle = "128B"} : !P -> !pbuf
  %c1 = arith.constant 1 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    %k = arith.subi %i, %lb : i32
    %kk = arith.divui %k, %c64 : i32
    tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_stages = 2 : i64}
    tile.barrier
  } {flash.keep}
  tile.async_wait 0
  return
}
}

// -----

// A cp.async ring tile-warp-specialize gave a producer warpgroup (its
// output for a paged K ring, test/Transforms/warp-specialize.mlir): the
// full barriers count the producer's 128 threads, the empty ones the 4
// consumer warps. The producer's threads count from the split for the
// copies' layout; each copy goes under its predicate as a whole, in the
// loop after the slot's empty wait, and each commit becomes every producer
// thread's cp.async.mbarrier.arrive.noinc on the slot's full barrier, under
// the predicate of the copy before it. The consumers' full wait is followed
// by a proxy fence (cp.async wrote through the generic proxy, wgmma reads
// through the async one).
// CHECK-LABEL: gpu.func @paged(
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK:         scf.if
// CHECK:           nvvm.mbarrier.init %{{.*}}, %[[C128:.*]] :
// CHECK:           nvvm.mbarrier.init %{{.*}}, %[[C128]] :
// CHECK:           nvvm.mbarrier.init %{{.*}}, %[[C4:c4_i32]] :
// CHECK:           nvvm.mbarrier.init %{{.*}}, %[[C4]] :
// CHECK:         %[[SPLIT:.*]] = arith.constant 128 : i32
// CHECK:         %[[ROLE:.*]] = arith.cmpi uge, %[[TID]], %[[SPLIT]]
// CHECK:         scf.if %[[ROLE]] {
// CHECK-NEXT:      %[[PTID:.*]] = arith.subi %[[TID]], %[[SPLIT]] {simt.producer_tid}
// CHECK-NEXT:      arith.divui %[[PTID]], %c32_i32
// CHECK-NEXT:      arith.remui %[[PTID]], %c32_i32
// CHECK-NEXT:      nvvm.setmaxregister decrease 80
// CHECK:           scf.if %[[P0:[0-9]+]] {{[{]$}}
// CHECK-NOT:         nvvm.mbarrier
// CHECK:             nvvm.cp.async.shared.global
// CHECK:           scf.if %[[P0]] {{[{]$}}
// CHECK:             nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true}
// CHECK:           scf.for
// CHECK:             scf.if %[[P1:[0-9]+]] {{[{]$}}
// CHECK:               nvvm.mbarrier.try_wait.parity
// CHECK:               nvvm.cp.async.shared.global
// CHECK:             scf.if %[[P1]] {{[{]$}}
// CHECK:               nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true}
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK:         } else {
// CHECK:           nvvm.setmaxregister increase 256
// CHECK:           scf.for
// CHECK:             nvvm.mbarrier.arrive
// CHECK:             nvvm.mbarrier.try_wait.parity
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK:         } {tile.warp_roles}

#blocked = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
#rows = #tile.slice<1, #blocked>
module attributes {tile.wgmma} {
  func.func @paged(%arg0: !tile.global<[Pages, 16, 128], f16>, %arg1: !tile.global<[B], i32>, %arg2: !tile.global<[B, MaxPages], i32>, %arg3: i32, %arg4: i32) attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 32768 : i64, tile.tma_barriers = array<i64: 128, 128>, tile.warp_specialize = {consumer_regs = 256 : i64, consumer_warps = 4 : i32, producer_regs = 80 : i64}} {
    %0 = tile.local_alloc {offset = 0 : i64} : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
    %1 = nvvm.read.ptx.sreg.tid.x : i32
    %c128_i32 = arith.constant 128 : i32
    %2 = arith.cmpi uge, %1, %c128_i32 : i32
    scf.if %2 {
      nvvm.setmaxregister  decrease 80
      %c0_i32 = arith.constant 0 : i32
      %3 = tile.load_scalar %arg1[%arg3] pad 0 : i32 : !tile.global<[B], i32> -> i32
      %c64_i32 = arith.constant 64 : i32
      %cst = arith.constant dense<16> : tensor<64xi32, #rows>
      %4 = tile.iota : tensor<64xi32, #rows>
      %c0_i32_0 = arith.constant 0 : i32
      %5 = arith.cmpi slt, %c0_i32, %3 : i32
      %6 = tile.splat %c0_i32 : i32 -> tensor<64xi32, #rows>
      %7 = arith.addi %6, %4 : tensor<64xi32, #rows>
      %8 = arith.divsi %7, %cst : tensor<64xi32, #rows>
      %9 = tile.load %arg2[%arg3, %c0_i32] window [] gather [1] (%8 : tensor<64xi32, #rows>) pad 0 : i32 : !tile.global<[B, MaxPages], i32> -> tensor<64xi32, #rows>
      %10 = arith.remsi %7, %cst : tensor<64xi32, #rows>
      tile.async_copy %arg0[%c0_i32, %c0_i32, %c0_i32] window [2] gather [0, 1] (%9, %10 : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %0[%c0_i32_0] if %5 {tile.cp_async_barrier = 0 : i64} : !tile.global<[Pages, 16, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
      tile.async_commit {tile.cp_async_barrier = 0 : i64}
      %c2_i32 = arith.constant 2 : i32
      %c1_i32 = arith.constant 1 : i32
      %11 = arith.muli %c64_i32, %c1_i32 : i32
      scf.for %arg5 = %c0_i32 to %3 step %c64_i32  : i32 {
        %12 = arith.subi %arg5, %c0_i32 : i32
        %13 = arith.divui %12, %c64_i32 : i32
        %14 = arith.addi %13, %c1_i32 : i32
        %15 = arith.remui %14, %c2_i32 : i32
        %16 = arith.addi %arg5, %11 : i32
        %17 = arith.cmpi slt, %16, %3 : i32
        %18 = tile.splat %16 : i32 -> tensor<64xi32, #rows>
        %19 = arith.addi %18, %4 : tensor<64xi32, #rows>
        %20 = arith.divsi %19, %cst : tensor<64xi32, #rows>
        %21 = tile.load %arg2[%arg3, %c0_i32] window [] gather [1] (%20 : tensor<64xi32, #rows>) pad 0 : i32 : !tile.global<[B, MaxPages], i32> -> tensor<64xi32, #rows>
        %22 = arith.remsi %19, %cst : tensor<64xi32, #rows>
        tile.async_copy %arg0[%c0_i32, %c0_i32, %c0_i32] window [2] gather [0, 1] (%21, %22 : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %0[%15] if %17 {tile.cp_async_barrier = 0 : i64} : !tile.global<[Pages, 16, 128], f16> -> !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
        tile.async_commit {tile.cp_async_barrier = 0 : i64}
      }
      tile.async_wait 0
    } else {
      nvvm.setmaxregister  increase 256
      %c0_i32 = arith.constant 0 : i32
      %3 = tile.load_scalar %arg1[%arg3] pad 0 : i32 : !tile.global<[B], i32> -> i32
      %4 = arith.cmpi sle, %3, %arg4 : i32
      tile.device_assert %4, "past the table" : i1
      %c64_i32 = arith.constant 64 : i32
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
      %c2_i32 = arith.constant 2 : i32
      %5 = scf.for %arg5 = %c0_i32 to %3 step %c64_i32 iter_args(%arg6 = %cst) -> (tensor<64x64xf32, #mma>)  : i32 {
        %6 = arith.subi %arg5, %c0_i32 : i32
        %7 = arith.divui %6, %c64_i32 : i32
        %8 = arith.remui %7, %c2_i32 : i32
        tile.async_wait 0 {tile.cp_async_barrier = 0 : i64, tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
        %9 = tile.local_load %0[%8] : !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64> -> tensor<64x128xf16, #dot_b_t>
        scf.yield %arg6 : tensor<64x64xf32, #mma>
      } {flash.keep}
      tile.async_wait 0
    } {tile.warp_roles}
    return
  }
}



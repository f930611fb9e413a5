// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pingpong-warpgroups{remarks=true}))' -verify-diagnostics | FileCheck %s
// With head-dims=128 (flashc's choice) the d64 kernels are left alone too.
// RUN: flash-opt %s --split-input-file --mlir-print-op-on-diagnostic=false --pass-pipeline='builtin.module(func.func(tile-pingpong-warpgroups{remarks=true head-dims=128}))' 2>&1 >/dev/null | FileCheck %s --check-prefix=D128
// D128: remark: consumer warpgroups do not take turns: head dim 64 is not one of the turns' head dims
// D128: remark: consumer warpgroups do not take turns: head dim 64 is not one of the turns' head dims
// D128: remark: consumer warpgroups do not take turns: one consumer warpgroup
// D128: remark: consumer warpgroups do not take turns: the kernel has no producer warpgroup
// D128: remark: consumer warpgroups do not take turns: a GEMM in a loop whose bounds may differ between warpgroups
// D128-NOT: remark: consumer warpgroups take turns

// A warp-specialized consumer loop as tile-overlap-wgmma leaves it (block
// k's Q K^T, block k - 1's P V, then the softmax) and the last block's P V
// after it. Each warpgroup's turn: bar.sync on its own barrier (3 + g, 256
// threads) before the section's shared-memory operands are read (so the
// reads stay fused into the wgmma), bar.arrive on the next one's after the
// last GEMM of the section; the softmax is outside. Warpgroup 1 gives
// warpgroup 0 the first turn after the register increase, warpgroup 0 takes
// the last one back at the end.
// CHECK-LABEL: func.func @pingpong(
// CHECK:         scf.if
// CHECK:           nvvm.setmaxregister  decrease 24
// CHECK:         } else {
// CHECK-NEXT:      nvvm.setmaxregister  increase 240
// CHECK-NEXT:      %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK-NEXT:      %[[C128:.*]] = arith.constant 128 : i32
// CHECK-NEXT:      %[[G:.*]] = arith.divui %[[TID]], %[[C128]]
// CHECK-NEXT:      %[[BASE:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[MINE:.*]] = arith.addi %[[BASE]], %[[G]]
// CHECK-NEXT:      %[[N:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[G1:.*]] = arith.addi %[[G]], %[[ONE]]
// CHECK-NEXT:      %[[FOLLOW:.*]] = arith.remui %[[G1]], %[[N]]
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[BASE]], %[[FOLLOW]]
// CHECK-NEXT:      %[[PAIR:.*]] = arith.constant 256 : i32
// CHECK-NEXT:      %[[LASTG:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[ISLAST:.*]] = arith.cmpi eq, %[[G]], %[[LASTG]]
// CHECK-NEXT:      scf.if %[[ISLAST]] {
// CHECK-NEXT:        nvvm.barrier.arrive id = %[[BASE]] number_of_threads = %[[PAIR]]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for
// CHECK:             tile.async_wait 0
// CHECK-NEXT:        nvvm.barrier id = %[[MINE]] number_of_threads = %[[PAIR]]
// CHECK-NEXT:        %[[K:.*]] = tile.local_load
// CHECK-NEXT:        %[[S:.*]] = tile.mma %{{.*}}, %[[K]]
// CHECK-NEXT:        %[[V:.*]] = tile.local_load
// CHECK-NEXT:        %[[O:.*]] = tile.mma %{{.*}}, %[[V]]
// CHECK-NEXT:        nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %[[PAIR]] {tile.pingpong}
// CHECK-NEXT:        arith.mulf %[[O]]
// CHECK-NEXT:        math.exp2 %[[S]]
// CHECK:             scf.yield
// CHECK:           scf.if
// CHECK-NEXT:        nvvm.barrier id = %[[MINE]] number_of_threads = %[[PAIR]]
// CHECK-NEXT:        %[[VL:.*]] = tile.local_load
// CHECK-NEXT:        tile.mma %{{.*}}, %[[VL]]
// CHECK-NEXT:        nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %[[PAIR]] {tile.pingpong}
// CHECK-NEXT:        scf.yield
// CHECK:           %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[ISFIRST:.*]] = arith.cmpi eq, %[[G]], %[[ZERO]]
// CHECK-NEXT:      scf.if %[[ISFIRST]] {
// CHECK-NEXT:        nvvm.barrier id = %[[BASE]] number_of_threads = %[[PAIR]]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tile.pingpong = 2 : i64, tile.warp_roles}
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  // expected-remark @+1 {{consumer warpgroups take turns: 2 warpgroups, named barriers 3..4, 2 GEMM sections}}
  func.func @pingpong(%q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32) attributes {tile.num_warps = 8 : i32, tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 8 : i32, producer_regs = 24 : i64}} {
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %c256_i32 = arith.constant 256 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %zp = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #dot_a>
    %half = arith.constant dense<5.000000e-01> : tensor<128x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %producer = arith.cmpi uge, %tid, %c256_i32 : i32
    scf.if %producer {
      nvvm.setmaxregister decrease 24
    } else {
      nvvm.setmaxregister increase 240
      %r:3 = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo, %pp = %zp, %sp = %c2_i32) -> (tensor<128x64xf32, #mma>, tensor<128x128xf16, #dot_a>, i32) : i32 {
        %k0 = arith.divui %iv, %c128_i32 : i32
        %slot = arith.remui %k0, %c2_i32 : i32
        tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_release_lag = 2 : i64, tile.tma_stages = 2 : i64}
        %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
        %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
        %v = tile.local_load %vb[%sp] : !buf -> tensor<128x64xf16, #dot_b>
        %o = tile.mma %pp, %v, %acc : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
        %o2 = arith.mulf %o, %half : tensor<128x64xf32, #mma>
        %e = math.exp2 %s : tensor<128x128xf32, #mma>
        %h = arith.truncf %e : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %p = tile.convert_layout %h : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #dot_a>
        scf.yield %o2, %p, %slot : tensor<128x64xf32, #mma>, tensor<128x128xf16, #dot_a>, i32
      } {tile.num_stages = 2 : i64}
      %ran = arith.cmpi slt, %lb, %ub : i32
      %out = scf.if %ran -> (tensor<128x64xf32, #mma>) {
        %vl = tile.local_load %vb[%r#2] : !buf -> tensor<128x64xf16, #dot_b>
        %ol = tile.mma %r#1, %vl, %r#0 : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
        scf.yield %ol : tensor<128x64xf32, #mma>
      } else {
        scf.yield %r#0 : tensor<128x64xf32, #mma>
      }
    } {tile.warp_roles}
    return
  }
}

// -----

// Not rotated (--wgmma-overlap=false): the softmax reads S between the two
// GEMMs, so each is a turn of its own, and V's read moves down behind P V's
// turn (it stays fused into the wgmma); three consumer warpgroups pass the
// turn around barriers 3, 4 and 5 (next = 3 + (g + 1) mod 3).
#mma = #tile.mma<warps = [12, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  // expected-remark @+1 {{consumer warpgroups take turns: 3 warpgroups, named barriers 3..5, 2 GEMM sections}}
  func.func @separate(%q: tensor<192x64xf16, #dot_a>, %lb: i32, %ub: i32) attributes {tile.num_warps = 12 : i32, tile.warp_specialize = {consumer_regs = 160 : i64, consumer_warps = 12 : i32, producer_regs = 32 : i64}} {
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %c384_i32 = arith.constant 384 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<192x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<192x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %producer = arith.cmpi uge, %tid, %c384_i32 : i32
    scf.if %producer {
      nvvm.setmaxregister decrease 32
    } else {
      nvvm.setmaxregister increase 160
      %r = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo) -> (tensor<192x64xf32, #mma>) : i32 {
        %k0 = arith.divui %iv, %c128_i32 : i32
        %slot = arith.remui %k0, %c2_i32 : i32
        tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
        %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
        %v = tile.local_load %vb[%slot] : !buf -> tensor<128x64xf16, #dot_b>
        %s = tile.mma %q, %k, %zs {transpose_b} : tensor<192x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<192x128xf32, #mma>
        %e = math.exp2 %s : tensor<192x128xf32, #mma>
        %h = arith.truncf %e : tensor<192x128xf32, #mma> to tensor<192x128xf16, #mma>
        %p = tile.convert_layout %h : tensor<192x128xf16, #mma> -> tensor<192x128xf16, #dot_a>
        %o = tile.mma %p, %v, %acc : tensor<192x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<192x64xf32, #mma>
        scf.yield %o : tensor<192x64xf32, #mma>
      }
    } {tile.warp_roles}
    return
  }
}
// CHECK-LABEL: func.func @separate(
// CHECK:           %[[G:.*]] = arith.divui
// CHECK-NEXT:      %[[BASE:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[MINE:.*]] = arith.addi %[[BASE]], %[[G]]
// CHECK-NEXT:      %[[N:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[G1:.*]] = arith.addi %[[G]], %[[ONE]]
// CHECK-NEXT:      %[[FOLLOW:.*]] = arith.remui %[[G1]], %[[N]]
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[BASE]], %[[FOLLOW]]
// CHECK-NEXT:      %[[PAIR:.*]] = arith.constant 256 : i32
// CHECK-NEXT:      %[[LASTG:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      arith.cmpi eq, %[[G]], %[[LASTG]]
// CHECK:           scf.for
// CHECK:             tile.async_wait 0
// CHECK-NEXT:        nvvm.barrier id = %[[MINE]] number_of_threads = %[[PAIR]]
// CHECK-NEXT:        %[[K:.*]] = tile.local_load
// CHECK-NEXT:        %[[S:.*]] = tile.mma %{{.*}}, %[[K]]
// CHECK-NEXT:        nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %[[PAIR]] {tile.pingpong}
// CHECK-NEXT:        math.exp2 %[[S]]
// CHECK-NEXT:        arith.truncf
// CHECK-NEXT:        %[[P:.*]] = tile.convert_layout
// CHECK-NEXT:        nvvm.barrier id = %[[MINE]] number_of_threads = %[[PAIR]]
// CHECK-NEXT:        %[[V:.*]] = tile.local_load
// CHECK-NEXT:        tile.mma %[[P]], %[[V]]
// CHECK-NEXT:        nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %[[PAIR]] {tile.pingpong}
// CHECK-NEXT:        scf.yield
// CHECK:         } {tile.pingpong = 3 : i64, tile.warp_roles}

// -----

// Left alone: one consumer warpgroup (nobody to take turns with).
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  // expected-remark @+1 {{consumer warpgroups do not take turns: one consumer warpgroup}}
  func.func @one_group(%q: tensor<64x64xf16, #dot_a>) attributes {tile.num_warps = 4 : i32, tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 4 : i32, producer_regs = 24 : i64}} {
    %c0_i32 = arith.constant 0 : i32
    %c128_i32 = arith.constant 128 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %producer = arith.cmpi uge, %tid, %c128_i32 : i32
    scf.if %producer {
    } else {
      %k = tile.local_load %kb[%c0_i32] : !buf -> tensor<128x64xf16, #dot_b_t>
      %s = tile.mma %q, %k, %zs {transpose_b} : tensor<64x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<64x128xf32, #mma>
    } {tile.warp_roles}
    return
  }
}
// CHECK-LABEL: func.func @one_group(
// CHECK-NOT:     nvvm.barrier
// CHECK:         } {tile.warp_roles}

// -----

// Left alone: no producer warpgroup (the consumers copy for themselves, and
// their warps run in lockstep with nothing to order).
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  // expected-remark @+1 {{consumer warpgroups do not take turns: the kernel has no producer warpgroup}}
  func.func @no_split(%q: tensor<128x64xf16, #dot_a>) -> tensor<128x128xf32, #mma> attributes {tile.num_warps = 8 : i32} {
    %c0_i32 = arith.constant 0 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %k = tile.local_load %kb[%c0_i32] : !buf -> tensor<128x64xf16, #dot_b_t>
    %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
    return %s : tensor<128x128xf32, #mma>
  }
}
// CHECK-LABEL: func.func @no_split(
// CHECK-NOT:     nvvm.barrier
// CHECK:         return

// -----

// Left alone: a loop whose trip count depends on the thread index (the
// warpgroups would take different numbers of turns and deadlock).
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  // expected-remark @+1 {{consumer warpgroups do not take turns: a GEMM in a loop whose bounds may differ between warpgroups}}
  func.func @thread_bound(%q: tensor<128x64xf16, #dot_a>) attributes {tile.num_warps = 8 : i32, tile.warp_specialize = {consumer_regs = 240 : i64, consumer_warps = 8 : i32, producer_regs = 24 : i64}} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c128_i32 = arith.constant 128 : i32
    %c256_i32 = arith.constant 256 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %producer = arith.cmpi uge, %tid, %c256_i32 : i32
    scf.if %producer {
    } else {
      %ub = arith.divui %tid, %c128_i32 : i32
      scf.for %iv = %c0_i32 to %ub step %c1_i32 : i32 {
        %k = tile.local_load %kb[%c0_i32] : !buf -> tensor<128x64xf16, #dot_b_t>
        %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
      }
    } {tile.warp_roles}
    return
  }
}
// CHECK-LABEL: func.func @thread_bound(
// CHECK-NOT:     nvvm.barrier
// CHECK:         } {tile.warp_roles}

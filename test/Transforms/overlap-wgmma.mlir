// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-overlap-wgmma))' | FileCheck %s

// A warp-specialized consumer loop (the form tile-warp-specialize leaves):
// the full wait releases the slot the producer refills, then S = Q K^T,
// the softmax and O += P V. Rotated: P V of the previous block (P and V's
// slot carried, zero P and the first block's slot on entry) follows Q K^T
// and the rescale reads its result; P's conversion (the single-use chain
// exp2, truncf, convert_layout here) moves to the end of the body, after
// that read; the loop yields O before
// this block's P V; the last block's P V follows the loop where it ran. The
// wait releases the slot of two iterations back.
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
// CHECK-LABEL: func.func @rotate(
// CHECK-SAME:      %[[Q:[^:]*]]: tensor<128x64xf16, #dot_a>, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32)
// CHECK:         %[[KB:.*]] = tile.local_alloc {offset = 0 : i64}
// CHECK:         %[[VB:.*]] = tile.local_alloc {offset = 32768 : i64}
// CHECK:         %[[K0:.*]] = arith.divui %[[LB]], %c128_i32
// CHECK:         %[[SLOT0:.*]] = arith.remui %[[K0]], %c2_i32
// CHECK:         %[[ZP:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #dot_a>
// CHECK:         %[[R:.*]]:3 = scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %c128_i32 iter_args(%[[ACC:.*]] = %{{.*}}, %[[P:.*]] = %[[ZP]], %[[SP:.*]] = %[[SLOT0]])
// CHECK:           %[[SLOT:.*]] = arith.remui
// CHECK:           tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_release_lag = 2 : i64, tile.tma_stages = 2 : i64}
// CHECK-NEXT:      %[[K:.*]] = tile.local_load %[[KB]][%[[SLOT]]]
// CHECK-NEXT:      %[[S:.*]] = tile.mma %[[Q]], %[[K]], %{{.*}} {transpose_b}
// CHECK-NEXT:      %[[VP:.*]] = tile.local_load %[[VB]][%[[SP]]]
// CHECK-NEXT:      %[[O:.*]] = tile.mma %[[P]], %[[VP]], %[[ACC]]
// CHECK-NEXT:      %[[O2:.*]] = arith.mulf %[[O]], %{{.*}}
// CHECK-NEXT:      %[[E:.*]] = math.exp2 %[[S]]
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[E]]
// CHECK-NEXT:      %[[PN:.*]] = tile.convert_layout %[[H]]
// CHECK-NEXT:      scf.yield %[[O2]], %[[PN]], %[[SLOT]]
// CHECK-NEXT:    } {tile.num_stages = 2 : i64}
// CHECK-NEXT:    %[[RAN:.*]] = arith.cmpi slt, %[[LB]], %[[UB]]
// CHECK-NEXT:    %[[OUT:.*]] = scf.if %[[RAN]] -> (tensor<128x64xf32, #mma>) {
// CHECK-NEXT:      %[[VL:.*]] = tile.local_load %[[VB]][%[[R]]#2]
// CHECK-NEXT:      %[[OL:.*]] = tile.mma %[[R]]#1, %[[VL]], %[[R]]#0
// CHECK-NEXT:      scf.yield %[[OL]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[R]]#0
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[OUT]]
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  func.func @rotate(%q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32) -> tensor<128x64xf32, #mma> attributes {tile.num_warps = 8 : i32} {
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %half = arith.constant dense<5.000000e-01> : tensor<128x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %r = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo) -> (tensor<128x64xf32, #mma>) : i32 {
      %k0 = arith.divui %iv, %c128_i32 : i32
      %slot = arith.remui %k0, %c2_i32 : i32
      tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
      %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
      %v = tile.local_load %vb[%slot] : !buf -> tensor<128x64xf16, #dot_b>
      %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
      %e = math.exp2 %s : tensor<128x128xf32, #mma>
      %h = arith.truncf %e : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
      %p = tile.convert_layout %h : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #dot_a>
      %acc2 = arith.mulf %acc, %half : tensor<128x64xf32, #mma>
      %o = tile.mma %p, %v, %acc2 : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
      scf.yield %o : tensor<128x64xf32, #mma>
    } {tile.num_stages = 2 : i64}
    return %r : tensor<128x64xf32, #mma>
  }
}

// -----

// Left alone: a loop whose consumers issue their own copies (cp.async
// refills the slot of block k - 1 during iteration k, which the rotated
// P V still reads), a loop that reads O before Q K^T, and a loop where P V
// is O's only reader (no rescale would wait for the rotated P V before the
// next P's conversion writes its A registers).
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!buf = !tile.shared<[2, 128, 64], f16, swizzle = [1, 8]>
// CHECK-LABEL: func.func @copies(
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x64xf32, #mma>)
// CHECK-NOT:     tma_release_lag
// CHECK-LABEL: func.func @early_read(
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x64xf32, #mma>)
// CHECK-NOT:     tma_release_lag
// CHECK-LABEL: func.func @no_rescale(
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x64xf32, #mma>)
// CHECK-NOT:     tma_release_lag
module attributes {tile.arch = 90 : i64, tile.wgmma} {
  func.func @copies(%q: tensor<128x64xf16, #dot_a>, %src: !tile.global<[N, 64], f16>, %lb: i32, %ub: i32) -> tensor<128x64xf32, #mma> attributes {tile.num_warps = 8 : i32} {
    %c0_i32 = arith.constant 0 : i32
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %r = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo) -> (tensor<128x64xf32, #mma>) : i32 {
      %k0 = arith.divui %iv, %c128_i32 : i32
      %slot = arith.remui %k0, %c2_i32 : i32
      tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
      %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
      %v = tile.local_load %vb[%slot] : !buf -> tensor<128x64xf16, #dot_b>
      %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
      %h = arith.truncf %s : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
      %p = tile.convert_layout %h : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #dot_a>
      %o = tile.mma %p, %v, %acc : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
      tile.async_copy %src[%iv, %c0_i32] window [0, 1] into %vb[%slot] : !tile.global<[N, 64], f16> -> !buf
      tile.async_commit
      scf.yield %o : tensor<128x64xf32, #mma>
    } {tile.num_stages = 2 : i64}
    return %r : tensor<128x64xf32, #mma>
  }
  func.func @early_read(%q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32) -> tensor<128x64xf32, #mma> attributes {tile.num_warps = 8 : i32} {
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %r = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo) -> (tensor<128x64xf32, #mma>) : i32 {
      %k0 = arith.divui %iv, %c128_i32 : i32
      %slot = arith.remui %k0, %c2_i32 : i32
      tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
      %acc2 = arith.addf %acc, %acc : tensor<128x64xf32, #mma>
      %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
      %v = tile.local_load %vb[%slot] : !buf -> tensor<128x64xf16, #dot_b>
      %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
      %h = arith.truncf %s : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
      %p = tile.convert_layout %h : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #dot_a>
      %o = tile.mma %p, %v, %acc2 : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
      scf.yield %o : tensor<128x64xf32, #mma>
    } {tile.num_stages = 2 : i64}
    return %r : tensor<128x64xf32, #mma>
  }
  func.func @no_rescale(%q: tensor<128x64xf16, #dot_a>, %lb: i32, %ub: i32) -> tensor<128x64xf32, #mma> attributes {tile.num_warps = 8 : i32} {
    %c2_i32 = arith.constant 2 : i32
    %c128_i32 = arith.constant 128 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %zo = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %kb = tile.local_alloc {offset = 0 : i64} : !buf
    %vb = tile.local_alloc {offset = 32768 : i64} : !buf
    %r = scf.for %iv = %lb to %ub step %c128_i32 iter_args(%acc = %zo) -> (tensor<128x64xf32, #mma>) : i32 {
      %k0 = arith.divui %iv, %c128_i32 : i32
      %slot = arith.remui %k0, %c2_i32 : i32
      tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_stages = 2 : i64}
      %k = tile.local_load %kb[%slot] : !buf -> tensor<128x64xf16, #dot_b_t>
      %v = tile.local_load %vb[%slot] : !buf -> tensor<128x64xf16, #dot_b>
      %s = tile.mma %q, %k, %zs {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<128x64xf16, #dot_b_t> -> tensor<128x128xf32, #mma>
      %e = math.exp2 %s : tensor<128x128xf32, #mma>
      %h = arith.truncf %e : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
      %p = tile.convert_layout %h : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #dot_a>
      %o = tile.mma %p, %v, %acc : tensor<128x128xf16, #dot_a>, tensor<128x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
      scf.yield %o : tensor<128x64xf32, #mma>
    } {tile.num_stages = 2 : i64}
    return %r : tensor<128x64xf32, #mma>
  }
}

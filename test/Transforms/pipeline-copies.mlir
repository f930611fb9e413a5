// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies))' | FileCheck %s
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies{stages=1}))' | FileCheck %s --check-prefix=ONE
// RUN: not flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies{stages=0}))' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies{remarks=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-pipeline-copies))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN

// The input is tile-stage-shared's output.

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
#dot_b_t = #tile.dot_op<1, #mma, transposed = true>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// FlashAttention-2's loop, two stages by default: the prologue copies the
// first iteration into slot 0; iteration k waits for its copies, passes one
// barrier, copies iteration k + 1 into slot (k + 1) % 2 (zero-filled past the
// end) and reads slot k % 2; after the loop every copy is retired. The Q copy
// outside the loop is left as it was.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:      %[[Q:[^:]*]]: !tile.global<[N, 64], f16>, %[[K:[^:]*]]: !tile.global<[N, 64], f16>, %[[V:[^:]*]]: !tile.global<[N, 64], f16>, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[QB:.*]] = tile.local_alloc : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[KB:.*]] = tile.local_alloc : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[VB:.*]] = tile.local_alloc : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 64 : i32
// CHECK-NEXT:    %[[ACC0:.*]] = arith.constant
// CHECK-NEXT:    tile.async_copy %[[Q]][%[[C0]], %[[C0]]] window [0, 1] into %[[QB]][%[[C0]]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    %[[QT:.*]] = tile.local_load %[[QB]][%[[C0]]]
// CHECK-NEXT:    %[[S0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[P0:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK-NEXT:    tile.async_copy %[[K]][%[[LB]], %[[C0]]] window [0, 1] into %[[KB]][%[[S0]]] if %[[P0]] : !tile.global<[N, 64], f16> -> !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.async_copy %[[V]][%[[LB]], %[[C0]]] window [0, 1] into %[[VB]][%[[S0]]] if %[[P0]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    %[[NS:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[LAST:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[AHEAD:.*]] = arith.muli %[[STEP]], %[[LAST]] : i32
// CHECK-NEXT:    %{{.*}} = scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[ACC0]])
// CHECK-NEXT:      %[[REL:.*]] = arith.subi %[[I]], %[[LB]] : i32
// CHECK-NEXT:      %[[IT:.*]] = arith.divui %[[REL]], %[[STEP]] : i32
// CHECK-NEXT:      %[[RS:.*]] = arith.remui %[[IT]], %[[NS]] : i32
// CHECK-NEXT:      %[[WI:.*]] = arith.addi %[[IT]], %[[LAST]] : i32
// CHECK-NEXT:      %[[WS:.*]] = arith.remui %[[WI]], %[[NS]] : i32
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[AHEAD]] : i32
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %[[K]][%[[NEXT]], %[[C0]]] window [0, 1] into %[[KB]][%[[WS]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_copy %[[V]][%[[NEXT]], %[[C0]]] window [0, 1] into %[[VB]][%[[WS]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[KT:.*]] = tile.local_load %[[KB]][%[[RS]]] : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #{{.*}}>
// CHECK-NEXT:      %[[VT:.*]] = tile.local_load %[[VB]][%[[RS]]] : !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]> -> tensor<64x64xf16, #{{.*}}>
// CHECK-NEXT:      tile.mma %[[QT]], %[[KT]], %[[ACC]] {transpose_b}
// CHECK-NOT:       tile.async
// CHECK-NOT:       tile.barrier
// CHECK:           scf.yield
// CHECK-NEXT:    } {flash.keep}
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    return
func.func @attention(%Q: !tile.global<[N, 64], f16>, %K: !K, %V: !K, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %qb = tile.local_alloc : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
  %kb = tile.local_alloc : !buf
  %vb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  tile.async_copy %Q[%c0, %c0] window [0, 1] into %qb[%c0] : !tile.global<[N, 64], f16> -> !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.local_load %qb[%c0] : !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]> -> tensor<128x64xf16, #dot_a>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_copy %V[%i, %c0] window [0, 1] into %vb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b_t>
    %v = tile.local_load %vb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    %s = tile.mma %q, %k, %acc {transpose_b} : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b_t> -> tensor<128x64xf32, #mma>
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tile.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #dot_a>
    %o = tile.mma %pa, %v, %acc : tensor<128x64xf16, #dot_a>, tensor<64x64xf16, #dot_b> -> tensor<128x64xf32, #mma>
    scf.yield %o : tensor<128x64xf32, #mma>
  } {flash.keep}
  return
}

// With stages=1 nothing changes.
// ONE-LABEL: func.func @attention
// ONE:         tile.local_alloc : !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// ONE:         scf.for
// ONE-NEXT:      tile.barrier
// ONE-NEXT:      tile.async_copy
// ONE-NEXT:      tile.async_copy
// ONE-NEXT:      tile.async_commit
// ONE-NEXT:      tile.async_wait 0
// ONE-NEXT:      tile.barrier
// ONE-NEXT:      tile.local_load %{{.*}}[%c0_i32]
// ONE-NOT:     tile.async_wait
// ONE:         return

// ZERO: error: tile-pipeline-copies: stages must be at least 1, got 0

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// Three stages from the loop's tile.num_stages (over the option): two
// prologue iterations, each with its own predicate and commit; the loop waits
// with one group in flight and copies two iterations ahead. The offset is
// computed in the body from the induction variable: its ops are cloned for
// every copy, and the originals, now unused, are removed.
// CHECK-LABEL: func.func @three_stages(
// CHECK-SAME:      %[[K:[^:]*]]: !tile.global<[N, 64], f16>, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32, %[[STEP:[^:]*]]: i32,
// CHECK:         %[[KB:.*]] = tile.local_alloc : !tile.shared<[3, 32, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[S0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[P0:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[R0:.*]] = arith.addi %[[LB]], %[[C16]] : i32
// CHECK-NEXT:    tile.async_copy %[[K]][%[[R0]], %[[C0]]] window [0, 1] into %[[KB]][%[[S0]]] if %[[P0]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    %[[S1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[OFF1:.*]] = arith.muli %[[STEP]], %[[S1]] : i32
// CHECK-NEXT:    %[[I1:.*]] = arith.addi %[[LB]], %[[OFF1]] : i32
// CHECK-NEXT:    %[[P1:.*]] = arith.cmpi slt, %[[I1]], %[[UB]] : i32
// CHECK-NEXT:    %[[C16B:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[R1:.*]] = arith.addi %[[I1]], %[[C16B]] : i32
// CHECK-NEXT:    tile.async_copy %[[K]][%[[R1]], %[[C0]]] window [0, 1] into %[[KB]][%[[S1]]] if %[[P1]] :
// CHECK-NEXT:    tile.async_commit
// CHECK-NEXT:    %[[NS:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    %[[LAST:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[AHEAD:.*]] = arith.muli %[[STEP]], %[[LAST]] : i32
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] : i32 {
// CHECK-NEXT:      %[[REL:.*]] = arith.subi %[[I]], %[[LB]] : i32
// CHECK-NEXT:      %[[IT:.*]] = arith.divui %[[REL]], %[[STEP]] : i32
// CHECK-NEXT:      %[[RS:.*]] = arith.remui %[[IT]], %[[NS]] : i32
// CHECK-NEXT:      %[[WI:.*]] = arith.addi %[[IT]], %[[LAST]] : i32
// CHECK-NEXT:      %[[WS:.*]] = arith.remui %[[WI]], %[[NS]] : i32
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[AHEAD]] : i32
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK-NEXT:      tile.async_wait 1
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      %[[C16N:.*]] = arith.constant 16 : i32
// CHECK-NEXT:      %[[RN:.*]] = arith.addi %[[NEXT]], %[[C16N]] : i32
// CHECK-NEXT:      tile.async_copy %[[K]][%[[RN]], %[[C0]]] window [0, 1] into %[[KB]][%[[WS]]] if %[[MORE]] :
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[KT:.*]] = tile.local_load %[[KB]][%[[RS]]] : !tile.shared<[3, 32, 64], f16, swizzle = [1, 8]> -> tensor<32x64xf16, #{{.*}}>
// CHECK-NEXT:      tile.store %[[KT]]
// CHECK-NEXT:    } {tile.num_stages = 3 : i64}
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    return
func.func @three_stages(%K: !K, %lb: i32, %ub: i32, %step: i32, %O: !tile.global<[N, 64], f16>)
    attributes {tile.num_warps = 4 : i32} {
  %kb = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  scf.for %i = %lb to %ub step %step : i32 {
    %c16 = arith.constant 16 : i32
    %row = arith.addi %i, %c16 : i32
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %kb[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    tile.store %k, %O[%i, %c0] window [0, 1] : tensor<32x64xf16, #dot_b> -> !tile.global<[N, 64], f16>
  } {tile.num_stages = 3 : i64}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// Loops left as they are: tile.num_stages = 1; a copy whose offset is
// loop-carried; a copy whose offset needs an op that must not run for other
// iterations (a division by what may be 0); a copy from a tensor the loop
// writes (a copy issued ahead would read stale data).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: tile.local_alloc : !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>
// CHECK-NOT:   if %
// CHECK-NOT:   arith.remui
// CHECK:       return
func.func @left_alone(%K: !K, %n: i32, %d: i32)
    attributes {tile.num_warps = 4 : i32} {
  %b0 = tile.local_alloc : !buf
  %b1 = tile.local_alloc : !buf
  %b2 = tile.local_alloc : !buf
  %b3 = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  scf.for %i = %c0 to %n step %c32 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %b0[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b0[%c0] : !buf -> tensor<32x64xf16, #dot_b>
  } {tile.num_stages = 1 : i64}
  %last = scf.for %i = %c0 to %n step %c32 iter_args(%row = %c0) -> (i32) : i32 {
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %b1[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b1[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    %next = arith.addi %row, %c32 : i32
    scf.yield %next : i32
  }
  scf.for %i = %c0 to %n step %c32 : i32 {
    %row = arith.divsi %i, %d : i32
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %b2[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b2[%c0] : !buf -> tensor<32x64xf16, #dot_b>
  }
  scf.for %i = %c0 to %n step %c32 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %b3[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b3[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    %w = arith.addi %i, %c32 : i32
    tile.store %k, %K[%w, %c0] window [0, 1] : tensor<32x64xf16, #dot_b> -> !K
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// A division by max(d, 1) cannot fault, so the copy it places is issued
// ahead (a flat loop over (head, block) pairs: head i / blocks, block
// i % blocks); a max with a bound that may be 0 or less leaves the loop alone.
// CHECK-LABEL: func.func @divide_by_positive
// CHECK:         tile.local_alloc : !tile.shared<[2, 32, 64], f16, swizzle = [1, 8]>
// CHECK-NEXT:    tile.local_alloc : !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>
// CHECK:         %[[PER:.*]] = arith.maxsi %{{.*}}, %c1
// CHECK:         arith.divsi %{{.*}}, %[[PER]]
// CHECK-NEXT:    arith.remsi %{{.*}}, %[[PER]]
// CHECK:         tile.async_copy {{.*}} if %
// CHECK:         scf.for
// CHECK:           tile.async_wait 0
// CHECK:           arith.divsi %{{.*}}, %[[PER]]
// CHECK:           tile.async_copy {{.*}} if %
// CHECK:         } {tile.num_stages = 2 : i64}
// CHECK:         %[[ANY:.*]] = arith.maxsi %{{.*}}, %c0
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      arith.divsi %{{.*}}, %[[ANY]]
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy
// CHECK-NOT:       if %
// CHECK:         return
func.func @divide_by_positive(%K: !K, %n: i32, %d: i32)
    attributes {tile.num_warps = 4 : i32} {
  %b0 = tile.local_alloc : !buf
  %b1 = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %per = arith.maxsi %d, %c1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %h = arith.divsi %i, %per : i32
    %m = arith.remsi %i, %per : i32
    %r = arith.muli %m, %c32 : i32
    %row = arith.addi %h, %r : i32
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %b0[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b0[%c0] : !buf -> tensor<32x64xf16, #dot_b>
  } {tile.num_stages = 2 : i64}
  %any = arith.maxsi %d, %c0 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %row = arith.divsi %i, %any : i32
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %b1[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b1[%c0] : !buf -> tensor<32x64xf16, #dot_b>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_a = #tile.dot_op<0, #mma>
#dot_b = #tile.dot_op<1, #mma>
!G = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// Nested loops (FlashAttention-1's shape) are pipelined outer loop first. A
// loop that runs again inside another overwrites, in its prologue, slots that
// other warps read in its previous run: the outer loop's barrier, which
// precedes it in the block, separates the two. Without one (the second
// outer loop copies nothing), the prologue starts with its own barrier.
// CHECK-LABEL: func.func @nested
// CHECK-DAG:     %[[KB:.*]] = tile.local_alloc : !tile.shared<[2, 32, 64], f16, swizzle = [1, 8]>
// CHECK-DAG:     %[[QB:.*]] = tile.local_alloc : !tile.shared<[2, 32, 64], f16, swizzle = [1, 8]>
// CHECK-DAG:     %[[RB:.*]] = tile.local_alloc : !tile.shared<[2, 32, 64], f16, swizzle = [1, 8]>
// CHECK:         tile.async_copy {{.*}} into %[[KB]]
// CHECK-NEXT:    tile.async_commit
// CHECK:         scf.for
// CHECK:           tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy {{.*}} into %[[KB]]
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.local_load %[[KB]]
// CHECK-NEXT:      arith.constant 0 : i32
// CHECK-NEXT:      arith.cmpi
// CHECK-NEXT:      tile.async_copy {{.*}} into %[[QB]]
// CHECK-NEXT:      tile.async_commit
// CHECK:           scf.for
// CHECK:             tile.async_wait 0
// CHECK-NEXT:        tile.barrier
// CHECK-NEXT:        tile.async_copy {{.*}} into %[[QB]]
// CHECK-NEXT:        tile.async_commit
// CHECK-NEXT:        tile.local_load %[[QB]]
// CHECK-NEXT:        tile.mma
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT:    tile.async_wait 0
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      arith.constant 0 : i32
// CHECK-NEXT:      arith.cmpi
// CHECK-NEXT:      tile.async_copy {{.*}} into %[[RB]]
// CHECK-NEXT:      tile.async_commit
// CHECK:           scf.for
// CHECK: {{^ *}}}
// CHECK-NEXT:      tile.async_wait 0
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT:    return
func.func @nested(%Q: !G, %K: !G, %n: i32, %m: i32) attributes {tile.num_warps = 4 : i32} {
  %kb = tile.local_alloc : !buf
  %qb = tile.local_alloc : !buf
  %rb = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<32x32xf32, #mma>
  scf.for %j = %c0 to %n step %c32 : i32 {
    tile.barrier
    tile.async_copy %K[%j, %c0] window [0, 1] into %kb[%c0] : !G -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    scf.for %i = %c0 to %m step %c32 : i32 {
      tile.barrier
      tile.async_copy %Q[%i, %c0] window [0, 1] into %qb[%c0] : !G -> !buf
      tile.async_commit
      tile.async_wait 0
      tile.barrier
      %q = tile.local_load %qb[%c0] : !buf -> tensor<32x64xf16, #dot_a>
      %s = tile.mma %q, %k, %zero {transpose_b} : tensor<32x64xf16, #dot_a>, tensor<32x64xf16, #dot_b> -> tensor<32x32xf32, #mma>
    }
  }
  scf.for %j = %c0 to %n step %c32 : i32 {
    scf.for %i = %c0 to %m step %c32 : i32 {
      tile.barrier
      tile.async_copy %Q[%i, %c0] window [0, 1] into %rb[%c0] : !G -> !buf
      tile.async_commit
      tile.async_wait 0
      tile.barrier
      %r = tile.local_load %rb[%c0] : !buf -> tensor<32x64xf16, #dot_a>
    }
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!G = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// Two staged groups of one body (a store between them) are copied ahead as
// one group; all their commits, waits and barriers go.
// CHECK-LABEL: func.func @two_groups
// CHECK:         scf.for
// CHECK:           tile.async_wait 0
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy %{{.*}} into %[[A:[^\[]*]]
// CHECK-NEXT:      tile.async_copy %{{.*}} into %[[B:[^\[]*]]
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      %[[X:.*]] = tile.local_load %[[A]]
// CHECK-NEXT:      tile.store %[[X]]
// CHECK-NEXT:      tile.local_load %[[B]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.async_wait 0
func.func @two_groups(%K: !G, %V: !G, %O: !G, %n: i32) attributes {tile.num_warps = 4 : i32} {
  %a = tile.local_alloc : !buf
  %b = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  scf.for %i = %c0 to %n step %c32 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %a[%c0] : !G -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %x = tile.local_load %a[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    tile.store %x, %O[%i, %c0] window [0, 1] : tensor<32x64xf16, #dot_b> -> !G
    tile.barrier
    tile.async_copy %V[%i, %c0] window [0, 1] into %b[%c0] : !G -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %y = tile.local_load %b[%c0] : !buf -> tensor<32x64xf16, #dot_b>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>
!C = !tile.global<[P, 16, 64], f16>
!T = !tile.global<[MaxPages], i32>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// A gathered copy (paged KV): its index tiles are recomputed for the
// iteration a copy is issued for, the block-table load included (the loop
// does not write the table). Past the end the copy is predicated off and the
// table load is bounds-masked.
// CHECK-LABEL: func.func @paged(
// CHECK-SAME:      %[[C:[^:]*]]: !tile.global<[P, 16, 64], f16>, %[[T:[^:]*]]: !tile.global<[MaxPages], i32>,
// CHECK:         %[[P0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK-NEXT:    %[[S0:.*]] = tile.splat %[[LB]]
// CHECK-NEXT:    tile.iota
// CHECK-NEXT:    %[[N0:.*]] = arith.addi %[[S0]]
// CHECK-NEXT:    %[[I0:.*]] = arith.divsi %[[N0]]
// CHECK-NEXT:    %[[PG0:.*]] = tile.load %[[T]][%{{.*}}] window [] gather [0] (%[[I0]] : tensor<64xi32, #{{.*}}>)
// CHECK-NEXT:    %[[SL0:.*]] = arith.remsi %[[N0]]
// CHECK-NEXT:    tile.async_copy %[[C]][{{.*}}] window [2] gather [0, 1] (%[[PG0]], %[[SL0]] : {{.*}}) into %{{.*}}[%{{.*}}] if %[[P0]]
// CHECK:         scf.for %[[I:.*]] = %[[LB]] to %[[UB]]
// CHECK:           %[[NEXT:.*]] = arith.addi %[[I]], %{{.*}} : i32
// CHECK:           tile.barrier
// CHECK-NEXT:      %[[S1:.*]] = tile.splat %[[NEXT]]
// CHECK-NEXT:      tile.iota
// CHECK-NEXT:      %[[N1:.*]] = arith.addi %[[S1]]
// CHECK-NEXT:      %[[I1:.*]] = arith.divsi %[[N1]]
// CHECK-NEXT:      %[[PG1:.*]] = tile.load %[[T]][%{{.*}}] window [] gather [0] (%[[I1]] : tensor<64xi32, #{{.*}}>)
// CHECK-NEXT:      %[[SL1:.*]] = arith.remsi %[[N1]]
// CHECK-NEXT:      tile.async_copy %[[C]][{{.*}}] window [2] gather [0, 1] (%[[PG1]], %[[SL1]] : {{.*}}) into
// CHECK-NEXT:      tile.async_commit
// CHECK-NOT:       tile.load
// CHECK:         tile.async_wait 0
// CHECK-NEXT:    return
func.func @paged(%Kc: !C, %T: !T, %O: !tile.global<[64, 64], f16>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant dense<16> : tensor<64xi32, #rows>
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    %iota = tile.iota : tensor<64xi32, #rows>
    %s = tile.splat %i : i32 -> tensor<64xi32, #rows>
    %n = arith.addi %s, %iota : tensor<64xi32, #rows>
    %pi = arith.divsi %n, %c16 : tensor<64xi32, #rows>
    %page = tile.load %T[%c0] window [] gather [0] (%pi : tensor<64xi32, #rows>) pad 0 : i32 : !T -> tensor<64xi32, #rows>
    %slot = arith.remsi %n, %c16 : tensor<64xi32, #rows>
    tile.barrier
    tile.async_copy %Kc[%c0, %c0, %c0] window [2] gather [0, 1] (%page, %slot : tensor<64xi32, #rows>, tensor<64xi32, #rows>) into %kb[%c0] : !C -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    tile.store %k, %O[%c0, %c0] window [0, 1] : tensor<64x64xf16, #dot_b> -> !tile.global<[64, 64], f16>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
#rows = #tile.slice<1, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>
!C = !tile.global<[P, 64], f16>
!T = !tile.global<[MaxPages], i32>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// The loop writes the index table: its load cannot be evaluated ahead, so
// the loop is not pipelined.
// CHECK-LABEL: func.func @table_written(
// CHECK:         scf.for
// CHECK-NEXT:      tile.iota
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.barrier
// CHECK-NEXT:      tile.async_copy
// CHECK-NEXT:      tile.async_commit
// CHECK-NEXT:      tile.async_wait 0
func.func @table_written(%Kc: !C, %T: !T, %O: !tile.global<[64, 64], f16>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    %iota = tile.iota : tensor<64xi32, #rows>
    %page = tile.load %T[%i] window [] gather [0] (%iota : tensor<64xi32, #rows>) pad 0 : i32 : !T -> tensor<64xi32, #rows>
    tile.barrier
    tile.async_copy %Kc[%c0, %c0] window [1] gather [0] (%page : tensor<64xi32, #rows>) into %kb[%c0] : !C -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    tile.store %page, %T[%i] window [0] : tensor<64xi32, #rows> -> !T
    tile.store %k, %O[%c0, %c0] window [0, 1] : tensor<64x64xf16, #dot_b> -> !tile.global<[64, 64], f16>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!C = !tile.global<[P, 64, 64], f16>
!T = !tile.global<[MaxPages], i32>
!buf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>

// A page number read as a scalar in the loop starts the copy's window (pages
// of BLOCK_N tokens): the scalar read is evaluated again for the iteration
// the copy is issued for (the loop does not write the table; past the end it
// is bounds-masked and the copy predicated off).
// CHECK-LABEL: func.func @scalar_page(
// CHECK-SAME:      %[[C:[^:]*]]: !tile.global<[P, 64, 64], f16>, %[[T:[^:]*]]: !tile.global<[MaxPages], i32>,
// CHECK:         %[[P0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK-NEXT:    %[[J0:.*]] = arith.divsi %[[LB]]
// CHECK-NEXT:    %[[PG0:.*]] = tile.load_scalar %[[T]][%[[J0]]]
// CHECK-NEXT:    tile.async_copy %[[C]][%[[PG0]], {{.*}}] window [1, 2] into %{{.*}}[%{{.*}}] if %[[P0]]
// CHECK:         scf.for %[[I:.*]] = %[[LB]] to %[[UB]]
// CHECK:           %[[NEXT:.*]] = arith.addi %[[I]], %{{.*}} : i32
// CHECK:           tile.barrier
// CHECK-NEXT:      %[[J1:.*]] = arith.divsi %[[NEXT]]
// CHECK-NEXT:      %[[PG1:.*]] = tile.load_scalar %[[T]][%[[J1]]]
// CHECK-NEXT:      tile.async_copy %[[C]][%[[PG1]], {{.*}}] window [1, 2] into
// CHECK-NEXT:      tile.async_commit
// CHECK-NOT:       tile.load_scalar
// CHECK:         tile.async_wait 0
// CHECK-NEXT:    return
func.func @scalar_page(%Kc: !C, %T: !T, %O: !tile.global<[64, 64], f16>, %lb: i32, %ub: i32)
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %kb = tile.local_alloc : !buf
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %c64 : i32 {
    %j = arith.divsi %i, %c64 : i32
    %page = tile.load_scalar %T[%j] pad 0 : i32 : !T -> i32
    tile.barrier
    tile.async_copy %Kc[%page, %c0, %c0] window [1, 2] into %kb[%c0] : !C -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %kb[%c0] : !buf -> tensor<64x64xf16, #dot_b>
    tile.store %k, %O[%c0, %c0] window [0, 1] : tensor<64x64xf16, #dot_b> -> !tile.global<[64, 64], f16>
  }
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// A backward pass adds into dQ while it reads Q: an atomic_add into another
// tensor leaves the copies free to run ahead.
// CHECK-LABEL: func.func @atomic_elsewhere
// CHECK:         tile.local_alloc : !tile.shared<[2, 32, 64], f16, swizzle = [1, 8]>
// CHECK:         scf.for
// CHECK:           tile.async_wait 0
// CHECK:           tile.atomic_add
// CHECK:         } {tile.num_stages = 2 : i64}
func.func @atomic_elsewhere(%K: !K, %n: i32, %D: !tile.global<[N, 64], f32>)
    attributes {tile.num_warps = 4 : i32} {
  %b0 = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %one = arith.constant dense<1.0> : tensor<32x64xf32, #mma>
  scf.for %i = %c0 to %n step %c32 : i32 {
    tile.barrier
    tile.async_copy %K[%i, %c0] window [0, 1] into %b0[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b0[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    tile.atomic_add %one, %D[%i, %c0] window [0, 1] : tensor<32x64xf32, #mma> -> !tile.global<[N, 64], f32>
  } {tile.num_stages = 2 : i64}
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
!K = !tile.global<[N, 64], f16>
!buf = !tile.shared<[1, 32, 64], f16, swizzle = [1, 8]>

// A loop that asks for stages (tile.num_stages > 1, range(..., stages = S))
// and cannot have them gets a warning at the loop naming the copy and the
// reason, with or without remarks; one that did not ask, a remark only
// (the remarks checked: every loop of this file, pipelined or not, and why).
// WARN-NOT:  warning
// WARN:      pipeline-copies.mlir:[[@LINE+14]]:11: warning: loop asks for 2 stages but its copies get 1: the copy at [[@LINE+16]]:5 cannot be issued ahead: its offset depends on a value carried from one iteration to the next
// WARN-NOT:  warning
// REMARK:      remark: staged loop pipelined over 2 stages: the copies at {{[0-9]+}}:5, {{[0-9]+}}:5 run 1 iteration(s) ahead, 2 buffers each
// REMARK:      remark: staged loop pipelined over 3 stages: the copy at {{[0-9]+}}:5 run 2 iteration(s) ahead, 3 buffers each
// REMARK:      remark: staged loop not pipelined: the copy at {{[0-9]+}}:5 cannot be issued ahead: its offset depends on a value carried from one iteration to the next
// REMARK:      remark: staged loop not pipelined: the copy at {{[0-9]+}}:5 cannot be issued ahead: its offset is computed in the loop by 'arith.divsi', which is not speculatable
// REMARK:      note: this value prevents staging
// REMARK:      remark: staged loop not pipelined: the copy at {{[0-9]+}}:5 cannot be issued ahead: the loop writes the tensor it copies from
// REMARK:      remark: staged loop not pipelined: the copy at {{[0-9]+}}:5 cannot be issued ahead: its offset is computed in the loop by 'tile.load', which has memory effects
// REMARK:      warning: loop asks for 2 stages but its copies get 1
func.func @asks_for_stages(%K: !K, %n: i32) attributes {tile.num_warps = 4 : i32} {
  %b = tile.local_alloc : !buf
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %last = scf.for %i = %c0 to %n step %c32 iter_args(%row = %c0) -> (i32) : i32 {
    tile.barrier
    tile.async_copy %K[%row, %c0] window [0, 1] into %b[%c0] : !K -> !buf
    tile.async_commit
    tile.async_wait 0
    tile.barrier
    %k = tile.local_load %b[%c0] : !buf -> tensor<32x64xf16, #dot_b>
    %next = arith.addi %row, %c32 : i32
    scf.yield %next : i32
  } {tile.num_stages = 2 : i64}
  return
}

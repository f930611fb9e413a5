// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-hoist-invariant-scalars))' | FileCheck %s

// A KV head computed in the loop by divisions by runtime values leaves it,
// each divisor guarded by lb < ub (so a loop that runs no iteration divides
// by 1), with the arithmetic that depends on it only. The division by the
// induction variable and the loop-carried sum stay.
// CHECK-LABEL: func.func @kv_head
// CHECK-SAME:    (%[[H:.*]]: i32, %[[HQ:.*]]: i32, %[[HKV:.*]]: i32, %[[LB:.*]]: i32, %[[UB:.*]]: i32, %[[STEP:.*]]: i32)
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[D1:.*]] = arith.select %[[RUNS]], %[[HKV]], %[[ONE]] : i32
// CHECK:         %[[GROUP:.*]] = arith.divsi %[[HQ]], %[[D1]] : i32
// CHECK:         %[[D2:.*]] = arith.select %[[RUNS]], %[[GROUP]], %{{.*}} : i32
// CHECK:         %[[HEAD:.*]] = arith.divsi %[[H]], %[[D2]] : i32
// CHECK:         %[[OFF:.*]] = arith.muli %[[HEAD]], %[[STEP]] : i32
// CHECK:         scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (i32)  : i32 {
// CHECK-NEXT:      %[[X:.*]] = arith.addi %[[ACC]], %[[OFF]] : i32
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[H]], %[[IV]] : i32
// CHECK-NEXT:      %[[Y:.*]] = arith.addi %[[X]], %[[Q]] : i32
// CHECK-NEXT:      scf.yield %[[Y]] : i32
func.func @kv_head(%h: i32, %hq: i32, %hkv: i32, %lb: i32, %ub: i32,
                   %step: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %c0) -> (i32) : i32 {
    %group = arith.divsi %hq, %hkv : i32
    %head = arith.divsi %h, %group : i32
    %off = arith.muli %head, %step : i32
    %x = arith.addi %acc, %off : i32
    %q = arith.divsi %h, %i : i32
    %y = arith.addi %x, %q : i32
    scf.yield %y : i32
  }
  return %r : i32
}

// -----

// Unsigned divisions too; an unsigned loop guards with ult.
// Tiles stay (LICM, which runs after, moves the speculatable ones).
// CHECK-LABEL: func.func @unsigned_loop
// CHECK:         %[[RUNS:.*]] = arith.cmpi ult, %arg1, %arg2 : i32
// CHECK:         %[[D:.*]] = arith.select %[[RUNS]], %arg0, %{{.*}} : i32
// CHECK:         arith.divui %arg3, %[[D]] : i32
// CHECK:         scf.for unsigned
// CHECK-NEXT:      tile.splat
// CHECK-NEXT:      arith.divsi %{{.*}}, %{{.*}} : tensor<16xi32>
// CHECK-NEXT:      scf.yield
func.func @unsigned_loop(%d: i32, %lb: i32, %ub: i32, %x: i32,
                         %t: tensor<16xi32>) -> tensor<16xi32> {
  %c1 = arith.constant 1 : i32
  %r = scf.for unsigned %i = %lb to %ub step %c1 iter_args(%acc = %t) -> (tensor<16xi32>) : i32 {
    %rem = arith.divui %x, %d : i32
    %s = tile.splat %rem : i32 -> tensor<16xi32>
    %q = arith.divsi %acc, %s : tensor<16xi32>
    scf.yield %q : tensor<16xi32>
  }
  return %r : tensor<16xi32>
}

// The user's case, end to end (Inputs/gqa_head_in_loop.tile): the KV head
// h / (H / H_KV) written in the staged key loop leaves it, guarded, and both
// ranges of the split loop keep two stages of K and V (Q's buffer has one);
// a head carried from block to block (DATA_DEPENDENT) cannot, and every
// buffer keeps one slot. check_gqa.py runs the kernel on the interpreter and
// the emulator against a float64 reference, with H_KV = 2 of H = 4 heads.
// RUN: flashc %S/Inputs/gqa_head_in_loop.tile --emit=layout 2>&1 | FileCheck %s --check-prefix=GQA
// GQA-NOT:       warning
// GQA:           tile.local_alloc {{.*}} : !tile.shared<[1, 64, 64], f16
// GQA-COUNT-4:   tile.local_alloc {{.*}} : !tile.shared<[2, 64, 64], f16
// GQA:           %[[RUNS:.*]] = arith.cmpi {{slt|sgt}}
// GQA-NEXT:      %[[D1:.*]] = arith.select %[[RUNS]], %{{.*}}, %c1_i32 : i32
// GQA-NEXT:      %[[GROUP:.*]] = arith.divsi %{{.*}}, %[[D1]] : i32
// GQA-NEXT:      %[[D2:.*]] = arith.select %[[RUNS]], %[[GROUP]], %c1_i32 : i32
// GQA-NEXT:      %[[HEAD:.*]] = arith.divsi %{{.*}}, %[[D2]] : i32
// GQA:           scf.for
// GQA:             tile.async_copy %arg1[%{{.*}}, %[[HEAD]], {{.*}} -> !tile.shared<[2, 64, 64], f16
// RUN: flashc %S/Inputs/gqa_head_in_loop.tile -D DATA_DEPENDENT=true --emit=layout 2>/dev/null | FileCheck %s --check-prefix=CARRIED
// CARRIED-COUNT-5: tile.local_alloc {{.*}} : !tile.shared<[1, 64, 64], f16
// CARRIED-NOT:     tile.shared<[2,
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/check_gqa.py --flashc flashc --kernel %S/Inputs/gqa_head_in_loop.tile --workdir %t

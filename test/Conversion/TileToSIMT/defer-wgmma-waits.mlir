// RUN: flash-opt %s --split-input-file --simt-defer-wgmma-waits | FileCheck %s

// The SIMT level's form of a loop body after tile-overlap-wgmma: S = Q K^T
// committed, then O += P V committed, each closed by wait_group 0. S's wait
// passes P V's fence, wgmma and commit (count 1) and the pure op that does
// not read S, and stops at the softmax's first read of S (through a rename:
// the extractvalue passes). O's wait passes the softmax, its shuffle, and
// stops where the rescale reads O.
// CHECK-LABEL: func.func @overlap
// CHECK:      nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[S:.*]] = llvm.inline_asm has_side_effects {{.*}}"wgmma.mma_async S"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[O:.*]] = llvm.inline_asm has_side_effects {{.*}}"wgmma.mma_async O"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.mulf %arg2, %arg2
// CHECK-NEXT: %[[S0:.*]] = llvm.extractvalue %[[S]][0]
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: %[[E:.*]] = math.exp2 %[[S0]]
// CHECK-NEXT: nvvm.shfl.sync bfly
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[O0:.*]] = llvm.extractvalue %[[O]][0]
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: arith.mulf %[[O0]]
// CHECK-NOT:  nvvm.wgmma.wait.group
// CHECK:      return
!acc = !llvm.struct<(f32, f32)>
func.func @overlap(%a: f32, %b: f32, %x: f32, %m: i32) -> f32 {
  %c1 = arith.constant 1 : i32
  %c31 = arith.constant 31 : i32
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  nvvm.wgmma.fence.aligned
  %o = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async O", "=f,=f,0,1" %b, %b : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %sq = arith.mulf %x, %x : f32
  %s0 = llvm.extractvalue %s[0] : !acc
  %e = math.exp2 %s0 : f32
  %sh = nvvm.shfl.sync bfly %m, %e, %c1, %c31 : f32 -> f32
  %sum = arith.addf %sh, %sq : f32
  %o0 = llvm.extractvalue %o[0] : !acc
  %r = arith.mulf %o0, %sum : f32
  return %r : f32
}

// -----

// A wait stays above an op with memory effects (an mbarrier release hands
// the slot the group reads back to the producer) even when that op does not
// read the group's results; it moves past the pure op before it.
// CHECK-LABEL: func.func @memory
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.mbarrier.arrive
!acc = !llvm.struct<(f32, f32)>
func.func @memory(%a: f32, %bar: !llvm.ptr<3>) -> f32 {
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %sq = arith.mulf %a, %a : f32
  nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
  %s0 = llvm.extractvalue %s[0] : !acc
  %r = arith.addf %s0, %sq : f32
  return %r : f32
}

// -----

// Regions and terminators stop a wait: it never leaves its block. A wait
// followed by a rename and a reader passes the rename only; a wait that is
// not wait_group 0 right after a commit is not the lowering's and stays.
// CHECK-LABEL: func.func @stays
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: scf.if
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: %[[T:.*]] = llvm.extractvalue
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: arith.addf %[[T]]
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: arith.mulf
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: return
!acc = !llvm.struct<(f32, f32)>
func.func @stays(%a: f32, %p: i1) -> !acc {
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  scf.if %p {
    nvvm.wgmma.fence.aligned
  }
  nvvm.wgmma.fence.aligned
  %t = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async T", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %t0 = llvm.extractvalue %t[0] : !acc
  %u = arith.addf %t0, %a : f32
  nvvm.wgmma.fence.aligned
  %v = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async V", "=f,=f,0,1" %u, %u : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 1
  %w = arith.mulf %a, %a : f32
  nvvm.wgmma.fence.aligned
  %z = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async Z", "=f,=f,0,1" %w, %w : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %y = arith.mulf %w, %w : f32
  return %z : !acc
}

// -----

// The lowering extracts each accumulator register right after its wgmma,
// before the commit: a read of such a rename after the wait is a read of the
// group's results.
// CHECK-LABEL: func.func @early_rename
// CHECK:      %[[S0:.*]] = llvm.extractvalue
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.mulf %arg1, %arg1
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: math.exp2 %[[S0]]
!acc = !llvm.struct<(f32, f32)>
func.func @early_rename(%a: f32, %x: f32) -> f32 {
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  %s0 = llvm.extractvalue %s[0] : !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %sq = arith.mulf %x, %x : f32
  %e = math.exp2 %s0 : f32
  %r = arith.addf %e, %sq : f32
  return %r : f32
}

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

// -----

// A wait_group 0 that passes a softmax's worth of ops (64 here, none a
// wgmma or a constant) gets a CTA-scope membar right before it, which ptxas
// does not hoist WARPGROUP.DEPBAR above; S's wait (count 1) and a wait that
// passes fewer ops get none.
// CHECK-LABEL: func.func @pinned
// CHECK:      %[[O:.*]] = llvm.inline_asm {{.*}}"wgmma.mma_async O"
// CHECK-NOT:  nvvm.memory.barrier
// CHECK:      nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT:  nvvm.memory.barrier
// CHECK:      %[[O0:.*]] = llvm.extractvalue %[[O]][0]
// CHECK-NEXT: nvvm.memory.barrier <cta>
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: arith.mulf %[[O0]]
// CHECK-NOT:  nvvm.memory.barrier
// CHECK:      return
!acc = !llvm.struct<(f32, f32)>
func.func @pinned(%a: f32, %b: f32, %x: f32) -> f32 {
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  nvvm.wgmma.fence.aligned
  %o = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async O", "=f,=f,0,1" %b, %b : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %e0 = llvm.extractvalue %s[0] : !acc
  %e1 = arith.mulf %e0, %x : f32
  %e2 = arith.mulf %e1, %x : f32
  %e3 = arith.mulf %e2, %x : f32
  %e4 = arith.mulf %e3, %x : f32
  %e5 = arith.mulf %e4, %x : f32
  %e6 = arith.mulf %e5, %x : f32
  %e7 = arith.mulf %e6, %x : f32
  %e8 = arith.mulf %e7, %x : f32
  %e9 = arith.mulf %e8, %x : f32
  %e10 = arith.mulf %e9, %x : f32
  %e11 = arith.mulf %e10, %x : f32
  %e12 = arith.mulf %e11, %x : f32
  %e13 = arith.mulf %e12, %x : f32
  %e14 = arith.mulf %e13, %x : f32
  %e15 = arith.mulf %e14, %x : f32
  %e16 = arith.mulf %e15, %x : f32
  %e17 = arith.mulf %e16, %x : f32
  %e18 = arith.mulf %e17, %x : f32
  %e19 = arith.mulf %e18, %x : f32
  %e20 = arith.mulf %e19, %x : f32
  %e21 = arith.mulf %e20, %x : f32
  %e22 = arith.mulf %e21, %x : f32
  %e23 = arith.mulf %e22, %x : f32
  %e24 = arith.mulf %e23, %x : f32
  %e25 = arith.mulf %e24, %x : f32
  %e26 = arith.mulf %e25, %x : f32
  %e27 = arith.mulf %e26, %x : f32
  %e28 = arith.mulf %e27, %x : f32
  %e29 = arith.mulf %e28, %x : f32
  %e30 = arith.mulf %e29, %x : f32
  %e31 = arith.mulf %e30, %x : f32
  %e32 = arith.mulf %e31, %x : f32
  %e33 = arith.mulf %e32, %x : f32
  %e34 = arith.mulf %e33, %x : f32
  %e35 = arith.mulf %e34, %x : f32
  %e36 = arith.mulf %e35, %x : f32
  %e37 = arith.mulf %e36, %x : f32
  %e38 = arith.mulf %e37, %x : f32
  %e39 = arith.mulf %e38, %x : f32
  %e40 = arith.mulf %e39, %x : f32
  %e41 = arith.mulf %e40, %x : f32
  %e42 = arith.mulf %e41, %x : f32
  %e43 = arith.mulf %e42, %x : f32
  %e44 = arith.mulf %e43, %x : f32
  %e45 = arith.mulf %e44, %x : f32
  %e46 = arith.mulf %e45, %x : f32
  %e47 = arith.mulf %e46, %x : f32
  %e48 = arith.mulf %e47, %x : f32
  %e49 = arith.mulf %e48, %x : f32
  %e50 = arith.mulf %e49, %x : f32
  %e51 = arith.mulf %e50, %x : f32
  %e52 = arith.mulf %e51, %x : f32
  %e53 = arith.mulf %e52, %x : f32
  %e54 = arith.mulf %e53, %x : f32
  %e55 = arith.mulf %e54, %x : f32
  %e56 = arith.mulf %e55, %x : f32
  %e57 = arith.mulf %e56, %x : f32
  %e58 = arith.mulf %e57, %x : f32
  %e59 = arith.mulf %e58, %x : f32
  %e60 = arith.mulf %e59, %x : f32
  %e61 = arith.mulf %e60, %x : f32
  %e62 = arith.mulf %e61, %x : f32
  %e63 = arith.mulf %e62, %x : f32
  %e64 = arith.mulf %e63, %x : f32
  %o0 = llvm.extractvalue %o[0] : !acc
  %r = arith.mulf %o0, %e64 : f32
  return %r : f32
}

// -----

// One op short of the span: no membar.
// CHECK-LABEL: func.func @short
// CHECK-NOT:  nvvm.memory.barrier
// CHECK:      nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: return
!acc = !llvm.struct<(f32, f32)>
func.func @short(%b: f32, %x: f32) -> f32 {
  nvvm.wgmma.fence.aligned
  %o = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async O", "=f,=f,0,1" %b, %b : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %e0 = arith.addf %x, %x : f32
  %e1 = arith.mulf %e0, %x : f32
  %e2 = arith.mulf %e1, %x : f32
  %e3 = arith.mulf %e2, %x : f32
  %e4 = arith.mulf %e3, %x : f32
  %e5 = arith.mulf %e4, %x : f32
  %e6 = arith.mulf %e5, %x : f32
  %e7 = arith.mulf %e6, %x : f32
  %e8 = arith.mulf %e7, %x : f32
  %e9 = arith.mulf %e8, %x : f32
  %e10 = arith.mulf %e9, %x : f32
  %e11 = arith.mulf %e10, %x : f32
  %e12 = arith.mulf %e11, %x : f32
  %e13 = arith.mulf %e12, %x : f32
  %e14 = arith.mulf %e13, %x : f32
  %e15 = arith.mulf %e14, %x : f32
  %e16 = arith.mulf %e15, %x : f32
  %e17 = arith.mulf %e16, %x : f32
  %e18 = arith.mulf %e17, %x : f32
  %e19 = arith.mulf %e18, %x : f32
  %e20 = arith.mulf %e19, %x : f32
  %e21 = arith.mulf %e20, %x : f32
  %e22 = arith.mulf %e21, %x : f32
  %e23 = arith.mulf %e22, %x : f32
  %e24 = arith.mulf %e23, %x : f32
  %e25 = arith.mulf %e24, %x : f32
  %e26 = arith.mulf %e25, %x : f32
  %e27 = arith.mulf %e26, %x : f32
  %e28 = arith.mulf %e27, %x : f32
  %e29 = arith.mulf %e28, %x : f32
  %e30 = arith.mulf %e29, %x : f32
  %e31 = arith.mulf %e30, %x : f32
  %e32 = arith.mulf %e31, %x : f32
  %e33 = arith.mulf %e32, %x : f32
  %e34 = arith.mulf %e33, %x : f32
  %e35 = arith.mulf %e34, %x : f32
  %e36 = arith.mulf %e35, %x : f32
  %e37 = arith.mulf %e36, %x : f32
  %e38 = arith.mulf %e37, %x : f32
  %e39 = arith.mulf %e38, %x : f32
  %e40 = arith.mulf %e39, %x : f32
  %e41 = arith.mulf %e40, %x : f32
  %e42 = arith.mulf %e41, %x : f32
  %e43 = arith.mulf %e42, %x : f32
  %e44 = arith.mulf %e43, %x : f32
  %e45 = arith.mulf %e44, %x : f32
  %e46 = arith.mulf %e45, %x : f32
  %e47 = arith.mulf %e46, %x : f32
  %e48 = arith.mulf %e47, %x : f32
  %e49 = arith.mulf %e48, %x : f32
  %e50 = arith.mulf %e49, %x : f32
  %e51 = arith.mulf %e50, %x : f32
  %e52 = arith.mulf %e51, %x : f32
  %e53 = arith.mulf %e52, %x : f32
  %e54 = arith.mulf %e53, %x : f32
  %e55 = arith.mulf %e54, %x : f32
  %e56 = arith.mulf %e55, %x : f32
  %e57 = arith.mulf %e56, %x : f32
  %e58 = arith.mulf %e57, %x : f32
  %e59 = arith.mulf %e58, %x : f32
  %e60 = arith.mulf %e59, %x : f32
  %e61 = arith.mulf %e60, %x : f32
  %e62 = arith.mulf %e61, %x : f32
  %o0 = llvm.extractvalue %o[0] : !acc
  %r = arith.mulf %o0, %e62 : f32
  return %r : f32
}

// -----

// The consumers' f8e4m3 V transpose (simt.fp8_transpose: its barriers,
// loads, stores and proxy fence write only the transposed copy) runs under
// a Q K^T group in flight, whose wait moves past it and past the P V that
// reads the copy (wait_group 1, up to P V's own wait); the P V group
// (marked too: it reads the copy) is waited for before the next
// transpose, and an unmarked store stops a wait.
// CHECK-LABEL: func.func @fp8_transpose
// CHECK:      "wgmma.mma_async S"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.barrier {simt.fp8_transpose}
// CHECK-NEXT: llvm.load
// CHECK-NEXT: llvm.store
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier {simt.fp8_transpose}
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: "wgmma.mma_async P"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.barrier {simt.fp8_transpose}
// CHECK:      "wgmma.mma_async R"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.store
!acc = !llvm.struct<(f32, f32)>
func.func @fp8_transpose(%a: f32, %vt: !llvm.ptr<3>, %v: !llvm.ptr<3>) -> (f32, !acc, !acc) {
  nvvm.wgmma.fence.aligned
  %s = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async S", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  "nvvm.barrier"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> {simt.fp8_transpose} : () -> ()
  %w = llvm.load %v {simt.fp8_transpose} : !llvm.ptr<3> -> i32
  llvm.store %w, %vt {simt.fp8_transpose} : i32, !llvm.ptr<3>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, simt.fp8_transpose, space = #nvvm.shared_space<cta>}
  "nvvm.barrier"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> {simt.fp8_transpose} : () -> ()
  nvvm.wgmma.fence.aligned
  %p = llvm.inline_asm has_side_effects asm_dialect = att {simt.fp8_transpose} "wgmma.mma_async P", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  "nvvm.barrier"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> {simt.fp8_transpose} : () -> ()
  %s0 = llvm.extractvalue %s[0] : !acc
  nvvm.wgmma.fence.aligned
  %r = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async R", "=f,=f,0,1" %a, %a : (f32, f32) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  llvm.store %w, %vt : i32, !llvm.ptr<3>
  return %s0, %p, %r : f32, !acc, !acc
}

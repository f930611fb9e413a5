// flashc-wgmma-assert-to-trap: in a kernel that issues warpgroup MMAs (NVVM
// wgmma ops, or inline PTX naming wgmma) each cf.assert becomes a branch to
// a block that traps, so that no call of __assertfail makes ptxas serialize
// the kernel's wgmma (C7510); a kernel without wgmma keeps its assert.
// RUN: flash-opt %s --pass-pipeline='builtin.module(gpu.module(flashc-wgmma-assert-to-trap))' | FileCheck %s

// CHECK-LABEL: gpu.func @with_wgmma
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1
// CHECK-NOT: cf.assert
// CHECK: cf.cond_br %[[C]], ^[[REST:bb[0-9]+]], ^[[TRAP:bb[0-9]+]]
// CHECK: ^[[TRAP]]:
// CHECK-NEXT: llvm.intr.trap
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[REST]]:
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @with_inline_wgmma
// CHECK-NOT: cf.assert
// CHECK: llvm.intr.trap

// CHECK-LABEL: gpu.func @without_wgmma
// CHECK: cf.assert %{{.*}}, "X out of range"
// CHECK-NOT: llvm.intr.trap
// CHECK: gpu.return

gpu.module @flashc_kernels {
  gpu.func @with_wgmma(%c: i1) kernel {
    cf.assert %c, "limit must be positive"
    nvvm.wgmma.fence.aligned
    gpu.return
  }
  gpu.func @with_inline_wgmma(%c: i1) kernel {
    cf.assert %c, "limit must be positive"
    llvm.inline_asm has_side_effects asm_dialect = att "wgmma.commit_group.sync.aligned;", "" : () -> ()
    gpu.return
  }
  gpu.func @without_wgmma(%c: i1) kernel {
    cf.assert %c, "X out of range"
    gpu.return
  }
}

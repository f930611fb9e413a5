// emitPTX on the hand-written SIMT module (lowered on a clone), for sm_80 and
// sm_90; ptxas.mlir assembles the same PTX.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_80 output=%t.sm_80.ptx" -o /dev/null
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_90 output=%t.sm_90.ptx" -o /dev/null
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90.ptx
// Already lowered by flashc-simt-to-llvm: the same PTX.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm --flashc-emit-ptx="arch=sm_80 output=%t.lowered.ptx" -o /dev/null
// RUN: diff %t.sm_80.ptx %t.lowered.ptx
// An explicit PTX version.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_90 ptx=78 output=-" -o /dev/null | FileCheck %s --check-prefix=PTX78

// CHECK:       .version 8.0
// SM80:        .target sm_80
// SM90:        .target sm_90
// CHECK:       .address_size 64
// CHECK:       .visible .entry toy(
// CHECK-NEXT:    .param .u64 .ptr .global .align 1 toy_param_0,
// CHECK:         .param .f32 toy_param_6
// CHECK:       .maxntid 32, 1, 1
// CHECK:       .shared .align 16 .b8 __flashc_smem[2048];
// CHECK:       mov.u32 {{.*}}%tid.x;
// CHECK:       ld.global.b32
// CHECK:       bar.sync 0;
// CHECK:       st.shared.b32
// CHECK:       ld.shared.b32
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK:       shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// libdevice's __nv_exp2f, inlined; no call is left.
// CHECK:       ex2.approx.f32
// CHECK-NOT:   call
// CHECK:       st.global.v2.b32
// CHECK:       ret;

// PTX78: .version 7.8
// PTX78: .target sm_90

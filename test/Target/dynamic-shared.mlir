// More than 48 KiB of shared memory: the buffer becomes an extern (dynamic)
// shared array, and the sidecar tells the launcher how much to ask for.
// RUN: flash-opt %S/Inputs/big-smem.mlir --flashc-simt-to-llvm="arch=sm_90" | FileCheck %s
// RUN: flash-opt %S/Inputs/big-smem.mlir --flashc-emit-ptx="arch=sm_90 output=-" -o /dev/null | FileCheck %s --check-prefix=PTX
// RUN: flash-opt %S/Inputs/big-smem.mlir --flashc-emit-sidecar="arch=sm_90 output=-" -o /dev/null | FileCheck %s --check-prefix=JSON
// More than sm_86's 99 KiB per CTA would not fit: a clear error.
// RUN: sed 's/65536 x i8/131072 x i8/' %S/Inputs/big-smem.mlir > %t.huge.mlir
// RUN: not flash-opt %t.huge.mlir --flashc-emit-ptx="arch=sm_86 output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: flash-opt %t.huge.mlir --flashc-emit-ptx="arch=sm_90 output=-" -o /dev/null | FileCheck %s --check-prefix=PTX

// CHECK: gpu.module @flashc_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] attributes {flashc.dynamic_shared_bytes = 65536 : i64}
// CHECK: llvm.mlir.global external @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// PTX: .extern .shared .align 16 .b8 __flashc_smem[];

// JSON: "shared_memory": {"static_bytes":0,"dynamic_bytes":65536,"opt_in":true},

// HUGE: error: the kernels need 131072 bytes of shared memory per CTA, more than the 101376 that sm_86 allows

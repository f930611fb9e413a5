// ptxas 13 accepts what emitPTX produces, for sm_80 and sm_90, with no spills;
// and a 64 KiB shared buffer made dynamic.
// REQUIRES: ptxas
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_80 output=%t.sm_80.ptx" -o /dev/null
// RUN: %ptxas -v -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_90 output=%t.sm_90.ptx" -o /dev/null
// RUN: %ptxas -v -arch=sm_90 %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: flash-opt %S/Inputs/big-smem.mlir --flashc-emit-ptx="arch=sm_90 output=%t.big.ptx" -o /dev/null
// RUN: %ptxas -v -arch=sm_90 %t.big.ptx -o %t.big.cubin 2>&1 | FileCheck %s --check-prefix=BIG

// SM80: Compiling entry function 'toy' for 'sm_80'
// SM90: Compiling entry function 'toy' for 'sm_90'
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK: used 1 barriers, 2048 bytes smem

// Dynamic shared memory is not in ptxas' static count.
// BIG: Compiling entry function 'big' for 'sm_90'
// BIG-NOT: smem
// BIG: Compile time

// assembleCubin (what `flashc --emit=cubin` uses) runs ptxas itself.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_90 output=%t.c.ptx cubin=%t.c.cubin" -o /dev/null
// RUN: od -An -c -N4 %t.c.cubin | FileCheck %s --check-prefix=ELF
// ELF: 177   E   L   F

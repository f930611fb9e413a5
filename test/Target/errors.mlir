// What the backend rejects, with the reason.
// RUN: not flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm="arch=sm_75" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-ptx="arch=sm_100 output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARCH100
// RUN: not flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-sidecar="arch=sm_90 ptx=70 output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not flash-opt %s --split-input-file --flashc-emit-sidecar="output=-" -o /dev/null 2>&1 | FileCheck %s

// ARCH: error: unsupported arch 'sm_75': expected one of sm_80, sm_86, sm_89, sm_90, sm_90a
// ARCH100: error: unsupported arch 'sm_100': expected one of sm_80, sm_86, sm_89, sm_90, sm_90a
// PTX: error: sm_90 needs PTX 7.8 or later, not 7.0

// CHECK: error: cannot express 'arith.select' in the launch metadata's grid
module attributes {gpu.container_module} {
  func.func @a_grid(%n: i32 {tile.name = "n"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %t = arith.constant true
    %s = arith.select %t, %n, %c1 : i32
    return %s, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    gpu.func @a(%n: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
  }
}

// -----

// CHECK: error: cannot express 'arith.fptosi' in the launch metadata's grid
module attributes {gpu.container_module} {
  func.func @b_grid(%x: f32 {tile.name = "x"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %i = arith.fptosi %x : f32 to i32
    return %i, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    gpu.func @b(%x: f32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
  }
}

// -----

// CHECK: error: kernel signature does not match parameter 'X': expected (ptr, i32, i32) at argument #0, found (ptr, i32)
module attributes {gpu.container_module} {
  func.func @c_grid(%X: !tile.global<[R, C], f32> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    return %c1, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    gpu.func @c(%X: !llvm.ptr<1>, %X0: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
  }
}

// -----

// CHECK: error: the launch metadata describes one kernel; found 2
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    gpu.func @d(%n: i32) kernel { gpu.return }
    gpu.func @e(%n: i32) kernel { gpu.return }
  }
}

// -----

// CHECK: error: no grid function for kernel 'f' (expected @f_grid)
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    gpu.func @f(%n: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} { gpu.return }
  }
}

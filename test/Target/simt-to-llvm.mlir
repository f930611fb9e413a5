// flashc-simt-to-llvm: the SIMT level -> LLVM dialect + NVVM inside the
// gpu.module; the host-side grid function is left alone.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm | FileCheck %s
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm="arch=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm | sed -n '/gpu.module/,$p' | FileCheck %s --check-prefix=CLEAN

// CHECK-LABEL: func.func @toy_grid
// CHECK:         tile.dim
// CHECK:         arith.ceildivsi
// CHECK:       gpu.module @flashc_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// CHECK:         llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<2048 x i8>
// math.exp2 goes to libdevice, linked by emitPTX.
// CHECK:         llvm.func @__nv_exp2f(f32) -> f32
// CHECK:         llvm.func @toy(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: f32)
// CHECK-SAME:      flashc.params
// CHECK-SAME:      nvvm.kernel
// CHECK-SAME:      nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK-NOT:     nvvm.reqntid
// CHECK:         nvvm.read.ptx.sreg.tid.x
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xf16>
// CHECK:         nvvm.barrier
// CHECK:         llvm.store %{{.*}}, %{{.*}} : vector<2xf16>, !llvm.ptr<3>
// CHECK:         llvm.shufflevector
// CHECK:         nvvm.mma.sync
// CHECK-SAME:      shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK:         nvvm.shfl.sync bfly
// CHECK:         nvvm.shfl.sync bfly
// CHECK:         llvm.call @__nv_exp2f
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK:         llvm.return

// Nothing above the LLVM dialect is left in the gpu.module.
// CLEAN-NOT:     gpu.func
// CLEAN-NOT:     scf.
// CLEAN-NOT:     cf.
// CLEAN-NOT:     arith.
// CLEAN-NOT:     vector.
// CLEAN-NOT:     math.
// CLEAN-NOT:     unrealized_conversion_cast
// CLEAN:         llvm.return
// CLEAN-NOT:     {{scf|cf|arith|vector|math}}.

// SM90: gpu.module @flashc_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]

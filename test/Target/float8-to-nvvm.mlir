// flashc-float8-to-nvvm: truncf f32/f16 -> f8E4M3FN becomes one
// llvm.nvvm.ff.to.e4m3x2.rn per pair (the odd element paired with 0.0; the
// pair's first element is the call's second operand, the low byte), extf
// f8E4M3FN -> f16/f32 one llvm.nvvm.e4m3x2.to.f16x2.rn per pair; the fp8
// values stay the i8 bytes the loads and stores hold (the bitcasts fold).
// Other fp8 ops are left for flashc-prepare-nvvm to reject.
// RUN: flash-opt %s --pass-pipeline='builtin.module(gpu.module(flashc-float8-to-nvvm))' | FileCheck %s
// RUN: flash-opt %s --flashc-emit-ptx="arch=sm_90a output=-" -o /dev/null | FileCheck %s --check-prefix=PTX
// RUN: not flash-opt %s --flashc-emit-ptx="arch=sm_90 output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: gpu.func @casts
// CHECK-SAME: (%[[B:[a-z0-9]+]]: vector<3xi8>, %[[X:[a-z0-9]+]]: vector<3xf32>, %[[H:[a-z0-9]+]]: f16,
// CHECK: %[[X0:.*]] = vector.extract %[[X]][0]
// CHECK: %[[X1:.*]] = vector.extract %[[X]][1]
// CHECK: %[[X2:.*]] = vector.extract %[[X]][2]
// CHECK: %[[P0:.*]] = llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"(%[[X1]], %[[X0]]) : (f32, f32) -> i16
// CHECK: %[[P1:.*]] = llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"(%{{.*}}, %[[X2]]) : (f32, f32) -> i16
// CHECK: %[[T:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}} : vector<3xi8>
// CHECK: llvm.store %[[T]]
// CHECK: %[[HW:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"(%{{.*}}, %[[HW]])
// CHECK: llvm.store %{{.*}} : i8
// CHECK: %[[B0:.*]] = vector.extract %[[B]][0]
// CHECK: %[[B1:.*]] = vector.extract %[[B]][1]
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"(%{{.*}}) : (i16) -> vector<2xf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"(%{{.*}}) : (i16) -> vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}} : vector<3xf32>
// CHECK-NOT: f8E4M3FN
// CHECK: gpu.return

// PTX-COUNT-3: cvt.rn.satfinite.e4m3x2.f32
// PTX-COUNT-2: cvt.rn.f16x2.e4m3x2
// SM90: error: f8e4m3 needs --arch=sm_90a (e4m3 conversions and wgmma), not sm_90

gpu.module @flashc_kernels {
  gpu.func @casts(%b: vector<3xi8>, %x: vector<3xf32>, %h: f16, %out8: !llvm.ptr<1>,
                  %out32: !llvm.ptr<1>) kernel {
    %t = arith.truncf %x : vector<3xf32> to vector<3xf8E4M3FN>
    %tb = arith.bitcast %t : vector<3xf8E4M3FN> to vector<3xi8>
    llvm.store %tb, %out8 : vector<3xi8>, !llvm.ptr<1>
    %s = arith.truncf %h : f16 to f8E4M3FN
    %sb = arith.bitcast %s : f8E4M3FN to i8
    llvm.store %sb, %out8 : i8, !llvm.ptr<1>
    %f = arith.bitcast %b : vector<3xi8> to vector<3xf8E4M3FN>
    %e = arith.extf %f : vector<3xf8E4M3FN> to vector<3xf32>
    llvm.store %e, %out32 : vector<3xf32>, !llvm.ptr<1>
    gpu.return
  }
}

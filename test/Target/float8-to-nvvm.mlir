// flashc-float8-to-nvvm: truncf f32/f16 -> f8E4M3FN becomes one
// llvm.nvvm.ff.to.e4m3x2.rn per pair (the odd element paired with 0.0; the
// pair's first element is the call's second operand, the low byte), extf
// f8E4M3FN -> f16/f32 one llvm.nvvm.e4m3x2.to.f16x2.rn per pair; the fp8
// values stay the i8 bytes the loads and stores hold (the bitcasts fold).
// An even vector's bytes are its cvt pairs (vector<N/2xi16> bitcast), and
// loops carry fp8 vectors of a multiple of 4 in 32-bit words
// (vector.bitcast at the edges, folded through the fp8 bitcasts).
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

// CHECK-LABEL: gpu.func @carried
// CHECK: %[[Q0:.*]] = llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"
// CHECK: %[[H0:.*]] = vector.from_elements %[[Q0]], %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi16>
// CHECK: %[[W0:.*]] = vector.bitcast %[[H0]] : vector<4xi16> to vector<2xi32>
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[P:.*]] = %[[W0]]) -> (vector<2xi32>)
// CHECK: %[[PB:.*]] = vector.bitcast %[[P]] : vector<2xi32> to vector<8xi8>
// CHECK: vector.shuffle %[[PB]], %[[PB]] [0, 1, 4, 5]
// CHECK: %[[H1:.*]] = vector.from_elements {{.*}} : vector<4xi16>
// CHECK: %[[W1:.*]] = vector.bitcast %[[H1]] : vector<4xi16> to vector<2xi32>
// CHECK: scf.yield %[[W1]] : vector<2xi32>
// CHECK: vector.bitcast %[[R]] : vector<2xi32> to vector<8xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// CHECK-NOT: f8E4M3FN
// CHECK: gpu.return

// PTX-LABEL: .entry casts
// PTX-COUNT-3: cvt.rn.satfinite.e4m3x2.f32
// PTX-COUNT-2: cvt.rn.f16x2.e4m3x2
// The word of bytes 0, 1, 4, 5 is two cvt pairs side by side.
// PTX-LABEL: .entry carried
// PTX-NOT: cvt.u32.u16
// PTX: mov.b32 %r{{[0-9]+}}, {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
// PTX-NOT: cvt.u32.u16
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

  gpu.func @carried(%x: vector<8xf32>, %n: index, %words: !llvm.ptr<1>,
                    %out: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t0 = arith.truncf %x : vector<8xf32> to vector<8xf8E4M3FN>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %t0) -> (vector<8xf8E4M3FN>) {
      %b = arith.bitcast %p : vector<8xf8E4M3FN> to vector<8xi8>
      %w = vector.shuffle %b, %b [0, 1, 4, 5] : vector<8xi8>, vector<8xi8>
      %wi = llvm.bitcast %w : vector<4xi8> to i32
      %ii = arith.index_cast %i : index to i32
      %at = llvm.getelementptr %words[%ii] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %wi, %at : i32, !llvm.ptr<1>
      %t = arith.truncf %x : vector<8xf32> to vector<8xf8E4M3FN>
      scf.yield %t : vector<8xf8E4M3FN>
    }
    %e = arith.extf %r : vector<8xf8E4M3FN> to vector<8xf32>
    llvm.store %e, %out : vector<8xf32>, !llvm.ptr<1>
    gpu.return
  }
}

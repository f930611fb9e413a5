// flashc-approx-math-to-nvvm: math.exp2 fastmath<afn> on f32 (what the
// online-softmax decomposition emits) becomes ex2.approx.ftz.f32, one
// intrinsic call per element; exp2 without afn (the user's exp2(), to
// libdevice later) and non-f32 exp2 are left alone.
// RUN: flash-opt %s --pass-pipeline='builtin.module(gpu.module(flashc-approx-math-to-nvvm))' | FileCheck %s
// RUN: flash-opt %s --flashc-emit-ptx="arch=sm_80 output=-" -o /dev/null | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @exps
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[V:[a-z0-9]+]]: vector<2xf32>, %[[H:[a-z0-9]+]]: f16,
// CHECK: %[[S:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]]) : (f32) -> f32
// CHECK: %[[E0:.*]] = vector.extract %[[V]][0] : f32 from vector<2xf32>
// CHECK: %[[R0:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[E0]]) : (f32) -> f32
// CHECK: %[[I0:.*]] = vector.insert %[[R0]], %{{.*}} [0] : f32 into vector<2xf32>
// CHECK: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<2xf32>
// CHECK: %[[R1:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[E1]]) : (f32) -> f32
// CHECK: %[[I1:.*]] = vector.insert %[[R1]], %[[I0]] [1] : f32 into vector<2xf32>
// CHECK: %[[PLAIN:.*]] = math.exp2 %[[X]] : f32
// CHECK: %[[HALF:.*]] = math.exp2 %[[H]] fastmath<afn> : f16
// CHECK-NOT: math.exp2
// CHECK: gpu.return

// In the PTX, three ex2.approx.ftz.f32; the plain f32 and the f16 exp2 take
// libdevice's exp2f (ex2.approx.f32 without .ftz).
// PTX-COUNT-3: ex2.approx.ftz.f32
// PTX-NOT: ex2.approx.ftz.f32

gpu.module @flashc_kernels {
  gpu.func @exps(%x: f32, %v: vector<2xf32>, %h: f16, %out: !llvm.ptr<1>) kernel {
    %s = math.exp2 %x fastmath<afn> : f32
    %w = math.exp2 %v fastmath<afn> : vector<2xf32>
    %p = math.exp2 %x : f32
    %e = math.exp2 %h fastmath<afn> : f16
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %c3 = arith.constant 3 : i64
    %p0 = llvm.getelementptr %out[%c0] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %s, %p0 : f32, !llvm.ptr<1>
    %p1 = llvm.getelementptr %out[%c1] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %w, %p1 : vector<2xf32>, !llvm.ptr<1>
    %p2 = llvm.getelementptr %out[%c2] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %p, %p2 : f32, !llvm.ptr<1>
    %ef = arith.extf %e : f16 to f32
    %p3 = llvm.getelementptr %out[%c3] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %ef, %p3 : f32, !llvm.ptr<1>
    gpu.return
  }
}

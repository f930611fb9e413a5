// A kernel that copies with TMA lists its tensor maps in flashc.tensor_maps;
// the sidecar describes each (tensor, box in the tensor's dim order, swizzle,
// OOB fill), passed after the params as a generic pointer argument.
// RUN: sed -e 's|f32 {tile.name = "scale"}) kernel|f32 {tile.name = "scale"}, %Xmap: !llvm.ptr {tile.name = "X.tmap"}) kernel|' -e 's|flashc.num_warps = 1 : i32,|flashc.num_warps = 1 : i32, flashc.tensor_maps = [{name = "X.tmap", tensor = "X", box = array<i64: 16, 64>, swizzle = "128B", oob = "zero"}],|' %S/Inputs/simt-kernel.mlir > %t.mlir
// RUN: flash-opt %t.mlir --flashc-emit-sidecar="arch=sm_90 output=-" -o /dev/null | FileCheck %s
// A map whose box does not match its tensor's rank, and one naming no
// tensor, are errors at the kernel.
// RUN: sed 's|box = array<i64: 16, 64>|box = array<i64: 16>|' %t.mlir > %t.rank.mlir
// RUN: not flash-opt %t.rank.mlir --flashc-emit-sidecar="output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: sed 's|tensor = "X", box|tensor = "scale", box|' %t.mlir > %t.notensor.mlir
// RUN: not flash-opt %t.notensor.mlir --flashc-emit-sidecar="output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTENSOR
// Without the argument the signature does not match.
// RUN: sed 's|, %Xmap: !llvm.ptr {tile.name = "X.tmap"}||' %t.mlir > %t.noarg.mlir
// RUN: not flash-opt %t.noarg.mlir --flashc-emit-sidecar="output=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOARG

// CHECK:        "params": [
// CHECK:        {"name":"scale","kind":"scalar","dtype":"f32","abi":["f32"]}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "tensor_maps": [
// CHECK-NEXT:     {"name":"X.tmap","tensor":"X","box":[16,64],"swizzle":"128B","oob":"zero","abi":"tensormap"}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "grid": ["cdiv(R, 16)","1","1"],

// RANK: error: tensor map 'X.tmap' has a box of rank 1 for tensor 'X' of rank 2
// NOTENSOR: error: tensor map 'X.tmap' names no tensor parameter ('scale')
// NOARG: error: kernel signature does not match tensor map #0: expected a generic !llvm.ptr at argument #7

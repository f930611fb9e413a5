// The launcher's metadata: entry, params with their PTX ABI, grid expressions,
// CTA size, shared memory, compile-time constants.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-sidecar="arch=sm_90 output=-" -o /dev/null | FileCheck %s
// The JSON parses (and keeps its order).
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-emit-sidecar="output=%t.json" -o /dev/null
// RUN: %python -c "import json,sys; d=json.load(open(sys.argv[1])); print(list(d), d['grid'], d['params'][0]['dims'])" %t.json | FileCheck %s --check-prefix=PY
// Without flashc.params the parameters come from the grid function's signature.
// RUN: sed '/flashc.params = /,/scalar/d' %S/Inputs/simt-kernel.mlir > %t.noparams.mlir
// RUN: flash-opt %t.noparams.mlir --flashc-emit-sidecar="arch=sm_90 output=-" -o /dev/null | FileCheck %s
// After flashc-simt-to-llvm (llvm.func, nvvm.maxntid) the same metadata.
// RUN: flash-opt %S/Inputs/simt-kernel.mlir --flashc-simt-to-llvm="arch=sm_90" --flashc-emit-sidecar="arch=sm_90 output=-" -o /dev/null | FileCheck %s

// CHECK:      {
// CHECK-NEXT:   "entry": "toy",
// CHECK-NEXT:   "arch": "sm_90",
// CHECK-NEXT:   "ptx_version": "8.0",
// CHECK-NEXT:   "params": [
// CHECK-NEXT:     {"name":"X","kind":"tensor","dtype":"f16","dims":["R",64],"abi":["ptr","i32","i32"]},
// CHECK-NEXT:     {"name":"Y","kind":"tensor","dtype":"f32","dims":["R",8],"abi":["ptr","i32","i32"]},
// CHECK-NEXT:     {"name":"scale","kind":"scalar","dtype":"f32","abi":["f32"]}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "grid": ["cdiv(R, 16)","1","1"],
// CHECK-NEXT:   "threads_per_cta": 32,
// CHECK-NEXT:   "num_warps": 1,
// CHECK-NEXT:   "shared_memory": {"static_bytes":2048,"dynamic_bytes":0,"opt_in":false},
// CHECK-NEXT:   "constants": {"BLOCK_R":16,"EXACT":true,"SCALE":0.5}
// CHECK-NEXT: }

// PY: ['entry', 'arch', 'ptx_version', 'params', 'grid', 'threads_per_cta', 'num_warps', 'shared_memory', 'constants'] ['cdiv(R, 16)', '1', '1'] ['R', 64]

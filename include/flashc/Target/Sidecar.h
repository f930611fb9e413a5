//===- Sidecar.h - launcher metadata (JSON) for a compiled kernel -*- C++ -*-===//
//
// `flashc --emit=ptx -o fa2.ptx` writes, next to the PTX, `fa2.ptx.json`: what
// a launcher needs to call the kernel without reading any IR:
//
//   {"entry": "fa2", "arch": "sm_80", "ptx_version": "8.0",
//    "params": [{"name": "Q", "kind": "tensor", "dtype": "f16",
//                "dims": ["B", "H", "Nq", 64],
//                "abi": ["ptr", "i32", "i32", "i32", "i32"]}, ...,
//               {"name": "sm_scale", "kind": "scalar", "dtype": "f32",
//                "abi": ["f32"]}],
//    "grid": ["cdiv(Nq, 128)", "B * H", "1"],
//    "threads_per_cta": 128, "num_warps": 4,
//    "shared_memory": {"static_bytes": 0, "dynamic_bytes": 0,
//                      "opt_in": false},
//    "constants": {"BLOCK_M": 128, "CAUSAL": false, ...}}
//
// `abi` lists the kernel's PTX parameters in order: a tensor is its base
// pointer (global, 64-bit) followed by one i32 per dim (row-major and
// contiguous, so no strides). Grid expressions are over dim symbols and i32
// scalar parameter names, in the language of flashc/Runtime/GridExpr.h
// (+ - * ; `/` and `%` truncate toward zero as in C; cdiv, floordiv, min, max).
// dynamic_bytes is passed at launch. `opt_in` is true when static_bytes +
// dynamic_bytes is above 48 KiB, what a CTA may use by default: the launcher
// must then raise the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize
// to dynamic_bytes first. (flashc makes a buffer above 48 KiB dynamic, so
// with flashc's output this means dynamic_bytes > 48 KiB.)
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_SIDECAR_H
#define FLASH_LIB_TARGET_SIDECAR_H

#include "flashc/Target/PTX.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class ModuleOp;
namespace LLVM {
class GlobalOp;
} // namespace LLVM
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace flash {

/// The CTA size of a kernel: gpu.func's known_block_size (inherent) or the
/// discardable `gpu.known_block_size`; null when neither is there.
mlir::DenseI32ArrayAttr knownBlockSize(mlir::Operation *kernel);

/// An llvm.mlir.global without a definition (e.g. the extern dynamic
/// shared-memory buffer).
bool isDeclaration(mlir::LLVM::GlobalOp global);

struct SharedMemoryUse {
  int64_t staticBytes = 0;
  int64_t dynamicBytes = 0;
};
/// Shared memory a gpu.module declares: the sizes of its address-space-3
/// globals (static) and kDynamicSharedBytesAttrName (dynamic).
SharedMemoryUse sharedMemoryOf(mlir::Operation *gpuModule);
/// What the kernel will use at launch: static buffers above the 48 KiB limit
/// become dynamic (as flashc-prepare-nvvm does).
SharedMemoryUse launchSharedMemory(SharedMemoryUse declared);

/// The three return values of a grid function (`func.func @NAME_grid`) as
/// grid expressions (flashc/Runtime/GridExpr.h) over dim symbols and scalar
/// parameter names; an error diagnostic on the first op it cannot render.
mlir::FailureOr<llvm::SmallVector<std::string, 3>>
renderGridExpressions(mlir::func::FuncOp grid);

/// The launch metadata JSON of the one kernel in `module` (the SIMT level:
/// a gpu.module with one kernel plus the host-side grid function). Errors are
/// diagnostics on the module.
mlir::FailureOr<std::string> writeLaunchSidecar(mlir::ModuleOp module,
                                                const TargetOptions &options);

} // namespace flash

#endif // FLASH_LIB_TARGET_SIDECAR_H

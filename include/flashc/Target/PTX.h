//===- PTX.h - SIMT level -> LLVM/NVVM -> PTX (-> cubin) --------*- C++ -*-===//
//
// The backend of flashc. Input: the SIMT-level module that
// `convert-tile-to-simt` produces (docs/ir-conventions.md, "SIMT level"):
//
//   module attributes {gpu.container_module} {
//     func.func @NAME_grid(...) -> (i32, i32, i32)       // host side, untouched
//     gpu.module @flashc_kernels { gpu.func @NAME(...) kernel { ... } }
//   }
//
//   buildSIMTToLLVMPipeline  gpu.module -> LLVM dialect + NVVM ops
//                            (flash-opt --flashc-simt-to-llvm="arch=sm_90")
//   emitPTX                  gpu.module -> LLVM IR -> NVPTX TargetMachine -> PTX
//                            (flash-opt --flashc-emit-ptx="arch=sm_90 output=F")
//   assembleCubin            PTX -> ptxas -> cubin (when ptxas is installed)
//
// emitPTX does not use upstream `gpu-module-to-binary`: that pass insists on a
// CUDA toolkit (libdevice) even for kernels that call no libdevice function.
// We link libdevice only when the module declares `__nv_*` functions.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TARGET_PTX_H
#define FLASH_LIB_TARGET_PTX_H

#include "flashc/Runtime/Arch.h"
#include "flashc/Runtime/SharedMemoryLimits.h"
#include "flashc/Support/CompileOptions.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
class OpPassManager;
class Pass;
class RewritePatternSet;
} // namespace mlir

namespace flash {

struct TargetOptions {
  /// One of Arch.h's kSupportedArchs (checked by verifyTargetOptions).
  std::string arch = std::string(kDefaultArch);
  /// PTX ISA version times ten (80 = `.version 8.0`); 0 picks the default for
  /// `arch` (see defaultPTXVersion).
  int ptxVersion = 0;
  /// LLVM optimization level for the NVPTX back end.
  int optLevel = 3;
  /// CUDA toolkit root used to find libdevice and ptxas; empty: $CUDA_HOME,
  /// $CUDA_PATH, $CUDA_ROOT, /usr/local/cuda, in that order.
  std::string cudaPath;
  /// The switches emitPTX reads: recomputeLoopOffsets, fenceLoopExits,
  /// sinkAccumulatorScales, packHalfPhis, loopStrengthReduction.
  CompileOptions compile;
};

// kMaxStaticSharedBytes (lib/Runtime/SharedMemoryLimits.h): above it the
// backend turns the shared buffer into dynamic shared memory and the launcher
// must opt in.

/// The PTX version flashc uses for `arch` when none is given: 8.0 (CUDA 12.0)
/// for every supported arch (sm_90 needs >= 7.8, sm_89 >= 7.8).
int defaultPTXVersion(llvm::StringRef arch);
/// The most shared memory (static + dynamic) one CTA may use on `arch`.
int64_t maxSharedBytesPerCTA(llvm::StringRef arch);
/// Checks the arch and PTX version; the error says what is supported.
llvm::Error verifyTargetOptions(const TargetOptions &options);
/// "+ptx80" for the options.
std::string ptxFeatures(const TargetOptions &options);

/// Registers what the backend needs in a context: the dialects the pipeline
/// produces, the LLVM IR translations of builtin/llvm/nvvm/gpu and the NVVM
/// target attribute's interface. flashc calls it on its registry before it
/// creates the context (emitPTX also appends it to the context it is given).
void registerTargetDialects(mlir::DialectRegistry &registry);

/// SIMT level -> LLVM dialect inside the gpu.module (the host-side grid
/// function is left alone): nvvm-attach-target, flashc-prepare-nvvm (launch
/// bounds, dynamic shared memory), scf->cf, convert-gpu-to-nvvm,
/// flashc-approx-math-to-nvvm, vector/arith/math/cf/index -> llvm,
/// reconcile-unrealized-casts.
/// `options` must have passed verifyTargetOptions.
void buildSIMTToLLVMPipeline(mlir::OpPassManager &pm,
                             const TargetOptions &options);

/// math.exp2 fastmath<afn> on f32 (scalar or 1-D vector) -> the
/// llvm.nvvm.ex2.approx.ftz.f32 intrinsic, per element (the patterns of
/// --flashc-approx-math-to-nvvm, Passes.td).
void populateApproxMathToNVVMPatterns(mlir::RewritePatternSet &patterns);

/// arith.truncf f32/f16 -> f8E4M3FN and arith.extf back (scalars or 1-D
/// vectors) -> the sm_89+ cvt e4m3x2 intrinsics, two elements per call (the
/// patterns of --flashc-float8-to-nvvm, Passes.td).
void populateFloat8ToNVVMPatterns(mlir::RewritePatternSet &patterns);

/// PTX for the module's gpu.module (the SIMT level or already lowered by
/// buildSIMTToLLVMPipeline: emitPTX lowers a clone when needed and leaves
/// `module` unchanged). Errors are emitted as diagnostics on the module.
mlir::FailureOr<std::string> emitPTX(mlir::ModuleOp module,
                                     const TargetOptions &options);

/// The ptxas to use: options.cudaPath/bin, $CUDA_HOME/bin, ..., then $PATH.
/// Empty when there is none.
std::string findPtxas(const TargetOptions &options);

/// Runs `ptxas -arch=ARCH -O3 [extraArgs]` on `ptx` and returns the cubin.
/// `log`, when given, receives ptxas' output (e.g. the -v report).
llvm::Expected<std::string>
assembleCubin(llvm::StringRef ptx, const TargetOptions &options,
              llvm::ArrayRef<std::string> extraArgs = {},
              std::string *log = nullptr);

/// Registers, for flash-opt and lit:
///   --flashc-simt-to-llvm="arch=sm_80"           (the pipeline above)
/// and the passes of Passes.td:
///   --flashc-prepare-nvvm                        (one pass of it)
///   --flashc-approx-math-to-nvvm                 (another)
///   --flashc-emit-ptx="arch=sm_80 output=F [cubin=G]"  (writes emitPTX's
///                                                text; cubin: assembleCubin)
///   --flashc-emit-sidecar="arch=sm_80 output=F"  (writes the launch JSON)
void registerTargetPipelines();

} // namespace flash

#endif // FLASH_LIB_TARGET_PTX_H

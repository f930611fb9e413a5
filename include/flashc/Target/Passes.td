#ifndef FLASH_TARGET_PASSES_TD
#define FLASH_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def FlashcPrepareNVVM
    : Pass<"flashc-prepare-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "Launch bounds and dynamic shared memory for a SIMT-level "
                "gpu.module (part of flashc-simt-to-llvm)";
  let description = [{
    What the upstream lowering does not do for flashc, on a SIMT-level
    gpu.module: checks the target options (so a bad arch fails the
    pipeline, clearly); gives each kernel `.maxntid` from its known block
    size, so that ptxas knows the CTA size when it allocates registers
    (upstream does it for gpu.func's inherent known_block_size, not for the
    discardable `gpu.known_block_size`); turns the shared-memory buffer into
    dynamic shared memory (an extern [0 x i8]) when it is larger than the
    48 KiB static limit, recording the size as `flashc.dynamic_shared_bytes`
    on the gpu.module; rejects more shared memory than one CTA of the arch
    may have, and f8e4m3 values (they have no PTX lowering: an error at the
    first op that holds one, naming sm_90a as the arch fp8 needs).
  }];
  let options = [
    Option<"arch", "arch", "std::string",
           /*default=*/"std::string(flash::kDefaultArch)",
           "Target SM (flash::kSupportedArchs)">,
    Option<"ptx", "ptx", "int", /*default=*/"0",
           "PTX version x10 (0: the default for arch)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def FlashcApproxMathToNVVM
    : Pass<"flashc-approx-math-to-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "math.exp2 fastmath<afn> on f32 to ex2.approx.ftz.f32 (part "
                "of flashc-simt-to-llvm)";
  let description = [{
    The exponentials of the decomposed online softmax become PTX's
    ex2.approx.ftz.f32, one MUFU.EX2 in SASS, where the plain form also
    needs a range fix-up of four instructions for subnormal results. Vectors
    are unrolled: the intrinsic is scalar.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect"];
}

def FlashcEmitPTX : Pass<"flashc-emit-ptx", "mlir::ModuleOp"> {
  let summary = "Write the PTX of the module's gpu.module to a file (IR "
                "unchanged)";
  let description = [{
    flash::emitPTX on the module, for lit: flashc calls the library function
    directly. With `cubin`, ptxas also assembles the PTX into that file.
  }];
  let options = [
    Option<"arch", "arch", "std::string",
           /*default=*/"std::string(flash::kDefaultArch)",
           "Target SM (flash::kSupportedArchs)">,
    Option<"ptx", "ptx", "int", /*default=*/"0",
           "PTX version x10 (0: the default for arch)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Output file ('-': stdout)">,
    Option<"cubin", "cubin", "std::string", /*default=*/"\"\"",
           "Also assemble the PTX with ptxas into this file">
  ];
}

def FlashcEmitSidecar : Pass<"flashc-emit-sidecar", "mlir::ModuleOp"> {
  let summary = "Write the launch metadata (JSON) of a SIMT-level module to "
                "a file (IR unchanged)";
  let description = [{
    flash::writeLaunchSidecar on the module, for lit: flashc calls the
    library function directly.
  }];
  let options = [
    Option<"arch", "arch", "std::string",
           /*default=*/"std::string(flash::kDefaultArch)",
           "Target SM (flash::kSupportedArchs)">,
    Option<"ptx", "ptx", "int", /*default=*/"0",
           "PTX version x10 (0: the default for arch)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Output file ('-': stdout)">
  ];
}

#endif // FLASH_TARGET_PASSES_TD

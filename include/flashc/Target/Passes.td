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
    may have, and f8E4M3FN values that flashc-float8-to-nvvm did not lower
    (all of them before sm_90a): an error at the first op that holds one,
    naming sm_90a as the arch fp8 needs.
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

def FlashcWgmmaAssertToTrap
    : Pass<"flashc-wgmma-assert-to-trap", "mlir::gpu::GPUModuleOp"> {
  let summary = "cf.assert in kernels with warpgroup MMAs to a branch to "
                "trap (part of flashc-simt-to-llvm on sm_90a)";
  let description = [{
    A failing cf.assert becomes a call of __assertfail, and any call makes
    ptxas serialize every wgmma of the kernel (C7510). In a gpu.func that
    issues wgmma (NVVM wgmma ops or inline PTX naming wgmma), each
    cf.assert becomes a conditional branch to a block holding llvm.intr.trap
    and llvm.unreachable; other functions keep their asserts. Runs on a
    flat CFG (after scf lowering).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def FlashcFloat8ToNVVM
    : Pass<"flashc-float8-to-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "f8E4M3FN casts to cvt e4m3x2 intrinsics, fp8 values to bytes "
                "(part of flashc-simt-to-llvm on sm_90a)";
  let description = [{
    arith.truncf f32/f16 -> f8E4M3FN becomes llvm.nvvm.ff.to.e4m3x2.rn
    (cvt.rn.satfinite.e4m3x2.f32) and arith.extf f8E4M3FN -> f16/f32
    llvm.nvvm.e4m3x2.to.f16x2.rn (cvt.rn.f16x2.e4m3x2), two elements per
    call (element i in the low byte / half); the fp8 values are left as the
    i8 bytes memory holds, the bitcasts between them folded. Whatever else
    holds an f8E4M3FN value is rejected by flashc-prepare-nvvm.
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

//===- SIMTKernel.h - the SIMT kernel that emulate and cuda run -*- C++ -*-===//
#ifndef FLASH_LIB_RUN_SIMTKERNEL_H
#define FLASH_LIB_RUN_SIMTKERNEL_H

#include "Backend.h"

#include "flashc/Runtime/Arch.h"

namespace flash::run {

/// Lowers a tile-level module to the SIMT level (a module that already holds
/// a SIMT kernel runs as it is), then finds the kernel and collects its
/// parameters. With `arch`, the kernel's shared memory is checked against its
/// limit while it is placed. Returns 0, or the exit code.
int prepareSIMTKernel(const BackendContext &context,
                      mlir::gpu::GPUFuncOp &kernel, ParamList &params,
                      const ArchInfo *arch = nullptr);

} // namespace flash::run

#endif // FLASH_LIB_RUN_SIMTKERNEL_H

//===- SIMTKernel.h - the SIMT kernel that emulate and cuda run -*- C++ -*-===//
#ifndef FLASH_LIB_RUN_SIMTKERNEL_H
#define FLASH_LIB_RUN_SIMTKERNEL_H

#include "Backend.h"

#include "flashc/Runtime/Arch.h"

namespace flash::run {

/// Lowers a tile-level module to the SIMT level for `arch` with the
/// request's switches (a module that already holds a SIMT kernel runs as it
/// is: the driver lowers what it compiles itself), then finds the kernel and
/// collects its parameters. Returns 0, or the exit code.
int prepareSIMTKernel(const BackendContext &context,
                      mlir::gpu::GPUFuncOp &kernel, ParamList &params,
                      const ArchInfo &arch);

} // namespace flash::run

#endif // FLASH_LIB_RUN_SIMTKERNEL_H

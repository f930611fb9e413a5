//===- Outputs.h - the .npy files --out asks for ----------------*- C++ -*-===//
#ifndef FLASH_LIB_RUN_OUTPUTS_H
#define FLASH_LIB_RUN_OUTPUTS_H

#include "Params.h"

#include "flashc/Run/Run.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace flash::run {

/// Writes each --out parameter's final contents, as `contents` gives them
/// (into request.results->outputs when the caller asked for results).
/// Returns 0, or 1 if a file could not be written (each one is reported).
int writeOutputs(const RunRequest &request, ParamList &params,
                 llvm::function_ref<npy::Array(Param &)> contents,
                 Diagnostics &diag);

} // namespace flash::run

#endif // FLASH_LIB_RUN_OUTPUTS_H

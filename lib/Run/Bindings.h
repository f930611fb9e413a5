//===- Bindings.h - --arg / --out matched to kernel parameters --*- C++ -*-===//
#ifndef FLASH_LIB_RUN_BINDINGS_H
#define FLASH_LIB_RUN_BINDINGS_H

#include "Params.h"

#include "flashc/Run/Run.h"

namespace flash::run {

/// Binds every --arg to its parameter (loading .npy files and checking them
/// against the declared type and shape, one value per shape symbol across all
/// tensors) and checks every --out. Reports each problem; false if any.
bool bindArguments(ParamList &params, const RunRequest &request,
                   Diagnostics &diag);

} // namespace flash::run

#endif // FLASH_LIB_RUN_BINDINGS_H

//===- SourceLocation.h - locations as users read them ----------*- C++ -*-===//
#ifndef FLASH_LIB_SUPPORT_SOURCELOCATION_H
#define FLASH_LIB_SUPPORT_SOURCELOCATION_H

#include "mlir/IR/Location.h"

#include <string>

namespace flash {
/// "file:line:col" for file locations (looking through name, fused and
/// call-site locations), the printed location otherwise: one-line messages
/// (formatError in SourceDiagnostics.h).
std::string formatSourceLocation(mlir::Location loc);
} // namespace flash

#endif // FLASH_LIB_SUPPORT_SOURCELOCATION_H

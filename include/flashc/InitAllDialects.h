//===- InitAllDialects.h - every dialect a flashc module holds --*- C++ -*-===//
//
// The one list of the dialects that appear in a flashc module at any level:
// the tile IR (tile, func, arith, math, scf, tensor), the SIMT level (gpu,
// vector, nvvm, llvm, ub) and what the backend lowers through (cf, index).
// Every tool, the front end, the emulator and the tests register these.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_INITALLDIALECTS_H
#define FLASHC_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace flash {
/// Adds every dialect flashc uses to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers and loads every dialect flashc uses in `context`.
void loadAllDialects(mlir::MLIRContext &context);
} // namespace flash

#endif // FLASHC_INITALLDIALECTS_H

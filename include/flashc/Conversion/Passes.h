//===- Passes.h - flashc conversion passes ----------------------*- C++ -*-===//
#ifndef FLASH_LIB_CONVERSION_PASSES_H
#define FLASH_LIB_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace flash {
#define GEN_PASS_DECL
#include "flashc/Conversion/Passes.h.inc"

/// Adds to `converter` the tile -> SIMT type rules (a tile of shape S in
/// layout L becomes vector<L.getNumRegisters(S) x T>) and to `patterns` the
/// patterns that lower the tile ops and rewrite the types of arith/math ops
/// inside a kernel whose tensor parameters have already been expanded (see
/// TileToSIMTPass.cpp: each !tile.global use is an unrealized_conversion_cast of
/// the pointer and dim arguments).
void populateTileToSIMTPatterns(mlir::TypeConverter &converter,
                                mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "flashc/Conversion/Passes.h.inc"
} // namespace flash

#endif // FLASH_LIB_CONVERSION_PASSES_H

//===- Types.h - Element types, shapes and their spellings in messages ----===//

#ifndef FLASH_FRONTEND_SEMA_TYPES_H
#define FLASH_FRONTEND_SEMA_TYPES_H

#include "AST.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace flash::frontend {

/// Tiles are kept small enough to live in registers and shared memory.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;
constexpr unsigned kMaxRank = 8;

inline bool isTile(mlir::Type t) { return mlir::isa<mlir::RankedTensorType>(t); }
/// The element type of a tile; a scalar type itself.
mlir::Type elementType(mlir::Type t);
/// The shape of a tile; empty for a scalar.
llvm::SmallVector<int64_t> shapeOf(mlir::Type t);
inline bool isFloat(mlir::Type t) {
  return mlir::isa<mlir::FloatType>(elementType(t));
}
inline bool isI32(mlir::Type t) { return elementType(t).isInteger(32); }
inline bool isI1(mlir::Type t) { return elementType(t).isInteger(1); }

inline mlir::RankedTensorType tileType(llvm::ArrayRef<int64_t> shape,
                                       mlir::Type element) {
  return mlir::RankedTensorType::get(shape, element);
}

/// The element type as the language spells it: f16, bf16, f32, i32, bool.
std::string eltName(mlir::Type t);
/// "[64, 128]".
std::string shapeStr(llvm::ArrayRef<int64_t> shape);
/// "f32[64, 128]" for a tile, "f32" for a scalar.
std::string typeStr(mlir::Type t);

/// The element type a builtin type name names: f16, bf16, f32, i32, bool
/// (and the aliases float, int, i1); nullopt for any other name.
std::optional<mlir::Type> builtinTypeNamed(llvm::StringRef name,
                                           mlir::Builder &b);
/// The element type a type-name argument (of cast, zeros, full) names, if
/// it is a builtin type name.
std::optional<mlir::Type> parseTypeName(const ast::Expr &e, mlir::Builder &b);
/// Whether `t` is an element type tiles and tensors can have.
bool isElementType(mlir::Type t);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_TYPES_H

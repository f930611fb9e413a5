//===- ConstEval.h - Operators on compile-time values ---------------------===//
//
// Folding of the language's operators when every operand is a compile-time
// constant, with the language's rules: integers are 64-bit and overflow is an
// error, an int meeting a float is a float, bools only compare for equality.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_CONSTEVAL_H
#define FLASH_FRONTEND_SEMA_CONSTEVAL_H

#include "Sema/Context.h"
#include "Sema/Value.h"

#include "AST.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringRef.h"

namespace flash::frontend {

/// `a op b` for constants `a` and `b`; a type (either operand) compares
/// with == and != only.
OptVal foldBinary(FrontendContext &cx, ast::BinaryOp op, const Val &a,
                  const Val &b, llvm::SMLoc opLoc);

/// `-x` or `!x` for a constant `x`.
OptVal foldUnary(FrontendContext &cx, ast::UnaryOp op, const Val &x,
                 llvm::SMLoc opLoc);

/// The value of `-D NAME=TEXT` for a constant parameter of `kind`; nullopt if
/// TEXT is not a literal of that kind (only plain decimal literals, `inf`,
/// `true`, `false` and, for a type constant, a type name).
std::optional<Val> parseDefineValue(ast::ConstParam::Kind kind,
                                    llvm::StringRef text,
                                    mlir::Builder &builder);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_CONSTEVAL_H

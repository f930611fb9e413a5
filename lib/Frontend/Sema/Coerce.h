//===- Coerce.h - Implicit conversions of operands ------------------------===//
//
// Where a compile-time constant meets a runtime value it adopts the runtime
// operand's element type; scalars and size-1 dims broadcast to the operands'
// common shape. Every mismatch is reported here, before an op is built that
// could fail verification.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_COERCE_H
#define FLASH_FRONTEND_SEMA_COERCE_H

#include "Sema/Context.h"
#include "Sema/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace flash::frontend {

/// Reports a shape that is not a valid tile (rank 1 to kMaxRank, positive
/// dims, at most kMaxTileElements elements).
bool checkShape(FrontendContext &cx, llvm::ArrayRef<int64_t> shape,
                llvm::SMLoc loc);

/// Reports a tensor parameter or a tuple where a single value is needed.
bool checkPlain(FrontendContext &cx, const Val &v, llvm::SMLoc loc);

/// Materialises a constant as a scalar of element type `element` (null: its
/// natural type i32, f32 or i1).
std::optional<mlir::Value> constScalar(FrontendContext &cx, const Val &c,
                                       mlir::Type element, llvm::SMLoc loc);

/// An SSA value for `v`: constants get their natural type or the element
/// type of `like`, splatted to `like`'s shape if it is a tile.
std::optional<mlir::Value> materialize(FrontendContext &cx, const Val &v,
                                       llvm::SMLoc loc, mlir::Type like = {});

mlir::Value splat(FrontendContext &cx, mlir::Value scalar,
                  llvm::ArrayRef<int64_t> shape, llvm::SMLoc loc);

/// Broadcasts `v` (scalar or tile) to `shape`, which must be compatible.
mlir::Value broadcastTo(FrontendContext &cx, mlir::Value v,
                        llvm::ArrayRef<int64_t> shape, llvm::SMLoc loc);

/// The broadcast shape of operands of these types (empty: all scalars);
/// `what` names the operation in messages.
std::optional<llvm::SmallVector<int64_t>>
broadcastShape(FrontendContext &cx, llvm::ArrayRef<mlir::Type> types,
               llvm::SMLoc loc, llvm::StringRef what);

/// Coerces the operands of one operation to a common element type and
/// shape: runtime element types must agree, constants adopt theirs.
bool unify(FrontendContext &cx, llvm::ArrayRef<Val> vals,
           llvm::ArrayRef<llvm::SMLoc> locs, llvm::SMLoc opLoc,
           llvm::StringRef what, llvm::SmallVectorImpl<mlir::Value> &out);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_COERCE_H

//===- IRGen.h - Lowering of a kernel body to tile IR ---------------------===//
//
// One walk over the kernel body: expressions are evaluated to compile-time
// values where they fold and to IR where they do not; statements build the
// IR at the builder's insertion point. `if` and `static_assert` are resolved
// here and leave no trace in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_IRGEN_IRGEN_H
#define FLASH_FRONTEND_IRGEN_IRGEN_H

#include "Sema/Context.h"
#include "Sema/Scope.h"
#include "Sema/Value.h"

#include "AST.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <vector>

namespace flash::frontend {

struct Builtin;

/// A kernel parameter and its IR type (a scalar or a !tile.global).
struct ParamInfo {
  const ast::Param *ast = nullptr;
  mlir::Type type;
};

/// What warps() and mma_layout() ask of the launch.
struct LaunchConfig {
  int64_t numWarps = 4;
  /// The mma_layout() statement, null if there is none.
  const ast::Stmt *mmaLayoutStmt = nullptr;
  int64_t mmaWarps[3] = {1, 1, 1}, mmaValues[3] = {1, 1, 1};
};

class IRGen {
public:
  explicit IRGen(FrontendContext &cx) : cx(cx), scopes(cx) {}

  FrontendContext &cx;
  ScopeStack scopes;
  std::vector<ParamInfo> params;
  /// Generating the grid function, where only a few builtins may be called.
  bool inGrid = false;
  LaunchConfig launch;

  // Expressions (Expr.cpp).
  OptVal eval(const ast::Expr &e);
  /// eval, and reports a tensor parameter or tuple.
  OptVal evalPlain(const ast::Expr &e);
  std::optional<int64_t> evalConstInt(const ast::Expr &e,
                                      const llvm::Twine &what);
  std::optional<bool> evalConstBool(const ast::Expr &e,
                                    const llvm::Twine &what);
  /// An integer scalar (a constant becomes i32) for offsets, bounds and dims.
  std::optional<mlir::Value> evalIndex(const ast::Expr &e,
                                       const llvm::Twine &what);

  // Statements (Stmt.cpp).
  bool emitBlock(const ast::Block &block);

private:
  OptVal evalName(const ast::Expr &e);
  OptVal evalUnary(const ast::Expr &e);
  OptVal evalBinary(const ast::Expr &e);
  OptVal evalSubscript(const ast::Expr &e);
  OptVal evalCall(const ast::Expr &e);
  /// The builtin `call` calls, after the registry's checks of the call.
  const Builtin *resolveBuiltin(const ast::Expr &call);

  bool emitStmt(const ast::Stmt &s);
  bool emitLet(const ast::Stmt &s);
  bool emitAssign(const ast::Stmt &s);
  bool emitFor(const ast::Stmt &s);
  bool emitLoopBody(const ast::Stmt &s, mlir::scf::ForOp forOp,
                    llvm::ArrayRef<Binding *> carried);
  bool emitIf(const ast::Stmt &s);
  bool emitStaticAssert(const ast::Stmt &s);
  bool emitWarps(const ast::Stmt &s);
  bool emitMmaLayout(const ast::Stmt &s);
  bool emitExprStmt(const ast::Stmt &s);
  bool assignTo(const std::string &name, llvm::SMLoc loc, Val value,
                llvm::SMLoc valueLoc);
};

} // namespace flash::frontend

#endif // FLASH_FRONTEND_IRGEN_IRGEN_H

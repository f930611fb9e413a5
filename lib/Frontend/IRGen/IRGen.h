//===- IRGen.h - Lowering of a kernel body to tile IR ---------------------===//
//
// One walk over the kernel body: expressions are evaluated to compile-time
// values where they fold and to IR where they do not; statements build the
// IR at the builder's insertion point. `if` and `static_assert` are resolved
// here and leave no trace in the IR, and calls of user functions are inlined
// (their bodies walked in place, with the arguments bound to the parameters).
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

/// The user function whose body is being inlined.
struct FunctionFrame {
  const ast::FunctionDecl *fn = nullptr;
  /// Set by `return`: the rest of the body is skipped.
  bool returned = false;
  /// The returned values: a tuple (empty: the function returns nothing).
  Val result;
};

/// Limits on inlining, so that no program expands without bound and the
/// recursive walk stays within the stack: the parser bounds the nesting of
/// one body, kMaxNesting the nesting through calls.
constexpr unsigned kMaxCallDepth = 32;
constexpr unsigned kMaxInlinedCalls = 1024;
constexpr unsigned kMaxNesting = 1024;

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
  /// The innermost function being inlined; null in the kernel body.
  FunctionFrame *frame = nullptr;
  unsigned inlinedCalls = 0;
  /// Expressions and blocks being walked, through calls.
  unsigned nesting = 0;

  // Expressions (Expr.cpp).
  OptVal eval(const ast::Expr &e);
  /// eval, and reports a tensor parameter or tuple.
  OptVal evalPlain(const ast::Expr &e);
  std::optional<int64_t> evalConstInt(const ast::Expr &e,
                                      const llvm::Twine &what);
  std::optional<bool> evalConstBool(const ast::Expr &e,
                                    const llvm::Twine &what);
  /// An element type: a type name, a type constant or dtype(x); `what`
  /// begins the error otherwise ("cast() expects a type as its second
  /// argument").
  std::optional<mlir::Type> evalType(const ast::Expr &e,
                                     const llvm::Twine &what);
  /// An integer scalar (a constant becomes i32) for offsets, bounds and dims.
  std::optional<mlir::Value> evalIndex(const ast::Expr &e,
                                       const llvm::Twine &what);

  // Statements (Stmt.cpp).
  bool emitBlock(const ast::Block &block);

private:
  /// Counts one level of `nesting` for its lifetime; `ok` is false (after
  /// an error at `loc`) past kMaxNesting.
  struct NestingGuard {
    IRGen &gen;
    bool ok;
    NestingGuard(IRGen &gen, llvm::SMLoc loc);
    ~NestingGuard() { --gen.nesting; }
  };

  OptVal evalExpr(const ast::Expr &e);
  OptVal evalName(const ast::Expr &e);
  OptVal evalUnary(const ast::Expr &e);
  OptVal evalBinary(const ast::Expr &e);
  OptVal evalSubscript(const ast::Expr &e);
  OptVal evalCall(const ast::Expr &e);

  // User functions (Call.cpp).
  /// Inlines `fn` at `call`; `via` is the function parameter the call goes
  /// through (null for a call by the function's own name), whose type
  /// checks the arguments and results.
  OptVal inlineCall(const ast::Expr &call, const ast::FunctionDecl &fn,
                    const ast::FnParam *via = nullptr);
  OptVal inlineBody(const ast::Expr &call, const ast::FunctionDecl &fn,
                    llvm::ArrayRef<const ast::Expr *> args,
                    llvm::ArrayRef<Val> values);
  /// The checks of a call through a parameter of type fn(...) -> ...:
  /// positional arguments only, as many as it lists.
  bool checkSignatureCall(const ast::Expr &call, const ast::FnParam &via);
  /// The argument expression of each parameter of `fn` (null: its default);
  /// reports arity and keyword errors.
  bool matchArguments(const ast::Expr &call, const ast::FunctionDecl &fn,
                      std::vector<const ast::Expr *> &args);
  bool bindParameters(const ast::Expr &call, const ast::FunctionDecl &fn,
                      llvm::ArrayRef<const ast::Expr *> args,
                      llvm::ArrayRef<Val> values);
  bool checkArgument(const Val &v, llvm::SMLoc loc);
  std::nullopt_t reportUnknownFunction(const ast::Expr &call);
  bool emitReturn(const ast::Stmt &s);
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
  bool emitDeviceAssert(const ast::Stmt &s);
  bool emitWarps(const ast::Stmt &s);
  bool emitMmaLayout(const ast::Stmt &s);
  bool emitExprStmt(const ast::Stmt &s);
  bool assignTo(const std::string &name, llvm::SMLoc loc, Val value,
                llvm::SMLoc valueLoc);
};

} // namespace flash::frontend

#endif // FLASH_FRONTEND_IRGEN_IRGEN_H

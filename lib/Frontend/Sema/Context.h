//===- Context.h - What the front end shares while it lowers a kernel -----===//
//
// The program's AST, the builder every layer inserts into, and the error
// reporting policy of the whole front end: only the first error is printed,
// since the later ones are usually its consequences. While a function call is
// inlined, errors are followed by a note at each call that led there, and IR
// locations are call-site locations (callee position, caller position).
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_CONTEXT_H
#define FLASH_FRONTEND_SEMA_CONTEXT_H

#include "AST.h"
#include "flashc/Frontend/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"

#include <optional>
#include <vector>

namespace flash::frontend {

class FrontendContext {
public:
  FrontendContext(const ast::Program &program, mlir::MLIRContext &context,
                  DiagnosticPrinter &diags);

  /// Reports `message` unless an error was reported before, followed by an
  /// "in call to" note per inlined call. Returns nullopt so that a failing
  /// `std::optional` function can `return error(...)`.
  std::nullopt_t error(llvm::SMLoc loc, const llvm::Twine &message);
  std::nullopt_t error(const llvm::Twine &message) {
    return error(llvm::SMLoc(), message);
  }
  /// Attaches a note to the error just reported.
  void note(llvm::SMLoc loc, const llvm::Twine &message);
  bool failed() const { return hasFailed; }

  /// The MLIR location of a source position (unknown if `loc` is invalid),
  /// inside the calls being inlined.
  mlir::Location loc(llvm::SMLoc loc);

  /// Inside the inlined body of `fn`, called at `callLoc`, for its
  /// lifetime.
  class CallScope {
  public:
    CallScope(FrontendContext &cx, const ast::FunctionDecl &fn,
              llvm::SMLoc callLoc)
        : cx(cx) {
      cx.pushCall(fn, callLoc);
    }
    ~CallScope() { cx.popCall(); }

  private:
    FrontendContext &cx;
  };
  /// The functions being inlined, outermost first.
  llvm::ArrayRef<const ast::FunctionDecl *> callStack() const {
    return callees;
  }

  const ast::Program &program;
  const ast::KernelDecl &kernel;
  mlir::MLIRContext &context;
  mlir::OpBuilder builder;

private:
  struct Call {
    const ast::FunctionDecl *fn;
    llvm::SMLoc loc;
    mlir::Location irLoc; // the call's location, in its own callers
  };
  mlir::Location fileLoc(llvm::SMLoc loc);
  void pushCall(const ast::FunctionDecl &fn, llvm::SMLoc callLoc);
  void popCall() {
    calls.pop_back();
    callees.pop_back();
  }

  DiagnosticPrinter &diags;
  std::vector<Call> calls;
  std::vector<const ast::FunctionDecl *> callees;
  bool hasFailed = false;
};

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_CONTEXT_H

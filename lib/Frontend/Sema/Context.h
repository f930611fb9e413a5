//===- Context.h - What the front end shares while it lowers a kernel -----===//
//
// The kernel's AST, the builder every layer inserts into, and the error
// reporting policy of the whole front end: only the first error is printed,
// since the later ones are usually its consequences.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_CONTEXT_H
#define FLASH_FRONTEND_SEMA_CONTEXT_H

#include "AST.h"
#include "flashc/Frontend/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"

#include <optional>

namespace flash::frontend {

class FrontendContext {
public:
  FrontendContext(const ast::KernelDecl &kernel, mlir::MLIRContext &context,
                  DiagnosticPrinter &diags);

  /// Reports `message` unless an error was reported before. Returns nullopt
  /// so that a failing `std::optional` function can `return error(...)`.
  std::nullopt_t error(llvm::SMLoc loc, const llvm::Twine &message);
  std::nullopt_t error(const llvm::Twine &message) {
    return error(llvm::SMLoc(), message);
  }
  /// Attaches a note to the error just reported.
  void note(llvm::SMLoc loc, const llvm::Twine &message);
  bool failed() const { return hasFailed; }

  /// The MLIR location of a source position (unknown if `loc` is invalid).
  mlir::Location loc(llvm::SMLoc loc);

  const ast::KernelDecl &kernel;
  mlir::MLIRContext &context;
  mlir::OpBuilder builder;

private:
  DiagnosticPrinter &diags;
  mlir::StringAttr fileName;
  bool hasFailed = false;
};

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_CONTEXT_H

//===- Scope.h - Names in scope and what they are bound to ----------------===//
//
// A stack of scopes: the kernel's constants, its parameters and shape
// symbols, then one scope per block. Shadowing is not allowed, so a name is
// declared once in the visible stack. An inlined function's body starts a
// frame that hides every scope below it but the kernel's constants: it sees
// its parameters and the constants, and its own names may shadow a
// constant (a library function's parameter `BLOCK_N` need not know the
// kernel's).
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_SCOPE_H
#define FLASH_FRONTEND_SEMA_SCOPE_H

#include "Sema/Context.h"
#include "Sema/Value.h"

#include "mlir/IR/Types.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace flash::frontend {

struct Binding {
  enum Kind { Const, Param, Symbol, Let, Var, LoopVar } kind = Let;
  Val val;
  llvm::SMLoc loc;
  /// Non-null while the variable is an iter_arg of the loop being generated.
  mlir::Type carriedType;
  /// A constant the compiler defines (ARCH), not the source: it has no
  /// location and cannot be redefined.
  bool predefined = false;
};

class ScopeStack {
public:
  explicit ScopeStack(FrontendContext &cx) : cx(cx) {}

  /// Opens a scope for its lifetime.
  class Guard {
  public:
    explicit Guard(ScopeStack &stack) : stack(stack) { stack.push(); }
    ~Guard() { stack.pop(); }

  private:
    ScopeStack &stack;
  };

  /// Opens a frame (hiding the scopes below) and its first scope for its
  /// lifetime.
  class FrameGuard {
  public:
    explicit FrameGuard(ScopeStack &stack)
        : stack(stack), savedBase(stack.frameBase) {
      stack.frameBase = stack.scopes.size();
      stack.push();
    }
    ~FrameGuard() {
      stack.pop();
      stack.frameBase = savedBase;
    }

  private:
    ScopeStack &stack;
    size_t savedBase;
  };

  /// Makes the scopes open now (the kernel's constants) visible from every
  /// frame.
  void shareWithFunctions() { sharedScopes = scopes.size(); }

  /// The innermost visible binding of `name`, or null.
  Binding *lookup(llvm::StringRef name);
  /// The binding of `name` in the current frame's own scopes, or null.
  Binding *lookupLocal(llvm::StringRef name);
  /// A binding of `name` in the scopes the current frame hides, or null.
  Binding *lookupHidden(llvm::StringRef name);
  /// The declared name closest to a misspelled `name`; empty if none is close.
  std::string suggest(llvm::StringRef name) const;
  /// Binds `name` in the innermost scope; reports a redefinition (and returns
  /// false) if it is bound already in the current frame (or, in the kernel
  /// body, anywhere).
  bool declare(llvm::StringRef name, llvm::SMLoc loc, Binding binding);

private:
  struct Scope {
    std::map<std::string, Binding> names;
    std::vector<std::string> order; // declaration order, for suggestions
  };

  void push() { scopes.push_back(std::make_unique<Scope>()); }
  void pop() { scopes.pop_back(); }

  FrontendContext &cx;
  std::vector<std::unique_ptr<Scope>> scopes;
  /// The first scope of the current frame.
  size_t frameBase = 0;
  /// The bottom scopes every frame sees.
  size_t sharedScopes = 0;
};

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_SCOPE_H

//===- Builtins.h - The builtin functions of the tile language ------------===//
//
// One registry row per builtin: its name, how it is called (arguments,
// keywords, whether grid() may use it) and the handler that checks its
// operands and builds its IR. The call checks (unknown names and their
// suggestions, keyword and argument-count messages) and IR generation both
// read the same row, so a builtin cannot be known to one and not the other.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_BUILTINS_BUILTINS_H
#define FLASH_FRONTEND_BUILTINS_BUILTINS_H

#include "Sema/Context.h"
#include "Sema/Value.h"

#include "AST.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace flash::frontend {

class IRGen;
class BuiltinCall;

using BuiltinHandler = std::function<OptVal(BuiltinCall &)>;

enum BuiltinFlags : unsigned {
  NoFlags = 0,
  /// grid() may call it.
  InGrid = 1,
  /// With the `axis` keyword the call reduces one tile, its one positional
  /// argument.
  AxisReduction = 2,
};

struct Builtin {
  llvm::StringRef name;
  unsigned minArgs, maxArgs;
  std::vector<llvm::StringRef> keywords;
  /// How to call it, quoted in messages: "dot(a, b[, acc])".
  std::string signature;
  unsigned flags; // BuiltinFlags
  BuiltinHandler handler;

  bool allowedInGrid() const { return flags & InGrid; }
  bool reducesWithAxis() const { return flags & AxisReduction; }
};

/// The builtin called `name`, or null.
const Builtin *lookupBuiltin(llvm::StringRef name);
/// The names of all builtins, in registry order (for suggestions).
std::vector<llvm::StringRef> builtinNames();

/// Checks a call against the registry: an unknown callee (with a "did you
/// mean"), a builtin grid() may not use, unknown keywords, the number of
/// arguments. Returns the builtin, or null after reporting the error.
const Builtin *resolveCall(FrontendContext &cx, const ast::Expr &call,
                           bool inGrid, bool calleeIsVariable);

/// One call of a builtin, as its handler sees it.
class BuiltinCall {
public:
  BuiltinCall(IRGen &gen, const ast::Expr &expr, const Builtin &builtin);

  IRGen &gen;
  FrontendContext &cx;
  const ast::Expr &expr;
  const Builtin &builtin;

  llvm::StringRef name() const { return expr.name; }
  unsigned numArgs() const { return expr.args.size(); }
  const ast::Expr &arg(unsigned i) const { return *expr.args[i]; }
  llvm::SMLoc argLoc(unsigned i) const { return expr.args[i]->loc; }
  /// Errors about the call as a whole point at the builtin's name.
  llvm::SMLoc loc() const { return expr.nameLoc; }
  mlir::Location irLoc() { return cx.loc(expr.nameLoc); }
  mlir::OpBuilder &builder() { return cx.builder; }
  /// The keyword argument `name`, or null.
  const ast::KeywordArg *keyword(llvm::StringRef name) const;

  /// Argument `i` as a runtime tile (of `rank`, if not 0); otherwise reports
  /// "'NAME' expects WHAT, got ...".
  std::optional<mlir::Value> tileArg(unsigned i, const llvm::Twine &what,
                                     unsigned rank = 0);
};

/// The statement `store(WINDOW, value[, mask = M]);`, after resolveCall
/// accepted it.
bool emitStore(IRGen &gen, const ast::Expr &call);
/// The statement `atomic_add(WINDOW, value[, mask = M]);`, likewise.
bool emitAtomicAdd(IRGen &gen, const ast::Expr &call);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_BUILTINS_BUILTINS_H

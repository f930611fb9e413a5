//===- Value.h - The value of a tile-language expression ------------------===//
//
// Compile-time values (literals, constant parameters, folded expressions)
// stay C++ values and only become `arith.constant`s when they meet a runtime
// value; that is how `if` and `static_assert` are resolved without IR.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_VALUE_H
#define FLASH_FRONTEND_SEMA_VALUE_H

#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flash::ast {
struct FunctionDecl;
struct FnParam;
} // namespace flash::ast

namespace flash::frontend {

/// A compile-time constant, an SSA value, a tensor parameter (only usable as
/// the base of a window), a tuple (the results of online_softmax or of a
/// function; empty: a function that returns nothing) or an element type (a
/// type constant, a type name, dtype(x)), which is a compile-time value too
/// but no number: it names the type of parameters, casts and tiles. A
/// function (a user function named where a value is expected) can only be
/// passed to a parameter and called through it: functions are inlined, so
/// it is resolved at compile time too.
struct Val {
  enum Kind { Int, Float, Bool, Runtime, Global, Tuple, Type, Function } kind =
      Int;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  mlir::Value v;
  mlir::Type type; // Type
  unsigned param = 0; // Global: index of the kernel parameter
  std::vector<Val> elems;
  /// Function: the function, and the parameter it is bound to (null until
  /// it is passed), whose type its calls are checked against.
  const ast::FunctionDecl *fn = nullptr;
  const ast::FnParam *boundTo = nullptr;

  static Val ofInt(int64_t x) {
    Val r;
    r.kind = Int;
    r.i = x;
    return r;
  }
  static Val ofFloat(double x) {
    Val r;
    r.kind = Float;
    r.f = x;
    return r;
  }
  static Val ofBool(bool x) {
    Val r;
    r.kind = Bool;
    r.b = x;
    return r;
  }
  static Val ofType(mlir::Type t) {
    Val r;
    r.kind = Type;
    r.type = t;
    return r;
  }
  static Val ofFunction(const ast::FunctionDecl *f) {
    Val r;
    r.kind = Function;
    r.fn = f;
    return r;
  }
  static Val ofValue(mlir::Value x) {
    Val r;
    r.kind = Runtime;
    r.v = x;
    return r;
  }
  /// A compile-time number or bool (a type is compile-time but no number).
  bool isConst() const { return kind == Int || kind == Float || kind == Bool; }
  double asDouble() const { return kind == Int ? (double)i : f; }
  /// A runtime scalar (not a tile).
  bool isRuntimeScalar() const;
};
using OptVal = std::optional<Val>;

/// "an integer constant", "a tile of type f32[64, 64]", ... for messages.
std::string describe(const Val &v);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_VALUE_H

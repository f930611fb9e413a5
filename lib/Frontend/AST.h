//===- AST.h - Abstract syntax tree of the tile language ------------------===//
//
// The parser produces one SourceFile per file: its imports, functions and at
// most one kernel; the loader (Import.h) gathers the files of a program.
// Every node records the source location of its first token so that
// diagnostics can point at it.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_AST_H
#define FLASH_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace flash {
namespace ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  IntLit,    // 42
  FloatLit,  // 1.5, 1e-3
  BoolLit,   // true / false
  InfLit,    // inf
  NoneLit,   // None (only inside subscripts)
  Name,      // identifier
  Unary,     // -x, !x
  Binary,    // a + b, ...
  Call,      // f(a, b, k = v)
  Subscript, // x[...]
  List,      // [a, b] (shape argument of zeros/full)
};

enum class UnaryOp { Neg, Not };
enum class BinaryOp {
  Mul, Div, Rem, Add, Sub, Lt, Le, Gt, Ge, Eq, Ne, And, Or
};

const char *spelling(BinaryOp op);

/// One entry of a subscript: an expression, `lo : hi`, `:`, or `None`.
struct SubscriptEntry {
  enum Kind { Index, Slice, Full, NewAxis } kind = Index;
  llvm::SMLoc loc;
  ExprPtr index; // Index
  ExprPtr lo, hi; // Slice (both set)
};

struct KeywordArg {
  std::string name;
  llvm::SMLoc loc;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  llvm::SMLoc loc;
  unsigned depth = 1; // height of the tree rooted here

  // Literals.
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  // Name / Call callee.
  std::string name;
  llvm::SMLoc nameLoc;
  // Unary / Binary.
  UnaryOp unaryOp = UnaryOp::Neg;
  BinaryOp binaryOp = BinaryOp::Add;
  llvm::SMLoc opLoc;
  ExprPtr lhs, rhs; // Unary uses lhs.
  // Call / List.
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
  // Subscript: lhs is the base.
  std::vector<SubscriptEntry> entries;

  Expr(ExprKind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

/// Structural equality (used to recognise `lo : lo + SIZE`).
bool structurallyEqual(const Expr &a, const Expr &b);

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

enum class StmtKind {
  Let,          // let/var NAME[, NAME...] = expr;
  Assign,       // NAME[, NAME...] = expr;
  For,          // for NAME in range(lo, hi[, step][, stages = N]
                //                   [, split_copies = B]) { ... }
  If,           // if cond { ... } else { ... }
  StaticAssert, // static_assert(cond, "msg");
  DeviceAssert, // device_assert(cond, "msg");  (checked at run time)
  Grid,         // grid(e0[, e1[, e2]]);
  Warps,        // warps(N);
  MmaLayout,    // mma_layout([wM, wN, wK], [vM, vN, vK]);
  ExprStmt,     // store(...); or a call of a function that returns nothing
  Return,       // return [expr {, expr}];  (functions only)
};

struct Block {
  llvm::SMLoc lbraceLoc;
  std::vector<StmtPtr> stmts;
};

struct Stmt {
  StmtKind kind;
  llvm::SMLoc loc;

  // Let / Assign.
  bool isMutable = false;
  std::vector<std::string> names;
  std::vector<llvm::SMLoc> nameLocs;
  ExprPtr value;

  // For.
  std::string loopVar;
  llvm::SMLoc loopVarLoc;
  ExprPtr lo, hi, step; // step may be null
  ExprPtr stages;       // may be null
  ExprPtr splitCopies;  // may be null

  // If: cond, thenBlock, and either elseBlock or elseIf (an If stmt).
  ExprPtr cond;
  Block body;     // For body / If then-block
  Block elseBody; // If else-block (an `else if` is a one-statement block)
  bool hasElse = false;

  // StaticAssert / DeviceAssert.
  std::string message;
  bool hasMessage = false;
  llvm::SMLoc messageLoc;

  // Grid / Warps / Return: args (Return: the returned values, maybe none).
  std::vector<ExprPtr> args;

  Stmt(StmtKind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

struct ConstParam {
  std::string name;
  llvm::SMLoc loc;
  enum Kind { Int, Float, Bool, Type } kind = Int;
  ExprPtr defaultValue;
};

struct Param {
  std::string name;
  llvm::SMLoc loc;
  bool isTensor = false;
  /// f16, bf16, f32, i32, bool (aliases normalised), or the name of a type
  /// constant, resolved with the constants.
  std::string elementType;
  llvm::SMLoc typeLoc;
  struct Dim {
    std::string name; // symbol or const name; empty for a literal
    int64_t literal = 0;
    llvm::SMLoc loc;
  };
  std::vector<Dim> dims;
};

struct KernelDecl {
  std::string name;
  llvm::SMLoc loc;
  std::vector<ConstParam> consts;
  std::vector<Param> params;
  Block body;
};

/// What a function parameter or result accepts (docs/language.md, "User
/// functions"). A missing annotation accepts any value.
struct TypeAnnot {
  enum Kind {
    Any,    // no annotation
    Scalar, // int | float | bool: compile-time or runtime
    Const,  // const int | const float | const bool
    Tile,   // tile: any tile
    Shaped, // ELT[d, ...]: a tile of that element type and rank
    Tensor, // tensor: a tensor parameter of the kernel
    Type,   // type: an element type (f16, a type constant, dtype(x))
    Function, // fn or fn(T, ...) [-> R]: a user function, passed by name
  } kind = Any;
  llvm::SMLoc loc;
  /// Scalar / Const: "int", "float" or "bool"; Shaped: f16, bf16, f32, i32
  /// or bool.
  std::string element;
  /// Shaped: each dim is a name (bound to the size, or checked against it)
  /// or a literal (name empty).
  std::vector<Param::Dim> dims;
  /// Function: whether a signature follows `fn`; then the types of the
  /// arguments its calls pass and of the results they take (none: any).
  bool hasSignature = false;
  std::vector<TypeAnnot> fnParams;
  std::vector<TypeAnnot> fnResults;
};

struct FnParam {
  std::string name;
  llvm::SMLoc loc;
  TypeAnnot type;
  ExprPtr defaultValue; // may be null
};

/// `fn NAME(params) [-> results] { ... }`, inlined at every call.
struct FunctionDecl {
  std::string name;
  llvm::SMLoc loc; // the name
  std::vector<FnParam> params;
  /// `-> T` or `-> (T, U)`; empty without an annotation.
  std::vector<TypeAnnot> results;
  Block body;
};

/// `import "path.tile";`
struct ImportDecl {
  std::string path;
  llvm::SMLoc loc; // the string
};

/// One parsed file.
struct SourceFile {
  unsigned bufferId = 0; // in the SourceMgr
  std::vector<ImportDecl> imports;
  std::vector<std::unique_ptr<FunctionDecl>> functions;
  std::unique_ptr<KernelDecl> kernel; // null in a library
};

/// A kernel's file and every file it imports, directly or not.
struct Program {
  std::vector<std::unique_ptr<SourceFile>> files; // the main file first
  const KernelDecl *kernel = nullptr;
  /// Every function of every file: one namespace for the whole program.
  std::map<std::string, const FunctionDecl *, std::less<>> functions;

  /// The function called `name`, or null.
  const FunctionDecl *lookupFunction(llvm::StringRef name) const {
    auto it = functions.find(name);
    return it == functions.end() ? nullptr : it->second;
  }
};

} // namespace ast
} // namespace flash

#endif // FLASH_FRONTEND_AST_H

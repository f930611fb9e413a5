//===- IRGen.cpp - tile language AST -> tile IR ---------------------------===//
//
// Semantic analysis and IR generation in one walk over the AST. Compile-time
// values (literals, constant parameters, folded expressions) are kept as
// C++ values and only become `arith.constant`s when they meet a runtime
// value; `if` statements and `static_assert`s are resolved here and leave no
// trace in the IR. Every user error is reported before an op is built that
// could fail verification.
//
//===----------------------------------------------------------------------===//

#include "flashc/Frontend/IRGen.h"
#include "Parser.h"
#include "flashc/InitAllDialects.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

using namespace flash;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

namespace {

constexpr int64_t kMaxTileElements = int64_t(1) << 20;
constexpr unsigned kMaxRank = 8;

/// A value during IR generation: a compile-time constant, an SSA value, a
/// tensor parameter (only usable as the base of a window) or a tuple (the
/// results of online_softmax).
struct Val {
  enum Kind { Int, Float, Bool, Runtime, Global, Tuple } kind = Int;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  mlir::Value v;
  unsigned param = 0;
  std::vector<Val> elems;

  static Val ofInt(int64_t x) { Val r; r.kind = Int; r.i = x; return r; }
  static Val ofFloat(double x) { Val r; r.kind = Float; r.f = x; return r; }
  static Val ofBool(bool x) { Val r; r.kind = Bool; r.b = x; return r; }
  static Val ofValue(mlir::Value x) { Val r; r.kind = Runtime; r.v = x; return r; }
  bool isConst() const { return kind == Int || kind == Float || kind == Bool; }
  double asDouble() const { return kind == Int ? (double)i : f; }
};
using OptVal = std::optional<Val>;

struct Binding {
  enum Kind { Const, Param, Symbol, Let, Var, LoopVar } kind = Let;
  Val val;
  SMLoc loc;
  /// Non-null while the variable is an iter_arg of the loop being generated.
  mlir::Type carriedType;
};

struct Scope {
  std::map<std::string, Binding> names;
  std::vector<std::string> order;
};

struct ParamInfo {
  const Param *ast = nullptr;
  mlir::Type type;
};

class IRGen {
public:
  IRGen(const KernelDecl &k, llvm::ArrayRef<Define> defines,
        mlir::MLIRContext &ctx, DiagnosticPrinter &diags)
      : kernel(k), defines(defines), ctx(ctx), diags(diags), builder(&ctx) {}

  mlir::OwningOpRef<mlir::ModuleOp> run();

private:
  const KernelDecl &kernel;
  llvm::ArrayRef<Define> defines;
  mlir::MLIRContext &ctx;
  DiagnosticPrinter &diags;
  mlir::OpBuilder builder;
  bool failed = false;
  bool inGrid = false;
  std::vector<std::unique_ptr<Scope>> scopes;
  std::vector<ParamInfo> params;
  // symbol name -> (param index, dim index)
  std::vector<std::pair<std::string, std::pair<unsigned, unsigned>>> symbols;
  std::vector<std::pair<std::string, Val>> constValues;
  mlir::StringAttr fileName;

  //===--------------------------------------------------------------------===//
  // Diagnostics and helpers
  //===--------------------------------------------------------------------===//

  std::nullopt_t error(SMLoc loc, const Twine &msg) {
    if (!failed)
      diags.error(loc, msg);
    failed = true;
    return std::nullopt;
  }
  std::nullopt_t error(const Twine &msg) { return error(SMLoc(), msg); }
  void note(SMLoc loc, const Twine &msg) { diags.note(loc, msg); }

  mlir::Location loc(SMLoc l) {
    if (!l.isValid())
      return mlir::UnknownLoc::get(&ctx);
    auto lc = diags.getSourceMgr().getLineAndColumn(l);
    return mlir::FileLineColLoc::get(fileName, lc.first, lc.second);
  }

  mlir::Type i1() { return builder.getI1Type(); }
  mlir::Type i32() { return builder.getI32Type(); }
  mlir::Type f32() { return builder.getF32Type(); }

  static bool isTile(mlir::Type t) { return mlir::isa<mlir::RankedTensorType>(t); }
  static mlir::Type elt(mlir::Type t) {
    if (auto rt = mlir::dyn_cast<mlir::RankedTensorType>(t))
      return rt.getElementType();
    return t;
  }
  static llvm::SmallVector<int64_t> shapeOf(mlir::Type t) {
    if (auto rt = mlir::dyn_cast<mlir::RankedTensorType>(t))
      return llvm::SmallVector<int64_t>(rt.getShape());
    return {};
  }
  static bool isFloat(mlir::Type t) { return mlir::isa<mlir::FloatType>(elt(t)); }
  static bool isI32(mlir::Type t) { return elt(t).isInteger(32); }
  static bool isI1(mlir::Type t) { return elt(t).isInteger(1); }

  static std::string eltName(mlir::Type t) {
    t = elt(t);
    if (t.isF16()) return "f16";
    if (t.isBF16()) return "bf16";
    if (t.isF32()) return "f32";
    if (t.isInteger(32)) return "i32";
    if (t.isInteger(1)) return "bool";
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    return s;
  }
  static std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i)
        s += ", ";
      s += std::to_string(shape[i]);
    }
    return s + "]";
  }
  static std::string typeStr(mlir::Type t) {
    if (isTile(t))
      return eltName(t) + shapeStr(shapeOf(t));
    return eltName(t);
  }
  static std::string describe(const Val &v) {
    switch (v.kind) {
    case Val::Int: return "an integer constant";
    case Val::Float: return "a float constant";
    case Val::Bool: return "a bool constant";
    case Val::Runtime:
      return (isTile(v.v.getType()) ? "a tile of type " : "a scalar of type ") +
             typeStr(v.v.getType());
    case Val::Global: return "a tensor parameter";
    case Val::Tuple: return "a tuple of " + std::to_string(v.elems.size()) +
                            " values";
    }
    return "a value";
  }

  bool checkShape(llvm::ArrayRef<int64_t> shape, SMLoc l) {
    if (shape.empty()) {
      error(l, "a tile needs at least one dim");
      return false;
    }
    if (shape.size() > kMaxRank) {
      error(l, "tile rank " + Twine(shape.size()) + " exceeds the limit of " +
                   Twine(kMaxRank));
      return false;
    }
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d <= 0) {
        error(l, "tile dims must be positive, got shape " + shapeStr(shape));
        return false;
      }
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxTileElements) {
        error(l, "tile of shape " + shapeStr(shape) +
                     " is too large (the limit is 2^20 = 1048576 elements)");
        return false;
      }
    }
    return true;
  }

  mlir::RankedTensorType tileType(llvm::ArrayRef<int64_t> shape, mlir::Type e) {
    return mlir::RankedTensorType::get(shape, e);
  }

  //===--------------------------------------------------------------------===//
  // Scopes
  //===--------------------------------------------------------------------===//

  Binding *lookup(llvm::StringRef name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto f = (*it)->names.find(name.str());
      if (f != (*it)->names.end())
        return &f->second;
    }
    return nullptr;
  }

  std::string suggest(llvm::StringRef name) {
    std::string best;
    unsigned bestDist = ~0u;
    auto consider = [&](llvm::StringRef cand) {
      if (cand == name)
        return;
      unsigned maxDist =
          name.size() <= 3 ? 1 : std::max<unsigned>(2, name.size() / 3);
      unsigned d = name.edit_distance(cand, true, maxDist + 1);
      if (d <= maxDist && d < bestDist) {
        bestDist = d;
        best = cand.str();
      }
    };
    for (auto &s : scopes)
      for (auto &n : s->order)
        consider(n);
    return best;
  }

  bool declare(llvm::StringRef name, SMLoc l, Binding b) {
    if (Binding *prev = lookup(name)) {
      error(l, "redefinition of '" + name + "'");
      note(prev->loc, "previous definition here");
      return false;
    }
    b.loc = l;
    scopes.back()->names[name.str()] = std::move(b);
    scopes.back()->order.push_back(name.str());
    return true;
  }

  struct ScopeGuard {
    IRGen &g;
    ScopeGuard(IRGen &g) : g(g) { g.scopes.push_back(std::make_unique<Scope>()); }
    ~ScopeGuard() { g.scopes.pop_back(); }
  };

  //===--------------------------------------------------------------------===//
  // Constants and coercions
  //===--------------------------------------------------------------------===//

  /// Materialise a compile-time constant as a scalar of element type `e`
  /// (null: its natural type i32/f32/i1).
  std::optional<mlir::Value> constScalar(const Val &c, mlir::Type e, SMLoc l) {
    mlir::Location ml = loc(l);
    if (!e) {
      e = c.kind == Val::Int ? i32() : c.kind == Val::Float ? f32() : i1();
    }
    e = elt(e);
    if (c.kind == Val::Bool) {
      if (!e.isInteger(1))
        return error(l, "cannot use a bool constant where a value of type " +
                            eltName(e) + " is expected");
      return mlir::arith::ConstantOp::create(builder, ml,
                                             builder.getBoolAttr(c.b))
          .getResult();
    }
    if (mlir::isa<mlir::FloatType>(e)) {
      return mlir::arith::ConstantOp::create(
                 builder, ml, builder.getFloatAttr(e, c.asDouble()))
          .getResult();
    }
    if (e.isInteger(32)) {
      if (c.kind == Val::Float)
        return error(l, "cannot use the float constant " +
                            Twine(llvm::formatv("{0}", c.f).str()) +
                            " where an i32 value is expected; use cast(x, "
                            "f32) on the other operand, or an integer");
      if (c.i < INT32_MIN || c.i > INT32_MAX)
        return error(l, "integer constant " + Twine(c.i) +
                            " does not fit in i32");
      return mlir::arith::ConstantOp::create(
                 builder, ml, builder.getIntegerAttr(i32(), c.i))
          .getResult();
    }
    if (e.isInteger(1))
      return error(l, "cannot use " + describe(c) +
                          " where a bool value is expected");
    return error(l, "cannot materialise a constant of type " + eltName(e));
  }

  /// Turn a value into an SSA value (constants get their natural type or
  /// the element type of `like`, splatted to `like`'s shape if it is a tile).
  std::optional<mlir::Value> materialize(const Val &v, SMLoc l,
                                         mlir::Type like = {}) {
    if (v.kind == Val::Runtime)
      return v.v;
    if (!checkPlain(v, l))
      return std::nullopt;
    auto s = constScalar(v, like ? elt(like) : mlir::Type(), l);
    if (!s)
      return std::nullopt;
    if (like && isTile(like))
      return splat(*s, shapeOf(like), l);
    return s;
  }

  bool checkPlain(const Val &v, SMLoc l) {
    if (v.kind == Val::Global) {
      std::string name = kernel.params[v.param].name;
      error(l, "'" + name + "' is a tensor parameter; read a window of it "
                            "with load(" + name + "[...])");
      return false;
    }
    if (v.kind == Val::Tuple) {
      error(l, "expected a single value, got " + describe(v) +
                   " (bind them with 'a, b, c = ...')");
      return false;
    }
    return true;
  }

  mlir::Value splat(mlir::Value s, llvm::ArrayRef<int64_t> shape, SMLoc l) {
    return flash::tile::SplatOp::create(builder, loc(l),
                                       tileType(shape, s.getType()), s)
        .getResult();
  }

  /// Broadcast `v` (scalar or tile) to `shape` (assumed compatible).
  mlir::Value broadcastTo(mlir::Value v, llvm::ArrayRef<int64_t> shape,
                          SMLoc l) {
    if (shape.empty())
      return v;
    if (!isTile(v.getType()))
      return splat(v, shape, l);
    if (llvm::ArrayRef<int64_t>(shapeOf(v.getType())) == shape)
      return v;
    return flash::tile::BroadcastOp::create(
               builder, loc(l), tileType(shape, elt(v.getType())), v)
        .getResult();
  }

  /// The broadcast shape of a set of operand types (empty: all scalars).
  std::optional<llvm::SmallVector<int64_t>>
  broadcastShape(llvm::ArrayRef<mlir::Type> types, SMLoc l,
                 llvm::StringRef what) {
    llvm::SmallVector<int64_t> out;
    bool have = false;
    for (mlir::Type t : types) {
      if (!isTile(t))
        continue;
      auto s = shapeOf(t);
      if (!have) {
        out = s;
        have = true;
        continue;
      }
      if (s.size() != out.size())
        return error(l, "shape mismatch in " + what + ": " + shapeStr(out) +
                            " vs " + shapeStr(s) +
                            " (tiles must have the same rank; use x[:, None] "
                            "or x[None, :] to add a dim)");
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == out[i] || s[i] == 1)
          continue;
        if (out[i] == 1) {
          out[i] = s[i];
          continue;
        }
        return error(l, "shape mismatch in " + what + ": " + shapeStr(out) +
                            " vs " + shapeStr(s) + " (dim " + Twine(i) +
                            ": " + Twine(out[i]) + " vs " + Twine(s[i]) + ")");
      }
    }
    if (have && !checkShape(out, l))
      return std::nullopt;
    return out;
  }

  /// Coerce operands (constants adopt the runtime operands' element type),
  /// check that runtime element types agree and broadcast to a common shape.
  bool unify(llvm::MutableArrayRef<Val> vals, llvm::ArrayRef<SMLoc> locs,
             SMLoc opLoc, llvm::StringRef what,
             llvm::SmallVectorImpl<mlir::Value> &out) {
    mlir::Type common;
    size_t commonIdx = 0;
    for (size_t i = 0; i < vals.size(); ++i) {
      if (!checkPlain(vals[i], locs[i]))
        return false;
      if (vals[i].kind != Val::Runtime)
        continue;
      mlir::Type e = elt(vals[i].v.getType());
      if (!common) {
        common = e;
        commonIdx = i;
      } else if (common != e) {
        error(opLoc, "mismatched element types in " + what + ": " +
                         eltName(common) + " vs " + eltName(e) +
                         "; use cast(x, T) to convert one operand");
        (void)commonIdx;
        return false;
      }
    }
    llvm::SmallVector<mlir::Value> mats;
    for (size_t i = 0; i < vals.size(); ++i) {
      if (vals[i].kind == Val::Runtime) {
        mats.push_back(vals[i].v);
        continue;
      }
      mlir::Type want = common;
      if (want && vals[i].kind == Val::Float && want.isInteger(32)) {
        error(locs[i], "mismatched element types in " + what +
                           ": a float constant cannot be combined with an "
                           "i32 value; use cast(x, f32)");
        return false;
      }
      if (want && vals[i].kind != Val::Bool && want.isInteger(1)) {
        error(locs[i], "mismatched element types in " + what + ": " +
                           describe(vals[i]) +
                           " cannot be combined with a bool value");
        return false;
      }
      if (want && vals[i].kind == Val::Bool && !want.isInteger(1)) {
        error(locs[i], "mismatched element types in " + what +
                           ": a bool constant cannot be combined with " +
                           eltName(want) + " values");
        return false;
      }
      auto m = constScalar(vals[i], want, locs[i]);
      if (!m)
        return false;
      mats.push_back(*m);
    }
    llvm::SmallVector<mlir::Type> types;
    for (auto v : mats)
      types.push_back(v.getType());
    auto shape = broadcastShape(types, opLoc, what);
    if (!shape)
      return false;
    for (auto v : mats)
      out.push_back(broadcastTo(v, *shape, opLoc));
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  OptVal eval(const Expr &e);
  OptVal evalPlain(const Expr &e) {
    OptVal v = eval(e);
    if (!v || !checkPlain(*v, e.loc))
      return std::nullopt;
    return v;
  }
  std::optional<int64_t> evalConstInt(const Expr &e, const Twine &what) {
    OptVal v = eval(e);
    if (!v)
      return std::nullopt;
    if (v->kind != Val::Int)
      return error(e.loc, what + " must be a compile-time integer constant, "
                                 "got " + describe(*v));
    return v->i;
  }
  std::optional<bool> evalConstBool(const Expr &e, const Twine &what) {
    OptVal v = eval(e);
    if (!v)
      return std::nullopt;
    if (v->kind != Val::Bool)
      return error(e.loc, what + " must be a compile-time bool constant, got " +
                              describe(*v));
    return v->b;
  }
  /// An integer scalar (constant -> i32) for offsets, bounds and dims.
  std::optional<mlir::Value> evalIndex(const Expr &e, const Twine &what) {
    OptVal v = evalPlain(e);
    if (!v)
      return std::nullopt;
    if (v->kind == Val::Int)
      return constScalar(*v, i32(), e.loc);
    if (v->kind == Val::Runtime && !isTile(v->v.getType()) &&
        isI32(v->v.getType()))
      return v->v;
    return error(e.loc, what + " must be an integer scalar, got " +
                            describe(*v));
  }

  OptVal foldBinary(BinaryOp op, const Val &a, const Val &b, SMLoc opLoc);
  OptVal binary(BinaryOp op, Val a, SMLoc aLoc, Val b, SMLoc bLoc,
                SMLoc opLoc);
  OptVal unary(const Expr &e);
  OptVal evalSubscript(const Expr &e);
  OptVal evalCall(const Expr &e);

  struct Window {
    unsigned param = 0;
    mlir::Value global;
    llvm::SmallVector<mlir::Value> offsets;
    llvm::SmallVector<int64_t> window;
    llvm::SmallVector<int64_t> shape;
    mlir::Type elt;
  };
  bool evalWindow(const Expr &e, const char *builtin, Window &w);

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  bool emitBlock(const Block &b);
  bool emitStmt(const Stmt &s);
  bool emitFor(const Stmt &s);
  bool emitStore(const Expr &call);
  bool bindNames(const Stmt &s, Val value);
  bool assignTo(const std::string &name, SMLoc l, Val value, SMLoc valueLoc);

  bool evalConsts();
  bool buildParams();
  bool checkGridWarps(const Stmt **gridStmt);
  void bindParamsAndSymbols(mlir::func::FuncOp f, bool withTensors);

  int64_t numWarps = 4;
  // mma_layout(): the TiledMMA the kernel asks for, if any.
  const Stmt *mmaLayoutStmt = nullptr;
  int64_t mmaWarps[3] = {1, 1, 1}, mmaValues[3] = {1, 1, 1};
  bool sawWarps = false;
};

} // namespace

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

OptVal IRGen::foldBinary(BinaryOp op, const Val &a, const Val &b,
                         SMLoc opLoc) {
  const char *sp = spelling(op);
  bool isCmp = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt ||
               op == BinaryOp::Ge || op == BinaryOp::Eq || op == BinaryOp::Ne;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (a.kind != Val::Bool || b.kind != Val::Bool)
      return error(opLoc, Twine("operator '") + sp +
                              "' needs bool operands, got " + describe(a) +
                              " and " + describe(b));
    return Val::ofBool(op == BinaryOp::And ? (a.b && b.b) : (a.b || b.b));
  }
  if (a.kind == Val::Bool || b.kind == Val::Bool) {
    if (a.kind == Val::Bool && b.kind == Val::Bool &&
        (op == BinaryOp::Eq || op == BinaryOp::Ne))
      return Val::ofBool(op == BinaryOp::Eq ? a.b == b.b : a.b != b.b);
    return error(opLoc, Twine("operator '") + sp + "' is not defined on " +
                            describe(a) + " and " + describe(b));
  }
  if (a.kind == Val::Int && b.kind == Val::Int) {
    int64_t x = a.i, y = b.i, r = 0;
    switch (op) {
    case BinaryOp::Add:
      if (__builtin_add_overflow(x, y, &r))
        return error(opLoc, "integer overflow in constant expression " +
                                Twine(x) + " + " + Twine(y));
      return Val::ofInt(r);
    case BinaryOp::Sub:
      if (__builtin_sub_overflow(x, y, &r))
        return error(opLoc, "integer overflow in constant expression " +
                                Twine(x) + " - " + Twine(y));
      return Val::ofInt(r);
    case BinaryOp::Mul:
      if (__builtin_mul_overflow(x, y, &r))
        return error(opLoc, "integer overflow in constant expression " +
                                Twine(x) + " * " + Twine(y));
      return Val::ofInt(r);
    case BinaryOp::Div:
    case BinaryOp::Rem:
      if (y == 0)
        return error(opLoc, Twine("division by zero in constant expression ") +
                                Twine(x) + " " + sp + " 0");
      if (x == INT64_MIN && y == -1)
        return error(opLoc, "integer overflow in constant expression");
      return Val::ofInt(op == BinaryOp::Div ? x / y : x % y);
    case BinaryOp::Lt: return Val::ofBool(x < y);
    case BinaryOp::Le: return Val::ofBool(x <= y);
    case BinaryOp::Gt: return Val::ofBool(x > y);
    case BinaryOp::Ge: return Val::ofBool(x >= y);
    case BinaryOp::Eq: return Val::ofBool(x == y);
    case BinaryOp::Ne: return Val::ofBool(x != y);
    default: break;
    }
  }
  double x = a.asDouble(), y = b.asDouble();
  (void)isCmp;
  switch (op) {
  case BinaryOp::Add: return Val::ofFloat(x + y);
  case BinaryOp::Sub: return Val::ofFloat(x - y);
  case BinaryOp::Mul: return Val::ofFloat(x * y);
  case BinaryOp::Div:
    if (y == 0)
      return error(opLoc, "division by zero in constant expression");
    return Val::ofFloat(x / y);
  case BinaryOp::Rem:
    if (y == 0)
      return error(opLoc, "division by zero in constant expression");
    return Val::ofFloat(std::fmod(x, y));
  case BinaryOp::Lt: return Val::ofBool(x < y);
  case BinaryOp::Le: return Val::ofBool(x <= y);
  case BinaryOp::Gt: return Val::ofBool(x > y);
  case BinaryOp::Ge: return Val::ofBool(x >= y);
  case BinaryOp::Eq: return Val::ofBool(x == y);
  case BinaryOp::Ne: return Val::ofBool(x != y);
  default: break;
  }
  return error(opLoc, "unsupported constant operation");
}

OptVal IRGen::binary(BinaryOp op, Val a, SMLoc aLoc, Val b, SMLoc bLoc,
                     SMLoc opLoc) {
  if (!checkPlain(a, aLoc) || !checkPlain(b, bLoc))
    return std::nullopt;
  if (a.isConst() && b.isConst())
    return foldBinary(op, a, b, opLoc);
  std::string what = std::string("'") + spelling(op) + "'";
  Val vals[2] = {a, b};
  SMLoc locs[2] = {aLoc, bLoc};
  llvm::SmallVector<mlir::Value> ops;
  if (!unify(vals, locs, opLoc, what, ops))
    return std::nullopt;
  mlir::Value x = ops[0], y = ops[1];
  mlir::Type t = x.getType();
  mlir::Location ml = loc(opLoc);
  bool fl = isFloat(t), in = isI32(t), bo = isI1(t);
  using namespace mlir::arith;
  auto bad = [&]() -> OptVal {
    return error(opLoc, "operator " + what + " is not defined on " +
                            eltName(t) + " operands");
  };
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (bo)
      return bad();
    mlir::Value r;
    if (fl) {
      if (op == BinaryOp::Add) r = AddFOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Sub) r = SubFOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Mul) r = MulFOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Div) r = DivFOp::create(builder, ml, x, y);
      else r = RemFOp::create(builder, ml, x, y);
    } else if (in) {
      if (op == BinaryOp::Add) r = AddIOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Sub) r = SubIOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Mul) r = MulIOp::create(builder, ml, x, y);
      else if (op == BinaryOp::Div) r = DivSIOp::create(builder, ml, x, y);
      else r = RemSIOp::create(builder, ml, x, y);
    } else {
      return bad();
    }
    return Val::ofValue(r);
  }
  case BinaryOp::And:
  case BinaryOp::Or:
    if (!bo)
      return error(opLoc, "operator " + what + " needs bool operands, got " +
                              eltName(t));
    if (op == BinaryOp::And)
      return Val::ofValue(AndIOp::create(builder, ml, x, y));
    return Val::ofValue(OrIOp::create(builder, ml, x, y));
  default: {
    if (fl) {
      CmpFPredicate p;
      switch (op) {
      case BinaryOp::Lt: p = CmpFPredicate::OLT; break;
      case BinaryOp::Le: p = CmpFPredicate::OLE; break;
      case BinaryOp::Gt: p = CmpFPredicate::OGT; break;
      case BinaryOp::Ge: p = CmpFPredicate::OGE; break;
      case BinaryOp::Eq: p = CmpFPredicate::OEQ; break;
      default: p = CmpFPredicate::UNE; break;
      }
      return Val::ofValue(CmpFOp::create(builder, ml, p, x, y));
    }
    if (bo && op != BinaryOp::Eq && op != BinaryOp::Ne)
      return bad();
    if (!in && !bo)
      return bad();
    CmpIPredicate p;
    switch (op) {
    case BinaryOp::Lt: p = CmpIPredicate::slt; break;
    case BinaryOp::Le: p = CmpIPredicate::sle; break;
    case BinaryOp::Gt: p = CmpIPredicate::sgt; break;
    case BinaryOp::Ge: p = CmpIPredicate::sge; break;
    case BinaryOp::Eq: p = CmpIPredicate::eq; break;
    default: p = CmpIPredicate::ne; break;
    }
    return Val::ofValue(CmpIOp::create(builder, ml, p, x, y));
  }
  }
}

OptVal IRGen::unary(const Expr &e) {
  OptVal v = evalPlain(*e.lhs);
  if (!v)
    return std::nullopt;
  mlir::Location ml = loc(e.opLoc);
  if (e.unaryOp == UnaryOp::Neg) {
    if (v->kind == Val::Int) {
      if (v->i == INT64_MIN)
        return error(e.opLoc, "integer overflow in constant expression");
      return Val::ofInt(-v->i);
    }
    if (v->kind == Val::Float)
      return Val::ofFloat(-v->f);
    if (v->kind == Val::Bool)
      return error(e.opLoc, "unary '-' is not defined on bool values; use '!'");
    mlir::Type t = v->v.getType();
    if (isFloat(t))
      return Val::ofValue(mlir::arith::NegFOp::create(builder, ml, v->v));
    if (isI32(t)) {
      auto zero = materialize(Val::ofInt(0), e.opLoc, t);
      if (!zero)
        return std::nullopt;
      return Val::ofValue(mlir::arith::SubIOp::create(builder, ml, *zero, v->v));
    }
    return error(e.opLoc, "unary '-' is not defined on " + typeStr(t) +
                              " values");
  }
  if (v->kind == Val::Bool)
    return Val::ofBool(!v->b);
  if (v->kind == Val::Runtime && isI1(v->v.getType())) {
    auto one = materialize(Val::ofBool(true), e.opLoc, v->v.getType());
    if (!one)
      return std::nullopt;
    return Val::ofValue(mlir::arith::XOrIOp::create(builder, ml, v->v, *one));
  }
  return error(e.opLoc, "operator '!' needs a bool operand, got " +
                            describe(*v));
}

OptVal IRGen::eval(const Expr &e) {
  if (failed)
    return std::nullopt;
  switch (e.kind) {
  case ExprKind::IntLit:
    return Val::ofInt(e.intValue);
  case ExprKind::FloatLit:
    return Val::ofFloat(e.floatValue);
  case ExprKind::BoolLit:
    return Val::ofBool(e.boolValue);
  case ExprKind::InfLit:
    return Val::ofFloat(INFINITY);
  case ExprKind::NoneLit:
    return error(e.loc, "'None' is only allowed inside a subscript");
  case ExprKind::List:
    return error(e.loc, "a list '[...]' is only allowed as the shape argument "
                        "of zeros() and full()");
  case ExprKind::Name: {
    Binding *b = lookup(e.name);
    if (!b) {
      if (inGrid) {
        for (const Param &p : kernel.params)
          if (p.name == e.name && p.isTensor)
            return error(e.loc, "tensor parameter '" + e.name +
                                    "' cannot be used in grid(); grid sizes "
                                    "are computed from shape symbols, "
                                    "constants and scalar parameters");
        if (!e.name.empty())
          for (auto &s : kernel.body.stmts)
            if (s->kind == StmtKind::Let)
              for (auto &n : s->names)
                if (n == e.name)
                  return error(e.loc, "'" + e.name + "' cannot be used in "
                                      "grid(); grid sizes are computed from "
                                      "shape symbols, constants and scalar "
                                      "parameters only");
      }
      std::string s = suggest(e.name);
      if (!s.empty())
        return error(e.loc, "unknown name '" + e.name + "'; did you mean '" +
                                s + "'?");
      static const char *builtins[] = {
          "program_id", "num_programs", "cdiv", "min", "max", "abs", "exp",
          "exp2", "log", "sqrt", "where", "cast", "arange", "zeros", "full",
          "dot", "trans", "sum", "online_softmax", "finalize", "load", "store"};
      for (const char *bn : builtins)
        if (e.name == bn)
          return error(e.loc, "'" + e.name + "' is a builtin function; call "
                                             "it as " + e.name + "(...)");
      return error(e.loc, "unknown name '" + e.name + "'");
    }
    return b->val;
  }
  case ExprKind::Unary:
    return unary(e);
  case ExprKind::Binary: {
    OptVal a = eval(*e.lhs);
    if (!a)
      return std::nullopt;
    OptVal b = eval(*e.rhs);
    if (!b)
      return std::nullopt;
    return binary(e.binaryOp, *a, e.lhs->loc, *b, e.rhs->loc, e.opLoc);
  }
  case ExprKind::Subscript:
    return evalSubscript(e);
  case ExprKind::Call:
    return evalCall(e);
  }
  return error(e.loc, "unsupported expression");
}

OptVal IRGen::evalSubscript(const Expr &e) {
  if (e.lhs->kind == ExprKind::Name) {
    Binding *b = lookup(e.lhs->name);
    if (b && b->val.kind == Val::Global)
      return error(e.loc, "a window of tensor parameter '" + e.lhs->name +
                              "' can only be the first argument of load() or "
                              "store()");
  }
  OptVal base = evalPlain(*e.lhs);
  if (!base)
    return std::nullopt;
  if (base->kind != Val::Runtime || !isTile(base->v.getType()))
    return error(e.opLoc, "cannot subscript " + describe(*base) +
                              "; only tiles (with ':' and None) and tensor "
                              "parameters (in load/store) can be subscripted");
  mlir::Value v = base->v;
  auto shape = shapeOf(v.getType());
  unsigned full = 0;
  for (auto &en : e.entries) {
    if (en.kind == SubscriptEntry::Full)
      ++full;
    else if (en.kind != SubscriptEntry::NewAxis)
      return error(en.loc, "a tile can only be subscripted with ':' (keep a "
                           "dim) and None (insert a dim of size 1); indexing "
                           "or slicing a tile is not supported");
  }
  if (full != shape.size())
    return error(e.opLoc, "subscript of a tile of shape " + shapeStr(shape) +
                              " needs exactly " + Twine(shape.size()) +
                              (shape.size() == 1 ? " ':' entry" : " ':' entries") +
                              " (one per dim), got " +
                              Twine(full));
  unsigned pos = 0;
  llvm::SmallVector<int64_t> cur = shape;
  for (auto &en : e.entries) {
    if (en.kind == SubscriptEntry::Full) {
      ++pos;
      continue;
    }
    cur.insert(cur.begin() + pos, 1);
    if (!checkShape(cur, en.loc))
      return std::nullopt;
    v = flash::tile::ExpandDimsOp::create(builder, loc(en.loc),
                                         tileType(cur, elt(v.getType())), v,
                                         builder.getI64IntegerAttr(pos))
            .getResult();
    ++pos;
  }
  return Val::ofValue(v);
}

bool IRGen::evalWindow(const Expr &e, const char *builtin, Window &w) {
  if (e.kind != ExprKind::Subscript || e.lhs->kind != ExprKind::Name) {
    error(e.loc, Twine(builtin) + "() expects a window of a tensor parameter "
                                  "as its first argument, such as "
                                  "X[b, m : m + BLOCK_M, :]");
    return false;
  }
  const std::string &name = e.lhs->name;
  Binding *b = lookup(name);
  if (!b) {
    eval(*e.lhs); // reports unknown name with a suggestion
    return false;
  }
  if (b->val.kind != Val::Global) {
    error(e.lhs->loc, "'" + name + "' is not a tensor parameter; windows can "
                                   "only be taken of tensor parameters");
    return false;
  }
  w.param = b->val.param;
  w.global = b->val.v;
  const Param &p = *params[w.param].ast;
  auto gt = mlir::cast<flash::tile::GlobalType>(params[w.param].type);
  w.elt = gt.getElementType();
  if (e.entries.size() != p.dims.size()) {
    error(e.opLoc, "'" + name + "' has " + Twine(p.dims.size()) +
                       (p.dims.size() == 1 ? " dim" : " dims") +
                       " but the window has " + Twine(e.entries.size()) +
                       (e.entries.size() == 1 ? " entry" : " entries") +
                       " (one per dim: an index, 'lo : hi' or ':')");
    return false;
  }
  for (unsigned i = 0; i < e.entries.size(); ++i) {
    const SubscriptEntry &en = e.entries[i];
    switch (en.kind) {
    case SubscriptEntry::NewAxis:
      error(en.loc, "None is not allowed in a window of a tensor parameter");
      return false;
    case SubscriptEntry::Index: {
      auto off = evalIndex(*en.index, "a window index");
      if (!off)
        return false;
      w.offsets.push_back(*off);
      break;
    }
    case SubscriptEntry::Full: {
      if (!gt.isStaticDim(i)) {
        error(en.loc, "':' takes a whole dim and needs a static size, but "
                      "dim " + Twine(i) + " of '" + name + "' is the symbol '" +
                          p.dims[i].name +
                          "'; write 'start : start + SIZE'");
        return false;
      }
      auto zero = constScalar(Val::ofInt(0), i32(), en.loc);
      if (!zero)
        return false;
      w.offsets.push_back(*zero);
      w.window.push_back(i);
      w.shape.push_back(gt.getShape()[i]);
      break;
    }
    case SubscriptEntry::Slice: {
      // Size: both ends fold, or hi is `lo + C` / `C + lo`.
      std::optional<int64_t> size;
      const Expr &hi = *en.hi;
      const Expr *sizeExpr = nullptr;
      if (hi.kind == ExprKind::Binary && hi.binaryOp == BinaryOp::Add) {
        if (structurallyEqual(*hi.lhs, *en.lo))
          sizeExpr = hi.rhs.get();
        else if (structurallyEqual(*hi.rhs, *en.lo))
          sizeExpr = hi.lhs.get();
      }
      OptVal lo = evalPlain(*en.lo);
      if (!lo)
        return false;
      if (sizeExpr) {
        OptVal s = eval(*sizeExpr);
        if (!s)
          return false;
        if (s->kind != Val::Int) {
          error(sizeExpr->loc, "slice size must be a compile-time integer "
                               "constant, got " + describe(*s));
          return false;
        }
        size = s->i;
      } else {
        OptVal h = evalPlain(hi);
        if (!h)
          return false;
        if (lo->kind == Val::Int && h->kind == Val::Int) {
          int64_t d;
          if (__builtin_sub_overflow(h->i, lo->i, &d)) {
            error(hi.loc, "integer overflow in slice size");
            return false;
          }
          size = d;
        } else {
          error(en.loc, "slice size must be a compile-time constant; write "
                        "'start : start + SIZE'");
          return false;
        }
      }
      if (*size <= 0) {
        error(en.loc, "slice size must be positive, got " + Twine(*size));
        return false;
      }
      if (*size > kMaxTileElements) {
        error(en.loc, "slice size " + Twine(*size) +
                          " is too large (the limit is 2^20)");
        return false;
      }
      mlir::Value off;
      if (lo->kind == Val::Int) {
        auto c = constScalar(*lo, i32(), en.lo->loc);
        if (!c)
          return false;
        off = *c;
      } else if (lo->kind == Val::Runtime && !isTile(lo->v.getType()) &&
                 isI32(lo->v.getType())) {
        off = lo->v;
      } else {
        error(en.lo->loc, "slice start must be an integer scalar, got " +
                              describe(*lo));
        return false;
      }
      w.offsets.push_back(off);
      w.window.push_back(i);
      w.shape.push_back(*size);
      break;
    }
    }
  }
  if (w.window.empty()) {
    error(e.opLoc, "a window must slice at least one dim ('lo : hi' or ':'); "
                   "loading a single element is not supported");
    return false;
  }
  return checkShape(w.shape, e.opLoc);
}

//===----------------------------------------------------------------------===//
// Builtins
//===----------------------------------------------------------------------===//

namespace {
struct BuiltinSig {
  const char *name;
  unsigned minArgs, maxArgs;
  std::vector<const char *> keywords;
  const char *signature;
  bool allowedInGrid;
};
} // namespace

static const BuiltinSig *findBuiltin(llvm::StringRef name) {
  static const std::vector<BuiltinSig> sigs = {
      {"program_id", 1, 1, {}, "program_id(axis)", false},
      {"num_programs", 1, 1, {}, "num_programs(axis)", false},
      {"cdiv", 2, 2, {}, "cdiv(a, b)", true},
      {"min", 2, 2, {}, "min(a, b)", true},
      {"max", 1, 2, {"axis"}, "max(a, b) or max(x, axis = K)", true},
      {"sum", 1, 1, {"axis"}, "sum(x, axis = K)", false},
      {"abs", 1, 1, {}, "abs(x)", true},
      {"exp", 1, 1, {}, "exp(x)", false},
      {"exp2", 1, 1, {}, "exp2(x)", false},
      {"log", 1, 1, {}, "log(x)", false},
      {"sqrt", 1, 1, {}, "sqrt(x)", false},
      {"where", 3, 3, {}, "where(cond, a, b)", false},
      {"cast", 2, 2, {}, "cast(x, T)", false},
      {"arange", 2, 2, {}, "arange(lo, hi)", false},
      {"zeros", 2, 2, {}, "zeros([dims], T)", false},
      {"full", 3, 3, {}, "full([dims], value, T)", false},
      {"dot", 2, 3, {}, "dot(a, b[, acc])", false},
      {"trans", 1, 1, {}, "trans(x)", false},
      {"online_softmax",
       5,
       5,
       {"normalization", "exp2", "scale"},
       "online_softmax(s, v, m, l, acc, normalization = deferred|eager, "
       "exp2 = true|false, scale = C)",
       false},
      {"finalize", 2, 2, {}, "finalize(acc, l)", false},
      {"load", 1, 1, {"pad"}, "load(WINDOW[, pad = VALUE])", false},
      {"store", 2, 2, {}, "store(WINDOW, value)", false},
  };
  for (auto &s : sigs)
    if (name == s.name)
      return &s;
  return nullptr;
}

static std::optional<mlir::Type> parseTypeName(const Expr &e,
                                               mlir::Builder &b) {
  if (e.kind != ExprKind::Name)
    return std::nullopt;
  if (e.name == "f16") return b.getF16Type();
  if (e.name == "bf16") return b.getBF16Type();
  if (e.name == "f32" || e.name == "float") return b.getF32Type();
  if (e.name == "i32" || e.name == "int") return b.getI32Type();
  if (e.name == "bool" || e.name == "i1") return b.getI1Type();
  return std::nullopt;
}

OptVal IRGen::evalCall(const Expr &e) {
  const BuiltinSig *sig = findBuiltin(e.name);
  if (!sig) {
    std::string best;
    unsigned bestDist = ~0u;
    static const char *all[] = {
        "program_id", "num_programs", "cdiv", "min", "max", "sum", "abs",
        "exp", "exp2", "log", "sqrt", "where", "cast", "arange", "zeros",
        "full", "dot", "trans", "online_softmax", "finalize", "load", "store"};
    llvm::StringRef name = e.name;
    for (const char *c : all) {
      unsigned maxDist = std::max<unsigned>(1, name.size() / 3);
      unsigned d = name.edit_distance(c, true, maxDist + 1);
      if (d <= maxDist && d < bestDist) {
        bestDist = d;
        best = c;
      }
    }
    if (e.name == "grid" || e.name == "warps" || e.name == "static_assert")
      return error(e.nameLoc, "'" + e.name + "(...)' is a statement and "
                                             "cannot be used in an expression");
    if (e.name == "range")
      return error(e.nameLoc, "range(...) can only be used in a 'for' "
                              "statement: for i in range(lo, hi) { ... }");
    if (lookup(e.name))
      return error(e.nameLoc, "'" + e.name + "' is not a function");
    if (!best.empty())
      return error(e.nameLoc, "unknown builtin '" + e.name +
                                  "'; did you mean '" + best + "'?");
    return error(e.nameLoc, "unknown builtin '" + e.name + "'");
  }
  llvm::StringRef name = e.name;
  if (inGrid && !sig->allowedInGrid)
    return error(e.nameLoc, "'" + name + "' cannot be used in grid(); grid "
                            "sizes are computed from shape symbols, "
                            "constants and scalar parameters (with cdiv, "
                            "min, max, abs and arithmetic)");
  // Keyword check.
  for (auto &kw : e.kwargs) {
    bool ok = llvm::any_of(sig->keywords,
                           [&](const char *k) { return kw.name == k; });
    if (!ok) {
      if (sig->keywords.empty())
        return error(kw.loc, "'" + name + "' takes no keyword arguments "
                             "(expected " + sig->signature + ")");
      return error(kw.loc, "'" + name + "' has no keyword argument '" +
                               kw.name + "' (expected " + sig->signature + ")");
    }
  }
  auto kwarg = [&](llvm::StringRef k) -> const KeywordArg * {
    for (auto &kw : e.kwargs)
      if (kw.name == k)
        return &kw;
    return nullptr;
  };
  unsigned n = e.args.size();
  bool reduction = (name == "max" || name == "sum") && kwarg("axis");
  if (reduction ? n != 1 : (n < sig->minArgs || n > sig->maxArgs)) {
    std::string count = reduction ? "1 positional argument"
                        : sig->minArgs == sig->maxArgs
                            ? std::to_string(sig->minArgs) + " argument" +
                                  (sig->minArgs == 1 ? "" : "s")
                            : std::to_string(sig->minArgs) +
                              (sig->maxArgs == sig->minArgs + 1 ? " or " : " to ") +
                              std::to_string(sig->maxArgs) + " arguments";
    return error(e.nameLoc, "'" + name + "' expects " + count + ", got " +
                                Twine(n) + " (expected " + sig->signature +
                                ")");
  }
  if (name == "max" && !reduction && n != 2)
    return error(e.nameLoc, "'max' expects 2 arguments, or 1 argument and "
                            "the axis keyword, got " + Twine(n) +
                            " (expected max(a, b) or max(x, axis = K))");
  if (name == "sum" && !reduction)
    return error(e.nameLoc, "'sum' needs the axis keyword: sum(x, axis = K)");
  mlir::Location ml = loc(e.nameLoc);
  SMLoc nl = e.nameLoc;
  auto argLoc = [&](unsigned i) { return e.args[i]->loc; };
  // A runtime tile operand check helper.
  auto needTile = [&](const Val &v, unsigned i, const Twine &what,
                      unsigned rank = 0) -> bool {
    if (!checkPlain(v, argLoc(i)))
      return false;
    if (v.kind != Val::Runtime || !isTile(v.v.getType())) {
      error(argLoc(i), "'" + name + "' expects " + what + ", got " +
                           describe(v));
      return false;
    }
    if (rank && shapeOf(v.v.getType()).size() != rank) {
      error(argLoc(i), "'" + name + "' expects " + what + ", got " +
                           describe(v));
      return false;
    }
    return true;
  };

  if (name == "store")
    return error(e.nameLoc, "store() does not return a value; use it as a "
                            "statement: store(X[...], value);");

  if (name == "program_id" || name == "num_programs") {
    auto axis = evalConstInt(*e.args[0], "the axis of " + name + "()");
    if (!axis)
      return std::nullopt;
    if (*axis < 0 || *axis > 2)
      return error(argLoc(0), "the axis of " + name + "() must be 0, 1 or 2, "
                              "got " + Twine(*axis));
    if (name == "program_id")
      return Val::ofValue(flash::tile::ProgramIdOp::create(
          builder, ml, i32(), builder.getI32IntegerAttr(*axis)));
    return Val::ofValue(flash::tile::NumProgramsOp::create(
        builder, ml, i32(), builder.getI32IntegerAttr(*axis)));
  }

  if (name == "cdiv" || name == "min" || (name == "max" && !reduction)) {
    OptVal a = evalPlain(*e.args[0]);
    if (!a)
      return std::nullopt;
    OptVal b = evalPlain(*e.args[1]);
    if (!b)
      return std::nullopt;
    if (a->isConst() && b->isConst()) {
      if (a->kind == Val::Bool || b->kind == Val::Bool)
        return error(nl, "'" + name + "' is not defined on bool values");
      if (name == "cdiv") {
        if (a->kind != Val::Int || b->kind != Val::Int)
          return error(nl, "'cdiv' expects integer operands, got " +
                               describe(*a) + " and " + describe(*b));
        if (b->i == 0)
          return error(argLoc(1), "division by zero in cdiv()");
        if (a->i == INT64_MIN && b->i == -1)
          return error(nl, "integer overflow in cdiv()");
        int64_t q = a->i / b->i;
        if ((a->i % b->i != 0) && ((a->i < 0) == (b->i < 0)))
          ++q;
        return Val::ofInt(q);
      }
      bool isMax = name == "max";
      if (a->kind == Val::Int && b->kind == Val::Int)
        return Val::ofInt(isMax ? std::max(a->i, b->i) : std::min(a->i, b->i));
      double x = a->asDouble(), y = b->asDouble();
      if (std::isnan(x) || std::isnan(y))
        return Val::ofFloat(NAN);
      return Val::ofFloat(isMax ? std::max(x, y) : std::min(x, y));
    }
    Val vals[2] = {*a, *b};
    SMLoc locs[2] = {argLoc(0), argLoc(1)};
    llvm::SmallVector<mlir::Value> ops;
    if (!unify(vals, locs, nl, "'" + name.str() + "'", ops))
      return std::nullopt;
    mlir::Type t = ops[0].getType();
    if (name == "cdiv") {
      if (!isI32(t))
        return error(nl, "'cdiv' expects integer operands, got " +
                             eltName(t));
      return Val::ofValue(
          mlir::arith::CeilDivSIOp::create(builder, ml, ops[0], ops[1]));
    }
    if (isI1(t))
      return error(nl, "'" + name + "' is not defined on bool values");
    if (name == "max")
      return Val::ofValue(
          isFloat(t)
              ? mlir::Value(mlir::arith::MaximumFOp::create(builder, ml, ops[0],
                                                            ops[1]))
              : mlir::Value(
                    mlir::arith::MaxSIOp::create(builder, ml, ops[0], ops[1])));
    return Val::ofValue(
        isFloat(t)
            ? mlir::Value(
                  mlir::arith::MinimumFOp::create(builder, ml, ops[0], ops[1]))
            : mlir::Value(
                  mlir::arith::MinSIOp::create(builder, ml, ops[0], ops[1])));
  }

  if (reduction) {
    OptVal x = eval(*e.args[0]);
    if (!x || !needTile(*x, 0, "a tile"))
      return std::nullopt;
    const KeywordArg *ax = kwarg("axis");
    auto axis = evalConstInt(*ax->value, "the axis of " + name + "()");
    if (!axis)
      return std::nullopt;
    auto shape = shapeOf(x->v.getType());
    if (*axis < 0 || *axis >= (int64_t)shape.size())
      return error(ax->value->loc, "axis " + Twine(*axis) +
                                       " is out of range for a tile of shape " +
                                       shapeStr(shape));
    if (shape.size() < 2)
      return error(e.args[0]->loc, "reducing a 1-D tile to a scalar is not "
                                   "supported; '" + name +
                                   "' needs a tile of rank >= 2");
    if (isI1(x->v.getType()))
      return error(e.args[0]->loc, "'" + name + "' is not defined on bool "
                                                "tiles");
    shape.erase(shape.begin() + *axis);
    auto kind = name == "sum" ? flash::tile::ReduceKind::Sum
                              : flash::tile::ReduceKind::Max;
    return Val::ofValue(flash::tile::ReduceOp::create(
        builder, ml, tileType(shape, elt(x->v.getType())),
        flash::tile::ReduceKindAttr::get(&ctx, kind), x->v,
        builder.getI64IntegerAttr(*axis)));
  }

  if (name == "abs" || name == "exp" || name == "exp2" || name == "log" ||
      name == "sqrt") {
    OptVal x = evalPlain(*e.args[0]);
    if (!x)
      return std::nullopt;
    if (x->kind == Val::Bool)
      return error(argLoc(0), "'" + name + "' is not defined on bool values");
    if (x->isConst()) {
      if (name == "abs") {
        if (x->kind == Val::Int) {
          if (x->i == INT64_MIN)
            return error(nl, "integer overflow in abs()");
          return Val::ofInt(x->i < 0 ? -x->i : x->i);
        }
        return Val::ofFloat(std::fabs(x->f));
      }
      double d = x->asDouble();
      if (name == "exp") return Val::ofFloat(std::exp(d));
      if (name == "exp2") return Val::ofFloat(std::exp2(d));
      if (name == "log") return Val::ofFloat(std::log(d));
      return Val::ofFloat(std::sqrt(d));
    }
    mlir::Type t = x->v.getType();
    if (name == "abs") {
      if (isFloat(t))
        return Val::ofValue(mlir::math::AbsFOp::create(builder, ml, x->v));
      if (isI32(t))
        return Val::ofValue(mlir::math::AbsIOp::create(builder, ml, x->v));
      return error(argLoc(0), "'abs' is not defined on " + typeStr(t));
    }
    if (!isFloat(t))
      return error(argLoc(0), "'" + name + "' expects a floating-point "
                              "operand, got " + typeStr(t) +
                              "; use cast(x, f32)");
    if (name == "exp")
      return Val::ofValue(mlir::math::ExpOp::create(builder, ml, x->v));
    if (name == "exp2")
      return Val::ofValue(mlir::math::Exp2Op::create(builder, ml, x->v));
    if (name == "log")
      return Val::ofValue(mlir::math::LogOp::create(builder, ml, x->v));
    return Val::ofValue(mlir::math::SqrtOp::create(builder, ml, x->v));
  }

  if (name == "where") {
    OptVal c = evalPlain(*e.args[0]);
    if (!c)
      return std::nullopt;
    OptVal a = evalPlain(*e.args[1]);
    if (!a)
      return std::nullopt;
    OptVal b = evalPlain(*e.args[2]);
    if (!b)
      return std::nullopt;
    if (c->kind != Val::Bool &&
        !(c->kind == Val::Runtime && isI1(c->v.getType())))
      return error(argLoc(0), "the condition of 'where' must be bool, got " +
                                  describe(*c));
    if (c->kind == Val::Bool && a->isConst() && b->isConst())
      return c->b ? *a : *b;
    Val vals[2] = {*a, *b};
    SMLoc locs[2] = {argLoc(1), argLoc(2)};
    llvm::SmallVector<mlir::Value> ops;
    if (!unify(vals, locs, nl, "'where'", ops))
      return std::nullopt;
    auto cv = materialize(*c, argLoc(0));
    if (!cv)
      return std::nullopt;
    auto shape =
        broadcastShape({cv->getType(), ops[0].getType()}, nl, "'where'");
    if (!shape)
      return std::nullopt;
    mlir::Value cond = broadcastTo(*cv, *shape, nl);
    mlir::Value x = broadcastTo(ops[0], *shape, nl);
    mlir::Value y = broadcastTo(ops[1], *shape, nl);
    return Val::ofValue(mlir::arith::SelectOp::create(builder, ml, cond, x, y));
  }

  if (name == "cast") {
    auto target = parseTypeName(*e.args[1], builder);
    if (!target)
      return error(argLoc(1), "cast() expects a type name as its second "
                              "argument (f16, bf16, f32, i32 or bool)");
    OptVal x = evalPlain(*e.args[0]);
    if (!x)
      return std::nullopt;
    mlir::Type to = *target;
    if (x->isConst()) {
      if (to.isInteger(1)) {
        if (x->kind == Val::Bool) return *x;
        return Val::ofBool(x->kind == Val::Int ? x->i != 0 : x->f != 0);
      }
      if (to.isInteger(32)) {
        if (x->kind == Val::Bool) return Val::ofInt(x->b);
        if (x->kind == Val::Int) return *x;
        if (!std::isfinite(x->f) || x->f >= 2147483648.0 ||
            x->f <= -2147483649.0)
          return error(argLoc(0), "cast of " +
                                      Twine(llvm::formatv("{0}", x->f).str()) +
                                      " to i32 is out of range");
        return Val::ofInt((int64_t)x->f);
      }
      if (to.isF32()) {
        if (x->kind == Val::Bool) return Val::ofFloat(x->b);
        return Val::ofFloat(x->asDouble());
      }
      // f16 / bf16 scalars only exist at runtime.
      Val asF = x->kind == Val::Bool ? Val::ofFloat(x->b)
                                     : Val::ofFloat(x->asDouble());
      return Val::ofValue(*constScalar(asF, to, argLoc(0)));
    }
    mlir::Value v = x->v;
    mlir::Type from = elt(v.getType());
    if (from == to)
      return *x;
    mlir::Type rt = isTile(v.getType())
                        ? mlir::Type(tileType(shapeOf(v.getType()), to))
                        : to;
    using namespace mlir::arith;
    bool fromF = mlir::isa<mlir::FloatType>(from);
    bool toF = mlir::isa<mlir::FloatType>(to);
    if (fromF && toF) {
      unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
      if (fw < tw)
        return Val::ofValue(ExtFOp::create(builder, ml, rt, v));
      if (fw > tw)
        return Val::ofValue(TruncFOp::create(builder, ml, rt, v));
      // f16 <-> bf16: go through f32.
      mlir::Type mid = isTile(v.getType())
                           ? mlir::Type(tileType(shapeOf(v.getType()), f32()))
                           : f32();
      mlir::Value w = ExtFOp::create(builder, ml, mid, v);
      return Val::ofValue(TruncFOp::create(builder, ml, rt, w));
    }
    if (from.isInteger(32) && toF)
      return Val::ofValue(SIToFPOp::create(builder, ml, rt, v));
    if (fromF && to.isInteger(32))
      return Val::ofValue(FPToSIOp::create(builder, ml, rt, v));
    if (from.isInteger(1) && to.isInteger(32))
      return Val::ofValue(ExtUIOp::create(builder, ml, rt, v));
    if (from.isInteger(1) && toF)
      return Val::ofValue(UIToFPOp::create(builder, ml, rt, v));
    if (to.isInteger(1)) {
      auto zero = materialize(from.isInteger(32) ? Val::ofInt(0)
                                                 : Val::ofFloat(0),
                              argLoc(0), v.getType());
      if (!zero)
        return std::nullopt;
      if (fromF)
        return Val::ofValue(
            CmpFOp::create(builder, ml, CmpFPredicate::UNE, v, *zero));
      return Val::ofValue(
          CmpIOp::create(builder, ml, CmpIPredicate::ne, v, *zero));
    }
    return error(nl, "cannot cast " + typeStr(v.getType()) + " to " +
                         eltName(to));
  }

  if (name == "arange") {
    auto lo = evalConstInt(*e.args[0], "the start of arange()");
    if (!lo)
      return std::nullopt;
    auto hi = evalConstInt(*e.args[1], "the end of arange()");
    if (!hi)
      return std::nullopt;
    if (*lo < INT32_MIN || *lo > INT32_MAX || *hi < INT32_MIN ||
        *hi > INT32_MAX)
      return error(nl, "arange() bounds must fit in i32");
    int64_t size = *hi - *lo;
    if (size <= 0)
      return error(nl, "arange(" + Twine(*lo) + ", " + Twine(*hi) +
                           ") is empty; the end must be greater than the "
                           "start");
    if (!checkShape({size}, nl))
      return std::nullopt;
    mlir::Value v =
        flash::tile::IotaOp::create(builder, ml, tileType({size}, i32()));
    if (*lo != 0) {
      auto off = materialize(Val::ofInt(*lo), nl, v.getType());
      if (!off)
        return std::nullopt;
      v = mlir::arith::AddIOp::create(builder, ml, v, *off);
    }
    return Val::ofValue(v);
  }

  if (name == "zeros" || name == "full") {
    const Expr &dims = *e.args[0];
    if (dims.kind != ExprKind::List)
      return error(dims.loc, "the first argument of '" + name +
                                 "' must be a list of dims, such as "
                                 "[BLOCK_M, HEAD_DIM]");
    llvm::SmallVector<int64_t> shape;
    for (auto &d : dims.args) {
      auto v = evalConstInt(*d, "a dim of " + name + "()");
      if (!v)
        return std::nullopt;
      shape.push_back(*v);
    }
    const Expr &tyE = *e.args.back();
    auto ty = parseTypeName(tyE, builder);
    if (!ty)
      return error(tyE.loc, "the last argument of '" + name +
                                "' must be an element type (f16, bf16, f32, "
                                "i32 or bool)");
    if (!checkShape(shape, dims.loc))
      return std::nullopt;
    Val value = Val::ofInt(0);
    SMLoc vl = nl;
    if (name == "full") {
      vl = argLoc(1);
      OptVal v = evalPlain(*e.args[1]);
      if (!v)
        return std::nullopt;
      value = *v;
      if (ty->isInteger(1) && value.kind == Val::Int)
        return error(vl, "full() of bool needs true or false, got " +
                             describe(value));
      if (value.kind == Val::Runtime) {
        if (isTile(value.v.getType()))
          return error(vl, "the value of full() must be a scalar, got " +
                               describe(value));
        if (elt(value.v.getType()) != *ty)
          return error(vl, "the value of full() has type " +
                               typeStr(value.v.getType()) +
                               " but the tile is " + eltName(*ty) +
                               "; use cast(x, " + eltName(*ty) + ")");
        return Val::ofValue(splat(value.v, shape, vl));
      }
    } else if (ty->isInteger(1)) {
      value = Val::ofBool(false);
    }
    mlir::Type tt = tileType(shape, *ty);
    mlir::Attribute a;
    if (ty->isInteger(1)) {
      if (value.kind != Val::Bool)
        return error(vl, "full() of bool needs true or false, got " +
                             describe(value));
      a = builder.getBoolAttr(value.b);
    } else if (mlir::isa<mlir::FloatType>(*ty)) {
      if (value.kind == Val::Bool)
        return error(vl, "cannot fill a " + eltName(*ty) +
                             " tile with a bool constant");
      a = builder.getFloatAttr(*ty, value.asDouble());
    } else {
      if (value.kind != Val::Int)
        return error(vl, "cannot fill an i32 tile with " + describe(value));
      if (value.i < INT32_MIN || value.i > INT32_MAX)
        return error(vl, "integer constant " + Twine(value.i) +
                             " does not fit in i32");
      a = builder.getIntegerAttr(*ty, value.i);
    }
    auto dense = mlir::DenseElementsAttr::get(
        mlir::cast<mlir::ShapedType>(tt), llvm::ArrayRef<mlir::Attribute>(a));
    return Val::ofValue(mlir::arith::ConstantOp::create(builder, ml, dense));
  }

  if (name == "trans") {
    OptVal x = eval(*e.args[0]);
    if (!x || !needTile(*x, 0, "a 2-D tile", 2))
      return std::nullopt;
    auto s = shapeOf(x->v.getType());
    return Val::ofValue(flash::tile::TransOp::create(
        builder, ml, tileType({s[1], s[0]}, elt(x->v.getType())), x->v));
  }

  if (name == "dot") {
    OptVal a = eval(*e.args[0]);
    if (!a || !needTile(*a, 0, "a 2-D f16 or bf16 tile", 2))
      return std::nullopt;
    OptVal b = eval(*e.args[1]);
    if (!b || !needTile(*b, 1, "a 2-D f16 or bf16 tile", 2))
      return std::nullopt;
    mlir::Type ta = a->v.getType(), tb = b->v.getType();
    for (int i = 0; i < 2; ++i) {
      mlir::Type t = i ? tb : ta;
      mlir::Type et = elt(t);
      if (!et.isF16() && !et.isBF16())
        return error(argLoc(i), "'dot' operands must be f16 or bf16 tiles, "
                                "got " + typeStr(t) + "; use cast(x, f16)");
    }
    if (elt(ta) != elt(tb))
      return error(nl, "mismatched element types in 'dot': " + eltName(ta) +
                           " vs " + eltName(tb) + "; use cast(x, T)");
    auto sa = shapeOf(ta), sb = shapeOf(tb);
    if (sa[1] != sb[0])
      return error(nl, "shape mismatch in 'dot': " + shapeStr(sa) + " vs " +
                           shapeStr(sb) + " (the inner dims " + Twine(sa[1]) +
                           " and " + Twine(sb[0]) + " must be equal)");
    llvm::SmallVector<int64_t> rs = {sa[0], sb[1]};
    if (!checkShape(rs, nl))
      return std::nullopt;
    auto rt = tileType(rs, f32());
    mlir::Value acc;
    if (n == 3) {
      OptVal c = eval(*e.args[2]);
      if (!c || !needTile(*c, 2, "an f32 accumulator tile", 2))
        return std::nullopt;
      if (c->v.getType() != rt)
        return error(argLoc(2), "the accumulator of 'dot' must be " +
                                    typeStr(rt) + ", got " +
                                    typeStr(c->v.getType()));
      acc = c->v;
    } else {
      auto zero = mlir::DenseElementsAttr::get(
          mlir::cast<mlir::ShapedType>(rt),
          llvm::ArrayRef<mlir::Attribute>(builder.getF32FloatAttr(0)));
      acc = mlir::arith::ConstantOp::create(builder, ml, zero);
    }
    return Val::ofValue(flash::tile::MmaOp::create(builder, ml, rt, a->v, b->v,
                                                  acc, false, false));
  }

  if (name == "online_softmax") {
    const char *what[5] = {"an f32 score tile [M, N]",
                           "an f16 or bf16 value tile [N, D]",
                           "an f32 running-max tile [M]",
                           "an f32 running-sum tile [M]",
                           "an f32 accumulator tile [M, D]"};
    unsigned ranks[5] = {2, 2, 1, 1, 2};
    mlir::Value v[5];
    for (unsigned i = 0; i < 5; ++i) {
      OptVal x = eval(*e.args[i]);
      if (!x || !needTile(*x, i, what[i], ranks[i]))
        return std::nullopt;
      mlir::Type et = elt(x->v.getType());
      bool ok = i == 1 ? (et.isF16() || et.isBF16()) : et.isF32();
      if (!ok)
        return error(argLoc(i), "'online_softmax' expects " + Twine(what[i]) +
                                    ", got " + typeStr(x->v.getType()));
      v[i] = x->v;
    }
    auto s = shapeOf(v[0].getType()), vv = shapeOf(v[1].getType()),
         m = shapeOf(v[2].getType()), l = shapeOf(v[3].getType()),
         acc = shapeOf(v[4].getType());
    int64_t M = s[0], N = s[1], D = vv[1];
    if (vv[0] != N)
      return error(argLoc(1), "shape mismatch in 'online_softmax': scores " +
                                  shapeStr(s) + " vs values " + shapeStr(vv) +
                                  " (values need " + Twine(N) + " rows)");
    if (m[0] != M)
      return error(argLoc(2), "shape mismatch in 'online_softmax': scores " +
                                  shapeStr(s) + " vs running max " +
                                  shapeStr(m));
    if (l[0] != M)
      return error(argLoc(3), "shape mismatch in 'online_softmax': scores " +
                                  shapeStr(s) + " vs running sum " +
                                  shapeStr(l));
    if (acc[0] != M || acc[1] != D)
      return error(argLoc(4), "shape mismatch in 'online_softmax': the "
                              "accumulator is " + shapeStr(acc) +
                              " but should be " + shapeStr({M, D}));
    auto norm = flash::tile::Normalization::Deferred;
    if (const KeywordArg *kw = kwarg("normalization")) {
      const Expr &ne = *kw->value;
      if (ne.kind == ExprKind::Name && ne.name == "deferred")
        norm = flash::tile::Normalization::Deferred;
      else if (ne.kind == ExprKind::Name && ne.name == "eager")
        norm = flash::tile::Normalization::Eager;
      else
        return error(ne.loc, "normalization must be 'deferred' or 'eager'");
    }
    bool useExp2 = false;
    if (const KeywordArg *kw = kwarg("exp2")) {
      auto b = evalConstBool(*kw->value, "the exp2 option of online_softmax");
      if (!b)
        return std::nullopt;
      useExp2 = *b;
    }
    // The scores stand for scale * s; lowering folds the scale into the FMA
    // before each exponential.
    mlir::Value scale;
    if (const KeywordArg *kw = kwarg("scale")) {
      const Expr &se = *kw->value;
      OptVal c = evalPlain(se);
      if (!c)
        return std::nullopt;
      if (c->kind == Val::Int || c->kind == Val::Float) {
        if (!(c->asDouble() > 0)) {
          std::string shown;
          llvm::raw_string_ostream(shown) << llvm::format("%g", c->asDouble());
          return error(se.loc, "the scale of online_softmax must be "
                               "positive, got " + shown);
        }
        auto m = constScalar(*c, f32(), se.loc);
        if (!m)
          return std::nullopt;
        scale = *m;
      } else if (c->kind == Val::Runtime && !isTile(c->v.getType()) &&
                 c->v.getType().isF32()) {
        scale = c->v;
      } else {
        bool scalar = c->kind == Val::Runtime && !isTile(c->v.getType());
        return error(se.loc, "the scale of online_softmax must be an f32 "
                             "scalar, got " + describe(*c) +
                                 (scalar ? "; use cast(x, f32)" : ""));
      }
    }
    auto op = flash::tile::OnlineSoftmaxOp::create(
        builder, ml, v[2].getType(), v[3].getType(), v[4].getType(), v[0],
        v[1], v[2], v[3], v[4], scale, norm, useExp2);
    Val t;
    t.kind = Val::Tuple;
    for (mlir::Value r : op->getResults())
      t.elems.push_back(Val::ofValue(r));
    return t;
  }

  if (name == "finalize") {
    OptVal a = eval(*e.args[0]);
    if (!a || !needTile(*a, 0, "an f32 accumulator tile [M, D]", 2))
      return std::nullopt;
    OptVal l = eval(*e.args[1]);
    if (!l || !needTile(*l, 1, "an f32 running-sum tile [M]", 1))
      return std::nullopt;
    if (!elt(a->v.getType()).isF32() || !elt(l->v.getType()).isF32())
      return error(nl, "'finalize' expects f32 tiles, got " +
                           typeStr(a->v.getType()) + " and " +
                           typeStr(l->v.getType()));
    auto sa = shapeOf(a->v.getType()), sl = shapeOf(l->v.getType());
    if (sa[0] != sl[0])
      return error(nl, "shape mismatch in 'finalize': " + shapeStr(sa) +
                           " vs " + shapeStr(sl) + " (need [M, D] and [M])");
    return Val::ofValue(flash::tile::OnlineSoftmaxFinalizeOp::create(
        builder, ml, a->v.getType(), a->v, l->v));
  }

  if (name == "load") {
    Window w;
    if (!evalWindow(*e.args[0], "load", w))
      return std::nullopt;
    mlir::TypedAttr pad;
    Val pv = Val::ofInt(0);
    SMLoc pl = nl;
    if (const KeywordArg *kw = kwarg("pad")) {
      OptVal p = eval(*kw->value);
      if (!p)
        return std::nullopt;
      pl = kw->value->loc;
      if (!p->isConst())
        return error(pl, "the pad value of load() must be a compile-time "
                         "constant, got " + describe(*p));
      pv = *p;
    }
    if (mlir::isa<mlir::FloatType>(w.elt)) {
      if (pv.kind == Val::Bool)
        return error(pl, "cannot pad a " + eltName(w.elt) +
                             " window with a bool");
      pad = builder.getFloatAttr(w.elt, pv.asDouble());
    } else {
      if (pv.kind != Val::Int)
        return error(pl, "the pad value of an i32 window must be an integer "
                         "constant, got " + describe(pv));
      if (pv.i < INT32_MIN || pv.i > INT32_MAX)
        return error(pl, "pad value " + Twine(pv.i) + " does not fit in i32");
      pad = builder.getIntegerAttr(w.elt, pv.i);
    }
    return Val::ofValue(flash::tile::LoadOp::create(
        builder, ml, tileType(w.shape, w.elt), w.global, w.offsets, w.window,
        pad));
  }

  return error(nl, "builtin '" + name + "' is not implemented");
}

bool IRGen::emitStore(const Expr &call) {
  if (call.args.size() != 2 || !call.kwargs.empty())
    return (bool)evalCall(call), false; // reports arity / keyword errors
  Window w;
  if (!evalWindow(*call.args[0], "store", w))
    return false;
  OptVal v = evalPlain(*call.args[1]);
  if (!v)
    return false;
  SMLoc vl = call.args[1]->loc;
  mlir::Value value;
  if (v->isConst()) {
    if (v->kind == Val::Bool)
      return error(vl, "cannot store a bool into '" +
                           kernel.params[w.param].name + "' (" +
                           eltName(w.elt) + ")"),
             false;
    auto m = materialize(*v, vl, tileType(w.shape, w.elt));
    if (!m)
      return false;
    value = *m;
  } else {
    mlir::Type t = v->v.getType();
    if (elt(t) != w.elt)
      return error(vl, "store: the value has element type " + eltName(t) +
                           " but '" + kernel.params[w.param].name +
                           "' holds " + eltName(w.elt) + "; use cast(x, " +
                           eltName(w.elt) + ")"),
             false;
    if (isTile(t)) {
      auto s = shapeOf(t);
      bool ok = s.size() == w.shape.size();
      for (size_t i = 0; ok && i < s.size(); ++i)
        ok = s[i] == w.shape[i] || s[i] == 1;
      if (!ok)
        return error(vl, "shape mismatch in store: the value is " +
                             shapeStr(s) + " but the window is " +
                             shapeStr(w.shape)),
               false;
    }
    value = broadcastTo(v->v, w.shape, vl);
  }
  flash::tile::StoreOp::create(builder, loc(call.nameLoc), value, w.global,
                              w.offsets, w.window);
  return true;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool IRGen::bindNames(const Stmt &s, Val value) {
  if (value.kind == Val::Global) {
    error(s.value->loc, "cannot bind a tensor parameter to a variable; take "
                        "windows of it directly");
    return false;
  }
  if (s.names.size() == 1) {
    if (value.kind == Val::Tuple) {
      error(s.value->loc, "this expression produces " +
                              Twine(value.elems.size()) +
                              " values; bind them with '" +
                              (s.isMutable ? "var" : "let") + " a, b, c = ...'");
      return false;
    }
  } else if (value.kind != Val::Tuple ||
             value.elems.size() != s.names.size()) {
    error(s.value->loc, "expected " + Twine(s.names.size()) +
                            " values on the right-hand side, got " +
                            describe(value));
    return false;
  }
  for (size_t i = 0; i < s.names.size(); ++i) {
    Binding b;
    b.kind = s.isMutable ? Binding::Var : Binding::Let;
    b.val = s.names.size() == 1 ? value : value.elems[i];
    if (!declare(s.names[i], s.nameLocs[i], b))
      return false;
  }
  return true;
}

bool IRGen::assignTo(const std::string &name, SMLoc l, Val value,
                     SMLoc valueLoc) {
  Binding *b = lookup(name);
  if (!b) {
    std::string s = suggest(name);
    error(l, "assignment to undeclared variable '" + name + "'" +
                 (s.empty() ? std::string("; declare it with 'var ") + name +
                                  " = ...'"
                            : "; did you mean '" + s + "'?"));
    return false;
  }
  switch (b->kind) {
  case Binding::Const:
    error(l, "cannot assign to compile-time constant '" + name + "'");
    note(b->loc, "'" + name + "' declared here");
    return false;
  case Binding::Param:
    error(l, "cannot assign to parameter '" + name + "'");
    note(b->loc, "'" + name + "' declared here");
    return false;
  case Binding::Symbol:
    error(l, "cannot assign to shape symbol '" + name + "'");
    note(b->loc, "'" + name + "' declared here");
    return false;
  case Binding::LoopVar:
    error(l, "cannot assign to loop variable '" + name + "'");
    note(b->loc, "'" + name + "' declared here");
    return false;
  case Binding::Let:
    error(l, "cannot assign to '" + name + "': it was declared with 'let'");
    note(b->loc, "'" + name + "' declared here; use 'var' to make it mutable");
    return false;
  case Binding::Var:
    break;
  }
  if (!checkPlain(value, valueLoc))
    return false;
  if (b->carriedType) {
    mlir::Type ct = b->carriedType;
    if (value.isConst()) {
      if (value.kind == Val::Float && isI32(ct)) {
        error(valueLoc, "cannot assign a float constant to '" + name +
                            "', which is carried around the loop as " +
                            typeStr(ct));
        return false;
      }
      auto m = materialize(value, valueLoc, ct);
      if (!m)
        return false;
      value = Val::ofValue(*m);
    } else if (value.v.getType() != ct) {
      error(valueLoc, "'" + name + "' is carried around the enclosing loop "
                      "as " + typeStr(ct) + " but is assigned a value of "
                      "type " + typeStr(value.v.getType()) +
                      "; a loop-carried variable must keep its type");
      note(b->loc, "'" + name + "' declared here");
      return false;
    }
  }
  b->val = value;
  return true;
}

static void collectAssigned(const Block &b, std::vector<std::string> &out) {
  for (auto &s : b.stmts) {
    if (s->kind == StmtKind::Assign) {
      for (auto &n : s->names)
        if (!llvm::is_contained(out, n))
          out.push_back(n);
    } else if (s->kind == StmtKind::For) {
      collectAssigned(s->body, out);
    } else if (s->kind == StmtKind::If) {
      collectAssigned(s->body, out);
      collectAssigned(s->elseBody, out);
    }
  }
}

bool IRGen::emitFor(const Stmt &s) {
  auto lo = evalIndex(*s.lo, "the start of range()");
  if (!lo)
    return false;
  auto hi = evalIndex(*s.hi, "the end of range()");
  if (!hi)
    return false;
  int64_t step = 1;
  if (s.step) {
    auto st = evalConstInt(*s.step, "the step of range()");
    if (!st)
      return false;
    if (*st <= 0 || *st > INT32_MAX)
      return error(s.step->loc, "the step of range() must be a positive "
                                "compile-time constant that fits in i32, "
                                "got " + Twine(*st)),
             false;
    step = *st;
  }
  int64_t stages = 0; // 0: not given
  if (s.stages) {
    auto st = evalConstInt(*s.stages, "the stages of range()");
    if (!st)
      return false;
    if (*st < 1 || *st > INT32_MAX)
      return error(s.stages->loc, "the stages of range() must be at least 1 "
                                  "and fit in i32, got " + Twine(*st)),
             false;
    stages = *st;
  }
  auto stepV = constScalar(Val::ofInt(step), i32(), s.step ? s.step->loc : s.loc);
  if (!stepV)
    return false;
  if (Binding *prev = lookup(s.loopVar)) {
    error(s.loopVarLoc, "redefinition of '" + s.loopVar + "'");
    note(prev->loc, "previous definition here");
    return false;
  }
  // Loop-carried variables: outer `var`s assigned anywhere in the body.
  std::vector<std::string> assigned;
  collectAssigned(s.body, assigned);
  std::vector<Binding *> carried;
  std::vector<std::string> carriedNames;
  llvm::SmallVector<mlir::Value> inits;
  for (auto &n : assigned) {
    Binding *b = lookup(n);
    if (!b || b->kind != Binding::Var)
      continue;
    auto m = materialize(b->val, b->loc);
    if (!m)
      return false;
    carried.push_back(b);
    carriedNames.push_back(n);
    inits.push_back(*m);
  }
  mlir::Location ml = loc(s.loc);
  auto forOp = mlir::scf::ForOp::create(builder, ml, *lo, *hi, *stepV, inits);
  if (stages)
    forOp->setAttr(flash::tile::kNumStagesAttrName,
                   builder.getI64IntegerAttr(stages));
  mlir::Block *body = forOp.getBody();
  if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
    body->back().erase();
  mlir::OpBuilder::InsertionGuard ig(builder);
  builder.setInsertionPointToEnd(body);
  std::vector<std::pair<Val, mlir::Type>> saved;
  for (size_t i = 0; i < carried.size(); ++i) {
    saved.push_back({carried[i]->val, carried[i]->carriedType});
    carried[i]->val = Val::ofValue(forOp.getRegionIterArgs()[i]);
    carried[i]->carriedType = inits[i].getType();
  }
  bool ok;
  {
    ScopeGuard sg(*this);
    Binding lv;
    lv.kind = Binding::LoopVar;
    lv.val = Val::ofValue(forOp.getInductionVar());
    declare(s.loopVar, s.loopVarLoc, lv);
    ok = !failed && emitBlock(s.body);
  }
  if (!ok)
    return false;
  llvm::SmallVector<mlir::Value> yields;
  for (auto *b : carried) {
    auto m = materialize(b->val, s.loc, b->carriedType);
    if (!m)
      return false;
    yields.push_back(*m);
  }
  mlir::scf::YieldOp::create(builder, ml, yields);
  for (size_t i = 0; i < carried.size(); ++i) {
    carried[i]->val = Val::ofValue(forOp.getResult(i));
    carried[i]->carriedType = saved[i].second;
  }
  return true;
}

bool IRGen::emitBlock(const Block &b) {
  for (auto &s : b.stmts)
    if (!emitStmt(*s) || failed)
      return false;
  return true;
}

bool IRGen::emitStmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let: {
    OptVal v = eval(*s.value);
    if (!v)
      return false;
    return bindNames(s, *v);
  }
  case StmtKind::Assign: {
    OptVal v = eval(*s.value);
    if (!v)
      return false;
    if (v->kind == Val::Global)
      return error(s.value->loc, "cannot assign a tensor parameter to a "
                                 "variable"),
             false;
    if (s.names.size() == 1) {
      if (v->kind == Val::Tuple)
        return error(s.value->loc, "this expression produces " +
                                       Twine(v->elems.size()) +
                                       " values; assign them with "
                                       "'a, b, c = ...'"),
               false;
      return assignTo(s.names[0], s.nameLocs[0], *v, s.value->loc);
    }
    if (v->kind != Val::Tuple || v->elems.size() != s.names.size())
      return error(s.value->loc, "expected " + Twine(s.names.size()) +
                                     " values on the right-hand side, got " +
                                     describe(*v)),
             false;
    for (size_t i = 0; i < s.names.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (s.names[i] == s.names[j])
          return error(s.nameLocs[i], "'" + s.names[i] +
                                          "' appears twice in the assignment"),
                 false;
    for (size_t i = 0; i < s.names.size(); ++i)
      if (!assignTo(s.names[i], s.nameLocs[i], v->elems[i], s.value->loc))
        return false;
    return true;
  }
  case StmtKind::For:
    return emitFor(s);
  case StmtKind::If: {
    OptVal c = eval(*s.cond);
    if (!c)
      return false;
    if (c->kind != Val::Bool) {
      if (c->kind == Val::Runtime)
        return error(s.cond->loc, "the condition of 'if' must be a "
                                  "compile-time constant, but this is a "
                                  "runtime value (" +
                                      typeStr(c->v.getType()) +
                                      "); use where(cond, a, b) to select "
                                      "at runtime"),
               false;
      return error(s.cond->loc, "the condition of 'if' must be a bool, got " +
                                    describe(*c)),
             false;
    }
    const Block &taken = c->b ? s.body : s.elseBody;
    ScopeGuard sg(*this);
    return emitBlock(taken);
  }
  case StmtKind::StaticAssert: {
    if (s.args.size() != 1)
      return error(s.loc, "static_assert expects a condition and an optional "
                          "message: static_assert(COND, \"message\")"),
             false;
    OptVal c = eval(*s.args[0]);
    if (!c)
      return false;
    if (c->kind != Val::Bool)
      return error(s.args[0]->loc, "the condition of static_assert must be a "
                                   "compile-time bool, got " + describe(*c)),
             false;
    if (!c->b)
      return error(s.loc, s.hasMessage
                              ? "static assertion failed: " + s.message
                              : std::string("static assertion failed")),
             false;
    return true;
  }
  case StmtKind::Grid:
    return true; // emitted into the grid function
  case StmtKind::Warps: {
    if (s.args.size() != 1)
      return error(s.loc, "warps() expects one argument, got " +
                              Twine(s.args.size())),
             false;
    auto n = evalConstInt(*s.args[0], "the argument of warps()");
    if (!n)
      return false;
    if (*n <= 0 || *n > 32)
      return error(s.args[0]->loc, "the number of warps must be between 1 "
                                   "and 32 (1024 threads), got " + Twine(*n)),
             false;
    numWarps = *n;
    return true;
  }
  case StmtKind::MmaLayout: {
    if (s.args.size() != 2)
      return error(s.loc, "mma_layout() expects two lists, the warps and the "
                          "register repeats along M, N, K: "
                          "mma_layout([4, 1, 1], [2, 1, 1]), got " +
                              Twine(s.args.size()) + " arguments"),
             false;
    for (unsigned i = 0; i < 2; ++i) {
      const Expr &list = *s.args[i];
      const char *what = i == 0 ? "warps" : "register repeats";
      if (list.kind != ExprKind::List || list.args.size() != 3)
        return error(list.loc, Twine("the ") + what +
                                   " of mma_layout() must be a list of three "
                                   "integers [M, N, K]"),
               false;
      for (unsigned d = 0; d < 3; ++d) {
        auto v = evalConstInt(*list.args[d], Twine("an entry of the ") +
                                                 what + " of mma_layout()");
        if (!v)
          return false;
        if (*v < 1 || *v > 64)
          return error(list.args[d]->loc,
                       Twine("the ") + what +
                           " of mma_layout() must be between 1 and 64, got " +
                           Twine(*v)),
                 false;
        (i == 0 ? mmaWarps : mmaValues)[d] = *v;
      }
    }
    if (mmaWarps[2] != 1)
      return error(s.args[0]->loc, "mma_layout() cannot put warps along K "
                                   "(that would need a cross-warp reduction)"),
             false;
    mmaLayoutStmt = &s;
    return true;
  }
  case StmtKind::ExprStmt: {
    const Expr &e = *s.value;
    if (e.kind == ExprKind::Call && e.name == "store")
      return emitStore(e);
    return error(e.loc, "expression result is unused; only a call to "
                        "store(...) can be used as a statement"),
           false;
  }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Kernel signature
//===----------------------------------------------------------------------===//

static std::optional<Val> parseDefineValue(ConstParam::Kind kind,
                                           llvm::StringRef text) {
  text = text.trim();
  if (kind == ConstParam::Bool) {
    if (text == "true") return Val::ofBool(true);
    if (text == "false") return Val::ofBool(false);
    return std::nullopt;
  }
  int64_t iv;
  if (!text.getAsInteger(10, iv))
    return kind == ConstParam::Int ? Val::ofInt(iv) : Val::ofFloat((double)iv);
  if (kind == ConstParam::Int)
    return std::nullopt;
  if (text == "inf" || text == "+inf") return Val::ofFloat(INFINITY);
  if (text == "-inf") return Val::ofFloat(-INFINITY);
  if (text.empty())
    return std::nullopt;
  std::string s = text.str();
  // Only plain decimal literals (no hex floats, nan, ...).
  for (char c : s)
    if (!(std::isdigit((unsigned char)c) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return std::nullopt;
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d))
    return std::nullopt;
  return Val::ofFloat(d);
}

bool IRGen::evalConsts() {
  // -D overrides must name declared constants.
  for (const Define &d : defines) {
    bool found = llvm::any_of(kernel.consts,
                              [&](const ConstParam &c) { return c.name == d.name; });
    if (!found) {
      std::string declared;
      for (auto &c : kernel.consts)
        declared += (declared.empty() ? "" : ", ") + c.name;
      error("-D " + d.name + "=" + d.value + ": kernel '" + kernel.name +
            "' has no constant parameter '" + d.name + "' (" +
            (declared.empty() ? std::string("it declares none")
                              : "declared: " + declared) +
            ")");
      return false;
    }
  }
  // Evaluate defaults in a scratch function so that nothing leaks into the
  // module if an expression is not constant.
  auto scratch = mlir::ModuleOp::create(builder.getUnknownLoc());
  mlir::OwningOpRef<mlir::ModuleOp> scratchRef(scratch);
  builder.setInsertionPointToEnd(scratch.getBody());
  for (const ConstParam &c : kernel.consts) {
    const char *kindName = c.kind == ConstParam::Int     ? "int"
                           : c.kind == ConstParam::Float ? "float"
                                                         : "bool";
    const Define *override = nullptr;
    for (const Define &d : defines)
      if (d.name == c.name)
        override = &d; // the last -D wins
    Val value;
    if (override) {
      auto v = parseDefineValue(c.kind, override->value);
      if (!v) {
        const char *need = c.kind == ConstParam::Int ? "an integer literal"
                           : c.kind == ConstParam::Float
                               ? "an integer or float literal"
                               : "true or false";
        error("-D " + c.name + "=" + override->value + ": '" + c.name +
              "' is " + (c.kind == ConstParam::Int ? "an " : "a ") + kindName + " constant and needs " + need +
              ", got '" + override->value + "'");
        return false;
      }
      value = *v;
    } else {
      OptVal v = eval(*c.defaultValue);
      if (!v)
        return false;
      if (!v->isConst()) {
        error(c.defaultValue->loc, "the default value of '" + c.name +
                                       "' must be a compile-time constant");
        return false;
      }
      bool ok = (c.kind == ConstParam::Int && v->kind == Val::Int) ||
                (c.kind == ConstParam::Float &&
                 (v->kind == Val::Int || v->kind == Val::Float)) ||
                (c.kind == ConstParam::Bool && v->kind == Val::Bool);
      if (!ok) {
        error(c.defaultValue->loc, "the default value of " + Twine(kindName) +
                                       " constant '" + c.name + "' is " +
                                       describe(*v));
        return false;
      }
      value = *v;
      if (c.kind == ConstParam::Float)
        value = Val::ofFloat(v->asDouble());
    }
    Binding b;
    b.kind = Binding::Const;
    b.val = value;
    if (!declare(c.name, c.loc, b))
      return false;
    constValues.push_back({c.name, value});
  }
  builder.clearInsertionPoint();
  return true;
}

bool IRGen::buildParams() {
  for (const Param &p : kernel.params) {
    ParamInfo info;
    info.ast = &p;
    if (Binding *prev = lookup(p.name)) {
      error(p.loc, "redefinition of '" + p.name + "'");
      note(prev->loc, "previous definition here");
      return false;
    }
    for (auto &pi : params)
      if (pi.ast->name == p.name) {
        error(p.loc, "redefinition of parameter '" + p.name + "'");
        note(pi.ast->loc, "previous definition here");
        return false;
      }
    for (auto &sym : symbols)
      if (sym.first == p.name) {
        error(p.loc, "parameter '" + p.name + "' has the same name as a "
                                              "shape symbol");
        note(params[sym.second.first].ast->dims[sym.second.second].loc,
             "shape symbol '" + p.name + "' introduced here");
        return false;
      }
    mlir::Type e = p.elementType == "f16"    ? builder.getF16Type()
                   : p.elementType == "bf16" ? builder.getBF16Type()
                   : p.elementType == "f32"  ? f32()
                                             : i32();
    if (!p.isTensor) {
      info.type = e;
      params.push_back(info);
      continue;
    }
    llvm::SmallVector<int64_t> shape;
    llvm::SmallVector<mlir::StringAttr> names;
    for (unsigned d = 0; d < p.dims.size(); ++d) {
      const Param::Dim &dim = p.dims[d];
      if (dim.name.empty()) {
        if (dim.literal <= 0 || dim.literal > INT32_MAX) {
          error(dim.loc, "a static dim must be between 1 and 2^31 - 1, got " +
                             Twine(dim.literal));
          return false;
        }
        shape.push_back(dim.literal);
        names.push_back(mlir::StringAttr());
        continue;
      }
      if (Binding *b = lookup(dim.name); b && b->kind == Binding::Const) {
        if (b->val.kind != Val::Int) {
          error(dim.loc, "dim '" + dim.name + "' names a " +
                             (b->val.kind == Val::Bool ? "bool" : "float") +
                             " constant; static dims must be int constants");
          return false;
        }
        if (b->val.i <= 0 || b->val.i > INT32_MAX) {
          error(dim.loc, "dim '" + dim.name + "' has the value " +
                             Twine(b->val.i) +
                             "; a static dim must be between 1 and 2^31 - 1");
          return false;
        }
        shape.push_back(b->val.i);
        names.push_back(mlir::StringAttr());
        continue;
      }
      for (auto &q : kernel.params)
        if (q.name == dim.name) {
          error(dim.loc, "'" + dim.name + "' is a parameter and cannot be "
                                          "used as a dim");
          return false;
        }
      bool known = llvm::any_of(symbols,
                                [&](auto &s) { return s.first == dim.name; });
      if (!known)
        symbols.push_back({dim.name, {(unsigned)params.size(), d}});
      shape.push_back(mlir::ShapedType::kDynamic);
      names.push_back(builder.getStringAttr(dim.name));
    }
    info.type = flash::tile::GlobalType::get(&ctx, e, shape, names);
    params.push_back(info);
  }
  return true;
}

void IRGen::bindParamsAndSymbols(mlir::func::FuncOp f, bool withTensors) {
  mlir::Block &entry = f.getBody().front();
  builder.setInsertionPointToStart(&entry);
  for (unsigned i = 0; i < params.size(); ++i) {
    const Param &p = *params[i].ast;
    if (p.isTensor && !withTensors)
      continue;
    Binding b;
    b.kind = Binding::Param;
    if (p.isTensor) {
      b.val.kind = Val::Global;
      b.val.param = i;
      b.val.v = entry.getArgument(i);
    } else {
      b.val = Val::ofValue(entry.getArgument(i));
    }
    declare(p.name, p.loc, b);
  }
  for (auto &sym : symbols) {
    auto [pi, di] = sym.second;
    mlir::Value v = flash::tile::DimOp::create(
        builder, loc(params[pi].ast->dims[di].loc), i32(),
        entry.getArgument(pi), builder.getI64IntegerAttr(di));
    Binding b;
    b.kind = Binding::Symbol;
    b.val = Val::ofValue(v);
    declare(sym.first, params[pi].ast->dims[di].loc, b);
  }
}

static void findNested(const Block &b, StmtKind kind,
                       std::vector<const Stmt *> &out) {
  for (auto &s : b.stmts) {
    if (s->kind == kind)
      out.push_back(s.get());
    if (s->kind == StmtKind::For || s->kind == StmtKind::If) {
      findNested(s->body, kind, out);
      findNested(s->elseBody, kind, out);
    }
  }
}

bool IRGen::checkGridWarps(const Stmt **gridStmt) {
  for (StmtKind kind :
       {StmtKind::Grid, StmtKind::Warps, StmtKind::MmaLayout}) {
    const char *name = kind == StmtKind::Grid    ? "grid"
                       : kind == StmtKind::Warps ? "warps"
                                                 : "mma_layout";
    std::vector<const Stmt *> top, all;
    for (auto &s : kernel.body.stmts)
      if (s->kind == kind)
        top.push_back(s.get());
    findNested(kernel.body, kind, all);
    for (const Stmt *s : all)
      if (!llvm::is_contained(top, s)) {
        error(s->loc, Twine(name) + "() must be at the top level of the "
                                    "kernel body, not inside 'if' or 'for'");
        return false;
      }
    if (top.size() > 1) {
      error(top[1]->loc, Twine(name) + "() may appear only once");
      note(top[0]->loc, "previous " + Twine(name) + "() here");
      return false;
    }
    if (kind == StmtKind::Grid) {
      if (top.empty()) {
        error(kernel.loc, "kernel '" + kernel.name + "' has no grid(...) "
                          "statement; add e.g. 'grid(cdiv(N, BLOCK));'");
        return false;
      }
      *gridStmt = top[0];
      if (top[0]->args.empty() || top[0]->args.size() > 3) {
        error(top[0]->loc, "grid() expects 1 to 3 sizes, got " +
                               Twine(top[0]->args.size()));
        return false;
      }
    }
  }
  return true;
}

mlir::OwningOpRef<mlir::ModuleOp> IRGen::run() {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  fileName = builder.getStringAttr(
      sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier());
  ScopeGuard global(*this);
  if (!evalConsts())
    return nullptr;
  if (!buildParams())
    return nullptr;
  const Stmt *gridStmt = nullptr;
  if (!checkGridWarps(&gridStmt))
    return nullptr;

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(loc(kernel.loc));
  llvm::SmallVector<mlir::Type> argTypes;
  for (auto &p : params)
    argTypes.push_back(p.type);
  std::string gridName = kernel.name + "_grid";
  builder.setInsertionPointToEnd(module->getBody());
  auto gridFn = mlir::func::FuncOp::create(
      builder, loc(gridStmt->loc), gridName,
      builder.getFunctionType(argTypes, {i32(), i32(), i32()}));
  auto kernelFn = mlir::func::FuncOp::create(
      builder, loc(kernel.loc), kernel.name,
      builder.getFunctionType(argTypes, {}));
  for (auto f : {gridFn, kernelFn}) {
    f.addEntryBlock();
    for (unsigned i = 0; i < params.size(); ++i)
      f.setArgAttr(i, flash::tile::kArgNameAttrName,
                   builder.getStringAttr(params[i].ast->name));
  }

  // Kernel body.
  {
    ScopeGuard sg(*this);
    bindParamsAndSymbols(kernelFn, /*withTensors=*/true);
    if (failed)
      return nullptr;
    builder.setInsertionPointToEnd(&kernelFn.getBody().front());
    if (!emitBlock(kernel.body) || failed)
      return nullptr;
    mlir::func::ReturnOp::create(builder, loc(kernel.loc));
  }

  // Grid function.
  {
    ScopeGuard sg(*this);
    inGrid = true;
    bindParamsAndSymbols(gridFn, /*withTensors=*/false);
    if (failed)
      return nullptr;
    builder.setInsertionPointToEnd(&gridFn.getBody().front());
    llvm::SmallVector<mlir::Value> sizes;
    for (auto &a : gridStmt->args) {
      OptVal v = evalPlain(*a);
      if (!v)
        return nullptr;
      if (v->kind == Val::Int) {
        if (v->i <= 0) {
          error(a->loc, "grid size must be positive, got " + Twine(v->i));
          return nullptr;
        }
      } else if (!(v->kind == Val::Runtime && !isTile(v->v.getType()) &&
                   isI32(v->v.getType()))) {
        error(a->loc, "grid sizes must be integer scalars, got " +
                          describe(*v));
        return nullptr;
      }
      auto m = materialize(*v, a->loc, i32());
      if (!m)
        return nullptr;
      sizes.push_back(*m);
    }
    while (sizes.size() < 3)
      sizes.push_back(*constScalar(Val::ofInt(1), i32(), gridStmt->loc));
    mlir::func::ReturnOp::create(builder, loc(gridStmt->loc), sizes);
    inGrid = false;
  }

  llvm::SmallVector<mlir::NamedAttribute> consts;
  for (auto &[name, v] : constValues) {
    mlir::Attribute a = v.kind == Val::Int
                            ? mlir::Attribute(builder.getI64IntegerAttr(v.i))
                        : v.kind == Val::Float
                            ? mlir::Attribute(builder.getF64FloatAttr(v.f))
                            : mlir::Attribute(builder.getBoolAttr(v.b));
    consts.push_back(builder.getNamedAttr(name, a));
  }
  kernelFn->setAttr(flash::tile::kGridAttrName,
                    mlir::FlatSymbolRefAttr::get(&ctx, gridName));
  kernelFn->setAttr(flash::tile::kNumWarpsAttrName,
                    builder.getI32IntegerAttr(numWarps));
  kernelFn->setAttr(flash::tile::kConstantsAttrName,
                    builder.getDictionaryAttr(consts));
  if (mmaLayoutStmt) {
    int64_t warps = mmaWarps[0] * mmaWarps[1] * mmaWarps[2];
    if (warps != numWarps) {
      error(mmaLayoutStmt->loc, "mma_layout() spreads the MMA over " +
                                    Twine(warps) + " warps but the kernel has " +
                                    Twine(numWarps) + " (see warps())");
      return nullptr;
    }
    kernelFn->setAttr(flash::tile::kMmaLayoutAttrName,
                      flash::tile::MmaLayoutAttr::get(&ctx, mmaWarps, mmaValues));
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool flash::parseDefine(llvm::StringRef text, Define &out) {
  auto [name, value] = text.split('=');
  if (name.size() == text.size() || name.trim().empty())
    return false;
  out.name = name.trim().str();
  out.value = value.trim().str();
  return true;
}

/// Lower an already parsed kernel. Does not run the verifier.
static mlir::OwningOpRef<mlir::ModuleOp>
generateTileIR(const KernelDecl &kernel, llvm::ArrayRef<Define> defines,
               mlir::MLIRContext &context, DiagnosticPrinter &diags) {
  IRGen gen(kernel, defines, context, diags);
  return gen.run();
}

mlir::OwningOpRef<mlir::ModuleOp>
flash::compileTileSource(llvm::SourceMgr &sourceMgr,
                         llvm::ArrayRef<Define> defines,
                         mlir::MLIRContext &context, DiagnosticPrinter &diags,
                         CompileStatus *status) {
  if (status)
    *status = CompileStatus::UserError;
  loadAllDialects(context);
  std::unique_ptr<KernelDecl> kernel = parseKernel(diags);
  if (!kernel || diags.hadError())
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string verifierOutput;
  {
    llvm::raw_string_ostream os(verifierOutput);
    mlir::ScopedDiagnosticHandler handler(
        &context, [&](mlir::Diagnostic &d) {
          os << d.getLocation() << ": " << d << "\n";
          for (auto &n : d.getNotes())
            os << "  note: " << n.getLocation() << ": " << n << "\n";
          return mlir::success();
        });
    module = generateTileIR(*kernel, defines, context, diags);
    if (!module || diags.hadError())
      return nullptr;
    if (mlir::failed(mlir::verify(*module))) {
      if (status)
        *status = CompileStatus::InternalError;
      diags.getStream() << "flashc: internal error: the IR generated for '"
                        << kernel->name << "' fails verification:\n"
                        << verifierOutput;
      return nullptr;
    }
  }
  if (status)
    *status = CompileStatus::Success;
  return module;
}

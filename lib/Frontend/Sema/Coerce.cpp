//===- Coerce.cpp ---------------------------------------------------------===//

#include "Sema/Coerce.h"
#include "Sema/Types.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Runtime/Float8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/Support/FormatVariadic.h"

using namespace flash;
using namespace flash::frontend;
using llvm::SMLoc;
using llvm::Twine;

bool frontend::checkShape(FrontendContext &cx, llvm::ArrayRef<int64_t> shape,
                          SMLoc loc) {
  if (shape.empty()) {
    cx.error(loc, "a tile needs at least one dim");
    return false;
  }
  if (shape.size() > kMaxRank) {
    cx.error(loc, "tile rank " + Twine(shape.size()) +
                      " exceeds the limit of " + Twine(kMaxRank));
    return false;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) {
      cx.error(loc, "tile dims must be positive, got shape " + shapeStr(shape));
      return false;
    }
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxTileElements) {
      cx.error(loc, "tile of shape " + shapeStr(shape) +
                        " is too large (the limit is 2^20 = 1048576 elements)");
      return false;
    }
  }
  return true;
}

bool frontend::checkPlain(FrontendContext &cx, const Val &v, SMLoc loc) {
  if (v.kind == Val::Global) {
    std::string name = cx.kernel.params[v.param].name;
    cx.error(loc, "'" + name + "' is a tensor parameter; read a window of it "
                               "with load(" + name + "[...])");
    return false;
  }
  if (v.kind == Val::Function) {
    cx.error(loc, "'" + v.fn->name + "' is a function; call it as " +
                      v.fn->name + "(...) or pass it as an argument (a "
                      "function is not a value of an expression)");
    return false;
  }
  if (v.kind == Val::Tuple && v.elems.empty()) {
    cx.error(loc, "expected a value, but this call of a function returns "
                  "none");
    return false;
  }
  if (v.kind == Val::Tuple) {
    cx.error(loc, "expected a single value, got " + describe(v) +
                      " (bind them with 'a, b, c = ...')");
    return false;
  }
  return true;
}

/// An i32 constant, or the error for a value that is not one.
static std::optional<mlir::Value> constI32(FrontendContext &cx, const Val &c,
                                           SMLoc loc) {
  if (c.kind == Val::Float)
    return cx.error(loc, "cannot use the float constant " +
                             Twine(llvm::formatv("{0}", c.f).str()) +
                             " where an i32 value is expected; use cast(x, "
                             "f32) on the other operand, or an integer");
  if (c.i < INT32_MIN || c.i > INT32_MAX)
    return cx.error(loc, "integer constant " + Twine(c.i) +
                             " does not fit in i32");
  mlir::OpBuilder &b = cx.builder;
  return mlir::arith::ConstantOp::create(b, cx.loc(loc),
                                         b.getIntegerAttr(b.getI32Type(), c.i))
      .getResult();
}

std::optional<mlir::Value> frontend::constScalar(FrontendContext &cx,
                                                 const Val &c,
                                                 mlir::Type element,
                                                 SMLoc loc) {
  mlir::OpBuilder &b = cx.builder;
  if (c.kind == Val::Type)
    return cx.error(loc, "expected a value, got " + describe(c) +
                             " (a type names the element type of "
                             "parameters, cast(), zeros() and full())");
  mlir::Type e = element;
  if (!e)
    e = c.kind == Val::Int     ? mlir::Type(b.getI32Type())
        : c.kind == Val::Float ? mlir::Type(b.getF32Type())
                               : mlir::Type(b.getI1Type());
  e = elementType(e);
  if (c.kind == Val::Bool) {
    if (!e.isInteger(1))
      return cx.error(loc, "cannot use a bool constant where a value of type " +
                               eltName(e) + " is expected");
    return mlir::arith::ConstantOp::create(b, cx.loc(loc), b.getBoolAttr(c.b))
        .getResult();
  }
  if (mlir::isa<mlir::FloatType>(e)) {
    double v = c.asDouble();
    // A constant rounds as a runtime cast does (satfinite), where APFloat
    // would turn an out-of-range e4m3 value into NaN.
    if (mlir::isa<mlir::Float8E4M3FNType>(e))
      v = roundToE4M3(v);
    return mlir::arith::ConstantOp::create(b, cx.loc(loc), b.getFloatAttr(e, v))
        .getResult();
  }
  if (e.isInteger(32))
    return constI32(cx, c, loc);
  if (e.isInteger(1))
    return cx.error(loc, "cannot use " + describe(c) +
                             " where a bool value is expected");
  return cx.error(loc, "cannot materialise a constant of type " + eltName(e));
}

std::optional<mlir::Value> frontend::materialize(FrontendContext &cx,
                                                 const Val &v, SMLoc loc,
                                                 mlir::Type like) {
  if (v.kind == Val::Runtime)
    return v.v;
  if (!checkPlain(cx, v, loc))
    return std::nullopt;
  auto s = constScalar(cx, v, like ? elementType(like) : mlir::Type(), loc);
  if (!s)
    return std::nullopt;
  if (like && isTile(like))
    return splat(cx, *s, shapeOf(like), loc);
  return s;
}

mlir::Value frontend::splat(FrontendContext &cx, mlir::Value scalar,
                            llvm::ArrayRef<int64_t> shape, SMLoc loc) {
  return tile::SplatOp::create(cx.builder, cx.loc(loc),
                               tileType(shape, scalar.getType()), scalar)
      .getResult();
}

mlir::Value frontend::broadcastTo(FrontendContext &cx, mlir::Value v,
                                  llvm::ArrayRef<int64_t> shape, SMLoc loc) {
  if (shape.empty())
    return v;
  if (!isTile(v.getType()))
    return splat(cx, v, shape, loc);
  if (llvm::ArrayRef<int64_t>(shapeOf(v.getType())) == shape)
    return v;
  return tile::BroadcastOp::create(cx.builder, cx.loc(loc),
                                   tileType(shape, elementType(v.getType())),
                                   v)
      .getResult();
}

std::optional<llvm::SmallVector<int64_t>>
frontend::broadcastShape(FrontendContext &cx, llvm::ArrayRef<mlir::Type> types,
                         SMLoc loc, llvm::StringRef what) {
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
      return cx.error(loc, "shape mismatch in " + what + ": " + shapeStr(out) +
                               " vs " + shapeStr(s) +
                               " (tiles must have the same rank; use x[:, "
                               "None] or x[None, :] to add a dim)");
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == out[i] || s[i] == 1)
        continue;
      if (out[i] == 1) {
        out[i] = s[i];
        continue;
      }
      return cx.error(loc, "shape mismatch in " + what + ": " + shapeStr(out) +
                               " vs " + shapeStr(s) + " (dim " + Twine(i) +
                               ": " + Twine(out[i]) + " vs " + Twine(s[i]) +
                               ")");
    }
  }
  if (have && !checkShape(cx, out, loc))
    return std::nullopt;
  return out;
}

/// The element type the runtime operands share, null if there are none;
/// reports operands that disagree.
static std::optional<mlir::Type> commonElementType(FrontendContext &cx,
                                                   llvm::ArrayRef<Val> vals,
                                                   llvm::ArrayRef<SMLoc> locs,
                                                   SMLoc opLoc,
                                                   llvm::StringRef what) {
  mlir::Type common;
  for (size_t i = 0; i < vals.size(); ++i) {
    if (!checkPlain(cx, vals[i], locs[i]))
      return std::nullopt;
    if (vals[i].kind != Val::Runtime)
      continue;
    mlir::Type e = elementType(vals[i].v.getType());
    if (!common)
      common = e;
    else if (common != e)
      return cx.error(opLoc, "mismatched element types in " + what + ": " +
                                 eltName(common) + " vs " + eltName(e) +
                                 "; use cast(x, T) to convert one operand");
  }
  return common;
}

/// Reports a constant that cannot take the runtime operands' element type.
static bool checkConstFits(FrontendContext &cx, const Val &c, mlir::Type want,
                           SMLoc loc, llvm::StringRef what) {
  if (!want)
    return true;
  if (c.kind == Val::Float && want.isInteger(32)) {
    cx.error(loc, "mismatched element types in " + what +
                      ": a float constant cannot be combined with an i32 "
                      "value; use cast(x, f32)");
    return false;
  }
  if (c.kind != Val::Bool && want.isInteger(1)) {
    cx.error(loc, "mismatched element types in " + what + ": " + describe(c) +
                      " cannot be combined with a bool value");
    return false;
  }
  if (c.kind == Val::Bool && !want.isInteger(1)) {
    cx.error(loc, "mismatched element types in " + what +
                      ": a bool constant cannot be combined with " +
                      eltName(want) + " values");
    return false;
  }
  return true;
}

bool frontend::unify(FrontendContext &cx, llvm::ArrayRef<Val> vals,
                     llvm::ArrayRef<SMLoc> locs, SMLoc opLoc,
                     llvm::StringRef what,
                     llvm::SmallVectorImpl<mlir::Value> &out) {
  std::optional<mlir::Type> common =
      commonElementType(cx, vals, locs, opLoc, what);
  if (!common)
    return false;
  llvm::SmallVector<mlir::Value> mats;
  for (size_t i = 0; i < vals.size(); ++i) {
    if (vals[i].kind == Val::Runtime) {
      mats.push_back(vals[i].v);
      continue;
    }
    if (!checkConstFits(cx, vals[i], *common, locs[i], what))
      return false;
    auto m = constScalar(cx, vals[i], *common, locs[i]);
    if (!m)
      return false;
    mats.push_back(*m);
  }
  llvm::SmallVector<mlir::Type> types;
  for (auto v : mats)
    types.push_back(v.getType());
  auto shape = broadcastShape(cx, types, opLoc, what);
  if (!shape)
    return false;
  for (auto v : mats)
    out.push_back(broadcastTo(cx, v, *shape, opLoc));
  return true;
}

//===- Annotation.cpp -----------------------------------------------------===//

#include "Sema/Annotation.h"
#include "Sema/Types.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

/// "fn" or "fn(f32[M, N], int) -> f32[M, N]".
static std::string spellingFn(const TypeAnnot &t) {
  if (!t.hasSignature)
    return "fn";
  std::string s = "fn(";
  for (size_t i = 0; i < t.fnParams.size(); ++i)
    s += (i ? ", " : "") + spelling(t.fnParams[i]);
  s += ")";
  if (t.fnResults.size() == 1)
    return s + " -> " + spelling(t.fnResults[0]);
  if (t.fnResults.empty())
    return s;
  s += " -> (";
  for (size_t i = 0; i < t.fnResults.size(); ++i)
    s += (i ? ", " : "") + spelling(t.fnResults[i]);
  return s + ")";
}

std::string frontend::spelling(const TypeAnnot &t) {
  switch (t.kind) {
  case TypeAnnot::Any:
    return "any value";
  case TypeAnnot::Scalar:
    return t.element;
  case TypeAnnot::Const:
    return "const " + t.element;
  case TypeAnnot::Tile:
    return "tile";
  case TypeAnnot::Tensor:
    return "tensor";
  case TypeAnnot::Type:
    return "type";
  case TypeAnnot::Function:
    return spellingFn(t);
  case TypeAnnot::Shaped:
    break;
  }
  std::string s = t.element + "[";
  for (size_t i = 0; i < t.dims.size(); ++i)
    s += (i ? ", " : "") + (t.dims[i].name.empty()
                                ? std::to_string(t.dims[i].literal)
                                : t.dims[i].name);
  return s + "]";
}

/// What `t` accepts, for "must be ..." messages.
static std::string accepted(const TypeAnnot &t) {
  switch (t.kind) {
  case TypeAnnot::Scalar:
    return (t.element == "int" ? "an " : "a ") + t.element +
           " scalar, compile-time or runtime (" + spelling(t) + ")";
  case TypeAnnot::Const:
    return "a compile-time " + t.element + " constant (" + spelling(t) + ")";
  case TypeAnnot::Tile:
    return "a tile (tile)";
  case TypeAnnot::Tensor:
    return "a tensor parameter of the kernel (tensor)";
  case TypeAnnot::Type:
    return "an element type such as f16 (type)";
  case TypeAnnot::Function:
    return "a function, passed by its name (" + spelling(t) + ")";
  default:
    return "a tile of type " + spelling(t);
  }
}

/// Whether `v` has the kind of value `t` asks for (dims aside).
static bool matchesKind(const TypeAnnot &t, Val &v) {
  bool runtimeScalar = v.kind == Val::Runtime && v.isRuntimeScalar();
  switch (t.kind) {
  case TypeAnnot::Any:
    return true;
  case TypeAnnot::Scalar:
  case TypeAnnot::Const:
    if (t.element == "int")
      return v.kind == Val::Int ||
             (t.kind == TypeAnnot::Scalar && runtimeScalar &&
              isI32(v.v.getType()));
    if (t.element == "bool")
      return v.kind == Val::Bool ||
             (t.kind == TypeAnnot::Scalar && runtimeScalar &&
              isI1(v.v.getType()));
    if (v.kind == Val::Int)
      v = Val::ofFloat(v.asDouble());
    return v.kind == Val::Float || (t.kind == TypeAnnot::Scalar &&
                                    runtimeScalar && isFloat(v.v.getType()));
  case TypeAnnot::Tile:
    return v.kind == Val::Runtime && isTile(v.v.getType());
  case TypeAnnot::Tensor:
    return v.kind == Val::Global;
  case TypeAnnot::Type:
    return v.kind == Val::Type;
  case TypeAnnot::Function:
    return v.kind == Val::Function;
  case TypeAnnot::Shaped:
    return v.kind == Val::Runtime && isTile(v.v.getType()) &&
           eltName(v.v.getType()) == t.element &&
           shapeOf(v.v.getType()).size() == t.dims.size();
  }
  return false;
}

/// Checks (or binds) dim `d` of annotation `t` against `size`.
static bool checkDim(FrontendContext &cx, ScopeStack &scopes,
                     const TypeAnnot &t, unsigned d, int64_t size,
                     SMLoc loc, const std::string &what, bool bindDims) {
  const Param::Dim &dim = t.dims[d];
  auto mismatch = [&](const Twine &expected) {
    cx.error(loc, what + " has size " + Twine(size) + " in dim " + Twine(d) +
                      ", but its type " + spelling(t) + " needs " + expected);
    cx.note(dim.loc, "dim " + Twine(d) + " of the type declared here");
    return false;
  };
  if (dim.name.empty())
    return size == dim.literal || mismatch(Twine(dim.literal));
  // A parameter's dim names are the function's own (a kernel constant of
  // that name does not constrain them); a result's may name a constant.
  Binding *b = bindDims ? scopes.lookupLocal(dim.name)
                        : scopes.lookup(dim.name);
  if (!b) {
    if (!bindDims) {
      cx.error(dim.loc, "dim '" + dim.name + "' of the result type must "
                        "name a compile-time integer of the function (a "
                        "parameter or a dim of a parameter's type)");
      return false;
    }
    Binding c;
    c.kind = Binding::Const;
    c.val = Val::ofInt(size);
    return scopes.declare(dim.name, dim.loc, c);
  }
  if (b->val.kind != Val::Int) {
    cx.error(dim.loc, "dim '" + dim.name + "' names " + describe(b->val) +
                          ", not a compile-time integer");
    cx.note(b->loc, "'" + dim.name + "' declared here");
    return false;
  }
  return size == b->val.i ||
         mismatch(dim.name + " = " + Twine(b->val.i));
}

/// Whether the function `v` can be called as `t` says: with as many
/// positional arguments as `t` lists and, where both declare results, as
/// many results. The types are checked at each call (IRGen::inlineCall).
static bool checkSignature(FrontendContext &cx, const TypeAnnot &t,
                           const Val &v, SMLoc loc, const std::string &what) {
  if (!t.hasSignature)
    return true;
  const FunctionDecl &fn = *v.fn;
  size_t n = t.fnParams.size(), total = fn.params.size(), required = 0;
  while (required < total && !fn.params[required].defaultValue)
    ++required;
  auto count = [](size_t k, const char *noun) {
    return std::to_string(k) + " " + noun + (k == 1 ? "" : "s");
  };
  if (n < required || n > total) {
    std::string takes =
        required == total
            ? count(total, "argument")
            : std::to_string(required) + " to " + count(total, "argument");
    cx.error(loc, what + " must be a function of " + count(n, "argument") +
                      " (" + spelling(t) + "), but '" + fn.name +
                      "' takes " + takes);
    cx.note(fn.loc, "'" + fn.name + "' is defined here");
    return false;
  }
  if (!t.fnResults.empty() && !fn.results.empty() &&
      t.fnResults.size() != fn.results.size()) {
    cx.error(loc, what + " must be a function of " +
                      count(t.fnResults.size(), "result") + " (" +
                      spelling(t) + "), but '" + fn.name + "' declares " +
                      std::to_string(fn.results.size()));
    cx.note(fn.loc, "'" + fn.name + "' is defined here");
    return false;
  }
  return true;
}

bool frontend::checkAnnotation(FrontendContext &cx, ScopeStack &scopes,
                               const TypeAnnot &t, Val &v, SMLoc loc,
                               const std::string &what, bool bindDims) {
  if (!matchesKind(t, v)) {
    cx.error(loc, what + " must be " + accepted(t) + ", got " + describe(v));
    cx.note(t.loc, "its type is declared here");
    return false;
  }
  if (t.kind == TypeAnnot::Function)
    return checkSignature(cx, t, v, loc, what);
  if (t.kind != TypeAnnot::Shaped)
    return true;
  auto shape = shapeOf(v.v.getType());
  for (unsigned d = 0; d < t.dims.size(); ++d)
    if (!checkDim(cx, scopes, t, d, shape[d], loc, what, bindDims))
      return false;
  return true;
}

//===- Annotation.cpp -----------------------------------------------------===//

#include "Sema/Annotation.h"
#include "Sema/Types.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

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
  Binding *b = scopes.lookup(dim.name);
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

bool frontend::checkAnnotation(FrontendContext &cx, ScopeStack &scopes,
                               const TypeAnnot &t, Val &v, SMLoc loc,
                               const std::string &what, bool bindDims) {
  if (!matchesKind(t, v)) {
    cx.error(loc, what + " must be " + accepted(t) + ", got " + describe(v));
    cx.note(t.loc, "its type is declared here");
    return false;
  }
  if (t.kind != TypeAnnot::Shaped)
    return true;
  auto shape = shapeOf(v.v.getType());
  for (unsigned d = 0; d < t.dims.size(); ++d)
    if (!checkDim(cx, scopes, t, d, shape[d], loc, what, bindDims))
      return false;
  return true;
}

//===- Memory.cpp - Windows of tensor parameters, load and store ----------===//
//
// A window `X[b, m : m + BLOCK_M, :]` picks one element along each indexed
// dim and a compile-time number of elements along each sliced dim; load,
// store and atomic_add move a tile of the sliced dims' sizes. Two more forms
// are loads only: every entry a scalar reads one element as a scalar
// (tile.load_scalar), and 1-D i32 tiles as entries gather rows
// (`K[pages, slots, h, :]`: row r at page pages[r], slot slots[r]).
//
//===----------------------------------------------------------------------===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Types.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

namespace {
/// What to do instead of using a loaded tile as an index.
constexpr const char *kScalarReadHint =
    "; read one element as a scalar with load(X[i, j]) (every entry an "
    "index)";

struct Window {
  unsigned param = 0;
  mlir::Value global;
  llvm::SmallVector<mlir::Value> offsets; // one per dim of the parameter
  llvm::SmallVector<int64_t> window;      // the sliced dims
  llvm::SmallVector<int64_t> shape;       // the tile's shape
  mlir::Type elt;
  /// Gathered dims and their index tiles (1-D i32, one length: the rows).
  llvm::SmallVector<int64_t> gather;
  llvm::SmallVector<mlir::Value> indices;
  /// Where the first index tile and the first slice are, for diagnostics.
  SMLoc firstIndexTile, firstSlice;
  bool isScalar() const { return window.empty() && gather.empty(); }
};

/// Lowers the subscript of a window, one entry (dim) at a time.
class WindowBuilder {
public:
  WindowBuilder(IRGen &gen, const Expr &e, const Param &param,
                tile::GlobalType type, Window &w)
      : gen(gen), cx(gen.cx), e(e), param(param), type(type), w(w) {}

  bool addEntry(unsigned dim, const SubscriptEntry &entry);

private:
  bool addIndex(unsigned dim, const SubscriptEntry &entry);
  bool addFull(unsigned dim, const SubscriptEntry &entry);
  bool addSlice(unsigned dim, const SubscriptEntry &entry);
  std::optional<int64_t> sliceSize(const SubscriptEntry &entry,
                                   const Val &lo);

  IRGen &gen;
  FrontendContext &cx;
  const Expr &e;
  const Param &param;
  tile::GlobalType type;
  Window &w;
};
} // namespace

bool WindowBuilder::addEntry(unsigned dim, const SubscriptEntry &entry) {
  switch (entry.kind) {
  case SubscriptEntry::NewAxis:
    cx.error(entry.loc, "None is not allowed in a window of a tensor "
                        "parameter");
    return false;
  case SubscriptEntry::Index:
    return addIndex(dim, entry);
  case SubscriptEntry::Full:
  case SubscriptEntry::Slice:
    if (!w.firstSlice.isValid())
      w.firstSlice = entry.loc;
    return entry.kind == SubscriptEntry::Full ? addFull(dim, entry)
                                              : addSlice(dim, entry);
  }
  return false;
}

/// An integer scalar picks one index; a 1-D i32 tile gathers rows.
bool WindowBuilder::addIndex(unsigned dim, const SubscriptEntry &entry) {
  const Expr &index = *entry.index;
  OptVal v = gen.evalPlain(index);
  if (!v)
    return false;
  if (v->kind == Val::Int || (v->isRuntimeScalar() && isI32(v->v.getType()))) {
    auto offset = v->kind == Val::Int
                      ? constScalar(cx, *v, cx.builder.getI32Type(), index.loc)
                      : std::optional<mlir::Value>(v->v);
    if (!offset)
      return false;
    w.offsets.push_back(*offset);
    return true;
  }
  if (v->kind != Val::Runtime || !isTile(v->v.getType()) ||
      shapeOf(v->v.getType()).size() != 1 || !isI32(v->v.getType())) {
    bool tile = v->kind == Val::Runtime && isTile(v->v.getType());
    cx.error(index.loc,
             "a window index must be an integer scalar, or a 1-D i32 tile "
             "of row indices (a gather), got " + describe(*v) +
                 (tile ? kScalarReadHint : ""));
    return false;
  }
  int64_t rows = shapeOf(v->v.getType())[0];
  if (w.firstSlice.isValid()) {
    cx.error(index.loc, "an index tile must come before every sliced dim: "
                        "the gathered rows are the tile's first dim");
    cx.note(w.firstSlice, "sliced dim here");
    return false;
  }
  if (!w.gather.empty() && w.shape[0] != rows) {
    cx.error(index.loc, "index tiles must have the same length: this one "
                        "has " + Twine(rows) + " elements, the first " +
                            Twine(w.shape[0]));
    cx.note(w.firstIndexTile, "first index tile here");
    return false;
  }
  if (w.gather.empty()) {
    w.firstIndexTile = index.loc;
    w.shape.push_back(rows);
  }
  auto zero = constScalar(cx, Val::ofInt(0), cx.builder.getI32Type(),
                          index.loc);
  if (!zero)
    return false;
  w.offsets.push_back(*zero);
  w.gather.push_back(dim);
  w.indices.push_back(v->v);
  return true;
}

bool WindowBuilder::addFull(unsigned dim, const SubscriptEntry &entry) {
  if (!type.isStaticDim(dim)) {
    cx.error(entry.loc, "':' takes a whole dim and needs a static size, but "
                        "dim " + Twine(dim) + " of '" + e.lhs->name +
                            "' is the symbol '" + param.dims[dim].name +
                            "'; write 'start : start + SIZE'");
    return false;
  }
  auto zero = constScalar(cx, Val::ofInt(0), cx.builder.getI32Type(),
                          entry.loc);
  if (!zero)
    return false;
  w.offsets.push_back(*zero);
  w.window.push_back(dim);
  w.shape.push_back(type.getShape()[dim]);
  return true;
}

/// The size of `lo : hi`: both ends fold, or hi is `lo + C` / `C + lo`.
std::optional<int64_t> WindowBuilder::sliceSize(const SubscriptEntry &entry,
                                                const Val &lo) {
  const Expr &hi = *entry.hi;
  const Expr *sizeExpr = nullptr;
  if (hi.kind == ExprKind::Binary && hi.binaryOp == BinaryOp::Add) {
    if (structurallyEqual(*hi.lhs, *entry.lo))
      sizeExpr = hi.rhs.get();
    else if (structurallyEqual(*hi.rhs, *entry.lo))
      sizeExpr = hi.lhs.get();
  }
  if (sizeExpr) {
    OptVal s = gen.eval(*sizeExpr);
    if (!s)
      return std::nullopt;
    if (s->kind != Val::Int)
      return cx.error(sizeExpr->loc, "slice size must be a compile-time "
                                     "integer constant, got " + describe(*s));
    return s->i;
  }
  OptVal h = gen.evalPlain(hi);
  if (!h)
    return std::nullopt;
  if (lo.kind != Val::Int || h->kind != Val::Int)
    return cx.error(entry.loc, "slice size must be a compile-time constant; "
                               "write 'start : start + SIZE'");
  int64_t d;
  if (__builtin_sub_overflow(h->i, lo.i, &d))
    return cx.error(hi.loc, "integer overflow in slice size");
  return d;
}

bool WindowBuilder::addSlice(unsigned dim, const SubscriptEntry &entry) {
  OptVal lo = gen.evalPlain(*entry.lo);
  if (!lo)
    return false;
  std::optional<int64_t> size = sliceSize(entry, *lo);
  if (!size)
    return false;
  if (*size <= 0) {
    cx.error(entry.loc, "slice size must be positive, got " + Twine(*size));
    return false;
  }
  if (*size > kMaxTileElements) {
    cx.error(entry.loc, "slice size " + Twine(*size) +
                            " is too large (the limit is 2^20)");
    return false;
  }
  mlir::Value offset;
  if (lo->kind == Val::Int) {
    auto c = constScalar(cx, *lo, cx.builder.getI32Type(), entry.lo->loc);
    if (!c)
      return false;
    offset = *c;
  } else if (lo->isRuntimeScalar() && isI32(lo->v.getType())) {
    offset = lo->v;
  } else {
    bool tile = lo->kind == Val::Runtime && isTile(lo->v.getType());
    cx.error(entry.lo->loc, "slice start must be an integer scalar, got " +
                                describe(*lo) + (tile ? kScalarReadHint : ""));
    return false;
  }
  w.offsets.push_back(offset);
  w.window.push_back(dim);
  w.shape.push_back(*size);
  return true;
}

/// The window `e` of a tensor parameter: the first argument of load/store.
static bool evalWindow(IRGen &gen, const Expr &e, const char *builtin,
                       Window &w) {
  FrontendContext &cx = gen.cx;
  if (e.kind != ExprKind::Subscript || e.lhs->kind != ExprKind::Name) {
    cx.error(e.loc, Twine(builtin) + "() expects a window of a tensor "
                                     "parameter as its first argument, such "
                                     "as X[b, m : m + BLOCK_M, :]");
    return false;
  }
  const std::string &name = e.lhs->name;
  Binding *b = gen.scopes.lookup(name);
  if (!b) {
    gen.eval(*e.lhs); // reports the unknown name with a suggestion
    return false;
  }
  if (b->val.kind != Val::Global) {
    cx.error(e.lhs->loc, "'" + name + "' is not a tensor parameter; windows "
                                      "can only be taken of tensor "
                                      "parameters");
    return false;
  }
  w.param = b->val.param;
  w.global = b->val.v;
  const Param &p = *gen.params[w.param].ast;
  auto type = mlir::cast<tile::GlobalType>(gen.params[w.param].type);
  w.elt = type.getElementType();
  if (e.entries.size() != p.dims.size()) {
    cx.error(e.opLoc, "'" + name + "' has " + Twine(p.dims.size()) +
                          (p.dims.size() == 1 ? " dim" : " dims") +
                          " but the window has " + Twine(e.entries.size()) +
                          (e.entries.size() == 1 ? " entry" : " entries") +
                          " (one per dim: an index, 'lo : hi' or ':')");
    return false;
  }
  WindowBuilder builder(gen, e, p, type, w);
  for (unsigned i = 0; i < e.entries.size(); ++i)
    if (!builder.addEntry(i, e.entries[i]))
      return false;
  if (w.isScalar())
    return true;
  return checkShape(cx, w.shape, e.opLoc);
}

/// The pad attribute of load(): the `pad` keyword's constant, 0 by default.
static std::optional<mlir::TypedAttr> padAttr(BuiltinCall &call,
                                              mlir::Type elt) {
  FrontendContext &cx = call.cx;
  Val pv = Val::ofInt(0);
  SMLoc pl = call.loc();
  if (const KeywordArg *kw = call.keyword("pad")) {
    OptVal p = call.gen.eval(*kw->value);
    if (!p)
      return std::nullopt;
    pl = kw->value->loc;
    if (!p->isConst())
      return cx.error(pl, "the pad value of load() must be a compile-time "
                          "constant, got " + describe(*p));
    pv = *p;
  }
  if (elt.isInteger(1)) {
    if (pv.kind != Val::Bool && !(pv.kind == Val::Int && (pv.i == 0 || pv.i == 1)))
      return cx.error(pl, "the pad value of a bool window must be true or "
                          "false, got " + describe(pv));
    return call.builder().getBoolAttr(pv.kind == Val::Bool ? pv.b : pv.i);
  }
  if (mlir::isa<mlir::FloatType>(elt)) {
    if (pv.kind == Val::Bool)
      return cx.error(pl, "cannot pad a " + eltName(elt) +
                              " window with a bool");
    return call.builder().getFloatAttr(elt, pv.asDouble());
  }
  if (pv.kind != Val::Int)
    return cx.error(pl, "the pad value of an i32 window must be an integer "
                        "constant, got " + describe(pv));
  if (pv.i < INT32_MIN || pv.i > INT32_MAX)
    return cx.error(pl, "pad value " + Twine(pv.i) + " does not fit in i32");
  return call.builder().getIntegerAttr(elt, pv.i);
}

OptVal frontend::emitLoad(BuiltinCall &call) {
  Window w;
  if (!evalWindow(call.gen, call.arg(0), "load", w))
    return std::nullopt;
  auto pad = padAttr(call, w.elt);
  if (!pad)
    return std::nullopt;
  if (w.isScalar())
    return Val::ofValue(tile::LoadScalarOp::create(
        call.builder(), call.irLoc(), w.elt, w.global, w.offsets, *pad));
  mlir::DenseI64ArrayAttr gather;
  if (!w.gather.empty())
    gather = call.builder().getDenseI64ArrayAttr(w.gather);
  return Val::ofValue(tile::LoadOp::create(
      call.builder(), call.irLoc(), tileType(w.shape, w.elt), w.global,
      w.offsets, call.builder().getDenseI64ArrayAttr(w.window), gather,
      w.indices, *pad));
}

OptVal frontend::emitStoreValue(BuiltinCall &call) {
  return call.cx.error(call.loc(), call.name() + "() does not return a "
                                   "value; use it as a statement: " +
                                   call.name() + "(X[...], value);");
}

/// Checks that `shape` (a tile's) broadcasts to the window's shape.
static bool checkBroadcastsToWindow(FrontendContext &cx, mlir::Type t,
                                    SMLoc loc, const Window &w,
                                    llvm::StringRef builtin,
                                    llvm::StringRef what) {
  if (!isTile(t))
    return true;
  auto s = shapeOf(t);
  bool ok = s.size() == w.shape.size();
  for (size_t i = 0; ok && i < s.size(); ++i)
    ok = s[i] == w.shape[i] || s[i] == 1;
  if (!ok)
    cx.error(loc, "shape mismatch in " + builtin + ": the " + what + " is " +
                      shapeStr(s) + " but the window is " +
                      shapeStr(w.shape));
  return ok;
}

/// The value to store into window `w`: a constant becomes a tile of the
/// window's type, a runtime value must have its element type and broadcast.
static std::optional<mlir::Value> storedValue(IRGen &gen, const Val &v,
                                              SMLoc loc, const Window &w,
                                              llvm::StringRef builtin) {
  FrontendContext &cx = gen.cx;
  const std::string &param = cx.kernel.params[w.param].name;
  if (v.isConst()) {
    if (v.kind == Val::Bool && !w.elt.isInteger(1))
      return cx.error(loc, "cannot " + builtin + " a bool into '" + param +
                               "' (" + eltName(w.elt) + ")");
    return materialize(cx, v, loc, tileType(w.shape, w.elt));
  }
  mlir::Type t = v.v.getType();
  if (elementType(t) != w.elt)
    return cx.error(loc, builtin + ": the value has element type " +
                             eltName(t) + " but '" + param + "' holds " +
                             eltName(w.elt) + "; use cast(x, " +
                             eltName(w.elt) + ")");
  if (!checkBroadcastsToWindow(cx, t, loc, w, builtin, "value"))
    return std::nullopt;
  return broadcastTo(cx, v.v, w.shape, loc);
}

namespace {
/// The `mask` keyword of store/atomic_add, resolved.
struct WriteMask {
  mlir::Value tile;     // null: every element (no mask, or mask = true)
  bool nothing = false; // mask = false: no element at all
};
} // namespace

/// The `mask` keyword of store/atomic_add: a bool scalar or tile that
/// broadcasts to the window.
static std::optional<WriteMask> maskOf(IRGen &gen, const Expr &call,
                                       const Window &w) {
  FrontendContext &cx = gen.cx;
  const KeywordArg *kw = nullptr;
  for (const KeywordArg &k : call.kwargs)
    if (k.name == "mask")
      kw = &k;
  if (!kw)
    return WriteMask{};
  SMLoc loc = kw->value->loc;
  OptVal m = gen.evalPlain(*kw->value);
  if (!m)
    return std::nullopt;
  if (m->kind == Val::Bool)
    return WriteMask{mlir::Value(), !m->b};
  if (m->kind != Val::Runtime || !elementType(m->v.getType()).isInteger(1))
    return cx.error(loc, "the mask of " + call.name + "() must be bool (a "
                         "comparison, or a bool tile), got " + describe(*m));
  if (!checkBroadcastsToWindow(cx, m->v.getType(), loc, w, call.name, "mask"))
    return std::nullopt;
  return WriteMask{broadcastTo(cx, m->v, w.shape, loc)};
}

/// The window, value and mask of a store() or atomic_add() (`builtin`,
/// `action` its verb for the scalar-window error, `f32Only` for atomics): a
/// window that slices at least one dim and gathers nothing, the value
/// broadcast to it.
struct WindowWrite {
  Window w;
  mlir::Value value;
  WriteMask mask;
};

static std::optional<WindowWrite> evalWindowWrite(IRGen &gen, const Expr &call,
                                                  const char *builtin,
                                                  const char *action,
                                                  bool f32Only) {
  FrontendContext &cx = gen.cx;
  WindowWrite write;
  Window &w = write.w;
  if (!evalWindow(gen, *call.args[0], builtin, w))
    return std::nullopt;
  if (w.isScalar())
    return cx.error(call.args[0]->opLoc,
                    std::string(builtin) +
                        "() needs a window that slices at least one dim ('lo "
                        ": hi' or ':'); " + action +
                        " a single element is not supported");
  if (!w.gather.empty())
    return cx.error(w.firstIndexTile, std::string(builtin) +
                                          "() takes no index tiles: only "
                                          "load() gathers rows");
  if (f32Only && !w.elt.isF32())
    return cx.error(call.args[0]->loc,
                    "atomic_add() adds into f32 tensors only, but '" +
                        cx.kernel.params[w.param].name + "' holds " +
                        eltName(w.elt));
  OptVal v = gen.evalPlain(*call.args[1]);
  if (!v)
    return std::nullopt;
  auto value = storedValue(gen, *v, call.args[1]->loc, w, builtin);
  if (!value)
    return std::nullopt;
  auto mask = maskOf(gen, call, w);
  if (!mask)
    return std::nullopt;
  write.value = *value;
  write.mask = *mask;
  return write;
}

bool frontend::emitStore(IRGen &gen, const Expr &call) {
  auto write = evalWindowWrite(gen, call, "store", "storing",
                               /*f32Only=*/false);
  if (!write)
    return false;
  const Window &w = write->w;
  if (!write->mask.nothing)
    tile::StoreOp::create(gen.cx.builder, gen.cx.loc(call.nameLoc),
                          write->value, w.global, w.offsets, w.window,
                          write->mask.tile);
  return true;
}

/// `tma = B` (a compile-time bool, false when absent) marks the op
/// tile.tma_reduce: on sm_90a its adds may go through the TMA unit.
bool frontend::emitAtomicAdd(IRGen &gen, const Expr &call) {
  auto write = evalWindowWrite(gen, call, "atomic_add", "adding into",
                               /*f32Only=*/true);
  if (!write)
    return false;
  std::optional<bool> viaTma = false;
  for (const KeywordArg &k : call.kwargs)
    if (k.name == "tma")
      viaTma = gen.evalConstBool(*k.value, "the tma option of atomic_add");
  if (!viaTma)
    return false;
  const Window &w = write->w;
  if (write->mask.nothing)
    return true;
  auto add = tile::AtomicAddOp::create(gen.cx.builder, gen.cx.loc(call.nameLoc),
                                       write->value, w.global, w.offsets,
                                       w.window, write->mask.tile);
  if (*viaTma)
    add->setAttr(tile::kTmaReduceAttrName, gen.cx.builder.getUnitAttr());
  return true;
}

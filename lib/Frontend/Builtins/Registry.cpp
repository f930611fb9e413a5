//===- Registry.cpp - The one list of builtins and the checks of a call ---===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Types.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace flash;
using namespace flash::frontend;
using llvm::Twine;

/// A row that cannot work is a bug of the compiler: it stops the first
/// compile that calls or names any builtin, not only kernels calling it.
static void verifyRegistry(const std::vector<Builtin> &all) {
  for (size_t i = 0; i < all.size(); ++i) {
    const Builtin &b = all[i];
    if (!b.handler || b.minArgs > b.maxArgs ||
        !llvm::StringRef(b.signature).starts_with(b.name))
      llvm::report_fatal_error("builtin '" + b.name + "' is not fully "
                               "registered");
    for (size_t j = 0; j < i; ++j)
      if (all[j].name == b.name)
        llvm::report_fatal_error("builtin '" + b.name +
                                 "' is registered twice");
  }
}

static std::vector<Builtin> buildRegistry() {
  // The order matters only to suggestions, which prefer the earlier of two
  // equally close names.
  std::vector<Builtin> all = {
      // name, arguments, keywords, signature, flags, handler
      {"program_id", 1, 1, {}, "program_id(axis)", NoFlags, emitProgramId},
      {"num_programs", 1, 1, {}, "num_programs(axis)", NoFlags,
       emitNumPrograms},
      {"cdiv", 2, 2, {}, "cdiv(a, b)", InGrid, emitCdiv},
      {"min", 2, 2, {}, "min(a, b)", InGrid, emitMin},
      {"max", 1, 2, {"axis"}, "max(a, b) or max(x, axis = K)",
       InGrid | AxisReduction, emitMax},
      {"sum", 1, 1, {"axis"}, "sum(x, axis = K)", AxisReduction, emitSum},
  };
  appendUnaryMathBuiltins(all); // abs, exp, exp2, log, sqrt, ...
  std::vector<Builtin> rest = {
      {"where", 3, 3, {}, "where(cond, a, b)", InGrid, emitWhere},
      {"cast", 2, 2, {}, "cast(x, T)", NoFlags, emitCast},
      {"bit_xor", 2, 2, {}, "bit_xor(a, b)", NoFlags, emitBitXor},
      {"bit_and", 2, 2, {}, "bit_and(a, b)", NoFlags, emitBitAnd},
      {"bit_or", 2, 2, {}, "bit_or(a, b)", NoFlags, emitBitOr},
      {"shl", 2, 2, {}, "shl(x, n)", NoFlags, emitShl},
      {"shr", 2, 2, {}, "shr(x, n)", NoFlags, emitShr},
      {"umulhi", 2, 2, {}, "umulhi(a, b)", NoFlags, emitUMulHi},
      {"umul_wide", 2, 2, {}, "umul_wide(a, b)", NoFlags, emitUMulWide},
      {"dtype", 1, 1, {}, "dtype(x)", NoFlags, emitDtype},
      {"arange", 2, 2, {}, "arange(lo, hi)", NoFlags, emitArange},
      {"zeros", 2, 2, {}, "zeros([dims], T)", NoFlags, emitZerosOrFull},
      {"full", 3, 3, {}, "full([dims], value, T)", NoFlags, emitZerosOrFull},
      {"dot", 2, 3, {}, "dot(a, b[, acc])", NoFlags, emitDot},
      {"trans", 1, 1, {}, "trans(x)", NoFlags, emitTrans},
      {"online_softmax", 5, 5, {"normalization", "exp2", "scale", "sum_by_mma"},
       "online_softmax(s, v, m, l, acc, normalization = deferred|eager, "
       "exp2 = true|false, scale = C, sum_by_mma = true|false)",
       NoFlags, emitOnlineSoftmax},
      {"finalize", 2, 2, {}, "finalize(acc, l)", NoFlags, emitFinalize},
      {"load", 1, 1, {"pad"}, "load(WINDOW[, pad = VALUE])", NoFlags,
       emitLoad},
      {"store", 2, 2, {"mask"}, "store(WINDOW, value[, mask = M])", NoFlags,
       emitStoreValue},
      {"atomic_add", 2, 2, {"mask", "tma"},
       "atomic_add(WINDOW, value[, mask = M][, tma = B])", NoFlags,
       emitStoreValue},
  };
  all.insert(all.end(), std::make_move_iterator(rest.begin()),
             std::make_move_iterator(rest.end()));
  verifyRegistry(all);
  return all;
}

static const std::vector<Builtin> &registry() {
  static const std::vector<Builtin> all = buildRegistry();
  return all;
}

const Builtin *frontend::lookupBuiltin(llvm::StringRef name) {
  for (const Builtin &b : registry())
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<llvm::StringRef> frontend::builtinNames() {
  std::vector<llvm::StringRef> names;
  for (const Builtin &b : registry())
    names.push_back(b.name);
  return names;
}

static std::nullopt_t reportUnknownCallee(FrontendContext &cx,
                                          const ast::Expr &call,
                                          bool calleeIsVariable) {
  llvm::StringRef name = call.name;
  std::string best;
  unsigned bestDist = ~0u;
  unsigned maxDist = std::max<unsigned>(1, name.size() / 3);
  for (const Builtin &b : registry()) {
    unsigned d = name.edit_distance(b.name, true, maxDist + 1);
    if (d <= maxDist && d < bestDist) {
      bestDist = d;
      best = b.name.str();
    }
  }
  if (name == "grid" || name == "warps" || name == "static_assert" ||
      name == "device_assert")
    return cx.error(call.nameLoc, "'" + name + "(...)' is a statement and "
                                               "cannot be used in an "
                                               "expression");
  if (name == "range")
    return cx.error(call.nameLoc, "range(...) can only be used in a 'for' "
                                  "statement: for i in range(lo, hi) { ... }");
  if (calleeIsVariable)
    return cx.error(call.nameLoc, "'" + name + "' is not a function");
  if (!best.empty())
    return cx.error(call.nameLoc, "unknown builtin '" + name +
                                      "'; did you mean '" + best + "'?");
  return cx.error(call.nameLoc, "unknown builtin '" + name + "'");
}

/// "cdiv, min, max, abs": the builtins grid() may use.
static std::string gridBuiltinList() {
  std::string list;
  for (const Builtin &b : registry())
    if (b.allowedInGrid())
      list += (list.empty() ? "" : ", ") + b.name.str();
  return list;
}

static bool checkKeywords(FrontendContext &cx, const Builtin &b,
                          const ast::Expr &call) {
  for (const ast::KeywordArg &kw : call.kwargs) {
    if (llvm::is_contained(b.keywords, kw.name))
      continue;
    if (b.keywords.empty())
      cx.error(kw.loc, "'" + b.name + "' takes no keyword arguments "
                                      "(expected " + b.signature + ")");
    else
      cx.error(kw.loc, "'" + b.name + "' has no keyword argument '" +
                           kw.name + "' (expected " + b.signature + ")");
    return false;
  }
  return true;
}

static bool checkArgumentCount(FrontendContext &cx, const Builtin &b,
                               const ast::Expr &call) {
  bool reduction =
      b.reducesWithAxis() &&
      llvm::any_of(call.kwargs, [](auto &kw) { return kw.name == "axis"; });
  unsigned n = call.args.size();
  if (reduction ? n == 1 : (n >= b.minArgs && n <= b.maxArgs))
    return true;
  std::string count =
      reduction ? "1 positional argument"
      : b.minArgs == b.maxArgs
          ? std::to_string(b.minArgs) + " argument" +
                (b.minArgs == 1 ? "" : "s")
          : std::to_string(b.minArgs) +
                (b.maxArgs == b.minArgs + 1 ? " or " : " to ") +
                std::to_string(b.maxArgs) + " arguments";
  cx.error(call.nameLoc, "'" + b.name + "' expects " + count + ", got " +
                             Twine(n) + " (expected " + b.signature + ")");
  return false;
}

const Builtin *frontend::resolveCall(FrontendContext &cx, const ast::Expr &call,
                                     bool inGrid, bool calleeIsVariable) {
  const Builtin *b = lookupBuiltin(call.name);
  if (!b)
    return reportUnknownCallee(cx, call, calleeIsVariable), nullptr;
  if (inGrid && !b->allowedInGrid()) {
    cx.error(call.nameLoc, "'" + b->name + "' cannot be used in grid(); grid "
                           "sizes are computed from shape symbols, constants "
                           "and scalar parameters (with " +
                               gridBuiltinList() + " and arithmetic)");
    return nullptr;
  }
  if (!checkKeywords(cx, *b, call) || !checkArgumentCount(cx, *b, call))
    return nullptr;
  return b;
}

BuiltinCall::BuiltinCall(IRGen &gen, const ast::Expr &expr,
                         const Builtin &builtin)
    : gen(gen), cx(gen.cx), expr(expr), builtin(builtin) {}

const ast::KeywordArg *BuiltinCall::keyword(llvm::StringRef name) const {
  for (const ast::KeywordArg &kw : expr.kwargs)
    if (kw.name == name)
      return &kw;
  return nullptr;
}

std::optional<mlir::Value> BuiltinCall::tileArg(unsigned i, const Twine &what,
                                                unsigned rank) {
  OptVal v = gen.eval(arg(i));
  if (!v || !checkPlain(cx, *v, argLoc(i)))
    return std::nullopt;
  if (v->kind != Val::Runtime || !isTile(v->v.getType()) ||
      (rank && shapeOf(v->v.getType()).size() != rank))
    return cx.error(argLoc(i), "'" + name() + "' expects " + what + ", got " +
                                   describe(*v));
  return v->v;
}

//===- Call.cpp - Calls of user functions, inlined ------------------------===//
//
// A call binds the argument values to the parameters in a frame that hides
// the caller's names, walks the function's body in place (its IR lands at
// the call) and takes the value of its `return`. Compile-time values stay
// compile-time through the call, so a constant argument can size a tile.
//
//===----------------------------------------------------------------------===//

#include "Builtins/Builtins.h"
#include "IRGen/IRGen.h"
#include "Sema/Annotation.h"
#include "Sema/Coerce.h"

#include "llvm/ADT/STLExtras.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

/// "score(s: f32[M, N], k: int = ...)" for messages.
static std::string signature(const FunctionDecl &fn) {
  std::string s = fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const FnParam &p = fn.params[i];
    s += (i ? ", " : "") + p.name;
    if (p.type.kind != TypeAnnot::Any)
      s += ": " + spelling(p.type);
    if (p.defaultValue)
      s += " = ...";
  }
  return s + ")";
}

static int paramIndex(const FunctionDecl &fn, llvm::StringRef name) {
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].name == name)
      return i;
  return -1;
}

bool IRGen::matchArguments(const Expr &call, const FunctionDecl &fn,
                           std::vector<const Expr *> &args) {
  auto fail = [&](SMLoc loc, const Twine &msg) {
    cx.error(loc, msg);
    cx.note(fn.loc, "'" + fn.name + "' is defined here");
    return false;
  };
  size_t n = fn.params.size();
  if (call.args.size() > n)
    return fail(call.args[n]->loc,
                "too many arguments in call to '" + fn.name + "': it takes " +
                    Twine(n) + " (" + signature(fn) + ")");
  args.assign(n, nullptr);
  for (size_t i = 0; i < call.args.size(); ++i)
    args[i] = call.args[i].get();
  for (const KeywordArg &kw : call.kwargs) {
    int i = paramIndex(fn, kw.name);
    if (i < 0)
      return fail(kw.loc, "'" + fn.name + "' has no parameter '" + kw.name +
                              "' (" + signature(fn) + ")");
    if (args[i])
      return fail(kw.loc, "argument '" + kw.name + "' of '" + fn.name +
                              "' is given twice");
    args[i] = kw.value.get();
  }
  for (size_t i = 0; i < n; ++i)
    if (!args[i] && !fn.params[i].defaultValue)
      return fail(call.nameLoc, "missing argument '" + fn.params[i].name +
                                    "' in call to '" + fn.name + "' (" +
                                    signature(fn) + ")");
  return true;
}

/// Declares the parameters in the callee's frame, in order: a passed value
/// is checked where it was written; a default is evaluated in the callee
/// (it may use the parameters before it).
bool IRGen::bindParameters(const Expr &call, const FunctionDecl &fn,
                           llvm::ArrayRef<const Expr *> args,
                           llvm::ArrayRef<Val> values) {
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const FnParam &p = fn.params[i];
    Val v;
    if (args[i]) {
      v = values[i];
      if (!checkAnnotation(cx, scopes, p.type, v, args[i]->loc,
                           "argument '" + p.name + "' of '" + fn.name + "'",
                           /*bindDims=*/true))
        return false;
    } else {
      FrontendContext::CallScope inCall(cx, fn, call.nameLoc);
      OptVal d = eval(*p.defaultValue);
      if (!d)
        return false;
      v = *d;
      if (!checkArgument(v, p.defaultValue->loc) ||
          !checkAnnotation(cx, scopes, p.type, v, p.defaultValue->loc,
                           "the default value of '" + p.name + "'",
                           /*bindDims=*/true))
        return false;
    }
    if (v.kind == Val::Function)
      v.boundTo = &p;
    Binding b;
    b.kind = Binding::Param;
    b.val = v;
    if (!scopes.declare(p.name, p.loc, b))
      return false;
  }
  return true;
}

/// A value that can be passed: anything but a tuple.
bool IRGen::checkArgument(const Val &v, SMLoc loc) {
  return v.kind == Val::Global || v.kind == Val::Function ||
         checkPlain(cx, v, loc);
}

bool IRGen::checkSignatureCall(const Expr &call, const FnParam &via) {
  const TypeAnnot &t = via.type;
  auto fail = [&](SMLoc loc, const Twine &msg) {
    cx.error(loc, msg);
    cx.note(t.loc, "the type of '" + via.name + "' is declared here");
    return false;
  };
  if (!call.kwargs.empty())
    return fail(call.kwargs[0].loc,
                "'" + via.name + "' has the type " + spelling(t) +
                    ", which takes positional arguments only");
  size_t n = t.fnParams.size();
  if (call.args.size() != n)
    return fail(call.args.size() > n ? call.args[n]->loc : call.nameLoc,
                "'" + via.name + "' takes " + Twine(n) + " argument" +
                    (n == 1 ? "" : "s") + " (" + spelling(t) + "), got " +
                    Twine(call.args.size()));
  return true;
}

OptVal IRGen::inlineCall(const Expr &call, const FunctionDecl &fn,
                         const FnParam *via) {
  if (inGrid)
    return cx.error(call.nameLoc, "function '" + fn.name +
                                      "' cannot be called in grid(); grid "
                                      "sizes are computed from shape symbols, "
                                      "constants and scalar parameters");
  if (llvm::is_contained(cx.callStack(), &fn))
    return cx.error(call.nameLoc,
                    "recursive call to '" + fn.name + "'" +
                        (via ? " (passed as '" + via->name + "')" : "") +
                        ": functions are inlined, so a function cannot "
                        "call itself, directly, through other functions or "
                        "through function arguments");
  if (cx.callStack().size() >= kMaxCallDepth)
    return cx.error(call.nameLoc, "function calls nest too deeply (the limit "
                                  "is " + Twine(kMaxCallDepth) + " levels)");
  if (++inlinedCalls > kMaxInlinedCalls)
    return cx.error(call.nameLoc, "more than " + Twine(kMaxInlinedCalls) +
                                      " function calls to inline; every call "
                                      "is expanded in place");
  const TypeAnnot *sig =
      via && via->type.kind == TypeAnnot::Function && via->type.hasSignature
          ? &via->type
          : nullptr;
  if (sig && !checkSignatureCall(call, *via))
    return std::nullopt;
  std::vector<const Expr *> args;
  if (!matchArguments(call, fn, args))
    return std::nullopt;
  // The arguments are evaluated in the caller, in the order written.
  std::vector<Val> values(fn.params.size());
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (!args[i])
      continue;
    OptVal v = eval(*args[i]);
    if (!v || !checkArgument(*v, args[i]->loc))
      return std::nullopt;
    values[i] = *v;
  }
  if (!sig)
    return inlineBody(call, fn, args, values);

  // Through a parameter of type fn(...) -> ...: the arguments and results
  // are checked against it in a frame of their own, where its dim names
  // are bound (they are local to each call).
  ScopeStack::FrameGuard sigFrame(scopes);
  for (size_t i = 0; i < sig->fnParams.size(); ++i)
    if (!checkAnnotation(cx, scopes, sig->fnParams[i], values[i],
                         args[i]->loc,
                         "argument " + std::to_string(i) + " of '" +
                             via->name + "'",
                         /*bindDims=*/true))
      return std::nullopt;
  OptVal result = inlineBody(call, fn, args, values);
  if (!result || sig->fnResults.empty())
    return result;
  size_t n = sig->fnResults.size();
  bool tuple = result->kind == Val::Tuple;
  size_t got = tuple ? result->elems.size() : 1;
  if (got != n) {
    cx.error(call.nameLoc, "'" + via->name + "' must give " + Twine(n) +
                               " result" + (n == 1 ? "" : "s") + " (" +
                               spelling(*sig) + "), but '" + fn.name +
                               "' returned " + Twine(got));
    cx.note(sig->loc, "the type of '" + via->name + "' is declared here");
    return std::nullopt;
  }
  for (size_t i = 0; i < n; ++i) {
    Val &r = tuple ? result->elems[i] : *result;
    std::string what = n == 1 ? "the result of '" + via->name + "'"
                              : "result " + std::to_string(i) + " of '" +
                                    via->name + "'";
    // A result dim that no argument bound is free, like an argument's.
    if (!checkAnnotation(cx, scopes, sig->fnResults[i], r, call.nameLoc,
                         what, /*bindDims=*/true))
      return std::nullopt;
  }
  return result;
}

OptVal IRGen::inlineBody(const Expr &call, const FunctionDecl &fn,
                         llvm::ArrayRef<const Expr *> args,
                         llvm::ArrayRef<Val> values) {
  ScopeStack::FrameGuard frameScope(scopes);
  if (!bindParameters(call, fn, args, values))
    return std::nullopt;
  FunctionFrame callee;
  callee.fn = &fn;
  callee.result.kind = Val::Tuple;
  FunctionFrame *caller = frame;
  frame = &callee;
  bool ok;
  {
    FrontendContext::CallScope inCall(cx, fn, call.nameLoc);
    ok = emitBlock(fn.body);
    if (ok && !callee.returned && !fn.results.empty()) {
      cx.error(fn.loc, "function '" + fn.name +
                           "' declares a result but reaches the end of its "
                           "body without 'return'");
      ok = false;
    }
  }
  frame = caller;
  if (!ok)
    return std::nullopt;
  return callee.result;
}

bool IRGen::emitReturn(const Stmt &s) {
  const FunctionDecl &fn = *frame->fn;
  std::vector<Val> values;
  std::vector<SMLoc> locs;
  for (auto &a : s.args) {
    OptVal v = eval(*a);
    if (!v)
      return false;
    if (v->kind == Val::Global)
      return cx.error(a->loc, "a function cannot return a tensor parameter; "
                              "return a tile loaded from it"),
             false;
    if (s.args.size() == 1 && v->kind == Val::Tuple && !v->elems.empty()) {
      values = v->elems; // return online_softmax(...)
      locs.assign(values.size(), a->loc);
      break;
    }
    if (!checkPlain(cx, *v, a->loc))
      return false;
    values.push_back(*v);
    locs.push_back(a->loc);
  }
  if (!fn.results.empty()) {
    if (values.size() != fn.results.size()) {
      cx.error(s.loc, "'" + fn.name + "' declares " +
                          Twine(fn.results.size()) + " result" +
                          (fn.results.size() == 1 ? "" : "s") +
                          " but this 'return' gives " + Twine(values.size()));
      cx.note(fn.results[0].loc, "the result types are declared here");
      return false;
    }
    for (size_t i = 0; i < values.size(); ++i) {
      std::string what = values.size() == 1
                             ? "the result of '" + fn.name + "'"
                             : "result " + std::to_string(i) + " of '" +
                                   fn.name + "'";
      if (!checkAnnotation(cx, scopes, fn.results[i], values[i], locs[i],
                           what, /*bindDims=*/false))
        return false;
    }
  }
  frame->returned = true;
  if (values.size() == 1) {
    frame->result = values[0];
  } else {
    frame->result.kind = Val::Tuple;
    frame->result.elems = std::move(values);
  }
  return true;
}

/// A call of an unknown name in a program that has functions: suggest the
/// closest function or builtin. Statement names and variables keep the
/// registry's messages.
std::nullopt_t IRGen::reportUnknownFunction(const Expr &call) {
  llvm::StringRef name = call.name;
  if (Binding *b = scopes.lookup(name); b && b->kind == Binding::Param)
    return cx.error(call.nameLoc, "'" + name + "' is not a function: the "
                                      "parameter is bound to " +
                                      describe(b->val) +
                                      " (pass a function by its name)");
  if (scopes.lookup(name) || name == "grid" || name == "warps" ||
      name == "static_assert" || name == "device_assert" || name == "range" ||
      name == "mma_layout") {
    resolveBuiltin(call); // reports it
    return std::nullopt;
  }
  std::vector<llvm::StringRef> candidates = builtinNames();
  for (auto &entry : cx.program.functions)
    candidates.push_back(entry.first);
  std::string best;
  unsigned bestDist = ~0u;
  unsigned maxDist =
      name.size() <= 3 ? 1 : std::max<unsigned>(2, name.size() / 3);
  for (llvm::StringRef candidate : candidates) {
    unsigned d = name.edit_distance(candidate, true, maxDist + 1);
    if (d <= maxDist && d < bestDist) {
      bestDist = d;
      best = candidate.str();
    }
  }
  if (!best.empty())
    return cx.error(call.nameLoc, "unknown function '" + name +
                                      "'; did you mean '" + best + "'?");
  return cx.error(call.nameLoc, "unknown function '" + name +
                                    "': no builtin or function of the "
                                    "program has this name (a missing "
                                    "import?)");
}

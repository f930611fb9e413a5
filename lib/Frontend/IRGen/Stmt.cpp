//===- Stmt.cpp - Statements of the kernel body ---------------------------===//

#include "Builtins/Builtins.h"
#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/Predefined.h"
#include "Sema/Types.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/STLExtras.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

bool IRGen::emitBlock(const Block &block) {
  NestingGuard guard(*this, block.lbraceLoc);
  if (!guard.ok)
    return false;
  for (auto &s : block.stmts) {
    if (!emitStmt(*s) || cx.failed())
      return false;
    if (frame && frame->returned)
      return true; // the rest of the function is not taken
  }
  return true;
}

bool IRGen::emitStmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let:
    return emitLet(s);
  case StmtKind::Assign:
    return emitAssign(s);
  case StmtKind::For:
    return emitFor(s);
  case StmtKind::If:
    return emitIf(s);
  case StmtKind::StaticAssert:
    return emitStaticAssert(s);
  case StmtKind::DeviceAssert:
    return emitDeviceAssert(s);
  case StmtKind::Grid:
    return true; // emitted into the grid function
  case StmtKind::Warps:
    return emitWarps(s);
  case StmtKind::MmaLayout:
    return emitMmaLayout(s);
  case StmtKind::ExprStmt:
    return emitExprStmt(s);
  case StmtKind::Return:
    return emitReturn(s);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// let / var and assignments
//===----------------------------------------------------------------------===//

bool IRGen::emitLet(const Stmt &s) {
  OptVal value = eval(*s.value);
  if (!value)
    return false;
  if (value->kind == Val::Global) {
    cx.error(s.value->loc, "cannot bind a tensor parameter to a variable; "
                           "take windows of it directly");
    return false;
  }
  if (value->kind == Val::Function)
    return checkPlain(cx, *value, s.value->loc);
  if (value->kind == Val::Tuple && value->elems.empty())
    return checkPlain(cx, *value, s.value->loc);
  if (s.names.size() == 1) {
    if (value->kind == Val::Tuple) {
      cx.error(s.value->loc, "this expression produces " +
                                 Twine(value->elems.size()) +
                                 " values; bind them with '" +
                                 (s.isMutable ? "var" : "let") +
                                 " a, b, c = ...'");
      return false;
    }
  } else if (value->kind != Val::Tuple ||
             value->elems.size() != s.names.size()) {
    cx.error(s.value->loc, "expected " + Twine(s.names.size()) +
                               " values on the right-hand side, got " +
                               describe(*value));
    return false;
  }
  for (size_t i = 0; i < s.names.size(); ++i) {
    Binding b;
    b.kind = s.isMutable ? Binding::Var : Binding::Let;
    b.val = s.names.size() == 1 ? *value : value->elems[i];
    if (!scopes.declare(s.names[i], s.nameLocs[i], b))
      return false;
  }
  return true;
}

bool IRGen::emitAssign(const Stmt &s) {
  OptVal v = eval(*s.value);
  if (!v)
    return false;
  if (v->kind == Val::Global)
    return cx.error(s.value->loc, "cannot assign a tensor parameter to a "
                                  "variable"),
           false;
  if (v->kind == Val::Function)
    return checkPlain(cx, *v, s.value->loc);
  if (v->kind == Val::Tuple && v->elems.empty())
    return checkPlain(cx, *v, s.value->loc);
  if (s.names.size() == 1) {
    if (v->kind == Val::Tuple)
      return cx.error(s.value->loc, "this expression produces " +
                                        Twine(v->elems.size()) +
                                        " values; assign them with "
                                        "'a, b, c = ...'"),
             false;
    return assignTo(s.names[0], s.nameLocs[0], *v, s.value->loc);
  }
  if (v->kind != Val::Tuple || v->elems.size() != s.names.size())
    return cx.error(s.value->loc, "expected " + Twine(s.names.size()) +
                                      " values on the right-hand side, got " +
                                      describe(*v)),
           false;
  for (size_t i = 0; i < s.names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (s.names[i] == s.names[j])
        return cx.error(s.nameLocs[i], "'" + s.names[i] +
                                           "' appears twice in the "
                                           "assignment"),
               false;
  for (size_t i = 0; i < s.names.size(); ++i)
    if (!assignTo(s.names[i], s.nameLocs[i], v->elems[i], s.value->loc))
      return false;
  return true;
}

/// Why `b` cannot be assigned, or null if it is a `var`.
static const char *notAssignable(const Binding &b) {
  switch (b.kind) {
  case Binding::Const:
    return "compile-time constant";
  case Binding::Param:
    return "parameter";
  case Binding::Symbol:
    return "shape symbol";
  case Binding::LoopVar:
    return "loop variable";
  case Binding::Let:
  case Binding::Var:
    return nullptr;
  }
  return nullptr;
}

/// The value a loop-carried variable of type `carried` is assigned: it must
/// keep its type.
static OptVal carriedValue(FrontendContext &cx, const std::string &name,
                           const Binding &b, Val value, SMLoc valueLoc) {
  mlir::Type ct = b.carriedType;
  if (value.kind == Val::Type) {
    cx.error(valueLoc, "cannot assign " + describe(value) + " to '" + name +
                           "' inside a loop: a type is a compile-time "
                           "value and cannot change at run time");
    return std::nullopt;
  }
  if (value.isConst()) {
    if (value.kind == Val::Float && isI32(ct))
      return cx.error(valueLoc, "cannot assign a float constant to '" + name +
                                    "', which is carried around the loop as " +
                                    typeStr(ct));
    auto m = materialize(cx, value, valueLoc, ct);
    if (!m)
      return std::nullopt;
    return Val::ofValue(*m);
  }
  if (value.v.getType() != ct) {
    cx.error(valueLoc, "'" + name + "' is carried around the enclosing loop "
                       "as " + typeStr(ct) + " but is assigned a value of "
                       "type " + typeStr(value.v.getType()) +
                       "; a loop-carried variable must keep its type");
    cx.note(b.loc, "'" + name + "' declared here");
    return std::nullopt;
  }
  return value;
}

bool IRGen::assignTo(const std::string &name, SMLoc loc, Val value,
                     SMLoc valueLoc) {
  Binding *b = scopes.lookup(name);
  if (!b) {
    std::string s = scopes.suggest(name);
    cx.error(loc, "assignment to undeclared variable '" + name + "'" +
                      (s.empty() ? std::string("; declare it with 'var ") +
                                       name + " = ...'"
                                 : "; did you mean '" + s + "'?"));
    return false;
  }
  if (const char *what = notAssignable(*b)) {
    if (b->predefined)
      return cx.error(loc, "cannot assign to '" + name +
                               "': it is predefined (" +
                               predefinedMeaning(name) + ")"),
             false;
    cx.error(loc, "cannot assign to " + Twine(what) + " '" + name + "'");
    cx.note(b->loc, "'" + name + "' declared here");
    return false;
  }
  if (b->kind == Binding::Let) {
    cx.error(loc, "cannot assign to '" + name + "': it was declared with "
                                                "'let'");
    cx.note(b->loc, "'" + name + "' declared here; use 'var' to make it "
                                 "mutable");
    return false;
  }
  if (!checkPlain(cx, value, valueLoc))
    return false;
  if (b->carriedType) {
    OptVal carried = carriedValue(cx, name, *b, value, valueLoc);
    if (!carried)
      return false;
    value = *carried;
  }
  b->val = value;
  return true;
}

//===----------------------------------------------------------------------===//
// for
//===----------------------------------------------------------------------===//

/// The names assigned anywhere in `block`, in order of first assignment.
static void collectAssigned(const Block &block, std::vector<std::string> &out) {
  for (auto &s : block.stmts) {
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

/// A compile-time constant of range(): the step, or the pipeline stages.
static std::optional<int64_t> rangeOption(IRGen &gen, const Expr &e,
                                          const char *what, int64_t min,
                                          const char *mustBe) {
  auto v = gen.evalConstInt(e, Twine("the ") + what + " of range()");
  if (!v)
    return std::nullopt;
  if (*v < min || *v > INT32_MAX)
    return gen.cx.error(e.loc, Twine("the ") + what + " of range() must be " +
                                   mustBe + ", got " + Twine(*v));
  return v;
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
    auto st = rangeOption(*this, *s.step, "step", 1,
                          "a positive compile-time constant that fits in i32");
    if (!st)
      return false;
    step = *st;
  }
  int64_t stages = 0; // 0: not given
  if (s.stages) {
    auto st = rangeOption(*this, *s.stages, "stages", 1,
                          "at least 1 and fit in i32");
    if (!st)
      return false;
    stages = *st;
  }
  bool splitCopies = false;
  if (s.splitCopies) {
    auto split = evalConstBool(*s.splitCopies, "the split_copies of range()");
    if (!split)
      return false;
    if (*split && stages > 2) {
      cx.error(s.stages->loc,
               "split_copies = true takes 1 or 2 stages (buffers of a tile "
               "copied a whole iteration ahead), got " +
                   Twine(stages));
      return false;
    }
    splitCopies = *split;
  }
  auto stepV = constScalar(cx, Val::ofInt(step), cx.builder.getI32Type(),
                           s.step ? s.step->loc : s.loc);
  if (!stepV)
    return false;
  if (Binding *prev = scopes.lookup(s.loopVar)) {
    cx.error(s.loopVarLoc, "redefinition of '" + s.loopVar + "'");
    cx.note(prev->loc, "previous definition here");
    return false;
  }
  // Loop-carried variables: outer `var`s assigned anywhere in the body.
  std::vector<std::string> assigned;
  collectAssigned(s.body, assigned);
  std::vector<Binding *> carried;
  llvm::SmallVector<mlir::Value> inits;
  for (auto &n : assigned) {
    Binding *b = scopes.lookup(n);
    if (!b || b->kind != Binding::Var)
      continue;
    if (b->val.kind == Val::Type) {
      cx.error(s.loc, "'" + n + "' holds " + describe(b->val) +
                          " and is assigned in this loop; a type is a "
                          "compile-time value and cannot change at run "
                          "time");
      cx.note(b->loc, "'" + n + "' declared here");
      return false;
    }
    auto m = materialize(cx, b->val, b->loc);
    if (!m)
      return false;
    carried.push_back(b);
    inits.push_back(*m);
  }
  auto forOp = mlir::scf::ForOp::create(cx.builder, cx.loc(s.loc), *lo, *hi,
                                        *stepV, inits);
  if (stages)
    forOp->setAttr(tile::kNumStagesAttrName,
                   cx.builder.getI64IntegerAttr(stages));
  if (splitCopies)
    forOp->setAttr(tile::kSplitCopiesAttrName, cx.builder.getUnitAttr());
  return emitLoopBody(s, forOp, carried);
}

bool IRGen::emitLoopBody(const Stmt &s, mlir::scf::ForOp forOp,
                         llvm::ArrayRef<Binding *> carried) {
  mlir::Block *body = forOp.getBody();
  if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
    body->back().erase();
  mlir::OpBuilder::InsertionGuard insertionGuard(cx.builder);
  cx.builder.setInsertionPointToEnd(body);
  // Inside the body the carried variables are the iter_args.
  std::vector<mlir::Type> outerCarriedTypes;
  for (size_t i = 0; i < carried.size(); ++i) {
    outerCarriedTypes.push_back(carried[i]->carriedType);
    carried[i]->val = Val::ofValue(forOp.getRegionIterArgs()[i]);
    carried[i]->carriedType = forOp.getInitArgs()[i].getType();
  }
  {
    ScopeStack::Guard scope(scopes);
    Binding loopVar;
    loopVar.kind = Binding::LoopVar;
    loopVar.val = Val::ofValue(forOp.getInductionVar());
    scopes.declare(s.loopVar, s.loopVarLoc, loopVar);
    if (cx.failed() || !emitBlock(s.body))
      return false;
  }
  llvm::SmallVector<mlir::Value> yields;
  for (auto *b : carried) {
    auto m = materialize(cx, b->val, s.loc, b->carriedType);
    if (!m)
      return false;
    yields.push_back(*m);
  }
  mlir::scf::YieldOp::create(cx.builder, cx.loc(s.loc), yields);
  // After the loop they are its results.
  for (size_t i = 0; i < carried.size(); ++i) {
    carried[i]->val = Val::ofValue(forOp.getResult(i));
    carried[i]->carriedType = outerCarriedTypes[i];
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Compile-time statements
//===----------------------------------------------------------------------===//

bool IRGen::emitIf(const Stmt &s) {
  OptVal c = eval(*s.cond);
  if (!c)
    return false;
  if (c->kind != Val::Bool) {
    if (c->kind == Val::Runtime)
      return cx.error(s.cond->loc, "the condition of 'if' must be a "
                                   "compile-time constant, but this is a "
                                   "runtime value (" +
                                       typeStr(c->v.getType()) +
                                       "); use where(cond, a, b) to select "
                                       "at runtime"),
             false;
    return cx.error(s.cond->loc, "the condition of 'if' must be a bool, "
                                 "got " + describe(*c)),
           false;
  }
  const Block &taken = c->b ? s.body : s.elseBody;
  ScopeStack::Guard scope(scopes);
  return emitBlock(taken);
}

bool IRGen::emitStaticAssert(const Stmt &s) {
  if (s.args.size() != 1)
    return cx.error(s.loc, "static_assert expects a condition and an "
                           "optional message: static_assert(COND, "
                           "\"message\")"),
           false;
  OptVal c = eval(*s.args[0]);
  if (!c)
    return false;
  if (c->kind != Val::Bool)
    return cx.error(s.args[0]->loc, "the condition of static_assert must be "
                                    "a compile-time bool, got " +
                                        describe(*c)),
           false;
  if (!c->b)
    return cx.error(s.loc, s.hasMessage
                               ? "static assertion failed: " + s.message
                               : std::string("static assertion failed")),
           false;
  return true;
}

/// A runtime check: a bool scalar or tile and a string literal. A condition
/// known to hold emits nothing; one known to fail still fails only when the
/// statement runs (like CUDA's assert), so it becomes a constant.
bool IRGen::emitDeviceAssert(const Stmt &s) {
  if (s.args.empty() || s.args.size() > 2 ||
      (s.args.size() == 1 && !s.hasMessage))
    return cx.error(s.loc, "device_assert expects a condition and a message: "
                           "device_assert(COND, \"message\")"),
           false;
  OptVal c = eval(*s.args[0]);
  if (!c)
    return false;
  if (s.args.size() == 2)
    return cx.error(s.args[1]->loc, "the message of device_assert must be a "
                                    "string literal"),
           false;
  if (s.message.empty())
    return cx.error(s.messageLoc, "the message of device_assert must not be "
                                  "empty"),
           false;
  if (llvm::StringRef(s.message).contains('\0'))
    return cx.error(s.messageLoc, "the message of device_assert must not "
                                  "contain a NUL character"),
           false;
  mlir::Value cond;
  if (c->kind == Val::Bool) {
    if (c->b)
      return true;
    cond = mlir::arith::ConstantOp::create(cx.builder, cx.loc(s.loc),
                                           cx.builder.getBoolAttr(false));
  } else if (c->kind == Val::Runtime && isI1(c->v.getType())) {
    cond = c->v;
  } else {
    return cx.error(s.args[0]->loc, "the condition of device_assert must be "
                                    "a bool scalar or tile, got " +
                                        describe(*c)),
           false;
  }
  tile::DeviceAssertOp::create(cx.builder, cx.loc(s.loc), cond, s.message);
  return true;
}

bool IRGen::emitWarps(const Stmt &s) {
  if (s.args.size() != 1)
    return cx.error(s.loc, "warps() expects one argument, got " +
                               Twine(s.args.size())),
           false;
  auto n = evalConstInt(*s.args[0], "the argument of warps()");
  if (!n)
    return false;
  if (*n <= 0 || *n > 32)
    return cx.error(s.args[0]->loc, "the number of warps must be between 1 "
                                    "and 32 (1024 threads), got " +
                                        Twine(*n)),
           false;
  launch.numWarps = *n;
  return true;
}

bool IRGen::emitMmaLayout(const Stmt &s) {
  if (s.args.size() != 2)
    return cx.error(s.loc, "mma_layout() expects two lists, the warps and "
                           "the register repeats along M, N, K: "
                           "mma_layout([4, 1, 1], [2, 1, 1]), got " +
                               Twine(s.args.size()) + " arguments"),
           false;
  for (unsigned i = 0; i < 2; ++i) {
    const Expr &list = *s.args[i];
    const char *what = i == 0 ? "warps" : "register repeats";
    if (list.kind != ExprKind::List || list.args.size() != 3)
      return cx.error(list.loc, Twine("the ") + what +
                                    " of mma_layout() must be a list of "
                                    "three integers [M, N, K]"),
             false;
    for (unsigned d = 0; d < 3; ++d) {
      auto v = evalConstInt(*list.args[d], Twine("an entry of the ") + what +
                                               " of mma_layout()");
      if (!v)
        return false;
      if (*v < 1 || *v > 64)
        return cx.error(list.args[d]->loc,
                        Twine("the ") + what +
                            " of mma_layout() must be between 1 and 64, "
                            "got " + Twine(*v)),
               false;
      (i == 0 ? launch.mmaWarps : launch.mmaValues)[d] = *v;
    }
  }
  if (launch.mmaWarps[2] != 1)
    return cx.error(s.args[0]->loc, "mma_layout() cannot put warps along K "
                                    "(that would need a cross-warp "
                                    "reduction)"),
           false;
  launch.mmaLayoutStmt = &s;
  return true;
}

bool IRGen::emitExprStmt(const Stmt &s) {
  const Expr &e = *s.value;
  const FunctionDecl *fn =
      e.kind == ExprKind::Call ? cx.program.lookupFunction(e.name) : nullptr;
  if (fn) {
    OptVal v = inlineCall(e, *fn);
    if (!v)
      return false;
    if (v->kind != Val::Tuple || !v->elems.empty())
      return cx.error(e.loc, "the result of '" + e.name + "' is unused; "
                             "bind it with 'let' (only a function that "
                             "returns nothing can be called as a statement)"),
             false;
    return true;
  }
  if (e.kind != ExprKind::Call ||
      (e.name != "store" && e.name != "atomic_add"))
    return cx.error(e.loc, "expression result is unused; only a call to "
                           "store(...) or atomic_add(...) can be used as a "
                           "statement"),
           false;
  if (!resolveBuiltin(e))
    return false;
  return e.name == "store" ? emitStore(*this, e) : emitAtomicAdd(*this, e);
}

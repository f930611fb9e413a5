//===- Kernel.cpp - The kernel: signature, grid function, attributes ------===//
//
// A kernel becomes two functions: the kernel itself and `NAME_grid`, which
// computes the launch grid from the same parameters. The kernel carries the
// constants, the warp count and the optional MMA layout as attributes.
//
//===----------------------------------------------------------------------===//

#include "IRGen/IRGen.h"
#include "Sema/Coerce.h"
#include "Sema/ConstEval.h"
#include "Sema/Types.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "flashc/Frontend/IRGen.h"
#include "Import.h"
#include "flashc/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace flash;
using namespace flash::frontend;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

namespace {
class KernelGen {
public:
  KernelGen(const Program &program, llvm::ArrayRef<Define> defines, int arch,
            bool wgmma, mlir::MLIRContext &context, DiagnosticPrinter &diags)
      : kernel(*program.kernel), defines(defines), arch(arch), wgmma(wgmma),
        cx(program, context, diags), gen(cx) {}

  mlir::OwningOpRef<mlir::ModuleOp> run();

private:
  bool checkDefines();
  bool declarePredefined();
  std::optional<Val> constValue(const ConstParam &c);
  bool evalConsts();
  std::optional<mlir::Type> elementTypeOf(const Param &p);
  std::optional<mlir::Type> paramType(const Param &p);
  bool buildParams();
  const Stmt *checkGridWarps();
  void bindParamsAndSymbols(mlir::func::FuncOp f, bool withTensors);
  bool emitKernelBody(mlir::func::FuncOp kernelFn);
  bool emitGridFunction(mlir::func::FuncOp gridFn, const Stmt &grid);
  bool setKernelAttributes(mlir::func::FuncOp kernelFn,
                           llvm::StringRef gridName);

  const KernelDecl &kernel;
  llvm::ArrayRef<Define> defines;
  int arch;
  bool wgmma;
  FrontendContext cx;
  IRGen gen;
  struct Symbol {
    std::string name;
    unsigned param, dim; // the first dim it names
  };
  std::vector<Symbol> symbols;
  std::vector<std::pair<std::string, Val>> constValues;
};
} // namespace

//===----------------------------------------------------------------------===//
// Constant parameters
//===----------------------------------------------------------------------===//

static const char *kindName(ConstParam::Kind kind) {
  return kind == ConstParam::Int     ? "int"
         : kind == ConstParam::Float ? "float"
         : kind == ConstParam::Bool  ? "bool"
                                     : "type";
}

/// -D overrides must name declared constants.
bool KernelGen::checkDefines() {
  for (const Define &d : defines) {
    if (d.name == kArchConstantName) {
      cx.error("-D " + d.name + "=" + d.value + ": '" + d.name +
               "' is predefined: the target's SM version (" + Twine(arch) +
               " here), set by the target arch (flashc --arch=sm_XX, "
               "Python's arch=)");
      return false;
    }
    if (d.name == kWgmmaConstantName) {
      cx.error("-D " + d.name + "=" + d.value + ": '" + d.name +
               "' is predefined: whether MMAs lower to warpgroup MMAs (" +
               (wgmma ? "true" : "false") +
               " here), set by the target arch (true for sm_90a)");
      return false;
    }
    if (llvm::any_of(kernel.consts,
                     [&](const ConstParam &c) { return c.name == d.name; }))
      continue;
    std::string declared;
    for (auto &c : kernel.consts)
      declared += (declared.empty() ? "" : ", ") + c.name;
    cx.error("-D " + d.name + "=" + d.value + ": kernel '" + kernel.name +
             "' has no constant parameter '" + d.name + "' (" +
             (declared.empty() ? std::string("it declares none")
                               : "declared: " + declared) +
             ")");
    return false;
  }
  return true;
}

/// The value of constant `c`: its last -D override, or its default.
std::optional<Val> KernelGen::constValue(const ConstParam &c) {
  const Define *override = nullptr;
  for (const Define &d : defines)
    if (d.name == c.name)
      override = &d; // the last -D wins
  if (override) {
    auto v = parseDefineValue(c.kind, override->value, cx.builder);
    if (!v) {
      const char *need =
          c.kind == ConstParam::Int     ? "an integer literal"
          : c.kind == ConstParam::Float ? "an integer or float literal"
          : c.kind == ConstParam::Bool
              ? "true or false"
              : "an element type (f16, bf16, f8e4m3, f32, i32 or bool)";
      return cx.error("-D " + c.name + "=" + override->value + ": '" + c.name +
                      "' is " + (c.kind == ConstParam::Int ? "an " : "a ") +
                      kindName(c.kind) + " constant and needs " + need +
                      ", got '" + override->value + "'");
    }
    return v;
  }
  OptVal v = gen.eval(*c.defaultValue);
  if (!v)
    return std::nullopt;
  if (!v->isConst() && v->kind != Val::Type)
    return cx.error(c.defaultValue->loc, "the default value of '" + c.name +
                                             "' must be a compile-time "
                                             "constant");
  bool ok = (c.kind == ConstParam::Type && v->kind == Val::Type) ||
            (c.kind == ConstParam::Int && v->kind == Val::Int) ||
            (c.kind == ConstParam::Float &&
             (v->kind == Val::Int || v->kind == Val::Float)) ||
            (c.kind == ConstParam::Bool && v->kind == Val::Bool);
  if (!ok)
    return cx.error(c.defaultValue->loc,
                    "the default value of " + Twine(kindName(c.kind)) +
                        " constant '" + c.name + "' is " + describe(*v));
  if (c.kind == ConstParam::Float)
    return Val::ofFloat(v->asDouble());
  return v;
}

/// ARCH and WGMMA, before the kernel's own constants: their defaults may
/// read them. A constant parameter of either name is refused at its
/// declaration.
bool KernelGen::declarePredefined() {
  for (const ConstParam &c : kernel.consts) {
    if (c.name == kArchConstantName)
      return cx.error(c.loc, "'" + c.name +
                                 "' is predefined (the target's SM version, "
                                 "80 for sm_80) and cannot be a constant "
                                 "parameter; read it in a default instead"),
             false;
    if (c.name == kWgmmaConstantName)
      return cx.error(c.loc, "'" + c.name +
                                 "' is predefined (whether MMAs lower to "
                                 "warpgroup MMAs: sm_90a) and cannot be a "
                                 "constant parameter; read it in a default "
                                 "instead"),
             false;
  }
  auto declare = [&](llvm::StringRef name, Val val) {
    Binding b;
    b.kind = Binding::Const;
    b.val = val;
    b.predefined = true;
    return gen.scopes.declare(name, SMLoc(), b);
  };
  return declare(kArchConstantName, Val::ofInt(arch)) &&
         declare(kWgmmaConstantName, Val::ofBool(wgmma));
}

bool KernelGen::evalConsts() {
  if (!checkDefines() || !declarePredefined())
    return false;
  // Evaluate defaults in a scratch module so that nothing leaks into the
  // kernel if an expression is not constant.
  auto scratch = mlir::ModuleOp::create(cx.builder.getUnknownLoc());
  mlir::OwningOpRef<mlir::ModuleOp> scratchRef(scratch);
  cx.builder.setInsertionPointToEnd(scratch.getBody());
  for (const ConstParam &c : kernel.consts) {
    std::optional<Val> value = constValue(c);
    if (!value)
      return false;
    Binding b;
    b.kind = Binding::Const;
    b.val = *value;
    if (!gen.scopes.declare(c.name, c.loc, b))
      return false;
    constValues.push_back({c.name, *value});
  }
  cx.builder.clearInsertionPoint();
  return true;
}

//===----------------------------------------------------------------------===//
// Runtime parameters
//===----------------------------------------------------------------------===//

/// The element type parameter `p` names: a type name or a type constant.
std::optional<mlir::Type> KernelGen::elementTypeOf(const Param &p) {
  if (std::optional<mlir::Type> t =
          builtinTypeNamed(p.elementType, cx.builder);
      t && p.elementType != "i1")
    return t;
  Binding *c = gen.scopes.lookup(p.elementType);
  if (c && c->kind == Binding::Const && c->val.kind == Val::Type)
    return c->val.type;
  if (c && c->kind == Binding::Const) {
    cx.error(p.typeLoc, "the element type of parameter '" + p.name +
                            "' must be a type, but '" + p.elementType +
                            "' is " + describe(c->val));
    if (c->loc.isValid())
      cx.note(c->loc, "'" + p.elementType + "' declared here");
    return std::nullopt;
  }
  if (p.isTensor)
    return cx.error(p.typeLoc, "unknown tensor element type '" +
                                   p.elementType +
                                   "' (expected f16, bf16, f8e4m3, f32, i32, bool or "
                                   "a type constant)");
  return cx.error(p.typeLoc, "unknown type '" + p.elementType +
                                 "' for parameter '" + p.name +
                                 "' (expected f32, i32, a type constant, or "
                                 "a tensor such as f16[N, D])");
}

/// The type of parameter `p`: a scalar, or a !tile.global whose dims are
/// literals, int constants or shape symbols (recorded in `symbols`).
std::optional<mlir::Type> KernelGen::paramType(const Param &p) {
  mlir::OpBuilder &b = cx.builder;
  std::optional<mlir::Type> elt = elementTypeOf(p);
  if (!elt)
    return std::nullopt;
  mlir::Type e = *elt;
  if (!p.isTensor) {
    if (!e.isF32() && !e.isInteger(32))
      return cx.error(p.typeLoc, "scalar parameter '" + p.name +
                                     "' must be f32 or i32, not " +
                                     eltName(e) + " ('" + p.elementType +
                                     "' is " + eltName(e) + ")");
    return e;
  }
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<mlir::StringAttr> names;
  for (unsigned d = 0; d < p.dims.size(); ++d) {
    const Param::Dim &dim = p.dims[d];
    int64_t size = dim.literal;
    if (!dim.name.empty()) {
      if (Binding *c = gen.scopes.lookup(dim.name);
          c && c->kind == Binding::Const) {
        if (c->val.kind != Val::Int)
          return cx.error(dim.loc, "dim '" + dim.name + "' names " +
                                       describe(c->val) +
                                       "; static dims must be int "
                                       "constants");
        if (c->val.i <= 0 || c->val.i > INT32_MAX)
          return cx.error(dim.loc, "dim '" + dim.name + "' has the value " +
                                       Twine(c->val.i) +
                                       "; a static dim must be between 1 and "
                                       "2^31 - 1");
        size = c->val.i;
      } else {
        if (llvm::any_of(kernel.params,
                         [&](const Param &q) { return q.name == dim.name; }))
          return cx.error(dim.loc, "'" + dim.name + "' is a parameter and "
                                                    "cannot be used as a dim");
        if (llvm::none_of(symbols,
                          [&](auto &s) { return s.name == dim.name; }))
          symbols.push_back({dim.name, (unsigned)gen.params.size(), d});
        shape.push_back(mlir::ShapedType::kDynamic);
        names.push_back(b.getStringAttr(dim.name));
        continue;
      }
    } else if (dim.literal <= 0 || dim.literal > INT32_MAX) {
      return cx.error(dim.loc, "a static dim must be between 1 and 2^31 - 1, "
                               "got " + Twine(dim.literal));
    }
    shape.push_back(size);
    names.push_back(mlir::StringAttr());
  }
  return tile::GlobalType::get(&cx.context, e, shape, names);
}

bool KernelGen::buildParams() {
  for (const Param &p : kernel.params) {
    if (Binding *prev = gen.scopes.lookup(p.name)) {
      cx.error(p.loc, "redefinition of '" + p.name + "'");
      cx.note(prev->loc, "previous definition here");
      return false;
    }
    for (auto &pi : gen.params)
      if (pi.ast->name == p.name) {
        cx.error(p.loc, "redefinition of parameter '" + p.name + "'");
        cx.note(pi.ast->loc, "previous definition here");
        return false;
      }
    for (auto &sym : symbols)
      if (sym.name == p.name) {
        cx.error(p.loc, "parameter '" + p.name + "' has the same name as a "
                                                 "shape symbol");
        cx.note(gen.params[sym.param].ast->dims[sym.dim].loc,
                "shape symbol '" + p.name + "' introduced here");
        return false;
      }
    std::optional<mlir::Type> type = paramType(p);
    if (!type)
      return false;
    gen.params.push_back({&p, *type});
  }
  return true;
}

void KernelGen::bindParamsAndSymbols(mlir::func::FuncOp f, bool withTensors) {
  mlir::Block &entry = f.getBody().front();
  cx.builder.setInsertionPointToStart(&entry);
  for (unsigned i = 0; i < gen.params.size(); ++i) {
    const Param &p = *gen.params[i].ast;
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
    gen.scopes.declare(p.name, p.loc, b);
  }
  for (auto &sym : symbols) {
    SMLoc loc = gen.params[sym.param].ast->dims[sym.dim].loc;
    Binding b;
    b.kind = Binding::Symbol;
    b.val = Val::ofValue(tile::DimOp::create(
        cx.builder, cx.loc(loc), cx.builder.getI32Type(),
        entry.getArgument(sym.param), cx.builder.getI64IntegerAttr(sym.dim)));
    gen.scopes.declare(sym.name, loc, b);
  }
}

//===----------------------------------------------------------------------===//
// grid(), warps() and mma_layout()
//===----------------------------------------------------------------------===//

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

/// Each of grid(), warps() and mma_layout() may appear once, at the top
/// level; grid() must. Returns the grid() statement.
const Stmt *KernelGen::checkGridWarps() {
  const Stmt *grid = nullptr;
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
      if (!llvm::is_contained(top, s))
        return cx.error(s->loc, Twine(name) + "() must be at the top level "
                                              "of the kernel body, not "
                                              "inside 'if' or 'for'"),
               nullptr;
    if (top.size() > 1) {
      cx.error(top[1]->loc, Twine(name) + "() may appear only once");
      cx.note(top[0]->loc, "previous " + Twine(name) + "() here");
      return nullptr;
    }
    if (kind != StmtKind::Grid)
      continue;
    if (top.empty())
      return cx.error(kernel.loc, "kernel '" + kernel.name + "' has no "
                                  "grid(...) statement; add e.g. "
                                  "'grid(cdiv(N, BLOCK));'"),
             nullptr;
    grid = top[0];
    if (grid->args.empty() || grid->args.size() > 3)
      return cx.error(grid->loc, "grid() expects 1 to 3 sizes, got " +
                                     Twine(grid->args.size())),
             nullptr;
  }
  return grid;
}

//===----------------------------------------------------------------------===//
// The two functions
//===----------------------------------------------------------------------===//

bool KernelGen::emitKernelBody(mlir::func::FuncOp kernelFn) {
  ScopeStack::Guard scope(gen.scopes);
  bindParamsAndSymbols(kernelFn, /*withTensors=*/true);
  if (cx.failed())
    return false;
  cx.builder.setInsertionPointToEnd(&kernelFn.getBody().front());
  if (!gen.emitBlock(kernel.body) || cx.failed())
    return false;
  mlir::func::ReturnOp::create(cx.builder, cx.loc(kernel.loc));
  return true;
}

bool KernelGen::emitGridFunction(mlir::func::FuncOp gridFn, const Stmt &grid) {
  ScopeStack::Guard scope(gen.scopes);
  gen.inGrid = true;
  bindParamsAndSymbols(gridFn, /*withTensors=*/false);
  if (cx.failed())
    return false;
  cx.builder.setInsertionPointToEnd(&gridFn.getBody().front());
  mlir::Type i32 = cx.builder.getI32Type();
  llvm::SmallVector<mlir::Value> sizes;
  for (auto &a : grid.args) {
    OptVal v = gen.evalPlain(*a);
    if (!v)
      return false;
    if (v->kind == Val::Int && v->i <= 0)
      return cx.error(a->loc, "grid size must be positive, got " +
                                  Twine(v->i)),
             false;
    if (v->kind != Val::Int && !(v->isRuntimeScalar() && isI32(v->v.getType())))
      return cx.error(a->loc, "grid sizes must be integer scalars, got " +
                                  describe(*v)),
             false;
    auto m = materialize(cx, *v, a->loc, i32);
    if (!m)
      return false;
    sizes.push_back(*m);
  }
  while (sizes.size() < 3)
    sizes.push_back(*constScalar(cx, Val::ofInt(1), i32, grid.loc));
  mlir::func::ReturnOp::create(cx.builder, cx.loc(grid.loc), sizes);
  gen.inGrid = false;
  return true;
}

bool KernelGen::setKernelAttributes(mlir::func::FuncOp kernelFn,
                                    llvm::StringRef gridName) {
  mlir::OpBuilder &b = cx.builder;
  llvm::SmallVector<mlir::NamedAttribute> consts;
  for (auto &[name, v] : constValues) {
    mlir::Attribute a = v.kind == Val::Int
                            ? mlir::Attribute(b.getI64IntegerAttr(v.i))
                        : v.kind == Val::Float
                            ? mlir::Attribute(b.getF64FloatAttr(v.f))
                        : v.kind == Val::Type
                            ? mlir::Attribute(mlir::TypeAttr::get(v.type))
                            : mlir::Attribute(b.getBoolAttr(v.b));
    consts.push_back(b.getNamedAttr(name, a));
  }
  const LaunchConfig &launch = gen.launch;
  kernelFn->setAttr(tile::kGridAttrName,
                    mlir::FlatSymbolRefAttr::get(&cx.context, gridName));
  kernelFn->setAttr(tile::kNumWarpsAttrName,
                    b.getI32IntegerAttr(launch.numWarps));
  kernelFn->setAttr(tile::kConstantsAttrName, b.getDictionaryAttr(consts));
  if (!launch.mmaLayoutStmt)
    return true;
  int64_t warps = launch.mmaWarps[0] * launch.mmaWarps[1] * launch.mmaWarps[2];
  if (warps != launch.numWarps)
    return cx.error(launch.mmaLayoutStmt->loc,
                    "mma_layout() spreads the MMA over " + Twine(warps) +
                        " warps but the kernel has " +
                        Twine(launch.numWarps) + " (see warps())"),
           false;
  kernelFn->setAttr(tile::kMmaLayoutAttrName,
                    tile::MmaLayoutAttr::get(&cx.context, launch.mmaWarps,
                                             launch.mmaValues));
  return true;
}

mlir::OwningOpRef<mlir::ModuleOp> KernelGen::run() {
  // Functions see the constants (those declared so far, in a constant's
  // default), but not the parameters or shape symbols.
  ScopeStack::Guard globals(gen.scopes);
  gen.scopes.shareWithFunctions();
  if (!evalConsts() || !buildParams())
    return nullptr;
  const Stmt *grid = checkGridWarps();
  if (!grid)
    return nullptr;

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(cx.loc(kernel.loc));
  llvm::SmallVector<mlir::Type> argTypes;
  for (auto &p : gen.params)
    argTypes.push_back(p.type);
  mlir::OpBuilder &b = cx.builder;
  mlir::Type i32 = b.getI32Type();
  std::string gridName = kernel.name + "_grid";
  b.setInsertionPointToEnd(module->getBody());
  auto gridFn = mlir::func::FuncOp::create(
      b, cx.loc(grid->loc), gridName,
      b.getFunctionType(argTypes, {i32, i32, i32}));
  auto kernelFn = mlir::func::FuncOp::create(
      b, cx.loc(kernel.loc), kernel.name, b.getFunctionType(argTypes, {}));
  for (auto f : {gridFn, kernelFn}) {
    f.addEntryBlock();
    for (unsigned i = 0; i < gen.params.size(); ++i)
      f.setArgAttr(i, tile::kArgNameAttrName,
                   b.getStringAttr(gen.params[i].ast->name));
  }
  if (!emitKernelBody(kernelFn) || !emitGridFunction(gridFn, *grid) ||
      !setKernelAttributes(kernelFn, gridName))
    return nullptr;
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

mlir::OwningOpRef<mlir::ModuleOp>
flash::compileTileSource(llvm::SourceMgr &sourceMgr,
                         llvm::ArrayRef<Define> defines,
                         mlir::MLIRContext &context, DiagnosticPrinter &diags,
                         CompileStatus *status, const ImportOptions &imports,
                         int arch, bool wgmma) {
  if (status)
    *status = CompileStatus::UserError;
  loadAllDialects(context);
  std::unique_ptr<Program> program = loadProgram(diags, imports);
  if (!program || diags.hadError())
    return nullptr;
  const KernelDecl *kernel = program->kernel;
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
    module = KernelGen(*program, defines, arch, wgmma, context, diags).run();
    if (!module || diags.hadError())
      return nullptr;
    (*module)->setAttr(tile::kArchAttrName,
                       mlir::IntegerAttr::get(
                           mlir::IntegerType::get(&context, 64), arch));
    if (wgmma)
      (*module)->setAttr(tile::kWgmmaAttrName, mlir::UnitAttr::get(&context));
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

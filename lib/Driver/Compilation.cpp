//===- Compilation.cpp - one compile of a tile program --------------------===//
#include "flashc/Driver/Compilation.h"

#include "flashc/Frontend/SourceText.h"
#include "flashc/Pipelines/Pipelines.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Support/SourceDiagnostics.h"
#include "flashc/Target/Sidecar.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <iterator>

using namespace mlir;

namespace flash {

namespace {
constexpr std::string_view kLevelNames[] = {
    "front-end", "tile", "layout", "simt", "llvm", "ptx", "cubin"};
} // namespace

std::string_view levelName(Level level) {
  return kLevelNames[static_cast<int>(level)];
}

std::optional<Level> parseEmitLevel(std::string_view name) {
  for (int i = static_cast<int>(Level::Tile); i < (int)std::size(kLevelNames);
       ++i)
    if (kLevelNames[i] == name)
      return static_cast<Level>(i);
  return std::nullopt;
}

LowerResult lowerModule(ModuleOp module, Level from, Level to,
                        const TargetOptions &target,
                        ConfigurePassManager configure) {
  to = std::min(to, Level::LLVM);
  if (from >= to)
    return LowerResult::Success;
  MLIRContext *context = module.getContext();
  PassManager pm(context);
  if (configure && failed(configure(pm)))
    return LowerResult::Rejected;
  if (from == Level::FrontEnd)
    buildTilePipeline(pm, target.compile);
  if (from <= Level::Tile && to >= Level::Layout) {
    // Shared memory is checked against the arch as soon as it is placed.
    LayoutPipelineOptions layout;
    layout.maxSharedBytes = maxSharedBytesPerCTA(target.arch);
    layout.arch = target.arch;
    layout.compile = target.compile;
    buildTileToLayoutPipeline(pm, layout);
  }
  if (from <= Level::Layout && to >= Level::SIMT)
    buildLayoutToSIMTPipeline(pm, target.compile);
  if (to == Level::LLVM)
    buildSIMTToLLVMPipeline(pm, target);

  unsigned errors = 0;
  // Counts, and leaves the printing to the handlers registered before it.
  ScopedDiagnosticHandler counter(context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return failure();
  });
  if (succeeded(pm.run(module)))
    return LowerResult::Success;
  bool tileOnly = to == Level::Tile;
  return errors && !tileOnly ? LowerResult::Rejected : LowerResult::Failed;
}

int emitMachineCode(ModuleOp module, const TargetOptions &target, Level level,
                    std::string &code, std::string &sidecar,
                    llvm::raw_ostream &diagnostics) {
  unsigned errors = 0;
  ScopedDiagnosticHandler counter(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return failure();
  });
  FailureOr<std::string> sidecarText = writeLaunchSidecar(module, target);
  FailureOr<std::string> ptx = failed(sidecarText)
                                   ? FailureOr<std::string>(failure())
                                   : emitPTX(module, target);
  if (failed(sidecarText) || failed(ptx)) {
    if (errors)
      return 1;
    diagnostics << "internal error: no PTX, without a diagnostic\n";
    return 2;
  }
  sidecar = std::move(*sidecarText);
  if (level != Level::Cubin) {
    code = std::move(*ptx);
    return 0;
  }
  llvm::Expected<std::string> cubin = assembleCubin(*ptx, target);
  if (!cubin) {
    diagnostics << "error: " << llvm::toString(cubin.takeError()) << "\n";
    return 1;
  }
  code = std::move(*cubin);
  return 0;
}

Compilation::Compilation(CompileInput input, llvm::raw_ostream &diagnostics)
    : diagStream(&diagnostics), defines(std::move(input.defines)),
      imports(std::move(input.imports)) {
  targetOptions.arch = std::move(input.arch);
  targetOptions.compile = input.options;
  DialectRegistry registry;
  registerTargetDialects(registry);
  mlirContext = std::make_unique<MLIRContext>(registry);
  mlirContext->printOpOnDiagnostic(false); // the source line says more
  if (input.source)
    sourceMgr.AddNewSourceBuffer(withLineFeeds(std::move(input.source)),
                                 llvm::SMLoc());
  located = std::make_unique<SourceDiagnostics>(mlirContext.get(),
                                                diagnostics, &sourceMgr);
}

Compilation::~Compilation() {
  // The module before the context that owns it, the handler too.
  ir = nullptr;
  located.reset();
}

void Compilation::setDiagnosticStream(llvm::raw_ostream &diagnostics) {
  located.reset();
  diagStream = &diagnostics;
  located = std::make_unique<SourceDiagnostics>(mlirContext.get(),
                                                diagnostics, &sourceMgr);
}

std::string Compilation::checkTarget(Level level) const {
  if (!findArch(targetOptions.arch))
    return unsupportedArchMessage(targetOptions.arch);
  if (level >= Level::LLVM)
    if (llvm::Error error = verifyTargetOptions(targetOptions))
      return llvm::toString(std::move(error));
  return "";
}

int Compilation::runFrontEnd() {
  frontEndRan = true;
  if (sourceMgr.getNumBuffers() == 0) {
    *diagStream << "internal error: no source to compile\n";
    return 2;
  }
  if (std::string error = checkTarget(Level::FrontEnd); !error.empty()) {
    *diagStream << "error: " << error << "\n";
    return 1;
  }
  DiagnosticPrinter printer(sourceMgr, *diagStream);
  CompileStatus status = CompileStatus::Success;
  ir = compileTileSource(sourceMgr, defines, *mlirContext, printer, &status,
                         imports, archNumber(targetOptions.arch),
                         archHasWgmma(targetOptions.arch));
  if (!ir)
    return status == CompileStatus::InternalError ? 2 : 1;
  current = Level::FrontEnd;
  return 0;
}

int Compilation::lowerTo(Level level, ConfigurePassManager configure) {
  if (!frontEndRan)
    if (int rc = runFrontEnd())
      return rc;
  if (!ir)
    return 1; // the front end failed and said why
  Level to = level >= Level::PTX ? Level::SIMT : level;
  if (to <= current)
    return 0;
  if (std::string error = checkTarget(to); !error.empty()) {
    *diagStream << "error: " << error << "\n";
    return 1;
  }
  switch (lowerModule(*ir, current, to, targetOptions, configure)) {
  case LowerResult::Success:
    current = to;
    return 0;
  case LowerResult::Rejected:
    return 1;
  case LowerResult::Failed:
    break;
  }
  *diagStream << "internal error: "
              << (to == Level::Tile ? std::string("the tile pipeline failed")
                                    : "the lowering to --emit=" +
                                          std::string(levelName(to)) +
                                          " failed without a diagnostic")
              << "\n";
  // The module may be half lowered: nothing more comes of it.
  ir = nullptr;
  return 2;
}

int Compilation::emitMachineCode(Level level, std::string &code,
                                 std::string &sidecar) {
  if (int rc = lowerTo(Level::SIMT))
    return rc;
  if (std::string error = checkTarget(Level::PTX); !error.empty()) {
    *diagStream << "error: " << error << "\n";
    return 1;
  }
  return flash::emitMachineCode(*ir, targetOptions, level, code, sidecar,
                                *diagStream);
}

OwningOpRef<ModuleOp> Compilation::cloneModule() const {
  if (!ir)
    return nullptr;
  ModuleOp module = ir.get();
  return OwningOpRef<ModuleOp>(module.clone());
}

} // namespace flash

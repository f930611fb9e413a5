//===- flashc.cpp - the flashc driver -------------------------------------===//
//
//   flashc FILE.tile [-D NAME=VALUE]... [-I DIR]...
//          [--emit=tile|layout|simt|llvm|ptx|cubin] [--arch=sm_XX] [-o OUT]
//   flashc run FILE.tile --target=interp [-D ...]... --arg NAME=FILE.npy|NUMBER
//          ... --out NAME=FILE.npy ...
//
// Exit codes: 0 success, 1 user error, 2 internal error.
//
//===----------------------------------------------------------------------===//

#include "flashc/Conversion/Passes.h"
#include "flashc/Frontend/IRGen.h"
#include "flashc/Frontend/SourceText.h"
#include "flashc/Frontend/VirtualFiles.h"
#include "flashc/Target/PTX.h"
#include "flashc/Target/Sidecar.h"
#include "flashc/Transforms/Passes.h"
#include "flashc/Pipelines/Pipelines.h"

#include "flashc/InitAllDialects.h"
#include "flashc/Run/Run.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Runtime/AtomicFile.h"
#include "flashc/Support/OutOfMemory.h"
#include "flashc/Support/SourceDiagnostics.h"
#include "flashc/Support/TemporaryFiles.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace {
/// Levels in pipeline order: each includes the ones before it.
enum class EmitKind { Tile, Layout, SIMT, LLVM, PTX, Cubin };

cl::OptionCategory flashcCategory("flashc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.tile>"),
                               cl::cat(flashcCategory));
cl::list<std::string>
    defineOpts("D", cl::Prefix,
               cl::desc("Override a compile-time constant: -D NAME=VALUE"),
               cl::value_desc("NAME=VALUE"), cl::cat(flashcCategory));
cl::list<std::string>
    importDirOpts("I", cl::Prefix,
                  cl::desc("Search DIR for imported files (after the "
                           "importing file's directory)"),
                  cl::value_desc("DIR"), cl::cat(flashcCategory));
cl::opt<EmitKind> emitKind(
    "emit",
    cl::desc("What to emit (default: ptx or cubin when -o names a .ptx or "
             ".cubin file, tile otherwise)"),
    cl::init(EmitKind::Tile),
    cl::values(clEnumValN(EmitKind::Tile, "tile",
                          "tile IR after the tile pipeline"),
               clEnumValN(EmitKind::Layout, "layout",
                          "tile IR with a distributed layout on every tile"),
               clEnumValN(EmitKind::SIMT, "simt",
                          "the SIMT level: gpu.module, one thread's program"),
               clEnumValN(EmitKind::LLVM, "llvm", "LLVM dialect with NVVM"),
               clEnumValN(EmitKind::PTX, "ptx",
                          "PTX; with -o OUT also the launch sidecar OUT.json"),
               clEnumValN(EmitKind::Cubin, "cubin",
                          "cubin through ptxas (needs -o; also OUT.json)")),
    cl::cat(flashcCategory));
const std::string archHelp =
    "GPU architecture: " + flash::archList(" or ") +
    " (default: " + std::string(flash::kDefaultArch) +
    "); kernels read it as ARCH (80 for sm_80)";
cl::opt<std::string> archOpt("arch", cl::desc(archHelp),
                             cl::value_desc("sm_XX"),
                             cl::init(std::string(flash::kDefaultArch)),
                             cl::cat(flashcCategory));
cl::opt<bool> splitMaskedLoopsOpt(
    "split-masked-loops",
    cl::desc("Split masked key loops into skipped, unmasked and masked "
             "blocks (tile-split-masked-loops; =false to compare)"),
    cl::init(true), cl::cat(flashcCategory));
cl::opt<bool> deferLoopSumsOpt(
    "defer-loop-sums",
    cl::desc("Add loop-carried row sums up across lanes once, after the loop "
             "(tile-defer-loop-sums; =false to compare)"),
    cl::init(true), cl::cat(flashcCategory));
cl::opt<bool> mergeMaskBoundsOpt(
    "merge-mask-bounds",
    cl::desc("One comparison per bound of a mask in the masked loops "
             "(tile-merge-mask-bounds; =false to compare)"),
    cl::init(true), cl::cat(flashcCategory));
cl::opt<bool> leanMasksOpt(
    "lean-masks",
    cl::desc("--merge-mask-bounds, and masks compare loop-invariant "
             "columns, as immediates, with per-row limits minus start_n "
             "(tile-shift-compare-offsets, convert-tile-to-simt "
             "iota-immediates; off by default: ptxas spills more in some "
             "configurations)"),
    cl::init(false), cl::cat(flashcCategory));
cl::opt<bool> timingOpt("timing", cl::desc("Report the time of every pass"),
                        cl::cat(flashcCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(flashcCategory));
cl::opt<std::string> targetOpt("target",
                               cl::desc("flashc run: where to run the kernel "
                                        "(interp, emulate, cuda)"),
                               cl::value_desc("target"), cl::init(""),
                               cl::cat(flashcCategory));
cl::list<std::string> argOpts("arg",
                              cl::desc("flashc run: bind a kernel parameter: "
                                       "NAME=FILE.npy or NAME=NUMBER"),
                              cl::value_desc("NAME=VALUE"),
                              cl::cat(flashcCategory));
cl::list<std::string> outOpts("out",
                              cl::desc("flashc run: write a tensor parameter "
                                       "after the run: NAME=FILE.npy"),
                              cl::value_desc("NAME=FILE"),
                              cl::cat(flashcCategory));

cl::opt<std::string> memoryLimitOpt(
    "memory-limit",
    cl::desc("flashc run: the bytes the run's tensors may take, K/M/G/T "
             "suffixes allowed (default: $FLASHC_MEMORY_LIMIT, else 8G)"),
    cl::value_desc("bytes"), cl::init(""), cl::cat(flashcCategory));
cl::opt<bool> noRaceCheckOpt(
    "no-race-check",
    cl::desc("flashc run --target=emulate: skip the shared-memory race check "
             "(and the memory its shadow needs), as flash-emulate does"),
    cl::init(false), cl::cat(flashcCategory));

/// flashc run --stats (--target=emulate): print the emulator's counters.
/// Taken out of argv before option parsing: LLVM owns a `-stats` option.
bool statsOpt = false;

cl::opt<std::string> replayCorpus(
    "replay-corpus", cl::Hidden,
    cl::desc("Testing: compile every file of DIR (a fuzz corpus) in one "
             "process; fail on internal errors or crashes"),
    cl::value_desc("dir"), cl::init(""));

/// Compiles every file under `dir` (diagnostics discarded). Inputs must be
/// accepted or rejected with a user error; a crash names the input in the
/// stack dump.
int replayDirectory(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (it->type() == llvm::sys::fs::file_type::regular_file)
      files.push_back(it->path());
  if (ec || files.empty()) {
    llvm::errs() << "flashc: error: cannot read corpus directory '" << dir
                 << "'\n";
    return 1;
  }
  std::sort(files.begin(), files.end());
  mlir::MLIRContext context;
  flash::loadAllDialects(context);
  unsigned failures = 0;
  for (const std::string &file : files) {
    llvm::PrettyStackTraceFormat trace("flashc: replaying '%s'", file.c_str());
    auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
    if (!buf) {
      llvm::outs() << "FAIL " << file << ": cannot read\n";
      ++failures;
      continue;
    }
    // As the fuzzer reads it: imports only among the input's own files.
    flash::VirtualFiles virtualFiles =
        flash::splitVirtualFiles((*buf)->getBuffer());
    flash::ImportOptions imports;
    imports.fileSystem = virtualFiles.fileSystem;
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(virtualFiles.main), llvm::SMLoc());
    std::string diagText;
    llvm::raw_string_ostream diagOS(diagText);
    flash::DiagnosticPrinter diags(sourceMgr, diagOS);
    flash::CompileStatus status;
    auto module = flash::compileTileSource(sourceMgr, {}, context, diags,
                                           &status, imports);
    if (status == flash::CompileStatus::InternalError) {
      llvm::outs() << "FAIL " << file << ": internal error\n" << diagText;
      ++failures;
      continue;
    }
    if (!module)
      continue;
    mlir::PassManager pm(&context);
    flash::buildTilePipeline(pm);
    if (mlir::failed(pm.run(*module))) {
      llvm::outs() << "FAIL " << file << ": the tile pipeline failed\n";
      ++failures;
    }
  }
  llvm::outs() << "replayed " << files.size() << " inputs, " << failures
               << " failures\n";
  return failures ? 2 : 0;
}

/// `flashc run ...` is run mode: argv without "run", and without --stats,
/// which LLVM's option parser would take for its own `-stats`.
std::vector<const char *> takeRunMode(int argc, char **argv, bool &runMode) {
  std::vector<const char *> args(argv, argv + argc);
  runMode = args.size() > 1 && llvm::StringRef(args[1]) == "run";
  if (!runMode)
    return args;
  args.erase(args.begin() + 1);
  auto isStats = [](const char *a) {
    return llvm::StringRef(a) == "--stats" || llvm::StringRef(a) == "-stats";
  };
  statsOpt = std::any_of(args.begin() + 1, args.end(), isStats);
  args.erase(std::remove_if(args.begin() + 1, args.end(), isStats),
             args.end());
  return args;
}

bool parseCommandLine(std::vector<const char *> &args) {
  // MLIR's --mlir-print-ir-after-all and friends (which name passes), and
  // --mlir-timing.
  flash::registerTilePasses();
  flash::registerConversionPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(flashcCategory);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "flashc (tile language compiler)\n"; });
  return cl::ParseCommandLineOptions(
      (int)args.size(), args.data(),
      "flashc: the tile language compiler\n\n"
      "  flashc FILE.tile [-D NAME=VALUE]... [-I DIR]... [--emit=LEVEL] "
      "[--arch=sm_XX]\n"
      "         [-o OUT]   (ptx/cubin: also writes the launch sidecar "
      "OUT.json)\n"
      "  flashc run FILE.tile --target=interp|emulate|cuda [-D NAME=VALUE]...\n"
      "         --arg NAME=FILE.npy|NUMBER ... --out NAME=FILE.npy ...\n"
      "         [--stats] [--no-race-check]   (emulate: print the "
      "emulator's counters; skip the race check)\n"
      "         [--arch=sm_XX]   (cuda: default: the GPU's arch)\n\n"
      "MLIR's IR printing options (--mlir-print-ir-after-all, "
      "--mlir-print-ir-before=PASS, ...) and --timing apply to the "
      "pipeline.\n"
      "Exit codes: 0 success, 1 user error, 2 internal error.\n",
      &llvm::errs());
}

/// The options that only one mode takes; an input file.
bool checkModeOptions(bool runMode) {
  if (inputFile.empty()) {
    llvm::errs() << "flashc: error: no input file (see flashc --help)\n";
    return false;
  }
  if (!runMode && (!argOpts.empty() || !outOpts.empty() ||
                   !targetOpt.empty() || noRaceCheckOpt)) {
    llvm::errs() << "flashc: error: --target, --arg, --out and "
                    "--no-race-check are only valid with 'flashc run'\n";
    return false;
  }
  if (!runMode)
    return true;
  if (targetOpt.empty()) {
    llvm::errs() << "flashc: error: flashc run needs --target=interp\n";
    return false;
  }
  if (targetOpt != "interp" && targetOpt != "emulate" && targetOpt != "cuda") {
    llvm::errs() << "flashc: error: unknown target '" << targetOpt
                 << "' (expected interp, emulate or cuda)\n";
    return false;
  }
  if (outputFile != "-") {
    llvm::errs() << "flashc: error: -o is not valid with 'flashc run'; use "
                    "--out NAME=FILE.npy\n";
    return false;
  }
  return true;
}

bool parseDefines(std::vector<flash::Define> &defines) {
  for (const std::string &d : defineOpts) {
    flash::Define def;
    if (!flash::parseDefine(d, def)) {
      llvm::errs() << "flashc: error: -D expects NAME=VALUE, got '" << d
                   << "'\n";
      return false;
    }
    defines.push_back(def);
  }
  return true;
}

bool loadInput(llvm::SourceMgr &sourceMgr) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      flash::readSourceFile(inputFile, error);
  if (!buffer) {
    llvm::errs() << "flashc: error: cannot open '" << inputFile
                 << "': " << error << "\n";
    return false;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return true;
}

/// Without --emit, `-o fa2.ptx` asks for PTX and `-o fa2.cubin` for a cubin.
void inferEmitKind() {
  if (emitKind.getNumOccurrences() != 0)
    return;
  llvm::StringRef out = outputFile;
  if (out.ends_with(".ptx"))
    emitKind = EmitKind::PTX;
  else if (out.ends_with(".cubin"))
    emitKind = EmitKind::Cubin;
}

/// The arch the kernel is compiled for, which it reads as ARCH: --arch, or
/// in run mode the arch its target lowers for (the device's for cuda).
std::string kernelArch(bool runMode) {
  if (!runMode || archOpt.getNumOccurrences())
    return archOpt;
  flash::RunRequest request;
  request.target = targetOpt;
  return flash::runArch(request);
}

/// The arch, checked where the output needs one; every mode needs a known
/// one for ARCH.
bool checkTarget(bool runMode, const flash::TargetOptions &target) {
  if (!flash::findArch(target.arch)) {
    llvm::errs() << "flashc: error: "
                 << flash::unsupportedArchMessage(target.arch) << "\n";
    return false;
  }
  if (!runMode && emitKind >= EmitKind::LLVM)
    if (llvm::Error error = flash::verifyTargetOptions(target)) {
      llvm::errs() << "flashc: error: " << llvm::toString(std::move(error))
                   << "\n";
      return false;
    }
  if (!runMode && emitKind == EmitKind::Cubin && outputFile == "-") {
    llvm::errs() << "flashc: error: --emit=cubin needs -o OUT\n";
    return false;
  }
  return true;
}

/// Each emit level is one named pipeline (flash-opt runs the same ones).
/// The tile pipeline only cleans up verified IR: its failure is a bug. Later
/// stages reject kernels they cannot lower, with a diagnostic at the source:
/// a user error (a failure without one is a bug). Returns 0 or the exit code.
int runPipeline(mlir::ModuleOp module, bool runMode,
                const flash::TargetOptions &target,
                const flash::SourceDiagnostics &diagnostics) {
  mlir::MLIRContext *context = module.getContext();
  mlir::PassManager pm(context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  if (timingOpt)
    timing.setEnabled(true);
  mlir::TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  bool lowering = !runMode && emitKind != EmitKind::Tile;
  // Shared memory is checked against the arch as soon as it is placed.
  flash::LayoutPipelineOptions layout;
  layout.maxSharedBytes = flash::maxSharedBytesPerCTA(target.arch);
  layout.arch = target.arch;
  layout.tile.splitMaskedLoops = splitMaskedLoopsOpt;
  layout.tile.mergeMaskBounds = mergeMaskBoundsOpt;
  layout.tile.leanMasks = leanMasksOpt;
  layout.deferLoopSums = deferLoopSumsOpt;
  if (!lowering)
    flash::buildTilePipeline(pm, layout.tile);
  else if (emitKind == EmitKind::Layout)
    flash::buildLayoutPipeline(pm, layout);
  else
    flash::buildSIMTPipeline(pm, layout);
  if (lowering && emitKind == EmitKind::LLVM)
    flash::buildSIMTToLLVMPipeline(pm, target);
  unsigned before = diagnostics.numErrors();
  if (mlir::succeeded(pm.run(module)))
    return 0;
  if (lowering && diagnostics.numErrors() != before)
    return 1;
  llvm::errs() << "flashc: internal error: the "
               << (lowering ? "lowering failed without a diagnostic"
                            : "tile pipeline failed")
               << "\n";
  return 2;
}

/// `flashc run`: the tile-level module to the runner.
int runOnTarget(mlir::ModuleOp module, llvm::SourceMgr &sourceMgr) {
  flash::RunRequest request;
  request.target = targetOpt;
  request.sources = &sourceMgr;
  request.stats = statsOpt;
  request.checkRaces = !noRaceCheckOpt;
  request.splitMaskedLoops = splitMaskedLoopsOpt;
  request.deferLoopSums = deferLoopSumsOpt;
  request.mergeMaskBounds = mergeMaskBoundsOpt;
  request.leanMasks = leanMasksOpt;
  // cuda: without --arch, the launcher compiles for the device's arch.
  if (archOpt.getNumOccurrences())
    request.arch = archOpt;
  std::string budgetError;
  if (!flash::memoryBudget(memoryLimitOpt, request.memoryBudget,
                           budgetError)) {
    llvm::errs() << "flashc: error: " << budgetError << "\n";
    return 1;
  }
  if (std::string error = flash::addRunBindings(request, argOpts, outOpts);
      !error.empty()) {
    llvm::errs() << "flashc: error: " << error << "\n";
    return 1;
  }
  return flash::runKernel(module, request);
}

/// `text` to `path` ("-": stdout). A file is replaced only once all of it
/// is written: a failure keeps the previous output.
bool writeOutputFile(const std::string &path, llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    return true;
  }
  std::string error;
  if (flash::writeFileAtomically(path, text.data(), text.size(), error))
    return true;
  llvm::errs() << "flashc: error: " << path << ": " << error << "\n";
  return false;
}

/// PTX (or a cubin) to the output, and to OUT.json the sidecar a launcher
/// needs; nothing is written unless both were produced. An output that is no
/// regular file (-o /dev/null, a pipe) gets no sidecar beside it.
int writeMachineCode(mlir::ModuleOp module,
                     const flash::TargetOptions &target) {
  mlir::FailureOr<std::string> sidecar =
      flash::writeLaunchSidecar(module, target);
  mlir::FailureOr<std::string> ptx = flash::emitPTX(module, target);
  if (mlir::failed(sidecar) || mlir::failed(ptx))
    return 1;
  std::string payload = *ptx;
  if (emitKind == EmitKind::Cubin) {
    llvm::Expected<std::string> cubin = flash::assembleCubin(*ptx, target);
    if (!cubin) {
      llvm::errs() << "flashc: error: " << llvm::toString(cubin.takeError())
                   << "\n";
      return 1;
    }
    payload = std::move(*cubin);
  }
  if (!writeOutputFile(outputFile, payload))
    return 1;
  bool withSidecar =
      outputFile != "-" && !flash::isDeviceOrPipe(outputFile);
  if (withSidecar && !writeOutputFile(outputFile + ".json", *sidecar))
    return 1;
  return 0;
}

/// The module at the --emit level to -o.
int writeOutput(mlir::ModuleOp module, const flash::TargetOptions &target) {
  if (emitKind >= EmitKind::PTX)
    return writeMachineCode(module, target);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return writeOutputFile(outputFile, text) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  flash::installOutOfMemoryHandler("flashc");
  flash::removeTemporariesOnSignal();
  bool runMode = false;
  std::vector<const char *> args = takeRunMode(argc, argv, runMode);
  if (!parseCommandLine(args))
    return 1;
  if (!replayCorpus.empty())
    return replayDirectory(replayCorpus);
  std::vector<flash::Define> defines;
  llvm::SourceMgr sourceMgr;
  if (!checkModeOptions(runMode) || !parseDefines(defines) ||
      !loadInput(sourceMgr))
    return 1;
  inferEmitKind();
  flash::TargetOptions target;
  target.arch = kernelArch(runMode);
  if (!checkTarget(runMode, target))
    return 1;

  mlir::DialectRegistry registry;
  flash::registerTargetDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false); // the source line says more to users
  // Every diagnostic at a place in the kernel, whoever finds it, the way the
  // front end's DiagnosticPrinter prints its own: file:line:col, the line, a
  // caret.
  flash::SourceDiagnostics sourceDiagnostics(&context, llvm::errs(),
                                             &sourceMgr);
  flash::DiagnosticPrinter diags(sourceMgr, llvm::errs());
  flash::CompileStatus status;
  flash::ImportOptions imports;
  imports.searchDirs.assign(importDirOpts.begin(), importDirOpts.end());
  mlir::OwningOpRef<mlir::ModuleOp> module = flash::compileTileSource(
      sourceMgr, defines, context, diags, &status, imports,
      flash::archNumber(target.arch), flash::archHasWgmma(target.arch));
  if (!module)
    return status == flash::CompileStatus::InternalError ? 2 : 1;
  if (int rc = runPipeline(*module, runMode, target, sourceDiagnostics))
    return rc;
  if (runMode)
    return runOnTarget(*module, sourceMgr);
  return writeOutput(*module, target);
}

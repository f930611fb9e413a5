//===- CommandLine.cpp - flashc's command line ----------------------------===//
//
//   flashc FILE.tile [-D NAME=VALUE]... [-I DIR]...
//          [--emit=tile|layout|simt|llvm|ptx|cubin] [--arch=sm_XX] [-o OUT]
//   flashc run FILE.tile --target=interp [-D ...]... --arg NAME=FILE.npy|NUMBER
//          ... --out NAME=FILE.npy ...
//
// Exit codes: 0 success, 1 user error, 2 internal error.
//
// The flags of CompileOptions.def are registered from its table; the compile
// itself is a flash::Compilation.
//
//===----------------------------------------------------------------------===//
#include "flashc/Driver/CommandLine.h"

#include "flashc/Conversion/Passes.h"
#include "flashc/Driver/Compilation.h"
#include "flashc/Frontend/IRGen.h"
#include "flashc/Frontend/SourceText.h"
#include "flashc/Frontend/VirtualFiles.h"
#include "flashc/Transforms/Passes.h"

#include "flashc/InitAllDialects.h"
#include "flashc/Run/Run.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Runtime/AtomicFile.h"
#include "flashc/Support/OutOfMemory.h"
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
#include <memory>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace {
using flash::Level;

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
cl::opt<Level> emitKind(
    "emit",
    cl::desc("What to emit (default: ptx or cubin when -o names a .ptx or "
             ".cubin file, tile otherwise)"),
    cl::init(Level::Tile),
    cl::values(clEnumValN(Level::Tile, "tile",
                          "tile IR after the tile pipeline"),
               clEnumValN(Level::Layout, "layout",
                          "tile IR with a distributed layout on every tile"),
               clEnumValN(Level::SIMT, "simt",
                          "the SIMT level: gpu.module, one thread's program"),
               clEnumValN(Level::LLVM, "llvm", "LLVM dialect with NVVM"),
               clEnumValN(Level::PTX, "ptx",
                          "PTX; with -o OUT also the launch sidecar OUT.json"),
               clEnumValN(Level::Cubin, "cubin",
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
// clang's spelling of --remarks (an option of its own: --help lists it,
// which it does not do for an alias).
cl::opt<bool> remarksShortOpt("R", cl::desc("Same as --remarks"),
                              cl::cat(flashcCategory));

cl::opt<unsigned> persistentCtasOpt(
    "persistent-ctas",
    cl::desc("With --persistent: the CTAs to launch at most (default 0: the "
             "arch's SMs times the CTAs one SM holds)"),
    cl::value_desc("N"), cl::init(0), cl::cat(flashcCategory));

/// One --FLAG per row of CompileOptions.def.
class CompileOptionFlags {
public:
  explicit CompileOptionFlags(cl::OptionCategory &category) {
    for (const flash::CompileOptionInfo &info : flash::kCompileOptions)
      flags.push_back(std::make_unique<cl::opt<bool>>(
          llvm::StringRef(info.flag), cl::desc(llvm::StringRef(info.help)),
          cl::init(info.init), cl::cat(category)));
  }

  /// The parsed values; LLVM's own --disable-lsr, when given, decides loop
  /// strength reduction for every kernel.
  flash::CompileOptions values() const {
    flash::CompileOptions options;
    for (size_t i = 0; i < flags.size(); ++i)
      options.*flash::kCompileOptions[i].field = *flags[i];
    options.remarks |= remarksShortOpt;
    options.persistentCtas = persistentCtasOpt;
    auto &registered = cl::getRegisteredOptions();
    auto lsr = registered.find("disable-lsr");
    if (lsr != registered.end() && lsr->second->getNumOccurrences())
      options.loopStrengthReduction =
          !static_cast<cl::opt<bool> *>(lsr->second)->getValue();
    return options;
  }

private:
  std::vector<std::unique_ptr<cl::opt<bool>>> flags;
};

CompileOptionFlags compileFlags(flashcCategory);
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
    if (flash::lowerModule(*module, Level::FrontEnd, Level::Tile, {}) !=
        flash::LowerResult::Success) {
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
      "         [-R]   (remarks: how each key loop was split, what each "
      "staged loop got)\n"
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

std::unique_ptr<llvm::MemoryBuffer> loadInput() {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      flash::readSourceFile(inputFile, error);
  if (!buffer)
    llvm::errs() << "flashc: error: cannot open '" << inputFile
                 << "': " << error << "\n";
  return buffer;
}

/// Without --emit, `-o fa2.ptx` asks for PTX and `-o fa2.cubin` for a cubin.
void inferEmitKind() {
  if (emitKind.getNumOccurrences() != 0)
    return;
  llvm::StringRef out = outputFile;
  if (out.ends_with(".ptx"))
    emitKind = Level::PTX;
  else if (out.ends_with(".cubin"))
    emitKind = Level::Cubin;
}

/// The level the compile goes to: --emit, or for `flashc run` the level its
/// target runs (the tile IR for interp, the SIMT level for the others).
Level targetLevel(bool runMode) {
  if (!runMode)
    return emitKind;
  return targetOpt == "interp" ? Level::Tile : Level::SIMT;
}

/// The options the output needs: a known arch (every mode: the kernel reads
/// it as ARCH), valid target options for LLVM and below, -o for a cubin.
bool checkTarget(bool runMode, const flash::Compilation &compilation) {
  if (std::string error = compilation.checkTarget(targetLevel(runMode));
      !error.empty()) {
    llvm::errs() << "flashc: error: " << error << "\n";
    return false;
  }
  if (!runMode && emitKind == Level::Cubin && outputFile == "-") {
    llvm::errs() << "flashc: error: --emit=cubin needs -o OUT\n";
    return false;
  }
  return true;
}

/// MLIR's IR printing options and --timing on each pipeline the compile
/// runs.
class PassManagerOptions {
public:
  PassManagerOptions() {
    mlir::applyDefaultTimingManagerCLOptions(timing);
    if (timingOpt)
      timing.setEnabled(true);
    rootScope = timing.getRootScope();
  }
  mlir::LogicalResult operator()(mlir::PassManager &pm) {
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return mlir::failure();
    pm.enableTiming(rootScope);
    return mlir::success();
  }

private:
  mlir::DefaultTimingManager timing;
  mlir::TimingScope rootScope;
};

/// `flashc run`: the compiled module to the runner.
int runOnTarget(flash::Compilation &compilation,
                std::shared_ptr<flash::cuda::Driver> cudaDriver) {
  flash::RunRequest request;
  request.cudaDriver = std::move(cudaDriver);
  request.target = targetOpt;
  request.sources = &compilation.sources();
  request.stats = statsOpt;
  request.checkRaces = !noRaceCheckOpt;
  request.options = compilation.options();
  request.arch = compilation.target().arch;
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
  return flash::runKernel(compilation.module(), request);
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
int writeMachineCode(flash::Compilation &compilation) {
  std::string payload, sidecar;
  if (int rc = compilation.emitMachineCode(emitKind, payload, sidecar))
    return rc;
  if (!writeOutputFile(outputFile, payload))
    return 1;
  bool withSidecar =
      outputFile != "-" && !flash::isDeviceOrPipe(outputFile);
  if (withSidecar && !writeOutputFile(outputFile + ".json", sidecar))
    return 1;
  return 0;
}

/// The module at the --emit level to -o.
int writeOutput(flash::Compilation &compilation) {
  if (emitKind >= Level::PTX)
    return writeMachineCode(compilation);
  std::string text;
  llvm::raw_string_ostream os(text);
  compilation.module()->print(os);
  os << "\n";
  return writeOutputFile(outputFile, text) ? 0 : 1;
}

/// The arch the kernel is compiled for, chosen once: --arch, or in run mode
/// the arch its target runs (the device's for cuda, whose driver the run
/// keeps).
bool chooseArch(bool runMode, std::string &arch,
                std::shared_ptr<flash::cuda::Driver> &cudaDriver) {
  if (!runMode) {
    arch = archOpt;
    return true;
  }
  std::string requested =
      archOpt.getNumOccurrences() ? std::string(archOpt) : std::string();
  return flash::chooseRunArch(targetOpt, requested, arch, llvm::errs(),
                              &cudaDriver) == 0;
}

} // namespace

int flash::flashcMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  flash::installOutOfMemoryHandler("flashc");
  flash::removeTemporariesOnSignal();
  bool runMode = false;
  std::vector<const char *> args = takeRunMode(argc, argv, runMode);
  if (!parseCommandLine(args))
    return 1;
  if (!replayCorpus.empty())
    return replayDirectory(replayCorpus);
  flash::CompileInput input;
  if (!checkModeOptions(runMode) || !parseDefines(input.defines))
    return 1;
  inferEmitKind();
  input.imports.searchDirs.assign(importDirOpts.begin(), importDirOpts.end());
  input.options = compileFlags.values();
  input.source = loadInput();
  std::shared_ptr<flash::cuda::Driver> cudaDriver;
  if (!input.source || !chooseArch(runMode, input.arch, cudaDriver))
    return 1;
  flash::Compilation compilation(std::move(input), llvm::errs());
  if (!checkTarget(runMode, compilation))
    return 1;
  PassManagerOptions passManagerOptions;
  if (int rc = compilation.lowerTo(targetLevel(runMode), passManagerOptions))
    return rc;
  if (runMode)
    return runOnTarget(compilation, std::move(cudaDriver));
  return writeOutput(compilation);
}

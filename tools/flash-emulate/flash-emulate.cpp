//===- flash-emulate.cpp - run a SIMT-level .mlir module on the emulator --===//
//
//   flash-emulate FILE.mlir --arg NAME=FILE.npy|NUMBER ... --out NAME=FILE.npy
//                 [--stats] [--no-race-check]
//
// The same contract as `flashc run --target=emulate` (lib/Run), for IR that
// does not come from a .tile file: a module holding a SIMT-level kernel (what
// `flashc --emit=simt` or `flash-opt --convert-tile-to-simt` prints, possibly
// edited by hand, e.g. to plant a bug the sanitizer must catch), or tile IR
// (canonical or layout-assigned), which is lowered first. Errors print
// clang-style, `file:line:col: error: <op>: <what>`, the source line and a
// caret, at the location of the op in FILE.mlir (or the location it carries).
//
// Exit codes: 0 success, 1 user error (including every sanitizer error),
// 2 internal error.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"
#include "flashc/InitAllDialects.h"
#include "flashc/Run/Run.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Support/OutOfMemory.h"
#include "flashc/Support/SourceDiagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("flash-emulate options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                               cl::Required, cl::cat(category));
cl::list<std::string> argOpts("arg",
                              cl::desc("bind a kernel parameter: "
                                       "NAME=FILE.npy or NAME=NUMBER"),
                              cl::value_desc("NAME=VALUE"), cl::cat(category));
cl::list<std::string> outOpts("out",
                              cl::desc("write a tensor parameter after the "
                                       "run: NAME=FILE.npy"),
                              cl::value_desc("NAME=FILE"), cl::cat(category));
const std::string archHelp = "the GPU whose launch limits apply (default: " +
                            std::string(flash::kDefaultArch) + ")";
cl::opt<std::string> archOpt("arch", cl::desc(archHelp), cl::init(""),
                             cl::cat(category));
cl::opt<std::string> memoryLimitOpt(
    "memory-limit",
    cl::desc("the bytes the run's tensors may take, K/M/G/T suffixes "
             "allowed (default: $FLASHC_MEMORY_LIMIT, else 8G)"),
    cl::value_desc("bytes"), cl::init(""), cl::cat(category));
cl::opt<bool> noRaceCheck("no-race-check",
                          cl::desc("do not check shared-memory races"),
                          cl::init(false), cl::cat(category));

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  flash::installOutOfMemoryHandler("flash-emulate");
  // LLVM owns `-stats`: take ours out of argv first.
  std::vector<const char *> args(argv, argv + argc);
  auto isStats = [](const char *a) {
    return llvm::StringRef(a) == "--stats" || llvm::StringRef(a) == "-stats";
  };
  bool stats = std::any_of(args.begin() + 1, args.end(), isStats);
  args.erase(std::remove_if(args.begin() + 1, args.end(), isStats), args.end());
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          (int)args.size(), args.data(),
          "flash-emulate: run a SIMT-level kernel on the emulator\n\n"
          "  flash-emulate FILE.mlir --arg NAME=FILE.npy|NUMBER ... "
          "--out NAME=FILE.npy ... [--stats] [--no-race-check]\n",
          &llvm::errs()))
    return 1;

  mlir::MLIRContext context;
  flash::loadAllDialects(context);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  std::string err;
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!buf) {
    llvm::errs() << "flash-emulate: error: cannot open '" << inputFile
                 << "': " << buf.getError().message() << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buf), llvm::SMLoc());
  flash::SourceDiagnostics diagnostics(&context, llvm::errs(), &sourceMgr);
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  flash::RunRequest request;
  request.target = "emulate";
  request.stats = stats;
  request.checkRaces = !noRaceCheck;
  request.sources = &sourceMgr;
  request.arch = archOpt;
  std::string budgetError;
  if (!flash::memoryBudget(memoryLimitOpt, request.memoryBudget,
                           budgetError)) {
    llvm::errs() << "flash-emulate: error: " << budgetError << "\n";
    return 1;
  }
  if (std::string error = flash::addRunBindings(request, argOpts, outOpts);
      !error.empty()) {
    llvm::errs() << "flash-emulate: error: " << error << "\n";
    return 1;
  }
  return flash::runKernel(*module, request);
}

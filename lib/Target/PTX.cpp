//===- PTX.cpp - SIMT level -> LLVM/NVVM -> PTX (-> cubin) ----------------===//
#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"
#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/InitAllDialects.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Target/AccumulatorScales.h"
#include "flashc/Target/LoopExitFences.h"
#include "flashc/Target/HalfPhis.h"
#include "flashc/Target/LoopOffsets.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/Pass.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/Transforms/Utils.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kTriple = "nvptx64-nvidia-cuda";
/// Bytes of a CUtensorMap, a TMA kernel's by-value parameter.
constexpr uint64_t kTensorMapParamBytes = 128;

/// The options' help text: "sm_80, sm_86, sm_89 or sm_90".
const std::string &archHelp() {
  static const std::string text = flash::archList(" or ");
  return text;
}

// PTX versions the NVPTX back end of LLVM 22 accepts as `+ptxNN`.
constexpr int kPTXVersions[] = {70, 71, 72, 73, 74, 75, 76, 77, 78, 80,
                                81, 82, 83, 84, 85, 86, 87, 88, 90};

int effectivePTX(const flash::TargetOptions &options) {
  return options.ptxVersion ? options.ptxVersion
                            : flash::defaultPTXVersion(options.arch);
}

/// CUDA roots to search, most specific first.
std::vector<std::string> cudaRoots(const flash::TargetOptions &options) {
  std::vector<std::string> roots;
  if (!options.cudaPath.empty())
    roots.push_back(options.cudaPath);
  for (const char *env : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *value = std::getenv(env); value && *value)
      roots.push_back(value);
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  return roots;
}

std::string findLibdevice(const flash::TargetOptions &options) {
  for (const std::string &root : cudaRoots(options)) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::is_regular_file(path))
      return std::string(path);
  }
  return "";
}

void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// Whether `op` (inside a gpu.module) is still above the LLVM dialect.
bool isAboveLLVM(Operation *op) {
  Dialect *dialect = op->getDialect();
  return !isa_and_nonnull<LLVM::LLVMDialect, NVVM::NVVMDialect>(dialect);
}

/// flash-opt --flashc-simt-to-llvm="arch=sm_90 ptx=80".
struct SIMTToLLVMOptions : PassPipelineOptions<SIMTToLLVMOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc(archHelp()),
                           llvm::cl::init(std::string(flash::kDefaultArch))};
  Option<int> ptx{*this, "ptx",
                  llvm::cl::desc("PTX version x10 (0: default for arch)"),
                  llvm::cl::init(0)};
};
} // namespace

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

int flash::defaultPTXVersion(llvm::StringRef arch) {
  (void)arch;
  return 80;
}

int64_t flash::maxSharedBytesPerCTA(llvm::StringRef arch) {
  const flash::ArchInfo *info = flash::findArch(arch);
  return info ? info->maxShared : 48 * 1024;
}

llvm::Error flash::verifyTargetOptions(const TargetOptions &options) {
  const flash::ArchInfo *info = flash::findArch(options.arch);
  if (!info)
    return llvm::createStringError(flash::unsupportedArchMessage(options.arch));
  int version = effectivePTX(options);
  if (!llvm::is_contained(kPTXVersions, version))
    return llvm::createStringError(
        "unsupported PTX version " + std::to_string(version) +
        ": expected 70..78, 80..88 or 90 (version x10)");
  if (version < info->minPTX)
    return llvm::createStringError(
        options.arch + " needs PTX " + std::to_string(info->minPTX / 10) +
        "." + std::to_string(info->minPTX % 10) + " or later, not " +
        std::to_string(version / 10) + "." + std::to_string(version % 10));
  if (options.optLevel < 0 || options.optLevel > 3)
    return llvm::createStringError("optimization level must be 0..3");
  return llvm::Error::success();
}

std::string flash::ptxFeatures(const TargetOptions &options) {
  return "+ptx" + std::to_string(effectivePTX(options));
}

void flash::registerTargetDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  // What convert-gpu-to-nvvm uses to lower the other dialects of a kernel.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

//===----------------------------------------------------------------------===//
// SIMT -> LLVM
//===----------------------------------------------------------------------===//

void flash::buildSIMTToLLVMPipeline(OpPassManager &pm,
                                    const TargetOptions &options) {
  GpuNVVMAttachTargetOptions attach;
  attach.triple = kTriple.str();
  attach.chip = options.arch;
  attach.features = ptxFeatures(options);
  attach.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));

  OpPassManager &gpuPM = pm.nest<gpu::GPUModuleOp>();
  // fp8 casts to their cvt instructions (the arch fp8 needs), before
  // flashc-prepare-nvvm rejects what still holds an fp8 value.
  if (flash::archHasWgmma(options.arch))
    gpuPM.addPass(createFlashcFloat8ToNVVM());
  FlashcPrepareNVVMOptions prepare;
  prepare.arch = options.arch;
  prepare.ptx = options.ptxVersion;
  gpuPM.addPass(createFlashcPrepareNVVM(prepare));
  gpuPM.addPass(createSCFToControlFlowPass());
  if (flash::archHasWgmma(options.arch))
    gpuPM.addPass(createFlashcWgmmaAssertToTrap());
  gpuPM.addPass(createFlashcApproxMathToNVVM());
  // Lowers gpu.func/gpu.return, the math ops libdevice implements (__nv_*),
  // and, through the ConvertToLLVM interfaces, arith, cf, index, vector.
  gpuPM.addPass(createConvertGpuOpsToNVVMOps());
  // NVVM ops that are inline PTX (nvvm.wgmma.mma_async has no LLVM
  // intrinsic); only sm_90a emits them, and the other archs' PTX stays as
  // it is.
  if (flash::archHasWgmma(options.arch))
    gpuPM.addPass(createConvertNVVMToLLVMPass());
  // Whatever the above left (cf is lowered by convert-gpu-to-nvvm through
  // the ConvertToLLVM interface registered in registerTargetDialects;
  // convert-cf-to-llvm cannot run on a gpu.module).
  gpuPM.addPass(createConvertVectorToLLVMPass());
  gpuPM.addPass(createArithToLLVMConversionPass());
  gpuPM.addPass(createConvertMathToLLVMPass());
  gpuPM.addPass(createConvertIndexToLLVMPass());
  gpuPM.addPass(createReconcileUnrealizedCastsPass());
  gpuPM.addPass(createCanonicalizerPass());
  gpuPM.addPass(createCSEPass());
}

//===----------------------------------------------------------------------===//
// LLVM dialect -> PTX
//===----------------------------------------------------------------------===//

namespace {
/// Links libdevice into `module` if it declares __nv_* functions, keeping
/// only what is used and internalizing it (as upstream ModuleToObject does).
LogicalResult linkLibdevice(llvm::Module &module, Operation *anchor,
                            const flash::TargetOptions &options) {
  std::string needed;
  for (llvm::Function &f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) {
      needed = f.getName().str();
      break;
    }
  if (needed.empty())
    return success();
  std::string path = findLibdevice(options);
  if (path.empty())
    return anchor->emitError()
           << "the kernel calls " << needed
           << ", which needs CUDA's libdevice (nvvm/libdevice/"
              "libdevice.10.bc): set CUDA_HOME to a CUDA toolkit";
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> lib =
      llvm::parseIRFile(path, diag, module.getContext());
  if (!lib) {
    std::string message;
    llvm::raw_string_ostream os(message);
    diag.print("libdevice", os);
    return anchor->emitError() << "cannot read " << path << ": " << message;
  }
  lib->setTargetTriple(module.getTargetTriple());
  lib->setDataLayout(module.getDataLayout());
  bool failed = llvm::Linker::linkModules(
      module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module &m, const llvm::StringSet<> &gvs) {
        llvm::internalizeModule(m, [&gvs](const llvm::GlobalValue &gv) {
          return !gv.hasName() || !gvs.count(gv.getName());
        });
      });
  if (failed)
    return anchor->emitError() << "cannot link " << path;
  return success();
}

/// `transform` on every function of `module`; the IR it leaves is verified
/// (a broken one would reach ptxas as wrong PTX). `what` names the
/// transform in the error.
LogicalResult transformVerified(llvm::Module &module, Operation *anchor,
                                bool (*transform)(llvm::Function &),
                                llvm::StringRef what) {
  for (llvm::Function &function : module)
    transform(function);
  std::string broken;
  llvm::raw_string_ostream os(broken);
  if (llvm::verifyModule(module, &os))
    return anchor->emitError()
           << what << " broke the LLVM IR (a flashc bug): " << broken;
  return success();
}

/// Whether a kernel of `gpuModule` has its registers full of loop tiles
/// (flashc.register_bound, from tile-stage-shared's re-read of an MMA operand).
bool isRegisterBound(gpu::GPUModuleOp gpuModule) {
  bool bound = false;
  gpuModule.walk([&](Operation *op) {
    bound |= op->hasAttr(flash::simt::kRegisterBoundAttrName);
  });
  return bound;
}

/// Whether a kernel of `gpuModule` is split into a producer warpgroup and
/// consumers (flashc.warp_specialize), whose setmaxnreg budget holds the
/// loop tiles and what LICM leaves live across their loops.
bool isWarpSpecialized(gpu::GPUModuleOp gpuModule) {
  bool split = false;
  gpuModule.walk([&](Operation *op) {
    split |= op->hasAttr("flashc.warp_specialize");
  });
  return split;
}

/// Whether the NVPTX back end runs LLVM's loop strength reduction: not in a
/// register-bound module, unless the options say otherwise. LSR rewrites a
/// KV loop's copy addresses into a second induction variable (a 64-bit byte
/// offset beside the key index) and one 64-bit pointer each for K's and V's
/// copies, all live across the loop, where fa2's 128-row tiles have no
/// register to spare: without it K and V share one offset computed from the
/// key index, and ptxas spills half as much. Elsewhere LSR stays: without it
/// ptxas picks fewer registers and spills at HEAD_DIM 80 (docs/perf.md, "Loop
/// offsets and loop-exit fences").
bool wantsLoopStrengthReduction(const flash::CompileOptions &options,
                                bool registerBound) {
  return options.loopStrengthReduction.value_or(!registerBound);
}

/// Skips LLVM's loop strength reduction (and the freeze canonicalization
/// that comes with it) in the codegen pipeline of the LLVMContext it is set
/// on: LoopPass::skipLoop asks the context's gate. Each compile decides for
/// itself, without LLVM's process-global --disable-lsr.
class SkipLoopStrengthReduction : public llvm::OptPassGate {
public:
  bool isEnabled() const override { return true; }
  bool shouldRunPass(llvm::StringRef passName,
                     llvm::StringRef) const override {
    return passName != "Loop Strength Reduction" &&
           passName != "Canonicalize Freeze Instructions in Loops";
  }
};

/// Stands, in a legacy pass manager, for a loop canonicalization that LSR
/// requires (loop-simplify, lcssa): with LSR skipped, the loops stay as the
/// optimizer left them, as they do without LSR in the pipeline at all
/// (--disable-lsr), instead of being rewritten for a pass that does nothing.
class LoopFormKept : public llvm::ImmutablePass {
public:
  explicit LoopFormKept(char &requiredPass) : ImmutablePass(requiredPass) {}
  llvm::StringRef getPassName() const override {
    return "flashc: loop form kept (LSR skipped)";
  }
};
} // namespace

FailureOr<std::string> flash::emitPTX(ModuleOp module,
                                      const TargetOptions &options) {
  if (llvm::Error err = verifyTargetOptions(options))
    return module.emitError() << llvm::toString(std::move(err));
  MLIRContext *ctx = module.getContext();
  {
    DialectRegistry registry;
    registerTargetDialects(registry);
    ctx->appendDialectRegistry(registry);
  }

  OwningOpRef<ModuleOp> clone(module.clone());
  auto gpuModules = llvm::to_vector(clone->getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() != 1)
    return module.emitError() << "expected one gpu.module (the SIMT level), "
                              << "found " << gpuModules.size();
  bool registerBound = isRegisterBound(gpuModules[0]);
  bool warpSpecialized = isWarpSpecialized(gpuModules[0]);
  bool lowered = true;
  gpuModules[0].walk([&](Operation *op) {
    if (op != gpuModules[0].getOperation() && isAboveLLVM(op))
      lowered = false;
  });
  if (!lowered) {
    PassManager pm(ctx, ModuleOp::getOperationName());
    buildSIMTToLLVMPipeline(pm, options);
    if (failed(pm.run(*clone)))
      return failure();
    gpuModules = llvm::to_vector(clone->getOps<gpu::GPUModuleOp>());
  }
  gpu::GPUModuleOp gpuModule = gpuModules[0];

  initializeNVPTX();
  llvm::Triple triple(kTriple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "NVPTX target unavailable: " << error;
  llvm::CodeGenOptLevel level =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                              : llvm::CodeGenOptLevel::None;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.arch, ptxFeatures(options), llvm::TargetOptions(),
      std::nullopt, std::nullopt, level));
  if (!machine)
    return module.emitError() << "cannot create the NVPTX target machine";

  SkipLoopStrengthReduction lsrGate; // outlives the context that points to it
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(gpuModule, llvmContext, gpuModule.getName());
  if (!llvmModule)
    return module.emitError() << "cannot translate the gpu.module to LLVM IR";
  llvmModule->setTargetTriple(triple);
  // A kernel's last parameters are its tensor maps (flashc.tensor_maps,
  // TmaCopyToSIMT.cpp): 128 bytes each, passed by value and
  // __grid_constant__, so that the TMA unit reads them where they are (the
  // upstream lowering keeps their alignment but not llvm.byval, and NVPTX
  // copies a by-value parameter whose address escapes unless it is a grid
  // constant).
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    auto maps = func->getAttrOfType<ArrayAttr>("flashc.tensor_maps");
    llvm::Function *function = llvmModule->getFunction(func.getName());
    if (!maps || !function || function->arg_size() < maps.size())
      continue;
    auto *bytes = llvm::ArrayType::get(llvm::Type::getInt8Ty(llvmContext),
                                       kTensorMapParamBytes);
    for (unsigned i = function->arg_size() - maps.size();
         i < function->arg_size(); ++i) {
      function->addParamAttr(
          i, llvm::Attribute::getWithByValType(llvmContext, bytes));
      function->addParamAttr(
          i, llvm::Attribute::get(llvmContext, "nvvm.grid_constant"));
    }
  }
  llvmModule->setDataLayout(machine->createDataLayout());
  // libdevice's __nvvm_reflect("__CUDA_FTZ"): no flush-to-zero.
  llvmModule->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                            static_cast<uint32_t>(0));
  if (failed(linkLibdevice(*llvmModule, module, options)))
    return failure();

  auto optimize = makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                            machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return module.emitError()
           << "LLVM optimization failed: " << llvm::toString(std::move(err));

  const flash::CompileOptions &switches = options.compile;
  // After LLVM's LICM: keep one register per offset root across the loops
  // (warp-specialized: across the loops that carry dK and dV's weight).
  if (registerBound && switches.recomputeLoopOffsets &&
      failed(transformVerified(*llvmModule, module,
                               flash::rematerializeLoopOffsets,
                               "recomputing loop offsets")))
    return failure();
  if (!registerBound && warpSpecialized && switches.recomputeLoopOffsets &&
      failed(transformVerified(*llvmModule, module,
                               flash::rematerializeFullLoopOffsets,
                               "recomputing loop offsets")))
    return failure();
  // ptxas would hoist what follows a loop above it, live across the loop.
  // Designed with the loop offsets (without them ptxas spills more).
  if (registerBound && switches.recomputeLoopOffsets &&
      switches.fenceLoopExits &&
      failed(transformVerified(*llvmModule, module, flash::fenceLoopExits,
                               "fencing the code after loops")))
    return failure();
  // ptxas regroups a block of scaled accumulators into HMMA quadruples
  // with moves; next to their MMA they stay in place.
  if (registerBound && switches.sinkAccumulatorScales &&
      failed(transformVerified(*llvmModule, module,
                               flash::sinkAccumulatorScales,
                               "moving accumulator rescales")))
    return failure();
  // A phi of P's 16-bit values is packed into wgmma registers at the top of
  // its loop, after the wait for P V; carried packed it costs nothing there.
  if (switches.packHalfPhis &&
      failed(transformVerified(*llvmModule, module, flash::packHalfPhis,
                               "packing 16-bit phis")))
    return failure();
  bool skipLSR = !wantsLoopStrengthReduction(switches, registerBound);
  if (skipLSR)
    llvmContext.setOptPassGate(lsrGate);
  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager codegen;
    if (skipLSR) {
      codegen.add(new LoopFormKept(llvm::LoopSimplifyID));
      codegen.add(new LoopFormKept(llvm::LCSSAID));
    }
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile))
      return module.emitError() << "NVPTX cannot emit assembly";
    codegen.run(*llvmModule);
  }
  return std::string(ptx.str());
}

//===----------------------------------------------------------------------===//
// ptxas
//===----------------------------------------------------------------------===//

std::string flash::findPtxas(const TargetOptions &options) {
  for (const std::string &root : cudaRoots(options)) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  if (auto path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  return "";
}

llvm::Expected<std::string>
flash::assembleCubin(llvm::StringRef ptx, const TargetOptions &options,
                     llvm::ArrayRef<std::string> extraArgs, std::string *log) {
  if (llvm::Error err = verifyTargetOptions(options))
    return std::move(err);
  std::string ptxas = findPtxas(options);
  if (ptxas.empty())
    return llvm::createStringError(
        "ptxas not found (looked in $CUDA_HOME/bin, /usr/local/cuda/bin and "
        "$PATH): install the CUDA toolkit or emit PTX instead");

  llvm::SmallString<128> input, output, logFile;
  auto makeTemp = [](llvm::StringRef suffix,
                     llvm::SmallString<128> &path) -> llvm::Error {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("flashc", suffix, path))
      return llvm::createStringError(ec, "cannot create a temporary file");
    return llvm::Error::success();
  };
  if (llvm::Error err = makeTemp("ptx", input))
    return std::move(err);
  llvm::FileRemover removeInput(input);
  if (llvm::Error err = makeTemp("cubin", output))
    return std::move(err);
  llvm::FileRemover removeOutput(output);
  if (llvm::Error err = makeTemp("log", logFile))
    return std::move(err);
  llvm::FileRemover removeLog(logFile);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + input.str());
    os << ptx;
  }

  std::string archArg = "-arch=" + options.arch;
  std::string optArg = "-O" + std::to_string(options.optLevel);
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archArg, optArg};
  for (const std::string &arg : extraArgs)
    args.push_back(arg);
  args.append({input.str(), "-o", output.str()});
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile.str(),
                                                logFile.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0,
                                     0, &execError);
  std::string logText;
  if (auto buffer = llvm::MemoryBuffer::getFile(logFile))
    logText = (*buffer)->getBuffer().str();
  if (log)
    *log = logText;
  if (rc != 0)
    return llvm::createStringError(
        "ptxas failed" + (execError.empty() ? "" : " (" + execError + ")") +
        ":\n" + logText);
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError(cubin.getError(),
                                   "cannot read ptxas' output");
  return (*cubin)->getBuffer().str();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void flash::registerTargetPipelines() {
  PassPipelineRegistration<SIMTToLLVMOptions>(
      "flashc-simt-to-llvm",
      "SIMT-level gpu.module -> LLVM dialect + NVVM (what flashc --emit=llvm "
      "runs after convert-tile-to-simt)",
      [](OpPassManager &pm, const SIMTToLLVMOptions &o) {
        TargetOptions options;
        options.arch = o.arch;
        options.ptxVersion = o.ptx;
        buildSIMTToLLVMPipeline(pm, options);
      });
  registerTargetPasses();
}

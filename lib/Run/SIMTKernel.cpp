//===- SIMTKernel.cpp - the SIMT kernel that emulate and cuda run ---------===//
#include "SIMTKernel.h"
#include "Diagnostics.h"

#include "flashc/Emulator/Emulator.h"
#include "flashc/Driver/Compilation.h"

#include "flashc/Runtime/Arch.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace flash::run {

namespace {
bool hasLayouts(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        found |= static_cast<bool>(rt.getEncoding());
  });
  return found;
}

/// The driver's pipelines (those of `flashc --emit=simt` and the PTX path),
/// so that the emulator runs exactly the program the GPU would: from the
/// front end's level, or from the layout level for input whose tiles already
/// carry layouts (flashc --emit=layout). Returns 0, or the exit code: 1 when
/// a pass rejects the kernel (its diagnostic is printed), 2 when one fails
/// without saying why (a bug).
int lowerToSIMT(const BackendContext &context, const ArchInfo &arch) {
  TargetOptions target;
  target.arch = std::string(arch.name);
  target.compile = context.request.options;
  Level from = hasLayouts(context.module) ? Level::Layout : Level::FrontEnd;
  switch (lowerModule(context.module, from, Level::SIMT, target)) {
  case LowerResult::Success:
    return 0;
  case LowerResult::Rejected:
    return 1;
  case LowerResult::Failed:
    break;
  }
  context.diag.error("internal: the lowering to the SIMT level failed "
                     "without a diagnostic (--target=" +
                     context.request.target + ")");
  return 2;
}
} // namespace

int prepareSIMTKernel(const BackendContext &context, gpu::GPUFuncOp &kernel,
                      ParamList &params, const ArchInfo &arch) {
  ModuleOp module = context.module;
  bool hasSIMT = false;
  module.walk([&](gpu::GPUFuncOp f) { hasSIMT |= f.isKernel(); });
  if (!hasSIMT)
    if (int rc = lowerToSIMT(context, arch))
      return rc;
  std::string why;
  if (!emu::findSIMTKernel(module, kernel, why)) {
    context.diag.os() << "error: " << why << "\n";
    return 2;
  }
  if (!collectSIMTParams(kernel, params, context.diag))
    return 2;
  return 0;
}

} // namespace flash::run

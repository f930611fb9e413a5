//===- Run.cpp - `flashc run`: bind arguments, run a kernel, write outputs ===//
#include "flashc/Run/Run.h"

#include "Backend.h"
#include "Bindings.h"
#include "Diagnostics.h"

#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Runtime/Arch.h"

namespace flash {

namespace {
std::unique_ptr<run::Backend> createBackend(const run::BackendContext &ctx) {
  if (ctx.request.target == "interp")
    return run::createInterpBackend(ctx);
  if (ctx.request.target == "emulate")
    return run::createEmulateBackend(ctx);
  if (ctx.request.target == "cuda")
    return run::createCudaBackend(ctx);
  return nullptr;
}

int runWith(mlir::ModuleOp module, const RunRequest &request,
            run::Diagnostics &diag) {
  std::unique_ptr<run::Backend> backend =
      createBackend({module, request, diag});
  if (!backend) {
    diag.os() << "error: target '" << request.target
              << "' is not supported by this runner (supported: interp, "
                 "emulate, cuda)\n";
    return 1;
  }
  run::ParamList params;
  if (int rc = backend->prepare(params))
    return rc;
  if (!run::bindArguments(params, request, diag))
    return 1;
  return backend->run(params);
}
} // namespace

int runKernel(mlir::ModuleOp module, const RunRequest &request,
              llvm::raw_ostream &diag) {
  run::Diagnostics diagnostics(module.getContext(), diag, request.sources);
  int rc = runWith(module, request, diagnostics);
  diag.flush();
  return rc;
}

int runKernel(mlir::ModuleOp module, const RunRequest &request) {
  return runKernel(module, request, llvm::errs());
}

std::string runArch(const RunRequest &request) {
  if (!request.arch.empty())
    return request.arch;
  if (request.target == "cuda") {
    std::string why; // the cuda backend reports it when it opens the driver
    if (std::unique_ptr<cuda::Driver> driver = cuda::Driver::open(why))
      if (const ArchInfo *newest =
              newestArchFor(driver->ccMajor() * 10 + driver->ccMinor()))
        return std::string(newest->name);
  }
  return std::string(kDefaultArch);
}

} // namespace flash

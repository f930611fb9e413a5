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

int chooseRunArch(const std::string &target, const std::string &requested,
                  std::string &arch, llvm::raw_ostream &diag,
                  std::shared_ptr<cuda::Driver> *driverOut) {
  if (target != "cuda") {
    // Checked where it is compiled for, as every compile checks it.
    arch = requested.empty() ? std::string(kDefaultArch) : requested;
    return 0;
  }
  std::string why;
  std::shared_ptr<cuda::Driver> driver = cuda::Driver::open(why);
  if (!driver) {
    diag << "error: " << why << "\n";
    return 1;
  }
  int cc = driver->ccMajor() * 10 + driver->ccMinor();
  std::string device = "device 0 ('" + driver->deviceName() +
                       "', compute capability " +
                       std::to_string(driver->ccMajor()) + "." +
                       std::to_string(driver->ccMinor()) + ")";
  if (!requested.empty()) {
    if (!findArch(requested)) {
      diag << "error: " << unsupportedArchMessage(requested) << "\n";
      return 1;
    }
    if (archNumber(requested) > cc) {
      diag << "error: --arch=" << requested << " is newer than " << device
           << "\n";
      return 1;
    }
    const ArchInfo *info = findArch(requested);
    if (info->archSpecific && archNumber(requested) != cc) {
      diag << "error: --arch=" << requested
           << " runs only on compute capability " << archNumber(requested) / 10
           << "." << archNumber(requested) % 10 << ", not on " << device
           << "\n";
      return 1;
    }
    arch = requested;
    diag << "note: --target=cuda: compiling for " << arch << " (--arch) on "
         << device << "\n";
    if (driverOut)
      *driverOut = std::move(driver);
    return 0;
  }
  const ArchInfo *newest = newestArchFor(cc);
  if (!newest) {
    diag << "error: " << device << " is older than "
         << kSupportedArchs[0].name
         << ", the oldest arch flashc supports\n";
    return 1;
  }
  arch = std::string(newest->name);
  diag << "note: --target=cuda: compiling for " << arch << " (from " << device
       << "; --arch overrides)\n";
  if (driverOut)
    *driverOut = std::move(driver);
  return 0;
}

} // namespace flash

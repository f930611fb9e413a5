//===- CudaBackend.cpp - --target=cuda: PTX on GPU 0 ----------------------===//
//
// Compiles the SIMT kernel to PTX and its launch sidecar in-process (exactly
// what `flashc -o K.ptx` writes) and runs it through the CUDA driver, loaded
// at run time (lib/Launcher, docs/launcher.md).
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "Diagnostics.h"
#include "Outputs.h"
#include "SIMTKernel.h"

#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Launcher/Launch.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Target/PTX.h"
#include "flashc/Target/Sidecar.h"

#include <cstdio>

using namespace mlir;

namespace flash::run {

namespace {

class CudaBackend : public Backend {
public:
  explicit CudaBackend(const BackendContext &context) : context(context) {}

  int prepare(ParamList &params) override;
  int run(ParamList &params) override;

private:
  std::string deviceText() const;
  /// The request's arch, chosen by the caller; without one, chooseRunArch's.
  int chooseArch();
  int compile(const TargetOptions &options, std::string &ptx,
              launcher::Sidecar &sidecar);
  void printStats(const launcher::Sidecar &sidecar,
                  const launcher::LaunchResult &result);

  BackendContext context;
  std::shared_ptr<cuda::Driver> driver;
  TargetOptions target;
  gpu::GPUFuncOp kernel;
};

int CudaBackend::prepare(ParamList &params) {
  // First: without a driver or device nothing else is worth reporting.
  std::string why;
  driver = context.request.cudaDriver;
  if (!driver)
    driver = cuda::Driver::open(why);
  if (!driver) {
    context.diag.os() << "error: " << why << "\n";
    return 1;
  }
  if (int rc = chooseArch())
    return rc;
  return prepareSIMTKernel(context, kernel, params, *findArch(target.arch));
}

std::string CudaBackend::deviceText() const {
  return "device 0 ('" + driver->deviceName() + "', compute capability " +
         std::to_string(driver->ccMajor()) + "." +
         std::to_string(driver->ccMinor()) + ")";
}

int CudaBackend::chooseArch() {
  target.compile = context.request.options;
  if (!context.request.arch.empty())
    target.arch = context.request.arch;
  else if (chooseRunArch("cuda", "", target.arch, context.diag.os()))
    return 1;
  if (llvm::Error e = verifyTargetOptions(target)) {
    context.diag.os() << "error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}

int CudaBackend::compile(const TargetOptions &options, std::string &ptx,
                         launcher::Sidecar &sidecar) {
  unsigned before = context.diag.numLocatedErrors();
  FailureOr<std::string> sidecarText =
      writeLaunchSidecar(context.module, options);
  FailureOr<std::string> ptxText = failed(sidecarText)
                                       ? FailureOr<std::string>(failure())
                                       : emitPTX(context.module, options);
  if (failed(sidecarText) || failed(ptxText)) {
    // The diagnostics at the kernel say why; none is a bug.
    if (context.diag.numLocatedErrors() != before)
      return 1;
    context.diag.error("internal: the kernel could not be compiled to PTX "
                       "for --target=cuda, without a diagnostic");
    return 2;
  }
  std::string why;
  if (!launcher::parseSidecar(*sidecarText, sidecar, why)) {
    context.diag.os() << "error: internal: the launch sidecar does not parse: "
                      << why << "\n";
    return 2;
  }
  ptx = std::move(*ptxText);
  return 0;
}

void CudaBackend::printStats(const launcher::Sidecar &sidecar,
                             const launcher::LaunchResult &result) {
  llvm::raw_ostream &os = statsStream(context.request);
  char buf[64];
  snprintf(buf, sizeof buf, "%.3f", result.milliseconds);
  os << "cuda kernel " << sidecar.entry << " on " << deviceText() << ":\n"
     << "  grid                                      (" << result.grid[0]
     << ", " << result.grid[1] << ", " << result.grid[2] << ")\n"
     << "  threads per CTA                           " << result.block << "\n"
     << "  dynamic shared memory (bytes)             "
     << result.dynamicSharedBytes << "\n"
     << "  launch + synchronize wall time (ms)       " << buf << "\n";
  os.flush();
}

int CudaBackend::run(ParamList &params) {
  std::string ptx;
  launcher::Sidecar sidecar;
  if (int rc = compile(target, ptx, sidecar))
    return rc;
  std::vector<launcher::Arg> args;
  for (Param &p : params) {
    launcher::Arg a;
    a.name = p.name;
    if (p.tensor) {
      a.tensor = &p.array;
      for (const auto &out : context.request.outs)
        a.copyBack |= out.first == p.name;
    } else {
      a.scalar = p.scalar;
    }
    args.push_back(std::move(a));
  }
  launcher::LaunchResult result;
  std::string why;
  if (!launcher::launch(*driver, ptx, sidecar, args, why, &result)) {
    context.diag.os() << "error: " << why << "\n";
    return 1;
  }
  if (context.request.stats)
    printStats(sidecar, result);
  return writeOutputs(
      context.request, params, [](Param &p) { return std::move(p.array); },
      context.diag);
}

} // namespace

std::unique_ptr<Backend> createCudaBackend(const BackendContext &context) {
  return std::make_unique<CudaBackend>(context);
}

} // namespace flash::run

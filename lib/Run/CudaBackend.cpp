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
  /// --arch, else the newest supported arch the device can run.
  int chooseArch(TargetOptions &options);
  int compile(const TargetOptions &options, std::string &ptx,
              launcher::Sidecar &sidecar);
  void printStats(const launcher::Sidecar &sidecar,
                  const launcher::LaunchResult &result);

  BackendContext context;
  std::unique_ptr<cuda::Driver> driver;
  gpu::GPUFuncOp kernel;
};

int CudaBackend::prepare(ParamList &params) {
  // First: without a driver or device nothing else is worth reporting.
  std::string why;
  driver = cuda::Driver::open(why);
  if (!driver) {
    context.diag.os() << "error: " << why << "\n";
    return 1;
  }
  return prepareSIMTKernel(context, kernel, params);
}

std::string CudaBackend::deviceText() const {
  return "device 0 ('" + driver->deviceName() + "', compute capability " +
         std::to_string(driver->ccMajor()) + "." +
         std::to_string(driver->ccMinor()) + ")";
}

int CudaBackend::chooseArch(TargetOptions &options) {
  const std::string &requested = context.request.arch;
  int cc = driver->ccMajor() * 10 + driver->ccMinor();
  if (!requested.empty()) {
    options.arch = requested;
    if (llvm::Error e = verifyTargetOptions(options)) {
      context.diag.os() << "error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    if (archNumber(requested) > cc) {
      context.diag.os() << "error: --arch=" << requested << " is newer than "
                        << deviceText() << "\n";
      return 1;
    }
    const ArchInfo *info = findArch(requested);
    if (info && info->archSpecific && archNumber(requested) != cc) {
      context.diag.os() << "error: --arch=" << requested
                        << " runs only on compute capability "
                        << archNumber(requested) / 10 << "."
                        << archNumber(requested) % 10 << ", not on "
                        << deviceText() << "\n";
      return 1;
    }
    context.diag.note("--target=cuda: compiling for " + requested +
                      " (--arch) on " + deviceText());
    return 0;
  }
  const ArchInfo *newest = newestArchFor(cc);
  if (!newest) {
    context.diag.os() << "error: " << deviceText() << " is older than "
                      << kSupportedArchs[0].name
                      << ", the oldest arch flashc supports\n";
    return 1;
  }
  options.arch = std::string(newest->name);
  context.diag.note("--target=cuda: compiling for " + options.arch + " (from " +
                    deviceText() + "; --arch overrides)");
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
  TargetOptions options;
  std::string ptx;
  launcher::Sidecar sidecar;
  if (int rc = chooseArch(options))
    return rc;
  if (int rc = compile(options, ptx, sidecar))
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

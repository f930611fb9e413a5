//===- EmitSidecar.cpp - flashc-emit-sidecar: the launch JSON, for lit ----===//
#include "TextOutput.h"

#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"
#include "flashc/Target/Sidecar.h"

#include "mlir/IR/DialectRegistry.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCEMITSIDECAR
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
struct EmitSidecarPass : flash::impl::FlashcEmitSidecarBase<EmitSidecarPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    flash::registerTargetDialects(registry);
  }

  void runOnOperation() override {
    flash::TargetOptions options;
    options.arch = arch;
    options.ptxVersion = ptx;
    FailureOr<std::string> json =
        flash::writeLaunchSidecar(getOperation(), options);
    if (failed(json) ||
        failed(flash::writeText(getOperation(), output, *json)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

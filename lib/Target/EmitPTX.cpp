//===- EmitPTX.cpp - flashc-emit-ptx: emitPTX as a pass, for lit ----------===//
#include "TextOutput.h"

#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCEMITPTX
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
struct EmitPTXPass : flash::impl::FlashcEmitPTXBase<EmitPTXPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    flash::registerTargetDialects(registry);
  }

  void runOnOperation() override {
    flash::TargetOptions options;
    options.arch = arch;
    options.ptxVersion = ptx;
    FailureOr<std::string> ptxText = flash::emitPTX(getOperation(), options);
    if (failed(ptxText) ||
        failed(flash::writeText(getOperation(), output, *ptxText)))
      return signalPassFailure();
    if (!cubin.empty()) {
      llvm::Expected<std::string> binary =
          flash::assembleCubin(*ptxText, options);
      if (!binary) {
        getOperation().emitError() << llvm::toString(binary.takeError());
        return signalPassFailure();
      }
      if (failed(flash::writeText(getOperation(), cubin, *binary)))
        return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace

//===- PrepareNVVM.cpp - flashc-prepare-nvvm ------------------------------===//
//
// What the upstream lowering does not do for flashc on a SIMT-level
// gpu.module (Passes.td says what): launch bounds, dynamic shared memory,
// the arch's shared-memory limit, a clear error for f8e4m3 values.
//
//===----------------------------------------------------------------------===//
#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"
#include "flashc/Target/Sidecar.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCPREPARENVVM
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
bool holdsFloat8(Type t) {
  return isa<Float8E4M3FNType>(getElementTypeOrSelf(t));
}

/// f8e4m3 values reach PTX only as bytes and through the casts
/// flashc-float8-to-nvvm lowers on sm_90a; any other op that holds one is an
/// error here rather than a failed legalization in the LLVM lowering.
LogicalResult rejectFloat8(gpu::GPUModuleOp module, StringRef arch) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (llvm::any_of(op->getResultTypes(), holdsFloat8) ||
        llvm::any_of(op->getOperandTypes(), holdsFloat8)) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!found)
    return success();
  InFlightDiagnostic d = found->emitError();
  if (arch != "sm_90a")
    d << "f8e4m3 needs --arch=sm_90a (e4m3 conversions and wgmma), not "
      << arch;
  else
    d << "f8e4m3 values reach PTX only through loads, stores and casts to "
         "and from f32 and f16; '"
      << found->getName() << "' holds one (it runs on --target=interp and "
      << "--target=emulate)";
  return failure();
}

struct PrepareNVVMPass
    : flash::impl::FlashcPrepareNVVMBase<PrepareNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    flash::TargetOptions options;
    options.arch = arch;
    options.ptxVersion = ptx;
    if (llvm::Error err = flash::verifyTargetOptions(options)) {
      module.emitError() << llvm::toString(std::move(err));
      return signalPassFailure();
    }

    if (failed(rejectFloat8(module, options.arch)))
      return signalPassFailure();

    Builder b(module.getContext());
    StringRef reqntid = NVVM::NVVMDialect::getReqntidAttrName();
    StringRef maxntid = NVVM::NVVMDialect::getMaxntidAttrName();
    for (auto func : module.getOps<gpu::GPUFuncOp>()) {
      // setmaxnreg needs the register count at entry, which ptxas derives
      // from .maxntid and .minnctapersm: one CTA per SM owns the 64K
      // registers the roles split.
      if (func.isKernel() && func->hasAttr("flashc.warp_specialize") &&
          !func->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(1));
      if (!func.isKernel() || func->hasAttr(reqntid) || func->hasAttr(maxntid))
        continue;
      // convert-gpu-to-nvvm turns the inherent known_block_size into
      // nvvm.maxntid itself (and ptxas rejects .maxntid with .reqntid).
      if (func.getKnownBlockSizeAttr())
        continue;
      if (DenseI32ArrayAttr block = flash::knownBlockSize(func))
        func->setAttr(maxntid, block);
    }

    flash::SharedMemoryUse shared = flash::sharedMemoryOf(module);
    if (shared.staticBytes + shared.dynamicBytes >
        flash::maxSharedBytesPerCTA(options.arch)) {
      module.emitError() << "the kernels need "
                         << shared.staticBytes + shared.dynamicBytes
                         << " bytes of shared memory per CTA, more than the "
                         << flash::maxSharedBytesPerCTA(options.arch)
                         << " that " << options.arch << " allows";
      return signalPassFailure();
    }
    if (shared.staticBytes <= flash::kMaxStaticSharedBytes)
      return;
    SmallVector<LLVM::GlobalOp> globals;
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (global.getAddrSpace() == 3 && !flash::isDeclaration(global))
        globals.push_back(global);
    if (globals.size() != 1 || globals[0].getValueOrNull() ||
        !globals[0].getInitializerRegion().empty()) {
      module.emitError() << "more than " << flash::kMaxStaticSharedBytes
                         << " bytes of static shared memory: only one "
                            "uninitialized shared buffer can be made dynamic";
      return signalPassFailure();
    }
    LLVM::GlobalOp old = globals[0];
    OpBuilder builder(old);
    auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), 0);
    auto dynamic = LLVM::GlobalOp::create(
        builder, old.getLoc(), type, /*isConstant=*/false,
        LLVM::Linkage::External, old.getSymName(), Attribute(),
        old.getAlignment().value_or(16), /*addrSpace=*/3);
    (void)dynamic;
    old.erase();
    module->setAttr(flash::simt::kDynamicSharedBytesAttrName,
                    b.getI64IntegerAttr(shared.staticBytes));
  }
};
} // namespace

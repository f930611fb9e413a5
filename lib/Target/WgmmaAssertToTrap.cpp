//===- WgmmaAssertToTrap.cpp - device asserts of wgmma kernels as traps ---===//
//
// A failing cf.assert reaches the GPU as a call of CUDA's __assertfail. In a
// kernel that issues warpgroup MMAs, ptxas serializes every wgmma of the
// kernel when any call is present (C7510: "wgmma pipeline crossing function
// boundary"), wherever the call sits. There the assert becomes a branch to
// PTX's `trap` instead: the launch still fails, without the message (the
// interpreter and the emulator, which run the SIMT level, keep reporting it).
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCWGMMAASSERTTOTRAP
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {

/// Whether `func` issues warpgroup MMA instructions: NVVM's wgmma ops, or the
/// inline PTX that carries the forms NVVM lacks.
bool issuesWgmma(gpu::GPUFuncOp func) {
  WalkResult found = func.walk([](Operation *op) {
    if (op->getName().getStringRef().starts_with("nvvm.wgmma"))
      return WalkResult::interrupt();
    auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op);
    if (inlineAsm && inlineAsm.getAsmString().contains("wgmma"))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// `cf.assert %c` -> `cf.cond_br %c, ^rest, ^trap` with ^trap holding
/// llvm.intr.trap and llvm.unreachable.
void lowerToTrap(cf::AssertOp op) {
  Location loc = op.getLoc();
  Block *before = op->getBlock();
  Block *rest = before->splitBlock(op->getIterator());
  OpBuilder builder(op->getContext());
  Block *trap = builder.createBlock(rest);
  LLVM::Trap::create(builder, loc);
  LLVM::UnreachableOp::create(builder, loc);
  builder.setInsertionPointToEnd(before);
  cf::CondBranchOp::create(builder, loc, op.getArg(), rest, ValueRange{}, trap,
                           ValueRange{});
  op.erase();
}

struct WgmmaAssertToTrap
    : flash::impl::FlashcWgmmaAssertToTrapBase<WgmmaAssertToTrap> {
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp func) {
      if (!issuesWgmma(func))
        return;
      SmallVector<cf::AssertOp> asserts;
      func.walk([&](cf::AssertOp op) { asserts.push_back(op); });
      for (cf::AssertOp op : asserts)
        lowerToTrap(op);
    });
  }
};

} // namespace

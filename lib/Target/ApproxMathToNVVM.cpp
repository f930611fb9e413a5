//===- ApproxMathToNVVM.cpp - approximate math to NVVM intrinsics ---------===//
//
// math.exp2 with fastmath<afn> on f32 (the exponentials of the decomposed
// online softmax) becomes PTX's ex2.approx.ftz.f32: one MUFU.EX2 in SASS,
// where the plain form (llvm.exp2, ex2.approx.f32) also needs a range
// fix-up of four instructions for subnormal results. The executors model
// the flush (flash::sem's Exp2Ftz); the user's exp2() keeps the plain form.
// Vectors are unrolled: the intrinsic is scalar.
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCAPPROXMATHTONVVM
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kEx2ApproxFtz = "llvm.nvvm.ex2.approx.ftz.f32";

struct ApproxExp2ToEx2Ftz : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    if (!arith::bitEnumContainsAll(op.getFastmath(),
                                   arith::FastMathFlags::afn) ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not an approximate f32 exp2");
    Location loc = op.getLoc();
    StringAttr intrinsic = rewriter.getStringAttr(kEx2ApproxFtz);
    Type f32 = rewriter.getF32Type();
    auto ex2 = [&](Value x) -> Value {
      return LLVM::CallIntrinsicOp::create(rewriter, loc, f32, intrinsic,
                                           ValueRange{x})
          .getResult(0);
    };
    auto vector = dyn_cast<VectorType>(op.getType());
    if (!vector) {
      rewriter.replaceOp(op, ex2(op.getOperand()));
      return success();
    }
    if (vector.getRank() != 1 || vector.isScalable())
      return rewriter.notifyMatchFailure(op, "not a fixed 1-D vector");
    Value result = arith::ConstantOp::create(rewriter, loc, vector,
                                             rewriter.getZeroAttr(vector));
    for (int64_t i = 0, e = vector.getNumElements(); i < e; ++i) {
      Value element =
          vector::ExtractOp::create(rewriter, loc, op.getOperand(), i);
      result = vector::InsertOp::create(rewriter, loc, ex2(element), result, i);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ApproxMathToNVVMPass
    : flash::impl::FlashcApproxMathToNVVMBase<ApproxMathToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    flash::populateApproxMathToNVVMPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void flash::populateApproxMathToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<ApproxExp2ToEx2Ftz>(patterns.getContext());
}

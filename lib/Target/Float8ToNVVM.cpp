//===- Float8ToNVVM.cpp - f8e4m3 conversions to NVVM intrinsics -----------===//
//
// On sm_90a, arith.truncf to f8E4M3FN becomes cvt.rn.satfinite.e4m3x2.f32
// (llvm.nvvm.ff.to.e4m3x2.rn) and arith.extf from it cvt.rn.f16x2.e4m3x2
// (llvm.nvvm.e4m3x2.to.f16x2.rn), two elements per instruction; the fp8
// values become the i8 bytes that memory holds (the loads and stores of the
// SIMT lowering already bitcast them), so that nothing of type f8E4M3FN is
// left for the LLVM lowering, which has no such type: fp8 constants become
// their bytes, and loops and branches carry fp8 values (the P of an
// overlapped fp8 attention loop) as bytes. The executors model the same
// conversions (flashc/Runtime/Float8.h).
//
//===----------------------------------------------------------------------===//
#include "flashc/Target/PTX.h"
#include "flashc/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace flash {
#define GEN_PASS_DEF_FLASHCFLOAT8TONVVM
#include "flashc/Target/Passes.h.inc"
} // namespace flash

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kToE4M3 = "llvm.nvvm.ff.to.e4m3x2.rn";
constexpr llvm::StringLiteral kFromE4M3 = "llvm.nvvm.e4m3x2.to.f16x2.rn";

bool isE4M3(Type t) { return isa<Float8E4M3FNType>(getElementTypeOrSelf(t)); }

/// The elements of a scalar or 1-D vector value.
SmallVector<Value> elementsOf(PatternRewriter &rewriter, Location loc,
                              Value v) {
  auto vector = dyn_cast<VectorType>(v.getType());
  if (!vector)
    return {v};
  SmallVector<Value> out;
  for (int64_t i = 0, e = vector.getNumElements(); i < e; ++i)
    out.push_back(vector::ExtractOp::create(rewriter, loc, v, i));
  return out;
}

/// `elements` as a value shaped like `like` (a scalar or a 1-D vector).
Value assemble(PatternRewriter &rewriter, Location loc, Type like,
               Type element, ArrayRef<Value> elements) {
  auto vector = dyn_cast<VectorType>(like);
  if (!vector)
    return elements[0];
  return vector::FromElementsOp::create(
      rewriter, loc, VectorType::get(vector.getShape(), element), elements);
}

bool isScalarOr1D(Type t) {
  auto vector = dyn_cast<VectorType>(t);
  return !vector || (vector.getRank() == 1 && !vector.isScalable());
}

/// truncf f32/f16 -> f8E4M3FN: pairs (x[i], x[i+1]) through one cvt, whose
/// 16-bit result holds x[i] in its low byte and x[i+1] in its high byte.
struct TruncFToE4M3 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    if (!isE4M3(op.getType()) || !(from.isF32() || from.isF16()) ||
        !isScalarOr1D(op.getType()))
      return rewriter.notifyMatchFailure(op, "not an f32/f16 -> e4m3 truncf");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type(),
         i16 = rewriter.getI16Type();
    SmallVector<Value> in = elementsOf(rewriter, loc, op.getIn());
    for (Value &x : in)
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(rewriter, loc, f32, x);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0));
    StringAttr intrinsic = rewriter.getStringAttr(kToE4M3);
    Value eight = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getI16IntegerAttr(8));
    SmallVector<Value> bytes, pairs;
    for (size_t i = 0; i < in.size(); i += 2) {
      Value hi = i + 1 < in.size() ? in[i + 1] : zero;
      // cvt d, a, b puts cvt(a) in the upper byte and cvt(b) in the lower.
      Value pair = LLVM::CallIntrinsicOp::create(rewriter, loc, i16, intrinsic,
                                                 ValueRange{hi, in[i]})
                       .getResult(0);
      pairs.push_back(pair);
      if (isa<VectorType>(op.getType()) && in.size() % 2 == 0)
        continue;
      bytes.push_back(arith::TruncIOp::create(rewriter, loc, i8, pair));
      if (i + 1 < in.size())
        bytes.push_back(arith::TruncIOp::create(
            rewriter, loc, i8,
            arith::ShRUIOp::create(rewriter, loc, pair, eight)));
    }
    Value stored;
    if (bytes.empty()) {
      // An even vector: its pairs are its bytes as they are (little-endian
      // lanes), so that packing them into words costs no byte moves.
      auto vector = cast<VectorType>(op.getType());
      Value halves = vector::FromElementsOp::create(
          rewriter, loc,
          VectorType::get({int64_t(pairs.size())}, i16), pairs);
      stored = vector::BitCastOp::create(
          rewriter, loc, VectorType::get(vector.getShape(), i8), halves);
    } else {
      stored = assemble(rewriter, loc, op.getType(), i8, bytes);
    }
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), stored);
    return success();
  }
};

/// extf f8E4M3FN -> f16/f32: the bytes of (x[i], x[i+1]) through one cvt
/// to f16x2 (low byte to element 0), widened to f32 where asked.
struct ExtFFromE4M3 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = getElementTypeOrSelf(op.getType());
    if (!isE4M3(op.getIn().getType()) || !(to.isF32() || to.isF16()) ||
        !isScalarOr1D(op.getType()))
      return rewriter.notifyMatchFailure(op, "not an e4m3 -> f32/f16 extf");
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type(), i16 = rewriter.getI16Type(),
         f16 = rewriter.getF16Type();
    Type inType = op.getIn().getType();
    auto inVector = dyn_cast<VectorType>(inType);
    Type bytesType =
        inVector ? Type(VectorType::get(inVector.getShape(), i8)) : i8;
    Value bits = arith::BitcastOp::create(rewriter, loc, bytesType, op.getIn());
    SmallVector<Value> bytes = elementsOf(rewriter, loc, bits);
    Value eight = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getI16IntegerAttr(8));
    StringAttr intrinsic = rewriter.getStringAttr(kFromE4M3);
    auto halves = VectorType::get({2}, f16);
    SmallVector<Value> out;
    for (size_t i = 0; i < bytes.size(); i += 2) {
      Value pair = arith::ExtUIOp::create(rewriter, loc, i16, bytes[i]);
      if (i + 1 < bytes.size()) {
        Value hi = arith::ExtUIOp::create(rewriter, loc, i16, bytes[i + 1]);
        pair = arith::OrIOp::create(
            rewriter, loc, pair,
            arith::ShLIOp::create(rewriter, loc, hi, eight));
      }
      Value h2 = LLVM::CallIntrinsicOp::create(rewriter, loc, halves,
                                               intrinsic, ValueRange{pair})
                     .getResult(0);
      for (int64_t k = 0; k < 2 && i + k < bytes.size(); ++k) {
        Value h = vector::ExtractOp::create(rewriter, loc, h2, k);
        out.push_back(to.isF32() ? Value(arith::ExtFOp::create(
                                       rewriter, loc, to, h))
                                 : h);
      }
    }
    rewriter.replaceOp(op, assemble(rewriter, loc, op.getType(), to, out));
    return success();
  }
};

/// bitcast(bitcast(x)) back to x's type is x: the fp8 round trips the
/// rewrites and the loads' and stores' bitcasts leave between them.
struct FoldBitcastRoundTrip : OpRewritePattern<arith::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getIn().getDefiningOp<arith::BitcastOp>();
    if (!inner || inner.getIn().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not a bitcast round trip");
    rewriter.replaceOp(op, inner.getIn());
    return success();
  }
};

/// A vector.bitcast of fp8 values as bytes, or of words into fp8 values
/// read as bytes, reinterprets the bytes directly:
/// vector.bitcast(arith.bitcast(bytes) to fp8) is vector.bitcast(bytes), and
/// arith.bitcast(vector.bitcast(words) to fp8) to bytes is
/// vector.bitcast(words) to bytes; a vector.bitcast of a vector.bitcast is
/// one (or none, back to the source's type).
struct FoldBitcastThroughFloat8 : RewritePattern {
  FoldBitcastThroughFloat8(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Value source;
    if (auto cast = dyn_cast<vector::BitCastOp>(op)) {
      if (auto bytes = cast.getSource().getDefiningOp<arith::BitcastOp>();
          bytes && isE4M3(cast.getSourceVectorType()))
        source = bytes.getIn();
      else if (auto inner = cast.getSource().getDefiningOp<vector::BitCastOp>())
        source = inner.getSource();
    } else if (auto cast = dyn_cast<arith::BitcastOp>(op)) {
      if (auto words = cast.getIn().getDefiningOp<vector::BitCastOp>();
          words && isE4M3(cast.getIn().getType()))
        source = words.getSource();
    }
    if (!source)
      return rewriter.notifyMatchFailure(op, "no bitcast pair through fp8");
    Type to = op->getResult(0).getType();
    if (source.getType() == to)
      rewriter.replaceOp(op, source);
    else
      rewriter.replaceOpWithNewOp<vector::BitCastOp>(op, to, source);
    return success();
  }
};

/// An fp8 constant as its bytes, bitcast back.
struct ConstantE4M3 : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    if (!isE4M3(op.getType()))
      return rewriter.notifyMatchFailure(op, "not an e4m3 constant");
    Type i8 = rewriter.getI8Type();
    TypedAttr bytes;
    if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue()))
      bytes = dense.bitcast(i8);
    else if (auto f = dyn_cast<FloatAttr>(op.getValue()))
      bytes = rewriter.getIntegerAttr(
          i8, f.getValue().bitcastToAPInt().getZExtValue());
    else
      return rewriter.notifyMatchFailure(op, "not a float constant");
    Value c = arith::ConstantOp::create(rewriter, op.getLoc(), bytes);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), c);
    return success();
  }
};

/// scf.for / scf.if / scf.yield carrying fp8 values carry their bytes, 1-D
/// vectors of a multiple of 4 packed in 32-bit words (the registers they
/// end up in: a loop-carried P of an overlapped fp8 attention loop is
/// read as the words of wgmma's A fragment); upstream's structural
/// conversion, arith.bitcast or vector.bitcast at the edges.
LogicalResult carryFloat8AsBytes(gpu::GPUModuleOp module) {
  MLIRContext *ctx = module.getContext();
  TypeConverter converter;
  converter.addConversion([](Type t) { return t; });
  converter.addConversion([ctx](Float8E4M3FNType) -> Type {
    return IntegerType::get(ctx, 8);
  });
  converter.addConversion([ctx](VectorType v) -> Type {
    if (!isE4M3(v))
      return v;
    if (v.getRank() == 1 && !v.isScalable() && v.getNumElements() % 4 == 0)
      return VectorType::get({v.getNumElements() / 4},
                             IntegerType::get(ctx, 32));
    return VectorType::get(v.getShape(), IntegerType::get(ctx, 8));
  });
  auto bitcast = [](OpBuilder &b, Type type, ValueRange inputs,
                    Location loc) -> Value {
    if (inputs.size() != 1)
      return Value();
    auto from = dyn_cast<VectorType>(inputs[0].getType());
    auto to = dyn_cast<VectorType>(type);
    if (from && to && from.getShape() != to.getShape())
      return vector::BitCastOp::create(b, loc, to, inputs[0]);
    return arith::BitcastOp::create(b, loc, type, inputs[0]);
  };
  converter.addSourceMaterialization(bitcast);
  converter.addTargetMaterialization(bitcast);
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(ctx);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  return applyPartialConversion(module, target, std::move(patterns));
}

struct Float8ToNVVMPass
    : flash::impl::FlashcFloat8ToNVVMBase<Float8ToNVVMPass> {
  void runOnOperation() override {
    if (failed(carryFloat8AsBytes(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    flash::populateFloat8ToNVVMPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void flash::populateFloat8ToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<TruncFToE4M3, ExtFFromE4M3, FoldBitcastRoundTrip,
               FoldBitcastThroughFloat8, ConstantE4M3>(patterns.getContext());
}

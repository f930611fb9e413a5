//===- TileOps.cpp - tile op verifiers, folders and canonicalizations -----===//
#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace flash::tile;

/// Prints a shape as `[128, 64]` for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                                StringRef what) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << what << " " << axis
                             << " is out of range for rank " << rank;
  return success();
}

static LogicalResult verifyGridAxis(Operation *op, int32_t axis) {
  if (axis < 0 || axis > 2)
    return op->emitOpError() << "grid axis must be 0, 1 or 2, got " << axis;
  return success();
}

LogicalResult ProgramIdOp::verify() { return verifyGridAxis(*this, getAxis()); }
LogicalResult NumProgramsOp::verify() {
  return verifyGridAxis(*this, getAxis());
}

//===----------------------------------------------------------------------===//
// DimOp
//===----------------------------------------------------------------------===//

LogicalResult DimOp::verify() {
  return verifyAxis(*this, getIndex(), getSource().getType().getRank(), "dim");
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  GlobalType type = getSource().getType();
  int64_t index = getIndex();
  if (index < 0 || index >= type.getRank() || !type.isStaticDim(index))
    return {};
  return IntegerAttr::get(getType(), type.getShape()[index]);
}

//===----------------------------------------------------------------------===//
// SplatOp, IotaOp
//===----------------------------------------------------------------------===//

LogicalResult SplatOp::verify() {
  Type elementType = getType().getElementType();
  if (getValue().getType() != elementType)
    return emitOpError() << "scalar of type " << getValue().getType()
                         << " cannot fill a tile of " << elementType;
  return success();
}

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  if (!adaptor.getValue())
    return {};
  return SplatElementsAttr::get(getType(), adaptor.getValue());
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() != 1 || !type.getElementType().isInteger(32))
    return emitOpError() << "result must be a 1-D tile of i32, got " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp, StoreOp, AtomicAddOp
//===----------------------------------------------------------------------===//

/// Shared rules of windows: one offset per global dim, window dims strictly
/// increasing and in range, one window dim per tile dim. A gathered window
/// (`gather` non-empty) adds tile dim 0, whose rows come from one 1-D i32
/// index tile per gathered global dim.
static LogicalResult verifyWindow(Operation *op, GlobalType global,
                                  size_t numOffsets, ArrayRef<int64_t> window,
                                  RankedTensorType tile,
                                  ArrayRef<int64_t> gather = {},
                                  TypeRange indexTypes = {}) {
  if (numOffsets != global.getRank())
    return op->emitOpError() << "expects " << global.getRank()
                             << " offsets (one per dim of the global tensor), "
                                "got "
                             << numOffsets;
  bool gathered = !gather.empty();
  if (indexTypes.size() != gather.size())
    return op->emitOpError() << "gathers " << gather.size()
                             << " dims but has " << indexTypes.size()
                             << " index tiles (one per gathered dim)";
  if (window.size() + gathered != static_cast<size_t>(tile.getRank()))
    return op->emitOpError() << "window names " << window.size() << " dims"
                             << (gathered ? " plus the gathered rows" : "")
                             << " but the tile has rank " << tile.getRank();
  auto checkDims = [&](ArrayRef<int64_t> dims, StringRef what) -> LogicalResult {
    for (auto [i, dim] : llvm::enumerate(dims)) {
      if (dim < 0 || dim >= global.getRank())
        return op->emitOpError() << what << " dim " << dim
                                 << " is out of range for a global tensor of "
                                    "rank "
                                 << global.getRank();
      if (i > 0 && dim <= dims[i - 1])
        return op->emitOpError() << what << " dims must be strictly "
                                 << "increasing, got " << shapeString(dims);
    }
    return success();
  };
  if (failed(checkDims(window, "window")) || failed(checkDims(gather, "gathered")))
    return failure();
  for (int64_t dim : gather)
    if (llvm::is_contained(window, dim))
      return op->emitOpError() << "dim " << dim
                               << " is both gathered and in the window";
  for (auto [i, type] : llvm::enumerate(indexTypes)) {
    auto index = dyn_cast<RankedTensorType>(type);
    if (!index || index.getRank() != 1 ||
        !index.getElementType().isInteger(32) ||
        index.getDimSize(0) != tile.getDimSize(0))
      return op->emitOpError() << "index tile " << i
                               << " must be a 1-D tile of i32 with one "
                                  "element per gathered row ("
                               << tile.getDimSize(0) << "), got " << type;
  }
  if (tile.getElementType() != global.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType()
                             << " does not match the global tensor's "
                             << global.getElementType();
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifyWindow(*this, getSource().getType(), getOffsets().size(),
                          getWindow(), getType(), getGather(),
                          getIndices().getTypes())))
    return failure();
  if (getPad().getType() != getType().getElementType())
    return emitOpError() << "pad value of type " << getPad().getType()
                         << " does not match the element type "
                         << getType().getElementType();
  return success();
}

LogicalResult LoadScalarOp::verify() {
  GlobalType global = getSource().getType();
  if (getIndices().size() != global.getRank())
    return emitOpError() << "expects " << global.getRank()
                         << " indices (one per dim of the global tensor), got "
                         << getIndices().size();
  if (getType() != global.getElementType())
    return emitOpError() << "result type " << getType()
                         << " does not match the global tensor's element "
                            "type "
                         << global.getElementType();
  if (getPad().getType() != getType())
    return emitOpError() << "pad value of type " << getPad().getType()
                         << " does not match the element type " << getType();
  return success();
}

/// The optional mask of a store or atomic: an i1 tile of the value's shape
/// and layout.
static LogicalResult verifyMask(Operation *op, Value mask,
                                RankedTensorType value) {
  if (!mask)
    return success();
  auto type = cast<RankedTensorType>(mask.getType());
  if (!type.getElementType().isInteger(1))
    return op->emitOpError() << "mask must be a tile of i1, got " << type;
  if (type.getShape() != value.getShape())
    return op->emitOpError() << "mask shape " << shapeString(type.getShape())
                             << " differs from the value's "
                             << shapeString(value.getShape());
  if (type.getEncoding() != value.getEncoding())
    return op->emitOpError() << "mask " << type << " and value " << value
                             << " have different layouts";
  return success();
}

LogicalResult StoreOp::verify() {
  if (failed(verifyWindow(*this, getDest().getType(), getOffsets().size(),
                          getWindow(), getValue().getType())))
    return failure();
  return verifyMask(*this, getMask(), getValue().getType());
}

LogicalResult DeviceAssertOp::verify() {
  Type type = getCondition().getType();
  auto tile = dyn_cast<RankedTensorType>(type);
  Type element = tile ? tile.getElementType() : type;
  if (!element.isInteger(1))
    return emitOpError() << "condition must be an i1 scalar or a tile of i1, "
                            "got "
                         << type;
  if (getMessage().empty())
    return emitOpError() << "message must not be empty";
  if (getMessage().contains('\0'))
    return emitOpError() << "message must not contain a NUL character";
  return success();
}

LogicalResult AtomicAddOp::verify() {
  if (failed(verifyWindow(*this, getDest().getType(), getOffsets().size(),
                          getWindow(), getValue().getType())))
    return failure();
  if (!getValue().getType().getElementType().isF32())
    return emitOpError() << "adds f32 tiles only, got "
                         << getValue().getType().getElementType();
  return verifyMask(*this, getMask(), getValue().getType());
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp, BroadcastOp, TransOp, ReduceOp
//===----------------------------------------------------------------------===//

static LogicalResult verifySameElementType(Operation *op, RankedTensorType in,
                                           RankedTensorType out) {
  if (in.getElementType() != out.getElementType())
    return op->emitOpError() << "result element type " << out.getElementType()
                             << " differs from the input's "
                             << in.getElementType();
  return success();
}

static LogicalResult verifyShape(Operation *op, ArrayRef<int64_t> expected,
                                 RankedTensorType result) {
  if (result.getShape() != expected)
    return op->emitOpError() << "result shape must be "
                             << shapeString(expected) << ", got "
                             << shapeString(result.getShape());
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifySameElementType(*this, in, getType())) ||
      failed(verifyAxis(*this, getAxis(), in.getRank() + 1, "axis")))
    return failure();
  SmallVector<int64_t> expected(in.getShape());
  expected.insert(expected.begin() + getAxis(), 1);
  return verifyShape(*this, expected, getType());
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (failed(verifySameElementType(*this, in, out)))
    return failure();
  if (in.getRank() != out.getRank())
    return emitOpError() << "cannot broadcast rank " << in.getRank()
                         << " to rank " << out.getRank()
                         << "; insert dims with tile.expand_dims first";
  for (auto [dim, from, to] : llvm::enumerate(in.getShape(), out.getShape()))
    if (from != to && from != 1)
      return emitOpError() << "dim " << dim << " of size " << from
                           << " cannot broadcast to " << to
                           << " (only size-1 dims broadcast)";
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult TransOp::verify() {
  RankedTensorType in = getInput().getType();
  if (in.getRank() != 2)
    return emitOpError() << "expects a 2-D tile, got rank " << in.getRank();
  if (failed(verifySameElementType(*this, in, getType())))
    return failure();
  return verifyShape(*this, {in.getDimSize(1), in.getDimSize(0)}, getType());
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<TransOp>())
    return inner.getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult ReduceOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifySameElementType(*this, in, getType())) ||
      failed(verifyAxis(*this, getAxis(), in.getRank(), "axis")))
    return failure();
  if (in.getElementType().isInteger(1))
    return emitOpError() << "cannot reduce a tile of i1";
  if (getLanePartial() && (getKind() != ReduceKind::Sum ||
                           !in.getElementType().isF32() ||
                           !getType().getEncoding()))
    return emitOpError() << "lane_partial needs a sum of f32 with a layout on "
                            "the result";
  if (getUniform() && (getKind() != ReduceKind::Max || getLanePartial()))
    return emitOpError() << "uniform needs a max (the value every element "
                            "along the axis shares), not lane_partial";
  SmallVector<int64_t> expected(in.getShape());
  expected.erase(expected.begin() + getAxis());
  return verifyShape(*this, expected, getType());
}

//===----------------------------------------------------------------------===//
// SumLanePartialsOp
//===----------------------------------------------------------------------===//

LogicalResult SumLanePartialsOp::verify() {
  if (!getType().getEncoding())
    return emitOpError() << "needs a tile with a layout (lane-partial form is "
                            "a layout-level notion)";
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifySameElementType(*this, in, getType())))
    return failure();
  return verifyShape(*this, in.getShape(), getType());
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

namespace {
/// convert(convert(x)) -> convert(x): the intermediate layout is never needed.
struct FoldConvertChain : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ConvertLayoutOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ConvertLayoutOp>(op, op.getType(),
                                                 inner.getInput());
    return success();
  }
};
} // namespace

void ConvertLayoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                  MLIRContext *context) {
  patterns.add<FoldConvertChain>(context);
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

LogicalResult MmaOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType();
  RankedTensorType acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError() << "expects 2-D operands, got ranks " << a.getRank()
                         << ", " << b.getRank() << " and " << acc.getRank();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "A and B must have the same element type, got "
                         << a.getElementType() << " and "
                         << b.getElementType();
  int64_t m = a.getDimSize(getTransposeA() ? 1 : 0);
  int64_t kA = a.getDimSize(getTransposeA() ? 0 : 1);
  int64_t kB = b.getDimSize(getTransposeB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransposeB() ? 0 : 1);
  if (kA != kB)
    return emitOpError() << "K dimension mismatch: A has K = " << kA
                         << " but B has K = " << kB;
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError() << "accumulator shape must be "
                         << shapeString({m, n}) << " (M x N), got "
                         << shapeString(acc.getShape());
  return success();
}

namespace {
/// mma(trans(x), ...) -> mma(x, ...) with the operand's transpose flag
/// flipped: the MMA reads either orientation, a transposed copy is waste.
struct FoldTransposeIntoMma : OpRewritePattern<MmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MmaOp op,
                                PatternRewriter &rewriter) const override {
    auto transA = op.getA().getDefiningOp<TransOp>();
    auto transB = op.getB().getDefiningOp<TransOp>();
    if (!transA && !transB)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (transA) {
        op.getAMutable().assign(transA.getInput());
        op.setTransposeA(!op.getTransposeA());
      }
      if (transB) {
        op.getBMutable().assign(transB.getInput());
        op.setTransposeB(!op.getTransposeB());
      }
    });
    return success();
  }
};
} // namespace

void MmaOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<FoldTransposeIntoMma>(context);
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

LogicalResult OnlineSoftmaxOp::verify() {
  RankedTensorType s = getScores().getType(), v = getValues().getType();
  if (auto scale = getScale()) {
    FloatAttr constant;
    if (matchPattern(scale, m_Constant(&constant)) &&
        !(constant.getValueAsDouble() > 0))
      return emitOpError() << "scale must be positive, got "
                           << constant.getValueAsDouble();
  }
  RankedTensorType m = getRunningMax().getType(), acc = getAcc().getType();
  if (s.getRank() != 2 || v.getRank() != 2 || acc.getRank() != 2 ||
      m.getRank() != 1)
    return emitOpError() << "expects 2-D scores, values and accumulator and "
                            "1-D running statistics";
  int64_t rows = s.getDimSize(0), keys = s.getDimSize(1);
  if (v.getDimSize(0) != keys)
    return emitOpError() << "values have " << v.getDimSize(0)
                         << " rows but the scores have " << keys
                         << " columns (one per key)";
  if (m.getDimSize(0) != rows)
    return emitOpError() << "running statistics have " << m.getDimSize(0)
                         << " rows but the scores have " << rows;
  if (acc.getShape() != ArrayRef<int64_t>{rows, v.getDimSize(1)})
    return emitOpError() << "accumulator shape must be "
                         << shapeString({rows, v.getDimSize(1)})
                         << " (rows x value width), got "
                         << shapeString(acc.getShape());
  return success();
}

LogicalResult OnlineSoftmaxFinalizeOp::verify() {
  RankedTensorType acc = getAcc().getType(), l = getRunningSum().getType();
  if (acc.getRank() != 2 || l.getRank() != 1)
    return emitOpError() << "expects a 2-D accumulator and a 1-D row sum";
  if (l.getDimSize(0) != acc.getDimSize(0))
    return emitOpError() << "row sum has " << l.getDimSize(0)
                         << " rows but the accumulator has "
                         << acc.getDimSize(0);
  return success();
}

#define GET_OP_CLASSES
#include "flashc/Dialect/Tile/TileOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared memory: LocalAllocOp, AsyncCopyOp, LocalLoadOp
//===----------------------------------------------------------------------===//

LogicalResult LocalAllocOp::verify() {
  if (auto offset = getOffset(); offset && *offset % 16 != 0)
    return emitOpError() << "offset must be a multiple of 16 bytes, got "
                         << *offset;
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  GlobalType global = getSource().getType();
  SharedType shared = getDest().getType();
  auto slotTile =
      RankedTensorType::get(shared.getSlotShape(), shared.getElementType());
  if (failed(verifyWindow(*this, global, getOffsets().size(), getWindow(),
                          slotTile, getGather(), getIndices().getTypes())))
    return failure();
  unsigned last = global.getRank() - 1;
  if (getWindow().back() != last || !global.isStaticDim(last) ||
      global.getShape()[last] != shared.getCols())
    return emitOpError() << "copies whole rows: the window's last dim must be "
                            "the global tensor's last dim, static and equal "
                            "to the buffer's "
                         << shared.getCols() << " columns";
  return success();
}

LogicalResult LocalLoadOp::verify() {
  SharedType shared = getSource().getType();
  RankedTensorType tile = getType();
  if (tile.getElementType() != shared.getElementType())
    return emitOpError() << "result element type " << tile.getElementType()
                         << " differs from the buffer's "
                         << shared.getElementType();
  if (failed(verifyShape(*this, shared.getSlotShape(), tile)))
    return failure();
  if (!tile.getEncoding())
    return emitOpError() << "result needs a layout (local_load exists after "
                            "layout assignment)";
  return success();
}

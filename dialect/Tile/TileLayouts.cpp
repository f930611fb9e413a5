//===- TileLayouts.cpp - layout encoding attributes -----------------------===//
//
// Thin wrappers: every question about a layout is answered by the layout
// functions in LayoutFunctions.h.
//
//===----------------------------------------------------------------------===//
#include "flashc/Dialect/Tile/TileDialect.h"

using namespace mlir;
using namespace flash::tile;
namespace L = flash::tile::layout;

/// Reports `error` (from a layout function's shape check) if non-empty.
static LogicalResult reportShapeError(function_ref<InFlightDiagnostic()> emitError,
                                      Attribute layout, const std::string &error) {
  if (error.empty())
    return success();
  return emitError() << "tile shape does not fit " << layout << ": " << error;
}

static LogicalResult verifyTriple(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef what, ArrayRef<int64_t> values) {
  if (values.size() != 3)
    return emitError() << what << " must list M, N and K, got " << values.size()
                       << " values";
  for (int64_t v : values)
    if (v < 1)
      return emitError() << what << " must be positive, got " << v;
  return success();
}

//===----------------------------------------------------------------------===//
// MmaLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> warps,
                                    ArrayRef<int64_t> values) {
  if (failed(verifyTriple(emitError, "warps", warps)) ||
      failed(verifyTriple(emitError, "values", values)))
    return failure();
  if (warps[2] != 1)
    return emitError() << "warps along K are not supported (they would need a "
                          "cross-warp reduction), got "
                       << warps[2];
  return success();
}

L::MmaParams MmaLayoutAttr::getParams() const {
  L::MmaParams params;
  for (int i = 0; i < 3; ++i) {
    params.warps[i] = getWarps()[i];
    params.values[i] = getValues()[i];
  }
  return params;
}

std::string MmaLayoutAttr::checkShape(ArrayRef<int64_t> shape) const {
  return L::checkMmaShape(getParams(), L::MmaRole::Acc, shape);
}
int64_t MmaLayoutAttr::getNumRegisters(ArrayRef<int64_t> shape) const {
  return L::mmaNumRegisters(getParams(), L::MmaRole::Acc, shape);
}
int64_t MmaLayoutAttr::getNumWarps() const { return getParams().numWarps(); }
L::Coord MmaLayoutAttr::getCoord(ArrayRef<int64_t> shape, int64_t warp,
                                 int64_t lane, int64_t reg) const {
  return layoutCoord<int64_t>(*this, shape, warp, lane, reg);
}
LogicalResult
MmaLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                              function_ref<InFlightDiagnostic()> emitError) const {
  return reportShapeError(emitError, *this, checkShape(shape));
}

//===----------------------------------------------------------------------===//
// DotOperandLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             unsigned operandIndex, MmaLayoutAttr parent,
                             bool transposed) {
  if (operandIndex > 1)
    return emitError() << "operand index must be 0 (A) or 1 (B), got "
                       << operandIndex;
  return success();
}


/// The operand's logical shape (K x N for B) of a tile in this layout.
static SmallVector<int64_t, 2> operandShape(DotOperandLayoutAttr attr,
                                            ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 2> logical(shape);
  if (attr.getTransposed() && logical.size() == 2)
    std::swap(logical[0], logical[1]);
  return logical;
}

std::string DotOperandLayoutAttr::checkShape(ArrayRef<int64_t> shape) const {
  return L::checkMmaShape(getParent().getParams(), operandRole(*this),
                          operandShape(*this, shape));
}
int64_t DotOperandLayoutAttr::getNumRegisters(ArrayRef<int64_t> shape) const {
  return L::mmaNumRegisters(getParent().getParams(), operandRole(*this),
                            operandShape(*this, shape));
}
int64_t DotOperandLayoutAttr::getNumWarps() const {
  return getParent().getNumWarps();
}
L::Coord DotOperandLayoutAttr::getCoord(ArrayRef<int64_t> shape, int64_t warp,
                                        int64_t lane, int64_t reg) const {
  return layoutCoord<int64_t>(*this, shape, warp, lane, reg);
}
LogicalResult DotOperandLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  // f8e4m3 only as wgmma's (AssignLayouts gives it no other MMA).
  if (!elementType.isF16() && !elementType.isBF16() &&
      !isa<Float8E4M3FNType>(elementType))
    return emitError()
           << "an MMA operand layout holds f16, bf16 or f8E4M3FN, got "
           << elementType;
  return reportShapeError(emitError, *this, checkShape(shape));
}

//===----------------------------------------------------------------------===//
// SliceLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      unsigned dim, Attribute parent) {
  if (!isa<MmaLayoutAttr, BlockedLayoutAttr>(parent))
    return emitError() << "a slice's parent must be #tile.mma or #tile.blocked, "
                          "got "
                       << parent;
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(parent)) {
    if (dim >= blocked.getOrder().size())
      return emitError() << "slice dim " << dim
                         << " is out of range for a blocked layout of rank "
                         << blocked.getOrder().size();
    return success();
  }
  if (dim > 1)
    return emitError() << "a slice of an MMA layout removes dim 0 or 1, got "
                       << dim;
  return success();
}

std::string SliceLayoutAttr::checkShape(ArrayRef<int64_t> shape) const {
  if (auto mma = dyn_cast<MmaLayoutAttr>(getParent()))
    return L::checkMmaSliceShape(mma.getParams(), getDim(), shape);
  auto blocked = cast<BlockedLayoutAttr>(getParent());
  SmallVector<int64_t, 2> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  return L::checkBlockedShape(
      L::blockedSliceParent(blocked.getParams(), getDim()), parentShape);
}
int64_t SliceLayoutAttr::getNumRegisters(ArrayRef<int64_t> shape) const {
  if (auto mma = dyn_cast<MmaLayoutAttr>(getParent()))
    return L::mmaSliceNumRegisters(mma.getParams(), getDim(), shape);
  auto blocked = cast<BlockedLayoutAttr>(getParent());
  SmallVector<int64_t, 2> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  return L::blockedNumRegisters(
      L::blockedSliceParent(blocked.getParams(), getDim()), parentShape);
}
int64_t SliceLayoutAttr::getNumWarps() const {
  return cast<LayoutAttrInterface>(getParent()).getNumWarps();
}
L::Coord SliceLayoutAttr::getCoord(ArrayRef<int64_t> shape, int64_t warp,
                                   int64_t lane, int64_t reg) const {
  return layoutCoord<int64_t>(*this, shape, warp, lane, reg);
}
LogicalResult
SliceLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                function_ref<InFlightDiagnostic()> emitError) const {
  return reportShapeError(emitError, *this, checkShape(shape));
}

//===----------------------------------------------------------------------===//
// BlockedLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<int64_t> sizePerThread,
                          ArrayRef<int64_t> threadsPerWarp,
                          ArrayRef<int64_t> warpsPerCTA, ArrayRef<int64_t> order) {
  L::BlockedParams params{
      llvm::to_vector<2>(sizePerThread), llvm::to_vector<2>(threadsPerWarp),
      llvm::to_vector<2>(warpsPerCTA), llvm::to_vector<2>(order)};
  std::string error = L::checkBlocked(params);
  if (!error.empty())
    return emitError() << error;
  return success();
}

L::BlockedParams BlockedLayoutAttr::getParams() const {
  return {llvm::to_vector<2>(getSizePerThread()),
          llvm::to_vector<2>(getThreadsPerWarp()),
          llvm::to_vector<2>(getWarpsPerCTA()), llvm::to_vector<2>(getOrder())};
}

std::string BlockedLayoutAttr::checkShape(ArrayRef<int64_t> shape) const {
  return L::checkBlockedShape(getParams(), shape);
}
int64_t BlockedLayoutAttr::getNumRegisters(ArrayRef<int64_t> shape) const {
  return L::blockedNumRegisters(getParams(), shape);
}
int64_t BlockedLayoutAttr::getNumWarps() const { return getParams().numWarps(); }
L::Coord BlockedLayoutAttr::getCoord(ArrayRef<int64_t> shape, int64_t warp,
                                     int64_t lane, int64_t reg) const {
  return layoutCoord<int64_t>(*this, shape, warp, lane, reg);
}
LogicalResult BlockedLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  return reportShapeError(emitError, *this, checkShape(shape));
}

//===----------------------------------------------------------------------===//
// Padded shapes
//===----------------------------------------------------------------------===//

L::Shape flash::tile::layoutPaddedShape(Attribute layout,
                                        ArrayRef<int64_t> shape) {
  if (auto mma = dyn_cast<MmaLayoutAttr>(layout))
    return L::mmaPaddedShape(mma.getParams(), L::MmaRole::Acc, shape);
  if (auto operand = dyn_cast<DotOperandLayoutAttr>(layout)) {
    L::Shape padded =
        L::mmaPaddedShape(operand.getParent().getParams(), operandRole(operand),
                          operandShape(operand, shape));
    if (operand.getTransposed())
      std::swap(padded[0], padded[1]);
    return padded;
  }
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout)) {
    if (auto mma = dyn_cast<MmaLayoutAttr>(slice.getParent()))
      return L::mmaSlicePaddedShape(mma.getParams(), slice.getDim(), shape);
    SmallVector<int64_t, 2> parentShape(shape);
    parentShape.insert(parentShape.begin() + slice.getDim(), 1);
    L::Shape padded = L::blockedPaddedShape(
        L::blockedSliceParent(
            cast<BlockedLayoutAttr>(slice.getParent()).getParams(),
            slice.getDim()),
        parentShape);
    padded.erase(padded.begin() + slice.getDim());
    return padded;
  }
  return L::blockedPaddedShape(cast<BlockedLayoutAttr>(layout).getParams(),
                               shape);
}

//===- WindowOps.cpp - tile.load, tile.store, tile.atomic_add -------------===//
//
// A window maps each tile dimension to a dimension of a global tensor at
// given offsets; elements outside the global read the pad value and are not
// written (nor are those a store's or an atomic's mask turns off).
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include <algorithm>

namespace flash::interp {

namespace {
/// The global strides and base of a window, and per tile dimension its
/// global stride, offset and size along the global dimension it maps to.
struct WindowGeometry {
  int64_t base = 0;
  bool baseInBounds = true; ///< the offsets of unwindowed dims are in range
  llvm::SmallVector<int64_t, 4> stride, offset, size;

  WindowGeometry(const std::vector<int64_t> &gshape,
                 llvm::ArrayRef<int64_t> offsets,
                 llvm::ArrayRef<int64_t> window) {
    size_t grank = gshape.size();
    llvm::SmallVector<int64_t, 4> gstride(grank, 1);
    for (int d = static_cast<int>(grank) - 2; d >= 0; --d)
      gstride[d] = gstride[d + 1] * gshape[d + 1];
    llvm::SmallVector<bool, 4> inWindow(grank, false);
    for (int64_t w : window)
      inWindow[w] = true;
    for (size_t d = 0; d < grank; ++d) {
      if (!inWindow[d] && (offsets[d] < 0 || offsets[d] >= gshape[d]))
        baseInBounds = false;
      base += offsets[d] * gstride[d];
    }
    for (int64_t w : window) {
      stride.push_back(gstride[w]);
      offset.push_back(offsets[w]);
      size.push_back(gshape[w]);
    }
  }
};
} // namespace

/// Calls f(tileLinearIndex, globalLinearIndex or -1) for every element of a
/// tile window, row by row with the bounds of the innermost dim hoisted.
template <typename F>
static void forEachWindowElement(llvm::ArrayRef<int64_t> tshape,
                                 const std::vector<int64_t> &gshape,
                                 llvm::ArrayRef<int64_t> offsets,
                                 llvm::ArrayRef<int64_t> window, F f) {
  size_t trank = tshape.size();
  int64_t n = 1;
  for (int64_t d : tshape)
    n *= d;
  if (n == 0)
    return;
  WindowGeometry g(gshape, offsets, window);
  if (!g.baseInBounds) {
    for (int64_t t = 0; t < n; ++t)
      f(t, int64_t(-1));
    return;
  }
  if (trank == 0) {
    f(0, g.base);
    return;
  }
  const size_t last = trank - 1;
  const int64_t inner = tshape[last];
  const int64_t lo = std::max<int64_t>(0, -g.offset[last]);
  const int64_t hi = std::min<int64_t>(inner, g.size[last] - g.offset[last]);
  llvm::SmallVector<int64_t, 4> idx(trank, 0);
  int64_t t = 0;
  while (true) {
    bool rowOk = true;
    int64_t rowBase = g.base;
    for (size_t i = 0; i < last; ++i) {
      int64_t gi = g.offset[i] + idx[i];
      if (gi < 0 || gi >= g.size[i])
        rowOk = false;
      rowBase += idx[i] * g.stride[i];
    }
    for (int64_t j = 0; j < inner; ++j, ++t) {
      bool ok = rowOk && j >= lo && j < hi;
      f(t, ok ? rowBase + j * g.stride[last] : int64_t(-1));
    }
    // Advance the outer odometer.
    int i = static_cast<int>(last) - 1;
    for (; i >= 0; --i) {
      if (++idx[i] < tshape[i])
        break;
      idx[i] = 0;
    }
    if (i < 0)
      break;
  }
}

void Executor::readOffsets(const Inst &inst, size_t first, size_t count,
                           llvm::SmallVectorImpl<int64_t> &offsets) {
  offsets.clear();
  for (size_t i = 0; i < count; ++i) {
    const RtValue &v = val(inst.in[first + i]);
    offsets.push_back(
        sem::asSigned(static_cast<int64_t>(v.data[0]), v.elem.width));
  }
}

bool Executor::execLoad(const Inst &inst) {
  auto load = mlir::cast<tile::LoadOp>(inst.op);
  const RtValue &src = val(inst.in[0]);
  if (!src.global)
    return internalError(inst, "load from a non-global value");
  GlobalBuffer &g = *src.global;
  llvm::ArrayRef<int64_t> gather = load.getGather();
  llvm::SmallVector<int64_t, 4> offsets;
  if (inst.in.size() - 1 != g.shape.size() + gather.size())
    return internalError(inst, "offset count does not match the rank");
  readOffsets(inst, 1, g.shape.size(), offsets);
  double pad = 0;
  if (!scalarAttrToDouble(load.getPad(), pad))
    return fail(ErrorKind::Unsupported,
                "unsupported pad attribute in " + describeOp(inst.op));
  RtValue &r = prep(inst, 0);
  pad = roundTo(r.elem, pad);
  llvm::ArrayRef<int64_t> window = load.getWindow();
  if (window.size() + !gather.empty() != r.shape.size())
    return internalError(inst, "window rank does not match the tile");
  double *pr = r.data.data();
  const double *pg = g.data.data();
  bool sameType = r.elem == g.elem;
  ElemType rt = r.elem;
  auto read = [&](double *out, llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<int64_t> at) {
    forEachWindowElement(shape, g.shape, at, window,
                         [&](int64_t t, int64_t gi) {
                           if (gi < 0)
                             out[t] = pad;
                           else
                             out[t] = sameType ? pg[gi] : roundTo(rt, pg[gi]);
                         });
  };
  if (gather.empty()) {
    read(pr, r.shape, offsets);
    return true;
  }
  // Row by row: the gathered dims add that row's indices to the offsets.
  llvm::ArrayRef<int64_t> rowShape = llvm::ArrayRef(r.shape).drop_front();
  int64_t rowElements = 1;
  for (int64_t d : rowShape)
    rowElements *= d;
  llvm::SmallVector<int64_t, 4> at;
  for (int64_t row = 0; row < r.shape[0]; ++row) {
    at.assign(offsets.begin(), offsets.end());
    for (auto [j, dim] : llvm::enumerate(gather)) {
      const RtValue &index = val(inst.in[1 + g.shape.size() + j]);
      at[dim] += sem::asSigned(static_cast<int64_t>(index.data[row]),
                               index.elem.width);
    }
    read(pr + row * rowElements, rowShape, at);
  }
  return true;
}

bool Executor::execLoadScalar(const Inst &inst) {
  auto load = mlir::cast<tile::LoadScalarOp>(inst.op);
  const RtValue &src = val(inst.in[0]);
  if (!src.global)
    return internalError(inst, "load from a non-global value");
  GlobalBuffer &g = *src.global;
  if (inst.in.size() - 1 != g.shape.size())
    return internalError(inst, "index count does not match the rank");
  llvm::SmallVector<int64_t, 4> indices;
  readOffsets(inst, 1, g.shape.size(), indices);
  double pad = 0;
  if (!scalarAttrToDouble(load.getPad(), pad))
    return fail(ErrorKind::Unsupported,
                "unsupported pad attribute in " + describeOp(inst.op));
  RtValue &r = prep(inst, 0);
  int64_t linear = 0;
  for (size_t d = 0; d < g.shape.size(); ++d) {
    if (indices[d] < 0 || indices[d] >= g.shape[d]) {
      r.data[0] = roundTo(r.elem, pad);
      return true;
    }
    linear = linear * g.shape[d] + indices[d];
  }
  r.data[0] = r.elem == g.elem ? g.data[linear] : roundTo(r.elem, g.data[linear]);
  return true;
}

/// tile.store and tile.atomic_add: element t of the value goes to its
/// window element unless that is out of bounds or the mask is false there;
/// `accumulate` adds it (rounded to the tensor's type) instead of writing.
/// Additions happen one element at a time in row-major tile order, and
/// program instances run one after another, so an atomic_add is exact
/// program order.
bool Executor::writeWindow(const Inst &inst, llvm::ArrayRef<int64_t> window,
                           bool hasMask, bool accumulate) {
  const RtValue &v = val(inst.in[0]);
  const RtValue &dst = val(inst.in[1]);
  if (!dst.global)
    return internalError(inst, "store to a non-global value");
  GlobalBuffer &g = *dst.global;
  if (inst.in.size() - 2 - hasMask != g.shape.size())
    return internalError(inst, "offset count does not match the rank");
  llvm::SmallVector<int64_t, 4> offsets;
  readOffsets(inst, 2, g.shape.size(), offsets);
  if (window.size() != v.shape.size())
    return internalError(inst, "window rank does not match the tile");
  const double *pm = hasMask ? val(inst.in.back()).data.data() : nullptr;
  if (pm && val(inst.in.back()).data.size() != v.data.size())
    return internalError(inst, "the mask's size differs from the value's");
  const double *pv = v.data.data();
  double *pg = g.data.data();
  bool sameType = v.elem == g.elem;
  ElemType gt = g.elem;
  forEachWindowElement(v.shape, g.shape, offsets, window,
                       [&](int64_t t, int64_t gi) {
                         if (gi < 0 || (pm && pm[t] == 0))
                           return;
                         if (accumulate)
                           pg[gi] = roundTo(gt, pg[gi] + pv[t]);
                         else
                           pg[gi] = sameType ? pv[t] : roundTo(gt, pv[t]);
                       });
  return true;
}

bool Executor::execStore(const Inst &inst) {
  auto store = mlir::cast<tile::StoreOp>(inst.op);
  return writeWindow(inst, store.getWindow(), bool(store.getMask()),
                     /*accumulate=*/false);
}

bool Executor::execAtomicAdd(const Inst &inst) {
  auto add = mlir::cast<tile::AtomicAddOp>(inst.op);
  return writeWindow(inst, add.getWindow(), bool(add.getMask()),
                     /*accumulate=*/true);
}

} // namespace flash::interp

//===- TileOps.cpp - Grid coordinates, tile construction and shape ops ----===//
//
// tile.program_id / num_programs / dim, splat, iota, broadcast, trans and
// reduce. Loads and stores are in WindowOps.cpp; mma and online softmax in
// AttentionOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include <algorithm>
#include <limits>

namespace flash::interp {

bool Executor::execProgramCoordinate(const Inst &inst) {
  bool isId = inst.opc == Opc::ProgramId;
  unsigned axis = isId ? mlir::cast<tile::ProgramIdOp>(inst.op).getAxis()
                       : mlir::cast<tile::NumProgramsOp>(inst.op).getAxis();
  if (!ctx->hasProgram)
    return runtimeError(inst, "program coordinates are not available "
                              "while evaluating the grid");
  if (axis > 2)
    return internalError(inst, "grid axis out of range");
  RtValue &r = prep(inst, 0);
  int64_t v = isId ? ctx->programId[axis] : ctx->numPrograms[axis];
  r.data[0] = static_cast<double>(sem::wrapInt(v, r.elem.width));
  return true;
}

/// The first false element (row-major) fails the run with the message and
/// the element's index; the location is the op's, and the kernel runner adds
/// the program id.
bool Executor::execDeviceAssert(const Inst &inst) {
  auto op = mlir::cast<tile::DeviceAssertOp>(inst.op);
  const RtValue &c = val(inst.in[0]);
  size_t bad = 0;
  while (bad < c.data.size() && c.data[bad] != 0)
    ++bad;
  if (bad == c.data.size())
    return true;
  std::string what = "device assertion failed: " + op.getMessage().str();
  if (c.kind == RtValue::Kind::Tensor) {
    llvm::SmallVector<int64_t, 4> index(c.shape.size());
    size_t rest = bad;
    for (size_t d = c.shape.size(); d-- > 0;) {
      index[d] = rest % c.shape[d];
      rest /= c.shape[d];
    }
    what += " (element [";
    for (size_t d = 0; d < index.size(); ++d)
      what += (d ? ", " : "") + std::to_string(index[d]);
    what += "] is false)";
  }
  return fail(ErrorKind::Runtime, what);
}

bool Executor::execDim(const Inst &inst) {
  auto dim = mlir::cast<tile::DimOp>(inst.op);
  const RtValue &src = val(inst.in[0]);
  if (!src.global || dim.getIndex() >= src.global->shape.size())
    return internalError(inst, "bad tile.dim operand");
  RtValue &r = prep(inst, 0);
  r.data[0] = static_cast<double>(
      sem::wrapInt(src.global->shape[dim.getIndex()], r.elem.width));
  return true;
}

bool Executor::execSplat(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  double v = roundTo(r.elem, a.data[0]);
  std::fill(r.data.begin(), r.data.end(), v);
  return true;
}

bool Executor::execIota(const Inst &inst) {
  RtValue &r = prep(inst, 0);
  for (size_t i = 0; i < r.data.size(); ++i)
    r.data[i] = roundTo(r.elem, static_cast<double>(i));
  return true;
}

bool Executor::execBroadcast(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  size_t rank = r.shape.size();
  if (a.shape.size() != rank)
    return internalError(inst, "rank mismatch");
  // Source strides, 0 along broadcast (size-1) dims.
  llvm::SmallVector<int64_t, 4> ist(rank, 0);
  int64_t s = 1;
  for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
    ist[d] = a.shape[d] == 1 ? 0 : s;
    s *= a.shape[d];
  }
  size_t n = r.data.size();
  if (n == 0)
    return true;
  if (rank == 0) {
    r.data[0] = a.data[0];
    return true;
  }
  llvm::SmallVector<int64_t, 4> idx(rank, 0);
  int64_t src = 0;
  for (size_t t = 0; t < n; ++t) {
    r.data[t] = a.data[src];
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      src += ist[d];
      if (++idx[d] < r.shape[d])
        break;
      src -= ist[d] * idx[d];
      idx[d] = 0;
    }
  }
  return true;
}

bool Executor::execTrans(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  if (a.shape.size() != 2 || r.shape.size() != 2)
    return internalError(inst, "tile.trans needs 2-D tiles");
  int64_t rows = a.shape[0], cols = a.shape[1];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      r.data[j * rows + i] = a.data[i * cols + j];
  return true;
}

/// Max (NaN wins; -inf when empty) or sum of `len` floats `stride` apart,
/// rounded to `t`.
static double reduceFloats(const double *p, int64_t len, int64_t stride,
                           bool isMax, ElemType t) {
  double acc;
  if (isMax) {
    acc = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < len; ++k) {
      double x = p[k * stride];
      if (x != x)
        return roundTo(t, x);
      if (x > acc)
        acc = x;
    }
  } else {
    acc = 0;
    for (int64_t k = 0; k < len; ++k)
      acc += p[k * stride];
  }
  return roundTo(t, acc);
}

/// Signed max (the type's minimum when empty) or wrapping sum of `len`
/// stored integers `stride` apart.
static double reduceInts(const double *p, int64_t len, int64_t stride,
                         bool isMax, ElemType t) {
  int64_t acc;
  if (isMax) {
    acc = std::numeric_limits<int64_t>::min();
    for (int64_t k = 0; k < len; ++k) {
      int64_t x = static_cast<int64_t>(p[k * stride]);
      if (t.width != 1)
        x = sem::asSigned(x, t.width);
      acc = std::max(acc, x);
    }
    if (len == 0)
      acc = t.width == 1
                ? 0
                : -(int64_t(1) << (t.width - 1 < 63 ? t.width - 1 : 62));
  } else {
    uint64_t u = 0;
    for (int64_t k = 0; k < len; ++k)
      u += static_cast<uint64_t>(static_cast<int64_t>(p[k * stride]));
    acc = static_cast<int64_t>(u);
  }
  return static_cast<double>(sem::wrapInt(acc, t.width));
}

bool Executor::execReduce(const Inst &inst) {
  auto red = mlir::cast<tile::ReduceOp>(inst.op);
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  size_t axis = red.getAxis();
  if (axis >= a.shape.size())
    return internalError(inst, "reduction axis out of range");
  int64_t outer = 1, len = a.shape[axis], inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= a.shape[d];
  for (size_t d = axis + 1; d < a.shape.size(); ++d)
    inner *= a.shape[d];
  bool isMax = red.getKind() == tile::ReduceKind::Max;
  ElemType t = r.elem;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double *p = a.data.data() + o * len * inner + i;
      r.data[o * inner + i] = t.isFloat()
                                  ? reduceFloats(p, len, inner, isMax, t)
                                  : reduceInts(p, len, inner, isMax, t);
    }
  }
  return true;
}

} // namespace flash::interp

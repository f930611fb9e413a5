//===- TensorOps.cpp - The tensor ops canonicalization may leave ----------===//
//
// tensor.extract / from_elements / empty and the reshapes (with
// tile.expand_dims, which is one too). tensor.splat shares tile.splat's
// code in TileOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include <algorithm>

namespace flash::interp {

bool Executor::execTensorExtract(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  if (inst.in.size() - 1 != a.shape.size())
    return internalError(inst, "index count does not match the rank");
  int64_t linear = 0;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    const RtValue &iv = val(inst.in[d + 1]);
    int64_t i = sem::asSigned(static_cast<int64_t>(iv.data[0]), iv.elem.width);
    if (i < 0 || i >= a.shape[d])
      return runtimeError(inst, "tensor.extract index " + std::to_string(i) +
                                    " out of bounds in dim " +
                                    std::to_string(d));
    linear = linear * a.shape[d] + i;
  }
  r.data[0] = a.data[linear];
  return true;
}

bool Executor::execTensorFromElements(const Inst &inst) {
  RtValue &r = prep(inst, 0);
  if (inst.in.size() != r.data.size())
    return internalError(inst, "element count mismatch");
  for (size_t i = 0; i < inst.in.size(); ++i)
    r.data[i] = roundTo(r.elem, val(inst.in[i]).data[0]);
  return true;
}

bool Executor::execTensorEmpty(const Inst &inst) {
  RtValue &r = prep(inst, 0);
  std::fill(r.data.begin(), r.data.end(), 0.0);
  return true;
}

bool Executor::execReshape(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  if (a.data.size() != r.data.size())
    return internalError(inst, "size mismatch");
  std::copy(a.data.begin(), a.data.end(), r.data.begin());
  return true;
}

} // namespace flash::interp

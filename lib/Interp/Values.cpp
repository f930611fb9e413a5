//===- Values.cpp - The interpreter's runtime values ----------------------===//

#include "flashc/Interp/Interpreter.h"

namespace flash::interp {

int64_t GlobalBuffer::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

RtValue RtValue::scalar(ElemType elem, double v) {
  RtValue r;
  r.kind = Kind::Scalar;
  r.elem = elem;
  r.data.assign(1, roundTo(elem, v));
  return r;
}

RtValue RtValue::tensor(ElemType elem, std::vector<int64_t> shape,
                        std::vector<double> data) {
  RtValue r;
  r.kind = Kind::Tensor;
  r.elem = elem;
  r.shape = std::move(shape);
  r.data = std::move(data);
  return r;
}

RtValue RtValue::globalRef(GlobalBuffer *buffer) {
  RtValue r;
  r.kind = Kind::Global;
  r.elem = buffer->elem;
  r.global = buffer;
  return r;
}

} // namespace flash::interp

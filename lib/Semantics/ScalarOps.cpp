//===- ScalarOps.cpp - Casts between the executors' scalar types ----------===//
//
// The out-of-line parts of the Cast opcodes: float to int saturation, bit
// patterns and evalCast. The rest of the scalar semantics is inline in
// ScalarOps.h because executors call it in their element loops.
//
//===----------------------------------------------------------------------===//

#include "flashc/Semantics/ScalarOps.h"

#include <cmath>
#include <cstring>

namespace flash::sem {

int64_t floatToInt(double v, bool isSigned, unsigned w) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (isSigned) {
    if (w >= 64)
      return saturateToInt64(v);
    // [-2^(w-1), 2^(w-1) - 1]; for i1 that is [-1, 0].
    int64_t lo = -(int64_t(1) << (w - 1)), hi = (int64_t(1) << (w - 1)) - 1;
    if (v <= static_cast<double>(lo))
      return wrapInt(lo, w);
    if (v >= static_cast<double>(hi))
      return wrapInt(hi, w);
    return wrapInt(static_cast<int64_t>(v), w);
  }
  if (v <= 0)
    return 0;
  if (v >= std::ldexp(1.0, static_cast<int>(w))) // 2^w, exact as a double
    return wrapInt(-1, w);                       // all ones
  return wrapInt(static_cast<int64_t>(static_cast<uint64_t>(v)), w);
}

uint64_t toBits(ScalarType t, ScalarValue v) {
  switch (t.kind) {
  case ScalarType::F16:
    return doubleToHalfBits(v.f);
  case ScalarType::BF16:
    return doubleToBF16Bits(v.f);
  case ScalarType::F8E4M3:
    return doubleToE4M3Bits(v.f);
  case ScalarType::F32: {
    float f = static_cast<float>(v.f);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
  }
  case ScalarType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &v.f, sizeof bits);
    return bits;
  }
  case ScalarType::Int:
    return asUnsigned(v.i, t.width);
  }
  return 0;
}

ScalarValue fromBits(ScalarType t, uint64_t bits) {
  switch (t.kind) {
  case ScalarType::F16:
    return ScalarValue::ofFloat(halfBitsToDouble(static_cast<uint16_t>(bits)));
  case ScalarType::BF16:
    return ScalarValue::ofFloat(bf16BitsToDouble(static_cast<uint16_t>(bits)));
  case ScalarType::F8E4M3:
    return ScalarValue::ofFloat(e4m3BitsToDouble(static_cast<uint8_t>(bits)));
  case ScalarType::F32: {
    uint32_t low = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &low, sizeof f);
    return ScalarValue::ofFloat(f);
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return ScalarValue::ofFloat(d);
  }
  case ScalarType::Int:
    return ScalarValue::ofInt(wrapInt(static_cast<int64_t>(bits), t.width));
  }
  return ScalarValue::ofInt(0);
}

ScalarValue evalCast(ArithMathOpcode opc, ScalarType src, ScalarType dst,
                     ScalarValue v) {
  return visitCast(opc, [&](auto f) { return f(src, dst, v); });
}

} // namespace flash::sem

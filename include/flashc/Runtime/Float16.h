//===- Float16.h - Bit-exact IEEE half and bfloat16 conversions -*- C++ -*-===//
//
// Conversions between double and the 16-bit float formats used by tiles.
// double -> f16/bf16 rounds directly (never through float) to nearest, ties
// to even, with gradual underflow to subnormals, overflow to infinity and NaN
// preserved (quieted, sign and top payload bits kept). The reverse direction
// is exact. Header-only, C++17, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_RUNTIME_FLOAT16_H
#define FLASH_RUNTIME_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace flash {
namespace fp16detail {

inline uint64_t doubleBits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
inline double bitsToDouble(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

/// Rounds `d` to the binary format with `E` exponent bits and `M` explicit
/// mantissa bits (IEEE layout, 1 + E + M <= 16 bits) and returns its bits.
template <unsigned E, unsigned M> inline uint16_t fromDouble(double d) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr int emin = 1 - bias;
  constexpr uint32_t expMax = (1u << E) - 1; // all-ones exponent field
  const uint64_t bits = doubleBits(d);
  const uint16_t sign = static_cast<uint16_t>((bits >> 63) << (E + M));
  const int dexp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t dman = bits & ((uint64_t(1) << 52) - 1);

  if (dexp == 0x7ff) {
    if (dman == 0) // infinity
      return sign | static_cast<uint16_t>(expMax << M);
    // NaN: keep the top payload bits, force the quiet bit.
    uint16_t payload = static_cast<uint16_t>(dman >> (52 - M));
    payload |= static_cast<uint16_t>(1u << (M - 1));
    return sign | static_cast<uint16_t>(expMax << M) | payload;
  }
  if (dexp == 0) // zero or double subnormal (far below any 16-bit subnormal)
    return sign;

  const int e = dexp - 1023;                      // |d| in [2^e, 2^(e+1))
  const uint64_t sig = dman | (uint64_t(1) << 52); // d = sig * 2^(e-52)
  const int te = e < emin ? emin : e;              // exponent of the target ulp
  const int shift = 52 - static_cast<int>(M) + (te - e); // bits dropped, > 0
  if (shift > 54) // below half of the smallest subnormal: rounds to zero
    return sign;
  uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  const uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  // Now |result| = q * 2^(te - M).
  int resExp = te;
  if (q >= (uint64_t(1) << (M + 1))) { // carry out of the mantissa
    q >>= 1;
    ++resExp;
  }
  if (q < (uint64_t(1) << M)) // subnormal (only possible when te == emin)
    return sign | static_cast<uint16_t>(q);
  const int field = resExp + bias;
  if (field >= static_cast<int>(expMax)) // overflow
    return sign | static_cast<uint16_t>(expMax << M);
  return sign | static_cast<uint16_t>((uint32_t(field) << M) |
                                      (q - (uint64_t(1) << M)));
}

/// Exact widening of the E/M format to double.
template <unsigned E, unsigned M> inline double toDouble(uint16_t h) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t expMax = (1u << E) - 1;
  const uint64_t sign = uint64_t(h >> (E + M)) & 1;
  const uint32_t field = (h >> M) & expMax;
  const uint64_t man = h & ((1u << M) - 1);
  uint64_t out = sign << 63;
  if (field == expMax) {
    out |= uint64_t(0x7ff) << 52;
    out |= man << (52 - M); // NaN payload (nonzero) or infinity
    return bitsToDouble(out);
  }
  if (field == 0) {
    if (man == 0)
      return bitsToDouble(out);
    // Subnormal: man * 2^(1 - bias - M), exactly representable in double.
    double v = static_cast<double>(man);
    int exp2 = 1 - bias - static_cast<int>(M);
    // Multiply by 2^exp2 exactly (exp2 >= -133, a normal double range).
    v *= bitsToDouble(uint64_t(1023 + exp2) << 52);
    return sign ? -v : v;
  }
  out |= uint64_t(static_cast<int>(field) - bias + 1023) << 52;
  out |= man << (52 - M);
  return bitsToDouble(out);
}

} // namespace fp16detail

/// IEEE binary16 bits of `d`, rounded to nearest even.
inline uint16_t doubleToHalfBits(double d) {
  return fp16detail::fromDouble<5, 10>(d);
}
/// The exact value of IEEE binary16 bits.
inline double halfBitsToDouble(uint16_t h) {
  return fp16detail::toDouble<5, 10>(h);
}
/// bfloat16 bits of `d`, rounded to nearest even.
inline uint16_t doubleToBF16Bits(double d) {
  return fp16detail::fromDouble<8, 7>(d);
}
/// The exact value of bfloat16 bits.
inline double bf16BitsToDouble(uint16_t h) {
  return fp16detail::toDouble<8, 7>(h);
}
/// `d` rounded to the nearest binary16 value (as a double).
inline double roundToHalf(double d) {
  return halfBitsToDouble(doubleToHalfBits(d));
}
/// `d` rounded to the nearest bfloat16 value (as a double).
inline double roundToBF16(double d) {
  return bf16BitsToDouble(doubleToBF16Bits(d));
}

} // namespace flash

#endif // FLASH_RUNTIME_FLOAT16_H

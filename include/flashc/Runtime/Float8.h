//===- Float8.h - Bit-exact float8 e4m3 (e4m3fn) conversions ----*- C++ -*-===//
//
// The OCP float8 e4m3 format as NVIDIA's e4m3 and ml_dtypes' float8_e4m3fn
// define it: 1 sign, 4 exponent (bias 7) and 3 mantissa bits, subnormals,
// no infinities, one NaN per sign (S.1111.111), largest finite 448.
//
// double -> e4m3 is `cvt.rn.satfinite.e4m3x2.f32`: round to nearest, ties to
// even, and anything whose magnitude is at least 448 (infinities included)
// saturates to +-448; NaN gives NaN with the input's sign (as float8_e4m3fn
// does). f32 inputs are exact as doubles, so one routine serves both. The
// reverse direction is exact. Header-only, C++17, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_RUNTIME_FLOAT8_H
#define FLASH_RUNTIME_FLOAT8_H

#include <cmath>
#include <cstdint>

namespace flash {

/// Largest finite e4m3 magnitude (S.1111.110 = 1.75 * 2^8).
constexpr double kE4M3Max = 448.0;

/// The exact value of e4m3 bits (NaN for S.1111.111).
inline double e4m3BitsToDouble(uint8_t b) {
  const bool neg = (b & 0x80) != 0;
  const unsigned field = (b >> 3) & 0xF;
  const unsigned man = b & 0x7;
  double v;
  if (field == 0xF && man == 0x7)
    v = std::nan("");
  else if (field == 0) // subnormal: man * 2^-9
    v = std::ldexp(static_cast<double>(man), -9);
  else
    v = std::ldexp(static_cast<double>(8 + man), static_cast<int>(field) - 10);
  return neg ? -v : v;
}

/// e4m3 bits of `d`: round to nearest even, saturating to +-448 (satfinite).
inline uint8_t doubleToE4M3Bits(double d) {
  const uint8_t sign = std::signbit(d) ? 0x80 : 0x00;
  if (std::isnan(d))
    return sign | 0x7F;
  const double a = std::fabs(d);
  if (a >= kE4M3Max)
    return sign | 0x7E;
  if (a == 0)
    return sign;
  int e; // a = f * 2^e, f in [0.5, 1): the leading bit has weight 2^(e-1)
  std::frexp(a, &e);
  const int lead = e - 1 < -6 ? -6 : e - 1; // subnormals share 2^-6's ulp
  const double q = std::ldexp(a, 3 - lead);  // a in ulps, exact
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) == 1.0))
    r += 1.0;
  const double v = std::ldexp(r, lead - 3); // <= 448: a < 448 rounds to <= 448
  if (v < std::ldexp(1.0, -6))              // subnormal (or 2^-6 itself: 0x08)
    return sign | static_cast<uint8_t>(std::ldexp(v, 9));
  std::frexp(v, &e);
  const int field = e - 1 + 7;
  const unsigned man = static_cast<unsigned>(std::ldexp(v, 4 - e)) - 8;
  return sign | static_cast<uint8_t>((field << 3) | man);
}

/// `d` rounded to the nearest e4m3 value (as a double), saturating.
inline double roundToE4M3(double d) {
  return e4m3BitsToDouble(doubleToE4M3Bits(d));
}

} // namespace flash

#endif // FLASH_RUNTIME_FLOAT8_H

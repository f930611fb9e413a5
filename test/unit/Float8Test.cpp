//===- Float8Test.cpp - bit-exact float8 e4m3 conversions -----------------===//
//
// flashc/Runtime/Float8.h against the format's definition, computed here a
// different way: the 256 codes decoded from sign/exponent/mantissa fields,
// and rounding as a brute-force search for the nearest finite value (ties to
// the even code), saturating at +-448 as cvt.rn.satfinite does.
//
//===----------------------------------------------------------------------===//

#include "flashc/Runtime/Float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace flash;

namespace {

/// Code `c` by the definition: (-1)^s * 2^(E-7) * (1 + M/8) for E > 0,
/// (-1)^s * 2^-6 * (M/8) for E == 0, NaN for E == 15 and M == 7.
double byDefinition(unsigned c) {
  unsigned s = c >> 7, E = (c >> 3) & 15, M = c & 7;
  if (E == 15 && M == 7)
    return std::numeric_limits<double>::quiet_NaN();
  double mag = E == 0 ? std::pow(2.0, -6) * (M / 8.0)
                      : std::pow(2.0, double(E) - 7) * (1.0 + M / 8.0);
  return s ? -mag : mag;
}

/// The code the satfinite round-to-nearest-even conversion gives, by search.
unsigned nearestCode(double x) {
  if (std::isnan(x))
    return std::signbit(x) ? 0xFF : 0x7F;
  unsigned best = 0;
  double bestDist = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c < 256; ++c) {
    double v = byDefinition(c);
    if (std::isnan(v) || std::signbit(v) != std::signbit(x))
      continue;
    double d = std::fabs(v - (std::isinf(x) ? std::copysign(1e300, x) : x));
    if (d < bestDist || (d == bestDist && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      bestDist = d;
    }
  }
  return best;
}

TEST(Float8E4M3, DecodesEveryCodeAsDefined) {
  for (unsigned c = 0; c < 256; ++c) {
    double want = byDefinition(c), got = e4m3BitsToDouble(uint8_t(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    EXPECT_EQ(got, want) << "code " << c;
    EXPECT_EQ(std::signbit(got), (c & 0x80) != 0) << "code " << c;
  }
  EXPECT_EQ(e4m3BitsToDouble(0x7E), 448.0);
  EXPECT_EQ(e4m3BitsToDouble(0x38), 1.0);
  EXPECT_EQ(e4m3BitsToDouble(0x08), std::ldexp(1.0, -6)); // min normal
  EXPECT_EQ(e4m3BitsToDouble(0x01), std::ldexp(1.0, -9)); // min subnormal
  EXPECT_EQ(e4m3BitsToDouble(0x78), 256.0); // E = 15 is finite in e4m3fn
}

TEST(Float8E4M3, EveryFiniteCodeRoundTrips) {
  for (unsigned c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F)
      continue;
    EXPECT_EQ(doubleToE4M3Bits(e4m3BitsToDouble(uint8_t(c))), c) << c;
  }
}

TEST(Float8E4M3, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  // Every pair of adjacent non-negative finite values: the midpoint, one
  // double ulp either side of it, and both sign variants.
  for (unsigned c = 0; c < 0x7E; ++c) {
    double lo = byDefinition(c), hi = byDefinition(c + 1);
    double mid = (lo + hi) / 2; // exact: both have few significant bits
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9)})
      for (double sx : {x, -x}) {
        EXPECT_EQ(doubleToE4M3Bits(sx), nearestCode(sx)) << sx;
      }
    EXPECT_EQ(doubleToE4M3Bits(mid), (c & 1) ? c + 1 : c) << mid;
  }
}

TEST(Float8E4M3, SaturatesAndKeepsNaN) {
  EXPECT_EQ(doubleToE4M3Bits(448.0), 0x7E);
  EXPECT_EQ(doubleToE4M3Bits(463.99), 0x7E);
  EXPECT_EQ(doubleToE4M3Bits(464.0), 0x7E); // would round to 512: saturates
  EXPECT_EQ(doubleToE4M3Bits(1e30), 0x7E);
  EXPECT_EQ(doubleToE4M3Bits(-1e30), 0xFE);
  EXPECT_EQ(doubleToE4M3Bits(std::numeric_limits<double>::infinity()), 0x7E);
  EXPECT_EQ(doubleToE4M3Bits(-std::numeric_limits<double>::infinity()), 0xFE);
  EXPECT_EQ(doubleToE4M3Bits(std::nan("")), 0x7F);
  EXPECT_EQ(doubleToE4M3Bits(-std::nan("")), 0xFF);
  EXPECT_EQ(doubleToE4M3Bits(-0.0), 0x80);
  EXPECT_EQ(doubleToE4M3Bits(std::ldexp(1.0, -10)), 0x00); // tie to even 0
  EXPECT_EQ(doubleToE4M3Bits(std::nextafter(std::ldexp(1.0, -10), 1.0)), 0x01);
  EXPECT_EQ(doubleToE4M3Bits(1e-300), 0x00);
  EXPECT_EQ(roundToE4M3(1000.0), 448.0);
}

TEST(Float8E4M3, RandomValuesMatchTheSearch) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> ex(-14, 10);
  for (int i = 0; i < 50000; ++i) {
    double x = std::ldexp(mant(rng), ex(rng));
    ASSERT_EQ(doubleToE4M3Bits(x), nearestCode(x)) << x;
  }
}

} // namespace

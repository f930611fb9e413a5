//===- Float16Test.cpp - bit-exact f16 / bf16 conversions -----------------===//

#include "flashc/Runtime/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace flash;

namespace {

double pow2(int e) { return std::ldexp(1.0, e); }

bool halfIsNaN(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF); }
bool bf16IsNaN(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x007F); }

TEST(Float16, ExactValues) {
  EXPECT_EQ(doubleToHalfBits(0.0), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalfBits(0.5), 0x3800);
  EXPECT_EQ(doubleToHalfBits(65504.0), 0x7BFF); // max finite
  EXPECT_EQ(doubleToHalfBits(pow2(-14)), 0x0400); // min normal
  EXPECT_EQ(doubleToHalfBits(pow2(-24)), 0x0001); // min subnormal
  EXPECT_EQ(doubleToHalfBits(pow2(-14) - pow2(-24)), 0x03FF); // max subnormal
  EXPECT_EQ(halfBitsToDouble(0x3C00), 1.0);
  EXPECT_EQ(halfBitsToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(halfBitsToDouble(0x0001), pow2(-24));
  EXPECT_EQ(halfBitsToDouble(0x83FF), -(pow2(-14) - pow2(-24)));
  EXPECT_TRUE(std::signbit(halfBitsToDouble(0x8000)));
}

TEST(Float16, RoundToNearestEvenTies) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(doubleToHalfBits(1.0 + pow2(-11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02: even is 0x3C02.
  EXPECT_EQ(doubleToHalfBits(1.0 + 3 * pow2(-11)), 0x3C02);
  // Just above / below the tie.
  EXPECT_EQ(doubleToHalfBits(1.0 + pow2(-11) + pow2(-30)), 0x3C01);
  EXPECT_EQ(doubleToHalfBits(1.0 + pow2(-11) - pow2(-30)), 0x3C00);
  // Double rounding trap: rounding through float first would make this a
  // tie and give 0x3C00; the correct answer is 0x3C01.
  EXPECT_EQ(doubleToHalfBits(1.0 + pow2(-11) + pow2(-40)), 0x3C01);
  EXPECT_EQ(doubleToHalfBits(-(1.0 + pow2(-11) + pow2(-40))), 0xBC01);
  // 2049 is a tie between 2048 and 2050 -> 2048; 2051 -> 2052.
  EXPECT_EQ(halfBitsToDouble(doubleToHalfBits(2049.0)), 2048.0);
  EXPECT_EQ(halfBitsToDouble(doubleToHalfBits(2051.0)), 2052.0);
}

TEST(Float16, Subnormals) {
  // Half of the min subnormal ties to zero (even); anything above rounds up.
  EXPECT_EQ(doubleToHalfBits(pow2(-25)), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-pow2(-25)), 0x8000);
  EXPECT_EQ(doubleToHalfBits(pow2(-25) * (1 + pow2(-40))), 0x0001);
  EXPECT_EQ(doubleToHalfBits(pow2(-26)), 0x0000);
  // 1.5 * 2^-24 ties between 1 and 2 ulps -> 2 (even).
  EXPECT_EQ(doubleToHalfBits(1.5 * pow2(-24)), 0x0002);
  EXPECT_EQ(doubleToHalfBits(2.5 * pow2(-24)), 0x0002);
  EXPECT_EQ(doubleToHalfBits(3 * pow2(-24)), 0x0003);
  // The largest subnormal + half an ulp rounds up into the normal range.
  EXPECT_EQ(doubleToHalfBits(pow2(-14) - pow2(-25)), 0x0400);
  // Tiny doubles (and double subnormals) go to signed zero.
  EXPECT_EQ(doubleToHalfBits(1e-300), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-std::numeric_limits<double>::denorm_min()),
            0x8000);
}

TEST(Float16, OverflowInfNaN) {
  EXPECT_EQ(doubleToHalfBits(65519.99), 0x7BFF);
  EXPECT_EQ(doubleToHalfBits(65520.0), 0x7C00); // tie with 2^16 -> inf
  EXPECT_EQ(doubleToHalfBits(1e10), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(-1e300), 0xFC00);
  EXPECT_EQ(doubleToHalfBits(std::numeric_limits<double>::infinity()), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(-std::numeric_limits<double>::infinity()), 0xFC00);
  EXPECT_TRUE(std::isinf(halfBitsToDouble(0x7C00)));
  uint16_t n = doubleToHalfBits(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(halfIsNaN(n));
  EXPECT_TRUE(halfIsNaN(doubleToHalfBits(-std::nan(""))));
  EXPECT_TRUE(std::isnan(halfBitsToDouble(0x7E00)));
  EXPECT_TRUE(std::isnan(halfBitsToDouble(0x7C01)));
  // A signaling NaN stays a NaN (quieted), never becomes infinity.
  double snan = std::numeric_limits<double>::signaling_NaN();
  EXPECT_TRUE(halfIsNaN(doubleToHalfBits(snan)));
}

TEST(Float16, AllBitPatternsRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    double d = halfBitsToDouble(h);
    if (halfIsNaN(h)) {
      ASSERT_TRUE(std::isnan(d)) << b;
      uint16_t back = doubleToHalfBits(d);
      ASSERT_TRUE(halfIsNaN(back)) << b;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << b;
      if (h & 0x0200) { // quiet NaNs keep their payload exactly
        ASSERT_EQ(back, h) << b;
      }
      continue;
    }
    ASSERT_EQ(doubleToHalfBits(d), h) << b;
    // The value is exactly a float too; converting through float is exact.
    ASSERT_EQ(static_cast<double>(static_cast<float>(d)), d);
  }
}

TEST(Float16, MonotoneAndNearest) {
  // Midpoints between consecutive positive finite halves round to the even
  // neighbour; points just off the midpoint round to the nearer neighbour.
  for (uint32_t b = 0; b < 0x7BFF; ++b) {
    double lo = halfBitsToDouble(static_cast<uint16_t>(b));
    double hi = halfBitsToDouble(static_cast<uint16_t>(b + 1));
    double mid = (lo + hi) / 2; // exact in double
    uint16_t even = (b & 1) ? static_cast<uint16_t>(b + 1)
                            : static_cast<uint16_t>(b);
    ASSERT_EQ(doubleToHalfBits(mid), even) << b;
    ASSERT_EQ(doubleToHalfBits(std::nextafter(mid, 0.0)), b) << b;
    ASSERT_EQ(doubleToHalfBits(std::nextafter(mid, 1e9)), b + 1) << b;
    ASSERT_EQ(doubleToHalfBits(-mid), even | 0x8000) << b;
  }
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
TEST(Float16, MatchesCompilerFloat16) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> ex(-30, 18);
  for (int i = 0; i < 200000; ++i) {
    double d = std::ldexp(mant(rng), ex(rng));
    _Float16 ref = static_cast<_Float16>(d);
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    ASSERT_EQ(doubleToHalfBits(d), rb) << d;
  }
}
#endif

TEST(BFloat16, ExactValuesAndTies) {
  EXPECT_EQ(doubleToBF16Bits(1.0), 0x3F80);
  EXPECT_EQ(doubleToBF16Bits(-1.0), 0xBF80);
  EXPECT_EQ(doubleToBF16Bits(0.0), 0x0000);
  EXPECT_EQ(doubleToBF16Bits(-0.0), 0x8000);
  EXPECT_EQ(bf16BitsToDouble(0x3F80), 1.0);
  // 1 + 2^-8 ties to 1.0; 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(doubleToBF16Bits(1.0 + pow2(-8)), 0x3F80);
  EXPECT_EQ(doubleToBF16Bits(1.0 + 3 * pow2(-8)), 0x3F82);
  EXPECT_EQ(doubleToBF16Bits(1.0 + pow2(-8) + pow2(-40)), 0x3F81);
  // Max finite (2 - 2^-7) * 2^127; halfway to 2^128 rounds to inf.
  double maxBf = (2 - pow2(-7)) * pow2(127);
  EXPECT_EQ(doubleToBF16Bits(maxBf), 0x7F7F);
  EXPECT_EQ(doubleToBF16Bits((2 - pow2(-8)) * pow2(127)), 0x7F80);
  EXPECT_EQ(doubleToBF16Bits(-1e300), 0xFF80);
  // Subnormals: min 2^-133, half of it ties to zero.
  EXPECT_EQ(doubleToBF16Bits(pow2(-133)), 0x0001);
  EXPECT_EQ(doubleToBF16Bits(pow2(-134)), 0x0000);
  EXPECT_EQ(doubleToBF16Bits(3 * pow2(-134)), 0x0002);
  EXPECT_EQ(bf16BitsToDouble(0x0001), pow2(-133));
  EXPECT_TRUE(bf16IsNaN(doubleToBF16Bits(std::nan(""))));
  EXPECT_EQ(doubleToBF16Bits(std::numeric_limits<double>::infinity()), 0x7F80);
}

TEST(BFloat16, AllBitPatternsRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    double d = bf16BitsToDouble(h);
    if (bf16IsNaN(h)) {
      ASSERT_TRUE(std::isnan(d)) << b;
      uint16_t back = doubleToBF16Bits(d);
      ASSERT_TRUE(bf16IsNaN(back)) << b;
      if (h & 0x0040) {
        ASSERT_EQ(back, h) << b;
      }
      continue;
    }
    ASSERT_EQ(doubleToBF16Bits(d), h) << b;
    // bf16 is the top half of a float.
    float f = static_cast<float>(d);
    uint32_t fb;
    std::memcpy(&fb, &f, 4);
    ASSERT_EQ(fb >> 16, b) << b;
    ASSERT_EQ(fb & 0xFFFF, 0u) << b;
  }
}

TEST(BFloat16, MatchesFloatBitTrickOnFloats) {
  // For inputs that are floats, RNE to bf16 is the classic bit trick.
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t fb = rng();
    float f;
    std::memcpy(&f, &fb, 4);
    if (std::isnan(f))
      continue;
    uint32_t rounded = fb + 0x7FFF + ((fb >> 16) & 1);
    uint16_t ref = static_cast<uint16_t>(rounded >> 16);
    ASSERT_EQ(doubleToBF16Bits(static_cast<double>(f)), ref) << fb;
  }
}

} // namespace

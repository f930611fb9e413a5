//===- WarpgroupMmaLayoutTest.cpp - the warpgroup MMA layout --------------===//
//
// The warpgroup MMA layout of sm_90a is the #tile.mma layout with warps =
// [4 G, 1, 1] and values = [1, 1, 1] (WgmmaTarget.h): convert-tile-to-simt
// hands register r N/2 + i of a thread to wgmma as accumulator register i
// of the 64-row repeat r, and the dot_op A registers of atom (r, k) as the
// register A fragment of k-step k. Checked here for every thread, register,
// warpgroup count and N against WarpgroupLayouts.h's fragments.
//
//===----------------------------------------------------------------------===//
#include "flashc/Dialect/Tile/LayoutFunctions.h"
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace flash::tile::layout;

namespace {

MmaParams warpgroupLayout(int64_t groups) {
  MmaParams p;
  p.warps[0] = 4 * groups;
  return p;
}

TEST(WarpgroupMmaLayout, AccumulatorIsWgmmaFragmentPerRepeat) {
  for (int64_t groups : {1, 2, 3})
    for (int64_t repeats : {1, 2})
      for (int64_t n = 8; n <= 256; n += 8) {
        MmaParams p = warpgroupLayout(groups);
        int64_t m = repeats * groups * kWgmmaAtomM;
        ASSERT_EQ(mmaNumRegisters(p, MmaRole::Acc, {m, n}),
                  repeats * wgmmaAccNumRegisters(n));
        for (int64_t t = 0; t < groups * kWarpgroupSize; ++t)
          for (int64_t r = 0; r < repeats; ++r)
            for (int64_t i = 0; i < wgmmaAccNumRegisters(n); ++i) {
              Coord want = wgmmaAccCoord<int64_t>(t % kWarpgroupSize, i);
              Coord have = mmaCoord<int64_t>(p, MmaRole::Acc, {m, n},
                                             t / kWarpSize, t % kWarpSize,
                                             r * n / 2 + i);
              int64_t rowBase = (r * groups + t / kWarpgroupSize) * kWgmmaAtomM;
              ASSERT_EQ(have[0], rowBase + want[0])
                  << "groups " << groups << " n " << n << " t " << t;
              ASSERT_EQ(have[1], want[1])
                  << "groups " << groups << " n " << n << " t " << t;
            }
      }
}

TEST(WarpgroupMmaLayout, OperandAIsWgmmaRegisterFragment) {
  for (int64_t groups : {1, 2})
    for (int64_t repeats : {1, 2})
      for (int64_t k : {16, 64, 128}) {
        MmaParams p = warpgroupLayout(groups);
        int64_t m = repeats * groups * kWgmmaAtomM;
        for (int64_t t = 0; t < groups * kWarpgroupSize; ++t)
          for (int64_t r = 0; r < repeats; ++r)
            for (int64_t kk = 0; kk < k / kWgmmaAtomK16; ++kk) {
              int64_t first =
                  mmaAtomFirstRegister(p, MmaRole::OperandA, {m, k}, r, kk);
              for (int64_t e = 0; e < kWgmmaAElements; ++e) {
                Coord want = wgmmaARegCoord<int64_t>(t % kWarpgroupSize, e);
                Coord have = mmaCoord<int64_t>(p, MmaRole::OperandA, {m, k},
                                               t / kWarpSize, t % kWarpSize,
                                               first + e);
                int64_t rowBase =
                    (r * groups + t / kWarpgroupSize) * kWgmmaAtomM;
                ASSERT_EQ(have[0], rowBase + want[0]) << "t " << t;
                ASSERT_EQ(have[1], kk * kWgmmaAtomK16 + want[1]) << "t " << t;
              }
            }
      }
}

/// The staging swizzle of rows of one span (tile-stage-shared's choice for
/// 32-, 64- and 128-byte rows) is wgmma's canonical layout, so wgmma reads
/// the buffers cp.async fills.
TEST(WarpgroupMmaLayout, StagingSwizzleIsCanonical) {
  for (SmemSwizzle s : {SmemSwizzle::B32, SmemSwizzle::B64, SmemSwizzle::B128}) {
    int64_t span = swizzleSpanBytes(s), chunks = span / 16;
    SwizzleParams staging;
    staging.rowBytes = span;
    staging.elementBytes = 2;
    staging.maxPhase = std::min<int64_t>(8, chunks);
    staging.perPhase = std::max<int64_t>(1, 8 / chunks);
    for (int64_t rows : {8, 64, 128})
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < span / 2; ++c)
          ASSERT_EQ(swizzledOffset<int64_t>(staging, r, c),
                    canonicalSmemOffset(s, 2, rows, span / 2, r, c))
              << swizzleName(s) << " (" << r << ", " << c << ")";
  }
}

} // namespace

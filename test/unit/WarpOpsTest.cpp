//===- WarpOpsTest.cpp - the emulator's warp-op semantics library ---------===//
//
// Hand-worked entries from the PTX ISA tables (shared/reference/
// ptx-warp-ops.md) written out literally, plus exhaustive property checks:
// mma against a double matrix product and against the project's layout
// functions, ldmatrix entry by entry, every shfl mode with clamps and
// segments, cp.async group retirement, and bank-conflict counts.
//
//===----------------------------------------------------------------------===//
#include "flashc/Emulator/WarpOps.h"

#include "flashc/Dialect/Tile/LayoutFunctions.h"
#include "flashc/Runtime/Float16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

using namespace flash;
using namespace flash::emu;

namespace {

using Mat = std::vector<std::vector<double>>;

Mat zeros(int rows, int cols) { return Mat(rows, std::vector<double>(cols, 0)); }

uint16_t toBits(double v, ElementType t) {
  uint16_t bits = doubleToBits16(v, t);
  EXPECT_EQ(bits16ToDouble(bits, t), v) << "test value not representable";
  return bits;
}

// Fragment builders written from the ISA tables (g = lane / 4, q = lane % 4).
MmaAFragment fragA(const Mat &A, ElementType t) {
  MmaAFragment f{};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    // a0,a1 (g, 2q..); a2,a3 (g+8, 2q..); a4,a5 (g, 2q+8..); a6,a7 (g+8, 2q+8..)
    int rows[4] = {g, g + 8, g, g + 8}, cols[4] = {2 * q, 2 * q, 2 * q + 8, 2 * q + 8};
    for (int r = 0; r < 4; ++r)
      f[r][lane] = pack16x2(toBits(A[rows[r]][cols[r]], t),
                            toBits(A[rows[r]][cols[r] + 1], t));
  }
  return f;
}
MmaBFragment fragB(const Mat &B, ElementType t) {
  MmaBFragment f{};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    for (int r = 0; r < 2; ++r)
      f[r][lane] = pack16x2(toBits(B[2 * q + 8 * r][g], t),
                            toBits(B[2 * q + 1 + 8 * r][g], t));
  }
  return f;
}
MmaAccFragment fragC(const Mat &C) {
  MmaAccFragment f{};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    for (int i = 0; i < 4; ++i)
      f[i][lane] = static_cast<float>(C[g + 8 * (i / 2)][2 * q + i % 2]);
  }
  return f;
}
Mat unfragD(const MmaAccFragment &d) {
  Mat D = zeros(16, 8);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    for (int i = 0; i < 4; ++i)
      D[g + 8 * (i / 2)][2 * q + i % 2] = d[i][lane];
  }
  return D;
}

/// A * B + C in long double (exact for the test values), rounded to float.
Mat reference(const Mat &A, const Mat &B, const Mat &C) {
  Mat D = zeros(16, 8);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      long double s = C[m][n];
      for (int k = 0; k < 16; ++k)
        s += static_cast<long double>(A[m][k]) * B[k][n];
      D[m][n] = static_cast<float>(s);
    }
  return D;
}

Mat randomGrid(int rows, int cols, std::mt19937 &rng, int range, double scale) {
  std::uniform_int_distribution<int> dist(-range, range);
  Mat M = zeros(rows, cols);
  for (auto &row : M)
    for (double &v : row)
      v = dist(rng) * scale;
  return M;
}

} // namespace

//===----------------------------------------------------------------------===//
// cvt / packing
//===----------------------------------------------------------------------===//

TEST(WarpOpsCvt, F16x2OperandOrderAndRounding) {
  // cvt.rn.f16x2.f32 d, a, b: b in the low half, a in the high half.
  EXPECT_EQ(cvtRnF16x2F32(1.0f, 2.0f), 0x3c004000u);
  EXPECT_EQ(cvtRnF16x2F32(-0.0f, 65504.0f), 0x80007bffu);
  // Ties to even: 1 + 2^-11 -> 1; 1 + 3 * 2^-11 -> 1 + 2^-9.
  EXPECT_EQ(low16(cvtRnF16x2F32(0, 1.0f + std::ldexp(1.0f, -11))), 0x3c00);
  EXPECT_EQ(low16(cvtRnF16x2F32(0, 1.0f + 3 * std::ldexp(1.0f, -11))), 0x3c02);
  // Overflow to infinity, gradual underflow.
  EXPECT_EQ(high16(cvtRnF16x2F32(70000.0f, 0)), 0x7c00);
  EXPECT_EQ(high16(cvtRnF16x2F32(std::ldexp(1.0f, -24), 0)), 0x0001);
  auto [lo, hi] = unpack16x2(0x3c004000u, ElementType::F16);
  EXPECT_EQ(lo, 2.0f);
  EXPECT_EQ(hi, 1.0f);
}

TEST(WarpOpsCvt, BF16x2OperandOrderAndRounding) {
  EXPECT_EQ(cvtRnBF16x2F32(-2.0f, 1.0f), 0xc0003f80u);
  EXPECT_EQ(low16(cvtRnBF16x2F32(0, 1.0f + std::ldexp(1.0f, -8))), 0x3f80);
  EXPECT_EQ(low16(cvtRnBF16x2F32(0, 1.0f + 3 * std::ldexp(1.0f, -8))), 0x3f82);
  EXPECT_EQ(low16(cvtRnBF16x2F32(0, std::ldexp(1.0f, 100))), 0x7180);
  auto [lo, hi] = unpack16x2(0xc0003f80u, ElementType::BF16);
  EXPECT_EQ(lo, 1.0f);
  EXPECT_EQ(hi, -2.0f);
  EXPECT_EQ(pack16x2(0x1234, 0xabcd), 0xabcd1234u);
}

//===----------------------------------------------------------------------===//
// mma.sync m16n8k16
//===----------------------------------------------------------------------===//

TEST(WarpOpsMma, IdentityHandWorkedFragments) {
  // A = I16 written straight from the ISA table: the 1 of row g sits in
  // a0/a1 when g in {2q, 2q+1}; that of row g+8 in a6/a7 (col 2q+h+8 == g+8).
  // a2..a5 (rows g+8 cols < 8, rows g cols >= 8) are all zero.
  MmaAFragment a{};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    uint32_t v = g == 2 * q ? 0x00003c00u : g == 2 * q + 1 ? 0x3c000000u : 0u;
    a[0][lane] = v;
    a[3][lane] = v;
  }
  Mat B = zeros(16, 8);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      B[k][n] = 8 * k + n;
  MmaAccFragment c{};
  auto d = mmaM16N8K16(a, fragB(B, ElementType::F16), c, ElementType::F16);
  ASSERT_TRUE(d.ok()) << d.error();
  // Lane 5: g = 1, q = 1 -> d0 = D[1][2], d1 = D[1][3], d2 = D[9][2], d3 = D[9][3].
  EXPECT_EQ((*d)[0][5], 10.0f);
  EXPECT_EQ((*d)[1][5], 11.0f);
  EXPECT_EQ((*d)[2][5], 74.0f);
  EXPECT_EQ((*d)[3][5], 75.0f);
  // Lane 31: g = 7, q = 3 -> d0 = D[7][6], d3 = D[15][7].
  EXPECT_EQ((*d)[0][31], 62.0f);
  EXPECT_EQ((*d)[3][31], 127.0f);
  EXPECT_EQ(unfragD(*d), B);
}

TEST(WarpOpsMma, PermutationMatrices) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int> perm(16);
    for (int i = 0; i < 16; ++i)
      perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Mat P = zeros(16, 16), B = randomGrid(16, 8, rng, 1000, 1.0 / 8);
    for (int i = 0; i < 16; ++i)
      P[i][perm[i]] = 1;
    Mat C = randomGrid(16, 8, rng, 1000, 1.0);
    auto d = mmaM16N8K16(fragA(P, ElementType::F16), fragB(B, ElementType::F16),
                         fragC(C), ElementType::F16);
    ASSERT_TRUE(d.ok()) << d.error();
    Mat D = unfragD(*d);
    for (int i = 0; i < 16; ++i)
      for (int n = 0; n < 8; ++n)
        ASSERT_EQ(D[i][n], B[perm[i]][n] + C[i][n]) << i << "," << n;
  }
  // A = [I8 | 0; ...] style: B = first 8 columns of I16 -> D = A[:, 0:8].
  Mat A = randomGrid(16, 16, rng, 1000, 1.0 / 16), E = zeros(16, 8);
  for (int n = 0; n < 8; ++n)
    E[n][n] = 1;
  auto d = mmaM16N8K16(fragA(A, ElementType::F16), fragB(E, ElementType::F16),
                       fragC(zeros(16, 8)), ElementType::F16);
  ASSERT_TRUE(d.ok());
  Mat D = unfragD(*d);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(D[m][n], A[m][n]);
}

TEST(WarpOpsMma, RandomF16ExactGrid) {
  // Multiples of 2^-6 in [-2, 2]: the sum is exact, so the result is unique.
  std::mt19937 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    Mat A = randomGrid(16, 16, rng, 128, 1.0 / 64);
    Mat B = randomGrid(16, 8, rng, 128, 1.0 / 64);
    Mat C = randomGrid(16, 8, rng, 1 << 20, 1.0 / 4096);
    auto d = mmaM16N8K16(fragA(A, ElementType::F16), fragB(B, ElementType::F16),
                         fragC(C), ElementType::F16);
    ASSERT_TRUE(d.ok()) << d.error();
    ASSERT_EQ(unfragD(*d), reference(A, B, C));
  }
}

TEST(WarpOpsMma, RandomF16FullPrecision) {
  // Arbitrary f16 values in [-4, 4] and arbitrary f32 C: within 1 ulp of the
  // correctly rounded result (exact-then-round-once in practice).
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> dist(-4, 4);
  int exact = 0, total = 0;
  for (int trial = 0; trial < 50; ++trial) {
    Mat A = zeros(16, 16), B = zeros(16, 8), C = zeros(16, 8);
    for (auto &row : A)
      for (double &v : row)
        v = roundToHalf(dist(rng));
    for (auto &row : B)
      for (double &v : row)
        v = roundToHalf(dist(rng));
    for (auto &row : C)
      for (double &v : row)
        v = static_cast<float>(dist(rng) * 10);
    auto d = mmaM16N8K16(fragA(A, ElementType::F16), fragB(B, ElementType::F16),
                         fragC(C), ElementType::F16);
    ASSERT_TRUE(d.ok());
    Mat D = unfragD(*d), R = reference(A, B, C);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        float got = static_cast<float>(D[m][n]), want = static_cast<float>(R[m][n]);
        ++total;
        exact += got == want;
        EXPECT_LE(std::fabs(got - want),
                  std::nextafter(std::fabs(want), INFINITY) - std::fabs(want));
      }
  }
  EXPECT_GE(exact, total - 2);
}

TEST(WarpOpsMma, RoundsOnce) {
  // c = 1, products 2^-24 (half an f32 ulp of 1) and 2^-40: the exact sum is
  // just above the tie, so one rounding gives 1 + 2^-23. Rounding after each
  // addition would give 1.
  Mat A = zeros(16, 16), B = zeros(16, 8), C = zeros(16, 8);
  A[0][0] = std::ldexp(1.0, -12);
  B[0][0] = std::ldexp(1.0, -12);
  A[0][1] = std::ldexp(1.0, -20); // f16 subnormal
  B[1][0] = std::ldexp(1.0, -20);
  C[0][0] = 1;
  auto d = mmaM16N8K16(fragA(A, ElementType::F16), fragB(B, ElementType::F16),
                       fragC(C), ElementType::F16);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0][0], 1.0f + std::ldexp(1.0f, -23));
}

TEST(WarpOpsMma, BF16) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    // Multiples of 2^-4 up to 100/16: 8 significant bits, exact in bf16.
    Mat A = randomGrid(16, 16, rng, 100, 1.0 / 16);
    Mat B = randomGrid(16, 8, rng, 100, 1.0 / 16);
    Mat C = randomGrid(16, 8, rng, 1000, 0.5);
    auto d = mmaM16N8K16(fragA(A, ElementType::BF16),
                         fragB(B, ElementType::BF16), fragC(C),
                         ElementType::BF16);
    ASSERT_TRUE(d.ok()) << d.error();
    ASSERT_EQ(unfragD(*d), reference(A, B, C));
  }
  // A range only bf16 has: A = 2^100 I, B in [-8, 8] -> D = 2^100 B.
  Mat A = zeros(16, 16), B = randomGrid(16, 8, rng, 128, 1.0 / 16);
  for (int i = 0; i < 16; ++i)
    A[i][i] = std::ldexp(1.0, 100);
  auto d = mmaM16N8K16(fragA(A, ElementType::BF16), fragB(B, ElementType::BF16),
                       fragC(zeros(16, 8)), ElementType::BF16);
  ASSERT_TRUE(d.ok());
  Mat D = unfragD(*d);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(D[k][n], std::ldexp(B[k][n], 100));
  // The element type matters: bf16 bits of 1.0 (0x3f80) read as f16 are 1.875.
  MmaAFragment a{};
  MmaBFragment b{};
  for (int lane = 0; lane < 32; ++lane) {
    a[0][lane] = lane == 0 ? 0x3f80u : 0; // A[0][0]
    b[0][lane] = lane == 0 ? 0x3f80u : 0; // B[0][0]
  }
  auto asBf = mmaM16N8K16(a, b, MmaAccFragment{}, ElementType::BF16);
  auto asF16 = mmaM16N8K16(a, b, MmaAccFragment{}, ElementType::F16);
  ASSERT_TRUE(asBf.ok() && asF16.ok());
  EXPECT_EQ((*asBf)[0][0], 1.0f);
  EXPECT_EQ((*asF16)[0][0], 1.875f * 1.875f);
}

TEST(WarpOpsMma, InactiveLaneIsAnError) {
  for (uint32_t mask : {0xfffffffeu, 0x7fffffffu, 0x0000ffffu, 0u}) {
    auto d = mmaM16N8K16(MmaAFragment{}, MmaBFragment{}, MmaAccFragment{},
                         ElementType::F16, mask);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().find("mma.sync"), std::string::npos) << d.error();
    EXPECT_NE(d.error().find("inactive"), std::string::npos) << d.error();
  }
  auto d = mmaM16N8K16(MmaAFragment{}, MmaBFragment{}, MmaAccFragment{},
                       ElementType::F16, 0xfffffff7u);
  EXPECT_NE(d.error().find("lane 3 "), std::string::npos) << d.error();
}

TEST(WarpOpsMma, AgreesWithLayoutFunctions) {
  namespace L = flash::tile::layout;
  L::MmaParams one; // one warp, one atom
  const int64_t shapeA[2] = {16, 16}, shapeB[2] = {16, 8}, shapeC[2] = {16, 8};
  std::mt19937 rng(4);
  for (ElementType t : {ElementType::F16, ElementType::BF16}) {
    Mat A = randomGrid(16, 16, rng, 100, 1.0 / 32);
    Mat B = randomGrid(16, 8, rng, 100, 1.0 / 32);
    Mat C = randomGrid(16, 8, rng, 1000, 1.0 / 8);
    MmaAFragment a{};
    MmaBFragment b{};
    MmaAccFragment c{};
    std::set<std::pair<int64_t, int64_t>> seenA, seenB, seenC;
    for (int64_t lane = 0; lane < 32; ++lane) {
      for (int64_t reg = 0; reg < 8; ++reg) { // element e = 2r + h
        L::Coord at = L::mmaCoord<int64_t>(one, L::MmaRole::OperandA, shapeA, 0,
                                           lane, reg);
        seenA.insert({at[0], at[1]});
        a[reg / 2][lane] |= uint32_t(toBits(A[at[0]][at[1]], t)) << (16 * (reg % 2));
      }
      for (int64_t reg = 0; reg < 4; ++reg) {
        L::Coord at = L::mmaCoord<int64_t>(one, L::MmaRole::OperandB, shapeB, 0,
                                           lane, reg);
        seenB.insert({at[0], at[1]});
        b[reg / 2][lane] |= uint32_t(toBits(B[at[0]][at[1]], t)) << (16 * (reg % 2));
        L::Coord ac = L::mmaCoord<int64_t>(one, L::MmaRole::Acc, shapeC, 0, lane, reg);
        seenC.insert({ac[0], ac[1]});
        c[reg][lane] = static_cast<float>(C[ac[0]][ac[1]]);
      }
    }
    ASSERT_EQ(seenA.size(), 256u);
    ASSERT_EQ(seenB.size(), 128u);
    ASSERT_EQ(seenC.size(), 128u);
    auto d = mmaM16N8K16(a, b, c, t);
    ASSERT_TRUE(d.ok()) << d.error();
    Mat R = reference(A, B, C);
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < 4; ++reg) {
        L::Coord at = L::mmaCoord<int64_t>(one, L::MmaRole::Acc, shapeC, 0, lane, reg);
        ASSERT_EQ((*d)[reg][lane], R[at[0]][at[1]]) << "lane " << lane << " reg " << reg;
      }
  }
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

namespace {

double ldValue(int m, int r, int c) { return 100 * m + 10 * r + c; }

/// Row r of matrix m lives at 1024 m + 64 r + 16 (rows not contiguous).
uint32_t rowAddr(int m, int r) { return 1024 * m + 64 * r + 16; }

SharedMemory ldSmem() {
  SharedMemory smem(4096);
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        EXPECT_TRUE(smem.store<uint16_t>(rowAddr(m, r) + 2 * c,
                                         doubleToHalfBits(ldValue(m, r, c)))
                        .ok());
  return smem;
}

LaneValues ldAddresses(int num) {
  LaneValues addr;
  addr.fill(0xdeadbeefu); // lanes that supply no row: must be ignored
  for (int m = 0; m < num; ++m)
    for (int r = 0; r < 8; ++r)
      addr[8 * m + r] = rowAddr(m, r);
  return addr;
}

std::pair<double, double> halves(uint32_t v) {
  return {halfBitsToDouble(low16(v)), halfBitsToDouble(high16(v))};
}

} // namespace

TEST(WarpOpsLdmatrix, EveryEntryAllVariants) {
  SharedMemory smem = ldSmem();
  for (int num : {1, 2, 4})
    for (bool trans : {false, true}) {
      auto res = ldmatrix(smem, ldAddresses(num), num, trans);
      ASSERT_TRUE(res.ok()) << res.error();
      ASSERT_EQ(res->size(), size_t(num));
      for (int m = 0; m < num; ++m)
        for (int lane = 0; lane < 32; ++lane) {
          auto [lo, hi] = halves((*res)[m][lane]);
          int g = lane / 4, q = lane % 4;
          if (!trans) {
            EXPECT_EQ(lo, ldValue(m, g, 2 * q)) << num << " m" << m << " lane " << lane;
            EXPECT_EQ(hi, ldValue(m, g, 2 * q + 1));
          } else {
            EXPECT_EQ(lo, ldValue(m, 2 * q, g)) << num << " m" << m << " lane " << lane;
            EXPECT_EQ(hi, ldValue(m, 2 * q + 1, g));
          }
        }
    }
}

TEST(WarpOpsLdmatrix, HandWorkedEntries) {
  SharedMemory smem = ldSmem();
  auto plain = ldmatrix(smem, ldAddresses(4), 4, false);
  auto trans = ldmatrix(smem, ldAddresses(4), 4, true);
  ASSERT_TRUE(plain.ok() && trans.ok());
  // Lane 0, register 0: M0[0][0], M0[0][1].
  EXPECT_EQ(halves((*plain)[0][0]), std::make_pair(0.0, 1.0));
  // Lane 5, register 2: M2[1][2], M2[1][3]; trans: M2[2][1], M2[3][1].
  EXPECT_EQ(halves((*plain)[2][5]), std::make_pair(212.0, 213.0));
  EXPECT_EQ(halves((*trans)[2][5]), std::make_pair(221.0, 231.0));
  // Lane 31, register 3: M3[7][6], M3[7][7]; trans: M3[6][7], M3[7][7].
  EXPECT_EQ(halves((*plain)[3][31]), std::make_pair(376.0, 377.0));
  EXPECT_EQ(halves((*trans)[3][31]), std::make_pair(367.0, 377.0));
  // Lane 10, register 1 (g = 2, q = 2): M1[2][4], M1[2][5]; trans M1[4][2], M1[5][2].
  EXPECT_EQ(halves((*plain)[1][10]), std::make_pair(124.0, 125.0));
  EXPECT_EQ(halves((*trans)[1][10]), std::make_pair(142.0, 152.0));
}

TEST(WarpOpsLdmatrix, Errors) {
  SharedMemory smem = ldSmem();
  LaneValues addr = ldAddresses(4);
  addr[3] += 8; // misaligned
  auto r = ldmatrix(smem, addr, 4, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 3 "), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("0xd8"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("aligned"), std::string::npos) << r.error();

  addr = ldAddresses(2);
  addr[9] = 4096; // out of bounds (x2 reads lane 9)
  r = ldmatrix(smem, addr, 2, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 9 "), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("0x1000"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("out of bounds"), std::string::npos) << r.error();
  // ...but the same address on lane 20 is ignored by x2.
  addr = ldAddresses(2);
  addr[20] = 4096;
  EXPECT_TRUE(ldmatrix(smem, addr, 2, true).ok());

  // Uninitialised shared bytes: byte 5 of row 6 of matrix 1 never written.
  smem.invalidate(rowAddr(1, 6) + 5, 1);
  r = ldmatrix(smem, ldAddresses(4), 4, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 14 "), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("uninitialised"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("0x595"), std::string::npos) << r.error(); // 1024+384+16+5
  EXPECT_TRUE(ldmatrix(smem, ldAddresses(1), 1, false).ok()); // x1 skips it

  smem = ldSmem();
  r = ldmatrix(smem, ldAddresses(1), 1, false, 0xfffffffdu); // warp-wide
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 1 "), std::string::npos) << r.error();
  EXPECT_FALSE(ldmatrix(smem, ldAddresses(4), 3, false).ok());
}

TEST(WarpOpsLdmatrix, FeedsMmaFragments) {
  // A (16x16) and B = V (16x8, [k][n]) row-major in shared memory: ldmatrix.x4
  // gives the A fragment and ldmatrix.x2.trans the B fragment, register for
  // register, and the mma of them is A * B.
  std::mt19937 rng(5);
  Mat A = randomGrid(16, 16, rng, 100, 1.0 / 32), B = randomGrid(16, 8, rng, 100, 1.0 / 32);
  SharedMemory smem(2048);
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < 16; ++k)
      ASSERT_TRUE(smem.store<uint16_t>(32 * m + 2 * k, doubleToHalfBits(A[m][k])).ok());
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      ASSERT_TRUE(smem.store<uint16_t>(1024 + 16 * k + 2 * n, doubleToHalfBits(B[k][n])).ok());
  LaneValues addrA, addrB{};
  for (int lane = 0; lane < 32; ++lane) {
    int m = lane / 8, r = lane % 8;
    addrA[lane] = 32 * (r + 8 * (m % 2)) + 16 * (m / 2);
    if (lane < 16)
      addrB[lane] = 1024 + 16 * lane;
  }
  auto la = ldmatrix(smem, addrA, 4, false);
  auto lb = ldmatrix(smem, addrB, 2, true);
  ASSERT_TRUE(la.ok() && lb.ok());
  MmaAFragment a = fragA(A, ElementType::F16);
  MmaBFragment b = fragB(B, ElementType::F16);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ((*la)[r], a[r]) << "A register " << r;
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ((*lb)[r], b[r]) << "B register " << r;
  MmaAFragment a2{(*la)[0], (*la)[1], (*la)[2], (*la)[3]};
  MmaBFragment b2{(*lb)[0], (*lb)[1]};
  auto d = mmaM16N8K16(a2, b2, MmaAccFragment{}, ElementType::F16);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(unfragD(*d), reference(A, B, zeros(16, 8)));
}

//===----------------------------------------------------------------------===//
// shfl.sync
//===----------------------------------------------------------------------===//

namespace {

LaneValues laneIds(uint32_t base = 1000) {
  LaneValues a;
  for (int i = 0; i < 32; ++i)
    a[i] = base + i;
  return a;
}

/// Runs a full-warp shuffle and checks d[lane] = a[src(lane)] with p valid
/// exactly where src(lane) != -1 (-1: own value, p = 0).
template <typename Src>
void expectShfl(ShflMode mode, uint32_t b, uint32_t c, Src src) {
  LaneValues a = laneIds();
  auto r = shfl(mode, a, b, c, kFullMask, kFullMask);
  ASSERT_TRUE(r.ok()) << r.error();
  for (int lane = 0; lane < 32; ++lane) {
    int j = src(lane);
    SCOPED_TRACE("lane " + std::to_string(lane));
    EXPECT_EQ(r->d[lane], a[j < 0 ? lane : j]);
    EXPECT_EQ((r->predicate >> lane) & 1u, j < 0 ? 0u : 1u);
  }
}

} // namespace

TEST(WarpOpsShfl, FullWarpModes) {
  for (uint32_t m : {1u, 2u, 4u, 8u, 16u, 31u})
    expectShfl(ShflMode::Bfly, m, 0x1f, [&](int l) { return l ^ int(m); });
  for (uint32_t k : {0u, 7u, 31u})
    expectShfl(ShflMode::Idx, k, 0x1f, [&](int) { return int(k); });
  expectShfl(ShflMode::Down, 1, 0x1f, [](int l) { return l + 1 <= 31 ? l + 1 : -1; });
  expectShfl(ShflMode::Up, 1, 0, [](int l) { return l - 1 >= 0 ? l - 1 : -1; });
  // b uses bits 4:0 only.
  expectShfl(ShflMode::Bfly, 32 + 2, 0x1f, [](int l) { return l ^ 2; });
}

TEST(WarpOpsShfl, ClampAtWarpEnds) {
  // Down by 3: lanes 29..31 would read past lane 31 -> own value, p = 0.
  auto r = shfl(ShflMode::Down, laneIds(), 3u, 0x1f, kFullMask, kFullMask);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->predicate, 0x1fffffffu);
  EXPECT_EQ(r->d[28], 1031u);
  EXPECT_EQ(r->d[29], 1029u);
  EXPECT_EQ(r->d[31], 1031u);
  // Up by 2: lanes 0, 1 would read below lane 0 -> own value, p = 0.
  r = shfl(ShflMode::Up, laneIds(), 2u, 0, kFullMask, kFullMask);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->predicate, 0xfffffffcu);
  EXPECT_EQ(r->d[0], 1000u);
  EXPECT_EQ(r->d[1], 1001u);
  EXPECT_EQ(r->d[2], 1000u);
  // A clamp value below 31: down with c = 15 reads at most lane 15.
  expectShfl(ShflMode::Down, 4, 15, [](int l) { return l + 4 <= 15 ? l + 4 : -1; });
  expectShfl(ShflMode::Idx, 20, 15, [](int) { return -1; });
}

TEST(WarpOpsShfl, PerLaneB) {
  LaneValues b;
  for (int i = 0; i < 32; ++i)
    b[i] = 31 - i;
  auto r = shfl(ShflMode::Idx, laneIds(), b, 0x1f, kFullMask, kFullMask);
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(r->d[i], 1000u + 31 - i);
  EXPECT_EQ(r->predicate, kFullMask);
}

TEST(WarpOpsShfl, Segments) {
  // Width-8 segments: c = (32 - 8) << 8 | 0x1f = 0x181f (segmask 0b11000).
  const uint32_t w8 = 0x181f;
  expectShfl(ShflMode::Bfly, 1, w8, [](int l) { return l ^ 1; });
  expectShfl(ShflMode::Bfly, 4, w8, [](int l) { return l ^ 4; });
  // idx: lane 3 of each segment; b bits above the segment width are ignored.
  expectShfl(ShflMode::Idx, 3, w8, [](int l) { return (l & ~7) + 3; });
  expectShfl(ShflMode::Idx, 11, w8, [](int l) { return (l & ~7) + 3; });
  // down stays within the segment: lane 5 + 2 = 7 ok, lane 6 + 2 = 8 clamps.
  expectShfl(ShflMode::Down, 2, w8, [](int l) { return (l & 7) + 2 <= 7 ? l + 2 : -1; });
  // up with c = 0x1800: lane 8 - 1 = 7 is below its segment -> own value.
  expectShfl(ShflMode::Up, 1, 0x1800, [](int l) { return (l & 7) >= 1 ? l - 1 : -1; });
  // The ISA rule lets bfly read EARLIER segments but not later ones: with
  // b = 8, lane 8 reads lane 0 (valid) while lane 0 keeps its own value.
  expectShfl(ShflMode::Bfly, 8, w8, [](int l) { return (l ^ 8) < l ? l ^ 8 : -1; });
  // Width-16 segments: c = 0x101f.
  expectShfl(ShflMode::Bfly, 8, 0x101f, [](int l) { return l ^ 8; });
  expectShfl(ShflMode::Idx, 5, 0x101f, [](int l) { return (l & 16) + 5; });
  expectShfl(ShflMode::Down, 1, 0x101f, [](int l) { return (l & 15) < 15 ? l + 1 : -1; });
}

TEST(WarpOpsShfl, PartialWarpAndErrors) {
  // A 16-lane shuffle with membermask = activeMask = lanes 0-15.
  auto r = shfl(ShflMode::Bfly, laneIds(), 1u, 0x1f, 0xffffu, 0xffffu);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->d[0], 1001u);
  EXPECT_EQ(r->d[15], 1014u);
  EXPECT_EQ(r->d[16], 0u); // inactive lanes: not written
  EXPECT_EQ(r->predicate, 0xffffu);

  // Reading an inactive lane (lane 4 reads lane 5).
  r = shfl(ShflMode::Bfly, laneIds(), 1u, 0x1f, kFullMask, ~(1u << 5));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 4 reads lane 5"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("inactive"), std::string::npos) << r.error();

  // Reading a lane outside membermask (lane 15 reads lane 16 with down 1).
  r = shfl(ShflMode::Down, laneIds(), 1u, 0x1f, 0xffffu, 0xffffu);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 15 reads lane 16"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("membermask"), std::string::npos) << r.error();
  // ...which the clamp c = 15 avoids.
  r = shfl(ShflMode::Down, laneIds(), 1u, 15, 0xffffu, 0xffffu);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->predicate, 0x7fffu);

  // An executing lane outside membermask.
  r = shfl(ShflMode::Idx, laneIds(), 0u, 0x1f, 0xffu, 0x1ffu);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("lane 8 "), std::string::npos) << r.error();
}

//===----------------------------------------------------------------------===//
// cp.async
//===----------------------------------------------------------------------===//

TEST(WarpOpsCpAsync, ZeroFill) {
  SharedMemory smem(256);
  std::vector<uint8_t> ab(32, 0xab);
  ASSERT_TRUE(smem.write(0, ab.data(), 32).ok());
  CpAsyncState cp;
  ASSERT_TRUE(cp.issue(0, nullptr, 16, 0).ok()); // src-size 0: all zeros
  std::vector<uint8_t> src = {1, 2, 3, 4, 5};
  ASSERT_TRUE(cp.issue(16, src.data(), 8, 5).ok()); // partial
  // Not landed yet: the old bytes are still there.
  EXPECT_EQ(smem.peekByte(0), 0xab);
  EXPECT_EQ(smem.peekByte(16), 0xab);
  ASSERT_TRUE(cp.waitAll(smem).ok());
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(smem.peekByte(i), 0) << i;
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(smem.peekByte(16 + i), i + 1);
  for (int i = 5; i < 8; ++i)
    EXPECT_EQ(smem.peekByte(16 + i), 0) << i;
  EXPECT_EQ(smem.peekByte(24), 0xab); // past cp-size: untouched
  EXPECT_TRUE(smem.allWritten(0, 32));
}

TEST(WarpOpsCpAsync, InvisibleBeforeWait) {
  SharedMemory smem(64);
  CpAsyncState cp;
  uint32_t v = 0x12345678;
  ASSERT_TRUE(cp.issue(8, reinterpret_cast<uint8_t *>(&v), 4, 4).ok());
  cp.commitGroup();
  EXPECT_TRUE(cp.overlapsPending(10, 1));
  EXPECT_FALSE(cp.overlapsPending(12, 4));
  auto early = smem.load<uint32_t>(8); // missing wait: never-written bytes
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().find("uninitialised"), std::string::npos) << early.error();
  ASSERT_TRUE(cp.waitGroup(smem, 0).ok());
  EXPECT_FALSE(cp.overlapsPending(8, 4));
  auto late = smem.load<uint32_t>(8);
  ASSERT_TRUE(late.ok()) << late.error();
  EXPECT_EQ(*late, 0x12345678u);
}

TEST(WarpOpsCpAsync, TakePendingKeepsTheGroups) {
  // cp.async.mbarrier.arrive takes every copy in flight, committed or not;
  // wait_group still counts the (now empty) groups and lands nothing.
  SharedMemory smem(64);
  CpAsyncState cp;
  std::vector<uint8_t> one(16, 1), two(16, 2), three(16, 3);
  ASSERT_TRUE(cp.issue(0, one, 16).ok());
  cp.commitGroup();
  ASSERT_TRUE(cp.issue(16, two, 16).ok());
  cp.commitGroup();
  ASSERT_TRUE(cp.issue(32, three, 16).ok());
  std::vector<CpAsyncState::Copy> taken = cp.takePending();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].dst, 0u);
  EXPECT_EQ(taken[1].dst, 16u);
  EXPECT_EQ(taken[2].dst, 32u);
  EXPECT_EQ(taken[2].data[0], 3);
  EXPECT_EQ(cp.numPendingGroups(), 2u);
  EXPECT_EQ(cp.numUncommittedCopies(), 0u);
  EXPECT_FALSE(cp.overlapsPending(0, 48));
  ASSERT_TRUE(cp.waitGroup(smem, 0).ok());
  EXPECT_FALSE(smem.isWritten(0));
  EXPECT_EQ(cp.numPendingGroups(), 0u);
}

TEST(WarpOpsCpAsync, WaitGroupRetiresOnlyOlderGroups) {
  SharedMemory smem(64);
  CpAsyncState cp;
  std::vector<uint8_t> one(16, 1), two(16, 2);
  ASSERT_TRUE(cp.issue(0, one, 16).ok());
  cp.commitGroup();
  ASSERT_TRUE(cp.issue(16, two, 16).ok());
  cp.commitGroup();
  EXPECT_EQ(cp.numPendingGroups(), 2u);
  ASSERT_TRUE(cp.waitGroup(smem, 2).ok()); // nothing to retire
  EXPECT_FALSE(smem.isWritten(0));
  ASSERT_TRUE(cp.waitGroup(smem, 1).ok());
  EXPECT_TRUE(smem.allWritten(0, 16));
  EXPECT_EQ(smem.peekByte(0), 1);
  EXPECT_FALSE(smem.isWritten(16));
  EXPECT_EQ(cp.numPendingGroups(), 1u);
  ASSERT_TRUE(cp.waitGroup(smem, 0).ok());
  EXPECT_EQ(smem.peekByte(31), 2);
  EXPECT_EQ(cp.numPendingGroups(), 0u);
}

TEST(WarpOpsCpAsync, UncommittedCopiesStayPending) {
  SharedMemory smem(64);
  CpAsyncState cp;
  std::vector<uint8_t> one(8, 1), two(8, 2);
  ASSERT_TRUE(cp.issue(0, one, 8).ok());
  cp.commitGroup();
  ASSERT_TRUE(cp.issue(8, two, 8).ok()); // not committed
  ASSERT_TRUE(cp.waitGroup(smem, 0).ok());
  EXPECT_TRUE(smem.allWritten(0, 8));
  EXPECT_FALSE(smem.isWritten(8));
  EXPECT_EQ(cp.numUncommittedCopies(), 1u);
  EXPECT_TRUE(cp.overlapsPending(8, 8));
  ASSERT_TRUE(cp.waitAll(smem).ok()); // commit + wait 0
  EXPECT_EQ(smem.peekByte(15), 2);
  EXPECT_EQ(cp.numUncommittedCopies(), 0u);
  // An empty commit makes an empty group, as in PTX.
  cp.commitGroup();
  EXPECT_EQ(cp.numPendingGroups(), 1u);
  ASSERT_TRUE(cp.waitGroup(smem, 0).ok());
}

TEST(WarpOpsCpAsync, IssueOrderAndErrors) {
  SharedMemory smem(32);
  CpAsyncState cp;
  std::vector<uint8_t> one(4, 1), two(4, 2);
  ASSERT_TRUE(cp.issue(4, one, 4).ok());
  ASSERT_TRUE(cp.issue(4, two, 4).ok()); // later copy to the same bytes wins
  ASSERT_TRUE(cp.waitAll(smem).ok());
  EXPECT_EQ(smem.peekByte(4), 2);

  EXPECT_FALSE(cp.issue(0, one.data(), 12, 4).ok()); // bad cp-size
  EXPECT_FALSE(cp.issue(0, one.data(), 4, 5).ok());  // src-size > cp-size
  auto mis = cp.issue(4, nullptr, 8, 0);             // dst not 8-aligned
  ASSERT_FALSE(mis.ok());
  EXPECT_NE(mis.error().find("0x4"), std::string::npos) << mis.error();
  ASSERT_TRUE(cp.issue(32, nullptr, 16, 0).ok()); // out of bounds: at landing
  ASSERT_TRUE(cp.issue(16, two.data(), 4, 4).ok());
  auto land = cp.waitAll(smem);
  ASSERT_FALSE(land.ok());
  EXPECT_NE(land.error().find("out of bounds"), std::string::npos) << land.error();
  EXPECT_EQ(smem.peekByte(16), 2); // the valid copy still landed
}

//===----------------------------------------------------------------------===//
// Shared memory and bank conflicts
//===----------------------------------------------------------------------===//

TEST(WarpOpsSharedMemory, BoundsAlignmentAndTypes) {
  SharedMemory smem(16);
  EXPECT_TRUE(smem.store<float>(12, 1.5f).ok());
  EXPECT_FALSE(smem.store<float>(14, 1.5f).ok()); // misaligned
  EXPECT_FALSE(smem.store<uint32_t>(16, 1).ok());  // out of bounds
  EXPECT_FALSE(smem.load<uint8_t>(0).ok());        // never written
  auto f = smem.load<float>(12);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, 1.5f);
  EXPECT_EQ(smem.peekByte(15), 0x3f); // little-endian 0x3fc00000
  uint8_t buf[4];
  auto oob = smem.read(0xfffffffeu, buf, 4); // no address wrap-around
  ASSERT_FALSE(oob.ok());
  EXPECT_NE(oob.error().find("out of bounds"), std::string::npos);
}

namespace {
std::vector<std::pair<uint32_t, uint32_t>> laneAccess(uint32_t bytes,
                                                   uint32_t (*addr)(int)) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (int lane = 0; lane < 32; ++lane)
    v.push_back({addr(lane), bytes});
  return v;
}
} // namespace

TEST(WarpOpsBanks, FourByteAccesses) {
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int l) { return 4u * l; }), kFullMask), 0);
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int) { return 64u; }), kFullMask), 0);
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int l) { return 8u * l; }), kFullMask), 1);
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int l) { return 128u * l; }), kFullMask), 31);
  // Only active lanes count: stride-2 over lanes 0-15 is conflict free.
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int l) { return 8u * l; }), 0xffffu), 0);
  // Two words per bank only where two lanes share a bank at different words.
  EXPECT_EQ(bankConflicts(laneAccess(4, [](int l) { return l == 31 ? 128u : 4u * l; }),
                          kFullMask),
            1);
}

TEST(WarpOpsBanks, WideAccesses) {
  // 8-byte: two phases of 16 lanes, 128 bytes each: conflict free.
  EXPECT_EQ(bankConflicts(laneAccess(8, [](int l) { return 8u * l; }), kFullMask), 0);
  // 8-byte stride 16: each phase of 16 lanes covers 256 bytes -> 2-way.
  EXPECT_EQ(bankConflicts(laneAccess(8, [](int l) { return 16u * l; }), kFullMask), 2);
  // 16-byte consecutive: four phases of 8 lanes x 16 bytes: conflict free.
  EXPECT_EQ(bankConflicts(laneAccess(16, [](int l) { return 16u * l; }), kFullMask), 0);
  // Column read of a 64-wide f16 tile (128-byte rows): 8 lanes, one 16-byte
  // chunk of 8 consecutive rows -> the same 4 banks, 8 words each: 7 extra.
  EXPECT_EQ(bankConflicts(laneAccess(16, [](int l) { return 128u * l + 32; }), 0xffu), 7);
  // The whole warp: four such phases.
  EXPECT_EQ(bankConflicts(laneAccess(16, [](int l) { return 128u * (l % 8) + 16u * (l / 8); }),
                          kFullMask),
            28);
  // XOR swizzle of the 16-byte chunk index with row % 8: conflict free.
  EXPECT_EQ(bankConflicts(laneAccess(16, [](int l) {
                            uint32_t row = l % 8, chunk = l / 8;
                            return 128u * row + 16u * (chunk ^ (row % 8));
                          }),
                          kFullMask),
            0);
  // Invalid requests.
  EXPECT_EQ(bankConflicts(laneAccess(12, [](int l) { return 16u * l; }), kFullMask), -1);
  EXPECT_EQ(bankConflicts(laneAccess(16, [](int l) { return 8u * l; }), kFullMask), -1);
  auto mixed = laneAccess(4, [](int l) { return 16u * l; });
  mixed[3].second = 16;
  EXPECT_EQ(bankConflicts(mixed, kFullMask), -1);
  EXPECT_EQ(bankConflicts({}, kFullMask), 0);
}

TEST(WarpOpsBanks, Ldmatrix) {
  // ldmatrix.x4 of four 8x8 blocks of a row-major 64-wide f16 tile.
  LaneValues plain, swizzled;
  for (int lane = 0; lane < 32; ++lane) {
    uint32_t m = lane / 8, r = lane % 8;
    plain[lane] = 128 * r + 16 * m;
    swizzled[lane] = 128 * r + 16 * (m ^ r);
  }
  EXPECT_EQ(ldmatrixBankConflicts(plain, 4), 28);
  EXPECT_EQ(ldmatrixBankConflicts(plain, 1), 7);
  EXPECT_EQ(ldmatrixBankConflicts(swizzled, 4), 0);
  EXPECT_EQ(ldmatrixBankConflicts(plain, 3), -1);
}

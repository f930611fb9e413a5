//===- WarpgroupOpsTest.cpp - wgmma semantics against a plain GEMM --------===//
//
// Operands are laid out in shared memory in the canonical layouts (every
// swizzle, K-major and MN-major), read through descriptors, multiplied, and
// the accumulator fragment is compared element by element with a
// straightforward row-major GEMM. Register A is packed from the mma.sync
// A fragment of LayoutFunctions.h (each warp: its 16 rows), independently
// of WarpgroupLayouts' formula; the 8-bit register A from CUTLASS's
// ALayout_64x32 spelled out here.
//
//===----------------------------------------------------------------------===//
#include "flashc/Emulator/WarpgroupOps.h"

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Runtime/Float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace flash::emu;
namespace lay = flash::tile::layout;

namespace {

/// A row-major matrix of exact values that fit `type`.
struct Matrix {
  int64_t rows, cols;
  std::vector<double> v;
  double &at(int64_t r, int64_t c) { return v[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

/// Small integers (exact in f16 and bf16, so every sum is exact in f32 and
/// the comparison does not depend on summation order) or random values.
Matrix makeMatrix(int64_t rows, int64_t cols, std::mt19937 &rng,
                  bool integers, ElementType type) {
  Matrix m{rows, cols, std::vector<double>(rows * cols)};
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (double &x : m.v) {
    double v = integers ? small(rng) : real(rng);
    x = type == ElementType::E4M3 ? flash::roundToE4M3(v)
                                  : bits16ToDouble(doubleToBits16(v, type), type);
  }
  return m;
}

/// Stores `m` (rows x cols as the canonical layout takes them) at `base`.
void storeCanonical(SharedMemory &smem, const Matrix &m, lay::SmemSwizzle s,
                    int64_t base, ElementType type) {
  const int64_t bytes = wgmmaElementBytes(type);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) {
      uint16_t bits = type == ElementType::E4M3
                          ? flash::doubleToE4M3Bits(m.at(r, c))
                          : doubleToBits16(m.at(r, c), type);
      int64_t off = lay::canonicalSmemOffset(s, bytes, m.rows, m.cols, r, c);
      ASSERT_TRUE(smem.write(base + off, &bits, bytes).ok());
    }
}

Matrix transpose(const Matrix &m) {
  Matrix t{m.cols, m.rows, std::vector<double>(m.v.size())};
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c)
      t.at(c, r) = m.at(r, c);
  return t;
}

WgmmaAccumulator makeAcc(int64_t n, std::mt19937 &rng, bool integers) {
  WgmmaAccumulator c(n / 2);
  std::uniform_int_distribution<int> small(-50, 50);
  std::uniform_real_distribution<float> real(-3.0f, 3.0f);
  for (auto &reg : c)
    for (float &x : reg)
      x = integers ? float(small(rng)) : real(rng);
  return c;
}

/// C as a row-major 64 x N matrix, through the mma.sync C fragment of each
/// warp (LayoutFunctions.h), repeated every 8 columns.
Matrix accAsMatrix(const WgmmaAccumulator &c, int64_t n) {
  Matrix m{64, n, std::vector<double>(64 * n)};
  lay::MmaParams one;
  for (int64_t t = 0; t < kWarpgroupThreads; ++t)
    for (int64_t i = 0; i < n / 2; ++i) {
      lay::Coord at = lay::mmaCoord<int64_t>(one, lay::MmaRole::Acc, {16, 8},
                                             0, t % 32, i % 4);
      m.at(at[0] + 16 * (t / 32), at[1] + 8 * (i / 4)) = c[i][t];
    }
  return m;
}

/// The reference: D = sa A * sb B + (scaleD ? C : 0), each element summed
/// over k in double and rounded once to f32.
Matrix referenceGemm(const Matrix &a, const Matrix &b, const Matrix &c,
                     const WgmmaConfig &cfg) {
  Matrix d{a.rows, b.cols, std::vector<double>(a.rows * b.cols)};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.cols; ++k)
        s += (cfg.scaleA * a.at(i, k)) * (cfg.scaleB * b.at(k, j));
      if (cfg.scaleD)
        s += c.at(i, j);
      d.at(i, j) = static_cast<float>(s);
    }
  return d;
}

/// Runs one SS wgmma with A (64 x K) and B (K x N) stored canonically
/// (K-major or MN-major as cfg.trans*) and checks it against the reference.
void checkSharedShared(const WgmmaConfig &cfg, lay::SmemSwizzle sA,
                       lay::SmemSwizzle sB, bool integers, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t n = cfg.n, K = wgmmaK(cfg.type);
  const int64_t bytes = wgmmaElementBytes(cfg.type);
  Matrix a = makeMatrix(64, K, rng, integers, cfg.type);
  Matrix b = makeMatrix(K, n, rng, integers, cfg.type);
  WgmmaAccumulator c = makeAcc(n, rng, integers);
  SharedMemory smem(64 * 1024);
  const int64_t baseA = 1024, baseB = 16 * 1024;
  // A K-major: rows = M, cols = K; MN-major: rows = K, cols = M.
  Matrix aStored = cfg.transA ? transpose(a) : a;
  // B K-major ("col"): rows = N, cols = K; MN-major: rows = K, cols = N.
  Matrix bStored = cfg.transB ? b : transpose(b);
  storeCanonical(smem, aStored, sA, baseA, cfg.type);
  storeCanonical(smem, bStored, sB, baseB, cfg.type);
  uint64_t descA = lay::encodeWgmmaDescriptor(lay::wgmmaOperandDescriptor(
      sA, cfg.transA, bytes, aStored.rows, aStored.cols, baseA, 0, 0));
  uint64_t descB = lay::encodeWgmmaDescriptor(lay::wgmmaOperandDescriptor(
      sB, cfg.transB, bytes, bStored.rows, bStored.cols, baseB, 0, 0));
  auto opA = readWgmmaOperand(smem, descA, cfg.transA, 64, cfg.type, "A");
  auto opB = readWgmmaOperand(smem, descB, cfg.transB, n, cfg.type, "B");
  ASSERT_TRUE(opA.ok()) << opA.error();
  ASSERT_TRUE(opB.ok()) << opB.error();
  auto d = wgmmaM64NK16(cfg, *opA, *opB, c);
  ASSERT_TRUE(d.ok()) << d.error();
  Matrix expected = referenceGemm(a, b, accAsMatrix(c, n), cfg);
  Matrix got = accAsMatrix(*d, n);
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(got.at(i, j), expected.at(i, j))
          << "N " << n << " A " << lay::swizzleName(sA)
          << (cfg.transA ? " MN" : " K") << "-major, B "
          << lay::swizzleName(sB) << (cfg.transB ? " MN" : " K")
          << "-major, D(" << i << ", " << j << ")";
}

const lay::SmemSwizzle kSwizzles[] = {
    lay::SmemSwizzle::None, lay::SmemSwizzle::B32, lay::SmemSwizzle::B64,
    lay::SmemSwizzle::B128};

TEST(Wgmma, SharedOperandsInEveryLayoutMatchAPlainGemm) {
  unsigned seed = 1;
  for (int64_t n : {8, 64, 128, 256})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (lay::SmemSwizzle s : kSwizzles) {
          WgmmaConfig cfg;
          cfg.n = n;
          cfg.transA = transA;
          cfg.transB = transB;
          checkSharedShared(cfg, s, s, /*integers=*/true, seed++);
        }
}

TEST(Wgmma, RoundsOnceAndHandlesBf16AndMixedSwizzles) {
  WgmmaConfig cfg;
  cfg.n = 96;
  checkSharedShared(cfg, lay::SmemSwizzle::B128, lay::SmemSwizzle::B64, false,
                    11);
  cfg.type = ElementType::BF16;
  cfg.transB = true;
  checkSharedShared(cfg, lay::SmemSwizzle::B32, lay::SmemSwizzle::B128, false,
                    12);
}

TEST(Wgmma, ScaleDAndInputNegation) {
  WgmmaConfig cfg;
  cfg.n = 32;
  cfg.scaleD = false;
  checkSharedShared(cfg, lay::SmemSwizzle::B64, lay::SmemSwizzle::B64, true, 21);
  cfg.scaleD = true;
  cfg.scaleA = -1;
  checkSharedShared(cfg, lay::SmemSwizzle::B64, lay::SmemSwizzle::B64, true, 22);
  cfg.scaleB = -1;
  checkSharedShared(cfg, lay::SmemSwizzle::B64, lay::SmemSwizzle::B64, true, 23);
}

TEST(Wgmma, ScaleDFalseIgnoresTheOldAccumulator) {
  WgmmaConfig cfg;
  cfg.n = 8;
  cfg.scaleD = false;
  WgmmaOperand a(64 * 16, 1.0), b(8 * 16, 0.5);
  WgmmaAccumulator c(4);
  for (auto &r : c)
    r.fill(NAN);
  auto d = wgmmaM64NK16(cfg, a, b, c);
  ASSERT_TRUE(d.ok());
  for (auto &r : *d)
    for (float x : r)
      EXPECT_EQ(x, 8.0f);
}

TEST(Wgmma, RegisterAIsTheMmaSyncFragmentOfEachWarp) {
  std::mt19937 rng(5);
  Matrix a = makeMatrix(64, 16, rng, false, ElementType::F16);
  WgmmaARegisters regs{};
  lay::MmaParams one;
  for (int64_t t = 0; t < kWarpgroupThreads; ++t)
    for (int64_t r = 0; r < 4; ++r) {
      uint16_t half[2];
      for (int h = 0; h < 2; ++h) {
        lay::Coord at = lay::mmaCoord<int64_t>(one, lay::MmaRole::OperandA,
                                               {16, 16}, 0, t % 32, 2 * r + h);
        half[h] = doubleToBits16(a.at(at[0] + 16 * (t / 32), at[1]),
                                 ElementType::F16);
      }
      regs[r][t] = pack16x2(half[0], half[1]);
    }
  WgmmaOperand op = wgmmaRegisterOperandA(regs, ElementType::F16);
  for (int64_t m = 0; m < 64; ++m)
    for (int64_t k = 0; k < 16; ++k)
      ASSERT_EQ(op[m * 16 + k], a.at(m, k)) << m << ", " << k;
}

// e4m3 (m64nNk32): K-major A and B in every swizzle; small integers (exact
// sums) and random e4m3 values (an exact double sum rounded once to f32).
TEST(Wgmma, E4m3SharedOperandsMatchAPlainGemm) {
  unsigned seed = 101;
  for (int64_t n : {8, 32, 128, 256})
    for (lay::SmemSwizzle s : kSwizzles)
      for (bool integers : {true, false}) {
        WgmmaConfig cfg;
        cfg.n = n;
        cfg.type = ElementType::E4M3;
        checkSharedShared(cfg, s, s, integers, seed++);
      }
}

// Small products that a running f32 sum would drop: the emulator's e4m3 sum
// is exact before its one rounding.
TEST(Wgmma, E4m3SumIsExactBeforeOneRounding) {
  WgmmaConfig cfg;
  cfg.n = 8;
  cfg.type = ElementType::E4M3;
  cfg.scaleD = false;
  // 448 * 448 + 31 * 2^-9: each 2^-9 is below half an f32 ulp of 200704
  // (2^-6), their sum is not.
  WgmmaOperand a(64 * 32, 1.0), b(8 * 32, std::ldexp(1.0, -9));
  for (int64_t m = 0; m < 64; ++m)
    a[m * 32] = 448.0;
  for (int64_t i = 0; i < 8; ++i)
    b[i * 32] = 448.0;
  auto d = wgmmaM64NK16(cfg, a, b, WgmmaAccumulator(4));
  ASSERT_TRUE(d.ok()) << d.error();
  float runningF32 = 448.0f * 448.0f;
  for (int k = 1; k < 32; ++k)
    runningF32 += std::ldexp(1.0f, -9);
  float want = static_cast<float>(448.0 * 448.0 + 31 * std::ldexp(1.0, -9));
  ASSERT_NE(want, runningF32);
  for (auto &r : *d)
    for (float x : r)
      ASSERT_EQ(x, want);
}

// The 8-bit A fragment, packed from CUTLASS's ALayout_64x32 (thread
// (q, g, w), value (v0, v1, v2) -> row 16 w + g + 8 v1, k 4 q + v0 + 16 v2;
// register v1 + 2 v2, byte v0).
TEST(Wgmma, E4m3RegisterAIsCutlassALayout64x32) {
  std::mt19937 rng(7);
  Matrix a = makeMatrix(64, 32, rng, false, ElementType::E4M3);
  WgmmaARegisters regs{};
  for (int64_t t = 0; t < kWarpgroupThreads; ++t) {
    int64_t q = t % 4, g = t % 32 / 4, w = t / 32;
    for (int64_t v2 = 0; v2 < 2; ++v2)
      for (int64_t v1 = 0; v1 < 2; ++v1)
        for (int64_t v0 = 0; v0 < 4; ++v0) {
          uint32_t byte = flash::doubleToE4M3Bits(
              a.at(16 * w + g + 8 * v1, 4 * q + v0 + 16 * v2));
          regs[v1 + 2 * v2][t] |= byte << (8 * v0);
        }
  }
  WgmmaOperand op = wgmmaRegisterOperandA(regs, ElementType::E4M3);
  for (int64_t m = 0; m < 64; ++m)
    for (int64_t k = 0; k < 32; ++k)
      ASSERT_EQ(op[m * 32 + k], a.at(m, k)) << m << ", " << k;
}

TEST(Wgmma, E4m3IsKMajorOnly) {
  WgmmaConfig cfg;
  cfg.n = 64;
  cfg.type = ElementType::E4M3;
  EXPECT_EQ(checkWgmmaConfig(cfg), "");
  cfg.transB = true;
  EXPECT_NE(checkWgmmaConfig(cfg), "");
  cfg.transB = false;
  cfg.transA = true;
  EXPECT_NE(checkWgmmaConfig(cfg), "");
  // k16-sized operands are not an m64nNk32's.
  cfg.transA = false;
  EXPECT_FALSE(wgmmaM64NK16(cfg, WgmmaOperand(64 * 16), WgmmaOperand(64 * 16),
                            WgmmaAccumulator(32))
                   .ok());
}

TEST(Wgmma, RejectsBadConfigs) {
  WgmmaConfig cfg;
  cfg.n = 12;
  EXPECT_NE(checkWgmmaConfig(cfg), "");
  cfg.n = 16;
  cfg.scaleA = 2;
  EXPECT_NE(checkWgmmaConfig(cfg), "");
  cfg.scaleA = 1;
  EXPECT_EQ(checkWgmmaConfig(cfg), "");
  auto d = wgmmaM64NK16(cfg, WgmmaOperand(64 * 16), WgmmaOperand(8 * 16),
                        WgmmaAccumulator(8));
  EXPECT_FALSE(d.ok());
}

TEST(WgmmaDescriptorChecks, ReportsWhatTheEmulatorCannotTrust) {
  lay::WgmmaDescriptor d{1024, 16, 1024, 0, lay::SmemSwizzle::B128};
  EXPECT_TRUE(checkWgmmaDescriptorBits(lay::encodeWgmmaDescriptor(d), "A").ok());
  // A k step inside the first row of an atom is fine.
  d.startAddress = 1024 + 32;
  EXPECT_TRUE(checkWgmmaDescriptorBits(lay::encodeWgmmaDescriptor(d), "A").ok());
  // Starting at row 1 of the pattern needs a base offset.
  d.startAddress = 1024 + 128;
  Status s = checkWgmmaDescriptorBits(lay::encodeWgmmaDescriptor(d), "A");
  EXPECT_NE(s.error().find("first row"), std::string::npos) << s.error();
  d.startAddress = 1024;
  d.baseOffset = 2;
  s = checkWgmmaDescriptorBits(lay::encodeWgmmaDescriptor(d), "B");
  EXPECT_NE(s.error().find("base offset 2"), std::string::npos) << s.error();
  d.baseOffset = 0;
  s = checkWgmmaDescriptorBits(lay::encodeWgmmaDescriptor(d) | 1ull << 47, "B");
  EXPECT_NE(s.error().find("reserved"), std::string::npos) << s.error();
}

TEST(WgmmaDescriptorChecks, EveryAtomStartsOnItsPattern) {
  auto atoms = [](lay::WgmmaDescriptor d, bool mnMajor, int64_t extent) {
    return checkWgmmaOperandAtoms(lay::encodeWgmmaDescriptor(d), mnMajor,
                                  extent, ElementType::F16, "B");
  };
  // K-major 128B: 8-row groups 1024 bytes apart; k steps of 32 bytes inside
  // the first row leave room for the 32-byte row read.
  lay::WgmmaDescriptor k{2048, 16, 1024, 0, lay::SmemSwizzle::B128};
  EXPECT_TRUE(atoms(k, false, 64).ok());
  k.startAddress = 2048 + 96;
  EXPECT_TRUE(atoms(k, false, 64).ok());
  // SBO 1024 + 128: the second group starts on row 1 of its atom.
  k.startAddress = 2048;
  k.strideByteOffset = 1024 + 128;
  Status s = atoms(k, false, 64);
  EXPECT_NE(s.error().find("element (8, 0) starts at 0xc80, 128 bytes into "
                           "a 128B swizzle atom (1024-byte aligned)"),
            std::string::npos)
      << s.error();
  // ... which one group (N 8) never reaches.
  EXPECT_TRUE(atoms(k, false, 8).ok());
  // SBO 2048: every group on its own atom.
  k.strideByteOffset = 2048;
  EXPECT_TRUE(atoms(k, false, 64).ok());
  // K-major 32B: the 32-byte row is the whole span, so only offset 0 fits.
  lay::WgmmaDescriptor k32{256, 16, 256, 0, lay::SmemSwizzle::B32};
  EXPECT_TRUE(atoms(k32, false, 64).ok());
  k32.strideByteOffset = 272;
  s = atoms(k32, false, 64);
  EXPECT_NE(s.error().find("element (8, 0) starts at 0x210, 16 bytes into"),
            std::string::npos)
      << s.error();
  k32.strideByteOffset = 256;
  k32.startAddress = 256 + 16;
  EXPECT_FALSE(atoms(k32, false, 64).ok());
  // MN-major 128B (64 f16 along MN per row): N 128 needs a second block,
  // LBO away, which must be atom-aligned too; SBO steps K by 8 rows.
  lay::WgmmaDescriptor mn{0, 8192, 1024, 0, lay::SmemSwizzle::B128};
  EXPECT_TRUE(atoms(mn, true, 128).ok());
  mn.leadingByteOffset = 8192 + 64;
  s = atoms(mn, true, 128);
  EXPECT_NE(s.error().find("element (64, 0)"), std::string::npos) << s.error();
  EXPECT_TRUE(atoms(mn, true, 64).ok()); // one block: LBO unused
  mn.leadingByteOffset = 8192;
  mn.strideByteOffset = 1024 + 512;
  s = atoms(mn, true, 64);
  EXPECT_NE(s.error().find("element (0, 8)"), std::string::npos) << s.error();
  // MN-major rows narrower than the span (N 16: 32 bytes) may start inside
  // the first row, as K-major k steps do.
  lay::WgmmaDescriptor narrow{32, 0, 1024, 0, lay::SmemSwizzle::B128};
  EXPECT_TRUE(atoms(narrow, true, 16).ok());
  EXPECT_FALSE(atoms(narrow, true, 64).ok());
  // No swizzle: no atoms.
  lay::WgmmaDescriptor plain{16, 256, 128 + 16, 0, lay::SmemSwizzle::None};
  EXPECT_TRUE(atoms(plain, false, 64).ok());
}

TEST(WgmmaDescriptorChecks, ReadsMustBeInBoundsAndWritten) {
  SharedMemory smem(4096);
  std::vector<uint8_t> zeros(2048, 0);
  ASSERT_TRUE(smem.write(0, zeros.data(), 2048).ok());
  // 64 x 16 K-major f16, no swizzle: 2 KB from 0: fine.
  uint64_t desc = lay::encodeWgmmaDescriptor(lay::wgmmaOperandDescriptor(
      lay::SmemSwizzle::None, false, 2, 64, 16, 0, 0, 0));
  EXPECT_TRUE(readWgmmaOperand(smem, desc, false, 64, ElementType::F16, "A").ok());
  // The same at 2048: never written.
  desc = lay::encodeWgmmaDescriptor(lay::wgmmaOperandDescriptor(
      lay::SmemSwizzle::None, false, 2, 64, 16, 2048, 0, 0));
  auto r = readWgmmaOperand(smem, desc, false, 64, ElementType::F16, "A");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("uninitialised"), std::string::npos) << r.error();
  // At 3072, with everything written: runs past the end.
  ASSERT_TRUE(smem.write(2048, zeros.data(), 2048).ok());
  desc = lay::encodeWgmmaDescriptor(lay::wgmmaOperandDescriptor(
      lay::SmemSwizzle::None, false, 2, 64, 16, 3072, 0, 0));
  r = readWgmmaOperand(smem, desc, false, 64, ElementType::F16, "A");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("out of bounds"), std::string::npos) << r.error();
}

TEST(WgmmaQueue, GroupsCompleteOldestFirst) {
  WgmmaQueue q;
  q.issue(1);
  q.issue(2);
  q.commitGroup();
  q.commitGroup(); // empty group
  q.issue(3);
  q.commitGroup();
  q.issue(4); // uncommitted: no wait covers it
  EXPECT_EQ(q.numPendingGroups(), 3u);
  EXPECT_TRUE(q.waitGroup(3).empty());
  EXPECT_EQ(q.waitGroup(1), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(q.isPending(3));
  EXPECT_EQ(q.waitGroup(0), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(q.isPending(4));
  EXPECT_FALSE(q.isPending(1));
  EXPECT_EQ(q.numUncommitted(), 1u);
  EXPECT_TRUE(q.waitGroup(0).empty());
  q.commitGroup();
  EXPECT_EQ(q.waitGroup(0), (std::vector<uint64_t>{4}));
  EXPECT_TRUE(q.empty());
}

} // namespace

//===- WarpgroupLayoutTest.cpp - wgmma fragments, swizzles, descriptors ---===//
//
// Checks dialect/Tile/WarpgroupLayouts.h exhaustively against tables built
// independently of the formulas under test: the fragments from CUTLASS's
// CuTe layouts (CLayout_64xN, ALayout_64x16 of mma_traits_sm90_gmma.hpp)
// and ALayout_64x32 (8-bit A) evaluated by a small generic CuTe layout
// evaluator; the swizzle from the
// bit form of CuTe's Swizzle<B,4,3> and from the PTX ISA's pattern tables;
// operand addresses from the PTX ISA's canonical layouts in CuTe notation;
// descriptor encodings from the PTX ISA's worked examples.
//
//===----------------------------------------------------------------------===//
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

using namespace flash::tile::layout;

namespace {

/// A flat CuTe layout mode list: coordinate index i of a mode of shape
/// (s0, s1, ...) and stride (d0, d1, ...) is decomposed colexicographically
/// (s0 fastest) and mapped to sum(i_j * d_j).
struct CuteMode {
  std::vector<int64_t> shape, stride;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    return n;
  }
  int64_t operator()(int64_t index) const {
    int64_t offset = 0;
    for (size_t j = 0; j < shape.size(); ++j) {
      offset += index % shape[j] * stride[j];
      index /= shape[j];
    }
    return offset;
  }
};

/// A CuTe (thread, value) -> offset layout of an M x N (or M x K) tile
/// stored column-major with M rows: offset = m + M n.
struct CuteTv {
  CuteMode thread, value;
  int64_t rows;
  std::pair<int64_t, int64_t> coord(int64_t t, int64_t v) const {
    int64_t offset = thread(t) + value(v);
    return {offset % rows, offset / rows};
  }
};

/// CUTLASS CLayout_64xN: Shape<Shape<_4,_8,_4>, Shape<_2,_2,N/8>>,
/// Stride<Stride<_128,_1,_16>, Stride<_64,_8,_512>>.
CuteTv cutlassCLayout64xN(int64_t n) {
  return {{{4, 8, 4}, {128, 1, 16}}, {{2, 2, n / 8}, {64, 8, 512}}, 64};
}
/// CUTLASS ALayout_64x16 (16-bit A from registers, m64nNk16): the same
/// thread/value strides over a 64 x 16 tile.
CuteTv cutlassALayout64x16() {
  return {{{4, 8, 4}, {128, 1, 16}}, {{2, 2, 2}, {64, 8, 512}}, 64};
}

/// CUTLASS ALayout_64x32 (8-bit A from registers, m64nNk32) over a 64 x 32
/// tile: Shape<Shape<_4,_8,_4>, Shape<_4,_2,_2>>,
/// Stride<Stride<_256,_1,_16>, Stride<_64,_8,_1024>>.
CuteTv cutlassALayout64x32() {
  return {{{4, 8, 4}, {256, 1, 16}}, {{4, 2, 2}, {64, 8, 1024}}, 64};
}

TEST(WgmmaFragments, AccumulatorMatchesCutlassCLayoutForEveryN) {
  for (int64_t n = 8; n <= 256; n += 8) {
    ASSERT_EQ(checkWgmmaN(n), "");
    CuteTv table = cutlassCLayout64xN(n);
    ASSERT_EQ(table.value.size(), wgmmaAccNumRegisters(n));
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t t = 0; t < kWarpgroupSize; ++t)
      for (int64_t i = 0; i < wgmmaAccNumRegisters(n); ++i) {
        Coord c = wgmmaAccCoord<int64_t>(t, i);
        auto expected = table.coord(t, i);
        ASSERT_EQ(c[0], expected.first) << "N " << n << " t " << t << " reg " << i;
        ASSERT_EQ(c[1], expected.second) << "N " << n << " t " << t << " reg " << i;
        seen.insert({c[0], c[1]});
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 64 * n) << "N " << n;
  }
}

TEST(WgmmaFragments, RejectsNOutsideTheShapeList) {
  for (int64_t n : {0, 4, 12, 260, 264, -8})
    EXPECT_NE(checkWgmmaN(n), "") << n;
}

TEST(WgmmaFragments, RegisterAMatchesCutlassALayout) {
  CuteTv table = cutlassALayout64x16();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t t = 0; t < kWarpgroupSize; ++t)
    for (int64_t e = 0; e < kWgmmaAElements; ++e) {
      Coord c = wgmmaARegCoord<int64_t>(t, e);
      auto expected = table.coord(t, e);
      ASSERT_EQ(c[0], expected.first) << "t " << t << " elem " << e;
      ASSERT_EQ(c[1], expected.second) << "t " << t << " elem " << e;
      seen.insert({c[0], c[1]});
    }
  EXPECT_EQ(seen.size(), 64u * 16u);
}

// Each warp's part is the mma.sync m16n8k16 fragment of LayoutFunctions.h's
// one-atom layout, shifted down by 16 rows per warp.
TEST(WgmmaFragments, EachWarpHoldsTheMmaSyncFragment) {
  MmaParams one;
  for (int64_t t = 0; t < kWarpgroupSize; ++t) {
    int64_t warp = t / kWarpSize, lane = t % kWarpSize;
    for (int64_t i = 0; i < 4; ++i) {
      Coord acc = wgmmaAccCoord<int64_t>(t, i);
      Coord atom = mmaCoord<int64_t>(one, MmaRole::Acc, {16, 8}, 0, lane, i);
      EXPECT_EQ(acc[0], atom[0] + 16 * warp);
      EXPECT_EQ(acc[1], atom[1]);
    }
    for (int64_t e = 0; e < 8; ++e) {
      Coord a = wgmmaARegCoord<int64_t>(t, e);
      Coord atom =
          mmaCoord<int64_t>(one, MmaRole::OperandA, {16, 16}, 0, lane, e);
      EXPECT_EQ(a[0], atom[0] + 16 * warp);
      EXPECT_EQ(a[1], atom[1]);
    }
  }
}

// S = Q K^T's accumulator, converted pairwise to 16 bits, is P's register A
// for P V: accumulator register 8j + e holds A element e of K slice j.
TEST(WgmmaFragments, AccumulatorSlicesAreRegisterAOperands) {
  for (int64_t t = 0; t < kWarpgroupSize; ++t)
    for (int64_t j = 0; j < 256 / 16; ++j)
      for (int64_t e = 0; e < 8; ++e) {
        Coord acc = wgmmaAccCoord<int64_t>(t, 8 * j + e);
        Coord a = wgmmaARegCoord<int64_t>(t, e);
        EXPECT_EQ(acc[0], a[0]);
        EXPECT_EQ(acc[1], a[1] + 16 * j);
      }
}

TEST(WgmmaFragments, Register8BitAMatchesCutlassALayout) {
  CuteTv table = cutlassALayout64x32();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t t = 0; t < kWarpgroupSize; ++t)
    for (int64_t e = 0; e < kWgmmaA8Elements; ++e) {
      Coord c = wgmmaA8RegCoord<int64_t>(t, e);
      auto expected = table.coord(t, e);
      ASSERT_EQ(c[0], expected.first) << "t " << t << " byte " << e;
      ASSERT_EQ(c[1], expected.second) << "t " << t << " byte " << e;
      seen.insert({c[0], c[1]});
    }
  EXPECT_EQ(seen.size(), size_t(64 * kWgmmaAtomK8));
}

// The accumulator does not hold the 8-bit A fragment in wgmma's own K order:
// some thread would need another thread's score (the reason for the key
// relabeling below).
TEST(WgmmaFragments, AccumulatorIsNot8BitAInKeyOrder) {
  int64_t mismatches = 0;
  for (int64_t t = 0; t < kWarpgroupSize; ++t)
    for (int64_t e = 0; e < kWgmmaA8Elements; ++e) {
      Coord a = wgmmaA8RegCoord<int64_t>(t, e);
      bool held = false;
      for (int64_t i = 0; i < wgmmaAccNumRegisters(32); ++i) {
        Coord acc = wgmmaAccCoord<int64_t>(t, i);
        held |= acc[0] == a[0] && acc[1] == a[1];
      }
      mismatches += !held;
    }
  EXPECT_GT(mismatches, 0);
}

TEST(WgmmaFragments, Fp8KeyOrderIsAPermutationOfEachBlock) {
  std::set<int64_t> keys;
  for (int64_t k = 0; k < kWgmmaAtomK8; ++k) {
    int64_t key = fp8PKey(k);
    ASSERT_GE(key, 0);
    ASSERT_LT(key, kWgmmaAtomK8);
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), size_t(kWgmmaAtomK8));
  EXPECT_NE(fp8PKey(2), 2); // not the identity
}

// With keys relabeled by fp8PKey, byte e of P's A registers for key block j
// is accumulator register fp8PAccRegister(j, e) of the same thread: same
// row, column 32 j + fp8PKey(k) where (row, k) is the byte's A coordinate.
TEST(WgmmaFragments, AccumulatorRegistersAreFp8AOperandsUnderTheKeyOrder) {
  for (int64_t n = 32; n <= 256; n += 32) {
    std::set<int64_t> used;
    for (int64_t t = 0; t < kWarpgroupSize; ++t)
      for (int64_t j = 0; j < n / kWgmmaAtomK8; ++j)
        for (int64_t e = 0; e < kWgmmaA8Elements; ++e) {
          int64_t reg = fp8PAccRegister(j, e);
          ASSERT_LT(reg, wgmmaAccNumRegisters(n));
          Coord acc = wgmmaAccCoord<int64_t>(t, reg);
          Coord a = wgmmaA8RegCoord<int64_t>(t, e);
          ASSERT_EQ(acc[0], a[0]) << "t " << t << " block " << j << " byte " << e;
          ASSERT_EQ(acc[1], kWgmmaAtomK8 * j + fp8PKey(a[1]))
              << "t " << t << " block " << j << " byte " << e;
          if (t == 0)
            used.insert(reg);
        }
    // Every score register goes into exactly one byte.
    EXPECT_EQ(int64_t(used.size()), wgmmaAccNumRegisters(n)) << "N " << n;
  }
}

//===----------------------------------------------------------------------===//
// Swizzle
//===----------------------------------------------------------------------===//

const SmemSwizzle kAllSwizzles[] = {SmemSwizzle::None, SmemSwizzle::B32,
                                    SmemSwizzle::B64, SmemSwizzle::B128};

/// CuTe Swizzle<B,4,3> on byte addresses: a ^ ((a & (((1<<B)-1) << 7)) >> 3).
int64_t cuteSwizzle(int64_t a, int bits) {
  int64_t mask = ((int64_t(1) << bits) - 1) << 7;
  return a ^ ((a & mask) >> 3);
}
int cuteBits(SmemSwizzle s) {
  switch (s) {
  case SmemSwizzle::None:
    return 0;
  case SmemSwizzle::B32:
    return 1;
  case SmemSwizzle::B64:
    return 2;
  case SmemSwizzle::B128:
    return 3;
  }
  return 0;
}

TEST(SmemSwizzle, MatchesCuteSwizzleBitForm) {
  for (SmemSwizzle s : kAllSwizzles)
    for (int64_t a = 0; a < 4 * 1024 + 256; ++a)
      ASSERT_EQ(swizzleByteOffset<int64_t>(a, s), cuteSwizzle(a, cuteBits(s)))
          << swizzleName(s) << " address " << a;
}

// PTX ISA 5.5.7's pattern tables: in 128-byte line r, 16-byte chunk c lives
// at chunk c ^ (r mod 8) for 128B, c ^ (r mod 4) for 64B, c ^ (r mod 2) for
// 32B, c for none; the table repeats every 8/4/2/1 lines.
TEST(SmemSwizzle, MatchesPtxPatternTables) {
  std::map<SmemSwizzle, int> linesPerPeriod = {{SmemSwizzle::None, 1},
                                               {SmemSwizzle::B32, 2},
                                               {SmemSwizzle::B64, 4},
                                               {SmemSwizzle::B128, 8}};
  for (SmemSwizzle s : kAllSwizzles) {
    int period = linesPerPeriod[s];
    // table[r][c]: the chunk of line r where logical chunk c is stored.
    std::vector<std::vector<int>> table(period, std::vector<int>(8));
    for (int r = 0; r < period; ++r)
      for (int c = 0; c < 8; ++c)
        table[r][c] = c ^ r;
    for (int64_t line = 0; line < 32; ++line)
      for (int c = 0; c < 8; ++c)
        for (int b = 0; b < 16; b += 5) {
          int64_t logical = line * 128 + c * 16 + b;
          int64_t physical = line * 128 + table[line % period][c] * 16 + b;
          ASSERT_EQ(swizzleByteOffset<int64_t>(logical, s), physical)
              << swizzleName(s) << " line " << line << " chunk " << c;
        }
    EXPECT_EQ(swizzleAtomBytes(s), 8 * swizzleSpanBytes(s));
    EXPECT_EQ(swizzleSpanBytes(s), 16 * swizzlePhases(s));
  }
}

TEST(SmemSwizzle, IsAnInvolutionThatKeepsEachAtom) {
  for (SmemSwizzle s : kAllSwizzles)
    for (int64_t a = 0; a < 4096; ++a) {
      int64_t p = swizzleByteOffset<int64_t>(a, s);
      EXPECT_EQ(swizzleByteOffset<int64_t>(p, s), a);
      EXPECT_EQ(p / swizzleAtomBytes(s), a / swizzleAtomBytes(s));
      EXPECT_EQ(p % 16, a % 16);
    }
}

//===----------------------------------------------------------------------===//
// Canonical layouts
//===----------------------------------------------------------------------===//

// Built from the description of a TMA box image: each span-wide column
// block is a box of `rows` rows of span bytes, stored one after another;
// inside a box, row r is line r * span / 128 (and half, quarter or eighth of
// it), and its chunks go through the pattern table.
int64_t boxImageOffset(SmemSwizzle s, int64_t elemBytes, int64_t rows,
                       int64_t r, int64_t c) {
  int64_t span = swizzleSpanBytes(s);
  int64_t elemsPerSpan = span / elemBytes;
  int64_t box = c / elemsPerSpan;
  int64_t byteInRow = c % elemsPerSpan * elemBytes;
  int64_t boxBase = box * rows * span;
  int64_t rowStart = boxBase + r * span; // logical
  int64_t line = rowStart / 128;
  int64_t chunkInLine = rowStart % 128 / 16 + byteInRow / 16;
  int64_t phases = span / 16;
  int64_t physChunk = chunkInLine ^ (line % phases);
  return line * 128 + physChunk * 16 + byteInRow % 16;
}

TEST(CanonicalSmem, IsTheSwizzledBoxImageAndBijective) {
  for (SmemSwizzle s : kAllSwizzles)
    for (int64_t elemBytes : {1, 2, 4})
      for (int64_t rows : {8, 16, 64, 128})
        for (int64_t cols : {8, 16, 64, 128, 256}) {
          ASSERT_EQ(checkCanonicalSmem(s, elemBytes, rows, cols), "");
          int64_t bytes = canonicalSmemBytes(s, elemBytes, rows, cols);
          std::vector<int> used(bytes, 0);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
              int64_t o = canonicalSmemOffset(s, elemBytes, rows, cols, r, c);
              ASSERT_EQ(o, boxImageOffset(s, elemBytes, rows, r, c))
                  << swizzleName(s) << " " << elemBytes << "B " << rows << "x"
                  << cols << " (" << r << ", " << c << ")";
              ASSERT_GE(o, 0);
              ASSERT_LE(o + elemBytes, bytes);
              for (int64_t b = 0; b < elemBytes; ++b)
                ASSERT_EQ(used[o + b]++, 0);
            }
        }
  EXPECT_NE(checkCanonicalSmem(SmemSwizzle::B128, 2, 12, 64), "");
  EXPECT_NE(checkCanonicalSmem(SmemSwizzle::B128, 3, 8, 64), "");
  EXPECT_NE(checkCanonicalSmem(SmemSwizzle::B128, 2, 8, 0), "");
}

// The swizzle of every f16 head dim (rows of 2 D bytes) is the widest span
// dividing the row, CUTLASS's atoms for FlashAttention-3's head dims.
TEST(WgmmaRowSwizzle, WidestSpanDividingTheRow) {
  const std::map<int64_t, SmemSwizzle> expected = {
      {16, SmemSwizzle::B32},   {32, SmemSwizzle::B64},
      {48, SmemSwizzle::B32},   {64, SmemSwizzle::B128},
      {80, SmemSwizzle::B32},   {96, SmemSwizzle::B64},
      {112, SmemSwizzle::B32},  {128, SmemSwizzle::B128},
      {144, SmemSwizzle::B32},  {160, SmemSwizzle::B64},
      {176, SmemSwizzle::B32},  {192, SmemSwizzle::B128},
      {208, SmemSwizzle::B32},  {224, SmemSwizzle::B64},
      {240, SmemSwizzle::B32},  {256, SmemSwizzle::B128}};
  for (auto [d, s] : expected) {
    std::optional<SmemSwizzle> got = wgmmaRowSwizzle(2 * d);
    ASSERT_TRUE(got.has_value()) << "d " << d;
    EXPECT_EQ(*got, s) << "d " << d << ": " << swizzleName(*got);
    // The row is whole spans, and no wider span divides it.
    int64_t span = swizzleSpanBytes(s);
    EXPECT_EQ(2 * d % span, 0);
    if (span < 128)
      EXPECT_NE(2 * d % (2 * span), 0) << "d " << d;
  }
  // An odd number of 16-byte chunks (8, 24, 40 f16) has no swizzled layout.
  for (int64_t rowBytes : {0, 16, 48, 80, 8})
    EXPECT_FALSE(wgmmaRowSwizzle(rowBytes).has_value()) << rowBytes;
}

// The staging layout (SwizzleParams: !tile.shared's swizzle and block_cols)
// of wgmmaRowSwizzle's choice is exactly the canonical layout wgmma and TMA
// use, at every f16 head dim: the buffer tile-stage-shared allocates is the
// one the descriptors read.
TEST(WgmmaRowSwizzle, StagingLayoutIsTheCanonicalLayout) {
  for (int64_t d = 16; d <= 256; d += 16)
    for (int64_t rows : {16, 64, 80, 128}) {
      SmemSwizzle s = *wgmmaRowSwizzle(2 * d);
      SwizzleParams p = canonicalSwizzleParams(s, 2, rows, 2 * d);
      EXPECT_EQ(p.blockBytes == 0, 2 * d == swizzleSpanBytes(s));
      ASSERT_EQ(checkCanonicalSmem(s, 2, rows, d), "");
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < d; ++c)
          ASSERT_EQ(swizzledOffset<int64_t>(p, r, c),
                    canonicalSmemOffset(s, 2, rows, d, r, c))
              << "d " << d << " rows " << rows << " (" << r << ", " << c
              << ") " << swizzleName(s);
    }
}

// At every head dim, the descriptors the lowering builds read the tile:
// K-major Q and K (k16 slices along the head dim, each inside one column
// block) and MN-major V (N = the head dim in one descriptor whose LBO steps
// from one column block to the next; m64nNk16 allows N up to 256).
TEST(WgmmaRowSwizzle, DescriptorsReadEveryHeadDim) {
  int64_t tileAddress = 2 * 1024;
  for (int64_t d = 16; d <= 256; d += 16) {
    SmemSwizzle s = *wgmmaRowSwizzle(2 * d);
    for (int64_t keys : {16, 64, 80, 128}) {
      // Q K^T: B = K [keys, d] K-major; P V: B = V [keys, d] MN-major.
      for (bool mnMajor : {false, true}) {
        int64_t mnExtent = mnMajor ? d : keys, kExtent = mnMajor ? keys : d;
        int64_t mnStep = mnMajor ? d : std::min<int64_t>(keys, 256);
        for (int64_t k0 = 0; k0 < kExtent; k0 += 16) {
          WgmmaDescriptor desc = wgmmaOperandDescriptor(
              s, mnMajor, 2, keys, d, tileAddress, 0, k0);
          ASSERT_EQ(checkWgmmaDescriptor(desc), "");
          for (int64_t mn = 0; mn < std::min(mnStep, mnExtent); ++mn)
            for (int64_t k = 0; k < 16; ++k) {
              int64_t r = mnMajor ? k0 + k : mn, c = mnMajor ? mn : k0 + k;
              ASSERT_EQ(wgmmaOperandAddress(desc, mnMajor, 2, mn, k),
                        tileAddress + canonicalSmemOffset(s, 2, keys, d, r, c))
                  << "d " << d << " keys " << keys
                  << (mnMajor ? " MN" : " K") << "-major k0 " << k0 << " ("
                  << mn << ", " << k << ")";
            }
        }
      }
    }
  }
}

// Why the swizzle exists: the same 16-byte chunk of 8 consecutive rows of a
// 128B-swizzled tile lies in 8 different 16-byte bank groups.
TEST(CanonicalSmem, Swizzle128ColumnsOfChunksAreConflictFree) {
  for (int64_t c = 0; c < 64; c += 8)
    for (int64_t r0 = 0; r0 < 64; r0 += 8) {
      std::set<int64_t> groups;
      for (int64_t r = r0; r < r0 + 8; ++r)
        groups.insert(
            canonicalSmemOffset(SmemSwizzle::B128, 2, 64, 64, r, c) % 128 / 16);
      EXPECT_EQ(groups.size(), 8u);
    }
}

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

// PTX ISA shared-memory-layout.md worked examples (LBO/SBO in 16-byte units).
TEST(WgmmaDescriptor, PtxWorkedExampleEncodings) {
  struct Example {
    int64_t lbo, sbo;
    uint64_t lboEnc, sboEnc;
  };
  const Example examples[] = {
      {64 * 4, 32 * 4, 16, 8}, // K-major, none, tf32
      {16, 256, 1, 16},        // K-major, 32B, tf32 (LBO "1")
      {512, 1024, 32, 64},     // MN-major, 64B, bf16
      {256, 512, 16, 32},      // MN-major, 32B, bf16
  };
  for (const Example &e : examples) {
    WgmmaDescriptor d;
    d.leadingByteOffset = e.lbo;
    d.strideByteOffset = e.sbo;
    uint64_t bits = encodeWgmmaDescriptor(d);
    EXPECT_EQ(bits >> 16 & 0x3fff, e.lboEnc);
    EXPECT_EQ(bits >> 32 & 0x3fff, e.sboEnc);
  }
}

TEST(WgmmaDescriptor, FieldPositions) {
  WgmmaDescriptor d;
  d.startAddress = 0x3fff0;
  EXPECT_EQ(encodeWgmmaDescriptor(d), 0x3fffull);
  d = {};
  d.leadingByteOffset = 16;
  EXPECT_EQ(encodeWgmmaDescriptor(d), 1ull << 16);
  d = {};
  d.strideByteOffset = 16;
  EXPECT_EQ(encodeWgmmaDescriptor(d), 1ull << 32);
  d = {};
  d.baseOffset = 5;
  EXPECT_EQ(encodeWgmmaDescriptor(d), 5ull << 49);
  d = {};
  const std::pair<SmemSwizzle, uint64_t> codes[] = {{SmemSwizzle::None, 0},
                                                    {SmemSwizzle::B128, 1},
                                                    {SmemSwizzle::B64, 2},
                                                    {SmemSwizzle::B32, 3}};
  for (auto [s, code] : codes) {
    d.swizzle = s;
    EXPECT_EQ(encodeWgmmaDescriptor(d), code << 62) << swizzleName(s);
    EXPECT_EQ(decodeWgmmaDescriptor(code << 62).swizzle, s);
  }
  // All fields together: 128B swizzle, start 0x400, LBO 1 (16 B), SBO 64
  // (1024 B = 8 rows of 128 B).
  EXPECT_EQ(encodeWgmmaDescriptor({0x400, 16, 1024, 0, SmemSwizzle::B128}),
            0x4000004000010040ull);
}

TEST(WgmmaDescriptor, RoundTripsAndChecksFields) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 20000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    uint64_t bits = state & ~wgmmaDescriptorReservedBits(state);
    WgmmaDescriptor d = decodeWgmmaDescriptor(bits);
    EXPECT_EQ(checkWgmmaDescriptor(d), "");
    EXPECT_EQ(encodeWgmmaDescriptor(d), bits);
    EXPECT_EQ(decodeWgmmaDescriptor(state), d); // reserved bits are ignored
  }
  EXPECT_EQ(wgmmaDescriptorReservedBits(1ull << 14 | 1ull << 47 | 1ull << 60),
            1ull << 14 | 1ull << 47 | 1ull << 60);
  EXPECT_NE(checkWgmmaDescriptor({8, 16, 16, 0, SmemSwizzle::None}), "");
  EXPECT_NE(checkWgmmaDescriptor({0, 1 << 18, 16, 0, SmemSwizzle::None}), "");
  EXPECT_NE(checkWgmmaDescriptor({0, 16, 24, 0, SmemSwizzle::None}), "");
  EXPECT_NE(checkWgmmaDescriptor({0, 16, 16, 8, SmemSwizzle::None}), "");
}

//===----------------------------------------------------------------------===//
// Operand addresses
//===----------------------------------------------------------------------===//

/// The PTX ISA's canonical operand layouts (matrix-descriptor tables) in
/// CuTe notation with byte strides, as (mn mode, k mode); the address of
/// (mn, k) is start + mnMode(mn) + kMode(k), then the swizzle.
std::pair<CuteMode, CuteMode> ptxCanonicalLayout(const WgmmaDescriptor &d,
                                                 bool mnMajor,
                                                 int64_t elemBytes,
                                                 int64_t mnExtent) {
  int64_t t = 16 / elemBytes, e = elemBytes;
  int64_t w = swizzleSpanBytes(d.swizzle) / 16;
  int64_t lbo = d.leadingByteOffset, sbo = d.strideByteOffset;
  bool swizzled = d.swizzle != SmemSwizzle::None;
  if (!mnMajor) {
    CuteMode mn{{8, mnExtent / 8}, {(swizzled ? w * t : t) * e, sbo}};
    CuteMode k = swizzled ? CuteMode{{t, 16 / t}, {e, t * e}}
                          : CuteMode{{t, 16 / t}, {e, lbo}};
    return {mn, k};
  }
  if (!swizzled)
    return {CuteMode{{t, 1, mnExtent / t}, {e, t * e, sbo}},
            CuteMode{{8, 2}, {t * e, lbo}}};
  int64_t perSpan = w * t;
  int64_t blocks = std::max<int64_t>(1, mnExtent / perSpan);
  int64_t inSpan = std::min(perSpan, mnExtent);
  return {CuteMode{{t, inSpan / t, blocks}, {e, t * e, lbo}},
          CuteMode{{8, 2}, {w * t * e, sbo}}};
}

TEST(WgmmaOperand, AddressFollowsThePtxCanonicalLayouts) {
  int64_t elemBytes = 2;
  for (SmemSwizzle s : kAllSwizzles)
    for (bool mnMajor : {false, true})
      for (int64_t mnExtent : {64, 128, 256}) {
        // Arbitrary (encodable) strides: the recipe must follow LBO and SBO
        // whatever they are.
        WgmmaDescriptor d{2048 + 32, 4096, 1024 + 128, 0, s};
        auto [mnMode, kMode] =
            ptxCanonicalLayout(d, mnMajor, elemBytes, mnExtent);
        for (int64_t mn = 0; mn < mnExtent; ++mn)
          for (int64_t k = 0; k < 16; ++k) {
            int64_t expected = swizzleByteOffset<int64_t>(
                d.startAddress + mnMode(mn) + kMode(k), s);
            ASSERT_EQ(wgmmaOperandAddress(d, mnMajor, elemBytes, mn, k),
                      expected)
                << swizzleName(s) << (mnMajor ? " MN" : " K") << "-major ("
                << mn << ", " << k << ")";
          }
      }
}

// The descriptor of a slice of a canonical tile reads exactly that slice:
// the recipe through wgmmaOperandDescriptor lands on canonicalSmemOffset.
TEST(WgmmaOperand, DescriptorsOfCanonicalTilesReadTheTile) {
  int64_t elemBytes = 2;
  int64_t tileAddress = 3 * 1024;
  for (SmemSwizzle s : kAllSwizzles)
    for (bool mnMajor : {false, true})
      for (int64_t mnExtent : {64, 128, 192, 256})
        for (int64_t kExtent : {16, 64, 128}) {
          int64_t rows = mnMajor ? kExtent : mnExtent;
          int64_t cols = mnMajor ? mnExtent : kExtent;
          int64_t mnStep = mnMajor ? std::max<int64_t>(
                                         64, swizzleSpanBytes(s) / elemBytes)
                                   : 64;
          for (int64_t mn0 = 0; mn0 < mnExtent; mn0 += mnStep)
            for (int64_t k0 = 0; k0 < kExtent; k0 += 16) {
              WgmmaDescriptor d = wgmmaOperandDescriptor(
                  s, mnMajor, elemBytes, rows, cols, tileAddress, mn0, k0);
              ASSERT_EQ(checkWgmmaDescriptor(d), "");
              ASSERT_EQ(decodeWgmmaDescriptor(encodeWgmmaDescriptor(d)), d);
              int64_t mnCount = std::min<int64_t>(mnStep, mnExtent - mn0);
              for (int64_t mn = 0; mn < mnCount; ++mn)
                for (int64_t k = 0; k < 16; ++k) {
                  int64_t r = mnMajor ? k0 + k : mn0 + mn;
                  int64_t c = mnMajor ? mn0 + mn : k0 + k;
                  ASSERT_EQ(wgmmaOperandAddress(d, mnMajor, elemBytes, mn, k),
                            tileAddress + canonicalSmemOffset(s, elemBytes,
                                                              rows, cols, r, c))
                      << swizzleName(s) << (mnMajor ? " MN" : " K")
                      << "-major " << rows << "x" << cols << " slice (" << mn0
                      << ", " << k0 << ") element (" << mn << ", " << k << ")";
                }
            }
        }
}

// One wgmma reads the whole N extent of B through one descriptor (N up to
// 256): for MN-major B the span-wide column blocks are LBO apart.
TEST(WgmmaOperand, OneDescriptorCoversAllOfN) {
  for (SmemSwizzle s : kAllSwizzles)
    for (int64_t n : {8, 64, 96, 256}) {
      int64_t k = 32;
      for (bool mnMajor : {false, true}) {
        int64_t rows = mnMajor ? k : n, cols = mnMajor ? n : k;
        if (!mnMajor && n % 8 != 0)
          continue;
        WgmmaDescriptor d =
            wgmmaOperandDescriptor(s, mnMajor, 2, rows, cols, 0, 0, 16);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t kk = 0; kk < 16; ++kk) {
            int64_t r = mnMajor ? 16 + kk : j, c = mnMajor ? j : 16 + kk;
            ASSERT_EQ(wgmmaOperandAddress(d, mnMajor, 2, j, kk),
                      canonicalSmemOffset(s, 2, rows, cols, r, c))
                << swizzleName(s) << " N " << n << (mnMajor ? " MN" : " K");
          }
      }
    }
}

} // namespace

//===- LayoutTest.cpp - every layout function, exhaustively ---------------===//
//
// The expected fragments are the PTX ISA's tables for mma.m16n8k16 (see
// docs/ptx-warp-facts.md), written out entry by entry here rather
// than recomputed from the formula under test.
//
//===----------------------------------------------------------------------===//
#include "flashc/Dialect/Tile/LayoutFunctions.h"
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Emulator/WarpOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace flash::tile::layout;

namespace {
using CoordCount = std::map<std::pair<int64_t, int64_t>, int>;

MmaParams mmaParams(std::array<int64_t, 3> warps, std::array<int64_t, 3> values) {
  MmaParams p;
  for (int i = 0; i < 3; ++i) {
    p.warps[i] = warps[i];
    p.values[i] = values[i];
  }
  return p;
}

/// How many (warp, lane, register) triples hold each element; also checks
/// that no thread holds an element twice.
CoordCount countHolders(const MmaParams &mma, MmaRole role,
                        std::array<int64_t, 2> shape) {
  CoordCount count;
  int64_t regs = mmaNumRegisters(mma, role, shape);
  for (int64_t warp = 0; warp < mma.numWarps(); ++warp)
    for (int64_t lane = 0; lane < kWarpSize; ++lane) {
      std::set<std::pair<int64_t, int64_t>> mine;
      for (int64_t reg = 0; reg < regs; ++reg) {
        Coord c = mmaCoord<int64_t>(mma, role, shape, warp, lane, reg);
        EXPECT_GE(c[0], 0);
        EXPECT_LT(c[0], shape[0]);
        EXPECT_GE(c[1], 0);
        EXPECT_LT(c[1], shape[1]);
        EXPECT_TRUE(mine.insert({c[0], c[1]}).second)
            << "warp " << warp << " lane " << lane << " holds (" << c[0]
            << ", " << c[1] << ") twice";
        ++count[{c[0], c[1]}];
      }
    }
  return count;
}

void expectEveryElementHeld(const CoordCount &count,
                            std::array<int64_t, 2> shape, int times) {
  EXPECT_EQ(static_cast<int64_t>(count.size()), shape[0] * shape[1]);
  for (auto &[coord, n] : count)
    EXPECT_EQ(n, times) << "(" << coord.first << ", " << coord.second << ")";
}
} // namespace

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
// offsets of each element from (groupID, 2 * threadID_in_group) for A and C,
// from (2 * threadID_in_group, groupID) for B.
TEST(MmaLayout, SingleAtomMatchesPtxTables) {
  const std::pair<int64_t, int64_t> tableA[8] = {
      {0, 0}, {0, 1}, {8, 0}, {8, 1}, {0, 8}, {0, 9}, {8, 8}, {8, 9}};
  const std::pair<int64_t, int64_t> tableB[4] = {{0, 0}, {1, 0}, {8, 0}, {9, 0}};
  const std::pair<int64_t, int64_t> tableC[4] = {{0, 0}, {0, 1}, {8, 0}, {8, 1}};
  MmaParams atom = mmaParams({1, 1, 1}, {1, 1, 1});
  ASSERT_EQ(mmaNumRegisters(atom, MmaRole::OperandA, {16, 16}), 8);
  ASSERT_EQ(mmaNumRegisters(atom, MmaRole::OperandB, {16, 8}), 4);
  ASSERT_EQ(mmaNumRegisters(atom, MmaRole::Acc, {16, 8}), 4);
  for (int64_t lane = 0; lane < 32; ++lane) {
    int64_t g = lane / 4, q = lane % 4;
    for (int e = 0; e < 8; ++e)
      EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::OperandA, {16, 16}, 0, lane, e),
                Coord({g + tableA[e].first, 2 * q + tableA[e].second}));
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::OperandB, {16, 8}, 0, lane, e),
                Coord({2 * q + tableB[e].first, g + tableB[e].second}));
      EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::Acc, {16, 8}, 0, lane, e),
                Coord({g + tableC[e].first, 2 * q + tableC[e].second}));
    }
  }
  // Spot checks read off the ISA's figures: lane 5 (group 1, thread 1).
  EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::OperandA, {16, 16}, 0, 5, 0), Coord({1, 2}));
  EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::OperandA, {16, 16}, 0, 5, 7), Coord({9, 11}));
  EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::OperandB, {16, 8}, 0, 5, 3), Coord({11, 1}));
  EXPECT_EQ(mmaCoord<int64_t>(atom, MmaRole::Acc, {16, 8}, 0, 31, 3), Coord({15, 7}));
}

TEST(MmaLayout, AccumulatorIsBijectiveOverWarpsValuesAndRepeats) {
  for (auto [warps, values, shape] :
       std::vector<std::tuple<std::array<int64_t, 3>, std::array<int64_t, 3>,
                              std::array<int64_t, 2>>>{
           {{4, 1, 1}, {1, 1, 1}, {64, 8}},
           {{4, 1, 1}, {2, 1, 1}, {128, 64}},
           {{4, 1, 1}, {1, 2, 1}, {128, 128}},
           {{2, 2, 1}, {1, 2, 1}, {64, 64}},
           {{8, 1, 1}, {1, 1, 1}, {128, 16}}}) {
    MmaParams mma = mmaParams(warps, values);
    ASSERT_EQ(checkMmaShape(mma, MmaRole::Acc, shape), "");
    expectEveryElementHeld(countHolders(mma, MmaRole::Acc, shape), shape, 1);
  }
}

TEST(MmaLayout, WarpsAlongMOwnWholeRows) {
  // FlashAttention-2's choice: every row of S lives in one warp, so row
  // reductions need only shuffles inside a quad.
  MmaParams mma = mmaParams({4, 1, 1}, {2, 1, 1});
  std::array<int64_t, 2> shape = {128, 64};
  std::map<int64_t, std::set<int64_t>> warpsOfRow;
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < mmaNumRegisters(mma, MmaRole::Acc, shape); ++reg)
        warpsOfRow[mmaCoord<int64_t>(mma, MmaRole::Acc, shape, warp, lane, reg)[0]]
            .insert(warp);
  for (auto &[row, warps] : warpsOfRow) {
    EXPECT_EQ(warps.size(), 1u) << "row " << row;
    EXPECT_EQ(*warps.begin(), row / 32) << "warp w owns rows 32w..32w+31";
  }
}

TEST(MmaLayout, SmallTilesAreBroadcastAcrossWarps) {
  MmaParams mma = mmaParams({4, 1, 1}, {1, 1, 1});
  std::array<int64_t, 2> shape = {16, 8};
  ASSERT_EQ(checkMmaShape(mma, MmaRole::Acc, shape), "");
  expectEveryElementHeld(countHolders(mma, MmaRole::Acc, shape), shape, 4);
}

TEST(MmaLayout, OperandsAreBijectiveAndBroadcastAlongTheOtherDim) {
  MmaParams mma = mmaParams({2, 2, 1}, {1, 1, 2});
  // A (M x K) is replicated over the 2 warps along N, B (K x N) over the 2
  // warps along M: each warp of a row (column) of warps needs the same data.
  expectEveryElementHeld(countHolders(mma, MmaRole::OperandA, {64, 64}), {64, 64}, 2);
  expectEveryElementHeld(countHolders(mma, MmaRole::OperandB, {64, 32}), {64, 32}, 2);
  MmaParams rows = mmaParams({4, 1, 1}, {2, 1, 1});
  expectEveryElementHeld(countHolders(rows, MmaRole::OperandA, {128, 64}), {128, 64}, 1);
  expectEveryElementHeld(countHolders(rows, MmaRole::OperandB, {64, 64}), {64, 64}, 4);
}

TEST(MmaLayout, AccumulatorToOperandAIsAPureRegisterRepack) {
  // S = Q K^T (accumulator) feeds P V as operand A: with warps along M only,
  // every thread already holds exactly the P elements it needs.
  for (auto values : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 1, 1}, {2, 2, 2}}) {
    MmaParams mma = mmaParams({4, 1, 1}, values);
    std::array<int64_t, 2> shape = {128, 64};
    for (int64_t warp = 0; warp < 4; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane) {
        std::set<std::pair<int64_t, int64_t>> acc, operand;
        for (int64_t r = 0; r < mmaNumRegisters(mma, MmaRole::Acc, shape); ++r) {
          Coord c = mmaCoord<int64_t>(mma, MmaRole::Acc, shape, warp, lane, r);
          acc.insert({c[0], c[1]});
        }
        for (int64_t r = 0; r < mmaNumRegisters(mma, MmaRole::OperandA, shape); ++r) {
          Coord c = mmaCoord<int64_t>(mma, MmaRole::OperandA, shape, warp, lane, r);
          operand.insert({c[0], c[1]});
        }
        EXPECT_EQ(acc, operand) << "warp " << warp << " lane " << lane;
      }
  }
}

TEST(MmaLayout, RejectsOnlyWrongRanksAndSizes) {
  MmaParams mma = mmaParams({4, 1, 1}, {2, 1, 1});
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {48, 64}), "");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::OperandB, {24, 8}), "");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {128}),
            "an MMA layout distributes 2-D tiles, got rank 1");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {16, -1}),
            "dim 1 has no static positive size");
  EXPECT_EQ(checkMmaSliceShape(mma, 1, {16, 16}),
            "a slice of an MMA layout distributes 1-D tiles, got rank 2");
}

namespace {
/// The padded layout of `shape` is the layout of the padded shape, where
/// each thread holds distinct elements; each register's tile coordinate is
/// its padded coordinate wrapped into the tile; every element is held.
void expectPaddedWraps(const MmaParams &mma, MmaRole role,
                       std::array<int64_t, 2> shape) {
  SCOPED_TRACE("shape " + std::to_string(shape[0]) + "x" +
               std::to_string(shape[1]) + " role " +
               std::to_string(static_cast<int>(role)));
  ASSERT_EQ(checkMmaShape(mma, role, shape), "");
  Shape padded = mmaPaddedShape(mma, role, shape);
  int64_t regs = mmaNumRegisters(mma, role, shape);
  std::set<std::pair<int64_t, int64_t>> held;
  for (int64_t warp = 0; warp < mma.numWarps(); ++warp)
    for (int64_t lane = 0; lane < kWarpSize; ++lane) {
      std::set<std::pair<int64_t, int64_t>> mine;
      for (int64_t reg = 0; reg < regs; ++reg) {
        Coord p = mmaCoord<int64_t>(mma, role, shape, warp, lane, reg,
                                    Space::Padded);
        Coord c = mmaCoord<int64_t>(mma, role, shape, warp, lane, reg);
        for (int d = 0; d < 2; ++d) {
          EXPECT_GE(p[d], 0);
          EXPECT_LT(p[d], padded[d]);
          EXPECT_EQ(c[d], p[d] % shape[d]);
        }
        EXPECT_TRUE(mine.insert({p[0], p[1]}).second)
            << "warp " << warp << " lane " << lane << " holds padded ("
            << p[0] << ", " << p[1] << ") twice";
        held.insert({c[0], c[1]});
      }
    }
  EXPECT_EQ(static_cast<int64_t>(held.size()), shape[0] * shape[1]);
}
} // namespace

TEST(MmaLayout, PadsTilesThatDoNotFillAStep) {
  // Any size: rows below the atom (single-token decode), rows that are no
  // multiple of the warps' step (96 rows over 4 x 32), odd K and N.
  MmaParams rows = mmaParams({4, 1, 1}, {2, 1, 1});
  for (std::array<int64_t, 2> shape :
       std::vector<std::array<int64_t, 2>>{{48, 64}, {96, 64}, {1, 64},
                                           {5, 24}, {12, 8}, {130, 40}})
    for (MmaRole role : {MmaRole::Acc, MmaRole::OperandA, MmaRole::OperandB})
      expectPaddedWraps(rows, role, shape);
  expectPaddedWraps(mmaParams({2, 2, 1}, {3, 1, 1}), MmaRole::Acc, {96, 64});
  expectPaddedWraps(mmaParams({1, 4, 1}, {1, 1, 1}), MmaRole::Acc, {7, 24});
  EXPECT_EQ(mmaPaddedShape(rows, MmaRole::Acc, {96, 64}), Shape({128, 64}));
  EXPECT_EQ(mmaPaddedShape(rows, MmaRole::OperandA, {1, 24}), Shape({128, 32}));
  EXPECT_EQ(mmaPaddedShape(rows, MmaRole::Acc, {1, 24}), Shape({1, 24}));
  // Whole copies (a broadcast) are no partial padding.
  EXPECT_TRUE(mmaHoldsWhole(rows, MmaRole::Acc, {128, 64}));
  EXPECT_TRUE(mmaHoldsWhole(rows, MmaRole::Acc, {32, 8}));
  EXPECT_FALSE(mmaHoldsWhole(rows, MmaRole::Acc, {96, 64}));
  EXPECT_FALSE(mmaHoldsWhole(rows, MmaRole::Acc, {128, 12}));
}

TEST(MmaLayout, OnlyTheLastRepeatWraps) {
  // 96 rows over a 64-row step: the first repeat is in the tile, the second
  // wraps rows 96..127 onto 0..31.
  MmaParams mma = mmaParams({4, 1, 1}, {1, 1, 1});
  std::array<int64_t, 2> shape = {96, 8};
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < 8; ++reg) {
        Coord p = mmaCoord<int64_t>(mma, MmaRole::Acc, shape, warp, lane, reg,
                                    Space::Padded);
        EXPECT_EQ(p[0], 16 * warp + lane / 4 + 8 * (reg % 4 / 2) + 64 * (reg / 4));
        EXPECT_EQ(mmaCoord<int64_t>(mma, MmaRole::Acc, shape, warp, lane, reg)[0],
                  p[0] % 96);
      }
}

TEST(MmaSliceLayout, RowVectorsLiveInTheQuadThatOwnsTheRow) {
  MmaParams mma = mmaParams({4, 1, 1}, {2, 2, 1});
  std::array<int64_t, 2> shape = {128, 64};
  std::array<int64_t, 1> rows = {128};
  ASSERT_EQ(checkMmaSliceShape(mma, 1, rows), "");
  ASSERT_EQ(mmaSliceNumRegisters(mma, 1, rows), 4);
  std::map<int64_t, int> holders;
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane) {
      std::set<int64_t> accRows, sliceRows;
      for (int64_t r = 0; r < mmaNumRegisters(mma, MmaRole::Acc, shape); ++r)
        accRows.insert(mmaCoord<int64_t>(mma, MmaRole::Acc, shape, warp, lane, r)[0]);
      for (int64_t r = 0; r < mmaSliceNumRegisters(mma, 1, rows); ++r) {
        int64_t row = mmaSliceCoord<int64_t>(mma, 1, rows, warp, lane, r)[0];
        EXPECT_TRUE(sliceRows.insert(row).second);
        ++holders[row];
      }
      EXPECT_EQ(accRows, sliceRows) << "warp " << warp << " lane " << lane;
    }
  EXPECT_EQ(holders.size(), 128u);
  for (auto &[row, n] : holders)
    EXPECT_EQ(n, 4) << "row " << row << " is held by the 4 lanes of one quad";
}

TEST(MmaSliceLayout, ColumnVectors) {
  MmaParams mma = mmaParams({2, 2, 1}, {1, 1, 1});
  std::array<int64_t, 1> cols = {16};
  ASSERT_EQ(mmaSliceNumRegisters(mma, 0, cols), 2);
  std::map<int64_t, int> holders;
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < 2; ++r)
        ++holders[mmaSliceCoord<int64_t>(mma, 0, cols, warp, lane, r)[0]];
  EXPECT_EQ(holders.size(), 16u);
  for (auto &[col, n] : holders)
    EXPECT_EQ(n, 8 * 2) << "8 groups x 2 warps along M hold column " << col;
  EXPECT_EQ(checkMmaSliceShape(mma, 2, cols),
            "a slice of an MMA layout removes dim 0 or 1, got 2");
}

TEST(BlockedLayout, SixteenBytesPerThreadAndBijective) {
  // f16 rows of 64 elements: 8 contiguous elements (16 bytes) per thread,
  // 8 threads per row, 4 rows per warp, 4 warps.
  BlockedParams blocked{{1, 8}, {4, 8}, {4, 1}, {1, 0}};
  ASSERT_EQ(checkBlocked(blocked), "");
  std::array<int64_t, 2> shape = {128, 64};
  ASSERT_EQ(checkBlockedShape(blocked, shape), "");
  int64_t regs = blockedNumRegisters(blocked, shape);
  ASSERT_EQ(regs, 64);
  CoordCount count;
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < regs; ++reg) {
        Coord c = blockedCoord<int64_t>(blocked, shape, warp, lane, reg);
        ++count[{c[0], c[1]}];
        if (reg % 8 != 0) { // the vector continues along the row
          Coord prev = blockedCoord<int64_t>(blocked, shape, warp, lane, reg - 1);
          EXPECT_EQ(c[0], prev[0]);
          EXPECT_EQ(c[1], prev[1] + 1);
        }
      }
  expectEveryElementHeld(count, shape, 1);
  // Consecutive lanes of a row cover consecutive 16-byte chunks (coalesced).
  EXPECT_EQ(blockedCoord<int64_t>(blocked, shape, 0, 1, 0), Coord({0, 8}));
  EXPECT_EQ(blockedCoord<int64_t>(blocked, shape, 0, 8, 0), Coord({1, 0}));
  EXPECT_EQ(blockedCoord<int64_t>(blocked, shape, 1, 0, 0), Coord({4, 0}));
  EXPECT_EQ(blockedCoord<int64_t>(blocked, shape, 0, 0, 8), Coord({16, 0}));
}

TEST(BlockedLayout, BroadcastsOverSmallDimsAndRejectsBadParams) {
  BlockedParams blocked{{1, 4}, {8, 4}, {2, 1}, {1, 0}};
  std::array<int64_t, 2> shape = {4, 16};
  ASSERT_EQ(checkBlockedShape(blocked, shape), "");
  CoordCount count;
  for (int64_t warp = 0; warp < 2; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < blockedNumRegisters(blocked, shape); ++reg) {
        Coord c = blockedCoord<int64_t>(blocked, shape, warp, lane, reg);
        ++count[{c[0], c[1]}];
      }
  expectEveryElementHeld(count, shape, 4); // 16 rows of threads over 4 rows
  EXPECT_EQ(checkBlocked({{1, 4}, {4, 4}, {2, 1}, {1, 0}}),
            "threadsPerWarp must multiply to 32, got 16");
  EXPECT_EQ(checkBlocked({{1, 4}, {8, 4}, {2, 1}, {1, 1}}),
            "order must be a permutation of the dims");
  EXPECT_EQ(checkBlockedShape(blocked, {4, 6, 2}),
            "the blocked layout has rank 2 but the tile has rank 3");
}

TEST(BlockedLayout, PadsDimsThatDoNotFillAStep) {
  // 6 columns, 4 per thread and 16 per step: padded to 16, the padding holds
  // copies; a thread's registers in the padding wrap onto columns 0..5.
  BlockedParams blocked{{1, 4}, {8, 4}, {2, 1}, {1, 0}};
  std::array<int64_t, 2> shape = {20, 6};
  ASSERT_EQ(checkBlockedShape(blocked, shape), "");
  EXPECT_EQ(blockedPaddedShape(blocked, shape), Shape({32, 16}));
  int64_t regs = blockedNumRegisters(blocked, shape);
  EXPECT_EQ(regs, 8);
  std::set<std::pair<int64_t, int64_t>> held;
  for (int64_t warp = 0; warp < 2; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane) {
      std::set<std::pair<int64_t, int64_t>> mine;
      for (int64_t reg = 0; reg < regs; ++reg) {
        Coord p = blockedCoord<int64_t>(blocked, shape, warp, lane, reg,
                                        Space::Padded);
        Coord c = blockedCoord<int64_t>(blocked, shape, warp, lane, reg);
        EXPECT_TRUE(mine.insert({p[0], p[1]}).second);
        EXPECT_EQ(c, Coord({p[0] % 20, p[1] % 6}));
        held.insert({c[0], c[1]});
      }
    }
  EXPECT_EQ(held.size(), 120u);
  // Rank 3: the same functions.
  BlockedParams cube{{1, 1, 4}, {1, 8, 4}, {2, 1, 1}, {2, 1, 0}};
  ASSERT_EQ(checkBlockedShape(cube, {3, 5, 8}), "");
  std::set<Coord> cells;
  for (int64_t warp = 0; warp < 2; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < blockedNumRegisters(cube, {3, 5, 8}); ++reg)
        cells.insert(blockedCoord<int64_t>(cube, {3, 5, 8}, warp, lane, reg));
  EXPECT_EQ(cells.size(), 3u * 5 * 8);
}

TEST(MmaLayout, AtomRegistersHoldOneWholeAtom) {
  // The registers mmaAtomFirstRegister names hold one 16x16 (A), 16x8 (B) or
  // 16x8 (C) block whose origin is the atom's, in PTX fragment order.
  MmaParams mma = mmaParams({2, 2, 1}, {2, 2, 2});
  struct Case { MmaRole role; std::array<int64_t, 2> shape, atom; int64_t elements; };
  for (Case c : {Case{MmaRole::Acc, {128, 64}, {16, 8}, 4},
                 Case{MmaRole::OperandA, {128, 64}, {16, 16}, 8},
                 Case{MmaRole::OperandB, {64, 64}, {16, 8}, 4}}) {
    auto [atoms0, atoms1] = mmaAtomsPerWarp(mma, c.role, c.shape);
    EXPECT_EQ(atoms0 * atoms1 * c.elements, mmaNumRegisters(mma, c.role, c.shape));
    std::set<int64_t> seen;
    for (int64_t a0 = 0; a0 < atoms0; ++a0)
      for (int64_t a1 = 0; a1 < atoms1; ++a1) {
        int64_t first = mmaAtomFirstRegister(mma, c.role, c.shape, a0, a1);
        EXPECT_TRUE(seen.insert(first).second);
        for (int64_t warp = 0; warp < 4; ++warp) {
          // Lane 0 holds each atom's element 0 at the atom's origin.
          Coord origin = mmaCoord<int64_t>(mma, c.role, c.shape, warp, 0, first);
          EXPECT_EQ(origin[0] % c.atom[0], 0);
          EXPECT_EQ(origin[1] % c.atom[1], 0);
          for (int64_t lane = 0; lane < 32; ++lane)
            for (int64_t e = 0; e < c.elements; ++e) {
              Coord at = mmaCoord<int64_t>(mma, c.role, c.shape, warp, lane, first + e);
              Coord inAtom = mmaCoord<int64_t>(MmaParams(), c.role, c.atom, 0, lane, e);
              EXPECT_EQ(at[0] - origin[0], inAtom[0]);
              EXPECT_EQ(at[1] - origin[1], inAtom[1]);
            }
        }
      }
  }
}

TEST(MmaLayout, SizeOneDimsHoldTheSliceOfTheOtherDim) {
  MmaParams mma = mmaParams({4, 1, 1}, {2, 1, 1});
  ASSERT_EQ(checkMmaShape(mma, MmaRole::Acc, {128, 1}), "");
  ASSERT_EQ(mmaNumRegisters(mma, MmaRole::Acc, {128, 1}),
            mmaSliceNumRegisters(mma, 1, {128}));
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < 4; ++r) {
        EXPECT_EQ(mmaCoord<int64_t>(mma, MmaRole::Acc, {128, 1}, warp, lane, r),
                  Coord({mmaSliceCoord<int64_t>(mma, 1, {128}, warp, lane, r)[0], 0}));
        EXPECT_EQ(mmaCoord<int64_t>(mma, MmaRole::Acc, {1, 8}, warp, lane, r % 2),
                  Coord({0, mmaSliceCoord<int64_t>(mma, 0, {8}, warp, lane, r % 2)[0]}));
      }
}

TEST(MmaLayout, SizeOneDimsBroadcastIntoAnyLayout) {
  // A [1, 1] tile (a per-head scalar) and [1] slices: every thread holds the
  // one element.
  MmaParams mma = mmaParams({4, 1, 1}, {2, 1, 1});
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {1, 1}), "");
  EXPECT_EQ(checkMmaSliceShape(mma, 1, {1}), "");
  int64_t regs = mmaNumRegisters(mma, MmaRole::Acc, {1, 1});
  EXPECT_EQ(regs, 2);
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane) {
      for (int64_t r = 0; r < regs; ++r)
        EXPECT_EQ(mmaCoord<int64_t>(mma, MmaRole::Acc, {1, 1}, warp, lane, r),
                  Coord({0, 0}));
      for (int64_t r = 0; r < mmaSliceNumRegisters(mma, 1, {1}); ++r)
        EXPECT_EQ(mmaSliceCoord<int64_t>(mma, 1, {1}, warp, lane, r),
                  Coord({0}));
    }
  BlockedParams blocked{{1, 4}, {8, 4}, {2, 1}, {1, 0}};
  EXPECT_EQ(blockedNumRegisters(blocked, {1, 1}), 1);
  EXPECT_EQ(blockedCoord<int64_t>(blocked, {1, 1}, 1, 31, 0), Coord({0, 0}));
}

TEST(MmaLayout, AccumulatorFragmentsNameTheRegistersOfEachAtom) {
  // Element i of atom (m, n)'s C fragment is at row g + 8 (i / 2), column
  // 2q + i % 2 of that atom, in padded coordinates; wrapped, it is the
  // element the register names. Along a size-1 dim only the first atom has
  // registers of its own.
  struct Case { std::array<int64_t, 3> warps, values; std::array<int64_t, 2> shape; };
  for (Case c : {Case{{4, 1, 1}, {2, 1, 1}, {128, 64}},
                 Case{{2, 2, 1}, {1, 2, 1}, {32, 40}},
                 Case{{1, 4, 1}, {1, 1, 1}, {1, 64}},
                 Case{{1, 4, 1}, {2, 1, 1}, {1, 8}},
                 Case{{4, 1, 1}, {1, 1, 1}, {64, 1}},
                 Case{{1, 1, 1}, {1, 2, 1}, {1, 1}},
                 Case{{1, 1, 1}, {1, 1, 1}, {5, 8}}}) {
    MmaParams mma = mmaParams(c.warps, c.values);
    SCOPED_TRACE(std::to_string(c.shape[0]) + "x" + std::to_string(c.shape[1]));
    auto [atomsM, atomsN] = mmaAtomsPerWarp(mma, MmaRole::Acc, c.shape);
    std::set<int64_t> covered;
    for (int64_t m = 0; m < atomsM; ++m)
      for (int64_t n = 0; n < atomsN; ++n) {
        auto regs = mmaAccFragment(mma, c.shape, m, n);
        EXPECT_EQ(regs.has_value(), (c.shape[0] != 1 || m == 0) &&
                                        (c.shape[1] != 1 || c.shape[0] == 1 ||
                                         n == 0));
        if (!regs)
          continue;
        for (int64_t warp = 0; warp < mma.numWarps(); ++warp)
          for (int64_t lane = 0; lane < 32; ++lane)
            for (int64_t i = 0; i < 4; ++i) {
              int64_t wm = warp % c.warps[0], wn = warp / c.warps[0] % c.warps[1];
              int64_t vm = m % c.values[0], pm = m / c.values[0];
              int64_t vn = n % c.values[1], pn = n / c.values[1];
              int64_t row = 16 * (wm * c.values[0] + vm + pm * c.values[0] * c.warps[0]) +
                            lane / 4 + 8 * (i / 2);
              int64_t col = 8 * (wn * c.values[1] + vn + pn * c.values[1] * c.warps[1]) +
                            2 * (lane % 4) + i % 2;
              EXPECT_EQ(mmaCoord<int64_t>(mma, MmaRole::Acc, c.shape, warp,
                                          lane, (*regs)[i]),
                        Coord({row % c.shape[0], col % c.shape[1]}))
                  << "atom (" << m << ", " << n << ") c" << i << " warp "
                  << warp << " lane " << lane;
              covered.insert((*regs)[i]);
            }
      }
    EXPECT_EQ(static_cast<int64_t>(covered.size()),
              mmaNumRegisters(mma, MmaRole::Acc, c.shape));
  }
}

TEST(BlockedLayout, SliceHoldsTheParentsKeptCoordinates) {
  BlockedParams blocked{{2, 4}, {4, 8}, {2, 2}, {1, 0}};
  std::array<int64_t, 2> shape = {32, 64};
  for (int64_t dim = 0; dim < 2; ++dim) {
    std::array<int64_t, 1> sliced = {shape[1 - dim]};
    std::array<int64_t, 2> parentShape = shape;
    parentShape[dim] = 1;
    BlockedParams parent = blockedSliceParent(blocked, dim);
    ASSERT_EQ(checkBlockedShape(parent, parentShape), "");
    for (int64_t warp = 0; warp < 4; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane) {
        std::set<int64_t> full, slice;
        for (int64_t r = 0; r < blockedNumRegisters(blocked, shape); ++r)
          full.insert(blockedCoord<int64_t>(blocked, shape, warp, lane, r)[1 - dim]);
        for (int64_t r = 0; r < blockedNumRegisters(parent, parentShape); ++r)
          EXPECT_TRUE(slice.insert(blockedSliceCoord<int64_t>(blocked, dim, sliced, warp, lane, r)[0]).second);
        EXPECT_EQ(full, slice) << "dim " << dim << " warp " << warp << " lane " << lane;
      }
  }
}

//===----------------------------------------------------------------------===//
// Shared memory: swizzled offsets, cp.async chunks, ldmatrix plans. The
// plans are run through the emulator's ldmatrix (lib/Emulator/WarpOps.h,
// the PTX semantics) on a shared tile whose elements hold their own
// coordinates, and its bank-conflict counters must stay at 0.
//===----------------------------------------------------------------------===//

namespace {
/// The default swizzle of a tile with rows of `cols` 16-bit elements.
SwizzleParams defaultSwizzle(int64_t cols) {
  int64_t chunks = cols * 2 / 16;
  bool pow2 = (chunks & (chunks - 1)) == 0;
  if (!pow2)
    return {cols * 2, 2, 1, 1};
  return {cols * 2, 2, std::max<int64_t>(1, 8 / chunks),
          std::min<int64_t>(8, chunks)};
}

mlir::MLIRContext &tileContext() {
  static mlir::MLIRContext ctx;
  ctx.loadDialect<flash::tile::TileDialect>();
  return ctx;
}

struct OperandCase {
  const char *layout;
  int64_t rows, cols; // stored (memory-order) shape
  bool trans;
  int64_t blockCols = 0; // column blocks of that many elements (0: none)
};

/// Byte offsets of the row each thread addresses in each load: [load][thread].
std::vector<std::vector<int64_t>> rowOffsets(const LdMatrixPlan &plan,
                                             const SwizzleParams &swizzle,
                                             int64_t numWarps) {
  std::vector<std::vector<int64_t>> offsets;
  for (int64_t i = 0; i < static_cast<int64_t>(plan.loads.size()); ++i) {
    auto &row = offsets.emplace_back();
    for (int64_t w = 0; w < numWarps; ++w)
      for (int64_t l = 0; l < kWarpSize; ++l) {
        Coord c = ldmatrixRowCoord<int64_t>(
            plan, i, plan.origins[w][plan.loads[i][0]], l);
        row.push_back(swizzledOffset<int64_t>(swizzle, c[0], c[1]));
      }
  }
  return offsets;
}

/// Runs every load of `plan` through the emulator's ldmatrix on a tile of
/// `rows` x `cols` whose elements hold their own row-major index, stored
/// with `swizzle`: each register must get the element `coord` names, and no
/// load may conflict on banks.
void expectPlanReadsLayout(const LdMatrixPlan &plan, const SwizzleParams &swizzle,
                           int64_t rows, int64_t cols, int64_t numWarps,
                           RegisterCoordFn coord) {
  flash::emu::SharedMemory smem(rows * cols * 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_TRUE(smem.store<uint16_t>(swizzledOffset<int64_t>(swizzle, r, c),
                                       static_cast<uint16_t>(r * cols + c))
                      .ok());
  auto offsets = rowOffsets(plan, swizzle, numWarps);
  for (int64_t i = 0; i < static_cast<int64_t>(plan.loads.size()); ++i) {
    const auto &load = plan.loads[i];
    int num = load.size();
    for (int64_t w = 0; w < numWarps; ++w) {
      flash::emu::LaneValues addresses{};
      for (int64_t l = 0; l < kWarpSize; ++l)
        addresses[l] = offsets[i][w * kWarpSize + l];
      EXPECT_EQ(flash::emu::ldmatrixBankConflicts(addresses, num), 0)
          << "load " << i << " warp " << w;
      auto result = flash::emu::ldmatrix(smem, addresses, num, plan.trans);
      ASSERT_TRUE(result.ok()) << result.error();
      for (int m = 0; m < num; ++m)
        for (int64_t l = 0; l < kWarpSize; ++l)
          for (int64_t e = 0; e < 2; ++e) {
            uint32_t v = (*result)[m][l];
            int64_t held = e ? flash::emu::high16(v) : flash::emu::low16(v);
            Coord c = coord(w, l, 2 * load[m] + e);
            EXPECT_EQ(held, c[0] * cols + c[1])
                << "load " << i << " matrix " << m << " warp " << w << " lane "
                << l << " register " << 2 * load[m] + e;
          }
    }
  }
}
} // namespace

TEST(SharedLayout, SwizzledOffsetIsTheSharedTypesByteOffset) {
  mlir::MLIRContext &ctx = tileContext();
  mlir::Type f16 = mlir::Float16Type::get(&ctx);
  const std::array<int64_t, 4> cases[] = {
      {64, 64, 1, 8}, {128, 64, 1, 8}, {64, 128, 1, 8}, {32, 32, 2, 4},
      {16, 16, 4, 2}, {16, 256, 1, 8}, {8, 48, 1, 1}, {64, 64, 2, 4}};
  for (auto [rows, cols, perPhase, maxPhase] : cases) {
    auto type = flash::tile::SharedType::get(&ctx, {2, rows, cols}, f16,
                                             perPhase, maxPhase, 0);
    SwizzleParams swizzle{cols * 2, 2, perPhase, maxPhase};
    std::set<int64_t> seen;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t offset = swizzledOffset<int64_t>(swizzle, r, c);
        EXPECT_EQ(type.getSlotBytes() + offset, type.byteOffset(1, r, c))
            << rows << "x" << cols << " (" << r << ", " << c << ")";
        EXPECT_GE(offset, 0);
        EXPECT_LT(offset, type.getSlotBytes());
        EXPECT_EQ(offset % 2, 0);
        seen.insert(offset);
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), rows * cols);
  }
  // 64 f16 columns, [1, 8]: chunk c of row r is stored at chunk c ^ (r % 8).
  SwizzleParams s{128, 2, 1, 8};
  EXPECT_EQ(swizzledOffset<int64_t>(s, 0, 0), 0);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 1, 0), 128 + 16);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 3, 9), 3 * 128 + 2 * 16 + 2);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 9, 63), 9 * 128 + 6 * 16 + 14);
}

/// The column-blocked layout (!tile.shared's block_cols) built from memory
/// outwards: walk the bytes of a slot in address order, block by block,
/// row by row, physical chunk by chunk, and undo the swizzle to find the
/// element each address holds. Returns the offset of every (r, c),
/// row-major.
std::vector<int64_t> columnBlockedTable(int64_t rows, int64_t cols,
                                        int64_t blockBytes, int64_t perPhase,
                                        int64_t maxPhase) {
  std::vector<int64_t> table(rows * cols, -1);
  int64_t blocks = cols * 2 / blockBytes;
  for (int64_t address = 0; address < rows * cols * 2; address += 2) {
    int64_t block = address / (rows * blockBytes);
    int64_t r = address % (rows * blockBytes) / blockBytes;
    int64_t physChunk = address % blockBytes / 16;
    int64_t chunk = physChunk ^ (r / perPhase % maxPhase);
    int64_t c = (block * blockBytes + chunk * 16 + address % 16) / 2;
    EXPECT_LT(block, blocks);
    table[r * cols + c] = address;
  }
  return table;
}

// Rows longer than the 128-byte swizzle span stored as column blocks: the
// offsets are the type's byteOffset, an independently built table of the
// layout, and wgmma's canonical layout of the same swizzle (one TMA box per
// block), so that cp.async and ldmatrix write and read what wgmma's
// descriptors address.
TEST(SharedLayout, ColumnBlockedOffsetsAreTheTypeTheTableAndWgmmas) {
  mlir::MLIRContext &ctx = tileContext();
  mlir::Type f16 = mlir::Float16Type::get(&ctx);
  struct Case {
    int64_t rows, cols, blockCols, perPhase, maxPhase;
    SmemSwizzle wgmma;
  };
  const Case cases[] = {
      {8, 128, 64, 1, 8, SmemSwizzle::B128},
      {64, 128, 64, 1, 8, SmemSwizzle::B128},
      {128, 128, 64, 1, 8, SmemSwizzle::B128},
      {64, 192, 64, 1, 8, SmemSwizzle::B128},
      {64, 256, 64, 1, 8, SmemSwizzle::B128},
      {128, 256, 64, 1, 8, SmemSwizzle::B128},
      {64, 96, 32, 2, 4, SmemSwizzle::B64},
      {32, 64, 16, 4, 2, SmemSwizzle::B32},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(std::to_string(k.rows) + "x" + std::to_string(k.cols) +
                 " blocks of " + std::to_string(k.blockCols));
    auto type = flash::tile::SharedType::get(
        &ctx, {2, k.rows, k.cols}, f16, k.perPhase, k.maxPhase, k.blockCols);
    ASSERT_EQ(type.getStoredRowBytes(), k.blockCols * 2);
    SwizzleParams swizzle{k.cols * 2, 2, k.perPhase, k.maxPhase,
                          k.blockCols * 2, k.rows};
    std::vector<int64_t> table = columnBlockedTable(
        k.rows, k.cols, k.blockCols * 2, k.perPhase, k.maxPhase);
    for (int64_t r = 0; r < k.rows; ++r)
      for (int64_t c = 0; c < k.cols; ++c) {
        int64_t offset = swizzledOffset<int64_t>(swizzle, r, c);
        ASSERT_EQ(offset, table[r * k.cols + c]) << "(" << r << ", " << c << ")";
        ASSERT_EQ(type.getSlotBytes() + offset, type.byteOffset(1, r, c))
            << "(" << r << ", " << c << ")";
        ASSERT_EQ(offset,
                  canonicalSmemOffset(k.wgmma, 2, k.rows, k.cols, r, c))
            << "(" << r << ", " << c << ")";
      }
  }
  // 128 f16 columns in two blocks of 64: (r, c) of block 1 lies a block
  // (rows x 128 bytes) after (r, c - 64), chunk c % 64 / 8 ^ r % 8.
  SwizzleParams s{256, 2, 1, 8, 128, 64};
  EXPECT_EQ(swizzledOffset<int64_t>(s, 0, 64), 64 * 128);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 1, 64), 64 * 128 + 128 + 16);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 3, 73), 64 * 128 + 3 * 128 + 2 * 16 + 2);
  EXPECT_EQ(swizzledOffset<int64_t>(s, 9, 63), 9 * 128 + 6 * 16 + 14);
}

TEST(SharedLayout, CopyChunksAreCoalescedAndConflictFree) {
  const std::array<int64_t, 3> cases[] = { // rows, cols, threads
      {64, 64, 128}, {128, 64, 128}, {64, 128, 128}, {16, 64, 128},
      {64, 64, 256}, {32, 32, 128}, {16, 256, 128}, {64, 256, 64},
      {16, 16, 256}, {24, 48, 32}, {8, 64, 256}};
  // Rows of whole 128-byte spans also as 128-byte column blocks (cols 0:
  // the default layout).
  std::vector<std::array<int64_t, 4>> all;
  for (auto [rows, cols, threads] : cases) {
    all.push_back({rows, cols, threads, 0});
    if (cols > 64 && cols % 64 == 0)
      all.push_back({rows, cols, threads, 64});
  }
  for (auto [rows, cols, threads, blockCols] : all) {
    SwizzleParams swizzle = defaultSwizzle(cols);
    if (blockCols)
      swizzle = {cols * 2, 2, 1, 8, blockCols * 2, rows};
    int64_t perRow = cols * 2 / 16, chunks = rows * perRow;
    std::set<Coord> seen;
    for (int64_t i = 0; i * threads < chunks; ++i)
      for (int64_t w = 0; w * kWarpSize < threads; ++w) {
        std::vector<std::pair<uint32_t, uint32_t>> access(kWarpSize);
        uint32_t active = 0;
        for (int64_t l = 0; l < kWarpSize; ++l) {
          int64_t tid = w * kWarpSize + l, id = i * threads + tid;
          if (id >= chunks)
            continue;
          Coord c = copyChunkCoord<int64_t>(perRow, threads, tid, i);
          // Row-major chunk order: consecutive lanes, consecutive chunks.
          EXPECT_EQ(c, Coord({id / perRow, id % perRow}))
              << rows << "x" << cols << " tid " << tid << " i " << i;
          EXPECT_TRUE(seen.insert(c).second);
          access[l] = {static_cast<uint32_t>(
                           swizzledOffset<int64_t>(swizzle, c[0], c[1] * 8)),
                       16};
          active |= 1u << l;
        }
        EXPECT_EQ(flash::emu::bankConflicts(access, active), 0)
            << rows << "x" << cols << " over " << threads << " threads, chunk "
            << i << " warp " << w;
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), chunks);
  }
}

// A gathered copy's chunk layout: every chunk copied once, each thread
// holding (in the slice along dim 1) the rows whose indices it needs, the
// same assignment as a window's copy when a row has a power-of-two number of
// chunks (so the same coalescing and conflict-free swizzled stores), and
// nothing when the warps' rows would wrap around the tile.
TEST(GatherChunks, EachChunkOnceAndTheRowsInTheSlice) {
  for (int64_t rows : {16, 32, 64, 128})
    for (int64_t cols = 16; cols <= 256; cols += 16)
      for (int64_t warps : {1, 2, 4, 8}) {
        int64_t perRow = cols * 2 / 16, threads = warps * kWarpSize;
        std::optional<BlockedParams> params =
            gatherChunkParams(rows, perRow, warps);
        int64_t along = std::min<int64_t>(32, perRow & -perRow);
        ASSERT_EQ(params.has_value(), rows % (32 / along * warps) == 0)
            << rows << "x" << cols << " over " << warps << " warps";
        if (!params)
          continue;
        std::array<int64_t, 2> grid = {rows, perRow};
        std::array<int64_t, 1> rowShape = {rows};
        BlockedParams slice = blockedSliceParent(*params, 1);
        std::array<int64_t, 2> sliceShape = {rows, 1};
        ASSERT_EQ(checkBlockedShape(*params, grid), "");
        int64_t regs = blockedNumRegisters(*params, grid);
        ASSERT_EQ(regs * threads, rows * perRow);
        bool pow2 = (perRow & (perRow - 1)) == 0;
        std::set<Coord> seen;
        for (int64_t t = 0; t < threads; ++t) {
          std::set<int64_t> held;
          for (int64_t r = 0; r < blockedNumRegisters(slice, sliceShape); ++r)
            held.insert(blockedSliceCoord<int64_t>(*params, 1, rowShape,
                                                   t / 32, t % 32, r)[0]);
          for (int64_t i = 0; i < regs; ++i) {
            Coord c = blockedCoord<int64_t>(*params, grid, t / 32, t % 32, i);
            EXPECT_TRUE(seen.insert(c).second);
            EXPECT_TRUE(held.count(c[0]))
                << "thread " << t << " copies row " << c[0]
                << " without holding its index";
            if (pow2 && perRow <= 32)
              EXPECT_EQ(c, copyChunkCoord<int64_t>(perRow, threads, t, i));
          }
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), rows * perRow);
      }
}

TEST(LdMatrixPlan, ReproducesEveryOperandLayoutWithoutBankConflicts) {
  // FlashAttention-2's TiledMMA and others. Stored shapes are the tiles'
  // memory order: K^T (transposed B) is stored [N, K], V (B) [K, N].
  const OperandCase cases[] = {
      {"#tile.dot_op<0, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 128, 64, false},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>, transposed = true>", 64, 64, false},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 64, 64, true},
      {"#tile.dot_op<0, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 64, 128, false},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>, transposed = true>", 64, 128, false},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 64, 128, true},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 16, 64, true},
      {"#tile.dot_op<0, #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>>", 128, 64, false},
      {"#tile.dot_op<1, #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>, transposed = true>", 64, 64, false},
      {"#tile.dot_op<0, #tile.mma<warps = [1, 1, 1], values = [2, 1, 1]>>", 32, 64, false},
      {"#tile.dot_op<1, #tile.mma<warps = [1, 1, 1], values = [2, 1, 1]>>", 64, 16, true},
      {"#tile.dot_op<0, #tile.mma<warps = [2, 2, 1], values = [1, 2, 1]>>", 32, 32, false},
      {"#tile.dot_op<1, #tile.mma<warps = [2, 2, 1], values = [1, 2, 1]>>", 32, 32, true},
      {"#tile.dot_op<1, #tile.mma<warps = [2, 2, 1], values = [1, 2, 1]>, transposed = true>", 32, 32, false},
      {"#tile.dot_op<0, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>, transposed = true>", 16, 16, true},
      {"#tile.dot_op<1, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>>", 16, 8, true},
      {"#tile.dot_op<1, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>, transposed = true>", 8, 16, false},
      // sm_90a's column-blocked buffers of 256- and 512-byte rows, read by
      // ldmatrix where wgmma does not read them (Q of the RS form).
      {"#tile.dot_op<0, #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>>", 128, 128, false, 64},
      {"#tile.dot_op<0, #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>>", 64, 256, false, 64},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>, transposed = true>", 64, 128, false, 64},
      {"#tile.dot_op<1, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>", 64, 128, true, 64},
  };
  mlir::MLIRContext &ctx = tileContext();
  for (const OperandCase &tc : cases) {
    SCOPED_TRACE(std::string(tc.layout) + " " + std::to_string(tc.rows) + "x" +
                 std::to_string(tc.cols));
    mlir::Attribute layout = mlir::parseAttribute(tc.layout, &ctx);
    ASSERT_TRUE(layout);
    auto operand = mlir::cast<flash::tile::DotOperandLayoutAttr>(layout);
    int64_t numWarps = operand.getParent().getParams().numWarps();
    std::array<int64_t, 2> shape = {tc.rows, tc.cols};
    int64_t regs = mlir::cast<flash::tile::LayoutAttrInterface>(layout)
                       .getNumRegisters(shape);
    auto coord = [&](int64_t w, int64_t l, int64_t r) {
      return flash::tile::layoutCoord<int64_t>(layout, shape, w, l, r);
    };
    std::optional<LdMatrixPlan> plan = planLdMatrix(regs, numWarps, coord);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->trans, tc.trans);
    std::vector<int> readCount(regs / 2, 0);
    for (auto &load : plan->loads) {
      EXPECT_EQ(load.size(), std::min<size_t>(4, regs / 2));
      for (int64_t p : load)
        ++readCount[p];
    }
    EXPECT_TRUE(llvm::all_of(readCount, [](int n) { return n == 1; }));

    SwizzleParams swizzle = defaultSwizzle(tc.cols);
    if (tc.blockCols)
      swizzle = {tc.cols * 2, 2, 1, 8, tc.blockCols * 2, tc.rows};
    expectPlanReadsLayout(*plan, swizzle, tc.rows, tc.cols, numWarps, coord);
    auto offsets = rowOffsets(*plan, swizzle, numWarps);
    for (int64_t i = 0; i < static_cast<int64_t>(plan->loads.size()); ++i)
      // One per-thread address for all loads: an xor and an immediate.
      EXPECT_TRUE(relateByXorAdd(offsets[0], offsets[i], 16 * swizzle.maxPhase))
          << "load " << i;
  }
}

TEST(LdMatrixPlan, ReadsAPaddedStepInNarrowerLoads) {
  // K of a backward pass's dQ share at head dim 176 (B, [keys, 176]) on 8
  // warps, four along N: the last 32-column step overhangs the tile, and
  // the columns of warps 2 and 3 wrap onto 0..15, so the matrices of that
  // step do not lie where the other warps' do. The pairs that do still go
  // four to an ldmatrix; those that do not, in narrower ones.
  const OperandCase tc = {
      "#tile.dot_op<1, #tile.mma<warps = [2, 4, 1], values = [1, 1, 1]>>", 128, 176, true, 16};
  mlir::MLIRContext &ctx = tileContext();
  mlir::Attribute layout = mlir::parseAttribute(tc.layout, &ctx);
  ASSERT_TRUE(layout);
  std::array<int64_t, 2> shape = {tc.rows, tc.cols};
  int64_t regs = mlir::cast<flash::tile::LayoutAttrInterface>(layout)
                     .getNumRegisters(shape);
  auto coord = [&](int64_t w, int64_t l, int64_t r) {
    return flash::tile::layoutCoord<int64_t>(layout, shape, w, l, r);
  };
  std::optional<LdMatrixPlan> plan = planLdMatrix(regs, 8, coord);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->trans);
  std::vector<int> readCount(regs / 2, 0);
  size_t narrow = 0, wide = 0;
  for (auto &load : plan->loads) {
    (load.size() == 4 ? wide : narrow) += 1;
    for (int64_t p : load)
      ++readCount[p];
  }
  EXPECT_TRUE(llvm::all_of(readCount, [](int n) { return n == 1; }));
  EXPECT_GT(wide, 0u);
  EXPECT_GT(narrow, 0u);
  // The wgmma operand buffer of 352-byte rows: 16-column blocks, [4, 2].
  SwizzleParams swizzle = {tc.cols * 2, 2, 4, 2, tc.blockCols * 2, tc.rows};
  expectPlanReadsLayout(*plan, swizzle, tc.rows, tc.cols, 8, coord);
}

TEST(LdMatrixPlan, RejectsLayoutsThatAreNotMatrixFragments) {
  // A blocked layout holds 8 consecutive columns per thread.
  BlockedParams blocked{{1, 8}, {4, 8}, {4, 1}, {1, 0}};
  std::array<int64_t, 2> shape = {64, 64};
  EXPECT_FALSE(planLdMatrix(blockedNumRegisters(blocked, shape), 4,
                            [&](int64_t w, int64_t l, int64_t r) {
                              return blockedCoord<int64_t>(blocked, shape, w,
                                                           l, r);
                            })
                   .has_value());
}

TEST(SharedLayout, RelateByXorAdd) {
  std::vector<int64_t> from = {0, 16, 32, 48, 128};
  EXPECT_EQ(relateByXorAdd(from, {64, 80, 96, 112, 192}, 128)->add, 64);
  auto x = relateByXorAdd(from, {2064, 2048, 2096, 2080, 2192}, 128);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->xorMask, 16);
  EXPECT_EQ(x->add, 2048);
  EXPECT_FALSE(relateByXorAdd(from, {0, 0, 0, 0, 0}, 128).has_value());
  // The xor stays inside the swizzled chunk bits.
  EXPECT_FALSE(relateByXorAdd({0, 256}, {512, 768 + 512}, 128).has_value());
}

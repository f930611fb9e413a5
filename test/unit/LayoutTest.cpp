//===- LayoutTest.cpp - every layout function, exhaustively ---------------===//
//
// The expected fragments are the PTX ISA's tables for mma.m16n8k16 (see
// shared/reference/ptx-warp-ops.md), written out entry by entry here rather
// than recomputed from the formula under test.
//
//===----------------------------------------------------------------------===//
#include "dialect/Tile/LayoutFunctions.h"

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

TEST(MmaLayout, RejectsShapesItCannotDistribute) {
  MmaParams mma = mmaParams({4, 1, 1}, {2, 1, 1});
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {48, 64}),
            "M size 48 must be a positive multiple of 32 (atom 16 x 2 values per warp)");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {96, 64}),
            "M size 96 and the layout's step 128 must divide one another");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::OperandB, {24, 8}),
            "K size 24 must be a positive multiple of 16 (atom 16 x 1 values per warp)");
  EXPECT_EQ(checkMmaShape(mma, MmaRole::Acc, {128}),
            "an MMA layout distributes 2-D tiles, got rank 1");
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
  EXPECT_EQ(checkBlockedShape(blocked, {4, 6}),
            "dim 1 of size 6 does not fit the blocked layout (4 per thread, 16 per step)");
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

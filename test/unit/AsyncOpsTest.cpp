//===- AsyncOpsTest.cpp - mbarrier, named barriers, tensor maps, boxes ----===//
//
// The MLIR-free state machines of flashc/Emulator/AsyncOps.h against the
// facts of shared/reference/ptx-hopper.md sections 2-4.
//
//===----------------------------------------------------------------------===//

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Emulator/AsyncOps.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

using namespace flash::emu;

namespace {

bool has(const Status &s, const std::string &text) {
  return !s.ok() && s.error().find(text) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

TEST(Mbarrier, InitSetsPhaseZeroAndCounts) {
  Mbarrier b;
  EXPECT_FALSE(b.live());
  ASSERT_TRUE(b.init(3).ok());
  EXPECT_TRUE(b.live());
  EXPECT_EQ(b.phase(), 0);
  EXPECT_EQ(b.pending(), 3);
  EXPECT_EQ(b.expected(), 3);
  EXPECT_EQ(b.tx(), 0);
}

TEST(Mbarrier, ExpectArrivalAddsOneToThePhase) {
  // cp.async.mbarrier.arrive without .noinc: one more arrival expected in
  // this phase only, which the tracked copies' arrival takes back.
  Mbarrier b;
  ASSERT_TRUE(b.init(1).ok());
  ASSERT_TRUE(b.expectArrival().ok());
  EXPECT_EQ(b.pending(), 2);
  EXPECT_EQ(b.expected(), 1);
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_EQ(b.phase(), 0);
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_EQ(b.phase(), 1);
  EXPECT_EQ(b.pending(), 1);
  Mbarrier dead;
  EXPECT_TRUE(has(dead.expectArrival(), "not initialised"));
}

TEST(Mbarrier, InitRangeAndLiveness) {
  Mbarrier b;
  EXPECT_TRUE(has(b.init(0), "outside [1, 2^20 - 1]"));
  EXPECT_TRUE(has(b.init(kMbarrierMaxCount + 1), "outside"));
  ASSERT_TRUE(b.init(kMbarrierMaxCount).ok());
  EXPECT_TRUE(has(b.init(1), "init of a live mbarrier"));
  ASSERT_TRUE(b.inval().ok());
  EXPECT_TRUE(has(b.inval(), "not live"));
  EXPECT_TRUE(b.init(1).ok());
}

TEST(Mbarrier, PhaseCompletesWhenArrivalsAndTxAreDone) {
  Mbarrier b;
  ASSERT_TRUE(b.init(2).ok());
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_EQ(b.phase(), 0);
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_EQ(b.phase(), 1);
  EXPECT_EQ(b.pending(), 2); // reset to expected
  EXPECT_TRUE(b.unobserved());
  b.observe();
  // expect_tx then the arrival: the phase waits for the bytes.
  ASSERT_TRUE(b.expectTx(256).ok());
  ASSERT_TRUE(b.arrive(2).ok());
  EXPECT_EQ(b.phase(), 1);
  EXPECT_EQ(b.pending(), 0);
  ASSERT_TRUE(b.completeTx(128).ok());
  EXPECT_EQ(b.phase(), 1);
  ASSERT_TRUE(b.completeTx(128).ok());
  EXPECT_EQ(b.phase(), 2);
}

TEST(Mbarrier, TxCountIsSigned) {
  // A TMA may complete before the expect_tx is posted: tx goes negative and
  // the phase completes only once the arrival is in.
  Mbarrier b;
  ASSERT_TRUE(b.init(1).ok());
  ASSERT_TRUE(b.completeTx(64).ok());
  EXPECT_EQ(b.tx(), -64);
  EXPECT_EQ(b.phase(), 0);
  ASSERT_TRUE(b.expectTx(64).ok());
  EXPECT_EQ(b.phase(), 0); // tx back to 0 but one arrival pending
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_EQ(b.phase(), 1);
}

TEST(Mbarrier, TxRange) {
  Mbarrier b;
  ASSERT_TRUE(b.init(1).ok());
  ASSERT_TRUE(b.expectTx(kMbarrierMaxCount).ok());
  EXPECT_TRUE(has(b.expectTx(1), "overflows the tx-count"));
  Mbarrier c;
  ASSERT_TRUE(c.init(1).ok());
  ASSERT_TRUE(c.completeTx(kMbarrierMaxCount).ok());
  EXPECT_TRUE(has(c.completeTx(1), "underflows the tx-count"));
}

TEST(Mbarrier, ArrivalUnderflowAndOverArrival) {
  Mbarrier b;
  ASSERT_TRUE(b.init(2).ok());
  EXPECT_TRUE(has(b.arrive(3), "underflows the pending arrival count"));
  // Pending 0 while bytes are outstanding: one more arrival underflows.
  ASSERT_TRUE(b.expectTx(16).ok());
  ASSERT_TRUE(b.arrive(2).ok());
  EXPECT_TRUE(has(b.arrive(1), "underflows"));
  // A completed phase nobody waited for: an arrival on the next one is an
  // over-arrival.
  ASSERT_TRUE(b.completeTx(16).ok());
  EXPECT_TRUE(has(b.arrive(1), "before any wait observed phase 0"));
  b.observe();
  EXPECT_TRUE(b.arrive(1).ok());
}

TEST(Mbarrier, ArriveDropLowersLaterPhases) {
  Mbarrier b;
  ASSERT_TRUE(b.init(3).ok());
  ASSERT_TRUE(b.arrive(1, /*drop=*/true).ok());
  EXPECT_EQ(b.expected(), 2);
  EXPECT_EQ(b.pending(), 2);
  ASSERT_TRUE(b.arrive(2).ok());
  EXPECT_EQ(b.phase(), 1);
  EXPECT_EQ(b.pending(), 2);
}

TEST(Mbarrier, ParityTestIsAgainstTheCurrentPhase) {
  Mbarrier b;
  ASSERT_TRUE(b.init(1).ok());
  // Phase 0 current: parity 0 is incomplete, parity 1 is "the preceding
  // phase" (a producer's first wait on a fresh barrier passes).
  EXPECT_FALSE(b.parityDone(0));
  EXPECT_TRUE(b.parityDone(1));
  ASSERT_TRUE(b.arrive(1).ok());
  EXPECT_TRUE(b.parityDone(0));
  EXPECT_FALSE(b.parityDone(1));
}

TEST(Mbarrier, PhaseMeantByAWaiter) {
  // A consumer that has seen nothing waits on parity 0: phase 0.
  EXPECT_EQ(phaseMeant(0, 0), 0);
  // A producer starting with parity 1 on a fresh barrier: phase -1, done.
  EXPECT_EQ(phaseMeant(0, 1), -1);
  EXPECT_EQ(phaseMeant(1, 1), 1);
  EXPECT_EQ(phaseMeant(1, 0), 0);
  EXPECT_EQ(phaseMeant(4, 0), 4);
  EXPECT_EQ(phaseMeant(4, 1), 3);
}

//===----------------------------------------------------------------------===//
// Named barriers
//===----------------------------------------------------------------------===//

TEST(NamedBarrier, CompletesWhenCountThreadsArrive) {
  NamedBarrier nb;
  bool done;
  ASSERT_TRUE(nb.arrive(0, 32, 96, done).ok());
  EXPECT_FALSE(done);
  ASSERT_TRUE(nb.arrive(2, 32, 96, done).ok());
  EXPECT_FALSE(done);
  EXPECT_EQ(nb.arrived(), 64);
  ASSERT_TRUE(nb.arrive(1, 32, 96, done).ok());
  EXPECT_TRUE(done);
  EXPECT_EQ(nb.arrived(), 0);
  // Reusable at once, by the same warps.
  ASSERT_TRUE(nb.arrive(0, 32, 64, done).ok());
  EXPECT_FALSE(done);
}

TEST(NamedBarrier, Errors) {
  NamedBarrier nb;
  bool done;
  EXPECT_TRUE(has(nb.arrive(0, 32, 48, done), "not a positive multiple of 32"));
  ASSERT_TRUE(nb.arrive(0, 32, 128, done).ok());
  EXPECT_TRUE(has(nb.arrive(0, 32, 128, done), "arrives twice"));
  EXPECT_TRUE(has(nb.arrive(1, 32, 64, done), "differs"));
  NamedBarrier small;
  ASSERT_TRUE(small.arrive(0, 32, 32, done).ok());
  EXPECT_TRUE(done);
  NamedBarrier partial; // a CTA's last warp of 16 threads counts 16
  ASSERT_TRUE(partial.arrive(0, 32, 32, done).ok());
  ASSERT_TRUE(partial.arrive(1, 16, 64, done).ok());
  EXPECT_FALSE(done);
  EXPECT_EQ(partial.arrived(), 16);
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

/// A 2-D f16 tensor of rows x cols (row-major) and a box of boxRows x
/// boxCols.
TensorMap map2d(uint64_t rows, uint64_t cols, uint32_t boxRows,
                uint32_t boxCols, TmaSwizzle s = TmaSwizzle::None) {
  TensorMap m;
  m.type = TmaDataType::F16;
  m.rank = 2;
  m.globalAddress = 0x1000;
  m.globalDim = {cols, rows, 1, 1, 1};
  m.globalStrides = {cols * 2, 0, 0, 0};
  m.boxDim = {boxCols, boxRows, 1, 1, 1};
  m.swizzle = s;
  return m;
}

TEST(TensorMap, DriverRules) {
  EXPECT_TRUE(validateTensorMap(map2d(128, 64, 64, 64)).ok());
  auto bad = [](auto edit, const std::string &text) {
    TensorMap m = map2d(128, 64, 64, 64);
    edit(m);
    Status s = validateTensorMap(m);
    EXPECT_TRUE(has(s, text)) << (s.ok() ? "accepted" : s.error());
  };
  bad([](TensorMap &m) { m.rank = 0; }, "rank 0 is outside 1..5");
  bad([](TensorMap &m) { m.rank = 6; }, "rank 6");
  bad([](TensorMap &m) { m.globalAddress = 0x1008; },
      "not 16-byte aligned");
  // 36 f16 columns: a row stride of 72 bytes.
  bad([](TensorMap &m) { m.globalStrides[0] = 72; },
      "dimension 1 stride of 72 bytes is not a multiple of 16");
  bad([](TensorMap &m) { m.globalStrides[0] = uint64_t(1) << 40; },
      "not below 2^40");
  bad([](TensorMap &m) { m.globalDim[1] = 0; }, "size 0 is outside");
  bad([](TensorMap &m) { m.boxDim[1] = 257; }, "box size 257");
  bad([](TensorMap &m) { m.boxDim[0] = 4; },
      "inner box dimension is 8 bytes, not a multiple of 16");
  bad([](TensorMap &m) { m.elementStrides[1] = 9; }, "element stride 9");
  bad([](TensorMap &m) { m.interleave = TmaInterleave::B16; },
      "interleaved");
  bad(
      [](TensorMap &m) {
        m.swizzle = TmaSwizzle::B64; // 64 f16 = 128 bytes > 64
      },
      "more than the 64-byte swizzle span");
  bad(
      [](TensorMap &m) {
        m.type = TmaDataType::I32;
        m.boxDim[0] = 32;
        m.oobFill = TmaOobFill::NanRequestZeroFma;
      },
      "NaN out-of-bounds fill needs a floating-point type");
  // At the span is fine.
  TensorMap ok = map2d(128, 64, 64, 64, TmaSwizzle::B128);
  EXPECT_TRUE(validateTensorMap(ok).ok());
}

TEST(TensorMap, EncodeDecodeRoundTrip) {
  TensorMap m = map2d(100, 64, 32, 64, TmaSwizzle::B128);
  m.rank = 3;
  m.globalDim[2] = 7;
  m.globalStrides[1] = 100 * 64 * 2;
  m.boxDim[2] = 2;
  m.elementStrides = {1, 2, 1, 1, 1};
  m.oobFill = TmaOobFill::NanRequestZeroFma;
  m.type = TmaDataType::BF16;
  uint8_t bytes[kTensorMapBytes];
  encodeTensorMap(m, bytes);
  auto d = decodeTensorMap(bytes);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d->type, m.type);
  EXPECT_EQ(d->rank, 3);
  EXPECT_EQ(d->globalAddress, m.globalAddress);
  EXPECT_EQ(d->globalDim, m.globalDim);
  EXPECT_EQ(d->globalStrides, m.globalStrides);
  EXPECT_EQ(d->boxDim, m.boxDim);
  EXPECT_EQ(d->elementStrides, m.elementStrides);
  EXPECT_EQ(d->swizzle, m.swizzle);
  EXPECT_EQ(d->oobFill, m.oobFill);
  uint8_t zeros[kTensorMapBytes] = {};
  EXPECT_FALSE(decodeTensorMap(zeros).ok());
}

TEST(TensorMap, BoxBytesCountElementStrides) {
  TensorMap m = map2d(128, 64, 16, 64);
  EXPECT_EQ(boxBytes(m), 16 * 64 * 2);
  m.elementStrides[1] = 3; // ceil(16 / 3) = 6 rows
  EXPECT_EQ(boxExtent(m, 1), 6);
  EXPECT_EQ(boxBytes(m), 6 * 64 * 2);
  m.elementStrides[0] = 4; // ignored without interleave
  EXPECT_EQ(boxExtent(m, 0), 64);
}


TEST(TensorMap, FromASpecOverARowMajorTensor) {
  TensorMapSpec spec;
  spec.name = "K.tmap";
  spec.tensor = "K";
  spec.box = {1, 64, 64}; // [B*H, N, d] box of one head, 64 rows, 64 cols
  spec.swizzle = TmaSwizzle::B128;
  auto m = tensorMapFor(spec, TmaDataType::BF16, {6, 200, 64}, 0x7000);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->rank, 3);
  EXPECT_EQ(m->globalDim[0], 64u);
  EXPECT_EQ(m->globalDim[1], 200u);
  EXPECT_EQ(m->globalDim[2], 6u);
  EXPECT_EQ(m->globalStrides[0], 128u);
  EXPECT_EQ(m->globalStrides[1], 200u * 128);
  EXPECT_EQ(m->boxDim[0], 64u);
  EXPECT_EQ(m->boxDim[1], 64u);
  EXPECT_EQ(m->boxDim[2], 1u);
  auto odd = tensorMapFor(spec, TmaDataType::BF16, {6, 200, 36}, 0x7000);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error(), "tensor map 'K.tmap' of 'K': dimension 1 stride of "
                         "72 bytes is not a multiple of 16");
  auto rank = tensorMapFor(spec, TmaDataType::BF16, {200, 64}, 0x7000);
  EXPECT_FALSE(rank.ok());
  EXPECT_NE(rank.error().find("a box of rank 3 for a tensor of rank 2"),
            std::string::npos);
  TmaSwizzle s;
  EXPECT_TRUE(parseTmaSwizzle("64B", s));
  EXPECT_EQ(s, TmaSwizzle::B64);
  EXPECT_FALSE(parseTmaSwizzle("96B", s));
  TmaOobFill f;
  EXPECT_TRUE(parseTmaOobFill("nan", f));
  EXPECT_EQ(f, TmaOobFill::NanRequestZeroFma);
}

//===----------------------------------------------------------------------===//
// Swizzle and box walks
//===----------------------------------------------------------------------===//

TEST(Swizzle, ChunkXorLine) {
  // 128B: chunk c of 128-byte line r goes to chunk c ^ (r % 8).
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 8; ++c)
      for (int64_t byte : {0, 5, 15})
        EXPECT_EQ(tmaSwizzleOffset(r * 128 + c * 16 + byte, TmaSwizzle::B128),
                  r * 128 + ((c ^ (r % 8)) * 16) + byte);
  // 64B: chunk bits 4..5 XOR line bits 7..8 (c ^ (r % 4) for 64-byte
  // rows paired into 128-byte lines).
  EXPECT_EQ(tmaSwizzleOffset(128 + 16, TmaSwizzle::B64), 128 + 0);
  EXPECT_EQ(tmaSwizzleOffset(3 * 128 + 0, TmaSwizzle::B64), 3 * 128 + 48);
  EXPECT_EQ(tmaSwizzleOffset(4 * 128 + 0, TmaSwizzle::B64), 4 * 128);
  // 32B: chunk bit 4 XOR line bit 7.
  EXPECT_EQ(tmaSwizzleOffset(128, TmaSwizzle::B32), 128 + 16);
  EXPECT_EQ(tmaSwizzleOffset(256, TmaSwizzle::B32), 256);
  for (int64_t a = 0; a < 4096; ++a)
    EXPECT_EQ(tmaSwizzleOffset(a, TmaSwizzle::None), a);
  EXPECT_EQ(tmaSwizzleAtom(TmaSwizzle::B128), 1024);
  EXPECT_EQ(tmaSwizzleAtom(TmaSwizzle::B64), 512);
  EXPECT_EQ(tmaSwizzleAtom(TmaSwizzle::B32), 256);
}

TEST(Swizzle, SpansAgreeWithTheWgmmaLayouts) {
  using flash::tile::layout::SmemSwizzle;
  const std::pair<TmaSwizzle, SmemSwizzle> pairs[] = {
      {TmaSwizzle::None, SmemSwizzle::None},
      {TmaSwizzle::B32, SmemSwizzle::B32},
      {TmaSwizzle::B64, SmemSwizzle::B64},
      {TmaSwizzle::B128, SmemSwizzle::B128}};
  for (auto [t, w] : pairs) {
    EXPECT_EQ(tmaSwizzleSpan(t), flash::tile::layout::swizzleSpanBytes(w));
    EXPECT_EQ(tmaSwizzleAtom(t), flash::tile::layout::swizzleAtomBytes(w));
  }
}

TEST(Swizzle, IsAPermutationOfEachAtom) {
  for (TmaSwizzle s : {TmaSwizzle::B32, TmaSwizzle::B64, TmaSwizzle::B128}) {
    std::set<int64_t> seen;
    int64_t atom = tmaSwizzleAtom(s);
    for (int64_t a = 0; a < 2 * atom; ++a) {
      int64_t p = tmaSwizzleOffset(a, s);
      EXPECT_EQ(p / atom, a / atom);
      seen.insert(p);
    }
    EXPECT_EQ(int64_t(seen.size()), 2 * atom);
  }
}

TEST(BoxWalk, InBoundsBoxInSharedOrder) {
  // 8 x 16 f16 tensor, box 4 rows x 8 cols at (col 8, row 2).
  TensorMap m = map2d(8, 16, 4, 8);
  int32_t at[2] = {8, 2};
  std::vector<BoxElement> es;
  forEachBoxElement(m, at, [&](const BoxElement &e) { es.push_back(e); });
  ASSERT_EQ(es.size(), 32u);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      const BoxElement &e = es[r * 8 + c];
      EXPECT_TRUE(e.inBounds);
      EXPECT_EQ(e.smemOffset, (r * 8 + c) * 2);
      EXPECT_EQ(e.globalByte, uint64_t(((2 + r) * 16 + 8 + c) * 2));
    }
}

TEST(BoxWalk, OutOfBoundsInEveryDimension) {
  TensorMap m = map2d(5, 16, 4, 8);
  int32_t at[2] = {12, 3}; // cols 12..19 (16.. out), rows 3..6 (5.. out)
  int in = 0, out = 0;
  forEachBoxElement(m, at, [&](const BoxElement &e) {
    int64_t idx = e.smemOffset / 2, r = idx / 8, c = idx % 8;
    bool expectIn = 12 + c < 16 && 3 + r < 5;
    EXPECT_EQ(e.inBounds, expectIn) << r << "," << c;
    (e.inBounds ? in : out)++;
  });
  EXPECT_EQ(in, 2 * 4);
  EXPECT_EQ(out, 32 - 8);
  int32_t neg[2] = {-8, -1};
  int negIn = 0;
  forEachBoxElement(m, neg, [&](const BoxElement &e) { negIn += e.inBounds; });
  EXPECT_EQ(negIn, 0); // columns -8..-1 are all outside
}

TEST(BoxWalk, SwizzledDestination) {
  // A 128B-swizzled box of 8 rows x 64 f16: row r, chunk c lands at chunk
  // c ^ r of line r.
  TensorMap m = map2d(8, 64, 8, 64, TmaSwizzle::B128);
  int32_t at[2] = {0, 0};
  std::map<int64_t, uint64_t> where; // smem -> global byte
  forEachBoxElement(m, at,
                    [&](const BoxElement &e) { where[e.smemOffset] = e.globalByte; });
  ASSERT_EQ(where.size(), 512u);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(where[r * 128 + ((c ^ r) * 16)], uint64_t(r * 128 + c * 16));
}

TEST(BoxWalk, ThreeDimensionsWithElementStride) {
  TensorMap m = map2d(6, 8, 4, 8);
  m.rank = 3;
  m.globalDim[2] = 2;
  m.globalStrides[1] = 6 * 8 * 2;
  m.boxDim[2] = 2;
  m.elementStrides[1] = 2; // rows 0, 2 of the 4
  int32_t at[3] = {0, 1, 0};
  std::vector<BoxElement> es;
  forEachBoxElement(m, at, [&](const BoxElement &e) { es.push_back(e); });
  ASSERT_EQ(int64_t(es.size()) * 2, boxBytes(m));
  ASSERT_EQ(es.size(), 2u * 2 * 8);
  // Element (z=1, row step 1, col 3): row 1 + 2 = 3 of plane 1.
  const BoxElement &e = es[(1 * 2 + 1) * 8 + 3];
  EXPECT_EQ(e.globalByte, uint64_t((6 * 8 + 3 * 8 + 3) * 2));
}

} // namespace

TEST(BoxWalk, RowsOfOneHeadInAPackedBatch) {
  // A packed batch's K [total, H, D] (varlen): a box of 4 rows of head 1
  // (box {4, 1, 8} over [5, 3, 8], f16) is a window whose rows are H * D
  // elements apart; rows past the tensor's end arrive as zeros.
  TensorMapSpec spec;
  spec.name = "K.tmap";
  spec.tensor = "K";
  spec.box = {4, 1, 8};
  auto m = tensorMapFor(spec, TmaDataType::F16, {5, 3, 8}, 0x1000);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->globalStrides[0], uint64_t(8 * 2));     // heads
  EXPECT_EQ(m->globalStrides[1], uint64_t(3 * 8 * 2)); // tokens
  EXPECT_EQ(boxBytes(*m), 4 * 8 * 2);
  int32_t at[3] = {0, 1, 3}; // col 0, head 1, tokens 3..6 (5.. past the end)
  std::vector<BoxElement> es;
  forEachBoxElement(*m, at, [&](const BoxElement &e) { es.push_back(e); });
  ASSERT_EQ(es.size(), 32u);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      const BoxElement &e = es[r * 8 + c];
      EXPECT_EQ(e.smemOffset, (r * 8 + c) * 2);
      EXPECT_EQ(e.inBounds, 3 + r < 5) << r << "," << c;
      if (e.inBounds)
        EXPECT_EQ(e.globalByte, uint64_t(((3 + r) * 3 * 8 + 8 + c) * 2));
    }
}

//===- ReduceOpToSIMT.cpp - tile.reduce -----------------------------------===//
//
// A reduction along one axis, planned at compile time over every thread of
// the CTA: first the input registers of each thread that map to the same
// output register are combined in-thread, then butterfly shuffles combine
// the lanes that hold other parts of the same output elements, and when the
// reduced axis is spread over warps too, each warp's partial goes through
// the conversion's shared scratch and every thread combines the partials of
// the warps it needs.
//
// The plan counts the reduced axis in the layout's padded coordinates
// (layout::Space::Padded), where every position is held once per lane
// group: registers in the padding (copies of elements held elsewhere) take
// the reduction's identity, and a thread holding one element in several
// registers combines it once.
//
// A `lane_partial` sum stops before the butterflies when they would combine
// exactly the lanes that hold each output element (its replicas); its
// parts are added up by tile.sum_lane_partials, the butterflies alone. A
// `uniform` max (all elements along the axis equal) ends in-thread when
// every thread holds a real element of each of its output registers.
//
// f16 and bf16 tiles are reduced in f32 and rounded once at the end, as the
// interpreter rounds its exact result once.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "Utility.h"

#include "llvm/ADT/BitVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

struct ReducePlan {
  SmallVector<SmallVector<int64_t>> groups; // input registers per output reg
  std::vector<std::vector<uint32_t>> padding; // [input reg][warp] lane masks
  SmallVector<int64_t> butterflies;         // shfl.bfly lane offsets
  bool crossWarp = false;
  std::vector<std::vector<uint32_t>> writers;   // [reg][warp] lane masks
  std::vector<std::vector<uint32_t>> readWarps; // [reg][warp] warp masks
};

/// What one reduction is planned from: its tiles at compile time.
struct ReduceShape {
  Operation *op; // for diagnostics
  const TileInfo &in, &out;
  int64_t numWarps, threads, axis, extent;
  std::vector<std::vector<int64_t>> outTable; // [thread][reg]
};

/// Reduced coordinates combined so far: [thread][output reg].
using Coverage = std::vector<std::vector<llvm::BitVector>>;

/// In-thread groups: the input registers whose kept coordinate is the output
/// register's coordinate, one per padded position along the axis, the same
/// for every thread.
LogicalResult planGroups(const ReduceShape &s, ReducePlan &plan,
                         Coverage &cover) {
  cover.assign(s.threads, std::vector<llvm::BitVector>(
                              s.out.regs, llvm::BitVector(s.extent)));
  for (int64_t t = 0; t < s.threads; ++t) {
    for (int64_t r = 0; r < s.out.regs; ++r) {
      SmallVector<int64_t> group;
      for (int64_t ri = 0; ri < s.in.regs; ++ri) {
        layout::Coord c = s.in.coord(t, ri);
        int64_t reduced = s.in.paddedCoord(t, ri)[s.axis];
        c.erase(c.begin() + s.axis);
        if (s.out.linear(c) == s.outTable[t][r] && !cover[t][r].test(reduced)) {
          group.push_back(ri);
          cover[t][r].set(reduced);
        }
      }
      if (group.empty())
        return s.op->emitOpError("thread ")
               << t << " holds no element of output register " << r
               << " of layout " << describe(s.out.layout) << " in layout "
               << describe(s.in.layout);
      if (t == 0)
        plan.groups.push_back(group);
      else if (plan.groups[r] != group)
        return s.op->emitOpError("the in-thread grouping of layout ")
               << describe(s.in.layout) << " along axis " << s.axis
               << " differs between threads";
    }
  }
  return success();
}

/// Butterflies: lane bits whose flip keeps every kept coordinate and brings
/// new reduced coordinates.
void planButterflies(const ReduceShape &s, ReducePlan &plan, Coverage &cover) {
  for (int64_t bit = 1; bit < kWarp; bit <<= 1) {
    bool ok = true;
    for (int64_t t = 0; ok && t < s.threads; ++t)
      for (int64_t r = 0; ok && r < s.out.regs; ++r) {
        int64_t p = t ^ bit;
        ok = s.outTable[p][r] == s.outTable[t][r] && cover[p][r].any() &&
             !cover[t][r].anyCommon(cover[p][r]);
      }
    if (!ok)
      continue;
    plan.butterflies.push_back(bit);
    auto next = cover;
    for (int64_t t = 0; t < s.threads; ++t)
      for (int64_t r = 0; r < s.out.regs; ++r)
        next[t][r] |= cover[t ^ bit][r];
    cover = std::move(next);
  }
}

/// Only the first holder within each warp writes its warp's slot.
std::vector<std::vector<uint32_t>> firstInWarpMasks(const ReduceShape &s) {
  int64_t outElems = s.out.numElements();
  std::vector<std::vector<int64_t>> firstInWarp(
      s.numWarps, std::vector<int64_t>(outElems, -1));
  for (int64_t t = 0; t < s.threads; ++t)
    for (int64_t r = 0; r < s.out.regs; ++r) {
      int64_t &f = firstInWarp[t / kWarp][s.outTable[t][r]];
      if (f < 0)
        f = t;
    }
  std::vector<std::vector<uint32_t>> writers(
      s.out.regs, std::vector<uint32_t>(s.numWarps, 0));
  for (int64_t t = 0; t < s.threads; ++t)
    for (int64_t r = 0; r < s.out.regs; ++r)
      if (firstInWarp[t / kWarp][s.outTable[t][r]] == t)
        writers[r][t / kWarp] |= 1u << (t % kWarp);
  return writers;
}

/// Across warps through shared memory: warp w's partial of output element k
/// (all lanes of w holding k must agree on what they combined); each thread
/// reads the partials of warps that together cover the axis once.
LogicalResult planCrossWarp(const ReduceShape &s, ReducePlan &plan,
                            const Coverage &cover) {
  plan.crossWarp = true;
  int64_t outElems = s.out.numElements();
  std::vector<std::vector<std::optional<llvm::BitVector>>> warpCover(
      s.numWarps, std::vector<std::optional<llvm::BitVector>>(outElems));
  for (int64_t t = 0; t < s.threads; ++t)
    for (int64_t r = 0; r < s.out.regs; ++r) {
      auto &slot = warpCover[t / kWarp][s.outTable[t][r]];
      if (!slot)
        slot = cover[t][r];
      else if (*slot != cover[t][r])
        return s.op->emitOpError("lanes of one warp hold different partial "
                                "reductions in layout ")
               << describe(s.in.layout);
    }
  plan.writers = firstInWarpMasks(s);
  plan.readWarps.assign(s.out.regs, std::vector<uint32_t>(s.numWarps, 0));
  for (int64_t t = 0; t < s.threads; ++t)
    for (int64_t r = 0; r < s.out.regs; ++r) {
      int64_t k = s.outTable[t][r];
      llvm::BitVector acc(s.extent);
      uint32_t warps = 0;
      for (int64_t w = 0; w < s.numWarps; ++w) {
        auto &c = warpCover[w][k];
        if (!c || c->none() || acc.anyCommon(*c))
          continue;
        acc |= *c;
        warps |= 1u << w;
      }
      if (!acc.all())
        return s.op->emitOpError("the warps of layout ")
               << describe(s.in.layout) << " do not cover axis " << s.axis;
      uint32_t &slot = plan.readWarps[r][t / kWarp];
      if (t % kWarp == 0)
        slot = warps;
      else if (slot != warps)
        return s.op->emitOpError("lanes of one warp would combine different "
                                "warps in layout ")
               << describe(s.in.layout);
    }
  return success();
}

FailureOr<ReducePlan> planReduce(ReduceOp op, const TileInfo &in,
                                 const TileInfo &out, int64_t numWarps) {
  int64_t threads = numWarps * kWarp;
  int64_t axis = op.getAxis();
  ReduceShape s{op,       in,      out,          numWarps,
                threads,  axis,    in.padded[axis], out.table(threads)};
  ReducePlan plan;
  plan.padding = paddingLanes(in, axis, numWarps);
  Coverage cover;
  if (failed(planGroups(s, plan, cover)))
    return failure();
  planButterflies(s, plan, cover);
  bool complete = true;
  for (int64_t t = 0; complete && t < threads; ++t)
    for (int64_t r = 0; complete && r < out.regs; ++r)
      complete = cover[t][r].all();
  if (!complete && failed(planCrossWarp(s, plan, cover)))
    return failure();
  return plan;
}

//===----------------------------------------------------------------------===//
// The IR
//===----------------------------------------------------------------------===//

/// The reduction's combining op and its identity, for f32 or i32.
struct Combiner {
  OpBuilder &b;
  Location loc;
  Type elem;
  bool isFloat, isMax;

  Value combine(Value x, Value y) const {
    if (isFloat)
      return isMax ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::AddFOp::create(b, loc, x, y).getResult();
    return isMax ? arith::MaxSIOp::create(b, loc, x, y).getResult()
                 : arith::AddIOp::create(b, loc, x, y).getResult();
  }
  Value identity() const {
    if (isFloat)
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(elem, isMax ? -INFINITY : 0.0));
    return i32Const(b, loc, isMax ? std::numeric_limits<int32_t>::min() : 0);
  }
};

/// The input registers, with the identity in the padding.
SmallVector<Value> emitInputs(const Combiner &c, const ReducePlan &plan,
                              Operation *op, Value input, int64_t inRegs) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  SmallVector<Value> inputs = extractAll(b, loc, input, inRegs);
  for (int64_t ri = 0; ri < inRegs; ++ri)
    if (anyLane(plan.padding[ri]))
      inputs[ri] = replaceInLanes(b, loc, getThreadIds(b, op),
                                  plan.padding[ri], c.identity(), inputs[ri]);
  return inputs;
}

/// `values` combined pairwise, level by level (a balanced tree).
Value combineTree(const Combiner &c, SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(c.combine(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// In-thread groups: each thread's partial per output register, combined
/// in a chain, or with `tree` as a balanced tree.
SmallVector<Value> emitThreadPartials(const Combiner &c, const ReducePlan &plan,
                                      ArrayRef<Value> inputs, bool tree) {
  SmallVector<Value> partial;
  for (auto &group : plan.groups) {
    SmallVector<Value> members;
    for (int64_t ri : group)
      members.push_back(inputs[ri]);
    if (tree) {
      partial.push_back(combineTree(c, members));
      continue;
    }
    Value acc = members.front();
    for (Value member : llvm::drop_begin(members))
      acc = c.combine(acc, member);
    partial.push_back(acc);
  }
  return partial;
}

/// A `uniform` reduction's result from each thread's own registers: the
/// first input of each group where no lane pads it, else the group
/// combined (padding takes the identity). Empty when some thread holds
/// only padding for one of its output registers: then it needs the others.
SmallVector<Value> uniformFromOwnRegisters(const Combiner &c,
                                           const ReducePlan &plan,
                                           ArrayRef<Value> inputs) {
  SmallVector<Value> result;
  for (auto &group : plan.groups) {
    size_t warps = plan.padding[group.front()].size();
    bool firstIsWhole = !anyLane(plan.padding[group.front()]);
    for (size_t w = 0; w < warps; ++w) {
      uint32_t paddedInAll = ~0u;
      for (int64_t ri : group)
        paddedInAll &= plan.padding[ri][w];
      if (paddedInAll)
        return {};
    }
    if (firstIsWhole) {
      result.push_back(inputs[group.front()]);
      continue;
    }
    Value acc = inputs[group.front()];
    for (int64_t ri : llvm::drop_begin(group))
      acc = c.combine(acc, inputs[ri]);
    result.push_back(acc);
  }
  return result;
}

/// Combines each register with the same register of the lanes `offsets`
/// apart (shfl.bfly), one offset after the other.
void emitButterflies(const Combiner &c, ArrayRef<int64_t> offsets,
                     MutableArrayRef<Value> partial) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  if (offsets.empty())
    return;
  Value all = i32Const(b, loc, -1), clamp = i32Const(b, loc, 0x1f);
  for (int64_t offset : offsets) {
    Value off = i32Const(b, loc, offset);
    for (Value &p : partial) {
      Value other = NVVM::ShflOp::create(b, loc, c.elem, all, p, off, clamp,
                                         NVVM::ShflKind::bfly, UnitAttr());
      p = c.combine(p, other);
    }
  }
}

/// Lane bits whose flip keeps the element of every register of every
/// thread: the lanes over which a lane-partial tile's parts are spread.
SmallVector<int64_t> replicaLaneBits(const TileInfo &tile, int64_t numWarps) {
  auto table = tile.table(numWarps * kWarp);
  SmallVector<int64_t> bits;
  for (int64_t bit = 1; bit < kWarp; bit <<= 1) {
    bool replica = true;
    for (int64_t t = 0; replica && t < numWarps * kWarp; ++t)
      replica = table[t ^ bit] == table[t];
    if (replica)
      bits.push_back(bit);
  }
  return bits;
}

/// Lane-partial form of a whole value: kept in the lane whose replica bits
/// are all 0, 0 in the other replicas.
void keepInFirstReplica(const Combiner &c, Operation *op,
                        ArrayRef<int64_t> replicaBits, int64_t numWarps,
                        MutableArrayRef<Value> partial) {
  uint32_t others = 0;
  for (int64_t lane = 0; lane < kWarp; ++lane)
    for (int64_t bit : replicaBits)
      if (lane & bit)
        others |= 1u << lane;
  if (!others)
    return;
  std::vector<uint32_t> perWarp(numWarps, others);
  ThreadIds ids = getThreadIds(c.b, op);
  for (Value &p : partial)
    p = replaceInLanes(c.b, c.loc, ids, perWarp, c.identity(), p);
}

/// The scratch of a cross-warp reduction: slot w * outElems + k holds warp
/// w's partial of output element k.
struct WarpSlots {
  IndexBuilder &ib;
  Value base;
  int64_t outElems;
  SmallVector<Value> keys; // this thread's k per output register

  Value slot(int64_t w, int64_t r) const {
    return (IndexValue(&ib, w * outElems) + IndexValue(&ib, keys[r])).get();
  }
};

/// Combines the partials of the warps in `reads` (per warp of this thread:
/// a mask of the warps to read).
Value combineWarps(const Combiner &c, const WarpSlots &slots, ThreadIds ids,
                   ArrayRef<uint32_t> reads, int64_t r, int64_t numWarps) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Value acc;
  if (llvm::all_equal(reads)) {
    for (int64_t w = 0; w < numWarps; ++w)
      if (reads.front() & (1u << w)) {
        Value v = loadShared(b, loc, slots.base, c.elem, slots.slot(w, r));
        acc = acc ? c.combine(acc, v) : v;
      }
    return acc;
  }
  // The warps to combine depend on this thread's warp.
  Value mask = i32Const(b, loc, reads.back());
  for (int64_t w = numWarps - 2; w >= 0; --w) {
    Value isW = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      ids.warp, i32Const(b, loc, w));
    mask = arith::SelectOp::create(b, loc, isW, i32Const(b, loc, reads[w]),
                                   mask);
  }
  uint32_t any = 0;
  for (uint32_t m : reads)
    any |= m;
  acc = c.identity();
  for (int64_t w = 0; w < numWarps; ++w) {
    if (!(any & (1u << w)))
      continue;
    Value bit = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, mask, i32Const(b, loc, w)),
        i32Const(b, loc, 1));
    Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit,
                                       i32Const(b, loc, 0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{c.elem}, cond,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value slot = slots.slot(w, r);
      scf::YieldOp::create(b, loc, loadShared(b, loc, slots.base, c.elem, slot));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, c.identity());
    }
    acc = c.combine(acc, ifOp.getResult(0));
  }
  return acc;
}

/// Each warp's first holder writes its partials to the scratch; after a
/// barrier every thread combines the partials of the warps it needs.
void emitCrossWarp(const Combiner &c, const ReducePlan &plan, Operation *op,
                   const TileInfo &out, int64_t numWarps,
                   SmallVector<Value> &partial) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  ThreadIds ids = getThreadIds(b, op);
  IndexBuilder ib{b, loc};
  IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
  int64_t outElems = out.numElements();
  noteSharedBytes(op, numWarps * outElems * byteWidth(c.elem));
  WarpSlots slots{ib, scratchBase(b, loc, op), outElems, {}};
  for (int64_t r = 0; r < out.regs; ++r) {
    auto coord = layoutCoord<IndexValue>(out.layout, out.shape, warp, lane, r);
    slots.keys.push_back(linearIndex(&ib, out.shape, coord).get());
  }
  for (int64_t r = 0; r < out.regs; ++r) {
    Value slot = (warp * outElems + IndexValue(&ib, slots.keys[r])).get();
    emitGuarded(b, loc, lanePredicate(b, loc, ids, plan.writers[r]),
                [&] { storeShared(b, loc, slots.base, partial[r], slot); });
  }
  barrier(b, loc);
  for (int64_t r = 0; r < out.regs; ++r)
    partial[r] = combineWarps(c, slots, ids, plan.readWarps[r], r, numWarps);
  barrier(b, loc);
}

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = TileInfo::get(op.getInput().getType());
    auto out = TileInfo::get(op.getType());
    Type elem = in->type.getElementType(); // f16, bf16, f32 or i32
    int64_t numWarps = getNumWarps(op);
    auto plan = planReduce(op, *in, *out, numWarps);
    if (failed(plan))
      return failure();
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Type combined = elem;
    if (elem.isF16() || elem.isBF16()) { // shuffles move 32-bit values
      combined = rewriter.getF32Type();
      input = arith::ExtFOp::create(
          rewriter, loc, VectorType::get({in->regs}, combined), input);
    }
    Combiner combiner{rewriter, loc, combined, isa<FloatType>(combined),
                      op.getKind() == ReduceKind::Max};
    // A lane-partial sum adds its columns as a tree: with no shuffles to
    // wait for, ptxas schedules a 15-add chain late and keeps the scores
    // live longer (fa2 at HEAD_DIM 64 on sm_90 spills 4-16 bytes with it).
    SmallVector<Value> inputs =
        emitInputs(combiner, *plan, op, input, in->regs);
    SmallVector<Value> partial;
    if (op.getUniform())
      partial = uniformFromOwnRegisters(combiner, *plan, inputs);
    bool ownRegisters = !partial.empty();
    if (!ownRegisters)
      partial = emitThreadPartials(combiner, *plan, inputs,
                                   /*tree=*/op.getLanePartial());
    SmallVector<int64_t> replicas;
    if (op.getLanePartial())
      replicas = replicaLaneBits(*out, numWarps);
    // Lane-partial: the threads' own parts are that form when the
    // butterflies would combine exactly the replicas; otherwise the whole
    // sum, kept in one replica.
    bool partsAreReplicas = op.getLanePartial() && !plan->crossWarp &&
                            plan->butterflies == replicas;
    if (!partsAreReplicas && !ownRegisters) {
      emitButterflies(combiner, plan->butterflies, partial);
      if (plan->crossWarp)
        emitCrossWarp(combiner, *plan, op, *out, numWarps, partial);
      if (op.getLanePartial())
        keepInFirstReplica(combiner, op, replicas, numWarps, partial);
    }
    Value result = vector::FromElementsOp::create(
        rewriter, loc, VectorType::get({out->regs}, combined), partial);
    if (combined != elem)
      result = arith::TruncFOp::create(rewriter, loc, out->vectorType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Adds each register's parts over its replica lanes.
struct SumLanePartialsLowering : OpConversionPattern<SumLanePartialsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SumLanePartialsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (!tile)
      return failure();
    Location loc = op.getLoc();
    Combiner combiner{rewriter, loc, rewriter.getF32Type(), /*isFloat=*/true,
                      /*isMax=*/false};
    SmallVector<Value> parts =
        extractAll(rewriter, loc, adaptor.getInput(), tile->regs);
    emitButterflies(combiner, replicaLaneBits(*tile, getNumWarps(op)), parts);
    rewriter.replaceOp(op, vector::FromElementsOp::create(
                               rewriter, loc, tile->vectorType(), parts));
    return success();
  }
};

} // namespace

void flash::simt::populateReduceOpToSIMTPatterns(TypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, SumLanePartialsLowering>(converter,
                                                        patterns.getContext());
}

//===- LayoutMoveOpToSIMT.cpp - ops that move elements between layouts ----===//
//
// expand_dims, broadcast, trans and convert_layout: each output register
// takes an element of the input tile. When every thread already holds the
// elements it needs, in the same input registers for every thread (decided
// at compile time over the whole CTA), the move is a register repack (one
// vector.shuffle, or nothing); otherwise the tile goes through the
// conversion's shared scratch.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "Utility.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

/// A map from output-tile coordinates to input-tile coordinates, the same for
/// compile-time evaluation and IR emission.
struct CoordMap {
  enum Kind { Identity, Transpose, Broadcast, ExpandDims } kind = Identity;
  int64_t axis = 0;
  SmallVector<int64_t, 2> inShape;

  template <typename Int>
  layout::CoordOf<Int> apply(const layout::CoordOf<Int> &out) const {
    switch (kind) {
    case Identity:
      return out;
    case Transpose:
      return {out[1], out[0]};
    case Broadcast: {
      layout::CoordOf<Int> in;
      for (size_t d = 0; d < out.size(); ++d)
        in.push_back(inShape[d] == 1 ? out[d] * 0 : out[d]);
      return in;
    }
    case ExpandDims: {
      layout::CoordOf<Int> in(out);
      in.erase(in.begin() + axis);
      return in;
    }
    }
    return out;
  }
};

/// For each output register, the input register of the same thread that
/// holds the element the output register needs, if that is the same for
/// every thread of the CTA.
std::optional<SmallVector<int64_t>> planRepack(const TileInfo &in,
                                               const TileInfo &out,
                                               const CoordMap &map,
                                               int64_t numWarps) {
  SmallVector<int64_t> plan(out.regs, -1);
  for (int64_t t = 0; t < numWarps * kWarp; ++t) {
    llvm::DenseMap<int64_t, int64_t> held;
    for (int64_t r = 0; r < in.regs; ++r)
      held.try_emplace(in.linearCoord(t, r), r);
    for (int64_t r = 0; r < out.regs; ++r) {
      auto it = held.find(in.linear(map.apply(out.coord(t, r))));
      if (it == held.end())
        return std::nullopt;
      if (t == 0)
        plan[r] = it->second;
      else if (plan[r] != it->second)
        return std::nullopt;
    }
  }
  return plan;
}

Value emitRepack(OpBuilder &b, Location loc, Value src, ArrayRef<int64_t> plan,
                 int64_t srcRegs) {
  bool identity = static_cast<int64_t>(plan.size()) == srcRegs;
  for (size_t i = 0; identity && i < plan.size(); ++i)
    identity = plan[i] == static_cast<int64_t>(i);
  if (identity)
    return src;
  return vector::ShuffleOp::create(b, loc, src, src, plan);
}

/// Moves a tile between layouts through shared memory: the first holder of
/// each input element writes it (row-major in the input shape), barrier,
/// every thread reads the elements of its output registers, barrier (so the
/// buffer can be reused).
Value emitSharedExchange(OpBuilder &b, Location loc, Operation *op, Value src,
                         const TileInfo &in, const TileInfo &out,
                         const CoordMap &map) {
  int64_t numWarps = getNumWarps(op);
  ThreadIds ids = getThreadIds(b, op);
  Type elem = in.type.getElementType();
  noteSharedBytes(op, in.numElements() * byteWidth(elem));
  IndexBuilder ib{b, loc};
  IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
  auto masks =
      firstHolderMasks(in.table(numWarps * kWarp), in.numElements(), numWarps);

  Value base = scratchBase(b, loc, op);
  SmallVector<Value> values = extractAll(b, loc, src, in.regs);
  for (int64_t r = 0; r < in.regs; ++r) {
    if (llvm::all_of(masks[r], [](uint32_t m) { return m == 0; }))
      continue;
    auto coord = layoutCoord<IndexValue>(in.layout, in.shape, warp, lane, r);
    Value index = linearIndex(&ib, in.shape, coord);
    Value pred = lanePredicate(b, loc, ids, masks[r]);
    emitGuarded(b, loc, pred,
                [&] { storeShared(b, loc, base, values[r], index); });
  }
  barrier(b, loc);
  SmallVector<Value> results;
  for (int64_t r = 0; r < out.regs; ++r) {
    auto coord = map.apply(
        layoutCoord<IndexValue>(out.layout, out.shape, warp, lane, r));
    Value index = linearIndex(&ib, in.shape, coord);
    results.push_back(loadShared(b, loc, base, elem, index));
  }
  barrier(b, loc);
  return vector::FromElementsOp::create(b, loc, out.vectorType(), results);
}

/// The coordinate map of a layout move: identity for convert_layout.
template <typename OpTy>
CoordMap coordMapOf(OpTy op, const TileInfo &in) {
  CoordMap map;
  if constexpr (std::is_same_v<OpTy, ExpandDimsOp>) {
    map.kind = CoordMap::ExpandDims;
    map.axis = op.getAxis();
  } else if constexpr (std::is_same_v<OpTy, BroadcastOp>) {
    map.kind = CoordMap::Broadcast;
    map.inShape = in.shape;
  } else if constexpr (std::is_same_v<OpTy, TransOp>) {
    map.kind = CoordMap::Transpose;
  }
  return map;
}

/// Register repack when possible, shared memory otherwise.
template <typename OpTy>
struct LayoutMoveLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = TileInfo::get(op.getInput().getType());
    auto out = TileInfo::get(op.getType());
    CoordMap map = coordMapOf(op, *in);
    Location loc = op.getLoc();
    Value result;
    if (auto plan = planRepack(*in, *out, map, getNumWarps(op)))
      result = emitRepack(rewriter, loc, adaptor.getInput(), *plan, in->regs);
    else
      result = emitSharedExchange(rewriter, loc, op, adaptor.getInput(), *in,
                                  *out, map);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void flash::simt::populateLayoutMoveOpToSIMTPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LayoutMoveLowering<ExpandDimsOp>, LayoutMoveLowering<BroadcastOp>,
               LayoutMoveLowering<ConvertLayoutOp>, LayoutMoveLowering<TransOp>>(
      converter, patterns.getContext());
}

//===- WindowAnalysis.cpp - what is known of a window access --------------===//
#include "WindowAnalysis.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

//===----------------------------------------------------------------------===//
// Facts about i32 values
//===----------------------------------------------------------------------===//

/// A known divisor of an i32 value (1 when nothing is known).
static int64_t knownMultiple(Value v, int depth = 0) {
  constexpr int64_t kAny = int64_t(1) << 30;
  if (depth > 12)
    return 1;
  if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
    return c.value() == 0 ? kAny : std::abs(c.value());
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return std::min(kAny, knownMultiple(mul.getLhs(), depth + 1) *
                              knownMultiple(mul.getRhs(), depth + 1));
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return std::gcd(knownMultiple(add.getLhs(), depth + 1),
                    knownMultiple(add.getRhs(), depth + 1));
  if (auto sub = v.getDefiningOp<arith::SubIOp>())
    return std::gcd(knownMultiple(sub.getLhs(), depth + 1),
                    knownMultiple(sub.getRhs(), depth + 1));
  if (isa_and_nonnull<arith::MinSIOp, arith::MaxSIOp>(v.getDefiningOp()))
    return std::gcd(knownMultiple(v.getDefiningOp()->getOperand(0), depth + 1),
                    knownMultiple(v.getDefiningOp()->getOperand(1), depth + 1));
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      if (arg == loop.getInductionVar())
        return std::gcd(knownMultiple(loop.getLowerBound(), depth + 1),
                        knownMultiple(loop.getStep(), depth + 1));
  return 1;
}

/// Whether `dim` is dim `d` of `global`, or a dim of another tensor with the
/// same symbol (equal at launch: the launcher, interpreter and emulator check).
static bool sameDim(DimOp dim, Value global, int64_t d) {
  if (dim.getSource() == global)
    return int64_t(dim.getIndex()) == d;
  auto type = cast<GlobalType>(global.getType());
  GlobalType other = dim.getSource().getType();
  unsigned i = dim.getIndex();
  return !type.isStaticDim(d) && !other.isStaticDim(i) &&
         type.getDimNames()[d] == other.getDimNames()[i];
}

/// v <= dim `d` of `global`: that dim, (x / c) * c of something that is, a
/// min with such a value, a max of two such values, or a constant <= 0.
/// Dims are never negative.
static bool boundedByDim(Value v, Value global, int64_t d, int depth = 0) {
  if (depth > 12)
    return false;
  if (auto dim = v.getDefiningOp<DimOp>())
    return sameDim(dim, global, d);
  if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
    return c.value() <= 0;
  if (auto min = v.getDefiningOp<arith::MinSIOp>())
    return boundedByDim(min.getLhs(), global, d, depth + 1) ||
           boundedByDim(min.getRhs(), global, d, depth + 1);
  // The bounds of tile-split-masked-loops' ranges: max(lo, min(x, hi)).
  if (auto max = v.getDefiningOp<arith::MaxSIOp>())
    return boundedByDim(max.getLhs(), global, d, depth + 1) &&
           boundedByDim(max.getRhs(), global, d, depth + 1);
  if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
    auto div = mul.getLhs().getDefiningOp<arith::DivSIOp>();
    auto c = mul.getRhs().getDefiningOp<arith::ConstantIntOp>();
    auto divisor =
        div ? div.getRhs().getDefiningOp<arith::ConstantIntOp>() : nullptr;
    return c && divisor && c.value() > 0 && c.value() == divisor.value() &&
           boundedByDim(div.getLhs(), global, d, depth + 1);
  }
  return false;
}

/// v >= 0: a non-negative constant, a tensor dim, the induction variable of
/// a loop with a non-negative lower bound and a positive step, or sums,
/// products, maxima, minima and quotients (by a positive constant) of such.
static bool knownNonNegative(Value v, int depth = 0) {
  if (depth > 12)
    return false;
  if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
    return c.value() >= 0;
  if (v.getDefiningOp<DimOp>())
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    auto step = loop ? loop.getStep().getDefiningOp<arith::ConstantIntOp>()
                     : arith::ConstantIntOp();
    return loop && arg == loop.getInductionVar() && step && step.value() > 0 &&
           knownNonNegative(loop.getLowerBound(), depth + 1);
  }
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<arith::AddIOp, arith::MulIOp, arith::MinSIOp>(def))
    return knownNonNegative(def->getOperand(0), depth + 1) &&
           knownNonNegative(def->getOperand(1), depth + 1);
  if (auto max = dyn_cast_or_null<arith::MaxSIOp>(def))
    return knownNonNegative(max.getLhs(), depth + 1) ||
           knownNonNegative(max.getRhs(), depth + 1);
  if (auto div = dyn_cast_or_null<arith::DivSIOp>(def)) {
    auto divisor = div.getRhs().getDefiningOp<arith::ConstantIntOp>();
    return divisor && divisor.value() > 0 &&
           knownNonNegative(div.getLhs(), depth + 1);
  }
  return false;
}

/// The upper bounds `pred` guarantees for `offset`: U for every conjunct
/// `offset < U` (also written `U > offset`).
static SmallVector<Value> boundsImpliedBy(Value pred, Value offset) {
  SmallVector<Value> bounds;
  SmallVector<Value> conjuncts = {pred};
  while (!conjuncts.empty()) {
    Value c = conjuncts.pop_back_val();
    if (auto andOp = c.getDefiningOp<arith::AndIOp>()) {
      conjuncts.append({andOp.getLhs(), andOp.getRhs()});
      continue;
    }
    auto cmp = c.getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      continue;
    if (cmp.getPredicate() == arith::CmpIPredicate::slt &&
        cmp.getLhs() == offset)
      bounds.push_back(cmp.getRhs());
    if (cmp.getPredicate() == arith::CmpIPredicate::sgt &&
        cmp.getRhs() == offset)
      bounds.push_back(cmp.getLhs());
  }
  return bounds;
}

//===----------------------------------------------------------------------===//
// Windows inside their tensor
//===----------------------------------------------------------------------===//

/// The access happens only when `pred` holds, and `pred` bounds the offset:
/// offset >= 0, offset < U, both multiples of some m >= extent and U bounded
/// by the dim (the prefetches of a pipelined loop over full blocks,
/// predicated off past its end).
static bool insideByPredicate(Value offset, int64_t extent, Value global,
                              int64_t d, Value pred) {
  if (!pred || !knownNonNegative(offset))
    return false;
  for (Value bound : boundsImpliedBy(pred, offset))
    if (std::gcd(knownMultiple(offset), knownMultiple(bound)) >= extent &&
        boundedByDim(bound, global, d))
      return true;
  return false;
}

/// The offset is the induction variable of a loop whose lower bound is 0 or
/// a non-negative multiple of the step, whose upper bound is a multiple of
/// the step bounded by the dim, and whose step covers the extent
/// (FlashAttention's full key blocks).
static bool insideByLoop(Value offset, int64_t extent, Value global,
                         int64_t d) {
  auto arg = dyn_cast<BlockArgument>(offset);
  auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())
                  : scf::ForOp();
  if (!loop || arg != loop.getInductionVar())
    return false;
  auto step = loop.getStep().getDefiningOp<arith::ConstantIntOp>();
  auto lower = loop.getLowerBound().getDefiningOp<arith::ConstantIntOp>();
  if (!step || step.value() < extent || !lower || lower.value() < 0)
    return false;
  return knownMultiple(loop.getLowerBound()) % step.value() == 0 &&
         knownMultiple(loop.getUpperBound()) % step.value() == 0 &&
         boundedByDim(loop.getUpperBound(), global, d);
}

/// A window [offset, offset + extent) along dim `d` of `global` lies inside
/// it: by the access's predicate, as a known constant inside a static dim,
/// or as a loop's full blocks.
static bool windowInside(Value offset, int64_t extent, Value global, int64_t d,
                         Value pred) {
  if (insideByPredicate(offset, extent, global, d, pred))
    return true;
  auto type = cast<GlobalType>(global.getType());
  if (auto c = offset.getDefiningOp<arith::ConstantIntOp>())
    return type.isStaticDim(d) && c.value() >= 0 &&
           c.value() + extent <= type.getShape()[d];
  return insideByLoop(offset, extent, global, d);
}

/// Marks the global dims along which one window access stays inside the
/// tensor whenever it happens (`pred`: the access's predicate, or null).
/// Gathered dims are never marked: their indices come from memory.
static void markWindowInBounds(Operation *access, Value global,
                               ValueRange offsets, ArrayRef<int64_t> window,
                               ArrayRef<int64_t> tileShape,
                               ArrayRef<int64_t> gather = {},
                               Value pred = nullptr) {
  auto type = cast<GlobalType>(global.getType());
  // Tile dim 0 of a gathered access holds the gathered rows.
  if (!gather.empty())
    tileShape = tileShape.drop_front();
  SmallVector<bool> inside;
  for (unsigned g = 0; g < type.getRank(); ++g) {
    auto it = llvm::find(window, static_cast<int64_t>(g));
    int64_t extent = it == window.end() ? 1 : tileShape[it - window.begin()];
    inside.push_back(!llvm::is_contained(gather, g) &&
                     windowInside(offsets[g], extent, global, g, pred));
  }
  access->setAttr(kInBoundsAttrName,
                  DenseBoolArrayAttr::get(access->getContext(), inside));
}

void flash::simt::markWindowsInBounds(Operation *kernel) {
  kernel->walk([&](LoadOp load) {
    markWindowInBounds(load, load.getSource(), load.getOffsets(),
                       load.getWindow(), load.getType().getShape(),
                       load.getGather());
  });
  kernel->walk([&](LoadScalarOp load) {
    markWindowInBounds(load, load.getSource(), load.getIndices(), {}, {});
  });
  kernel->walk([&](StoreOp store) {
    markWindowInBounds(store, store.getDest(), store.getOffsets(),
                       store.getWindow(),
                       store.getValue().getType().getShape());
  });
  kernel->walk([&](AsyncCopyOp copy) {
    markWindowInBounds(copy, copy.getSource(), copy.getOffsets(),
                       copy.getWindow(),
                       copy.getDest().getType().getSlotShape(),
                       copy.getGather(), copy.getPred());
  });
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

/// Whether the i1 tile `mask` provably has one value along tile dim `dim`
/// wherever its other coordinates are fixed.
static bool uniformAlong(Value mask, int64_t dim, int depth = 0) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (type.getDimSize(dim) == 1)
    return true;
  Operation *def = mask.getDefiningOp();
  if (!def || depth > 12)
    return false;
  if (isa<SplatOp>(def))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    return isa<SplatElementsAttr>(c.getValue());
  if (isa<BroadcastOp, ConvertLayoutOp>(def))
    return uniformAlong(def->getOperand(0), dim, depth + 1);
  if (auto expand = dyn_cast<ExpandDimsOp>(def))
    return uniformAlong(expand.getInput(),
                        dim < int64_t(expand.getAxis()) ? dim : dim - 1,
                        depth + 1);
  if (!isa<arith::ArithDialect>(def->getDialect()))
    return false;
  // Element-wise: uniform where every tile operand is.
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return !isa<RankedTensorType>(operand.getType()) ||
           uniformAlong(operand, dim, depth + 1);
  });
}

void flash::simt::markUniformMasks(Operation *kernel) {
  kernel->walk([&](StoreOp store) {
    if (!store.getMask())
      return;
    int64_t last = store.getDest().getType().getRank() - 1;
    auto it = llvm::find(store.getWindow(), last);
    if (it == store.getWindow().end() ||
        uniformAlong(store.getMask(), it - store.getWindow().begin()))
      store->setAttr(kUniformMaskAttrName, UnitAttr::get(store.getContext()));
  });
}

//===----------------------------------------------------------------------===//
// Vector width
//===----------------------------------------------------------------------===//

/// Whether every thread's registers, in runs of `v` from register 0, are
/// consecutive along `tileDim` from a multiple of `v` (and, for stores, have
/// one writer per run).
static bool registersFormVectors(
    const TileInfo &tile, size_t tileDim, int64_t v, int64_t numWarps,
    const std::vector<std::vector<uint32_t>> *writers) {
  for (int64_t t = 0; t < numWarps * kWarp; ++t) {
    for (int64_t r0 = 0; r0 < tile.regs; r0 += v) {
      layout::Coord first = tile.coord(t, r0);
      if (first[tileDim] % v)
        return false;
      for (int64_t j = 1; j < v; ++j) {
        layout::Coord c = tile.coord(t, r0 + j);
        for (size_t d = 0; d < c.size(); ++d)
          if (c[d] != first[d] + (d == tileDim ? j : 0))
            return false;
        if (writers && (*writers)[r0 + j] != (*writers)[r0])
          return false;
      }
    }
  }
  return true;
}

int64_t flash::simt::chooseVectorWidth(
    const TileInfo &tile, ArrayRef<int64_t> window, const GlobalView &view,
    Value lastOffset, int64_t numWarps,
    const std::vector<std::vector<uint32_t>> *writers) {
  unsigned last = view.type.getRank() - 1;
  auto it = llvm::find(window, static_cast<int64_t>(last));
  if (it == window.end() || !view.type.isStaticDim(last))
    return 1;
  size_t tileDim = it - window.begin();
  int64_t bytes = byteWidth(tile.type.getElementType());
  if (tile.type.getElementType().isInteger(1))
    return 1;
  int64_t lastDim = view.type.getShape()[last];
  int64_t offsetMultiple = knownMultiple(lastOffset);
  for (int64_t v = 16 / bytes; v >= 2; v /= 2) {
    if (tile.regs % v || lastDim % v || offsetMultiple % v)
      continue;
    if (registersFormVectors(tile, tileDim, v, numWarps, writers))
      return v;
  }
  return 1;
}

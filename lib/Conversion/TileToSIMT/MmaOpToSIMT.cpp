//===- MmaOpToSIMT.cpp - tile.mma -----------------------------------------===//
//
// tile.mma with the accumulator in a #tile.mma layout and the operands in
// its dot_op layouts: one nvvm.mma.sync m16n8k16 per atom and k-step, each
// taking its A, B and accumulator registers straight from the registers the
// layouts give the thread. A B operand whose load is fused into the MMA
// (markLoadsFusedIntoMma) is fetched one fragment at a time, from global
// memory (WindowAccess) or with ldmatrix (SharedOperandReader); so is an A
// operand read from shared memory.
//
// Tiles smaller than the atom are padded by their layouts (copies of real
// rows and columns): padded rows of A and columns of B only produce copies
// of real results, but the padding along K would add to them, so operand
// registers in the K padding are zeroed first. An accumulator with a dim of
// size 1 holds one atom along it (layout::mmaAccFragment).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "SharedOperandReader.h"
#include "WindowAccess.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

//===----------------------------------------------------------------------===//
// Fusing B's load
//===----------------------------------------------------------------------===//

/// A load (global or shared) whose only use is the B operand of an MMA later
/// in the same block, with no write to memory in between, is fetched fragment
/// by fragment inside the MMA: each fragment lives for one k-step instead of
/// the whole tile living across the MMA (K and V of attention would otherwise
/// pin hundreds of registers).
/// An A operand read from shared memory (tile.local_load) fuses the same way:
/// its fragments are read one k-step at a time (the K and V blocks of a
/// backward pass, read again for every query block).
static MmaOp fusedMmaUser(Operation *load) {
  if (!load->hasOneUse())
    return {};
  OpOperand &use = *load->getUses().begin();
  auto mma = dyn_cast<MmaOp>(use.getOwner());
  unsigned operand = isa<LocalLoadOp>(load) ? 0 : 1;
  if (!mma || use.getOperandNumber() > 1 || use.getOperandNumber() < operand ||
      mma->getBlock() != load->getBlock())
    return {};
  for (Operation *op = load->getNextNode(); op != mma; op = op->getNextNode()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects ? !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                       op->getNumRegions() != 0
                 : effects.hasEffect<MemoryEffects::Write>())
      return {};
  }
  return mma;
}

void flash::simt::markLoadsFusedIntoMma(Operation *kernel) {
  auto mark = [](Operation *load) {
    if (fusedMmaUser(load))
      load->setAttr(kFusedIntoMmaAttrName, UnitAttr::get(load->getContext()));
  };
  kernel->walk([&](LoadOp load) {
    if (!load.isGathered()) // its rows come with the index tiles' registers
      mark(load);
  });
  kernel->walk([&](LocalLoadOp load) { mark(load); });
}

namespace {

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

/// The atoms of one MMA, after its layouts have been checked.
struct MmaGeometry {
  layout::MmaParams params;
  SmallVector<int64_t, 2> aShape, bShape; // untransposed: M x K, K x N
  int64_t atomsM, atomsN, atomsK;
  bool bf16;
};

/// The operand layouts the lowering takes: the accumulator in a #tile.mma,
/// A and B in its dot_op layouts, transposed as the op says.
LogicalResult checkLayouts(MmaOp op, const TileInfo &a, const TileInfo &b,
                           const TileInfo &c) {
  auto aLayout = dyn_cast<DotOperandLayoutAttr>(a.layout);
  auto bLayout = dyn_cast<DotOperandLayoutAttr>(b.layout);
  auto cLayout = dyn_cast<MmaLayoutAttr>(c.layout);
  if (!cLayout || !isa<MmaLayoutAttr>(TileInfo::get(op.getType())->layout))
    return op.emitOpError("accumulator layout must be #tile.mma, got ")
           << describe(c.layout);
  if (!aLayout || aLayout.getOperandIndex() != 0 ||
      aLayout.getParent() != cLayout)
    return op.emitOpError("operand A layout must be #tile.dot_op<0, ")
           << describe(cLayout) << ">, got " << describe(a.layout);
  if (!bLayout || bLayout.getOperandIndex() != 1 ||
      bLayout.getParent() != cLayout)
    return op.emitOpError("operand B layout must be #tile.dot_op<1, ")
           << describe(cLayout) << ">, got " << describe(b.layout);
  if (aLayout.getTransposed() != op.getTransposeA())
    return op.emitOpError("transpose_a requires operand A in the transposed "
                          "dot_op layout and vice versa, got ")
           << describe(a.layout);
  if (bLayout.getTransposed() != op.getTransposeB())
    return op.emitOpError("transpose_b requires operand B in the transposed "
                          "dot_op layout and vice versa, got ")
           << describe(b.layout);
  return success();
}

FailureOr<MmaGeometry> getGeometry(MmaOp op, const TileInfo &a,
                                   const TileInfo &b, const TileInfo &c) {
  if (failed(checkLayouts(op, a, b, c)))
    return failure();
  auto cLayout = cast<MmaLayoutAttr>(c.layout);
  layout::MmaParams params = cLayout.getParams();
  if (params.warps[2] != 1)
    return op.emitOpError("warps along K are not supported, layout ")
           << describe(cLayout);
  Type opElem = a.type.getElementType();
  if (opElem != b.type.getElementType())
    return op.emitOpError("operands must have the same element type");

  SmallVector<int64_t, 2> aShape = a.shape, bShape = b.shape;
  if (op.getTransposeA())
    std::swap(aShape[0], aShape[1]);
  if (op.getTransposeB())
    std::swap(bShape[0], bShape[1]);
  auto [aM, aK] = layout::mmaAtomsPerWarp(params, layout::MmaRole::OperandA,
                                          aShape);
  auto [bK, bN] = layout::mmaAtomsPerWarp(params, layout::MmaRole::OperandB,
                                          bShape);
  auto [cM, cN] =
      layout::mmaAtomsPerWarp(params, layout::MmaRole::Acc, c.shape);
  if (aM != cM || bN != cN || aK != bK)
    return op.emitOpError("the atoms of A (")
           << aM << " x " << aK << "), B (" << bK << " x " << bN
           << ") and the accumulator (" << cM << " x " << cN
           << ") per warp do not match in layout " << describe(cLayout);
  return MmaGeometry{params, aShape, bShape, cM, cN, aK, opElem.isBF16()};
}

/// Registers first, first + 1 of `vec`.
Value registerPair(OpBuilder &b, Location loc, Value vec, int64_t first) {
  return vector::ShuffleOp::create(b, loc, vec, vec,
                                   ArrayRef<int64_t>{first, first + 1});
}

/// A register pair as one mma.sync operand register.
Value packPair(OpBuilder &b, Location loc, Value pair, bool bf16) {
  if (bf16) // the NVVM verifier wants bf16 pairs packed in i32
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  return pair;
}

/// Zeroes the operand registers that lie in the padding along K (the
/// operand's K is not a multiple of the layout's K step) before the MMA
/// reads them.
class KPadding {
public:
  KPadding(const TileInfo &tile, unsigned kDim, int64_t numWarps)
      : lanes(paddingLanes(tile, kDim, numWarps)) {}

  /// Registers `first`, `first + 1` of the operand (`pair`), zero where
  /// they are padding.
  Value apply(OpBuilder &b, Location loc, Operation *op, Value pair,
              int64_t first) const {
    if (!anyLane(lanes[first]) && !anyLane(lanes[first + 1]))
      return pair;
    auto type = cast<VectorType>(pair.getType());
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(type.getElementType()));
    SmallVector<Value> elems = extractAll(b, loc, pair, 2);
    for (int64_t e = 0; e < 2; ++e)
      elems[e] = replaceInLanes(b, loc, getThreadIds(b, op), lanes[first + e],
                                zero, elems[e]);
    return vector::FromElementsOp::create(b, loc, type, elems);
  }

private:
  std::vector<std::vector<uint32_t>> lanes; // [reg][warp]
};

/// Where B's fragments come from: B's registers, or straight from global or
/// shared memory when B's load is fused into this MMA.
class BFragments {
public:
  BFragments(OpBuilder &b, Location loc, Value registers)
      : b(b), loc(loc), ib{b, loc}, registers(registers) {}
  BFragments(const BFragments &) = delete;
  BFragments &operator=(const BFragments &) = delete;

  LogicalResult fuse(MmaOp op, ConversionPatternRewriter &rewriter) {
    auto bLoad = op.getB().getDefiningOp<LoadOp>();
    if (bLoad && bLoad->hasAttr(kFusedIntoMmaAttrName)) {
      SmallVector<Value> offsets;
      for (Value offset : bLoad.getOffsets())
        offsets.push_back(rewriter.getRemappedValue(offset));
      global = prepareWindowLoad(b, loc, &ib, bLoad, offsets);
      if (failed(global))
        return failure();
      addressing.emplace(b, loc, &ib, global->view, global->offsets, bLoad,
                         global->window, AccessMap::of(global->tile),
                         getNumWarps(op) * kWarp, global->warp, global->lane);
    }
    auto bLocal = op.getB().getDefiningOp<LocalLoadOp>();
    if (bLocal && bLocal->hasAttr(kFusedIntoMmaAttrName))
      shared.emplace(b, loc, bLocal,
                     rewriter.getRemappedValue(bLocal.getSource()),
                     rewriter.getRemappedValue(bLocal.getSlot()));
    return success();
  }

  /// Whether the fragments are read from shared memory, several at a time.
  bool readsShared() const { return shared.has_value(); }
  /// Position of the read that fetches the fragment at register `first`.
  int64_t readOrder(int64_t first) const {
    return shared->readOrder(first / 2);
  }

  /// The two operand registers of the fragment at register `first` of B,
  /// each register pair passed through `finish(pair, register of B)`.
  SmallVector<Value> get(int64_t first,
                         function_ref<Value(Value, int64_t)> finish) {
    SmallVector<Value> regs;
    if (shared) {
      for (int64_t i = 0; i < 2; ++i)
        regs.push_back(finish(shared->pair(first / 2 + i), first + 2 * i));
      return regs;
    }
    Value source = registers;
    int64_t at = first;
    if (succeeded(global)) {
      source = emitWindowLoads(b, loc, *addressing, *global, first, 4);
      at = 0;
    }
    for (int64_t i = 0; i < 2; ++i)
      regs.push_back(
          finish(registerPair(b, loc, source, at + 2 * i), first + 2 * i));
    return regs;
  }

private:
  OpBuilder &b;
  Location loc;
  IndexBuilder ib; // referenced by the IndexValues below: not movable
  Value registers;
  FailureOr<WindowLoad> global = failure();
  std::optional<WindowAddressing> addressing;
  std::optional<SharedOperandReader> shared;
};

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// The (n, k) steps of the MMA, n and k outermost so that each B fragment is
/// live for one column of atoms; A and the accumulator stay in registers
/// throughout. A B operand read from shared memory goes in the order of its
/// reads instead: one ldmatrix.x4 holds the fragments of two atoms. An A
/// operand read from shared memory puts k outermost, so that each of its
/// fragments is live for one k-step.
SmallVector<std::pair<int64_t, int64_t>>
orderSteps(const MmaGeometry &g, const BFragments &bFragments,
           function_ref<int64_t(int64_t, int64_t)> bFirst, bool aReadsShared) {
  SmallVector<std::pair<int64_t, int64_t>> steps;
  for (int64_t n = 0; n < g.atomsN; ++n)
    for (int64_t k = 0; k < g.atomsK; ++k)
      steps.push_back({n, k});
  if (bFragments.readsShared())
    llvm::stable_sort(steps, [&](auto x, auto y) {
      return bFragments.readOrder(bFirst(x.first, x.second)) <
             bFragments.readOrder(bFirst(y.first, y.second));
    });
  if (aReadsShared)
    llvm::stable_sort(steps, [](auto x, auto y) { return x.second < y.second; });
  return steps;
}

/// The reader of A's fragments when A's tile.local_load is fused into `op`.
std::optional<SharedOperandReader>
fusedAReader(MmaOp op, OpBuilder &b, ConversionPatternRewriter &rewriter) {
  auto aLocal = op.getA().getDefiningOp<LocalLoadOp>();
  if (!aLocal || !aLocal->hasAttr(kFusedIntoMmaAttrName))
    return std::nullopt;
  return std::optional<SharedOperandReader>(
      std::in_place, b, op.getLoc(), aLocal,
      rewriter.getRemappedValue(aLocal.getSource()),
      rewriter.getRemappedValue(aLocal.getSlot()));
}

struct MmaLowering : OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto a = TileInfo::get(op.getA().getType());
    auto b = TileInfo::get(op.getB().getType());
    auto c = TileInfo::get(op.getAcc().getType());
    FailureOr<MmaGeometry> g = getGeometry(op, *a, *b, *c);
    if (failed(g))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &builder = rewriter;
    BFragments bFragments(builder, loc, adaptor.getB());
    if (failed(bFragments.fuse(op, rewriter)))
      return failure();
    int64_t numWarps = getNumWarps(op);
    KPadding aPadding(*a, op.getTransposeA() ? 0 : 1, numWarps);
    KPadding bPadding(*b, op.getTransposeB() ? 1 : 0, numWarps);
    auto bFirst = [&](int64_t n, int64_t k) {
      return layout::mmaAtomFirstRegister(g->params, layout::MmaRole::OperandB,
                                          g->bShape, k, n);
    };
    std::optional<SharedOperandReader> aShared =
        fusedAReader(op, builder, rewriter);
    auto aPair = [&](int64_t first) {
      return aShared ? aShared->pair(first / 2)
                     : registerPair(builder, loc, adaptor.getA(), first);
    };
    SmallVector<Value> acc = extractAll(builder, loc, adaptor.getAcc(), c->regs);
    for (auto [n, k] :
         orderSteps(*g, bFragments, bFirst, aShared.has_value())) {
      SmallVector<Value> bRegs =
          bFragments.get(bFirst(n, k), [&](Value pair, int64_t reg) {
            return packPair(builder, loc,
                            bPadding.apply(builder, loc, op, pair, reg),
                            g->bf16);
          });
      for (int64_t m = 0; m < g->atomsM; ++m) {
        auto cRegs = layout::mmaAccFragment(g->params, c->shape, m, n);
        if (!cRegs) // the same registers as atom (0, n)
          continue;
        int64_t aFirst = layout::mmaAtomFirstRegister(
            g->params, layout::MmaRole::OperandA, g->aShape, m, k);
        SmallVector<Value> aRegs;
        for (int64_t i = 0; i < 4; ++i) {
          Value pair = aPair(aFirst + 2 * i);
          pair = aPadding.apply(builder, loc, op, pair, aFirst + 2 * i);
          aRegs.push_back(packPair(builder, loc, pair, g->bf16));
        }
        emitAtom(builder, loc, aRegs, bRegs, g->bf16, acc, *cRegs);
      }
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, c->vectorType(),
                                                        acc);
    return success();
  }

  /// One mma.sync on the accumulator registers `cRegs` (c0..c3; a register
  /// may appear twice when the accumulator pads a dim of size 1, and then
  /// both results are the same).
  static void emitAtom(OpBuilder &builder, Location loc, ArrayRef<Value> aRegs,
                       ArrayRef<Value> bRegs, bool bf16,
                       SmallVector<Value> &acc, std::array<int64_t, 4> cRegs) {
    Type f32 = builder.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(builder.getContext(),
                                                       {f32, f32, f32, f32});
    NVVM::MMATypes ptx = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    SmallVector<Value> cValues;
    for (int64_t r : cRegs)
      cValues.push_back(acc[r]);
    Value d = NVVM::MmaOp::create(
        builder, loc, resultType, aRegs, bRegs, cValues,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{ptx, ptx},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      acc[cRegs[i]] =
          LLVM::ExtractValueOp::create(builder, loc, d, ArrayRef<int64_t>{i});
  }
};

} // namespace

void flash::simt::populateMmaOpToSIMTPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<MmaLowering>(converter, patterns.getContext());
}

//===- WgmmaOpToSIMT.cpp - tile.mma on a warpgroup layout -----------------===//
//
// On sm_90a (tile.wgmma), a tile.mma whose accumulator has the warpgroup
// layout (#tile.mma<warps = [4 G, 1, 1], values = [1, 1, 1]>, WgmmaTarget.h)
// and whose B is read from a shared buffer in wgmma's canonical layout
// right before it: for each 64-row repeat of every warpgroup, each chunk of
// at most 256 columns and each k16 step, one wgmma.mma_async. Any other MMA
// is left to mma.sync (MmaOpToSIMT.cpp). B is read from its shared buffer
// through a matrix descriptor (its tile.local_load, fused into the MMA, is
// not lowered where it stands); so is A when its local_load is fused (SS
// form: nvvm.wgmma.mma_async). Otherwise A comes from the registers of its
// dot_op layout, which hold wgmma's register A fragment (RS form: inline
// PTX, since MLIR's NVVM dialect has no op for it; its exact form is in
// docs/ir-conventions.md).
//
// The accumulator registers of repeat r, columns [n0, n0 + Nc) are registers
// r N/2 + n0/2 .. + Nc/2 of the tile: the layout is mma.sync's m16n8 atom
// over the same warps, which checkWarpgroupFragments proves register by
// register against layout::wgmmaAccCoord. The wgmmas of one tile.mma are
// preceded by wgmma.fence (ordinary instructions wrote the accumulator and
// A registers) and followed by commit_group and wait_group 0 (ordinary
// instructions read the results next).
//
// Descriptors are i64 values: the bits of layout::wgmmaOperandDescriptor
// for the slice (relative to the slot) plus the slot's shared address in
// 16-byte units, from llvm.ptrtoint of its !llvm.ptr<3>.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "Utility.h"

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;
namespace L = flash::tile::layout;

namespace {

/// The most columns one wgmma computes.
constexpr int64_t kWgmmaMaxN = 256;

/// The swizzle of a staging buffer whose slots are wgmma's canonical layout
/// (rows, or the rows of its column blocks, of one swizzle span, swizzled
/// over it), or nothing.
std::optional<L::SmemSwizzle> canonicalSwizzle(SharedType type) {
  std::optional<L::SmemSwizzle> swizzle;
  for (L::SmemSwizzle s :
       {L::SmemSwizzle::B32, L::SmemSwizzle::B64, L::SmemSwizzle::B128})
    if (type.getStoredRowBytes() == L::swizzleSpanBytes(s))
      swizzle = s;
  if (!swizzle || type.getRows() % 8 != 0)
    return std::nullopt;
  L::SwizzleParams params = swizzleOf(type);
  for (int64_t r = 0; r < type.getRows(); ++r)
    for (int64_t c = 0; c < type.getCols(); ++c)
      if (L::swizzledOffset<int64_t>(params, r, c) !=
          L::canonicalSmemOffset(*swizzle, type.getElementBytes(),
                                 type.getRows(), type.getCols(), r, c))
        return std::nullopt;
  return swizzle;
}

/// A shared operand of the MMA: the slot its local_load reads, and how
/// wgmma reads it (stored rows x cols; MN-major when the stored rows are K).
struct SharedOperand {
  SharedType type;
  L::SmemSwizzle swizzle;
  bool mnMajor;
  Value slotUnits; ///< i64: the slot's shared address >> 4

  /// The descriptor of the (MN) x 16 slice at (mn0, k0).
  Value descriptor(OpBuilder &b, Location loc, int64_t mn0, int64_t k0,
                   Value extraUnits = {}) const {
    L::WgmmaDescriptor d = L::wgmmaOperandDescriptor(
        swizzle, mnMajor, type.getElementBytes(), type.getRows(),
        type.getCols(), /*tileAddress=*/0, mn0, k0);
    Value bits = arith::ConstantIntOp::create(
        b, loc, static_cast<int64_t>(L::encodeWgmmaDescriptor(d)), 64);
    Value desc = arith::AddIOp::create(b, loc, bits, slotUnits);
    if (extraUnits)
      desc = arith::AddIOp::create(b, loc, desc, extraUnits);
    return desc;
  }
};

/// The shared operand read by `load`'s fused local_load, or nothing when the
/// operand is not such a read.
std::optional<SharedOperand> sharedOperand(MmaOp op, Value operand,
                                           bool mnMajor,
                                           ConversionPatternRewriter &rewriter,
                                           IndexBuilder *ib) {
  auto local = operand.getDefiningOp<LocalLoadOp>();
  if (!local || !local->hasAttr(kFusedIntoMmaAttrName))
    return std::nullopt;
  SharedType type = local.getSource().getType();
  std::optional<L::SmemSwizzle> swizzle = canonicalSwizzle(type);
  if (!swizzle)
    return std::nullopt;
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  Value slot = slotStart(b, loc, ib, type,
                         rewriter.getRemappedValue(local.getSource()),
                         rewriter.getRemappedValue(local.getSlot()));
  Value address = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), slot);
  Value units = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, address,
          arith::ConstantIntOp::create(b, loc, 0x3ffff, 64).getResult()),
      arith::ConstantIntOp::create(b, loc, 4, 64).getResult());
  return SharedOperand{type, *swizzle, mnMajor, units};
}

/// Checks, for every thread and register, that the layouts of the
/// accumulator and of a register A operand are wgmma's fragments with the
/// register numbering the lowering uses.
LogicalResult checkWarpgroupFragments(MmaOp op, const TileInfo &c,
                                      const TileInfo *a, int64_t atomsK) {
  int64_t numThreads = getNumWarps(op) * kWarp;
  int64_t m = c.shape[0], n = c.shape[1];
  int64_t rowsPerStep = numThreads / L::kWarpgroupSize * L::kWgmmaAtomM;
  for (int64_t t = 0; t < numThreads; ++t) {
    int64_t group = t / L::kWarpgroupSize, inGroup = t % L::kWarpgroupSize;
    for (int64_t r = 0; r < m / rowsPerStep; ++r) {
      int64_t rowBase = r * rowsPerStep + group * L::kWgmmaAtomM;
      for (int64_t i = 0; i < n / 2; ++i) {
        L::Coord want = L::wgmmaAccCoord<int64_t>(inGroup, i);
        L::Coord have = c.coord(t, r * n / 2 + i);
        if (have[0] != rowBase + want[0] || have[1] != want[1])
          return op.emitOpError("the accumulator layout ")
                 << describe(c.layout)
                 << " does not hold wgmma's accumulator fragment";
      }
      for (int64_t k = 0; a && k < atomsK; ++k)
        for (int64_t e = 0; e < L::kWgmmaAElements; ++e) {
          L::Coord want = L::wgmmaARegCoord<int64_t>(inGroup, e);
          int64_t first = L::mmaAtomFirstRegister(
              cast<MmaLayoutAttr>(c.layout).getParams(), L::MmaRole::OperandA,
              {m, atomsK * L::kWgmmaAtomK16}, r, k);
          L::Coord have = a->coord(t, first + e);
          if (op.getTransposeA())
            std::swap(have[0], have[1]);
          if (have[0] != rowBase + want[0] ||
              have[1] != k * L::kWgmmaAtomK16 + want[1])
            return op.emitOpError("the A operand layout ")
                   << describe(a->layout)
                   << " does not hold wgmma's register A fragment";
        }
    }
  }
  return success();
}

/// The RS form: inline PTX (docs/ir-conventions.md), the accumulators tied
/// to the results, scale-d a predicate set from the last operand (1).
Value emitRegisterAWgmma(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                         ArrayRef<Value> aRegs, Value descB, int64_t n,
                         bool bf16, bool transB) {
  int64_t h = n / 2;
  std::string type = bf16 ? "bf16" : "f16";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * h + 5 << ", 0;\n"
     << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32." << type << "."
     << type << " {";
  for (int64_t i = 0; i < h; ++i)
    os << (i ? ", " : "") << "$" << i;
  os << "}, {";
  for (int64_t i = 0; i < 4; ++i)
    os << (i ? ", " : "") << "$" << 2 * h + i;
  os << "}, $" << 2 * h + 4 << ", p, 1, 1, " << (transB ? 1 : 0) << ";\n}\n";
  std::string constraints;
  for (int64_t i = 0; i < h; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < h; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l,r";
  SmallVector<Value> operands(acc);
  llvm::append_range(operands, aRegs);
  operands.push_back(descB);
  // scale-d: accumulate (the accumulator is the program's, zero or not).
  operands.push_back(arith::ConstantIntOp::create(b, loc, 1, 32));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(h, f32));
  return LLVM::InlineAsmOp::create(
             b, loc, resultType, operands, b.getStringAttr(text),
             b.getStringAttr(constraints), b.getUnitAttr(),
             /*is_align_stack=*/UnitAttr(), LLVM::TailCallKindAttr(),
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// The SS form: upstream's op.
Value emitSharedAWgmma(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                       Value descA, Value descB, int64_t n, bool bf16,
                       bool aMnMajor, bool bMnMajor) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(acc.size(), f32));
  Value packed = LLVM::UndefOp::create(b, loc, structType);
  for (auto [i, v] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, v,
                                         ArrayRef<int64_t>{int64_t(i)});
  auto type = NVVM::WGMMATypesAttr::get(
      ctx, bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // Upstream's layouts: row = K-major for A, col = K-major for B.
  auto layoutA = NVVM::MMALayoutAttr::get(
      ctx, aMnMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  auto layoutB = NVVM::MMALayoutAttr::get(
      ctx, bMnMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col);
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, structType, packed, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, L::kWgmmaAtomM, n, L::kWgmmaAtomK16), type,
      type, NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
      layoutA, layoutB, /*satfinite=*/NVVM::MMAIntOverflowAttr());
}

/// A register pair (vector<2 x T>) of A as one 32-bit wgmma register.
Value packA(OpBuilder &b, Location loc, Value vec, int64_t first) {
  Value pair = vector::ShuffleOp::create(b, loc, vec, vec,
                                         ArrayRef<int64_t>{first, first + 1});
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}

/// Whether `op` lowers to wgmma (WgmmaLowering below): on sm_90a, the
/// warpgroup layout, f16/bf16 operands with an f32 accumulator, whole
/// 64 x N x 16 steps, and B (and A when fused) a fused read of a buffer in
/// wgmma's canonical layout.
bool lowersToWgmma(MmaOp op) {
  if (!targetsWgmma(op))
    return false;
  auto c = TileInfo::get(op.getAcc().getType());
  auto cLayout = dyn_cast<MmaLayoutAttr>(c->layout);
  if (!cLayout || !isWarpgroupShaped(cLayout) ||
      !isa<MmaLayoutAttr>(TileInfo::get(op.getType())->layout))
    return false;
  auto a = TileInfo::get(op.getA().getType());
  auto aLayout = dyn_cast<DotOperandLayoutAttr>(a->layout);
  if (!aLayout || aLayout.getOperandIndex() != 0 ||
      aLayout.getParent() != cLayout ||
      aLayout.getTransposed() != op.getTransposeA())
    return false;
  Type element = a->type.getElementType();
  auto bType = cast<RankedTensorType>(op.getB().getType());
  if (!(element.isF16() || element.isBF16()) ||
      bType.getElementType() != element || !c->type.getElementType().isF32())
    return false;
  int64_t m = c->shape[0], n = c->shape[1];
  int64_t k = bType.getDimSize(op.getTransposeB() ? 1 : 0);
  int64_t rowsPerStep = getNumWarps(op) / L::kWarpgroupWarps * L::kWgmmaAtomM;
  if (m % rowsPerStep != 0 || n % L::kAtomN != 0 || k % L::kWgmmaAtomK16)
    return false;
  auto bLocal = op.getB().getDefiningOp<LocalLoadOp>();
  if (!bLocal || !bLocal->hasAttr(kFusedIntoMmaAttrName) ||
      !canonicalSwizzle(bLocal.getSource().getType()))
    return false;
  // A fused A has no registers: wgmma must read it from its buffer.
  auto aLocal = op.getA().getDefiningOp<LocalLoadOp>();
  return !aLocal || !aLocal->hasAttr(kFusedIntoMmaAttrName) ||
         canonicalSwizzle(aLocal.getSource().getType());
}

struct WgmmaLowering : OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!lowersToWgmma(op))
      return failure();
    auto c = TileInfo::get(op.getAcc().getType());
    auto cLayout = cast<MmaLayoutAttr>(c->layout);
    auto a = TileInfo::get(op.getA().getType());
    Type element = a->type.getElementType();
    auto bType = cast<RankedTensorType>(op.getB().getType());
    int64_t m = c->shape[0], n = c->shape[1];
    int64_t k = bType.getDimSize(op.getTransposeB() ? 1 : 0);
    int64_t groups = getNumWarps(op) / L::kWarpgroupWarps;
    int64_t rowsPerStep = groups * L::kWgmmaAtomM;
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    IndexBuilder ib{b, loc};
    std::optional<SharedOperand> bShared = sharedOperand(
        op, op.getB(), /*mnMajor=*/!op.getTransposeB(), rewriter, &ib);
    std::optional<SharedOperand> aShared = sharedOperand(
        op, op.getA(), /*mnMajor=*/op.getTransposeA(), rewriter, &ib);
    int64_t atomsK = k / L::kWgmmaAtomK16;
    if (failed(checkWarpgroupFragments(op, *c, aShared ? nullptr : &*a,
                                       atomsK)))
      return failure();

    // Warpgroup g's rows start 64 g rows into each step: its A descriptor
    // moves by the canonical offset of 64 rows (linear in g, checked).
    Value groupUnits;
    if (aShared && groups > 1) {
      auto start = [&](int64_t g) {
        return L::wgmmaOperandDescriptor(
                   aShared->swizzle, aShared->mnMajor,
                   aShared->type.getElementBytes(), aShared->type.getRows(),
                   aShared->type.getCols(), 0, g * L::kWgmmaAtomM, 0)
            .startAddress;
      };
      int64_t stride = start(1) - start(0);
      for (int64_t g = 2; g < groups; ++g)
        if (start(g) - start(0) != g * stride)
          return op.emitOpError("the warpgroups' A rows are not evenly "
                                "spaced in shared buffer ")
                 << aShared->type;
      IndexValue group = IndexValue(&ib, getThreadIds(b, op).warp) /
                         int64_t(L::kWarpgroupWarps) * (stride / 16);
      groupUnits = arith::ExtUIOp::create(b, loc, b.getI64Type(), group.get());
    }

    bool bf16 = element.isBF16();
    SmallVector<Value> acc = extractAll(b, loc, adaptor.getAcc(), c->regs);
    // A's 32-bit registers are packed before the fence: wgmma.fence orders
    // every register write before it against the wgmmas after it.
    DenseMap<std::pair<int64_t, int64_t>, SmallVector<Value>> aRegisters;
    for (int64_t r = 0; !aShared && r < m / rowsPerStep; ++r)
      for (int64_t kk = 0; kk < atomsK; ++kk) {
        int64_t aFirst = L::mmaAtomFirstRegister(
            cLayout.getParams(), L::MmaRole::OperandA, {m, k}, r, kk);
        for (int64_t i = 0; i < 4; ++i)
          aRegisters[{r, kk}].push_back(
              packA(b, loc, adaptor.getA(), aFirst + 2 * i));
      }
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t r = 0; r < m / rowsPerStep; ++r) {
      for (int64_t n0 = 0; n0 < n; n0 += kWgmmaMaxN) {
        int64_t nc = std::min(kWgmmaMaxN, n - n0);
        int64_t first = r * n / 2 + n0 / 2;
        for (int64_t kk = 0; kk < atomsK; ++kk) {
          Value descB = bShared->descriptor(b, loc, n0, kk * L::kWgmmaAtomK16);
          ArrayRef<Value> regs = ArrayRef<Value>(acc).slice(first, nc / 2);
          Value d;
          if (aShared) {
            Value descA = aShared->descriptor(
                b, loc, r * rowsPerStep, kk * L::kWgmmaAtomK16, groupUnits);
            d = emitSharedAWgmma(b, loc, regs, descA, descB, nc, bf16,
                                 aShared->mnMajor, bShared->mnMajor);
          } else {
            d = emitRegisterAWgmma(b, loc, regs, aRegisters[{r, kk}], descB,
                                   nc, bf16, bShared->mnMajor);
          }
          for (int64_t i = 0; i < nc / 2; ++i)
            acc[first + i] =
                LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i});
        }
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, c->vectorType(),
                                                        acc);
    return success();
  }
};

} // namespace

/// The descriptors leave the base offset 0, which assumes the swizzle
/// pattern starts on its natural boundary (the pattern's 8 rows: 256, 512
/// or 1024 bytes). A slot whose start is known (the buffer's offset and a
/// constant slot, or every slot when the slot size keeps the phase) and off
/// that boundary would read other bytes than the copies wrote.
static LogicalResult checkOperandAlignment(MmaOp op, Value operand) {
  auto local = operand.getDefiningOp<LocalLoadOp>();
  if (!local || !local->hasAttr(kFusedIntoMmaAttrName))
    return success();
  SharedType type = local.getSource().getType();
  auto alloc = local.getSource().getDefiningOp<LocalAllocOp>();
  std::optional<L::SmemSwizzle> swizzle = canonicalSwizzle(type);
  if (!alloc || !alloc.getOffset() || !swizzle)
    return success();
  int64_t align = L::swizzleAtomBytes(*swizzle);
  int64_t start = *alloc.getOffset();
  APInt slot;
  if (matchPattern(local.getSlot(), m_ConstantInt(&slot)))
    start += slot.getSExtValue() * type.getSlotBytes();
  else if (type.getSlotBytes() % align != 0)
    return success(); // some slots may be aligned: not provable here
  if (start % align == 0)
    return success();
  InFlightDiagnostic diag =
      op.emitOpError("reads shared buffer ")
      << type << " through a wgmma descriptor at byte " << start
      << ", which is not aligned to the " << align << " bytes its "
      << L::swizzleName(*swizzle)
      << " swizzle pattern needs (descriptors take base offset 0)";
  diag.attachNote(alloc.getLoc()) << "buffer allocated here at offset "
                                  << *alloc.getOffset();
  return failure();
}

LogicalResult flash::simt::verifyWgmmaOperands(Operation *kernel) {
  bool ok = true;
  kernel->walk([&](MmaOp op) {
    if (lowersToWgmma(op))
      ok &= succeeded(checkOperandAlignment(op, op.getA())) &&
            succeeded(checkOperandAlignment(op, op.getB()));
  });
  return success(ok);
}

void flash::simt::populateWgmmaOpToSIMTPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  // Before mma.sync's pattern, which takes every MMA this one leaves.
  patterns.add<WgmmaLowering>(converter, patterns.getContext(),
                              /*benefit=*/2);
}

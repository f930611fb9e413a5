//===- WgmmaOpToSIMT.cpp - tile.mma on a warpgroup layout -----------------===//
//
// On sm_90a (tile.wgmma), a tile.mma whose accumulator has the warpgroup
// layout (#tile.mma<warps = [4 G, 1, 1], values = [1, 1, 1]>, WgmmaTarget.h)
// and whose B is read from a shared buffer in wgmma's canonical layout
// right before it: for each 64-row repeat of every warpgroup, each chunk of
// at most 256 columns and each k16 step (k32 for f8e4m3 operands, which
// wgmma reads K-major only: a K-major B takes A from shared memory, the SS
// form; a B stored [K, N], P V's V, is first copied K-major by the warps
// into a buffer of the MMA's own, its keys in the order P's register
// fragment holds them, fp8PKey, for the RS form), one wgmma.mma_async.
// Any other MMA
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

#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/IR/Matchers.h"

#include <map>

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
  /// Whether the units add into the low word only (see descriptor()).
  bool lowWordUnits = false;

  /// The descriptor of the (MN) x 16 slice at (mn0, k0).
  Value descriptor(OpBuilder &b, Location loc, int64_t mn0, int64_t k0,
                   Value extraUnits = {}) const {
    L::WgmmaDescriptor d = L::wgmmaOperandDescriptor(
        swizzle, mnMajor, type.getElementBytes(), type.getRows(),
        type.getCols(), /*tileAddress=*/0, mn0, k0);
    uint64_t encoded = L::encodeWgmmaDescriptor(d);
    if (!lowWordUnits) {
      Value desc = arith::AddIOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, int64_t(encoded), 64),
          slotUnits);
      if (extraUnits)
        desc = arith::AddIOp::create(b, loc, desc, extraUnits);
      return desc;
    }
    // The units add into the low word only: the start address (bits 0-13)
    // of a shared address under 256 KB never carries past bit 31, so the
    // high word (swizzle, stride) is a constant ptxas keeps as an immediate
    // instead of a register per descriptor.
    Type i32 = b.getI32Type();
    Value low = arith::AddIOp::create(
        b, loc,
        arith::ConstantIntOp::create(b, loc, int64_t(uint32_t(encoded)), 32),
        arith::TruncIOp::create(b, loc, i32, slotUnits));
    if (extraUnits)
      low = arith::AddIOp::create(
          b, loc, low, arith::TruncIOp::create(b, loc, i32, extraUnits));
    Value high = arith::ConstantIntOp::create(
        b, loc, static_cast<int64_t>(encoded & ~uint64_t(0xffffffff)), 64);
    return arith::OrIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), low), high);
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
/// to the results, scale-d a predicate set from the last operand (1:
/// accumulate; 0: the accumulators are not read).
Value emitRegisterAWgmma(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                         ArrayRef<Value> aRegs, Value descB, int64_t n,
                         NVVM::WGMMATypes inType, bool transB, bool scaleD) {
  int64_t h = n / 2;
  bool fp8 = inType == NVVM::WGMMATypes::e4m3;
  std::string type = fp8                                ? "e4m3"
                     : inType == NVVM::WGMMATypes::bf16 ? "bf16"
                                                        : "f16";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * h + 5 << ", 0;\n"
     << "wgmma.mma_async.sync.aligned.m64n" << n << (fp8 ? "k32" : "k16")
     << ".f32." << type << "." << type << " {";
  for (int64_t i = 0; i < h; ++i)
    os << (i ? ", " : "") << "$" << i;
  os << "}, {";
  for (int64_t i = 0; i < 4; ++i)
    os << (i ? ", " : "") << "$" << 2 * h + i;
  // 8-bit forms have no imm-trans-b: B is K-major.
  os << "}, $" << 2 * h + 4 << ", p, 1, 1";
  if (!fp8)
    os << ", " << (transB ? 1 : 0);
  os << ";\n}\n";
  std::string constraints;
  for (int64_t i = 0; i < h; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < h; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l,r";
  SmallVector<Value> operands(acc);
  llvm::append_range(operands, aRegs);
  operands.push_back(descB);
  operands.push_back(arith::ConstantIntOp::create(b, loc, scaleD ? 1 : 0, 32));
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

/// The SS form: upstream's op. `type` f16, bf16 (m64nNk16) or e4m3
/// (m64nNk32, K-major A and B only).
Value emitSharedAWgmma(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                       Value descA, Value descB, int64_t n,
                       NVVM::WGMMATypes inType, bool aMnMajor, bool bMnMajor) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(acc.size(), f32));
  Value packed = LLVM::UndefOp::create(b, loc, structType);
  for (auto [i, v] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, v,
                                         ArrayRef<int64_t>{int64_t(i)});
  auto type = NVVM::WGMMATypesAttr::get(ctx, inType);
  int64_t k = inType == NVVM::WGMMATypes::e4m3 ? L::kWgmmaAtomK8
                                               : L::kWgmmaAtomK16;
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // Upstream's layouts: row = K-major for A, col = K-major for B.
  auto layoutA = NVVM::MMALayoutAttr::get(
      ctx, aMnMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  auto layoutB = NVVM::MMALayoutAttr::get(
      ctx, bMnMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col);
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, structType, packed, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, L::kWgmmaAtomM, n, k), type,
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

/// The K-major image of an f8e4m3 V slot ([keys, dims], MN-major for P V)
/// that the consumers write into the kernel's transpose buffer
/// (reserveFp8TransposeBuffers): [dims, keys] in wgmma's canonical layout,
/// the widest swizzle span (128, 64 or 32 bytes) that divides the keys, in
/// column blocks of one span when the keys are more, keys in
/// layout::fp8PKey order within each 32-key block (the order P's register
/// fragment takes them in). Null when the slot has no such image.
SharedType transposedFp8Slot(SharedType v) {
  int64_t keys = v.getRows(), dims = v.getCols();
  int64_t span = keys % 128 == 0 ? 128 : keys % 64 == 0 ? 64 : 32;
  if (keys % L::kWgmmaAtomK8 != 0 || dims % 8 != 0)
    return {};
  auto t = SharedType::get(v.getContext(), {1, dims, keys},
                           v.getElementType(), /*perPhase=*/128 / span,
                           /*maxPhase=*/span / 16,
                           /*blockCols=*/keys > span ? span : 0);
  if (!canonicalSwizzle(t))
    return {};
  return t;
}

/// Whether `op` is an f8e4m3 MMA whose B is stored [K, N] (P V's V).
bool transposesFp8B(MmaOp op) {
  return isa<Float8E4M3FNType>(
             cast<RankedTensorType>(op.getB().getType()).getElementType()) &&
         !op.getTransposeB();
}

/// The MMA attribute (i64) holding the byte offset of its transposed-B
/// buffer in @__flashc_smem.
constexpr llvm::StringLiteral kFp8TransposeOffsetAttr =
    "simt.fp8_transpose_offset";

/// The consumers' transposing copy of an f8e4m3 V slot (rows = keys) into
/// its K-major image `vt` at `dst`, in 4 x 4 byte blocks. All threads meet
/// first (the wgmma that read `dst` last has completed in every warp: its
/// wait precedes this MMA), then each thread reads V's keys 2q, 2q + 1,
/// 2q + 8, 2q + 9 of a 16-key half block over 8 or 4 dims (one load per
/// key, 8 where the blocks split evenly over the threads; 16 would hold 8
/// more registers beside the scores of the Q K^T still in flight) and
/// writes, per 4 dims, the
/// four transposed words (row d + j of Vt, slots 4q .. 4q + 3 in the fp8
/// key order: byte j of each key's word), fences the generic writes for
/// the async proxy (wgmma) and all meet again. V itself is only
/// read, so a slot may be transposed any number of times. The barriers are
/// the CTA's (the consumers' named barrier in a warp-specialized kernel).
LogicalResult transposeFp8Slot(MmaOp op, OpBuilder &b, Location loc,
                               IndexBuilder &ib, SharedType v, SharedType vt,
                               Value slot, Value dst) {
  int64_t keys = v.getRows(), dims = v.getCols();
  int64_t threads = getNumWarps(op) * kWarp;
  // Bytes per key a thread reads at once (8 or 4 dims).
  int64_t width = 0;
  for (int64_t w : {8, 4})
    if (!width && dims % w == 0 && (dims / w * (keys / 4)) % threads == 0)
      width = w;
  if (!width)
    return op.emitOpError("the f8e4m3 V tile of ")
           << keys << " x " << dims << " does not split into the " << threads
           << " threads' 4 x 4 byte blocks for its transposed copy";
  int64_t blocks = dims / width * (keys / 4);
  L::SwizzleParams from = swizzleOf(v), to = swizzleOf(vt);
  IndexValue tid(&ib, getThreadIds(b, op).tid);
  Type i32 = b.getI32Type();
  auto c = [&](int64_t x) { return IndexValue(&ib, x); };
  // The 4 x 4 byte transpose of words w0..w3 (word j: byte j of each w_e,
  // in byte e) in eight prmt: pairs of words interleaved by byte, then the
  // interleaved pairs by half word.
  auto prmt = [&](Value lo, Value hi, int64_t selector) {
    return NVVM::PermuteOp::create(b, loc, i32, lo, hi,
                                   i32Const(b, loc, selector),
                                   NVVM::PermuteMode::DEFAULT)
        .getResult();
  };
  auto transpose4x4 = [&](const std::array<Value, 4> &w) {
    Value lo01 = prmt(w[0], w[1], 0x5140), hi01 = prmt(w[0], w[1], 0x7362);
    Value lo23 = prmt(w[2], w[3], 0x5140), hi23 = prmt(w[2], w[3], 0x7362);
    return std::array<Value, 4>{
        prmt(lo01, lo23, 0x5410), prmt(lo01, lo23, 0x7632),
        prmt(hi01, hi23, 0x5410), prmt(hi01, hi23, 0x7632)};
  };
  // Marked for simt-defer-wgmma-waits: a Q K^T in flight runs under it.
  auto mark = [&](Operation *o) {
    o->setAttr(kFp8TransposeAttrName, b.getUnitAttr());
  };
  mark(NVVM::BarrierOp::create(b, loc));
  Type words = width == 4 ? i32 : Type(VectorType::get({width / 4}, i32));
  for (int64_t i = 0; i < blocks / threads; ++i) {
    // Block i of this thread: dims d .. d + width - 1, slots 4m .. 4m + 3;
    // slot 4m is in key block m / 8, half h = m % 8 / 4, q = m % 4.
    IndexValue idx = tid + c(i * threads);
    IndexValue d = idx / c(keys / 4) * c(width), m = idx % c(keys / 4);
    IndexValue keyBase = m / c(8) * c(32) + m % c(8) / c(4) * c(16) +
                         m % c(4) * c(2);
    std::array<Value, 4> read;
    for (int64_t e = 0; e < 4; ++e) {
      IndexValue key = keyBase + c(e / 2 * 8 + e % 2);
      IndexValue off = L::swizzledOffset<IndexValue>(from, key, d);
      read[e] = LLVM::LoadOp::create(
          b, loc, words, sharedByteAddress(b, loc, slot, off.get()), width);
      mark(read[e].getDefiningOp());
    }
    for (int64_t k = 0; k < width / 4; ++k) {
      std::array<Value, 4> w;
      for (int64_t e = 0; e < 4; ++e)
        w[e] = width == 4 ? read[e]
                          : vector::ExtractOp::create(b, loc, read[e], k)
                                .getResult();
      std::array<Value, 4> rows = transpose4x4(w);
      for (int64_t j = 0; j < 4; ++j) {
        IndexValue off = L::swizzledOffset<IndexValue>(
            to, d + c(4 * k + j), m * c(4));
        mark(LLVM::StoreOp::create(b, loc, rows[j],
                                   sharedByteAddress(b, loc, dst, off.get()),
                                   4));
      }
    }
  }
  mark(NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta)));
  mark(NVVM::BarrierOp::create(b, loc));
  return success();
}

/// Registers per thread that an e4m3 Q K^T's scores, the output
/// accumulator beside them and the A fragment it keeps for its loop may
/// take together (of a consumer warpgroup's 240): fa3_fp8's tiles need
/// 104 (d64), 144 (d128, 128 x 128) and 192 (d256, 128 x 64), spill-free;
/// wider score tiles beside them spill.
constexpr int64_t kHoistedABudget = 192;

/// The loop around `op` that re-reads its A buffer unchanged: A a fused
/// read of a slot fixed outside the loop, and nothing in the loop but such
/// reads touching the buffer. Null when there is none, and for the ranges
/// of masked blocks (tile.mask_split: few iterations, whose mask arithmetic
/// needs the registers).
scf::ForOp loopRereadingBuffer(MmaOp op) {
  auto loop = op->getParentOfType<scf::ForOp>();
  auto local = op.getA().getDefiningOp<LocalLoadOp>();
  if (!loop || !local || loop->hasAttr(kMaskSplitAttrName) ||
      !loop.isDefinedOutsideOfLoop(local.getSource()) ||
      !(loop.isDefinedOutsideOfLoop(local.getSlot()) ||
        matchPattern(local.getSlot(), m_Constant())))
    return {};
  for (Operation *user : local.getSource().getUsers())
    if (loop->isAncestor(user) && !isa<LocalLoadOp>(user))
      return {};
  return loop;
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
  bool fp8 = isa<Float8E4M3FNType>(element);
  if (!(element.isF16() || element.isBF16() || fp8) ||
      bType.getElementType() != element || !c->type.getElementType().isF32())
    return false;
  int64_t m = c->shape[0], n = c->shape[1];
  int64_t k = bType.getDimSize(op.getTransposeB() ? 1 : 0);
  int64_t rowsPerStep = getNumWarps(op) / L::kWarpgroupWarps * L::kWgmmaAtomM;
  if (m % rowsPerStep != 0 || n % L::kAtomN != 0 ||
      k % (fp8 ? L::kWgmmaAtomK8 : L::kWgmmaAtomK16))
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
    bool fp8 = isa<Float8E4M3FNType>(element);
    // e4m3 (m64nNk32) has no transpose immediates: both operands are read
    // K-major. A K-major B (Q K^T's K) takes A from shared memory (the SS
    // form: the register fragment is not the accumulator's, and TMA wrote
    // B's K in its own order); a B stored [K, N] (P V's V) is copied
    // K-major by the consumers into the MMA's own buffer, its K relabeled
    // so that A (P) comes from the accumulator's registers as they are (RS
    // form).
    auto aFused = op.getA().getDefiningOp<LocalLoadOp>();
    bool aInShared = aFused && aFused->hasAttr(kFusedIntoMmaAttrName);
    bool transposeB = fp8 && !op.getTransposeB();
    if (fp8 && op.getTransposeA())
      return op.emitOpError("f8e4m3 A must be K-major for wgmma m64nNk32 "
                            "(no transpose for 8-bit operands)");
    if (fp8 && !transposeB && !aInShared)
      return op.emitOpError(
          "f8e4m3 A must be read by the wgmma from shared memory (its "
          "tile.local_load right before the MMA) when B is K-major");
    if (transposeB && aInShared)
      return op.emitOpError("f8e4m3 A of an MMA whose B is stored [K, N] "
                            "must come from registers");
    std::optional<SharedOperand> bShared = sharedOperand(
        op, op.getB(), /*mnMajor=*/!op.getTransposeB(), rewriter, &ib);
    if (transposeB) {
      SharedType vt = transposedFp8Slot(bShared->type);
      if (!vt)
        return op.emitOpError("f8e4m3 B buffer ")
               << bShared->type
               << " has no K-major image in wgmma's canonical layout (keys a "
                  "multiple of 32, dims a multiple of 8)";
      auto offset = op->getAttrOfType<IntegerAttr>(kFp8TransposeOffsetAttr);
      if (!offset)
        return op.emitOpError("has no buffer for its transposed f8e4m3 B "
                              "(reserveFp8TransposeBuffers)");
      auto local = op.getB().getDefiningOp<LocalLoadOp>();
      Value slot = slotStart(b, loc, &ib, bShared->type,
                             rewriter.getRemappedValue(local.getSource()),
                             rewriter.getRemappedValue(local.getSlot()));
      Value dst = sharedByteAddress(b, loc, sharedGlobal(b, loc),
                                    i32Const(b, loc, offset.getInt()));
      if (failed(transposeFp8Slot(op, b, loc, ib, bShared->type, vt, slot,
                                  dst)))
        return failure();
      Value units = arith::ConstantIntOp::create(
          b, loc, (offset.getInt() & 0x3ffff) >> 4, 64);
      Value base = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(),
                                            sharedGlobal(b, loc));
      units = arith::AddIOp::create(
          b, loc, units,
          arith::ShRUIOp::create(
              b, loc,
              arith::AndIOp::create(
                  b, loc, base,
                  arith::ConstantIntOp::create(b, loc, 0x3ffff, 64)
                      .getResult()),
              arith::ConstantIntOp::create(b, loc, 4, 64).getResult()));
      bShared = SharedOperand{vt, *canonicalSwizzle(vt), /*mnMajor=*/false,
                              units};
    }
    std::optional<SharedOperand> aShared = sharedOperand(
        op, op.getA(), /*mnMajor=*/op.getTransposeA(), rewriter, &ib);
    // An f16 or bf16 A read from shared memory is the same block in every
    // iteration of a backward's loop (K, V): its descriptors, one per
    // k-step, stay live across the loop, each a register pair unless the
    // high word is an immediate. (e4m3's Q keeps the 64-bit form: the
    // forward's ptxas schedule was tuned with it.)
    if (aShared && !fp8)
      aShared->lowWordUnits = true;
    const int64_t stepK = fp8 ? L::kWgmmaAtomK8 : L::kWgmmaAtomK16;
    int64_t atomsK = k / stepK;
    // A's 32-bit registers per (64-row step, K step).
    DenseMap<std::pair<int64_t, int64_t>, SmallVector<Value>> aRegisters;
    // Q K^T's Q: an e4m3 A that its loop re-reads from a buffer the loop
    // does not write is loaded into registers once, before the loop, as
    // wgmma's 8-bit A fragment (one 32-bit load per register: 4 consecutive
    // k of a row, contiguous under the swizzle); the RS form then reads
    // only B from shared memory each iteration. Only while the scores, an
    // output accumulator as wide as K and A's registers stay within
    // kHoistedABudget per thread.
    bool aHoisted = false;
    int64_t threadsPerCta = getNumWarps(op) * kWarp;
    int64_t aRegs = m / rowsPerStep * atomsK * 4;
    bool aFits = c->regs + m * k / threadsPerCta + aRegs <= kHoistedABudget;
    if (fp8 && aShared && !transposeB && !op.getTransposeA() && aFits) {
      if (scf::ForOp loop = loopRereadingBuffer(op)) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(loop);
        IndexBuilder hb{b, loc};
        auto local = op.getA().getDefiningOp<LocalLoadOp>();
        SharedType aType = local.getSource().getType();
        APInt slotIndex;
        Value slotValue =
            matchPattern(local.getSlot(), m_ConstantInt(&slotIndex))
                ? i32Const(b, loc, slotIndex.getSExtValue())
                : rewriter.getRemappedValue(local.getSlot());
        Value slot = slotStart(b, loc, &hb, aType,
                               rewriter.getRemappedValue(local.getSource()),
                               slotValue);
        L::SwizzleParams swizzle = swizzleOf(aType);
        auto hc = [&](int64_t x) { return IndexValue(&hb, x); };
        IndexValue tid(&hb, getThreadIds(b, op).tid);
        IndexValue group = tid / hc(L::kWarpgroupSize),
                   inGroup = tid % hc(L::kWarpgroupSize);
        for (int64_t r = 0; r < m / rowsPerStep; ++r)
          for (int64_t kk = 0; kk < atomsK; ++kk)
            for (int64_t i = 0; i < 4; ++i) {
              L::CoordOf<IndexValue> at =
                  L::wgmmaA8RegCoord<IndexValue>(inGroup, 4 * i);
              IndexValue row =
                  at[0] + group * hc(L::kWgmmaAtomM) + hc(r * rowsPerStep);
              IndexValue col = at[1] + hc(kk * stepK);
              IndexValue off = L::swizzledOffset<IndexValue>(swizzle, row, col);
              aRegisters[{r, kk}].push_back(LLVM::LoadOp::create(
                  b, loc, b.getI32Type(),
                  sharedByteAddress(b, loc, slot, off.get()), 4));
            }
        aHoisted = true;
        aShared.reset();
      }
    }
    if (failed(checkWarpgroupFragments(op, *c, aShared || fp8 ? nullptr : &*a,
                                       atomsK)))
      return failure();
    // P's bytes for the fp8 RS form: for each 64-row repeat r, key block kk
    // and A byte e, the register of A's layout holding (row, 32 kk +
    // fp8PKey(k)) of the A fragment's (row, k), the same in every thread.
    std::map<std::pair<int64_t, int64_t>, SmallVector<int64_t>> fp8Bytes;
    if (fp8 && !aShared && !aHoisted) {
      int64_t numThreads = getNumWarps(op) * kWarp;
      for (int64_t r = 0; r < m / rowsPerStep; ++r)
        for (int64_t kk = 0; kk < atomsK; ++kk)
          fp8Bytes[{r, kk}].assign(L::kWgmmaA8Elements, -1);
      for (int64_t t = 0; t < numThreads; ++t) {
        std::map<std::pair<int64_t, int64_t>, int64_t> held;
        for (int64_t reg = 0; reg < a->regs; ++reg) {
          L::Coord at = a->coord(t, reg);
          held.try_emplace({at[0], at[1]}, reg);
        }
        int64_t group = t / L::kWarpgroupSize, inGroup = t % L::kWarpgroupSize;
        for (auto &[rk, regs] : fp8Bytes)
          for (int64_t e = 0; e < L::kWgmmaA8Elements; ++e) {
            L::Coord want = L::wgmmaA8RegCoord<int64_t>(inGroup, e);
            int64_t row = rk.first * rowsPerStep + group * L::kWgmmaAtomM +
                          want[0];
            int64_t col = rk.second * L::kWgmmaAtomK8 + L::fp8PKey(want[1]);
            auto it = held.find({row, col});
            if (it == held.end() || (regs[e] >= 0 && regs[e] != it->second))
              return op.emitOpError("the f8e4m3 A operand layout ")
                     << describe(a->layout)
                     << " does not hold P's wgmma m64nNk32 fragment in "
                        "fp8 key order";
            regs[e] = it->second;
          }
      }
    }

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
    NVVM::WGMMATypes inType = fp8    ? NVVM::WGMMATypes::e4m3
                              : bf16 ? NVVM::WGMMATypes::bf16
                                     : NVVM::WGMMATypes::f16;
    SmallVector<Value> acc = extractAll(b, loc, adaptor.getAcc(), c->regs);
    // A's 32-bit registers are packed before the fence: wgmma.fence orders
    // every register write before it against the wgmmas after it.
    if (fp8 && !aShared && !aHoisted) {
      Value bytes = toStorage(b, loc, adaptor.getA());
      for (auto &[rk, regs] : fp8Bytes)
        for (int64_t i = 0; i < 4; ++i) {
          Value word = vector::ShuffleOp::create(
              b, loc, bytes, bytes, ArrayRef<int64_t>(regs).slice(4 * i, 4));
          aRegisters[rk].push_back(
              LLVM::BitcastOp::create(b, loc, b.getI32Type(), word));
        }
    }
    for (int64_t r = 0; !aShared && !fp8 && r < m / rowsPerStep; ++r)
      for (int64_t kk = 0; kk < atomsK; ++kk) {
        int64_t aFirst = L::mmaAtomFirstRegister(
            cLayout.getParams(), L::MmaRole::OperandA, {m, k}, r, kk);
        for (int64_t i = 0; i < 4; ++i)
          aRegisters[{r, kk}].push_back(
              packA(b, loc, adaptor.getA(), aFirst + 2 * i));
      }
    // A zero accumulator (the scores') reaches a repeat's first wgmma as
    // moves of the zero into its tied inputs, right before it; for a repeat
    // r > 0 those follow repeat r - 1's wgmmas, and ptxas injects a
    // warpgroup.arrive and a warpgroup.wait there (C7519, C7517). In the RS
    // form those repeats take scale-d 0 on each chunk's first k-step
    // instead, inputs undefined (CUTLASS's ScaleOut::Zero); repeat 0's moves
    // precede every wgmma of the fence. The SS form keeps the moves: the
    // 4-warp flash_attn (HOPPER_TILES off, Q re-read from shared memory)
    // spills 52 bytes once ptxas no longer serializes its wgmmas there.
    bool zeroAcc = matchPattern(op.getAcc(), m_AnyZeroFloat()) && !aShared;
    SmallVector<Value> undefAcc;
    if (zeroAcc && m / rowsPerStep > 1)
      undefAcc.assign(std::min(kWgmmaMaxN, n) / 2,
                      LLVM::UndefOp::create(b, loc, b.getF32Type()));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t r = 0; r < m / rowsPerStep; ++r) {
      for (int64_t n0 = 0; n0 < n; n0 += kWgmmaMaxN) {
        int64_t nc = std::min(kWgmmaMaxN, n - n0);
        int64_t first = r * n / 2 + n0 / 2;
        for (int64_t kk = 0; kk < atomsK; ++kk) {
          Value descB = bShared->descriptor(b, loc, n0, kk * stepK);
          bool scaleD = !zeroAcc || r == 0 || kk > 0;
          ArrayRef<Value> regs =
              scaleD ? ArrayRef<Value>(acc).slice(first, nc / 2)
                     : ArrayRef<Value>(undefAcc).take_front(nc / 2);
          Value d;
          if (aShared) {
            Value descA = aShared->descriptor(b, loc, r * rowsPerStep,
                                              kk * stepK, groupUnits);
            d = emitSharedAWgmma(b, loc, regs, descA, descB, nc, inType,
                                 aShared->mnMajor, bShared->mnMajor);
          } else {
            d = emitRegisterAWgmma(b, loc, regs, aRegisters[{r, kk}], descB,
                                   nc, inType, bShared->mnMajor, scaleD);
            if (transposeB)
              d.getDefiningOp()->setAttr(kFp8TransposeAttrName,
                                         b.getUnitAttr());
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

void flash::simt::reserveFp8TransposeBuffers(Operation *kernel) {
  auto attr = kernel->getAttrOfType<IntegerAttr>(flash::tile::kSharedBytesAttrName);
  int64_t end = attr ? attr.getInt() : 0;
  bool any = false;
  // One buffer for all of them, on the swizzle pattern's boundary
  // (descriptors take base offset 0): the P V MMAs accumulate into one
  // chain (each reads the accumulator the previous one wrote), so the
  // wgmma that read the buffer last has completed before the next
  // transpose's barrier, whichever MMA it was.
  int64_t offset = llvm::alignTo(end, 1024);
  kernel->walk([&](MmaOp op) {
    if (!lowersToWgmma(op) || !transposesFp8B(op))
      return;
    auto local = op.getB().getDefiningOp<LocalLoadOp>();
    SharedType vt = transposedFp8Slot(local.getSource().getType());
    if (!vt)
      return; // the lowering reports it
    op->setAttr(kFp8TransposeOffsetAttr,
                IntegerAttr::get(IntegerType::get(op->getContext(), 64), offset));
    end = std::max<int64_t>(end, offset + vt.getBytes());
    any = true;
  });
  if (!any)
    return;
  auto bytes = IntegerAttr::get(IntegerType::get(kernel->getContext(), 64), end);
  kernel->setAttr(flash::tile::kSharedBytesAttrName, bytes);
  kernel->setAttr(flash::simt::kSharedBytesAttrName, bytes);
}

void flash::simt::populateWgmmaOpToSIMTPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  // Before mma.sync's pattern, which takes every MMA this one leaves.
  patterns.add<WgmmaLowering>(converter, patterns.getContext(),
                              /*benefit=*/2);
}

//===- TileToSIMT.cpp - layout-assigned tile IR to one thread's program ---===//
//
// Lowers every kernel of a layout-assigned tile module to the SIMT level (see
// docs/ir-conventions.md, "SIMT level"): a tile of shape S in layout L becomes
// the vector<R x T> of the registers one thread holds, R =
// L.getNumRegisters(S), register r holding the element
// layoutCoord(L, S, warp, lane, r).
//
// Everything that moves data between registers, lanes, warps and memory is
// decided at COMPILE TIME by evaluating the layout functions with int64_t over
// every (warp, lane) of the CTA: which input register of the same thread holds
// an output register's element (register repacks), which lanes a butterfly
// shuffle must combine, which thread is the first holder of an element (the
// only one that writes it), whether a run of registers is a contiguous,
// aligned global vector. The same functions instantiated with IndexValue
// (IndexBuilder.h) emit the per-thread index arithmetic, so no layout formula
// is written twice.
//
// The shared-memory ops (buffers, cp.async, ldmatrix) are lowered in
// SharedMemoryLowering.cpp; Lowering.h is what the two files share.
//
//===----------------------------------------------------------------------===//
#include "flashc/Conversion/Passes.h"
#include "Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

namespace flash {
#define GEN_PASS_DEF_CONVERTTILETOSIMT
#include "flashc/Conversion/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

//===----------------------------------------------------------------------===//
// Compile-time view of a distributed tile
//===----------------------------------------------------------------------===//

std::optional<TileInfo> TileInfo::get(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  auto iface = dyn_cast_or_null<LayoutAttrInterface>(tensor.getEncoding());
  if (!iface)
    return std::nullopt;
  TileInfo info;
  info.type = tensor;
  info.layout = tensor.getEncoding();
  info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  info.regs = iface.getNumRegisters(tensor.getShape());
  return info;
}

int64_t TileInfo::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

int64_t TileInfo::linear(ArrayRef<int64_t> c) const {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    index = index * shape[d] + c[d];
  return index;
}

std::vector<std::vector<int64_t>> TileInfo::table(int64_t numThreads) const {
  std::vector<std::vector<int64_t>> result(numThreads);
  for (int64_t t = 0; t < numThreads; ++t)
    for (int64_t r = 0; r < regs; ++r)
      result[t].push_back(linearCoord(t, r));
  return result;
}

std::string flash::simt::describe(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

int64_t flash::simt::getNumWarps(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto attr = func->getAttrOfType<IntegerAttr>(flash::tile::kNumWarpsAttrName);
  return attr ? attr.getInt() : 1;
}

ThreadIds flash::simt::getThreadIds(OpBuilder &builder, Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  Block &entry = func.getFunctionBody().front();
  auto it = entry.begin();
  if (it != entry.end() && isa<NVVM::ThreadIdXOp>(*it)) {
    Operation *c32 = it->getNextNode();
    auto div = cast<arith::DivUIOp>(c32->getNextNode());
    auto rem = cast<arith::RemUIOp>(div->getNextNode());
    return {it->getResult(0), div.getResult(), rem.getResult()};
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&entry);
  Location loc = func.getLoc();
  Value tid = NVVM::ThreadIdXOp::create(builder, loc, builder.getI32Type());
  Value c32 = arith::ConstantIntOp::create(builder, loc, kWarp, 32);
  Value warp = arith::DivUIOp::create(builder, loc, tid, c32);
  Value lane = arith::RemUIOp::create(builder, loc, tid, c32);
  return {tid, warp, lane};
}

Value flash::simt::i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

Value flash::simt::andPredicates(OpBuilder &b, Location loc, Value a,
                                 Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

void flash::simt::emitGuarded(OpBuilder &b, Location loc, Value pred,
                              llvm::function_ref<void()> body) {
  if (!pred) {
    body();
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body();
}

void flash::simt::barrier(OpBuilder &b, Location loc) {
  NVVM::BarrierOp::create(b, loc);
}

Value flash::simt::sharedGlobal(OpBuilder &b, Location loc) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::AddressOfOp::create(b, loc, ptr3, kSharedGlobalName);
}

Value flash::simt::sharedByteAddress(OpBuilder &b, Location loc, Value base,
                                     Value bytes) {
  if (auto c = bytes.getDefiningOp<arith::ConstantIntOp>(); c && c.value() == 0)
    return base;
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, loc, ptr3, b.getI8Type(), base,
                             ValueRange{bytes});
}

namespace {

/// Which registers each thread writes so that every element is written once:
/// register r of (warp, lane) writes iff that thread is the first (lowest
/// thread id) holding the element. Result: [reg][warp] lane masks.
std::vector<std::vector<uint32_t>>
firstHolderMasks(const std::vector<std::vector<int64_t>> &table,
                 int64_t numElements, int64_t numWarps) {
  std::vector<int64_t> first(numElements, -1);
  for (int64_t t = 0, e = table.size(); t < e; ++t)
    for (int64_t lin : table[t])
      if (first[lin] < 0)
        first[lin] = t;
  int64_t regs = table.empty() ? 0 : table[0].size();
  std::vector<std::vector<uint32_t>> masks(regs,
                                           std::vector<uint32_t>(numWarps, 0));
  for (int64_t t = 0, e = table.size(); t < e; ++t)
    for (int64_t r = 0; r < regs; ++r)
      if (first[table[t][r]] == t)
        masks[r][t / kWarp] |= 1u << (t % kWarp);
  return masks;
}

/// A predicate that is true on the lanes set in `perWarp[warp]`, or null
/// when every lane of every warp is set.
Value lanePredicate(OpBuilder &b, Location loc, ThreadIds ids,
                    ArrayRef<uint32_t> perWarp) {
  bool uniform = llvm::all_equal(perWarp);
  if (uniform && perWarp.front() == 0xffffffffu)
    return {};
  Value mask;
  if (uniform) {
    mask = i32Const(b, loc, static_cast<int32_t>(perWarp.front()));
  } else {
    mask = i32Const(b, loc, static_cast<int32_t>(perWarp.back()));
    for (int64_t w = perWarp.size() - 2; w >= 0; --w) {
      Value isW = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        ids.warp, i32Const(b, loc, w));
      mask = arith::SelectOp::create(
          b, loc, isW, i32Const(b, loc, static_cast<int32_t>(perWarp[w])),
          mask);
    }
  }
  Value shifted = arith::ShRUIOp::create(b, loc, mask, ids.lane);
  Value bit = arith::AndIOp::create(b, loc, shifted, i32Const(b, loc, 1));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit,
                               i32Const(b, loc, 0));
}

/// Storage type of an element in shared memory (i1 as i8).
Type sharedElementType(Type elem) {
  if (elem.isInteger(1))
    return IntegerType::get(elem.getContext(), 8);
  return elem;
}
int64_t byteWidth(Type elem) {
  return std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
}

/// Where the conversion's own shared scratch (layout exchanges, cross-warp
/// reductions) starts: after the kernel's buffers, 16-byte aligned.
int64_t scratchStart(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto attr = func->getAttrOfType<IntegerAttr>(flash::tile::kSharedBytesAttrName);
  return attr ? llvm::alignTo(attr.getInt(), 16) : 0;
}

/// Records that the kernel uses `bytes` of scratch.
void noteSharedBytes(Operation *op, int64_t bytes) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  int64_t total = scratchStart(op) + bytes, current = 0;
  if (auto attr = func->getAttrOfType<IntegerAttr>(flash::simt::kSharedBytesAttrName))
    current = attr.getInt();
  if (total > current)
    func->setAttr(flash::simt::kSharedBytesAttrName,
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                   total));
}

Value scratchBase(OpBuilder &b, Location loc, Operation *op) {
  Value global = sharedGlobal(b, loc);
  int64_t start = scratchStart(op);
  return start ? sharedByteAddress(b, loc, global, i32Const(b, loc, start))
               : global;
}

Value sharedAddress(OpBuilder &b, Location loc, Value base, Type elem,
                    Value index) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, loc, ptr3, sharedElementType(elem), base,
                             ValueRange{index});
}

void storeShared(OpBuilder &b, Location loc, Value base, Value value,
                 Value index) {
  Type elem = value.getType();
  if (elem.isInteger(1))
    value = arith::ExtUIOp::create(b, loc, b.getI8Type(), value);
  LLVM::StoreOp::create(b, loc, value, sharedAddress(b, loc, base, elem, index),
                        byteWidth(sharedElementType(elem)));
}

Value loadShared(OpBuilder &b, Location loc, Value base, Type elem,
                 Value index) {
  Type stored = sharedElementType(elem);
  Value v = LLVM::LoadOp::create(b, loc, stored,
                                 sharedAddress(b, loc, base, elem, index),
                                 byteWidth(stored));
  if (elem.isInteger(1))
    v = arith::TruncIOp::create(b, loc, elem, v);
  return v;
}

SmallVector<Value> extractAll(OpBuilder &b, Location loc, Value vec,
                              int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

IndexValue linearIndex(IndexBuilder *ib, ArrayRef<int64_t> shape,
                       ArrayRef<IndexValue> coord) {
  IndexValue index(ib, int64_t(0));
  for (size_t d = 0; d < shape.size(); ++d)
    index = index * shape[d] + coord[d];
  return index;
}

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
  noteSharedBytes(op, in.numElements() * byteWidth(sharedElementType(elem)));
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

/// Register repack when possible, shared memory otherwise.
Value emitLayoutMove(OpBuilder &b, Location loc, Operation *op, Value src,
                     const TileInfo &in, const TileInfo &out,
                     const CoordMap &map) {
  if (auto plan = planRepack(in, out, map, getNumWarps(op)))
    return emitRepack(b, loc, src, *plan, in.regs);
  return emitSharedExchange(b, loc, op, src, in, out, map);
}

//===----------------------------------------------------------------------===//
// Global tensors: after signature expansion every !tile.global value is an
// unrealized_conversion_cast of (!llvm.ptr<1>, i32 dims...).
//===----------------------------------------------------------------------===//

} // namespace

std::optional<GlobalView> flash::simt::getGlobalView(Value source,
                                                     IndexBuilder *ib) {
  auto cast = source.getDefiningOp<UnrealizedConversionCastOp>();
  auto type = dyn_cast<GlobalType>(source.getType());
  if (!cast || !type || cast.getInputs().size() != type.getRank() + 1)
    return std::nullopt;
  GlobalView view{type, cast.getInputs()[0], {}};
  for (unsigned d = 0; d < type.getRank(); ++d) {
    if (type.isStaticDim(d))
      view.dims.push_back(IndexValue(ib, type.getShape()[d]));
    else
      view.dims.push_back(IndexValue(ib, cast.getInputs()[d + 1]));
  }
  return view;
}

namespace {

/// A known divisor of an i32 value (1 when nothing is known).
int64_t knownMultiple(Value v, int depth = 0) {
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

/// The widest vector (elements) in which runs of registers can be accessed:
/// registers kV..kV+V-1 of every thread are consecutive along the tile dim
/// that runs along the last global dim, start at a multiple of V, the last
/// global dim is static and a multiple of V and the window offset along it a
/// known multiple of V (so each vector is aligned and wholly in or out of
/// bounds). For stores the run must also have one writer.
int64_t chooseVectorWidth(const TileInfo &tile, ArrayRef<int64_t> window,
                          const GlobalView &view, Value lastOffset,
                          int64_t numWarps,
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
    bool ok = true;
    for (int64_t t = 0; ok && t < numWarps * kWarp; ++t) {
      for (int64_t r0 = 0; ok && r0 < tile.regs; r0 += v) {
        layout::Coord first = tile.coord(t, r0);
        if (first[tileDim] % v) {
          ok = false;
          break;
        }
        for (int64_t j = 1; ok && j < v; ++j) {
          layout::Coord c = tile.coord(t, r0 + j);
          for (size_t d = 0; d < c.size(); ++d)
            if (c[d] != first[d] + (d == tileDim ? j : 0))
              ok = false;
          if (writers && (*writers)[r0 + j] != (*writers)[r0])
            ok = false;
        }
      }
    }
    if (ok)
      return v;
  }
  return 1;
}

/// Marks, per global dim of a window access, the dims whose window provably
/// stays inside the tensor (set before the conversion, on the original IR).

/// Whether `dim` is dim `d` of `global`, or a dim of another tensor with the
/// same symbol (equal at launch: the launcher, interpreter and emulator check).
bool sameDim(DimOp dim, Value global, int64_t d) {
  if (dim.getSource() == global)
    return int64_t(dim.getIndex()) == d;
  auto type = cast<GlobalType>(global.getType());
  GlobalType other = dim.getSource().getType();
  unsigned i = dim.getIndex();
  return !type.isStaticDim(d) && !other.isStaticDim(i) &&
         type.getDimNames()[d] == other.getDimNames()[i];
}

/// v <= dim `d` of `global`: that dim, (x / c) * c of something that is, or
/// a min with such a value. Dims are never negative.
bool boundedByDim(Value v, Value global, int64_t d, int depth = 0) {
  if (depth > 12)
    return false;
  if (auto dim = v.getDefiningOp<DimOp>())
    return sameDim(dim, global, d);
  if (auto min = v.getDefiningOp<arith::MinSIOp>())
    return boundedByDim(min.getLhs(), global, d, depth + 1) ||
           boundedByDim(min.getRhs(), global, d, depth + 1);
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
bool knownNonNegative(Value v, int depth = 0) {
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
SmallVector<Value> boundsImpliedBy(Value pred, Value offset) {
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

/// A window [offset, offset + extent) along dim `d` of `global` lies inside
/// it: offset is a known constant inside a static dim, or the induction
/// variable of a loop whose lower bound is 0 or a non-negative multiple of
/// the step, whose upper bound is a multiple of the step bounded by the dim,
/// and whose step covers the extent (FlashAttention's full key blocks), or
/// the access happens only when `pred` holds and `pred` bounds the offset
/// likewise: offset >= 0, offset < U, both multiples of some m >= extent and
/// U bounded by the dim (the prefetches of a pipelined loop over full blocks,
/// predicated off past its end).
bool windowInside(Value offset, int64_t extent, Value global, int64_t d,
                  Value pred) {
  auto type = cast<GlobalType>(global.getType());
  if (pred && knownNonNegative(offset))
    for (Value bound : boundsImpliedBy(pred, offset))
      if (std::gcd(knownMultiple(offset), knownMultiple(bound)) >= extent &&
          boundedByDim(bound, global, d))
        return true;
  if (auto c = offset.getDefiningOp<arith::ConstantIntOp>())
    return type.isStaticDim(d) && c.value() >= 0 &&
           c.value() + extent <= type.getShape()[d];
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

/// The offset of every register's coordinate from register 0's, when it is
/// the same for every thread (always, unless a layout wraps around a tile
/// smaller than its step): [register][tile dim].
std::optional<std::vector<layout::Coord>>
uniformRegisterOffsets(const AccessMap &map, int64_t numThreads) {
  std::vector<layout::Coord> offsets(map.regs);
  for (int64_t t = 0; t < numThreads; ++t) {
    layout::Coord origin = map.coord(t, 0);
    for (int64_t r = 0; r < map.regs; ++r) {
      layout::Coord c = map.coord(t, r);
      for (size_t d = 0; d < c.size(); ++d)
        c[d] -= origin[d];
      if (t == 0)
        offsets[r] = c;
      else if (c != offsets[r])
        return std::nullopt;
    }
  }
  return offsets;
}

} // namespace

void flash::simt::markWindowInBounds(Operation *access, Value global,
                                     ValueRange offsets,
                                     ArrayRef<int64_t> window,
                                     ArrayRef<int64_t> tileShape, Value pred) {
  auto type = cast<GlobalType>(global.getType());
  SmallVector<bool> inside;
  for (unsigned g = 0; g < type.getRank(); ++g) {
    auto it = llvm::find(window, static_cast<int64_t>(g));
    int64_t extent = it == window.end() ? 1 : tileShape[it - window.begin()];
    inside.push_back(windowInside(offsets[g], extent, global, g, pred));
  }
  access->setAttr(kInBoundsAttrName,
                  DenseBoolArrayAttr::get(access->getContext(), inside));
}

AccessMap AccessMap::of(const TileInfo &tile) {
  return {tile.regs,
          [tile](int64_t thread, int64_t reg) { return tile.coord(thread, reg); },
          [tile](IndexValue warp, IndexValue lane, int64_t reg) {
            return layoutCoord<IndexValue>(tile.layout, tile.shape, warp, lane,
                                           reg);
          }};
}

WindowAddressing::WindowAddressing(OpBuilder &b, Location loc, IndexBuilder *ib,
                                   const GlobalView &view, ValueRange offsets,
                                   Operation *access, ArrayRef<int64_t> window,
                                   AccessMap map, int64_t numThreads,
                                   IndexValue warp, IndexValue lane)
    : b(b), loc(loc), ib(ib), view(view), window(window), map(std::move(map)),
      warp(warp), lane(lane) {
  auto inside = access->getAttrOfType<DenseBoolArrayAttr>(kInBoundsAttrName);
  unsigned rank = view.type.getRank();
  registerOffsets = uniformRegisterOffsets(this->map, numThreads);
  layout::CoordOf<IndexValue> origin;
  if (registerOffsets)
    origin = this->map.emit(warp, lane, 0);
  Type i64 = b.getI64Type();
  std::optional<int64_t> staticStride = 1;
  Value stride = arith::ConstantIntOp::create(b, loc, 1, 64);
  index.resize(rank);
  strides.resize(rank);
  staticStrides.resize(rank);
  checked.resize(rank);
  for (int64_t g = rank - 1; g >= 0; --g) {
    index[g] = IndexValue(ib, offsets[g]);
    if (int64_t d = tileDimOf(g); d >= 0 && registerOffsets)
      index[g] = index[g] + origin[d];
    std::optional<int64_t> size = view.dims[g].getConstant();
    checked[g] = !inside || !inside[g];
    strides[g] = stride;
    staticStrides[g] = staticStride;
    if (g == 0)
      break;
    stride = arith::MulIOp::create(
        b, loc, stride, arith::ExtUIOp::create(b, loc, i64, view.dims[g].get()));
    staticStride = staticStride && size
                       ? std::optional<int64_t>(*staticStride * *size)
                       : std::nullopt;
  }
  if (registerOffsets)
    base = gep(view.ptr, linear(index));
  // Dims the tile does not run along: one check for the whole tile.
  for (unsigned g = 0; g < rank; ++g)
    if (checked[g] && tileDimOf(g) < 0)
      uniform = andPredicates(b, loc, uniform, inRange(index[g], g));
}

AccessPoint WindowAddressing::at(int64_t reg) {
  unsigned rank = view.type.getRank();
  SmallVector<IndexValue, 4> idx(index.begin(), index.end());
  if (registerOffsets) {
    for (unsigned g = 0; g < rank; ++g)
      if (int64_t d = tileDimOf(g); d >= 0)
        idx[g] = idx[g] + (*registerOffsets)[reg][d];
  } else {
    auto coord = map.emit(warp, lane, reg);
    for (unsigned g = 0; g < rank; ++g)
      if (int64_t d = tileDimOf(g); d >= 0)
        idx[g] = idx[g] + coord[d];
  }
  Value inBounds;
  for (unsigned g = 0; g < rank; ++g) {
    if (!checked[g] || tileDimOf(g) < 0)
      continue;
    inBounds = andPredicates(b, loc, inBounds, inRange(idx[g], g));
  }
  if (!registerOffsets)
    return {gep(view.ptr, linear(idx)), inBounds};
  // Register offset = sum over tile dims of offset * stride: a constant
  // when the strides are static.
  int64_t constant = 0;
  Value dynamic;
  for (unsigned g = 0; g < rank; ++g) {
    int64_t d = tileDimOf(g);
    if (d < 0 || (*registerOffsets)[reg][d] == 0)
      continue;
    int64_t delta = (*registerOffsets)[reg][d];
    if (staticStrides[g]) {
      constant += delta * *staticStrides[g];
      continue;
    }
    Value term = arith::MulIOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, delta, 64), strides[g]);
    dynamic = dynamic ? arith::AddIOp::create(b, loc, dynamic, term).getResult()
                      : term;
  }
  Value address = base;
  if (dynamic)
    address = gep(address, dynamic);
  if (constant)
    address = gep(address, arith::ConstantIntOp::create(b, loc, constant, 64));
  return {address, inBounds};
}

/// 0 <= idx < dim g.
Value WindowAddressing::inRange(IndexValue idx, unsigned g) {
  Value lo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                   idx.get(), i32Const(b, loc, 0));
  Value hi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                   idx.get(), view.dims[g].get());
  return arith::AndIOp::create(b, loc, lo, hi);
}

/// The tile dim that runs along global dim g, or -1.
int64_t WindowAddressing::tileDimOf(int64_t g) const {
  auto it = llvm::find(window, g);
  return it == window.end() ? -1 : it - window.begin();
}

Value WindowAddressing::linear(ArrayRef<IndexValue> idx) {
  Value sum;
  for (unsigned g = 0; g < idx.size(); ++g) {
    Value term = arith::MulIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), idx[g].get()),
        strides[g]);
    sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
  }
  return sum;
}

Value WindowAddressing::gep(Value ptr, Value elements) {
  auto ptr1 = LLVM::LLVMPointerType::get(b.getContext(), 1);
  return LLVM::GEPOp::create(b, loc, ptr1, view.type.getElementType(), ptr,
                             ValueRange{elements});
}

namespace {

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct TileOpConversion : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
};

/// program_id and num_programs: the special register of their grid axis.
template <typename OpTy, typename XReg, typename YReg, typename ZReg>
struct GridRegisterLowering : TileOpConversion<OpTy> {
  using TileOpConversion<OpTy>::TileOpConversion;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Location loc = op.getLoc();
    Value v;
    switch (op.getAxis()) {
    case 0:
      v = XReg::create(rewriter, loc, i32);
      break;
    case 1:
      v = YReg::create(rewriter, loc, i32);
      break;
    default:
      v = ZReg::create(rewriter, loc, i32);
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};
using ProgramIdLowering =
    GridRegisterLowering<ProgramIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                         NVVM::BlockIdZOp>;
using NumProgramsLowering =
    GridRegisterLowering<NumProgramsOp, NVVM::GridDimXOp, NVVM::GridDimYOp,
                         NVVM::GridDimZOp>;

struct DimLowering : TileOpConversion<DimOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    IndexBuilder ib{rewriter, op.getLoc()};
    auto view = getGlobalView(op.getSource(), &ib);
    if (!view)
      return op.emitOpError("source is not a kernel tensor parameter");
    rewriter.replaceOp(op, view->dims[op.getIndex()].get());
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return op.emitOpError("only splat constants of tiles can be lowered, "
                            "in layout ")
             << describe(tile->layout);
    auto value = DenseElementsAttr::get(tile->vectorType(),
                                        dense.getSplatValue<Attribute>());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// arith/math ops on tiles: the same op on the register vectors.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op) || op->getNumRegions() != 0)
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    IRMapping mapping;
    mapping.map(op->getOperands(), operands);
    Operation *clone = rewriter.clone(*op, mapping);
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
    rewriter.replaceOp(op, clone->getResults());
    return success();
  }
};

struct SplatLowering : TileOpConversion<SplatOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, tile->vectorType(),
                                                     adaptor.getValue());
    return success();
  }
};

struct IotaLowering : TileOpConversion<IotaOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    Location loc = op.getLoc();
    ThreadIds ids = getThreadIds(rewriter, op);
    IndexBuilder ib{rewriter, loc};
    SmallVector<Value> elems;
    for (int64_t r = 0; r < tile->regs; ++r)
      elems.push_back(layoutCoord<IndexValue>(tile->layout, tile->shape,
                                              IndexValue(&ib, ids.warp),
                                              IndexValue(&ib, ids.lane), r)[0]
                          .get());
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, tile->vectorType(),
                                                        elems);
    return success();
  }
};

/// expand_dims, broadcast, convert_layout and trans: a register repack when
/// every thread already holds what it needs, shared memory otherwise.
template <typename OpTy>
struct LayoutMoveLowering : TileOpConversion<OpTy> {
  using TileOpConversion<OpTy>::TileOpConversion;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = TileInfo::get(op.getInput().getType());
    auto out = TileInfo::get(op.getType());
    CoordMap map;
    if constexpr (std::is_same_v<OpTy, ExpandDimsOp>) {
      map.kind = CoordMap::ExpandDims;
      map.axis = op.getAxis();
    } else if constexpr (std::is_same_v<OpTy, BroadcastOp>) {
      map.kind = CoordMap::Broadcast;
      map.inShape = in->shape;
    } else if constexpr (std::is_same_v<OpTy, TransOp>) {
      map.kind = CoordMap::Transpose;
    }
    Value result = emitLayoutMove(rewriter, op.getLoc(), op, adaptor.getInput(),
                                  *in, *out, map);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct ReducePlan {
  SmallVector<SmallVector<int64_t>> groups; // input registers per output reg
  SmallVector<int64_t> butterflies;         // shfl.bfly lane offsets
  bool crossWarp = false;
  std::vector<std::vector<uint32_t>> writers;   // [reg][warp] lane masks
  std::vector<std::vector<uint32_t>> readWarps; // [reg][warp] warp masks
};

FailureOr<ReducePlan> planReduce(ReduceOp op, const TileInfo &in,
                                 const TileInfo &out, int64_t numWarps) {
  int64_t axis = op.getAxis();
  int64_t threads = numWarps * kWarp;
  int64_t extent = in.shape[axis];
  ReducePlan plan;
  auto outTable = out.table(threads);
  // In-thread groups: input registers whose kept coordinate is the output
  // register's coordinate; coverage: reduced coordinates combined so far.
  std::vector<std::vector<llvm::BitVector>> cover(
      threads, std::vector<llvm::BitVector>(out.regs, llvm::BitVector(extent)));
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t r = 0; r < out.regs; ++r) {
      SmallVector<int64_t> group;
      for (int64_t ri = 0; ri < in.regs; ++ri) {
        layout::Coord c = in.coord(t, ri);
        int64_t reduced = c[axis];
        c.erase(c.begin() + axis);
        if (out.linear(c) == outTable[t][r]) {
          group.push_back(ri);
          cover[t][r].set(reduced);
        }
      }
      if (group.empty())
        return op.emitOpError("thread ")
               << t << " holds no element of output register " << r
               << " of layout " << describe(out.layout) << " in layout "
               << describe(in.layout);
      if (t == 0)
        plan.groups.push_back(group);
      else if (plan.groups[r] != group)
        return op.emitOpError("the in-thread grouping of layout ")
               << describe(in.layout)
               << " along axis " << axis << " differs between threads";
    }
  }
  // Butterflies: lane bits whose flip keeps every kept coordinate and brings
  // new reduced coordinates.
  for (int64_t bit = 1; bit < kWarp; bit <<= 1) {
    bool ok = true;
    for (int64_t t = 0; ok && t < threads; ++t)
      for (int64_t r = 0; ok && r < out.regs; ++r) {
        int64_t p = t ^ bit;
        ok = outTable[p][r] == outTable[t][r] && cover[p][r].any() &&
             !cover[t][r].anyCommon(cover[p][r]);
      }
    if (!ok)
      continue;
    plan.butterflies.push_back(bit);
    auto next = cover;
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < out.regs; ++r)
        next[t][r] |= cover[t ^ bit][r];
    cover = std::move(next);
  }
  bool complete = true;
  for (int64_t t = 0; complete && t < threads; ++t)
    for (int64_t r = 0; complete && r < out.regs; ++r)
      complete = cover[t][r].all();
  if (complete)
    return plan;

  // Across warps through shared memory: warp w's partial of output element k
  // (all lanes of w holding k must agree on what they combined).
  plan.crossWarp = true;
  int64_t outElems = out.numElements();
  std::vector<std::vector<std::optional<llvm::BitVector>>> warpCover(
      numWarps, std::vector<std::optional<llvm::BitVector>>(outElems));
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < out.regs; ++r) {
      auto &slot = warpCover[t / kWarp][outTable[t][r]];
      if (!slot)
        slot = cover[t][r];
      else if (*slot != cover[t][r])
        return op.emitOpError("lanes of one warp hold different partial "
                              "reductions in layout ")
               << describe(in.layout);
    }
  plan.writers = firstHolderMasks(outTable, outElems, numWarps);
  // Only the first holder within each warp writes its warp's slot.
  {
    std::vector<std::vector<int64_t>> firstInWarp(
        numWarps, std::vector<int64_t>(outElems, -1));
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < out.regs; ++r) {
        int64_t &f = firstInWarp[t / kWarp][outTable[t][r]];
        if (f < 0)
          f = t;
      }
    plan.writers.assign(out.regs, std::vector<uint32_t>(numWarps, 0));
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < out.regs; ++r)
        if (firstInWarp[t / kWarp][outTable[t][r]] == t)
          plan.writers[r][t / kWarp] |= 1u << (t % kWarp);
  }
  plan.readWarps.assign(out.regs, std::vector<uint32_t>(numWarps, 0));
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < out.regs; ++r) {
      int64_t k = outTable[t][r];
      llvm::BitVector acc(extent);
      uint32_t warps = 0;
      for (int64_t w = 0; w < numWarps; ++w) {
        auto &c = warpCover[w][k];
        if (!c || c->none() || acc.anyCommon(*c))
          continue;
        acc |= *c;
        warps |= 1u << w;
      }
      if (!acc.all())
        return op.emitOpError("the warps of layout ")
               << describe(in.layout) << " do not cover axis " << axis;
      uint32_t &slot = plan.readWarps[r][t / kWarp];
      if (t % kWarp == 0)
        slot = warps;
      else if (slot != warps)
        return op.emitOpError("lanes of one warp would combine different "
                              "warps in layout ")
               << describe(in.layout);
    }
  return plan;
}

struct ReduceLowering : TileOpConversion<ReduceOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = TileInfo::get(op.getInput().getType());
    auto out = TileInfo::get(op.getType());
    Type elem = in->type.getElementType();
    bool isFloat = isa<FloatType>(elem);
    if (!elem.isF32() && !elem.isInteger(32))
      return op.emitOpError("reductions of ")
             << elem << " tiles are not supported (f32 and i32 only), layout "
             << describe(in->layout);
    int64_t numWarps = getNumWarps(op);
    auto plan = planReduce(op, *in, *out, numWarps);
    if (failed(plan))
      return failure();

    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    bool isMax = op.getKind() == ReduceKind::Max;
    auto combine = [&](Value x, Value y) -> Value {
      if (isFloat)
        return isMax ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                     : arith::AddFOp::create(b, loc, x, y).getResult();
      return isMax ? arith::MaxSIOp::create(b, loc, x, y).getResult()
                   : arith::AddIOp::create(b, loc, x, y).getResult();
    };
    auto identity = [&]() -> Value {
      if (isFloat)
        return arith::ConstantOp::create(
            b, loc, b.getFloatAttr(elem, isMax ? -INFINITY : 0.0));
      return i32Const(b, loc,
                      isMax ? std::numeric_limits<int32_t>::min() : 0);
    };

    SmallVector<Value> inputs = extractAll(b, loc, adaptor.getInput(), in->regs);
    SmallVector<Value> partial;
    for (auto &group : plan->groups) {
      Value acc = inputs[group.front()];
      for (int64_t ri : llvm::drop_begin(group))
        acc = combine(acc, inputs[ri]);
      partial.push_back(acc);
    }
    if (!plan->butterflies.empty()) {
      Value all = i32Const(b, loc, -1), clamp = i32Const(b, loc, 0x1f);
      for (int64_t offset : plan->butterflies) {
        Value off = i32Const(b, loc, offset);
        for (Value &p : partial) {
          Value other = NVVM::ShflOp::create(b, loc, elem, all, p, off, clamp,
                                             NVVM::ShflKind::bfly, UnitAttr());
          p = combine(p, other);
        }
      }
    }
    if (plan->crossWarp) {
      ThreadIds ids = getThreadIds(b, op);
      IndexBuilder ib{b, loc};
      IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
      int64_t outElems = out->numElements();
      noteSharedBytes(op, numWarps * outElems * byteWidth(elem));
      Value base = scratchBase(b, loc, op);
      SmallVector<Value> keys;
      for (int64_t r = 0; r < out->regs; ++r) {
        auto coord = layoutCoord<IndexValue>(out->layout, out->shape, warp,
                                             lane, r);
        keys.push_back(linearIndex(&ib, out->shape, coord).get());
      }
      for (int64_t r = 0; r < out->regs; ++r) {
        Value slot = (warp * outElems + IndexValue(&ib, keys[r])).get();
        emitGuarded(b, loc, lanePredicate(b, loc, ids, plan->writers[r]),
                    [&] { storeShared(b, loc, base, partial[r], slot); });
      }
      barrier(b, loc);
      for (int64_t r = 0; r < out->regs; ++r) {
        ArrayRef<uint32_t> reads = plan->readWarps[r];
        Value acc;
        if (llvm::all_equal(reads)) {
          for (int64_t w = 0; w < numWarps; ++w)
            if (reads.front() & (1u << w)) {
              Value slot = (IndexValue(&ib, w * outElems) +
                            IndexValue(&ib, keys[r])).get();
              Value v = loadShared(b, loc, base, elem, slot);
              acc = acc ? combine(acc, v) : v;
            }
        } else {
          // The warps to combine depend on this thread's warp.
          Value mask = i32Const(b, loc, reads.back());
          for (int64_t w = numWarps - 2; w >= 0; --w) {
            Value isW = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              ids.warp, i32Const(b, loc, w));
            mask = arith::SelectOp::create(b, loc, isW,
                                           i32Const(b, loc, reads[w]), mask);
          }
          uint32_t any = 0;
          for (uint32_t m : reads)
            any |= m;
          acc = identity();
          for (int64_t w = 0; w < numWarps; ++w) {
            if (!(any & (1u << w)))
              continue;
            Value bit = arith::AndIOp::create(
                b, loc, arith::ShRUIOp::create(b, loc, mask, i32Const(b, loc, w)),
                i32Const(b, loc, 1));
            Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                               bit, i32Const(b, loc, 0));
            auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, cond,
                                          /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(&ifOp.getThenRegion().front());
              Value slot = (IndexValue(&ib, w * outElems) +
                            IndexValue(&ib, keys[r])).get();
              scf::YieldOp::create(b, loc, loadShared(b, loc, base, elem, slot));
              b.setInsertionPointToStart(&ifOp.getElseRegion().front());
              scf::YieldOp::create(b, loc, identity());
            }
            acc = combine(acc, ifOp.getResult(0));
          }
        }
        partial[r] = acc;
      }
      barrier(b, loc);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, out->vectorType(),
                                                        partial);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

Value padConstant(OpBuilder &b, Location loc, Attribute pad, Type elem) {
  if (auto f = dyn_cast<FloatAttr>(pad))
    if (isa<FloatType>(elem))
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(elem, f.getValueAsDouble()));
  if (auto i = dyn_cast<IntegerAttr>(pad)) {
    if (isa<FloatType>(elem))
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(elem, double(i.getValue().getSExtValue())));
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(elem, i.getValue().getSExtValue()));
  }
  if (auto bl = dyn_cast<BoolAttr>(pad))
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(elem, bl.getValue()));
  return {};
}

/// Everything a load needs to fetch any of its registers.
struct WindowLoad {
  GlobalView view;
  SmallVector<Value, 4> offsets;
  TileInfo tile;
  int64_t width; // registers per access
  Type accessType;
  Value padValue;
  IndexValue warp, lane;
};

FailureOr<WindowLoad> prepareWindowLoad(OpBuilder &b, Location loc,
                                        IndexBuilder *ib, LoadOp op,
                                        ValueRange offsets) {
  auto tile = TileInfo::get(op.getType());
  auto view = getGlobalView(op.getSource(), ib);
  if (!view)
    return op.emitOpError("source is not a kernel tensor parameter");
  Type elem = tile->type.getElementType();
  Value pad = padConstant(b, loc, op.getPad(), elem);
  if (!pad)
    return op.emitOpError("unsupported pad value ") << op.getPad();
  int64_t width = chooseVectorWidth(*tile, op.getWindow(), *view, offsets.back(),
                                    getNumWarps(op), /*writers=*/nullptr);
  ThreadIds ids = getThreadIds(b, op);
  Type accessType = width == 1 ? elem : VectorType::get({width}, elem);
  Value padValue =
      width == 1 ? pad : vector::BroadcastOp::create(b, loc, accessType, pad);
  return WindowLoad{*view,      llvm::to_vector<4>(offsets), *tile, width,
                    accessType, padValue, IndexValue(ib, ids.warp),
                    IndexValue(ib, ids.lane)};
}

/// Loads registers [first, first + count) of the load's tile, as one vector;
/// out-of-bounds elements take the pad value and are never touched.
/// Per-register bounds guard each access; the tile-wide ones (dims the tile
/// does not run along) guard all of them at once.
Value emitWindowLoads(OpBuilder &b, Location loc, WindowAddressing &addressing,
                      const WindowLoad &load, int64_t first, int64_t count) {
  const TileInfo &tile = load.tile;
  Type elem = tile.type.getElementType();
  int64_t align = load.width * byteWidth(elem);
  auto guarded = [&](Value pred, Type type, Value pad,
                     function_ref<Value()> body) -> Value {
    if (!pred)
      return body();
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, pred,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{body()});
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{pad});
    return ifOp.getResult(0);
  };
  auto loadRegisters = [&]() -> Value {
    SmallVector<Value> elems;
    for (int64_t r0 = first; r0 < first + count; r0 += load.width) {
      AccessPoint at = addressing.at(r0);
      Value loaded = guarded(at.inBounds, load.accessType, load.padValue, [&] {
        return LLVM::LoadOp::create(b, loc, load.accessType, at.address, align)
            .getResult();
      });
      if (load.width == 1)
        elems.push_back(loaded);
      else
        llvm::append_range(elems, extractAll(b, loc, loaded, load.width));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({count}, elem), elems);
  };
  auto vectorType = VectorType::get({count}, elem);
  Value padVector = vector::BroadcastOp::create(
      b, loc, vectorType,
      load.width == 1 ? load.padValue
                      : vector::ExtractOp::create(b, loc, load.padValue, 0)
                            .getResult());
  return guarded(addressing.uniformInBounds(), vectorType, padVector,
                 loadRegisters);
}

/// A load (global or shared) whose only use is the B operand of an MMA later
/// in the same block, with no write to memory in between, is fetched fragment
/// by fragment inside the MMA: each fragment lives for one k-step instead of
/// the whole tile living across the MMA (K and V of attention would otherwise
/// pin hundreds of registers).
MmaOp fusedMmaUser(Operation *load) {
  if (!load->hasOneUse())
    return {};
  OpOperand &use = *load->getUses().begin();
  auto mma = dyn_cast<MmaOp>(use.getOwner());
  if (!mma || use.getOperandNumber() != 1 ||
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

struct MmaLowering : TileOpConversion<MmaOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto a = TileInfo::get(op.getA().getType());
    auto b = TileInfo::get(op.getB().getType());
    auto c = TileInfo::get(op.getAcc().getType());
    auto aLayout = dyn_cast<DotOperandLayoutAttr>(a->layout);
    auto bLayout = dyn_cast<DotOperandLayoutAttr>(b->layout);
    auto cLayout = dyn_cast<MmaLayoutAttr>(c->layout);
    if (!cLayout || !isa<MmaLayoutAttr>(TileInfo::get(op.getType())->layout))
      return op.emitOpError("accumulator layout must be #tile.mma, got ")
             << describe(c->layout);
    if (!aLayout || aLayout.getOperandIndex() != 0 ||
        aLayout.getParent() != cLayout)
      return op.emitOpError("operand A layout must be #tile.dot_op<0, ")
             << describe(cLayout) << ">, got " << describe(a->layout);
    if (!bLayout || bLayout.getOperandIndex() != 1 ||
        bLayout.getParent() != cLayout)
      return op.emitOpError("operand B layout must be #tile.dot_op<1, ")
             << describe(cLayout) << ">, got " << describe(b->layout);
    if (aLayout.getTransposed() != op.getTransposeA())
      return op.emitOpError("transpose_a requires operand A in the transposed "
                            "dot_op layout and vice versa, got ")
             << describe(a->layout);
    if (bLayout.getTransposed() != op.getTransposeB())
      return op.emitOpError("transpose_b requires operand B in the transposed "
                            "dot_op layout and vice versa, got ")
             << describe(b->layout);
    layout::MmaParams params = cLayout.getParams();
    if (params.warps[2] != 1)
      return op.emitOpError("warps along K are not supported, layout ")
             << describe(cLayout);
    Type opElem = a->type.getElementType();
    if (opElem != b->type.getElementType())
      return op.emitOpError("operands must have the same element type");

    SmallVector<int64_t, 2> aShape = a->shape, bShape = b->shape;
    if (op.getTransposeA())
      std::swap(aShape[0], aShape[1]);
    if (op.getTransposeB())
      std::swap(bShape[0], bShape[1]);
    auto [aM, aK] = layout::mmaAtomsPerWarp(params, layout::MmaRole::OperandA,
                                            aShape);
    auto [bK, bN] = layout::mmaAtomsPerWarp(params, layout::MmaRole::OperandB,
                                            bShape);
    auto [cM, cN] =
        layout::mmaAtomsPerWarp(params, layout::MmaRole::Acc, c->shape);
    if (aM != cM || bN != cN || aK != bK || c->shape[0] == 1 ||
        c->shape[1] == 1)
      return op.emitOpError("the atoms of A (")
             << aM << " x " << aK << "), B (" << bK << " x " << bN
             << ") and the accumulator (" << cM << " x " << cN
             << ") per warp do not match in layout " << describe(cLayout);

    Location loc = op.getLoc();
    OpBuilder &builder = rewriter;
    MLIRContext *ctx = op.getContext();
    bool bf16 = opElem.isBF16();
    Type i32 = builder.getI32Type();
    auto pair = [&](Value vec, int64_t first) -> Value {
      Value v = vector::ShuffleOp::create(builder, loc, vec, vec,
                                          ArrayRef<int64_t>{first, first + 1});
      if (bf16) // the NVVM verifier wants bf16 pairs packed in i32
        v = LLVM::BitcastOp::create(builder, loc, i32, v);
      return v;
    };
    Type f32 = builder.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    NVVM::MMATypes ptx = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;

    // B fragments come from B's registers, or straight from global or
    // shared memory when B's load is fused into this MMA (see fusedMmaUser).
    IndexBuilder ib{builder, loc};
    auto bLoad = op.getB().getDefiningOp<LoadOp>();
    FailureOr<WindowLoad> fused = failure();
    std::optional<WindowAddressing> bAddressing;
    if (bLoad && bLoad->hasAttr(kFusedIntoMmaAttrName)) {
      SmallVector<Value> offsets;
      for (Value offset : bLoad.getOffsets())
        offsets.push_back(rewriter.getRemappedValue(offset));
      fused = prepareWindowLoad(builder, loc, &ib, bLoad, offsets);
      if (failed(fused))
        return failure();
      bAddressing.emplace(builder, loc, &ib, fused->view, fused->offsets,
                          bLoad, bLoad.getWindow(), AccessMap::of(fused->tile),
                          getNumWarps(op) * kWarp, fused->warp, fused->lane);
    }
    auto bLocal = op.getB().getDefiningOp<LocalLoadOp>();
    std::optional<SharedOperandReader> bShared;
    if (bLocal && bLocal->hasAttr(kFusedIntoMmaAttrName))
      bShared.emplace(builder, loc, bLocal,
                      rewriter.getRemappedValue(bLocal.getSource()),
                      rewriter.getRemappedValue(bLocal.getSlot()));
    auto bFragment = [&](int64_t first) -> SmallVector<Value> {
      SmallVector<Value> regs;
      if (bShared) {
        for (int64_t i = 0; i < 2; ++i) {
          Value v = bShared->pair(first / 2 + i);
          if (bf16)
            v = LLVM::BitcastOp::create(builder, loc, i32, v);
          regs.push_back(v);
        }
        return regs;
      }
      Value source = adaptor.getB();
      if (succeeded(fused)) {
        source = emitWindowLoads(builder, loc, *bAddressing, *fused, first, 4);
        first = 0;
      }
      for (int64_t i = 0; i < 2; ++i)
        regs.push_back(pair(source, first + 2 * i));
      return regs;
    };

    // n, k outermost so that each B fragment is live for one column of
    // atoms; A and the accumulator stay in registers throughout. A B operand
    // read from shared memory goes in the order of its reads instead: one
    // ldmatrix.x4 holds the fragments of two atoms.
    SmallVector<std::pair<int64_t, int64_t>> steps; // (n, k)
    for (int64_t n = 0; n < cN; ++n)
      for (int64_t k = 0; k < aK; ++k)
        steps.push_back({n, k});
    auto bFirst = [&](int64_t n, int64_t k) {
      return layout::mmaAtomFirstRegister(params, layout::MmaRole::OperandB,
                                          bShape, k, n);
    };
    if (bShared)
      llvm::stable_sort(steps, [&](auto x, auto y) {
        return bShared->readOrder(bFirst(x.first, x.second) / 2) <
               bShared->readOrder(bFirst(y.first, y.second) / 2);
      });
    SmallVector<Value> acc = extractAll(builder, loc, adaptor.getAcc(), c->regs);
    for (auto [n, k] : steps) {
      SmallVector<Value> bRegs = bFragment(bFirst(n, k));
      for (int64_t m = 0; m < cM; ++m) {
        int64_t cFirst = layout::mmaAtomFirstRegister(
            params, layout::MmaRole::Acc, c->shape, m, n);
        int64_t aFirst = layout::mmaAtomFirstRegister(
            params, layout::MmaRole::OperandA, aShape, m, k);
        SmallVector<Value> aRegs;
        for (int64_t i = 0; i < 4; ++i)
          aRegs.push_back(pair(adaptor.getA(), aFirst + 2 * i));
        SmallVector<Value> cRegs(acc.begin() + cFirst,
                                 acc.begin() + cFirst + 4);
        Value d = NVVM::MmaOp::create(
            builder, loc, resultType, aRegs, bRegs, cRegs,
            ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptx, ptx},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          acc[cFirst + i] = LLVM::ExtractValueOp::create(
              builder, loc, d, ArrayRef<int64_t>{i});
      }
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, c->vectorType(),
                                                        acc);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Global loads and stores
//===----------------------------------------------------------------------===//

struct LoadLowering : TileOpConversion<LoadOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getType());
    if (op->hasAttr(kFusedIntoMmaAttrName)) { // the MMA fetches its registers
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, rewriter.getZeroAttr(tile->vectorType()));
      return success();
    }
    Location loc = op.getLoc();
    IndexBuilder ib{rewriter, loc};
    auto load = prepareWindowLoad(rewriter, loc, &ib, op, adaptor.getOffsets());
    if (failed(load))
      return failure();
    WindowAddressing addressing(rewriter, loc, &ib, load->view, load->offsets,
                                op, op.getWindow(), AccessMap::of(load->tile),
                                getNumWarps(op) * kWarp, load->warp, load->lane);
    rewriter.replaceOp(
        op, emitWindowLoads(rewriter, loc, addressing, *load, 0, tile->regs));
    return success();
  }
};

struct StoreLowering : TileOpConversion<StoreOp> {
  using TileOpConversion::TileOpConversion;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = TileInfo::get(op.getValue().getType());
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    IndexBuilder ib{b, loc};
    auto view = getGlobalView(op.getDest(), &ib);
    if (!view)
      return op.emitOpError("destination is not a kernel tensor parameter");
    Type elem = tile->type.getElementType();
    int64_t numWarps = getNumWarps(op);
    auto writers = firstHolderMasks(tile->table(numWarps * kWarp),
                                    tile->numElements(), numWarps);
    ArrayRef<int64_t> window = op.getWindow();
    int64_t width = chooseVectorWidth(*tile, window, *view,
                                      op.getOffsets().back(), numWarps,
                                      &writers);
    ThreadIds ids = getThreadIds(b, op);
    IndexValue warp(&ib, ids.warp), lane(&ib, ids.lane);
    WindowAddressing addressing(b, loc, &ib, *view, adaptor.getOffsets(), op,
                                window, AccessMap::of(*tile), numWarps * kWarp,
                                warp, lane);
    Value value = adaptor.getValue();
    for (int64_t r0 = 0; r0 < tile->regs; r0 += width) {
      if (llvm::all_of(writers[r0], [](uint32_t m) { return m == 0; }))
        continue;
      AccessPoint at = addressing.at(r0);
      Value pred = andPredicates(b, loc, addressing.uniformInBounds(),
                                 andPredicates(b, loc, at.inBounds,
                                               lanePredicate(b, loc, ids,
                                                             writers[r0])));
      Value part;
      if (width == 1) {
        part = vector::ExtractOp::create(b, loc, value, r0);
      } else {
        SmallVector<int64_t> indices;
        for (int64_t j = 0; j < width; ++j)
          indices.push_back(r0 + j);
        part = vector::ShuffleOp::create(b, loc, value, value, indices);
      }
      int64_t align = width * byteWidth(elem);
      emitGuarded(b, loc, pred, [&] {
        LLVM::StoreOp::create(b, loc, part, at.address, align);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

bool hasTensorType(Operation *op) {
  auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

/// Replaces every !tile.global parameter by (!llvm.ptr<1>, i32 per dim) and
/// records what the launcher needs in `tile.params`.
void expandSignature(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  Block &entry = func.getBody().front();
  auto ptr1 = LLVM::LLVMPointerType::get(ctx, 1);
  Type i32 = b.getI32Type();
  SmallVector<Type> types;
  SmallVector<Attribute> argAttrs, params;
  unsigned oldCount = entry.getNumArguments();
  b.setInsertionPointToStart(&entry);
  for (unsigned i = 0; i < oldCount; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, kArgNameAttrName);
    std::string name =
        nameAttr ? nameAttr.str() : ("arg" + std::to_string(i));
    auto named = [&](StringRef n) {
      return b.getDictionaryAttr(
          b.getNamedAttr(kArgNameAttrName, b.getStringAttr(n)));
    };
    if (auto global = dyn_cast<GlobalType>(arg.getType())) {
      SmallVector<Value> parts;
      types.push_back(ptr1);
      argAttrs.push_back(named(name));
      parts.push_back(entry.addArgument(ptr1, arg.getLoc()));
      SmallVector<Attribute> dims;
      for (unsigned d = 0; d < global.getRank(); ++d) {
        types.push_back(i32);
        argAttrs.push_back(named(name + ".d" + std::to_string(d)));
        parts.push_back(entry.addArgument(i32, arg.getLoc()));
        dims.push_back(b.getStringAttr(global.getDimLabel(d)));
      }
      params.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("kind", b.getStringAttr("tensor")),
          b.getNamedAttr("element", TypeAttr::get(global.getElementType())),
          b.getNamedAttr("dims", b.getArrayAttr(dims)),
      }));
      auto cast = UnrealizedConversionCastOp::create(b, arg.getLoc(),
                                                     TypeRange{global}, parts);
      arg.replaceAllUsesWith(cast.getResult(0));
    } else {
      types.push_back(arg.getType());
      argAttrs.push_back(named(name));
      arg.replaceAllUsesWith(entry.addArgument(arg.getType(), arg.getLoc()));
      params.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("kind", b.getStringAttr("scalar")),
          b.getNamedAttr("element", TypeAttr::get(arg.getType())),
      }));
    }
  }
  entry.eraseArguments(0, oldCount);
  func.setFunctionType(b.getFunctionType(types, {}));
  func.setAllArgAttrs(argAttrs);
  func->setAttr(kParamsAttrName, b.getArrayAttr(params));
}

struct ConvertTileToSIMTPass
    : flash::impl::ConvertTileToSIMTBase<ConvertTileToSIMTPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(flash::tile::kNumWarpsAttrName))
        kernels.push_back(func);
    if (kernels.empty())
      return;

    // Every tile must carry a layout.
    bool ok = true;
    for (func::FuncOp kernel : kernels) {
      if (kernel.getNumResults() != 0) {
        kernel.emitOpError("a kernel must not return values");
        ok = false;
      }
      kernel.walk([&](Operation *op) {
        auto bad = [](Type t) {
          auto tensor = dyn_cast<RankedTensorType>(t);
          return tensor &&
                 !isa_and_nonnull<LayoutAttrInterface>(tensor.getEncoding());
        };
        bool missing = llvm::any_of(op->getResultTypes(), bad) ||
                       llvm::any_of(op->getOperandTypes(), bad);
        for (Region &region : op->getRegions())
          for (Block &block : region)
            missing |= llvm::any_of(block.getArgumentTypes(), bad);
        if (missing) {
          op->emitOpError("has a tile without a layout encoding: run "
                          "tile-assign-layouts first");
          ok = false;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
    }
    for (func::FuncOp kernel : kernels)
      ok &= succeeded(verifySharedMemoryOps(kernel));
    if (!ok)
      return signalPassFailure();

    // Decided before any op is rewritten, while the uses and the loops are
    // intact.
    for (func::FuncOp kernel : kernels) {
      kernel.walk([&](LoadOp load) {
        if (fusedMmaUser(load))
          load->setAttr(kFusedIntoMmaAttrName, UnitAttr::get(ctx));
        markWindowInBounds(load, load.getSource(), load.getOffsets(),
                           load.getWindow(), load.getType().getShape());
      });
      kernel.walk([&](LocalLoadOp load) {
        if (fusedMmaUser(load))
          load->setAttr(kFusedIntoMmaAttrName, UnitAttr::get(ctx));
      });
      kernel.walk([&](StoreOp store) {
        markWindowInBounds(store, store.getDest(), store.getOffsets(),
                           store.getWindow(),
                           store.getValue().getType().getShape());
      });
      kernel.walk([&](AsyncCopyOp copy) {
        markWindowInBounds(copy, copy.getSource(), copy.getOffsets(),
                           copy.getWindow(),
                           copy.getDest().getType().getSlotShape(),
                           copy.getPred());
      });
      // The buffers come first in @__flashc_smem; the conversion's scratch
      // (noteSharedBytes) follows them.
      int64_t buffers = 0;
      if (auto attr = kernel->getAttrOfType<IntegerAttr>(flash::tile::kSharedBytesAttrName))
        buffers = attr.getInt();
      kernel.walk([&](LocalAllocOp alloc) {
        buffers = std::max<int64_t>(buffers, *alloc.getOffset() +
                                                 alloc.getType().getBytes());
      });
      if (buffers > 0) {
        auto bytes = IntegerAttr::get(IntegerType::get(ctx, 64), buffers);
        kernel->setAttr(flash::tile::kSharedBytesAttrName, bytes);
        kernel->setAttr(flash::simt::kSharedBytesAttrName, bytes);
      }
    }
    for (func::FuncOp kernel : kernels)
      expandSignature(kernel);

    TypeConverter converter;
    RewritePatternSet patterns(ctx);
    flash::populateTileToSIMTPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                           vector::VectorDialect, gpu::GPUDialect>();
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
        [](Operation *op) { return !hasTensorType(op); });
    target.addLegalOp<UnrealizedConversionCastOp, func::FuncOp,
                      func::ReturnOp>();
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (func::FuncOp kernel : kernels)
      if (failed(applyPartialConversion(kernel, target, frozen)))
        return signalPassFailure();

    // The casts standing for global tensors are dead now.
    for (func::FuncOp kernel : kernels) {
      SmallVector<UnrealizedConversionCastOp> casts;
      kernel.walk([&](UnrealizedConversionCastOp c) { casts.push_back(c); });
      for (auto c : casts) {
        if (!c->use_empty()) {
          c->getUses().begin()->getOwner()->emitOpError(
              "uses a kernel tensor parameter in a way that cannot be lowered");
          return signalPassFailure();
        }
        c.erase();
      }
    }

    // Host side stays; kernels move into gpu.module @flashc_kernels.
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "flashc_kernels");
    b.setInsertionPointToStart(gpuModule.getBody());
    int64_t sharedBytes = 0;
    for (func::FuncOp kernel : kernels)
      if (auto attr = kernel->getAttrOfType<IntegerAttr>(flash::simt::kSharedBytesAttrName))
        sharedBytes = std::max(sharedBytes, attr.getInt());
    if (sharedBytes > 0) {
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), sharedBytes);
      LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/false,
                             LLVM::Linkage::Internal, kSharedGlobalName,
                             Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    }
    for (func::FuncOp kernel : kernels) {
      auto gpuFunc = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                            kernel.getFunctionType());
      gpuFunc.getBody().takeBody(kernel.getBody());
      gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                       b.getUnitAttr());
      int64_t numWarps =
          kernel->getAttrOfType<IntegerAttr>(flash::tile::kNumWarpsAttrName).getInt();
      gpuFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
          {static_cast<int32_t>(numWarps * kWarp), 1, 1}));
      // The tile dialect's verifier allows only tile.constants outside a
      // func.func: tile.num_warps, tile.grid, tile.mma_layout travel as
      // flashc.num_warps, flashc.grid, flashc.mma_layout.
      for (NamedAttribute attr : kernel->getDiscardableAttrs()) {
        StringRef name = attr.getName().getValue();
        if (name == flash::tile::kSharedBytesAttrName) // counted in flashc.shared_bytes
          continue;
        if (name.starts_with("tile.") && name != kConstantsAttrName)
          gpuFunc->setAttr((kAttrPrefix + name.drop_front(5)).str(),
                           attr.getValue());
        else
          gpuFunc->setAttr(attr.getName(), attr.getValue());
      }
      if (!gpuFunc->hasAttr(flash::simt::kSharedBytesAttrName))
        gpuFunc->setAttr(flash::simt::kSharedBytesAttrName, b.getI64IntegerAttr(0));
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        gpuFunc.setArgAttrs(i, kernel.getArgAttrDict(i));
      SmallVector<func::ReturnOp> returns;
      gpuFunc.walk([&](func::ReturnOp r) { returns.push_back(r); });
      for (func::ReturnOp r : returns) {
        OpBuilder rb(r);
        gpu::ReturnOp::create(rb, r.getLoc());
        r.erase();
      }
      kernel.erase();
    }
  }
};

} // namespace

void flash::populateTileToSIMTPatterns(TypeConverter &converter,
                                       RewritePatternSet &patterns) {
  converter.addConversion([](Type t) { return t; });
  converter.addConversion([](RankedTensorType t) -> std::optional<Type> {
    auto tile = TileInfo::get(t);
    if (!tile)
      return Type(); // no layout: not convertible
    return tile->vectorType();
  });
  MLIRContext *ctx = patterns.getContext();
  flash::simt::populateSharedMemoryPatterns(converter, patterns);
  patterns.add<ProgramIdLowering, NumProgramsLowering, DimLowering,
               ConstantLowering, SplatLowering, IotaLowering,
               LayoutMoveLowering<ExpandDimsOp>, LayoutMoveLowering<BroadcastOp>,
               LayoutMoveLowering<ConvertLayoutOp>, LayoutMoveLowering<TransOp>,
               ReduceLowering, MmaLowering, LoadLowering, StoreLowering>(
      converter, ctx);
  patterns.add<ElementwiseLowering>(converter, ctx);
}

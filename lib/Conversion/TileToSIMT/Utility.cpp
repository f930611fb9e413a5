//===- Utility.cpp - what every tile -> SIMT pattern builds on ------------===//
#include "Utility.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/STLExtras.h"

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
  info.padded = layoutPaddedShape(info.layout, info.shape);
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

IndexValue flash::simt::linearIndex(IndexBuilder *ib, ArrayRef<int64_t> shape,
                                    ArrayRef<IndexValue> coord) {
  IndexValue index(ib, int64_t(0));
  for (size_t d = 0; d < shape.size(); ++d)
    index = index * shape[d] + coord[d];
  return index;
}

//===----------------------------------------------------------------------===//
// Threads, predicates, registers
//===----------------------------------------------------------------------===//

int64_t flash::simt::getNumWarps(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto attr = func->getAttrOfType<IntegerAttr>(flash::tile::kNumWarpsAttrName);
  return attr ? attr.getInt() : 1;
}

/// The user of `tid` in `entry` of kind OpTy that divides by the warp size.
template <typename OpTy>
static Value warpSplitOf(Value tid, Block &entry) {
  for (Operation *user : tid.getUsers()) {
    auto split = dyn_cast<OpTy>(user);
    if (!split || split->getBlock() != &entry || split.getLhs() != tid)
      continue;
    auto divisor = split.getRhs().template getDefiningOp<arith::ConstantIntOp>();
    if (divisor && divisor.value() == kWarp)
      return split.getResult();
  }
  return {};
}

/// The role split (tile.warp_roles) whose producer side holds `op`, if any.
static scf::IfOp producerSideOf(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    auto roles = dyn_cast<scf::IfOp>(p);
    if (roles && roles->hasAttr(flash::tile::kWarpRolesAttrName))
      return roles.getThenRegion().isAncestor(op->getParentRegion()) ? roles
                                                                     : nullptr;
  }
  return nullptr;
}

static ThreadIds entryThreadIds(OpBuilder &builder, Operation *op);

ThreadIds flash::simt::getThreadIds(OpBuilder &builder, Operation *op) {
  // A cp.async producer warpgroup runs the consumers' layouts over its own
  // threads: they count from the split (the condition's tid >= C).
  scf::IfOp roles = producerSideOf(op);
  auto split = roles ? roles.getCondition().getDefiningOp<arith::CmpIOp>()
                     : nullptr;
  auto first = split ? split.getRhs().getDefiningOp<arith::ConstantIntOp>()
                     : nullptr;
  if (!first)
    return entryThreadIds(builder, op);
  Block &side = roles.getThenRegion().front();
  for (auto sub : side.getOps<arith::SubIOp>()) {
    if (!sub->hasAttr(kProducerTidAttrName))
      continue;
    Value tid = sub.getResult();
    Value warp = warpSplitOf<arith::DivUIOp>(tid, side);
    Value lane = warpSplitOf<arith::RemUIOp>(tid, side);
    if (warp && lane)
      return {tid, warp, lane};
  }
  ThreadIds entry = entryThreadIds(builder, op);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&side);
  Location loc = roles.getLoc();
  auto tid = arith::SubIOp::create(builder, loc, entry.tid, first.getResult());
  tid->setAttr(kProducerTidAttrName, builder.getUnitAttr());
  Value c32 = arith::ConstantIntOp::create(builder, loc, kWarp, 32);
  Value warp = arith::DivUIOp::create(builder, loc, tid, c32);
  Value lane = arith::RemUIOp::create(builder, loc, tid, c32);
  return {tid, warp, lane};
}

static ThreadIds entryThreadIds(OpBuilder &builder, Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  Block &entry = func.getFunctionBody().front();
  // Found by what they compute, not where they sit: other patterns may have
  // put ops before them since the first call created them.
  for (auto tidOp : entry.getOps<NVVM::ThreadIdXOp>()) {
    Value tid = tidOp.getResult();
    Value warp = warpSplitOf<arith::DivUIOp>(tid, entry);
    Value lane = warpSplitOf<arith::RemUIOp>(tid, entry);
    if (warp && lane)
      return {tid, warp, lane};
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

std::vector<std::vector<uint32_t>>
flash::simt::firstHolderMasks(const std::vector<std::vector<int64_t>> &table,
                              int64_t numElements, int64_t numWarps) {
  int64_t regs = table.empty() ? 0 : table[0].size();
  // The first (thread, register) holding each element: a thread may hold an
  // element in several registers when its layout pads the tile.
  std::vector<std::pair<int64_t, int64_t>> first(numElements, {-1, -1});
  for (int64_t t = 0, e = table.size(); t < e; ++t)
    for (int64_t r = 0; r < regs; ++r)
      if (first[table[t][r]].first < 0)
        first[table[t][r]] = {t, r};
  std::vector<std::vector<uint32_t>> masks(regs,
                                           std::vector<uint32_t>(numWarps, 0));
  for (auto [t, r] : first)
    if (t >= 0)
      masks[r][t / kWarp] |= 1u << (t % kWarp);
  return masks;
}

Value flash::simt::lanePredicate(OpBuilder &b, Location loc, ThreadIds ids,
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

std::vector<std::vector<uint32_t>>
flash::simt::paddingLanes(const TileInfo &tile, unsigned dim,
                          int64_t numWarps) {
  std::vector<std::vector<uint32_t>> lanes(tile.regs,
                                           std::vector<uint32_t>(numWarps, 0));
  if (tile.padded[dim] == tile.shape[dim])
    return lanes;
  for (int64_t t = 0; t < numWarps * kWarp; ++t)
    for (int64_t r = 0; r < tile.regs; ++r)
      if (tile.paddedCoord(t, r)[dim] >= tile.shape[dim])
        lanes[r][t / kWarp] |= 1u << (t % kWarp);
  return lanes;
}

bool flash::simt::anyLane(ArrayRef<uint32_t> perWarp) {
  return llvm::any_of(perWarp, [](uint32_t m) { return m != 0; });
}

Value flash::simt::replaceInLanes(OpBuilder &b, Location loc, ThreadIds ids,
                                  ArrayRef<uint32_t> perWarp,
                                  Value replacement, Value value) {
  if (!anyLane(perWarp))
    return value;
  Value in = lanePredicate(b, loc, ids, perWarp);
  if (!in) // every lane
    return replacement;
  return arith::SelectOp::create(b, loc, in, replacement, value);
}

SmallVector<Value> flash::simt::extractAll(OpBuilder &b, Location loc,
                                           Value vec, int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

int64_t flash::simt::byteWidth(Type elem) {
  return std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

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

/// The byte offset of the scratch in @__flashc_smem: the kernel's buffers
/// (tile.shared_bytes) come first.
static int64_t scratchStart(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto attr =
      func->getAttrOfType<IntegerAttr>(flash::tile::kSharedBytesAttrName);
  return attr ? llvm::alignTo(attr.getInt(), 16) : 0;
}

void flash::simt::noteSharedBytes(Operation *op, int64_t bytes) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  int64_t total = scratchStart(op) + bytes, current = 0;
  if (auto attr =
          func->getAttrOfType<IntegerAttr>(flash::simt::kSharedBytesAttrName))
    current = attr.getInt();
  if (total > current)
    func->setAttr(flash::simt::kSharedBytesAttrName,
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                   total));
}

Value flash::simt::scratchBase(OpBuilder &b, Location loc, Operation *op) {
  Value global = sharedGlobal(b, loc);
  int64_t start = scratchStart(op);
  return start ? sharedByteAddress(b, loc, global, i32Const(b, loc, start))
               : global;
}

Type flash::simt::storageType(Type elem) {
  if (elem.isInteger(1) || isa<Float8E4M3FNType>(elem))
    return IntegerType::get(elem.getContext(), 8);
  return elem;
}

Value flash::simt::toStorage(OpBuilder &b, Location loc, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (!isa<Float8E4M3FNType>(elem))
    return v;
  Type i8 = b.getI8Type();
  auto vector = dyn_cast<VectorType>(v.getType());
  return arith::BitcastOp::create(
      b, loc, vector ? Type(VectorType::get(vector.getShape(), i8)) : i8, v);
}

Value flash::simt::fromStorage(OpBuilder &b, Location loc, Value v,
                               Type elem) {
  if (!isa<Float8E4M3FNType>(elem) || getElementTypeOrSelf(v.getType()) == elem)
    return v;
  auto vector = dyn_cast<VectorType>(v.getType());
  return arith::BitcastOp::create(
      b, loc, vector ? Type(VectorType::get(vector.getShape(), elem)) : elem, v);
}

static Value sharedAddress(OpBuilder &b, Location loc, Value base, Type elem,
                           Value index) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, loc, ptr3, storageType(elem), base,
                             ValueRange{index});
}

void flash::simt::storeShared(OpBuilder &b, Location loc, Value base,
                              Value value, Value index) {
  Type elem = value.getType();
  if (elem.isInteger(1))
    value = arith::ExtUIOp::create(b, loc, b.getI8Type(), value);
  value = toStorage(b, loc, value);
  LLVM::StoreOp::create(b, loc, value, sharedAddress(b, loc, base, elem, index),
                        byteWidth(storageType(elem)));
}

Value flash::simt::loadShared(OpBuilder &b, Location loc, Value base,
                              Type elem, Value index) {
  Type stored = storageType(elem);
  Value v = LLVM::LoadOp::create(b, loc, stored,
                                 sharedAddress(b, loc, base, elem, index),
                                 byteWidth(stored));
  if (elem.isInteger(1))
    v = arith::TruncIOp::create(b, loc, elem, v);
  return fromStorage(b, loc, v, elem);
}

layout::SwizzleParams flash::simt::swizzleOf(SharedType type) {
  return {type.getRowBytes(), type.getElementBytes(), type.getPerPhase(),
          type.getMaxPhase(),
          type.getBlockCols() * type.getElementBytes(), type.getRows()};
}

Value flash::simt::slotStart(OpBuilder &b, Location loc, IndexBuilder *ib,
                             SharedType type, Value buffer, Value slot) {
  return sharedByteAddress(
      b, loc, buffer, (IndexValue(ib, slot) * type.getSlotBytes()).get());
}

IndexValue flash::simt::relatedOffset(IndexValue first, ArrayRef<int64_t> from,
                                      ArrayRef<int64_t> to, SharedType type,
                                      llvm::function_ref<IndexValue()> direct) {
  if (auto rel = layout::relateByXorAdd(from, to, 16 * type.getMaxPhase()))
    return (first ^ rel->xorMask) + rel->add;
  return direct();
}

//===----------------------------------------------------------------------===//
// Global tensors
//===----------------------------------------------------------------------===//

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

//===- WindowAccess.cpp - addresses and loads of a global window ----------===//
#include "WindowAccess.h"
#include "WindowAnalysis.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

AccessMap AccessMap::of(const TileInfo &tile) {
  return {tile.regs,
          [tile](int64_t thread, int64_t reg) { return tile.coord(thread, reg); },
          [tile](IndexValue warp, IndexValue lane, int64_t reg) {
            return layoutCoord<IndexValue>(tile.layout, tile.shape, warp, lane,
                                           reg);
          }};
}

FailureOr<std::vector<int64_t>>
flash::simt::gatherRegisterMap(const AccessMap &map, const TileInfo &index,
                               int64_t numThreads) {
  std::vector<int64_t> result;
  for (int64_t reg = 0; reg < map.regs; ++reg) {
    auto holdsRow = [&](int64_t k) {
      for (int64_t t = 0; t < numThreads; ++t)
        if (index.coord(t, k)[0] != map.coord(t, reg)[0])
          return false;
      return true;
    };
    int64_t k = 0;
    while (k < index.regs && !holdsRow(k))
      ++k;
    if (k == index.regs)
      return failure();
    result.push_back(k);
  }
  return result;
}

SmallVector<int64_t, 4> flash::simt::tileWindow(ArrayRef<int64_t> window,
                                                bool gathered) {
  SmallVector<int64_t, 4> result;
  if (gathered)
    result.push_back(-1);
  llvm::append_range(result, window);
  return result;
}

//===----------------------------------------------------------------------===//
// WindowAddressing
//===----------------------------------------------------------------------===//

/// The offset of every register's coordinate from register 0's, when it is
/// the same for every thread (always, unless a layout wraps around a tile
/// smaller than its step): [register][tile dim].
static std::optional<std::vector<layout::Coord>>
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

WindowAddressing::WindowAddressing(OpBuilder &b, Location loc, IndexBuilder *ib,
                                   const GlobalView &view, ValueRange offsets,
                                   Operation *access, ArrayRef<int64_t> window,
                                   AccessMap map, int64_t numThreads,
                                   IndexValue warp, IndexValue lane,
                                   const GatherRows *gather)
    : b(b), loc(loc), ib(ib), view(view), window(window), map(std::move(map)),
      warp(warp), lane(lane), gather(gather) {
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
    if (checked[g] && tileDimOf(g) < 0 &&
        !(gather && llvm::is_contained(gather->dims, g)))
      uniform = andPredicates(b, loc, uniform, inRange(index[g], g));
}

IndexValue WindowAddressing::gatheredIndex(unsigned j, int64_t reg) {
  return IndexValue(ib, vector::ExtractOp::create(b, loc, gather->indices[j],
                                                  gather->indexRegister[reg])
                            .getResult());
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
  // Gathered rows: each register's row adds its index along those dims,
  // always checked.
  Value rowOffset, inBounds;
  for (unsigned j = 0; gather && j < gather->dims.size(); ++j) {
    int64_t g = gather->dims[j];
    IndexValue row = gatheredIndex(j, reg);
    idx[g] = idx[g] + row;
    inBounds = andPredicates(b, loc, inBounds, inRange(idx[g], g));
    Value term = arith::MulIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), row.get()),
        strides[g]);
    rowOffset = rowOffset ? arith::AddIOp::create(b, loc, rowOffset, term)
                                .getResult()
                          : term;
  }
  for (unsigned g = 0; g < rank; ++g) {
    if (!checked[g] || tileDimOf(g) < 0)
      continue;
    inBounds = andPredicates(b, loc, inBounds, inRange(idx[g], g));
  }
  if (!registerOffsets)
    return {gep(view.ptr, linear(idx)), inBounds};
  Value address = addressFromBase(reg);
  return {rowOffset ? gep(address, rowOffset) : address, inBounds};
}

/// The shared base plus register `reg`'s offset: the sum over tile dims of
/// offset * stride, a constant when the strides are static.
Value WindowAddressing::addressFromBase(int64_t reg) {
  int64_t constant = 0;
  Value dynamic;
  for (unsigned g = 0, rank = view.type.getRank(); g < rank; ++g) {
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
  return address;
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
  return LLVM::GEPOp::create(b, loc, ptr1,
                             storageType(view.type.getElementType()), ptr,
                             ValueRange{elements});
}

//===----------------------------------------------------------------------===//
// Window loads
//===----------------------------------------------------------------------===//

/// The load's pad attribute as a constant of the element type (null when it
/// does not fit).
static Value padConstant(OpBuilder &b, Location loc, Attribute pad, Type elem) {
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

FailureOr<WindowLoad>
flash::simt::prepareWindowLoad(OpBuilder &b, Location loc, IndexBuilder *ib,
                               LoadOp op, ValueRange offsets,
                               ValueRange indices) {
  auto tile = TileInfo::get(op.getType());
  auto view = getGlobalView(op.getSource(), ib);
  if (!view)
    return op.emitOpError("source is not a kernel tensor parameter");
  // Bools are bytes in memory (any nonzero byte is true; see fromMemory).
  // fp8 values are bytes too: the pad is the f8 constant's bits.
  Type elem = storageType(tile->type.getElementType());
  Type tileElem = tile->type.getElementType();
  Value pad = padConstant(b, loc, op.getPad(),
                          isa<FloatType>(tileElem) ? tileElem : elem);
  if (pad)
    pad = toStorage(b, loc, pad);
  if (!pad)
    return op.emitOpError("unsupported pad value ") << op.getPad();
  SmallVector<int64_t, 4> window = tileWindow(op.getWindow(), op.isGathered());
  std::optional<GatherRows> gather;
  if (op.isGathered()) {
    auto index = TileInfo::get(op.getIndices().front().getType());
    if (!index || llvm::any_of(op.getIndices().getTypes(), [&](Type t) {
          return t != op.getIndices().front().getType();
        }))
      return op.emitOpError("index tiles need one layout");
    int64_t numThreads = getNumWarps(op) * kWarp;
    auto rows = gatherRegisterMap(AccessMap::of(*tile), *index, numThreads);
    if (failed(rows))
      return op.emitOpError("index tile layout ")
             << describe(index->layout) << " does not give every thread the "
             << "rows it loads in " << describe(tile->layout);
    gather = GatherRows{llvm::to_vector(op.getGather()),
                        llvm::to_vector(indices), *rows};
  }
  int64_t width = chooseVectorWidth(*tile, window, *view, offsets.back(),
                                    getNumWarps(op), /*writers=*/nullptr);
  ThreadIds ids = getThreadIds(b, op);
  Type accessType = width == 1 ? elem : VectorType::get({width}, elem);
  Value padValue =
      width == 1 ? pad : vector::BroadcastOp::create(b, loc, accessType, pad);
  return WindowLoad{*view,      llvm::to_vector<4>(offsets),
                    window,     std::move(gather),
                    *tile,      width,
                    accessType, padValue,
                    IndexValue(ib, ids.warp), IndexValue(ib, ids.lane)};
}

/// A scalar loaded as `storageType(elem)` as a value of `elem`.
static Value fromMemory(OpBuilder &b, Location loc, Value v, Type elem) {
  if (v.getType() == elem)
    return v;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(v.getType()));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
}

/// `body()` where `pred` holds (null: always), `pad` elsewhere.
static Value loadGuarded(OpBuilder &b, Location loc, Value pred, Type type,
                         Value pad, function_ref<Value()> body) {
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
}

Value flash::simt::emitWindowLoads(OpBuilder &b, Location loc,
                                   WindowAddressing &addressing,
                                   const WindowLoad &load, int64_t first,
                                   int64_t count) {
  const TileInfo &tile = load.tile;
  Type elem = tile.type.getElementType();
  // fp8 registers are assembled as bytes and bitcast once at the end, so
  // that only arithmetic sees f8E4M3FN values.
  Type regElem = isa<Float8E4M3FNType>(elem) ? storageType(elem) : elem;
  int64_t align = load.width * byteWidth(elem);
  auto loadRegisters = [&]() -> Value {
    SmallVector<Value> elems;
    for (int64_t r0 = first; r0 < first + count; r0 += load.width) {
      AccessPoint at = addressing.at(r0);
      Value loaded = loadGuarded(
          b, loc, at.inBounds, load.accessType, load.padValue, [&] {
            return LLVM::LoadOp::create(b, loc, load.accessType, at.address,
                                        align)
                .getResult();
          });
      if (load.width == 1)
        elems.push_back(fromMemory(b, loc, loaded, regElem));
      else
        llvm::append_range(elems, extractAll(b, loc, loaded, load.width));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({count}, regElem), elems);
  };
  auto vectorType = VectorType::get({count}, regElem);
  Value padVector = vector::BroadcastOp::create(
      b, loc, vectorType,
      load.width == 1 ? fromMemory(b, loc, load.padValue, regElem)
                      : vector::ExtractOp::create(b, loc, load.padValue, 0)
                            .getResult());
  return fromStorage(b, loc,
                     loadGuarded(b, loc, addressing.uniformInBounds(),
                                 vectorType, padVector, loadRegisters),
                     elem);
}

//===----------------------------------------------------------------------===//
// Scalar loads
//===----------------------------------------------------------------------===//

FailureOr<Value> flash::simt::emitScalarLoad(OpBuilder &b, Location loc,
                                             IndexBuilder *ib, LoadScalarOp op,
                                             ValueRange indices) {
  auto view = getGlobalView(op.getSource(), ib);
  if (!view)
    return op.emitOpError("source is not a kernel tensor parameter");
  Type elem = op.getType();
  Value pad = padConstant(b, loc, op.getPad(), elem);
  if (!pad)
    return op.emitOpError("unsupported pad value ") << op.getPad();
  // One element, no tile dims: every dim is checked once (unless proven),
  // and every thread reads the same address.
  AccessMap one;
  one.regs = 1;
  one.coord = [](int64_t, int64_t) { return layout::Coord{}; };
  one.emit = [](IndexValue, IndexValue, int64_t) {
    return layout::CoordOf<IndexValue>{};
  };
  IndexValue zero(ib, int64_t(0));
  WindowAddressing addressing(b, loc, ib, *view, indices, op, /*window=*/{},
                              one, /*numThreads=*/1, zero, zero);
  Value address = addressing.at(0).address;
  if (isa<Float8E4M3FNType>(elem)) { // fp8 is bytes in memory
    Type stored = storageType(elem);
    Value bits = loadGuarded(
        b, loc, addressing.uniformInBounds(), stored, toStorage(b, loc, pad),
        [&] { return LLVM::LoadOp::create(b, loc, stored, address, 1).getResult(); });
    return fromStorage(b, loc, bits, elem);
  }
  return loadGuarded(b, loc, addressing.uniformInBounds(), elem, pad, [&] {
    return LLVM::LoadOp::create(b, loc, elem, address, byteWidth(elem))
        .getResult();
  });
}

//===- TileDialect.cpp - tile dialect registration, types, attributes -----===//
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/PersistentAttributes.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flash::tile;

#include "flashc/Dialect/Tile/TileDialect.cpp.inc"
#include "flashc/Dialect/Tile/TileEnums.cpp.inc"
#include "flashc/Dialect/Tile/TileAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "flashc/Dialect/Tile/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "flashc/Dialect/Tile/TileTypes.cpp.inc"

namespace {
/// Short aliases (#mma, #blocked, #dot_a, #slice...) keep layout-carrying IR
/// readable: every tile type names its layout.
struct TileOpAsmInterface : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<MmaLayoutAttr>(attr))
      os << "mma";
    else if (isa<BlockedLayoutAttr>(attr))
      os << "blocked";
    else if (auto operand = dyn_cast<DotOperandLayoutAttr>(attr))
      os << (operand.getOperandIndex() == 0 ? "dot_a" : "dot_b")
         << (operand.getTransposed() ? "_t" : "");
    else if (auto slice = dyn_cast<SliceLayoutAttr>(attr))
      os << (slice.getDim() == 1 ? "rows" : "cols");
    else
      return AliasResult::NoAlias;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "flashc/Dialect/Tile/TileOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "flashc/Dialect/Tile/TileAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "flashc/Dialect/Tile/TileTypes.cpp.inc"
      >();
  addInterfaces<TileOpAsmInterface>();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// GlobalType: !tile.global<[B, H, Nq, 64], f16>
//===----------------------------------------------------------------------===//

static bool isGlobalElementType(Type type) {
  return type.isF16() || type.isBF16() || isa<Float8E4M3FNType>(type) ||
         type.isF32() || type.isInteger(32) ||
         type.isInteger(1); // bool tensors: one byte per element
}

LogicalResult GlobalType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type elementType, ArrayRef<int64_t> shape,
                                 ArrayRef<StringAttr> dimNames) {
  if (!isGlobalElementType(elementType))
    return emitError() << "global tensor element type must be f16, bf16, "
                          "f8E4M3FN, f32, i32 or i1, got "
                       << elementType;
  if (shape.empty())
    return emitError() << "global tensor must have at least one dim";
  if (shape.size() != dimNames.size())
    return emitError() << "global tensor has " << shape.size()
                       << " dims but " << dimNames.size() << " dim names";
  for (auto [dim, size, name] : llvm::enumerate(shape, dimNames)) {
    bool symbolic = size == ShapedType::kDynamic;
    if (symbolic && (!name || name.getValue().empty()))
      return emitError() << "symbolic dim " << dim << " has no name";
    if (!symbolic && size <= 0)
      return emitError() << "static dim " << dim << " must be positive, got "
                         << size;
    if (!symbolic && name && !name.getValue().empty())
      return emitError() << "static dim " << dim << " must not have a name";
  }
  return success();
}

std::string GlobalType::getDimLabel(unsigned dim) const {
  if (isStaticDim(dim))
    return std::to_string(getShape()[dim]);
  return getDimNames()[dim].str();
}

Type GlobalType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  SmallVector<StringAttr> names;
  auto parseDim = [&]() -> ParseResult {
    int64_t size;
    OptionalParseResult sized = parser.parseOptionalInteger(size);
    if (sized.has_value()) {
      if (failed(*sized))
        return failure();
      shape.push_back(size);
      names.push_back(StringAttr::get(parser.getContext(), ""));
      return success();
    }
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    shape.push_back(ShapedType::kDynamic);
    names.push_back(StringAttr::get(parser.getContext(), name));
    return success();
  };
  Type elementType;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma() || parser.parseType(elementType) ||
      parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), elementType, shape, names);
}

void GlobalType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::seq<unsigned>(0, getRank()), printer,
                        [&](unsigned dim) { printer << getDimLabel(dim); });
  printer << "], " << getElementType() << ">";
}

//===----------------------------------------------------------------------===//
// SharedType: !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
//===----------------------------------------------------------------------===//

LogicalResult SharedType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 int64_t perPhase, int64_t maxPhase,
                                 int64_t blockCols) {
  if (!elementType.isF16() && !elementType.isBF16() &&
      !isa<Float8E4M3FNType>(elementType))
    return emitError()
           << "shared buffer element type must be f16, bf16 or f8E4M3FN, got "
           << elementType;
  const int64_t elemBytes = elementType.getIntOrFloatBitWidth() / 8;
  if (shape.size() != 3)
    return emitError() << "shared buffer shape must be [slots, rows, cols], "
                          "got rank "
                       << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "shared buffer dims must be positive";
  int64_t rowBytes = shape[2] * elemBytes;
  if (rowBytes % 16 != 0)
    return emitError() << "shared buffer rows must be whole 16-byte chunks, "
                          "got "
                       << rowBytes << " bytes";
  if (!llvm::isPowerOf2_64(perPhase) || !llvm::isPowerOf2_64(maxPhase))
    return emitError() << "swizzle per_phase and max_phase must be powers of "
                          "two, got ["
                       << perPhase << ", " << maxPhase << "]";
  if (blockCols < 0)
    return emitError() << "block_cols must not be negative, got " << blockCols;
  if (blockCols > 0) {
    // One block is spelled 0, so that a layout has one spelling.
    if (blockCols >= shape[2] || shape[2] % blockCols != 0)
      return emitError() << "block_cols " << blockCols
                         << " must divide the " << shape[2]
                         << " columns into two or more blocks";
    if (blockCols * elemBytes % 16 != 0)
      return emitError() << "column blocks must be whole 16-byte chunks, got "
                         << blockCols * elemBytes << " bytes";
    rowBytes = blockCols * elemBytes;
  }
  if (maxPhase > rowBytes / 16)
    return emitError() << "swizzle max_phase " << maxPhase
                       << " exceeds the " << rowBytes / 16 << " chunks of a "
                       << (blockCols > 0 ? "column block's row" : "row");
  // The XOR must keep every chunk inside its block.
  if (blockCols > 0 && rowBytes / 16 % maxPhase != 0)
    return emitError() << "swizzle max_phase " << maxPhase
                       << " does not divide the " << rowBytes / 16
                       << " chunks of a column block's row";
  return success();
}

int64_t SharedType::byteOffset(int64_t slot, int64_t row, int64_t col) const {
  int64_t width = isColumnBlocked() ? getBlockCols() : getCols();
  int64_t bytes = col % width * getElementBytes();
  int64_t phase = (row / getPerPhase()) % getMaxPhase();
  return slot * getSlotBytes() + col / width * getRows() * getStoredRowBytes() +
         row * getStoredRowBytes() + ((bytes / 16) ^ phase) * 16 + bytes % 16;
}

Type SharedType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t perPhase = 1, maxPhase = 1, blockCols = 0;
  auto parseDim = [&]() -> ParseResult {
    return parser.parseInteger(shape.emplace_back());
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma() || parser.parseType(elementType))
    return {};
  // Optional `swizzle = [p, m]` then `block_cols = W`, in that order.
  bool swizzleSeen = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "swizzle" && !swizzleSeen && blockCols == 0) {
      swizzleSeen = true;
      if (parser.parseLSquare() || parser.parseInteger(perPhase) ||
          parser.parseComma() || parser.parseInteger(maxPhase) ||
          parser.parseRSquare())
        return {};
    } else if (key == "block_cols" && blockCols == 0) {
      if (parser.parseInteger(blockCols))
        return {};
      if (blockCols == 0) {
        parser.emitError(parser.getCurrentLocation(),
                         "block_cols must be positive (omit it for one "
                         "block)");
        return {};
      }
    } else {
      parser.emitError(parser.getCurrentLocation(),
                       "expected 'swizzle' then 'block_cols', each once, "
                       "got '")
          << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape, elementType, perPhase,
                    maxPhase, blockCols);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getShape(), printer);
  printer << "], " << getElementType();
  if (getMaxPhase() > 1)
    printer << ", swizzle = [" << getPerPhase() << ", " << getMaxPhase()
            << "]";
  if (isColumnBlocked())
    printer << ", block_cols = " << getBlockCols();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Kernel attributes on func.func and its arguments
//===----------------------------------------------------------------------===//

static LogicalResult verifyGridAttr(func::FuncOp kernel, Attribute attr) {
  auto symbol = dyn_cast<FlatSymbolRefAttr>(attr);
  if (!symbol)
    return kernel.emitOpError()
           << "'" << kGridAttrName << "' must be a symbol reference, got "
           << attr;
  auto grid = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(kernel, symbol);
  if (!grid)
    return kernel.emitOpError() << "grid function " << symbol
                                << " does not name a func.func";
  if (grid.getFunctionType().getInputs() !=
      kernel.getFunctionType().getInputs())
    return kernel.emitOpError()
           << "grid function " << symbol
           << " must take the kernel's argument types";
  auto i32 = IntegerType::get(kernel.getContext(), 32);
  if (grid.getFunctionType().getResults() != ArrayRef<Type>{i32, i32, i32})
    return kernel.emitOpError() << "grid function " << symbol
                                << " must return (i32, i32, i32)";
  return success();
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kGridAttrName || name == kNumWarpsAttrName) {
    auto kernel = dyn_cast<func::FuncOp>(op);
    if (!kernel)
      return op->emitError() << "'" << name << "' is only valid on func.func";
    if (name == kGridAttrName)
      return verifyGridAttr(kernel, attr.getValue());
    auto warps = dyn_cast<IntegerAttr>(attr.getValue());
    if (!warps || !warps.getType().isInteger(32) || warps.getInt() < 1 ||
        warps.getInt() > 32)
      return op->emitError() << "'" << name
                             << "' must be an i32 between 1 and 32, got "
                             << attr.getValue();
    return success();
  }
  if (name == kMmaLayoutAttrName) {
    if (!isa<func::FuncOp>(op) || !isa<MmaLayoutAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a #tile.mma on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kConstantsAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict)
      return op->emitError() << "'" << name << "' must be a dictionary";
    for (NamedAttribute constant : dict) {
      Attribute value = constant.getValue();
      if (!isa<IntegerAttr, FloatAttr, BoolAttr, TypeAttr>(value))
        return op->emitError()
               << "constant '" << constant.getName().getValue()
               << "' must be an integer, float, bool or type, got " << value;
    }
    return success();
  }
  if (name == kNumStagesAttrName) {
    auto stages = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<LoopLikeOpInterface>(op) || !stages || stages.getInt() < 1)
      return op->emitError() << "'" << name
                             << "' must be an integer >= 1 on a loop, got "
                             << attr.getValue();
    return success();
  }
  if (name == kSplitCopiesAttrName) {
    auto stages = op->getAttrOfType<IntegerAttr>(kNumStagesAttrName);
    if (!isa<LoopLikeOpInterface>(op) || !isa<UnitAttr>(attr.getValue()) ||
        (stages && stages.getInt() > 2))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a loop with "
                                "at most 2 'tile.num_stages', got "
                             << attr.getValue();
    return success();
  }
  if (name == kMaskSplitAttrName) {
    if (!isa<LoopLikeOpInterface>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a loop, got "
                             << attr.getValue();
    return success();
  }
  if (name == kRegisterBoundAttrName) {
    if (!isa<func::FuncOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kSharedBytesAttrName) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<func::FuncOp>(op) || !bytes || !bytes.getType().isInteger(64) ||
        bytes.getInt() < 0)
      return op->emitError() << "'" << name
                             << "' must be an i64 >= 0 on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kPersistentAttrName) {
    auto schedule = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<func::FuncOp>(op) || !schedule ||
        !llvm::is_contained({"static", "longest-first"}, schedule.getValue()))
      return op->emitError() << "'" << name
                             << "' must be \"static\" or \"longest-first\" "
                                "on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kArchAttrName) {
    auto arch = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !arch || !arch.getType().isInteger(64) ||
        arch.getInt() <= 0)
      return op->emitError() << "'" << name
                             << "' must be an i64 > 0 on a builtin.module, got "
                             << attr.getValue();
    return success();
  }
  if (name == kWgmmaAttrName) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a "
                                "builtin.module, got "
                             << attr.getValue();
    return success();
  }
  if (name == kTmaBarrierAttrName || name == kTmaStagesAttrName) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    bool onWait = isa<AsyncWaitOp>(op);
    if (!(onWait || (isa<AsyncCopyOp>(op) && name == kTmaBarrierAttrName)) ||
        !index || !index.getType().isInteger(64) ||
        index.getInt() < (name == kTmaStagesAttrName ? 1 : 0))
      return op->emitError()
             << "'" << name << "' must be an i64 (barrier index >= 0, stages "
             << ">= 1) on a tile.async_copy or tile.async_wait, got "
             << attr.getValue();
    return success();
  }
  if (name == kCpAsyncBarrierAttrName) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<AsyncCopyOp, AsyncCommitOp, AsyncWaitOp>(op) || !index ||
        !index.getType().isInteger(64) || index.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be an i64 barrier index >= 0 on a "
             << "tile.async_copy, tile.async_commit or tile.async_wait, got "
             << attr.getValue();
    return success();
  }
  if (name == kTmaSwizzleAttrName) {
    auto swizzle = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<AsyncCopyOp>(op) || !swizzle ||
        !llvm::is_contained({"128B", "64B", "32B", "none"}, swizzle.getValue()))
      return op->emitError() << "'" << name
                             << "' must be \"128B\", \"64B\", \"32B\" or "
                                "\"none\" on a tile.async_copy, got "
                             << attr.getValue();
    return success();
  }
  if (name == kTmaBarriersAttrName) {
    auto counts = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!isa<func::FuncOp>(op) || !counts ||
        llvm::any_of(counts.asArrayRef(), [](int64_t c) { return c < 1; }))
      return op->emitError() << "'" << name
                             << "' must be an array<i64> of arrival counts "
                                ">= 1 on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kWarpSpecializeAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto has = [&](StringRef key) {
      return dict && isa_and_nonnull<IntegerAttr>(dict.get(key));
    };
    if (!isa<func::FuncOp>(op) || !has("consumer_warps") ||
        !has("producer_regs") || !has("consumer_regs"))
      return op->emitError() << "'" << name
                             << "' must be a dictionary of integers "
                                "consumer_warps, producer_regs and "
                                "consumer_regs on a func.func, got "
                             << attr.getValue();
    return success();
  }
  if (name == kTmaProducerAttrName || name == kTmaReleaseAttrName ||
      name == kWarpRolesAttrName || name == kTmaReduceAttrName) {
    bool placed = name == kTmaProducerAttrName  ? isa<AsyncCopyOp>(op)
                  : name == kTmaReleaseAttrName ? isa<AsyncWaitOp>(op)
                  : name == kTmaReduceAttrName  ? isa<AtomicAddOp>(op)
                                                : op->getName().getStringRef() == "scf.if";
    if (!placed || !isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' must be a unit attribute on a "
             << (name == kTmaProducerAttrName  ? "tile.async_copy"
                 : name == kTmaReleaseAttrName ? "tile.async_wait"
                 : name == kTmaReduceAttrName  ? "tile.atomic_add"
                                               : "scf.if")
             << ", got " << attr.getValue();
    return success();
  }
  if (name == kTmaReleaseLagAttrName) {
    auto lag = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<AsyncWaitOp>(op) || !op->hasAttr(kTmaReleaseAttrName) || !lag ||
        lag.getInt() < 1)
      return op->emitError()
             << "'" << name
             << "' must be a positive integer on a releasing tile.async_wait "
                "(tile.tma_release), got "
             << attr.getValue();
    return success();
  }
  if (name == kTmaRingCountsAttrName) {
    // A persistent kernel's loop over its tiles: one i32 count per ring.
    auto rings = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto loop = dyn_cast<LoopLikeOpInterface>(op);
    if (!loop || op->getName().getStringRef() != "scf.for" || !rings ||
        rings.size() != static_cast<int64_t>(loop.getRegionIterArgs().size()) ||
        llvm::any_of(rings.asArrayRef(), [](int64_t i) { return i < 0; }) ||
        llvm::any_of(loop.getRegionIterArgs(), [](BlockArgument arg) {
          return !arg.getType().isInteger(32);
        }))
      return op->emitError()
             << "'" << name
             << "' must be an array<i64> of barrier indices >= 0 on an "
                "scf.for with one i32 iter_arg per entry, got "
             << attr.getValue();
    return success();
  }
  if (name == kTmaRingBaseAttrName) {
    auto ring = dyn_cast<IntegerAttr>(attr.getValue());
    if (op->getName().getStringRef() != "arith.addi" || !ring ||
        ring.getInt() < 0)
      return op->emitError()
             << "'" << name
             << "' must be a barrier index >= 0 on an arith.addi, got "
             << attr.getValue();
    return success();
  }
  if (name == kPingPongAttrName) {
    // The turns' warpgroup count on the role split; a hand-over arrival.
    auto groups = dyn_cast<IntegerAttr>(attr.getValue());
    bool onSplit = op->getName().getStringRef() == "scf.if" &&
                   op->hasAttr(kWarpRolesAttrName) && groups &&
                   groups.getInt() >= 2 && groups.getInt() <= 4;
    bool onArrive = op->getName().getStringRef() == "nvvm.barrier.arrive" &&
                    isa<UnitAttr>(attr.getValue());
    if (!onSplit && !onArrive)
      return op->emitError()
             << "'" << name
             << "' must be an integer in 2..4 on the scf.if of a role split "
                "(tile.warp_roles) or a unit attribute on an "
                "nvvm.barrier.arrive, got "
             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown tile dialect attribute '" << name << "'";
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() != kArgNameAttrName)
    return op->emitError() << "unknown tile dialect argument attribute '"
                           << attr.getName().getValue() << "'";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << kArgNameAttrName << "' of argument "
                           << argIndex << " must be a non-empty string";
  return success();
}

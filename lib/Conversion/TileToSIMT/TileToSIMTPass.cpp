//===- TileToSIMTPass.cpp - layout-assigned tile IR to one thread's program ===//
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
// The pass checks the kernels, marks what must be decided on the original IR
// (fused MMA operands, windows proven in bounds, the buffers' bytes), expands
// the tensor parameters, runs the patterns of the op families (Patterns.h)
// and moves the kernels into gpu.module @flashc_kernels.
//
//===----------------------------------------------------------------------===//
#include "flashc/Conversion/Passes.h"
#include "Patterns.h"
#include "TmaCopyToSIMT.h"
#include "Utility.h"
#include "WindowAnalysis.h"

#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

namespace flash {
#define GEN_PASS_DEF_CONVERTTILETOSIMT
#include "flashc/Conversion/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {

//===----------------------------------------------------------------------===//
// Before the conversion
//===----------------------------------------------------------------------===//

/// A kernel returns nothing and every tile in it carries a layout.
LogicalResult verifyKernelTypes(func::FuncOp kernel) {
  bool ok = true;
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
  return success(ok);
}

/// Registers one thread may hold for one tile. The conversion evaluates the
/// layout at every register of every thread and emits one value per
/// register: a layout that pads a tile to thousands of registers (huge
/// `values`) would run for minutes or exhaust memory. Kernels from the front
/// end hold at most 255 32-bit words per thread (tile-check-resources);
/// this bound leaves room for padding and 1-bit masks.
constexpr int64_t kMaxRegistersPerTile = 1024;

/// Every tile's layout fits the kernel: no more warps than it has, and a
/// bounded number of registers per thread (for layout IR that did not come
/// through tile-check-resources).
LogicalResult verifyLayoutResources(func::FuncOp kernel) {
  int64_t warps =
      kernel->getAttrOfType<IntegerAttr>(flash::tile::kNumWarpsAttrName)
          .getInt();
  auto check = [&](Operation *op, Type type) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    auto layout = dyn_cast_or_null<LayoutAttrInterface>(tensor.getEncoding());
    if (!layout)
      return success();
    if (layout.getNumWarps() > warps)
      return op->emitOpError()
             << "has a tile of type " << tensor << " whose layout spreads it "
             << "over " << layout.getNumWarps() << " warps, but the kernel has "
             << warps << " (tile.num_warps)";
    int64_t registers = layout.getNumRegisters(tensor.getShape());
    if (registers > kMaxRegistersPerTile)
      return op->emitOpError()
             << "has a tile of type " << tensor << " whose layout gives each "
             << "thread " << registers << " registers, more than the "
             << kMaxRegistersPerTile << " a tile may take";
    return success();
  };
  WalkResult result = kernel.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (failed(check(op, t)))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type t : block.getArgumentTypes())
          if (failed(check(op, t)))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The name of parameter `i` in the source program.
std::string paramName(func::FuncOp func, unsigned i) {
  auto nameAttr = func.getArgAttrOfType<StringAttr>(i, kArgNameAttrName);
  return nameAttr ? nameAttr.str() : ("arg" + std::to_string(i));
}

/// Records what the launcher needs of each parameter in flashc.params: its
/// name, kind (tensor or scalar), element type and, for tensors, dim labels.
void recordLaunchParams(func::FuncOp func) {
  Builder b(func.getContext());
  SmallVector<Attribute> params;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    StringAttr name = b.getStringAttr(paramName(func, i));
    auto global = dyn_cast<GlobalType>(type);
    if (!global) {
      params.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", name),
          b.getNamedAttr("kind", b.getStringAttr("scalar")),
          b.getNamedAttr("element", TypeAttr::get(type)),
      }));
      continue;
    }
    SmallVector<Attribute> dims;
    for (unsigned d = 0; d < global.getRank(); ++d)
      dims.push_back(b.getStringAttr(global.getDimLabel(d)));
    params.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", name),
        b.getNamedAttr("kind", b.getStringAttr("tensor")),
        b.getNamedAttr("element", TypeAttr::get(global.getElementType())),
        b.getNamedAttr("dims", b.getArrayAttr(dims)),
    }));
  }
  func->setAttr(kParamsAttrName, b.getArrayAttr(params));
}

/// Replaces every !tile.global parameter by (!llvm.ptr<1>, i32 per dim),
/// named NAME, NAME.d0, ...; its uses take an unrealized_conversion_cast of
/// them, which the patterns read through getGlobalView.
void expandSignature(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  Block &entry = func.getBody().front();
  auto ptr1 = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> types;
  SmallVector<Attribute> argAttrs;
  auto addArgument = [&](Type type, const std::string &name, Location loc) {
    types.push_back(type);
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kArgNameAttrName, b.getStringAttr(name))));
    return entry.addArgument(type, loc);
  };
  unsigned oldCount = entry.getNumArguments();
  b.setInsertionPointToStart(&entry);
  for (unsigned i = 0; i < oldCount; ++i) {
    BlockArgument arg = entry.getArgument(i);
    std::string name = paramName(func, i);
    auto global = dyn_cast<GlobalType>(arg.getType());
    if (!global) {
      arg.replaceAllUsesWith(addArgument(arg.getType(), name, arg.getLoc()));
      continue;
    }
    SmallVector<Value> parts = {addArgument(ptr1, name, arg.getLoc())};
    for (unsigned d = 0; d < global.getRank(); ++d)
      parts.push_back(addArgument(b.getI32Type(),
                                  name + ".d" + std::to_string(d),
                                  arg.getLoc()));
    auto cast = UnrealizedConversionCastOp::create(b, arg.getLoc(),
                                                   TypeRange{global}, parts);
    arg.replaceAllUsesWith(cast.getResult(0));
  }
  entry.eraseArguments(0, oldCount);
  func.setFunctionType(b.getFunctionType(types, {}));
  func.setAllArgAttrs(argAttrs);
}

//===----------------------------------------------------------------------===//
// The conversion
//===----------------------------------------------------------------------===//

bool hasTensorType(Operation *op) {
  auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

LogicalResult convertKernels(MLIRContext *ctx, ArrayRef<func::FuncOp> kernels,
                             bool iotaImmediates) {
  TypeConverter converter;
  RewritePatternSet patterns(ctx);
  flash::populateTileToSIMTPatterns(converter, patterns);
  if (iotaImmediates)
    populateIotaCompareToSIMTPatterns(converter, patterns);
  ConversionTarget target(*ctx);
  target.addIllegalDialect<TileDialect>();
  target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                         vector::VectorDialect, gpu::GPUDialect>();
  target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
      [](Operation *op) { return !hasTensorType(op); });
  target.addLegalOp<UnrealizedConversionCastOp, func::FuncOp,
                    func::ReturnOp, cf::AssertOp>();
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (func::FuncOp kernel : kernels)
    if (failed(applyPartialConversion(kernel, target, frozen)))
      return failure();
  return success();
}

/// The casts standing for global tensors are dead once every use is lowered.
LogicalResult eraseTensorCasts(func::FuncOp kernel) {
  SmallVector<UnrealizedConversionCastOp> casts;
  kernel.walk([&](UnrealizedConversionCastOp c) { casts.push_back(c); });
  for (auto c : casts) {
    if (!c->use_empty())
      return c->getUses().begin()->getOwner()->emitOpError(
          "uses a kernel tensor parameter in a way that cannot be lowered");
    c.erase();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Outlining: host side stays; kernels move into gpu.module @flashc_kernels.
//===----------------------------------------------------------------------===//

/// @__flashc_smem, as large as the largest kernel's use, if any uses it;
/// on sm_90a aligned for wgmma's swizzled operands (their buffers' offsets
/// are, by tile-allocate-shared).
void createSharedGlobal(OpBuilder &b, Location loc,
                        ArrayRef<func::FuncOp> kernels, bool wgmma) {
  int64_t sharedBytes = 0;
  for (func::FuncOp kernel : kernels)
    if (auto attr = kernel->getAttrOfType<IntegerAttr>(
            flash::simt::kSharedBytesAttrName))
      sharedBytes = std::max(sharedBytes, attr.getInt());
  if (sharedBytes == 0)
    return;
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), sharedBytes);
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                         LLVM::Linkage::Internal, kSharedGlobalName,
                         Attribute(), /*alignment=*/wgmma ? 1024 : 16,
                         /*addrSpace=*/3);
}

/// The tile dialect's verifier allows only tile.constants outside a
/// func.func: tile.num_warps, tile.grid, tile.mma_layout travel as
/// flashc.num_warps, flashc.grid, flashc.mma_layout. tile.shared_bytes is
/// counted in flashc.shared_bytes (0 when the kernel uses no shared memory).
void copyKernelAttributes(func::FuncOp kernel, gpu::GPUFuncOp gpuFunc) {
  for (NamedAttribute attr : kernel->getDiscardableAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name == flash::tile::kSharedBytesAttrName)
      continue;
    if (name.starts_with("tile.") && name != kConstantsAttrName)
      gpuFunc->setAttr((kAttrPrefix + name.drop_front(5)).str(),
                       attr.getValue());
    else
      gpuFunc->setAttr(attr.getName(), attr.getValue());
  }
  if (!gpuFunc->hasAttr(flash::simt::kSharedBytesAttrName))
    gpuFunc->setAttr(flash::simt::kSharedBytesAttrName,
                     Builder(kernel.getContext()).getI64IntegerAttr(0));
}

/// In a warp-specialized kernel the producer warpgroup leaves the consumers
/// early: their CTA barriers (the conversion's and tile.barrier's) become
/// named barrier 1 over the consumer threads.
void useConsumerBarriers(gpu::GPUFuncOp func, int64_t consumers) {
  SmallVector<NVVM::BarrierOp> barriers;
  func.walk([&](scf::IfOp roles) {
    if (!roles->hasAttr(flash::tile::kWarpRolesAttrName))
      return;
    roles.getElseRegion().walk([&](NVVM::BarrierOp bar) {
      if (!bar.getNumberOfThreads() && !bar.getBarrierId())
        barriers.push_back(bar);
    });
  });
  for (NVVM::BarrierOp bar : barriers) {
    OpBuilder b(bar);
    Location loc = bar.getLoc();
    auto named = NVVM::BarrierOp::create(
        b, loc, Type(), i32Const(b, loc, flash::tile::kConsumerBarrierId),
        i32Const(b, loc, consumers), NVVM::BarrierReductionAttr(), Value());
    named->setDiscardableAttrs(bar->getDiscardableAttrDictionary());
    bar.erase();
  }
}

/// Moves `kernel`'s body into a gpu.func kernel at `b` and erases it.
void outlineKernel(OpBuilder &b, func::FuncOp kernel) {
  auto gpuFunc = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                        kernel.getFunctionType());
  gpuFunc.getBody().takeBody(kernel.getBody());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int64_t numWarps =
      kernel->getAttrOfType<IntegerAttr>(flash::tile::kNumWarpsAttrName)
          .getInt();
  bool specialized = kernel->hasAttr(flash::tile::kWarpSpecializeAttrName);
  // The layouts are the consumers'; a producer warpgroup runs beside them.
  int64_t threads = numWarps * kWarp +
                    (specialized ? flash::tile::kProducerThreads : 0);
  gpuFunc.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  copyKernelAttributes(kernel, gpuFunc);
  if (specialized) {
    gpuFunc->setAttr(flash::simt::kNumWarpsAttrName,
                     b.getI32IntegerAttr(threads / kWarp));
    useConsumerBarriers(gpuFunc, numWarps * kWarp);
  }
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

void outlineKernels(ModuleOp module, ArrayRef<func::FuncOp> kernels) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule =
      gpu::GPUModuleOp::create(b, module.getLoc(), "flashc_kernels");
  b.setInsertionPointToStart(gpuModule.getBody());
  createSharedGlobal(b, module.getLoc(), kernels,
                     targetsWgmma(module));
  for (func::FuncOp kernel : kernels)
    outlineKernel(b, kernel);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertTileToSIMTPass
    : flash::impl::ConvertTileToSIMTBase<ConvertTileToSIMTPass> {
  using ConvertTileToSIMTBase::ConvertTileToSIMTBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(flash::tile::kNumWarpsAttrName))
        kernels.push_back(func);
    if (kernels.empty())
      return;

    bool ok = true;
    for (func::FuncOp kernel : kernels)
      ok &= succeeded(verifyKernelTypes(kernel));
    if (!ok)
      return signalPassFailure();
    for (func::FuncOp kernel : kernels)
      ok &= succeeded(verifyLayoutResources(kernel));
    for (func::FuncOp kernel : kernels)
      ok &= succeeded(verifySharedMemoryOps(kernel));
    if (!ok)
      return signalPassFailure();

    // Decided before any op is rewritten, while the uses and the loops are
    // intact.
    for (func::FuncOp kernel : kernels) {
      markLoadsFusedIntoMma(kernel);
      ok &= succeeded(verifyWgmmaOperands(kernel));
      markWindowsInBounds(kernel);
      markUniformMasks(kernel);
      reserveSharedBuffers(kernel);
      reserveFp8TransposeBuffers(kernel);
      recordLaunchParams(kernel);
      expandSignature(kernel);
      if (failed(lowerTmaCopies(kernel)))
        return signalPassFailure();
    }

    if (!ok)
      return signalPassFailure();
    if (failed(convertKernels(&getContext(), kernels, iotaImmediates)))
      return signalPassFailure();
    for (func::FuncOp kernel : kernels)
      if (failed(eraseTensorCasts(kernel)))
        return signalPassFailure();
    outlineKernels(module, kernels);
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
  populateSharedMemoryOpToSIMTPatterns(converter, patterns);
  populateElementwiseOpToSIMTPatterns(converter, patterns);
  populateLayoutMoveOpToSIMTPatterns(converter, patterns);
  populateReduceOpToSIMTPatterns(converter, patterns);
  populateMmaOpToSIMTPatterns(converter, patterns);
  populateWgmmaOpToSIMTPatterns(converter, patterns);
  populateLoadStoreOpToSIMTPatterns(converter, patterns);
  populateAssertOpToSIMTPatterns(converter, patterns);
}

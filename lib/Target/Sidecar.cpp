//===- Sidecar.cpp - launcher metadata (JSON) for a compiled kernel -------===//
#include "flashc/Target/Sidecar.h"

#include "flashc/Dialect/Tile/Attributes.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Runtime/GridExpr.h"
#include "flashc/Target/TensorMapSpecs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

std::string typeName(Type type) {
  if (auto ptr = dyn_cast<LLVM::LLVMPointerType>(type))
    return ptr.getAddressSpace() == 1 ? "ptr" : "ptr" + std::to_string(
                                                          ptr.getAddressSpace());
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

/// The dtype of a tensor's elements: a bool tensor (i1 in the IR) is "bool",
/// one byte per element as numpy stores it.
std::string tensorDType(Type element) {
  return element.isInteger(1) ? "bool" : typeName(element);
}

/// A dim label: a symbol ("Nq") or a static size ("64", written as a number).
llvm::json::Value dimValue(llvm::StringRef label) {
  int64_t value;
  if (!label.getAsInteger(10, value))
    return value;
  return label.str();
}

//===----------------------------------------------------------------------===//
// Grid expressions
//===----------------------------------------------------------------------===//

/// The grid function's return values in the sidecar's grid-expression
/// language (flashc/Runtime/GridExpr.h), op by op.
class GridRenderer {
public:
  explicit GridRenderer(func::FuncOp grid) : grid(grid) {}

  FailureOr<flash::grid::Expr> render(Value value) {
    auto it = cache.find(value);
    if (it != cache.end())
      return it->second;
    FailureOr<flash::grid::Expr> result = renderUncached(value);
    if (succeeded(result))
      cache.try_emplace(value, *result);
    return result;
  }

private:
  FailureOr<flash::grid::Expr> renderUncached(Value value) {
    using flash::grid::Expr;
    using flash::grid::Op;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner()->getParentOp() != grid.getOperation() ||
          !arg.getType().isInteger(32))
        return grid.emitError()
               << "the grid uses argument #" << arg.getArgNumber()
               << " of type " << arg.getType()
               << ": only i32 scalar parameters and tensor dims can size "
                  "the grid";
      return Expr::symbol(argName(arg.getArgNumber()));
    }
    Operation *op = value.getDefiningOp();
    if (auto dim = dyn_cast<flash::tile::DimOp>(op)) {
      auto global = cast<flash::tile::GlobalType>(dim.getSource().getType());
      return Expr::symbol(global.getDimLabel(dim.getIndex()));
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto attr = dyn_cast<IntegerAttr>(constant.getValue()))
        return Expr::integer(attr.getValue().getSExtValue());
    std::optional<Op> gridOp =
        llvm::TypeSwitch<Operation *, std::optional<Op>>(op)
            .Case([](arith::AddIOp) { return Op::Add; })
            .Case([](arith::SubIOp) { return Op::Sub; })
            .Case([](arith::MulIOp) { return Op::Mul; })
            .Case([](arith::DivSIOp) { return Op::Div; })
            .Case([](arith::RemSIOp) { return Op::Rem; })
            .Case([](arith::CeilDivSIOp) { return Op::CeilDiv; })
            .Case([](arith::FloorDivSIOp) { return Op::FloorDiv; })
            .Case([](arith::MinSIOp) { return Op::Min; })
            .Case([](arith::MaxSIOp) { return Op::Max; })
            .Default([](Operation *) { return std::nullopt; });
    if (!gridOp)
      return op->emitError()
             << "cannot express '" << op->getName()
             << "' in the launch metadata's grid: use tensor dims, i32 "
                "parameters, constants, + - * / %, ceildivsi, floordivsi, "
                "minsi, maxsi";
    FailureOr<Expr> lhs = render(op->getOperand(0));
    FailureOr<Expr> rhs = render(op->getOperand(1));
    if (failed(lhs) || failed(rhs))
      return failure();
    return Expr::apply(*gridOp, *lhs, *rhs);
  }

  std::string argName(unsigned index) {
    if (auto name = grid.getArgAttrOfType<StringAttr>(
            index, flash::tile::kArgNameAttrName))
      return name.str();
    return "arg" + std::to_string(index);
  }

  func::FuncOp grid;
  llvm::DenseMap<Value, flash::grid::Expr> cache;
};

//===----------------------------------------------------------------------===//
// Kernel lookup
//===----------------------------------------------------------------------===//

bool isKernel(Operation *op) {
  if (auto func = dyn_cast<gpu::GPUFuncOp>(op))
    return func.isKernel();
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op))
    return func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
           func.getCConv() == LLVM::cconv::CConv::PTX_Kernel ||
           func->hasAttr(flash::simt::kParamsAttrName);
  return false;
}

std::optional<int64_t> threadsPerCTA(Operation *kernel) {
  DenseI32ArrayAttr sizes = flash::knownBlockSize(kernel);
  for (StringRef name : {NVVM::NVVMDialect::getReqntidAttrName(),
                         NVVM::NVVMDialect::getMaxntidAttrName()})
    if (!sizes)
      sizes = kernel->getAttrOfType<DenseI32ArrayAttr>(name);
  if (sizes) {
    int64_t n = 1;
    for (int32_t s : sizes.asArrayRef())
      n *= s;
    return n;
  }
  if (auto warps = dyn_cast_or_null<IntegerAttr>(
          kernel->getAttr(flash::simt::kNumWarpsAttrName)))
    return warps.getInt() * 32;
  return std::nullopt;
}

struct ParamInfo {
  std::string name, kind, dtype;
  SmallVector<std::string> dims; // tensors only
};

/// Parameters from the kernel's `flashc.params` (written by convert-tile-to-simt).
FailureOr<SmallVector<ParamInfo>> paramsFromAttr(Operation *kernel,
                                                 ArrayAttr params) {
  SmallVector<ParamInfo> result;
  for (Attribute attr : params) {
    auto dict = dyn_cast<DictionaryAttr>(attr);
    auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
    auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    auto element = dict ? dict.getAs<TypeAttr>("element") : TypeAttr();
    if (!name || !kind || !element ||
        (kind.getValue() != "tensor" && kind.getValue() != "scalar"))
      return kernel->emitError()
             << "malformed '" << "params" << "' entry " << attr;
    bool tensor = kind.getValue() == "tensor";
    ParamInfo info{name.str(), kind.str(),
                   tensor ? tensorDType(element.getValue())
                          : typeName(element.getValue()),
                   {}};
    if (kind.getValue() == "tensor") {
      auto dims = dict.getAs<ArrayAttr>("dims");
      if (!dims)
        return kernel->emitError()
               << "'" << "params" << "' tensor entry without dims";
      for (Attribute d : dims) {
        if (auto s = dyn_cast<StringAttr>(d))
          info.dims.push_back(s.str());
        else if (auto i = dyn_cast<IntegerAttr>(d))
          info.dims.push_back(std::to_string(i.getInt()));
        else
          return kernel->emitError() << "bad dim " << d << " in '"
                                     << "params" << "'";
      }
    }
    result.push_back(std::move(info));
  }
  return result;
}

/// Parameters from the grid function, which keeps the tile-level signature.
SmallVector<ParamInfo> paramsFromGrid(func::FuncOp grid) {
  SmallVector<ParamInfo> result;
  for (unsigned i = 0; i < grid.getNumArguments(); ++i) {
    ParamInfo info;
    auto name =
        grid.getArgAttrOfType<StringAttr>(i, flash::tile::kArgNameAttrName);
    info.name = name ? name.str() : "arg" + std::to_string(i);
    Type type = grid.getArgument(i).getType();
    if (auto global = dyn_cast<flash::tile::GlobalType>(type)) {
      info.kind = "tensor";
      info.dtype = tensorDType(global.getElementType());
      for (unsigned d = 0; d < global.getRank(); ++d)
        info.dims.push_back(global.getDimLabel(d));
    } else {
      info.kind = "scalar";
      info.dtype = typeName(type);
    }
    result.push_back(std::move(info));
  }
  return result;
}

void writeAttr(llvm::json::OStream &j, Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    j.value(b.getValue());
  else if (auto i = dyn_cast<IntegerAttr>(attr))
    j.value(i.getValue().getSExtValue());
  else if (auto f = dyn_cast<FloatAttr>(attr))
    j.value(f.getValueAsDouble());
  else if (auto s = dyn_cast<StringAttr>(attr))
    j.value(s.getValue());
  else {
    std::string text;
    llvm::raw_string_ostream os(text);
    attr.print(os);
    j.value(text);
  }
}

/// What the sidecar says about the one kernel of a SIMT-level module.
struct LaunchInfo {
  Operation *kernel;
  StringRef entry;
  SmallVector<ParamInfo> params;
  SmallVector<SmallVector<std::string>> abis; // per param
  /// The tensor maps, passed after the params (abi "tensormap" each).
  std::vector<flash::emu::TensorMapSpec> tensorMaps;
  SmallVector<std::string, 3> grid;
  /// tile-persistent's schedule ("static", "longest-first"); empty when the
  /// kernel is not persistent. Its grid is then min(tiles, CTAs) along x.
  std::string persistent;
  int64_t threads;
  flash::SharedMemoryUse shared;
};

/// The one kernel, inside the one gpu.module.
FailureOr<Operation *> findLaunchedKernel(ModuleOp module,
                                          Operation *&gpuModule) {
  SmallVector<Operation *> gpuModules;
  for (Operation &op : module.getBody()->getOperations())
    if (isa<gpu::GPUModuleOp>(op))
      gpuModules.push_back(&op);
  if (gpuModules.size() != 1)
    return module.emitError()
           << "the launch metadata needs a SIMT-level module with one "
              "gpu.module; found "
           << gpuModules.size();
  gpuModule = gpuModules[0];
  SmallVector<Operation *> kernels;
  for (Operation &op : gpuModule->getRegion(0).front())
    if (isKernel(&op))
      kernels.push_back(&op);
  if (kernels.size() != 1)
    return gpuModule->emitError()
           << "the launch metadata describes one kernel; found "
           << kernels.size();
  return kernels[0];
}

/// The grid function: named by the kernel, else NAME_grid.
FailureOr<func::FuncOp> findGridFunction(ModuleOp module, Operation *kernel,
                                         StringRef entry) {
  func::FuncOp grid;
  if (auto ref = dyn_cast_or_null<FlatSymbolRefAttr>(
          kernel->getAttr(flash::simt::kGridAttrName)))
    grid = module.lookupSymbol<func::FuncOp>(ref.getValue());
  if (!grid)
    grid = module.lookupSymbol<func::FuncOp>((entry + "_grid").str());
  if (!grid)
    return kernel->emitError() << "no grid function for kernel '" << entry
                               << "' (expected @" << entry << "_grid)";
  return grid;
}

/// The ABI of each parameter, checked against the kernel's signature: the
/// params, then one generic pointer per tensor map (passed by value: the
/// 128-byte map as a __grid_constant__ parameter).
FailureOr<SmallVector<SmallVector<std::string>>>
paramABIs(Operation *kernel, ArrayRef<ParamInfo> params,
          size_t numTensorMaps) {
  ArrayRef<Type> argTypes = cast<FunctionOpInterface>(kernel).getArgumentTypes();
  SmallVector<SmallVector<std::string>> abis;
  size_t next = 0;
  for (const ParamInfo &p : params) {
    SmallVector<std::string> expected;
    if (p.kind == "tensor") {
      expected.push_back("ptr");
      expected.append(p.dims.size(), "i32");
    } else {
      expected.push_back(p.dtype);
    }
    SmallVector<std::string> actual;
    for (size_t k = 0; k < expected.size() && next + k < argTypes.size(); ++k)
      actual.push_back(typeName(argTypes[next + k]));
    if (actual != expected)
      return kernel->emitError()
             << "kernel signature does not match parameter '" << p.name
             << "': expected (" << llvm::join(expected, ", ") << ") at argument #"
             << next << ", found (" << llvm::join(actual, ", ") << ")";
    next += expected.size();
    abis.push_back(std::move(actual));
  }
  for (size_t m = 0; m < numTensorMaps; ++m, ++next)
    if (next >= argTypes.size() || typeName(argTypes[next]) != "ptr0")
      return kernel->emitError()
             << "kernel signature does not match tensor map #" << m
             << ": expected a generic !llvm.ptr at argument #" << next;
  if (next != argTypes.size())
    return kernel->emitError()
           << "kernel has " << argTypes.size() << " arguments, the parameters "
           << "account for " << next;
  return abis;
}

/// Shared memory the kernel launches with: the gpu.module's buffers, else
/// the kernel's tile.shared_bytes.
flash::SharedMemoryUse launchedSharedMemory(Operation *gpuModule,
                                            Operation *kernel) {
  flash::SharedMemoryUse shared =
      flash::launchSharedMemory(flash::sharedMemoryOf(gpuModule));
  if (shared.staticBytes == 0 && shared.dynamicBytes == 0)
    if (auto bytes = dyn_cast_or_null<IntegerAttr>(
            kernel->getAttr(flash::simt::kSharedBytesAttrName)))
      shared = flash::launchSharedMemory({bytes.getInt(), 0});
  return shared;
}

FailureOr<LaunchInfo> collectLaunchInfo(ModuleOp module) {
  Operation *gpuModule = nullptr;
  FailureOr<Operation *> kernel = findLaunchedKernel(module, gpuModule);
  if (failed(kernel))
    return failure();
  LaunchInfo info;
  info.kernel = *kernel;
  info.entry = SymbolTable::getSymbolName(info.kernel).getValue();
  FailureOr<func::FuncOp> grid =
      findGridFunction(module, info.kernel, info.entry);
  if (failed(grid))
    return failure();
  FailureOr<SmallVector<std::string, 3>> gridExprs =
      flash::renderGridExpressions(*grid);
  if (failed(gridExprs))
    return failure();
  info.grid = std::move(*gridExprs);
  if (auto schedule =
          info.kernel->getAttrOfType<StringAttr>("flashc.persistent"))
    info.persistent = schedule.str();

  if (auto attr = dyn_cast_or_null<ArrayAttr>(
          info.kernel->getAttr(flash::simt::kParamsAttrName))) {
    auto fromAttr = paramsFromAttr(info.kernel, attr);
    if (failed(fromAttr))
      return failure();
    info.params = std::move(*fromAttr);
  } else {
    info.params = paramsFromGrid(*grid);
  }
  std::string mapError;
  if (!flash::collectTensorMapSpecs(info.kernel, info.tensorMaps, mapError))
    return info.kernel->emitError() << mapError;
  for (const flash::emu::TensorMapSpec &spec : info.tensorMaps) {
    const ParamInfo *tensor = nullptr;
    for (const ParamInfo &p : info.params)
      if (p.name == spec.tensor && p.kind == "tensor")
        tensor = &p;
    if (!tensor)
      return info.kernel->emitError()
             << "tensor map '" << spec.name << "' names no tensor parameter ('"
             << spec.tensor << "')";
    if (tensor->dims.size() != spec.box.size())
      return info.kernel->emitError()
             << "tensor map '" << spec.name << "' has a box of rank "
             << spec.box.size() << " for tensor '" << spec.tensor
             << "' of rank " << tensor->dims.size();
  }
  FailureOr<SmallVector<SmallVector<std::string>>> abis =
      paramABIs(info.kernel, info.params, info.tensorMaps.size());
  if (failed(abis))
    return failure();
  info.abis = std::move(*abis);

  std::optional<int64_t> threads = threadsPerCTA(info.kernel);
  if (!threads)
    return info.kernel->emitError()
           << "kernel has no gpu.known_block_size, nvvm.reqntid or num_warps";
  info.threads = *threads;
  info.shared = launchedSharedMemory(gpuModule, info.kernel);
  return info;
}

/// Pretty at the top level, one line per parameter and per small object, so
/// that the file reads well and FileCheck can match a line each.
class SidecarPrinter {
public:
  SidecarPrinter(llvm::raw_ostream &os, const LaunchInfo &info)
      : j(os, /*IndentSize=*/2), info(info) {}

  void print(const flash::TargetOptions &options);

private:
  /// `body` written on one line, as the current value.
  void compact(llvm::function_ref<void(llvm::json::OStream &)> body) {
    j.rawValue([&](llvm::raw_ostream &raw) {
      llvm::json::OStream c(raw);
      body(c);
    });
  }
  void param(llvm::json::OStream &c, size_t i);
  void tensorMap(llvm::json::OStream &c, const flash::emu::TensorMapSpec &m);
  void sharedMemory(llvm::json::OStream &c);
  void constants(llvm::json::OStream &c);

  llvm::json::OStream j;
  const LaunchInfo &info;
};

void SidecarPrinter::print(const flash::TargetOptions &options) {
  int ptx = options.ptxVersion ? options.ptxVersion
                               : flash::defaultPTXVersion(options.arch);
  j.object([&] {
    j.attribute("entry", info.entry);
    j.attribute("arch", options.arch);
    j.attribute("ptx_version",
                std::to_string(ptx / 10) + "." + std::to_string(ptx % 10));
    j.attributeArray("params", [&] {
      for (size_t i = 0; i < info.params.size(); ++i)
        compact([&](llvm::json::OStream &c) { param(c, i); });
    });
    if (!info.tensorMaps.empty())
      j.attributeArray("tensor_maps", [&] {
        for (const flash::emu::TensorMapSpec &spec : info.tensorMaps)
          compact([&](llvm::json::OStream &c) { tensorMap(c, spec); });
      });
    j.attributeBegin("grid");
    compact([&](llvm::json::OStream &c) {
      c.array([&] {
        for (const std::string &e : info.grid)
          c.value(e);
      });
    });
    j.attributeEnd();
    if (!info.persistent.empty())
      j.attribute("persistent", info.persistent);
    j.attribute("threads_per_cta", info.threads);
    j.attribute("num_warps", info.threads / 32);
    j.attributeBegin("shared_memory");
    compact([&](llvm::json::OStream &c) { sharedMemory(c); });
    j.attributeEnd();
    j.attributeBegin("constants");
    compact([&](llvm::json::OStream &c) { constants(c); });
    j.attributeEnd();
  });
}

void SidecarPrinter::param(llvm::json::OStream &c, size_t i) {
  const ParamInfo &p = info.params[i];
  c.object([&] {
    c.attribute("name", p.name);
    c.attribute("kind", p.kind);
    c.attribute("dtype", p.dtype);
    if (p.kind == "tensor")
      c.attributeArray("dims", [&] {
        for (const std::string &d : p.dims)
          c.value(dimValue(d));
      });
    c.attributeArray("abi", [&] {
      for (const std::string &a : info.abis[i])
        c.value(a);
    });
  });
}

void SidecarPrinter::tensorMap(llvm::json::OStream &c,
                               const flash::emu::TensorMapSpec &m) {
  c.object([&] {
    c.attribute("name", m.name);
    c.attribute("tensor", m.tensor);
    c.attributeArray("box", [&] {
      for (int64_t b : m.box)
        c.value(b);
    });
    c.attribute("swizzle", flash::emu::tmaSwizzleName(m.swizzle));
    c.attribute("oob", flash::emu::tmaOobFillName(m.oobFill));
    c.attribute("abi", "tensormap");
  });
}

void SidecarPrinter::sharedMemory(llvm::json::OStream &c) {
  c.object([&] {
    c.attribute("static_bytes", info.shared.staticBytes);
    c.attribute("dynamic_bytes", info.shared.dynamicBytes);
    c.attribute("opt_in", flash::needsSharedOptIn(info.shared.staticBytes,
                                                  info.shared.dynamicBytes));
  });
}

void SidecarPrinter::constants(llvm::json::OStream &c) {
  c.object([&] {
    if (auto constants = dyn_cast_or_null<DictionaryAttr>(
            info.kernel->getAttr(flash::tile::kConstantsAttrName)))
      for (NamedAttribute n : constants) {
        c.attributeBegin(n.getName().getValue());
        writeAttr(c, n.getValue());
        c.attributeEnd();
      }
  });
}

std::string renderSidecar(const LaunchInfo &info,
                          const flash::TargetOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  SidecarPrinter(os, info).print(options);
  os << "\n";
  return text;
}
} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

DenseI32ArrayAttr flash::knownBlockSize(Operation *kernel) {
  if (auto func = dyn_cast<gpu::GPUFuncOp>(kernel))
    if (DenseI32ArrayAttr sizes = func.getKnownBlockSizeAttr())
      return sizes;
  return kernel->getAttrOfType<DenseI32ArrayAttr>(
      gpu::GPUDialect::KnownBlockSizeAttrHelper::getNameStr());
}

bool flash::isDeclaration(LLVM::GlobalOp global) {
  return global.getLinkage() == LLVM::Linkage::External &&
         !global.getValueOrNull() && global.getInitializerRegion().empty();
}

flash::SharedMemoryUse flash::sharedMemoryOf(Operation *gpuModule) {
  SharedMemoryUse use;
  DataLayout layout = DataLayout::closest(gpuModule);
  for (Region &region : gpuModule->getRegions())
    for (Block &block : region)
      for (auto global : block.getOps<LLVM::GlobalOp>())
        if (global.getAddrSpace() == 3 && !flash::isDeclaration(global))
          use.staticBytes += layout.getTypeSize(global.getGlobalType());
  if (auto dynamic =
          gpuModule->getAttrOfType<IntegerAttr>(flash::simt::kDynamicSharedBytesAttrName))
    use.dynamicBytes = dynamic.getInt();
  return use;
}

flash::SharedMemoryUse flash::launchSharedMemory(SharedMemoryUse declared) {
  if (declared.staticBytes > kMaxStaticSharedBytes)
    return {0, declared.dynamicBytes + declared.staticBytes};
  return declared;
}

FailureOr<SmallVector<std::string, 3>>
flash::renderGridExpressions(func::FuncOp grid) {
  if (grid.getNumResults() != 3 || grid.getBody().empty())
    return grid.emitError() << "a grid function returns three i32";
  auto ret = dyn_cast<func::ReturnOp>(grid.getBody().back().getTerminator());
  if (!ret || !grid.getBody().hasOneBlock())
    return grid.emitError() << "a grid function is one block ending in return";
  GridRenderer renderer(grid);
  SmallVector<std::string, 3> result;
  for (Value v : ret.getOperands()) {
    FailureOr<flash::grid::Expr> e = renderer.render(v);
    if (failed(e))
      return failure();
    result.push_back(e->text());
  }
  return result;
}

FailureOr<std::string> flash::writeLaunchSidecar(ModuleOp module,
                                                 const TargetOptions &options) {
  if (llvm::Error err = verifyTargetOptions(options))
    return module.emitError() << llvm::toString(std::move(err));
  FailureOr<LaunchInfo> info = collectLaunchInfo(module);
  if (failed(info))
    return failure();
  return renderSidecar(*info, options);
}

//===- EmulateBackend.cpp - --target=emulate: the SIMT program ------------===//
//
// Lowers the module to the SIMT level (SIMTKernel.h) and runs its kernel on
// the emulator, the .npy bytes serving as global memory in place. The grid
// comes from the host-side grid function, run on the interpreter.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "Diagnostics.h"
#include "Outputs.h"
#include "ParseNumber.h"
#include "SIMTKernel.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Emulator/AsyncOps.h"
#include "flashc/Emulator/Emulator.h"
#include "flashc/Target/TensorMapSpecs.h"

#include "llvm/Support/Timer.h"

#include <cstdio>

using namespace mlir;

namespace flash::run {

namespace {

class EmulateBackend : public Backend {
public:
  explicit EmulateBackend(const BackendContext &context) : context(context) {}

  int prepare(ParamList &params) override {
    const std::string name =
        context.request.arch.empty() ? std::string(kDefaultArch)
                                     : context.request.arch;
    arch = findArch(name);
    if (!arch) {
      context.diag.error("unknown --arch '" + name +
                         "' (supported: " + archList(" and ") + ")");
      return 1;
    }
    return prepareSIMTKernel(context, kernel, params, *arch);
  }
  int run(ParamList &params) override;

private:
  int evaluateGrid(ParamList &params, std::array<int64_t, 3> &grid);
  void makeBuffers(ParamList &params);
  int makeArguments(ParamList &params, std::vector<emu::KernelArg> &args);
  int launch(const std::array<int64_t, 3> &grid,
             const std::vector<emu::KernelArg> &args);
  /// Binds tensor map argument `name` (if the kernel has one of that name):
  /// its 128 bytes become a buffer of their own.
  int bindTensorMap(ParamList &params, const std::string &name,
                    std::vector<emu::KernelArg> &args, bool &bound);

  BackendContext context;
  /// The GPU whose launch limits the emulator enforces (default sm_80).
  const ArchInfo *arch = nullptr;
  gpu::GPUFuncOp kernel;
  std::vector<emu::GlobalBuffer> buffers;
  std::vector<int> bufferOf; // by parameter index
};

/// The TMA element type of a tensor of `elem`.
static bool tmaDataTypeFor(interp::ElemType elem, emu::TmaDataType &type) {
  using K = sem::ScalarType;
  switch (elem.kind) {
  case K::F16:
    type = emu::TmaDataType::F16;
    return true;
  case K::BF16:
    type = emu::TmaDataType::BF16;
    return true;
  case K::F32:
    type = emu::TmaDataType::F32;
    return true;
  case K::F64:
    type = emu::TmaDataType::F64;
    return true;
  case K::F8E4M3: // TMA moves fp8 as bytes
    type = emu::TmaDataType::U8;
    return true;
  case K::Int:
    break;
  }
  switch (elem.width) {
  case 8:
    type = emu::TmaDataType::U8;
    return true;
  case 16:
    type = emu::TmaDataType::U16;
    return true;
  case 32:
    type = emu::TmaDataType::I32;
    return true;
  case 64:
    type = emu::TmaDataType::I64;
    return true;
  }
  return false;
}

/// The grid function sees tensors through their shapes only.
int EmulateBackend::evaluateGrid(ParamList &params,
                                 std::array<int64_t, 3> &grid) {
  grid = {1, 1, 1};
  auto ref = kernel->getAttrOfType<FlatSymbolRefAttr>(simt::kGridAttrName);
  if (!ref)
    return 0;
  auto fn = context.module.lookupSymbol<func::FuncOp>(ref.getValue());
  if (!fn) {
    context.diag.os() << "error: grid function '" << ref.getValue()
                      << "' not found\n";
    return 2;
  }
  std::vector<std::unique_ptr<interp::GlobalBuffer>> shapes;
  std::vector<interp::RtValue> args;
  for (Param &p : params) {
    if (!p.tensor) {
      args.push_back(interp::RtValue::scalar(p.elem, p.scalar));
      continue;
    }
    auto b = std::make_unique<interp::GlobalBuffer>();
    b->elem = p.elem;
    b->shape = p.array.shape;
    args.push_back(interp::RtValue::globalRef(b.get()));
    shapes.push_back(std::move(b));
  }
  interp::InterpError error;
  if (interp::evaluateGrid(fn, args, grid, error))
    return 0;
  context.diag.error(error.loc, error.message);
  return error.kind == interp::ErrorKind::Runtime ? 1 : 2;
}

void EmulateBackend::makeBuffers(ParamList &params) {
  bufferOf.assign(params.size(), -1);
  for (Param &p : params) {
    if (!p.tensor)
      continue;
    emu::GlobalBuffer b;
    b.name = p.name;
    b.bytes = std::move(p.array.data);
    bufferOf[p.index] = buffers.size();
    buffers.push_back(std::move(b));
  }
}

/// The gpu.func's arguments, by their names: NAME (a tensor's pointer or a
/// scalar) and NAME.dK (dim K of tensor NAME).
int EmulateBackend::makeArguments(ParamList &params,
                                  std::vector<emu::KernelArg> &args) {
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    auto nameAttr =
        kernel.getArgAttrOfType<StringAttr>(i, tile::kArgNameAttrName);
    if (!nameAttr) {
      context.diag.os() << "error: SIMT kernel argument #" << i << " has no '"
                        << tile::kArgNameAttrName << "' attribute\n";
      return 2;
    }
    std::string name = nameAttr.getValue().str();
    bool isMap = false;
    if (int rc = bindTensorMap(params, name, args, isMap))
      return rc;
    if (isMap)
      continue;
    if (Param *p = params.find(name)) {
      if (p->tensor)
        args.push_back(emu::KernelArg::ofBuffer(bufferOf[p->index]));
      else if (p->elem.isFloat())
        args.push_back(emu::KernelArg::ofFloat(p->scalar));
      else
        args.push_back(emu::KernelArg::ofInt(static_cast<int64_t>(p->scalar)));
      continue;
    }
    auto dot = name.rfind(".d");
    long long dim;
    bool overflow;
    if (dot != std::string::npos &&
        parseInteger(name.substr(dot + 2), dim, overflow) && !overflow) {
      Param *p = params.find(name.substr(0, dot));
      if (p && p->tensor && dim >= 0 &&
          dim < (long long)p->array.shape.size()) {
        args.push_back(emu::KernelArg::ofInt(p->array.shape[dim]));
        continue;
      }
    }
    context.diag.os() << "error: SIMT kernel argument #" << i << " ('" << name
                      << "') matches no parameter of 'flashc.params'\n";
    return 2;
  }
  return 0;
}

int EmulateBackend::bindTensorMap(ParamList &params, const std::string &name,
                                  std::vector<emu::KernelArg> &args,
                                  bool &bound) {
  std::vector<emu::TensorMapSpec> specs;
  std::string error;
  if (!collectTensorMapSpecs(kernel.getOperation(), specs, error)) {
    context.diag.os() << "error: " << error << "\n";
    return 2;
  }
  for (const emu::TensorMapSpec &spec : specs) {
    if (spec.name != name)
      continue;
    bound = true;
    Param *p = params.find(spec.tensor);
    emu::TmaDataType type;
    if (!p || !p->tensor || !tmaDataTypeFor(p->elem, type)) {
      context.diag.os() << "error: tensor map '" << name
                        << "' names no tensor parameter of a TMA element "
                           "type ('"
                        << spec.tensor << "')\n";
      return 2;
    }
    auto map = emu::tensorMapFor(spec, type, p->array.shape,
                                 emu::bufferAddress(bufferOf[p->index]));
    if (!map.ok()) {
      context.diag.error(map.error());
      return 1;
    }
    emu::GlobalBuffer b;
    b.name = name;
    b.bytes.resize(emu::kTensorMapBytes);
    emu::encodeTensorMap(*map, b.bytes.data());
    args.push_back(emu::KernelArg::ofBuffer(buffers.size()));
    buffers.push_back(std::move(b));
    return 0;
  }
  return 0;
}

int EmulateBackend::launch(const std::array<int64_t, 3> &grid,
                           const std::vector<emu::KernelArg> &args) {
  emu::Kernel k;
  emu::Error e;
  if (!k.prepare(kernel, e)) {
    context.diag.error(e.loc, e.message);
    return e.kind == emu::Error::Kind::Runtime ? 1 : 2;
  }
  emu::Stats stats;
  emu::Options opts;
  opts.checkRaces = context.request.checkRaces;
  opts.arch = std::string(arch->name);
  opts.maxSharedBytes = arch->maxShared;
  opts.memoryBudget = context.request.memoryBudget;
  llvm::TimeRecord start = llvm::TimeRecord::getCurrentTime(true);
  bool ok = k.launch(grid, args, buffers, stats, e, opts);
  llvm::TimeRecord end = llvm::TimeRecord::getCurrentTime(false);
  RunResults *results = context.request.results;
  if (!ok) {
    context.diag.error(e.loc, e.message);
    if (results)
      results->sanitizerFinding = e.kind == emu::Error::Kind::Runtime;
    return e.kind == emu::Error::Kind::Internal ? 2 : 1;
  }
  if (results) {
    results->emulatorStats = stats;
    results->emulationSeconds = end.getWallTime() - start.getWallTime();
  }
  if (context.request.stats) {
    llvm::raw_ostream &os = statsStream(context.request);
    stats.print(os, kernel.getName());
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", end.getWallTime() - start.getWallTime());
    os << "  emulation wall time (s)                   " << buf << "\n";
    os.flush();
  }
  return 0;
}

int EmulateBackend::run(ParamList &params) {
  std::array<int64_t, 3> grid;
  if (int rc = evaluateGrid(params, grid))
    return rc;
  makeBuffers(params);
  std::vector<emu::KernelArg> args;
  if (int rc = makeArguments(params, args))
    return rc;
  if (int rc = launch(grid, args))
    return rc;
  return writeOutputs(
      context.request, params,
      [&](Param &p) {
        npy::Array out(*npyDTypeFor(p.elem), p.array.shape);
        out.data = std::move(buffers[bufferOf[p.index]].bytes);
        return out;
      },
      context.diag);
}

} // namespace

std::unique_ptr<Backend> createEmulateBackend(const BackendContext &context) {
  return std::make_unique<EmulateBackend>(context);
}

} // namespace flash::run

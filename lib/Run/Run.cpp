//===- Run.cpp - `flashc run`: bind arguments, run a kernel, write outputs ===//

#include "flashc/Run/Run.h"
#include "flashc/Conversion/Passes.h"
#include "flashc/Emulator/Emulator.h"
#include "flashc/Interp/Interpreter.h"
#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Launcher/Launch.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Target/PTX.h"
#include "flashc/Target/Sidecar.h"
#include "flashc/Pipelines/Pipelines.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Timer.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>

using namespace mlir;

namespace flash {

namespace {

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// Parses a whole string as a floating-point number.
bool parseNumber(const std::string &s, double &out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

/// Parses a whole string as a base-10 integer.
bool parseInteger(const std::string &s, long long &out, bool &overflow) {
  overflow = false;
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size())
    return false;
  overflow = errno == ERANGE;
  return true;
}

/// A kernel parameter as the user binds it: from the tile-level kernel's
/// argument types, or from a SIMT kernel's `flashc.params` attribute.
struct Param {
  std::string name;
  unsigned index;
  Type type;                        // the tile-level type (null from SIMT)
  std::string declared;             // the declared type, for messages
  bool tensor = false;
  Type elemType;                    // element type (tensors) or scalar type
  std::vector<int64_t> staticDims;  // tensors: size, or -1 for a symbol
  std::vector<std::string> dimNames;
  interp::ElemType elem;
  bool given = false;
  std::string text; // the --arg value
  npy::Array array;
  double scalar = 0;
};

class Runner {
public:
  Runner(ModuleOp module, const RunRequest &req, llvm::raw_ostream &diag)
      : module(module), req(req), diag(diag) {}

  int run();

private:
  void error(const std::string &msg) {
    diag << "error: " << msg << "\n";
    ++numErrors;
  }
  void note(const std::string &msg) { diag << "note: " << msg << "\n"; }
  std::string paramList() const {
    std::string s;
    for (const Param &p : params) {
      if (!s.empty())
        s += ", ";
      s += p.name;
    }
    return s.empty() ? "(none)" : s;
  }
  bool collectParams();
  bool collectSIMTParams();
  /// Checks a parameter's element type and name, then records it.
  bool addParam(Param p);
  bool lowerToSIMT();
  int runEmulator(std::vector<interp::RtValue> &gridArgs);
  int runCuda();
  void bindTensor(Param &p);
  void bindScalar(Param &p);
  std::optional<npy::DType> npyDTypeFor(interp::ElemType e) const;

  ModuleOp module;
  const RunRequest &req;
  llvm::raw_ostream &diag;
  unsigned numErrors = 0;
  func::FuncOp kernel, gridFn;
  gpu::GPUFuncOp simtKernel;
  std::vector<Param> params;
  llvm::StringMap<unsigned> byName;
  /// symbol -> (value, name of the param that bound it)
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  /// cuda: the driver, opened before anything else.
  std::unique_ptr<cuda::Driver> driver;
};

std::optional<npy::DType> Runner::npyDTypeFor(interp::ElemType e) const {
  switch (e.kind) {
  case interp::ElemType::F16:
    return npy::DType::F16;
  case interp::ElemType::F32:
    return npy::DType::F32;
  case interp::ElemType::Int:
    if (e.width == 32)
      return npy::DType::I32;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

bool Runner::collectParams() {
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    Param p;
    p.index = i;
    p.type = kernel.getArgument(i).getType();
    auto nameAttr =
        kernel.getArgAttrOfType<StringAttr>(i, flash::tile::kArgNameAttrName);
    if (!nameAttr) {
      diag << "error: kernel argument #" << i << " has no '"
           << flash::tile::kArgNameAttrName << "' attribute\n";
      return false;
    }
    p.name = nameAttr.getValue().str();
    Type et = p.type;
    p.declared = typeStr(p.type);
    if (auto g = dyn_cast<tile::GlobalType>(p.type)) {
      p.tensor = true;
      et = g.getElementType();
      for (unsigned d = 0; d < g.getRank(); ++d) {
        bool st = g.isStaticDim(d);
        p.staticDims.push_back(st ? g.getShape()[d] : -1);
        p.dimNames.push_back(st ? std::to_string(g.getShape()[d])
                                : g.getDimNames()[d].getValue().str());
      }
    }
    p.elemType = et;
    if (!addParam(std::move(p)))
      return false;
  }
  return true;
}

bool Runner::addParam(Param p) {
  auto e = interp::ElemType::get(p.elemType);
  if (!e) {
    diag << "error: kernel parameter '" << p.name << "' has unsupported type "
         << p.declared << "\n";
    return false;
  }
  p.elem = *e;
  if (byName.count(p.name)) {
    diag << "error: kernel declares parameter '" << p.name << "' twice\n";
    return false;
  }
  byName[p.name] = params.size();
  params.push_back(std::move(p));
  return true;
}

void Runner::bindScalar(Param &p) {
  const std::string &s = p.text;
  const std::string &declared = p.declared;
  double d;
  if (!parseNumber(s, d)) {
    error("argument '" + p.name + "' is a scalar " + declared +
          " parameter and needs a number, not '" + s + "'");
    return;
  }
  if (p.elem.isFloat()) {
    p.scalar = interp::roundTo(p.elem, d);
    return;
  }
  long long v;
  bool overflow;
  if (!parseInteger(s, v, overflow)) {
    error("argument '" + p.name + "' is a scalar " + declared +
          " parameter and needs an integer, not '" + s + "'");
    return;
  }
  unsigned w = p.elem.width;
  long long lo = w >= 64 ? std::numeric_limits<long long>::min()
                         : (w == 1 ? 0 : -(1LL << (w - 1)));
  long long hi = w >= 64 ? std::numeric_limits<long long>::max()
                         : (w == 1 ? 1 : (1LL << (w - 1)) - 1);
  if (overflow || v < lo || v > hi) {
    error("argument '" + p.name + "' is " + s + ", which does not fit in " +
          declared);
    return;
  }
  p.scalar = static_cast<double>(v);
}

void Runner::bindTensor(Param &p) {
  const std::string &declared = p.declared;
  double ignored;
  if (parseNumber(p.text, ignored)) {
    error("argument '" + p.name + "' is a tensor parameter (" + declared +
          ") and needs an .npy file, not the number '" + p.text + "'");
    return;
  }
  std::string why;
  if (!npy::readFile(p.text, p.array, why)) {
    error("cannot read argument '" + p.name + "' from '" + p.text +
          "': " + why);
    return;
  }
  auto want = npyDTypeFor(p.elem);
  if (!want) {
    error("parameter '" + p.name + "' has element type " +
          typeStr(p.elemType) +
          ", which .npy arguments cannot provide (supported: f16, f32, i32)");
    return;
  }
  if (p.array.dtype != *want) {
    error("argument '" + p.name + "' is " + npy::dtypeName(p.array.dtype) +
          " but the kernel declares " + typeStr(p.elemType));
    return;
  }
  unsigned rank = p.staticDims.size();
  if (p.array.shape.size() != rank) {
    error("argument '" + p.name + "' has rank " +
          std::to_string(p.array.shape.size()) + " (shape " +
          npy::shapeToString(p.array.shape) + ") but the kernel declares rank " +
          std::to_string(rank) + " (" + declared + ")");
    return;
  }
  bool zero = false;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t size = p.array.shape[d];
    if (size > std::numeric_limits<int32_t>::max()) {
      error("dim " + std::to_string(d) + " of argument '" + p.name + "' is " +
            std::to_string(size) + ", which does not fit in i32");
      continue;
    }
    if (size == 0)
      zero = true;
    if (p.staticDims[d] >= 0) {
      int64_t want = p.staticDims[d];
      if (size != want)
        error("argument '" + p.name + "' has size " + std::to_string(size) +
              " in dim " + std::to_string(d) + " but the kernel declares " +
              std::to_string(want) + " (" + declared + ")");
      continue;
    }
    const std::string &sym = p.dimNames[d];
    auto it = symbols.find(sym);
    if (it == symbols.end()) {
      symbols[sym] = {size, p.name};
    } else if (it->second.first != size) {
      error("dim '" + sym + "' is " + std::to_string(it->second.first) +
            " in " + it->second.second + " but " + std::to_string(size) +
            " in " + p.name);
    }
  }
  if (zero)
    note("argument '" + p.name + "' has shape " +
         npy::shapeToString(p.array.shape) + " and holds no elements");
}

bool Runner::lowerToSIMT() {
  // The same pipeline as `flashc --emit=simt` and the PTX path: the emulator
  // runs exactly the program the GPU would. Input whose tiles already carry
  // layouts (flashc --emit=layout) skips the layout pipeline.
  bool hasLayouts = false;
  module.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        hasLayouts |= static_cast<bool>(rt.getEncoding());
  });
  PassManager pm(module.getContext());
  if (hasLayouts) {
    pm.addPass(createConvertTileToSIMT());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  } else {
    buildSIMTPipeline(pm);
  }
  if (failed(pm.run(module))) {
    diag << "error: the kernel could not be lowered to the SIMT level for "
            "--target="
         << req.target << " (see the diagnostics above)\n";
    return false;
  }
  return true;
}

bool Runner::collectSIMTParams() {
  auto list = simtKernel->getAttrOfType<ArrayAttr>(flash::simt::kParamsAttrName);
  if (!list) {
    diag << "error: SIMT kernel '" << simtKernel.getName()
         << "' has no 'flashc.params' attribute (its parameters are unknown)\n";
    return false;
  }
  unsigned index = 0;
  for (Attribute a : list) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("name") : nullptr;
    auto kind = d ? d.getAs<StringAttr>("kind") : nullptr;
    auto elem = d ? d.getAs<TypeAttr>("element") : nullptr;
    if (!name || !kind || !elem) {
      diag << "error: malformed 'flashc.params' entry #" << index
           << " of SIMT kernel '" << simtKernel.getName() << "'\n";
      return false;
    }
    Param p;
    p.index = index++;
    p.name = name.getValue().str();
    p.elemType = elem.getValue();
    p.tensor = kind.getValue() == "tensor";
    p.declared = typeStr(p.elemType);
    if (p.tensor) {
      auto dims = d.getAs<ArrayAttr>("dims");
      if (!dims) {
        diag << "error: 'flashc.params' entry '" << p.name
             << "' is a tensor without dims\n";
        return false;
      }
      p.declared += "[";
      for (Attribute da : dims) {
        auto ds = dyn_cast<StringAttr>(da);
        std::string label = ds ? ds.getValue().str() : "?";
        long long v;
        bool overflow;
        bool isStatic = parseInteger(label, v, overflow) && !overflow;
        p.staticDims.push_back(isStatic ? v : -1);
        p.dimNames.push_back(label);
        p.declared += (p.dimNames.size() > 1 ? ", " : "") + label;
      }
      p.declared += "]";
    }
    if (!addParam(std::move(p)))
      return false;
  }
  return true;
}

int Runner::runEmulator(std::vector<interp::RtValue> &gridArgs) {
  // The grid: the host-side grid function of the tile program.
  std::array<int64_t, 3> grid{{1, 1, 1}};
  if (auto g = simtKernel->getAttrOfType<FlatSymbolRefAttr>(flash::simt::kGridAttrName)) {
    auto fn = module.lookupSymbol<func::FuncOp>(g.getValue());
    if (!fn) {
      diag << "error: grid function '" << g.getValue() << "' not found\n";
      return 2;
    }
    interp::InterpError ierr;
    if (!interp::evaluateGrid(fn, gridArgs, grid, ierr)) {
      diag << "error: " << ierr.message << "\n";
      return ierr.kind == interp::ErrorKind::Runtime ? 1 : 2;
    }
  }

  // Buffers: the .npy bytes are the global memory, used in place.
  std::vector<emu::GlobalBuffer> buffers;
  std::vector<int> bufferOf(params.size(), -1);
  for (Param &p : params) {
    if (!p.tensor)
      continue;
    emu::GlobalBuffer b;
    b.name = p.name;
    b.bytes = std::move(p.array.data);
    bufferOf[p.index] = buffers.size();
    buffers.push_back(std::move(b));
  }
  // gpu.func arguments: NAME (pointer or scalar) and NAME.dK (dim K).
  std::vector<emu::KernelArg> kargs;
  for (unsigned i = 0; i < simtKernel.getNumArguments(); ++i) {
    auto nameAttr =
        simtKernel.getArgAttrOfType<StringAttr>(i, flash::tile::kArgNameAttrName);
    if (!nameAttr) {
      diag << "error: SIMT kernel argument #" << i << " has no '"
           << flash::tile::kArgNameAttrName << "' attribute\n";
      return 2;
    }
    std::string name = nameAttr.getValue().str();
    auto it = byName.find(name);
    if (it != byName.end()) {
      Param &p = params[it->second];
      if (p.tensor)
        kargs.push_back(emu::KernelArg::ofBuffer(bufferOf[p.index]));
      else if (p.elem.isFloat())
        kargs.push_back(emu::KernelArg::ofFloat(p.scalar));
      else
        kargs.push_back(emu::KernelArg::ofInt(static_cast<int64_t>(p.scalar)));
      continue;
    }
    auto dot = name.rfind(".d");
    long long dim;
    bool overflow;
    if (dot != std::string::npos && byName.count(name.substr(0, dot)) &&
        parseInteger(name.substr(dot + 2), dim, overflow) && !overflow) {
      Param &p = params[byName[name.substr(0, dot)]];
      if (p.tensor && dim >= 0 && dim < (long long)p.array.shape.size()) {
        kargs.push_back(emu::KernelArg::ofInt(p.array.shape[dim]));
        continue;
      }
    }
    diag << "error: SIMT kernel argument #" << i << " ('" << name
         << "') matches no parameter of 'flashc.params'\n";
    return 2;
  }

  emu::Kernel k;
  emu::Error e;
  if (!k.prepare(simtKernel, e)) {
    diag << e.message << "\n";
    return e.kind == emu::Error::Kind::Runtime ? 1 : 2;
  }
  emu::Stats stats;
  emu::Options opts;
  opts.checkRaces = req.checkRaces;
  llvm::TimeRecord start = llvm::TimeRecord::getCurrentTime(true);
  bool ok = k.launch(grid, kargs, buffers, stats, e, opts);
  llvm::TimeRecord end = llvm::TimeRecord::getCurrentTime(false);
  if (!ok) {
    diag << e.message << "\n";
    return e.kind == emu::Error::Kind::Internal ? 2 : 1;
  }
  if (req.stats) {
    llvm::raw_ostream &os = req.statsOut ? *req.statsOut : llvm::outs();
    stats.print(os, simtKernel.getName());
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", end.getWallTime() - start.getWallTime());
    os << "  emulation wall time (s)                   " << buf << "\n";
    os.flush();
  }

  int rc = 0;
  std::string why;
  for (const auto &[name, file] : req.outs) {
    const Param &p = params[byName[name]];
    npy::Array out(*npyDTypeFor(p.elem), p.array.shape);
    out.data = buffers[bufferOf[p.index]].bytes;
    if (!npy::writeFile(file, out, why)) {
      diag << "error: cannot write output '" << name << "' to '" << file
           << "': " << why << "\n";
      rc = 1;
    }
  }
  return rc;
}

int Runner::runCuda() {
  // The arch: --arch, else the newest supported one the device can run.
  int cc = driver->ccMajor() * 10 + driver->ccMinor();
  std::string device = "device 0 ('" + driver->deviceName() +
                       "', compute capability " +
                       std::to_string(driver->ccMajor()) + "." +
                       std::to_string(driver->ccMinor()) + ")";
  TargetOptions options;
  if (!req.arch.empty()) {
    options.arch = req.arch;
    if (llvm::Error e = verifyTargetOptions(options)) {
      diag << "error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    int want = std::atoi(req.arch.c_str() + 3);
    if (want > cc) {
      diag << "error: --arch=" << req.arch << " is newer than " << device
           << "\n";
      return 1;
    }
    note("--target=cuda: compiling for " + req.arch + " (--arch) on " +
         device);
  } else {
    options.arch.clear();
    for (int candidate : {90, 89, 86, 80})
      if (candidate <= cc) {
        options.arch = "sm_" + std::to_string(candidate);
        break;
      }
    if (options.arch.empty()) {
      diag << "error: " << device
           << " is older than sm_80, the oldest arch flashc supports\n";
      return 1;
    }
    note("--target=cuda: compiling for " + options.arch + " (from " + device +
         "; --arch overrides)");
  }

  // PTX + sidecar, exactly what `flashc -o K.ptx` writes.
  FailureOr<std::string> sidecarText = writeLaunchSidecar(module, options);
  FailureOr<std::string> ptx =
      failed(sidecarText) ? FailureOr<std::string>(failure())
                          : emitPTX(module, options);
  if (failed(sidecarText) || failed(ptx)) {
    diag << "error: the kernel could not be compiled to PTX for "
            "--target=cuda (see the diagnostics above)\n";
    return 1;
  }
  launcher::Sidecar sidecar;
  std::string why;
  if (!launcher::parseSidecar(*sidecarText, sidecar, why)) {
    diag << "error: internal: the launch sidecar does not parse: " << why
         << "\n";
    return 2;
  }

  std::vector<launcher::Arg> args;
  for (Param &p : params) {
    launcher::Arg a;
    a.name = p.name;
    if (p.tensor) {
      a.tensor = &p.array;
      for (const auto &out : req.outs)
        a.copyBack |= out.first == p.name;
    } else {
      a.scalar = p.scalar;
    }
    args.push_back(std::move(a));
  }
  launcher::LaunchResult result;
  if (!launcher::launch(*driver, *ptx, sidecar, args, why, &result)) {
    diag << "error: " << why << "\n";
    return 1;
  }
  if (req.stats) {
    llvm::raw_ostream &os = req.statsOut ? *req.statsOut : llvm::outs();
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", result.milliseconds);
    os << "cuda kernel " << sidecar.entry << " on " << device << ":\n"
       << "  grid                                      (" << result.grid[0]
       << ", " << result.grid[1] << ", " << result.grid[2] << ")\n"
       << "  threads per CTA                           " << result.block
       << "\n"
       << "  dynamic shared memory (bytes)             "
       << result.dynamicSharedBytes << "\n"
       << "  launch + synchronize wall time (ms)       " << buf << "\n";
    os.flush();
  }

  int rc = 0;
  for (const auto &[name, file] : req.outs) {
    const Param &p = params[byName[name]];
    if (!npy::writeFile(file, p.array, why)) {
      diag << "error: cannot write output '" << name << "' to '" << file
           << "': " << why << "\n";
      rc = 1;
    }
  }
  return rc;
}

int Runner::run() {
  bool emulate = req.target == "emulate";
  bool cuda = req.target == "cuda";
  if (req.target != "interp" && !emulate && !cuda) {
    diag << "error: target '" << req.target
         << "' is not supported by this runner (supported: interp, "
            "emulate, cuda)\n";
    return 1;
  }
  std::string why;
  if (cuda) {
    // First: without a driver or device nothing else is worth reporting.
    driver = cuda::Driver::open(why);
    if (!driver) {
      diag << "error: " << why << "\n";
      return 1;
    }
  }
  if (emulate || cuda) {
    // Tile-level input is lowered here; SIMT-level input runs as it is.
    bool hasSIMT = false;
    module.walk([&](gpu::GPUFuncOp f) { hasSIMT |= f.isKernel(); });
    if (!hasSIMT && !lowerToSIMT())
      return 1;
    if (!emu::findSIMTKernel(module, simtKernel, why)) {
      diag << "error: " << why << "\n";
      return 2;
    }
    if (!collectSIMTParams())
      return 2;
  } else {
    if (!interp::findKernel(module, kernel, gridFn, why)) {
      diag << "error: " << why << "\n";
      return 2;
    }
    if (!collectParams())
      return 2;
  }

  // Match --arg names to parameters.
  for (const auto &[name, value] : req.args) {
    auto it = byName.find(name);
    if (it == byName.end()) {
      error("unknown argument '" + name + "' (the kernel's parameters are: " +
            paramList() + ")");
      continue;
    }
    Param &p = params[it->second];
    if (p.given) {
      error("argument '" + name + "' is given twice");
      continue;
    }
    p.given = true;
    p.text = value;
  }
  std::string missing;
  for (const Param &p : params)
    if (!p.given)
      missing += (missing.empty() ? "" : ", ") + p.name;
  if (!missing.empty())
    error("missing argument(s) for kernel parameter(s): " + missing +
          " (pass each with --arg NAME=FILE.npy|NUMBER)");

  // Load and check the given arguments in parameter order.
  for (Param &p : params) {
    if (!p.given)
      continue;
    if (p.tensor)
      bindTensor(p);
    else
      bindScalar(p);
  }

  // Outputs.
  llvm::StringMap<bool> outSeen;
  for (const auto &[name, file] : req.outs) {
    auto it = byName.find(name);
    if (it == byName.end()) {
      error("--out names unknown parameter '" + name +
            "' (the kernel's parameters are: " + paramList() + ")");
      continue;
    }
    const Param &p = params[it->second];
    if (!p.tensor) {
      error("--out names scalar parameter '" + name +
            "'; only tensor parameters can be written");
      continue;
    }
    if (!p.given) {
      error("--out names parameter '" + name +
            "', which has no --arg (its shape is unknown)");
      continue;
    }
    if (outSeen.count(name)) {
      error("--out names parameter '" + name + "' twice");
      continue;
    }
    outSeen[name] = true;
  }
  if (numErrors)
    return 1;

  if (cuda)
    return runCuda();
  if (emulate) {
    // The grid function sees tensors through their shapes only.
    std::vector<std::unique_ptr<interp::GlobalBuffer>> shapes;
    std::vector<interp::RtValue> gridArgs;
    for (Param &p : params) {
      if (!p.tensor) {
        gridArgs.push_back(interp::RtValue::scalar(p.elem, p.scalar));
        continue;
      }
      auto b = std::make_unique<interp::GlobalBuffer>();
      b->elem = p.elem;
      b->shape = p.array.shape;
      gridArgs.push_back(interp::RtValue::globalRef(b.get()));
      shapes.push_back(std::move(b));
    }
    return runEmulator(gridArgs);
  }

  // Build the runtime arguments.
  std::vector<std::unique_ptr<interp::GlobalBuffer>> buffers;
  std::vector<interp::RtValue> args;
  std::vector<interp::GlobalBuffer *> bufferOf(params.size(), nullptr);
  for (Param &p : params) {
    if (!p.tensor) {
      args.push_back(interp::RtValue::scalar(p.elem, p.scalar));
      continue;
    }
    auto buf = std::make_unique<interp::GlobalBuffer>();
    buf->elem = p.elem;
    buf->shape = p.array.shape;
    size_t n = static_cast<size_t>(p.array.numElements());
    buf->data.resize(n);
    for (size_t i = 0; i < n; ++i)
      buf->data[i] = p.array.get(i);
    p.array.data.clear();
    p.array.data.shrink_to_fit();
    bufferOf[p.index] = buf.get();
    args.push_back(interp::RtValue::globalRef(buf.get()));
    buffers.push_back(std::move(buf));
  }

  auto report = [&](const interp::InterpError &e) {
    diag << "error: " << e.message << "\n";
    return e.kind == interp::ErrorKind::Runtime ? 1 : 2;
  };
  std::array<int64_t, 3> grid;
  interp::InterpError ierr;
  if (!interp::evaluateGrid(gridFn, args, grid, ierr))
    return report(ierr);
  if (!interp::runAllPrograms(kernel, args, grid, ierr))
    return report(ierr);

  // Write outputs.
  int rc = 0;
  for (const auto &[name, file] : req.outs) {
    const Param &p = params[byName[name]];
    interp::GlobalBuffer *buf = bufferOf[p.index];
    npy::Array out(*npyDTypeFor(p.elem), buf->shape);
    for (size_t i = 0; i < buf->data.size(); ++i)
      out.set(i, buf->data[i]);
    if (!npy::writeFile(file, out, why)) {
      diag << "error: cannot write output '" << name << "' to '" << file
           << "': " << why << "\n";
      rc = 1;
    }
  }
  return rc;
}

} // namespace

int runKernel(ModuleOp module, const RunRequest &request,
              llvm::raw_ostream &diag) {
  Runner runner(module, request, diag);
  int rc = runner.run();
  diag.flush();
  return rc;
}

std::string addRunBindings(RunRequest &request,
                           const std::vector<std::string> &args,
                           const std::vector<std::string> &outs) {
  auto add = [](const std::string &option, const char *flag, const char *form,
                std::vector<std::pair<std::string, std::string>> &into) {
    size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0)
      return std::string(flag) + " expects " + form + ", got '" + option + "'";
    into.emplace_back(option.substr(0, eq), option.substr(eq + 1));
    return std::string();
  };
  for (const std::string &a : args)
    if (std::string error =
            add(a, "--arg", "NAME=FILE.npy or NAME=NUMBER", request.args);
        !error.empty())
      return error;
  for (const std::string &o : outs)
    if (std::string error = add(o, "--out", "NAME=FILE.npy", request.outs);
        !error.empty())
      return error;
  return {};
}

int runKernel(ModuleOp module, const RunRequest &request) {
  return runKernel(module, request, llvm::errs());
}

} // namespace flash

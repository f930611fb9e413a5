//===- Run.cpp - Kernel.run: `flashc run` on arrays in memory -------------===//
//
// The arrays come from Python as (name, dtype, shape, bytes) and go to
// flash::runKernel as in-memory arguments, bound exactly as `flashc run`
// binds .npy files; the outputs come back the same way, with the emulator's
// counters. The kernel runs as `flashc run` runs it: the tile IR on interp,
// lowered once to the SIMT level for emulate and cuda, for the kernel's arch.
// Errors carry the runner's diagnostics.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "flashc/Run/Run.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <tuple>

namespace nb = nanobind;

namespace flash::python {
namespace {

using ArrayArg =
    std::tuple<std::string, std::string, std::vector<int64_t>, nb::bytes>;
using ScalarArg = std::pair<std::string, std::string>;

npy::Array toArray(const ArrayArg &arg) {
  const auto &[name, dtype, shape, bytes] = arg;
  npy::Array array(dtypeNamed(dtype), shape);
  if (bytes.size() != array.data.size())
    throw RunFailure("error: argument '" + name + "' has " +
                     std::to_string(bytes.size()) + " bytes for shape " +
                     npy::shapeToString(shape) + "\n");
  std::memcpy(array.data.data(), bytes.c_str(), bytes.size());
  return array;
}

nb::dict statsDict(const emu::Stats &stats, double seconds) {
  nb::dict d;
  d["grid"] = nb::make_tuple(stats.grid[0], stats.grid[1], stats.grid[2]);
  d["ctas"] = stats.ctas;
  d["threads_per_cta"] = stats.threadsPerCTA;
  d["shared_bytes_per_cta"] = stats.sharedBytesPerCTA;
  for (const emu::Stats::Counter &c : stats.counters())
    d[c.key] = c.value;
  d["wall_seconds"] = seconds;
  return d;
}

/// Runs a clone of the kernel on `target`; returns
/// {"outputs": {name: (dtype, shape, bytes)}, "stats": dict or None,
///  "log": the runner's notes}.
nb::dict run(const Kernel &kernel, const std::string &target,
             const std::vector<ScalarArg> &scalars,
             const std::vector<ArrayArg> &arrays,
             const std::vector<std::string> &outs, bool checkRaces) {
  const Compilation &compilation = *kernel.compilation;
  std::string arch, archNote;
  std::shared_ptr<cuda::Driver> cudaDriver;
  {
    llvm::raw_string_ostream os(archNote);
    if (chooseRunArch(target, compilation.target().arch, arch, os,
                      &cudaDriver) != 0)
      throw RunFailure(archNote);
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      target == "interp" ? kernel.clone() : kernel.lowered(Level::SIMT);
  RunRequest request;
  request.target = target;
  request.args = scalars;
  for (const ArrayArg &a : arrays)
    request.arrays.emplace_back(std::get<0>(a), toArray(a));
  for (const std::string &name : outs)
    request.outs.emplace_back(name, "");
  request.checkRaces = checkRaces;
  request.arch = arch;
  request.options = compilation.options();
  request.cudaDriver = std::move(cudaDriver);
  request.sources = &kernel.compilation->sources();
  RunResults results;
  request.results = &results;

  std::string diagText = archNote;
  int rc;
  {
    nb::gil_scoped_release release;
    llvm::raw_string_ostream os(diagText);
    rc = runKernel(*module, request, os);
  }
  if (rc != 0 && results.sanitizerFinding)
    throw SanitizerFailure(diagText);
  if (rc != 0)
    throw RunFailure(diagText);

  nb::dict outputs;
  for (const auto &[name, array] : results.outputs)
    outputs[name.c_str()] = nb::make_tuple(
        npy::dtypeName(array.dtype), nb::tuple(nb::cast(array.shape)),
        nb::bytes(array.data.data(), array.data.size()));
  nb::dict result;
  result["outputs"] = outputs;
  result["stats"] = results.emulatorStats
                        ? nb::object(statsDict(*results.emulatorStats,
                                               results.emulationSeconds))
                        : nb::none();
  result["log"] = diagText;
  return result;
}

} // namespace

npy::DType dtypeNamed(const std::string &name) {
  for (npy::DType d : {npy::DType::F16, npy::DType::BF16, npy::DType::F32,
                       npy::DType::I32, npy::DType::U16, npy::DType::Bool,
                       npy::DType::F8E4M3})
    if (name == npy::dtypeName(d))
      return d;
  throw RunFailure("error: arrays of dtype " + name +
                   " cannot be passed (supported: float16, bfloat16, float32, "
                   "int32, bool, float8_e4m3fn)\n");
}

void bindRun(nb::module_ &m) {
  m.def("run", &run, nb::arg("kernel"), nb::arg("target"), nb::arg("scalars"),
        nb::arg("arrays"), nb::arg("outs"), nb::arg("check_races"),
        "Binds and runs like `flashc run`; raises RunError or "
        "SanitizerError.");
}

} // namespace flash::python

//===- Device.cpp - zero-copy launches on arrays already on the GPU -------===//
//
// Arrays that live in device memory (torch, cupy: __cuda_array_interface__
// or __dlpack__) are passed to the kernel by their pointers, with no copy in
// or out, and the kernel is launched on the caller's stream through the
// launcher (lib/Launcher). The launcher synchronizes after the launch: the
// module it loaded is unloaded before it returns.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Launcher/Launch.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

namespace nb = nanobind;

namespace flash::python {
namespace {

/// (name, dtype as npy::dtypeName spells it, shape, device pointer).
using DeviceTensor =
    std::tuple<std::string, std::string, std::vector<int64_t>, uint64_t>;
using Scalar = std::pair<std::string, double>;

nb::dict launchOnDevice(const std::string &ptx, const std::string &sidecarJson,
                        const std::vector<DeviceTensor> &tensors,
                        const std::vector<Scalar> &scalars, uint64_t stream) {
  launcher::Sidecar sidecar;
  std::string why;
  if (!launcher::parseSidecar(sidecarJson, sidecar, why))
    throw RunFailure(
        "error: internal: the launch sidecar does not parse: " + why + "\n");
  // Dtype and shape only: the data stays where the caller has it.
  std::vector<npy::Array> shapes(tensors.size());
  std::vector<launcher::Arg> args;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto &[name, dtype, shape, pointer] = tensors[i];
    shapes[i].dtype = dtypeNamed(dtype);
    shapes[i].shape = shape;
    launcher::Arg a;
    a.name = name;
    a.tensor = &shapes[i];
    a.devicePtr = pointer;
    args.push_back(std::move(a));
  }
  for (const auto &[name, value] : scalars) {
    launcher::Arg a;
    a.name = name;
    a.scalar = value;
    args.push_back(std::move(a));
  }
  launcher::LaunchOptions options;
  options.stream = reinterpret_cast<cuda::CUstream>(stream);
  launcher::LaunchResult result;
  bool ok;
  {
    nb::gil_scoped_release release;
    std::unique_ptr<cuda::Driver> driver = cuda::Driver::open(why);
    ok = driver &&
         launcher::launch(*driver, ptx, sidecar, args, why, &result, options);
  }
  if (!ok)
    throw RunFailure("error: " + why + "\n");
  nb::dict d;
  d["grid"] = nb::make_tuple(result.grid[0], result.grid[1], result.grid[2]);
  d["threads_per_cta"] = result.block;
  d["dynamic_shared_bytes"] = result.dynamicSharedBytes;
  d["milliseconds"] = result.milliseconds;
  return d;
}

} // namespace

void bindDevice(nb::module_ &m) {
  m.def("launch_on_device", &launchOnDevice, nb::arg("ptx"), nb::arg("sidecar"),
        nb::arg("tensors"), nb::arg("scalars"), nb::arg("stream"),
        "Launches PTX on device pointers, on `stream`; raises RunError.");
}

} // namespace flash::python

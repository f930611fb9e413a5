//===- Launch.cpp - run a flashc kernel (PTX + sidecar) on a GPU ----------===//
#include "flashc/Launcher/Launch.h"

#include <chrono>

namespace flash {
namespace launcher {

namespace {

/// Frees what it holds, in reverse order, on every path.
class DeviceResources {
public:
  explicit DeviceResources(cuda::Driver &driver) : driver(driver) {}
  ~DeviceResources() {
    std::string ignored;
    for (auto it = buffers.rbegin(); it != buffers.rend(); ++it)
      driver.free(*it, ignored);
    if (module)
      driver.unloadModule(module, ignored);
  }
  cuda::Driver &driver;
  cuda::CUmodule module = nullptr;
  std::vector<cuda::CUdeviceptr> buffers;
};

/// Device buffers: every tensor is copied in (outputs keep the elements the
/// kernel does not write, as in the interpreter and the emulator). `ptrs` is
/// indexed like the sidecar's params.
bool copyIn(const Sidecar &sidecar, const Resolved &r, DeviceResources &res,
            std::vector<uint64_t> &ptrs, std::string &error) {
  ptrs.assign(sidecar.params.size(), 0);
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    if (!sidecar.params[i].tensor)
      continue;
    if (r.argOf[i]->devicePtr) {
      ptrs[i] = r.argOf[i]->devicePtr;
      continue;
    }
    const npy::Array &arr = *r.argOf[i]->tensor;
    cuda::CUdeviceptr p = 0;
    size_t bytes = arr.data.size();
    if (!res.driver.alloc(bytes ? bytes : 1, p, error))
      return false;
    res.buffers.push_back(p);
    ptrs[i] = p;
    if (bytes && !res.driver.copyToDevice(p, arr.data.data(), bytes, error))
      return false;
  }
  return true;
}

/// Warm-up launches, then timed ones; `ms` is the time per timed launch. An
/// empty grid launches nothing.
bool launchTimed(cuda::Driver &driver, cuda::CUfunction fn, const Resolved &r,
                 std::vector<void *> &params, const LaunchOptions &options,
                 double &ms, std::string &error) {
  unsigned grid[3], block[3] = {static_cast<unsigned>(r.block), 1, 1};
  bool empty = false;
  for (int k = 0; k < 3; ++k) {
    grid[k] = static_cast<unsigned>(r.grid[k]);
    empty |= grid[k] == 0;
  }
  ms = 0;
  if (empty)
    return true;
  auto shared = static_cast<unsigned>(r.dynamicSharedBytes);
  for (int w = 0; w < options.warmup; ++w)
    if (!driver.launch(fn, grid, block, shared, params.data(), error,
                       options.stream) ||
        !driver.synchronize(error))
      return false;
  auto start = std::chrono::steady_clock::now();
  for (int it = 0; it < options.iterations; ++it)
    if (!driver.launch(fn, grid, block, shared, params.data(), error,
                       options.stream))
      return false;
  if (!driver.synchronize(error))
    return false;
  auto end = std::chrono::steady_clock::now();
  ms = std::chrono::duration<double, std::milli>(end - start).count() /
       options.iterations;
  return true;
}

/// The tensors marked copyBack, from the device into their host arrays.
bool copyBack(cuda::Driver &driver, const Sidecar &sidecar, const Resolved &r,
              const std::vector<uint64_t> &ptrs, std::string &error) {
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const Arg *a = r.argOf[i];
    if (!sidecar.params[i].tensor || !a->copyBack || a->devicePtr ||
        a->tensor->data.empty())
      continue;
    if (!driver.copyToHost(a->tensor->data.data(), ptrs[i],
                           a->tensor->data.size(), error))
      return false;
  }
  return true;
}

} // namespace

bool launch(cuda::Driver &driver, const std::string &ptx,
            const Sidecar &sidecar, const std::vector<Arg> &args,
            std::string &error, LaunchResult *result,
            const LaunchOptions &options) {
  Resolved r;
  if (!resolve(sidecar, args, r, error))
    return false;
  if (options.iterations < 1 || options.warmup < 0) {
    error = "launch options: iterations must be >= 1 and warmup >= 0";
    return false;
  }
  DeviceResources res(driver);
  if (!driver.loadModule(ptx, res.module, error))
    return false;
  cuda::CUfunction fn = nullptr;
  if (!driver.getFunction(res.module, sidecar.entry, fn, error))
    return false;
  if (needsSharedOptIn(sidecar) &&
      !driver.setMaxDynamicShared(fn, static_cast<int>(r.dynamicSharedBytes),
                                  error))
    return false;
  std::vector<uint64_t> ptrs;
  std::vector<std::vector<uint8_t>> values;
  if (!copyIn(sidecar, r, res, ptrs, error) ||
      !packParams(sidecar, r, ptrs, values, error,
                  [&](const emu::TensorMap &map, uint8_t *out,
                      std::string &err) {
                    return driver.encodeTensorMap(map, out, err);
                  }))
    return false;
  std::vector<void *> params;
  for (auto &v : values)
    params.push_back(v.data());
  double ms;
  if (!launchTimed(driver, fn, r, params, options, ms, error) ||
      !copyBack(driver, sidecar, r, ptrs, error))
    return false;
  if (result) {
    result->grid = r.grid;
    result->block = r.block;
    result->dynamicSharedBytes = r.dynamicSharedBytes;
    result->milliseconds = ms;
  }
  return true;
}

} // namespace launcher
} // namespace flash

//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//

#include "flashc/Launcher/CudaDriver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace flash {
namespace cuda {

struct Driver::Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  /// Optional: drivers before CUDA 12 lack it; only TMA kernels need it.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
};

namespace {
template <typename F>
bool resolve(void *handle, const char *symbol, F &fn, std::string &missing) {
  fn = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!fn)
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return fn != nullptr;
}
} // namespace

std::string Driver::describe(const char *call, CUresult result) const {
  const char *errName = nullptr, *errString = nullptr;
  if (!api || !api->cuGetErrorName ||
      api->cuGetErrorName(result, &errName) != CUDA_SUCCESS || !errName)
    errName = nullptr;
  if (!api || !api->cuGetErrorString ||
      api->cuGetErrorString(result, &errString) != CUDA_SUCCESS)
    errString = nullptr;
  std::string s = std::string(call) + " failed: ";
  s += errName ? errName : "CUDA error " + std::to_string(result);
  if (errString && *errString)
    s += std::string(" (") + errString + ")";
  return s;
}

#define FLASH_CU_CHECK(CALL, NAME)                                             \
  do {                                                                         \
    CUresult flashResult = (CALL);                                             \
    if (flashResult != CUDA_SUCCESS) {                                         \
      error = describe(NAME, flashResult);                                     \
      return false;                                                            \
    }                                                                          \
  } while (0)

std::unique_ptr<Driver> Driver::open(std::string &error, int ordinal) {
  std::unique_ptr<Driver> d(new Driver());
  const char *env = std::getenv(kLibCudaEnv);
  d->path = env && *env ? env : "libcuda.so.1";
  dlerror();
  d->handle = dlopen(d->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!d->handle) {
    const char *why = dlerror();
    error = "no CUDA driver (" + d->path + " could not be loaded: " +
            (why ? why : "unknown reason") +
            "); --target=cuda needs a machine with an NVIDIA GPU and driver";
    return nullptr;
  }
  d->api.reset(new Api());
  Api &a = *d->api;
  std::string missing;
  void *h = d->handle;
  resolve(h, "cuGetErrorName", a.cuGetErrorName, missing);
  resolve(h, "cuGetErrorString", a.cuGetErrorString, missing);
  resolve(h, "cuInit", a.cuInit, missing);
  resolve(h, "cuDeviceGetCount", a.cuDeviceGetCount, missing);
  resolve(h, "cuDeviceGet", a.cuDeviceGet, missing);
  resolve(h, "cuDeviceGetName", a.cuDeviceGetName, missing);
  resolve(h, "cuDeviceGetAttribute", a.cuDeviceGetAttribute, missing);
  resolve(h, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain, missing);
  resolve(h, "cuDevicePrimaryCtxRelease_v2", a.cuDevicePrimaryCtxRelease,
          missing);
  resolve(h, "cuCtxSetCurrent", a.cuCtxSetCurrent, missing);
  resolve(h, "cuCtxSynchronize", a.cuCtxSynchronize, missing);
  resolve(h, "cuModuleLoadDataEx", a.cuModuleLoadDataEx, missing);
  resolve(h, "cuModuleUnload", a.cuModuleUnload, missing);
  resolve(h, "cuModuleGetFunction", a.cuModuleGetFunction, missing);
  resolve(h, "cuFuncSetAttribute", a.cuFuncSetAttribute, missing);
  resolve(h, "cuMemAlloc_v2", a.cuMemAlloc, missing);
  resolve(h, "cuMemFree_v2", a.cuMemFree, missing);
  resolve(h, "cuMemcpyHtoD_v2", a.cuMemcpyHtoD, missing);
  resolve(h, "cuMemcpyDtoH_v2", a.cuMemcpyDtoH, missing);
  resolve(h, "cuMemsetD8_v2", a.cuMemsetD8, missing);
  resolve(h, "cuLaunchKernel", a.cuLaunchKernel, missing);
  std::string optional;
  resolve(h, "cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled, optional);
  if (!missing.empty()) {
    error = "the CUDA driver " + d->path +
            " lacks entry points flashc needs (" + missing +
            "); is it too old?";
    return nullptr;
  }

  CUresult r = a.cuInit(0);
  if (r != CUDA_SUCCESS) {
    error = "no usable CUDA device: " + d->describe("cuInit", r);
    return nullptr;
  }
  int count = 0;
  r = a.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    error = "no usable CUDA device: " + d->describe("cuDeviceGetCount", r);
    return nullptr;
  }
  if (count <= ordinal) {
    error = count == 0 ? "no usable CUDA device: the driver reports 0 devices"
                       : "no CUDA device " + std::to_string(ordinal) +
                             " (the driver reports " + std::to_string(count) +
                             ")";
    return nullptr;
  }
#define OPEN_CHECK(CALL, NAME)                                                 \
  do {                                                                         \
    CUresult flashResult = (CALL);                                             \
    if (flashResult != CUDA_SUCCESS) {                                         \
      error = d->describe(NAME, flashResult);                                  \
      return nullptr;                                                          \
    }                                                                          \
  } while (0)
  OPEN_CHECK(a.cuDeviceGet(&d->device, ordinal), "cuDeviceGet");
  char buf[256] = {0};
  OPEN_CHECK(a.cuDeviceGetName(buf, sizeof buf - 1, d->device),
             "cuDeviceGetName");
  d->name = buf;
  OPEN_CHECK(a.cuDeviceGetAttribute(
                 &d->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                 d->device),
             "cuDeviceGetAttribute");
  OPEN_CHECK(a.cuDeviceGetAttribute(
                 &d->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                 d->device),
             "cuDeviceGetAttribute");
  int optin = 0;
  OPEN_CHECK(a.cuDeviceGetAttribute(
                 &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                 d->device),
             "cuDeviceGetAttribute");
  d->optinShared = optin;
  OPEN_CHECK(a.cuDevicePrimaryCtxRetain(&d->context, d->device),
             "cuDevicePrimaryCtxRetain");
  OPEN_CHECK(a.cuCtxSetCurrent(d->context), "cuCtxSetCurrent");
#undef OPEN_CHECK
  return d;
}

Driver::~Driver() {
  if (api && context) {
    api->cuCtxSetCurrent(nullptr);
    api->cuDevicePrimaryCtxRelease(device);
  }
  if (handle)
    dlclose(handle);
}

bool Driver::loadModule(const std::string &ptx, CUmodule &module,
                        std::string &error) {
  std::vector<char> log(16384, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(
                        log.size() - 1))};
  CUresult r = api->cuModuleLoadDataEx(&module, ptx.c_str(), 2, options,
                                       values);
  if (r == CUDA_SUCCESS)
    return true;
  error = describe("cuModuleLoadDataEx", r);
  std::string text(log.data());
  // One line: the JIT log's lines joined with "; ".
  std::string joined;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (!line.empty())
      joined += (joined.empty() ? "" : "; ") + line;
    start = end + 1;
  }
  if (!joined.empty())
    error += ": " + joined;
  return false;
}

bool Driver::unloadModule(CUmodule module, std::string &error) {
  FLASH_CU_CHECK(api->cuModuleUnload(module), "cuModuleUnload");
  return true;
}

bool Driver::getFunction(CUmodule module, const std::string &fnName,
                         CUfunction &fn, std::string &error) {
  CUresult r = api->cuModuleGetFunction(&fn, module, fnName.c_str());
  if (r != CUDA_SUCCESS) {
    error = describe("cuModuleGetFunction", r) + " for kernel '" + fnName +
            "'";
    return false;
  }
  return true;
}

bool Driver::setMaxDynamicShared(CUfunction fn, int bytes,
                                 std::string &error) {
  CUresult r = api->cuFuncSetAttribute(
      fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (r != CUDA_SUCCESS) {
    error = describe("cuFuncSetAttribute", r) +
            " (MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(bytes) +
            "; the device allows " + std::to_string(optinShared) + ")";
    return false;
  }
  return true;
}

bool Driver::alloc(size_t bytes, CUdeviceptr &ptr, std::string &error) {
  CUresult r = api->cuMemAlloc(&ptr, bytes);
  if (r != CUDA_SUCCESS) {
    error = describe("cuMemAlloc", r) + " (" + std::to_string(bytes) +
            " bytes)";
    return false;
  }
  return true;
}

bool Driver::free(CUdeviceptr ptr, std::string &error) {
  FLASH_CU_CHECK(api->cuMemFree(ptr), "cuMemFree");
  return true;
}

bool Driver::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes,
                          std::string &error) {
  FLASH_CU_CHECK(api->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  return true;
}

bool Driver::copyToHost(void *dst, CUdeviceptr src, size_t bytes,
                        std::string &error) {
  FLASH_CU_CHECK(api->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  return true;
}

bool Driver::memset8(CUdeviceptr dst, unsigned char value, size_t bytes,
                     std::string &error) {
  FLASH_CU_CHECK(api->cuMemsetD8(dst, value, bytes), "cuMemsetD8");
  return true;
}

bool Driver::launch(CUfunction fn, const unsigned grid[3],
                    const unsigned block[3], unsigned sharedBytes,
                    void **params, std::string &error, CUstream stream) {
  FLASH_CU_CHECK(api->cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0],
                                     block[1], block[2], sharedBytes, stream,
                                     params, nullptr),
                 "cuLaunchKernel");
  return true;
}

bool Driver::synchronize(std::string &error) {
  FLASH_CU_CHECK(api->cuCtxSynchronize(), "cuCtxSynchronize");
  return true;
}

bool Driver::encodeTensorMap(const emu::TensorMap &map, uint8_t *out,
                             std::string &error) {
  if (!api->cuTensorMapEncodeTiled) {
    error = "the CUDA driver " + path +
            " lacks cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)";
    return false;
  }
  // The enums' values are cuda.h's (CUtensorMapDataType, ...): AsyncOps.h
  // declares them in the same order. L2 promotion: 128 bytes.
  uint64_t dims[emu::kTmaMaxRank], strides[emu::kTmaMaxRank - 1];
  uint32_t box[emu::kTmaMaxRank], elementStrides[emu::kTmaMaxRank];
  for (int d = 0; d < map.rank; ++d) {
    dims[d] = map.globalDim[d];
    box[d] = map.boxDim[d];
    elementStrides[d] = map.elementStrides[d];
    if (d > 0)
      strides[d - 1] = map.globalStrides[d - 1];
  }
  alignas(64) uint8_t encoded[emu::kTensorMapBytes];
  FLASH_CU_CHECK(
      api->cuTensorMapEncodeTiled(
          encoded, int(map.type), uint32_t(map.rank),
          reinterpret_cast<void *>(map.globalAddress), dims, strides, box,
          elementStrides, int(map.interleave), int(map.swizzle),
          /*CU_TENSOR_MAP_L2_PROMOTION_L2_128B*/ 2, int(map.oobFill)),
      "cuTensorMapEncodeTiled");
  std::copy(encoded, encoded + emu::kTensorMapBytes, out);
  return true;
}

#undef FLASH_CU_CHECK

} // namespace cuda
} // namespace flash

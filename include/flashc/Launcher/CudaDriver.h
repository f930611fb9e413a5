//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// flashc links no CUDA library: `CudaDriver::open` dlopen()s libcuda.so.1
// (or $FLASHC_LIBCUDA, for tests) and resolves the few driver entry points
// the launcher needs with dlsym(). A machine without a GPU or driver gets one
// clear error line instead of a loader failure.
//
// ABI facts relied on (instead of including cuda.h; they are stable across
// CUDA 11-13 on 64-bit Linux):
//   CUresult    `enum cudaError_enum` = int; 0 is CUDA_SUCCESS
//   CUdevice    int
//   CUcontext, CUmodule, CUfunction, CUstream   opaque pointers
//   CUdeviceptr unsigned long long (the *_v2 memory entry points)
//   CUjit_option int: CU_JIT_ERROR_LOG_BUFFER = 5,
//               CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 (the size travels in
//               the void* option value; the driver writes back the used size)
//   CUdevice_attribute COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76,
//               MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
//   CUfunction_attribute MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
//   cuTensorMapEncodeTiled (CUDA 12+, optional): CUtensorMap is 128 bytes,
//               64-byte aligned; its enums as in AsyncOps.h
//   Versioned symbols: cuMemAlloc_v2, cuMemFree_v2, cuMemcpyHtoD_v2,
//   cuMemcpyDtoH_v2, cuMemsetD8_v2, cuDevicePrimaryCtxRelease_v2 (the
//   unversioned names are the legacy 32-bit-pointer ABI).
// The context is the device's primary context (cuDevicePrimaryCtxRetain +
// cuCtxSetCurrent), which avoids cuCtxCreate's signature change in CUDA 13.
//
// Every call is checked; a failure is one line:
//   cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation
//   failed): <JIT error log>
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_LAUNCHER_CUDADRIVER_H
#define FLASH_LIB_LAUNCHER_CUDADRIVER_H

#include "flashc/Emulator/AsyncOps.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace flash {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

/// The environment variable that overrides the driver library's path.
constexpr const char *kLibCudaEnv = "FLASHC_LIBCUDA";

/// A loaded driver with a current context on one device. Not copyable; the
/// destructor releases the context and unloads the library.
class Driver {
public:
  /// Loads the driver, initializes it and makes device `ordinal`'s primary
  /// context current. On failure returns null and sets `error` (one line, no
  /// "error: " prefix).
  static std::unique_ptr<Driver> open(std::string &error, int ordinal = 0);
  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  const std::string &libraryPath() const { return path; }
  const std::string &deviceName() const { return name; }
  int ccMajor() const { return major; }
  int ccMinor() const { return minor; }
  /// Opt-in shared memory per block (0 when the driver does not say).
  int64_t maxSharedPerBlockOptin() const { return optinShared; }

  // Thin checked wrappers: false + `error` on failure.
  bool loadModule(const std::string &ptx, CUmodule &module,
                  std::string &error);
  bool unloadModule(CUmodule module, std::string &error);
  bool getFunction(CUmodule module, const std::string &name, CUfunction &fn,
                   std::string &error);
  bool setMaxDynamicShared(CUfunction fn, int bytes, std::string &error);
  bool alloc(size_t bytes, CUdeviceptr &ptr, std::string &error);
  bool free(CUdeviceptr ptr, std::string &error);
  bool copyToDevice(CUdeviceptr dst, const void *src, size_t bytes,
                    std::string &error);
  bool copyToHost(void *dst, CUdeviceptr src, size_t bytes,
                  std::string &error);
  bool memset8(CUdeviceptr dst, unsigned char value, size_t bytes,
               std::string &error);
  /// On `stream` (null: the legacy default stream).
  bool launch(CUfunction fn, const unsigned grid[3], const unsigned block[3],
              unsigned sharedBytes, void **params, std::string &error,
              CUstream stream = nullptr);
  bool synchronize(std::string &error);
  /// cuTensorMapEncodeTiled of a validated map into `out` (128 bytes).
  bool encodeTensorMap(const emu::TensorMap &map, uint8_t *out,
                       std::string &error);

  /// "NAME failed: CUDA_ERROR_X (description)".
  std::string describe(const char *call, CUresult result) const;

  struct Api; // the resolved entry points (CudaDriver.cpp)

private:
  Driver() = default;
  void *handle = nullptr;
  std::unique_ptr<Api> api;
  std::string path, name;
  int major = 0, minor = 0;
  int64_t optinShared = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

} // namespace cuda
} // namespace flash

#endif // FLASH_LIB_LAUNCHER_CUDADRIVER_H

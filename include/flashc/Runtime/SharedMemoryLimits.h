//===- SharedMemoryLimits.h - the 48 KiB shared-memory rule -----*- C++ -*-===//
//
// One statement of the CUDA rule that flashc's back end (which writes the
// sidecar's shared_memory.opt_in) and the launcher (which acts on it) share.
// No MLIR, so the launcher can build alone on a GPU machine.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_RUNTIME_SHAREDMEMORYLIMITS_H
#define FLASH_LIB_RUNTIME_SHAREDMEMORYLIMITS_H

#include <cstdint>

namespace flash {

/// Shared memory a CTA may use (static and dynamic together) without raising
/// the kernel's dynamic shared-memory limit; static shared memory never goes
/// above it.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Whether the launcher must raise the kernel's dynamic shared-memory limit
/// (cudaFuncAttributeMaxDynamicSharedMemorySize = dynamic bytes) before
/// launching: static + dynamic above 48 KiB.
constexpr bool needsSharedOptIn(int64_t staticBytes, int64_t dynamicBytes) {
  return staticBytes + dynamicBytes > kMaxStaticSharedBytes;
}

} // namespace flash

#endif // FLASH_LIB_RUNTIME_SHAREDMEMORYLIMITS_H

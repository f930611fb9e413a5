//===- Arch.h - the GPU architectures flashc compiles for -------*- C++ -*-===//
//
// One table of the supported SM architectures and their limits, read by the
// backend (arch checks, PTX version, shared memory per CTA), the driver's
// option help and the launch path. No MLIR, so the launcher can use it too.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_RUNTIME_ARCH_H
#define FLASHC_RUNTIME_ARCH_H

#include <cstdint>
#include <string>
#include <string_view>

namespace flash {

struct ArchInfo {
  std::string_view name; // "sm_80"
  int minPTX;            // lowest PTX ISA version (x10) that knows the arch
  int64_t maxShared;     // static + dynamic shared memory per CTA, bytes
};

/// The largest grid per axis (x, y, z) of every supported arch (CUDA C
/// Programming Guide, "Technical Specifications per Compute Capability"):
/// a launch beyond them fails on a GPU, so every target refuses it.
inline constexpr int64_t kMaxGridDims[3] = {2147483647, 65535, 65535};

/// CUDA C Programming Guide, "Technical Specifications per Compute
/// Capability".
inline constexpr ArchInfo kSupportedArchs[] = {
    {"sm_80", 70, 163 * 1024},
    {"sm_86", 71, 99 * 1024},
    {"sm_89", 78, 99 * 1024},
    {"sm_90", 78, 227 * 1024},
};

/// The entry for `name`, or null when flashc does not support it.
inline const ArchInfo *findArch(std::string_view name) {
  for (const ArchInfo &info : kSupportedArchs)
    if (info.name == name)
      return &info;
  return nullptr;
}

/// The supported names joined by ", " with `lastSeparator` before the last:
/// archList(" or ") == "sm_80, sm_86, sm_89 or sm_90".
inline std::string archList(std::string_view lastSeparator = ", ") {
  std::string text;
  constexpr size_t n = std::size(kSupportedArchs);
  for (size_t i = 0; i < n; ++i) {
    if (i)
      text += i + 1 == n ? lastSeparator : std::string_view(", ");
    text += kSupportedArchs[i].name;
  }
  return text;
}

} // namespace flash

#endif // FLASHC_RUNTIME_ARCH_H

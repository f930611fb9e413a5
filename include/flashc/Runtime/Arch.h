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
  /// An arch-specific target ("sm_90a"): its PTX runs only on devices of
  /// exactly its SM version, and it alone may use the instructions that need
  /// the suffix (wgmma.mma_async on sm_90a: MMAs lower to warpgroup MMAs).
  bool archSpecific = false;
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
    {"sm_90a", 80, 227 * 1024, /*archSpecific=*/true},
};

/// The arch flashc compiles for without --arch; also the one `flashc run`
/// models on the emulator and the interpreter (their launch limits, and the
/// ARCH a kernel sees).
inline constexpr std::string_view kDefaultArch = "sm_80";

/// The SM version in an arch name: 80 for "sm_80", 90 for "sm_90" and
/// "sm_90a"; 0 when `name` is not "sm_", digits and an optional "a". Kernels
/// see it as the predefined constant ARCH (docs/language.md).
constexpr int archNumber(std::string_view name) {
  if (!name.empty() && name.back() == 'a')
    name.remove_suffix(1);
  if (name.size() <= 3 || name.substr(0, 3) != "sm_" || name.size() > 6)
    return 0;
  int number = 0;
  for (char c : name.substr(3)) {
    if (c < '0' || c > '9')
      return 0;
    number = number * 10 + (c - '0');
  }
  return number;
}

/// The entry for `name`, or null when flashc does not support it.
inline const ArchInfo *findArch(std::string_view name) {
  for (const ArchInfo &info : kSupportedArchs)
    if (info.name == name)
      return &info;
  return nullptr;
}

/// Whether MMAs compiled for `name` lower to warpgroup MMAs (wgmma): sm_90a.
inline bool archHasWgmma(std::string_view name) {
  const ArchInfo *info = findArch(name);
  return info && info->archSpecific && archNumber(name) == 90;
}

/// The newest supported arch that a device of compute capability `cc`
/// (major * 10 + minor) runs, or null when it is older than all of them:
/// an arch-specific one only on its own SM version (an H100, cc 90, gets
/// sm_90a; a later GPU the portable sm_90).
inline const ArchInfo *newestArchFor(int cc) {
  const ArchInfo *best = nullptr;
  for (const ArchInfo &info : kSupportedArchs)
    if (info.archSpecific ? archNumber(info.name) == cc
                          : archNumber(info.name) <= cc)
      best = &info;
  return best;
}

/// The supported names joined by ", " with `lastSeparator` before the last:
/// archList(" or ") == "sm_80, sm_86, sm_89, sm_90 or sm_90a".
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

/// The error for an arch flashc does not support, as every tool words it:
/// "unsupported arch 'sm_70': expected one of sm_80, ...".
inline std::string unsupportedArchMessage(std::string_view name) {
  return "unsupported arch '" + std::string(name) + "': expected one of " +
         archList();
}

} // namespace flash

#endif // FLASHC_RUNTIME_ARCH_H

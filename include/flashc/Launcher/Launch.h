//===- Launch.h - run a flashc kernel (PTX + sidecar) on a GPU --*- C++ -*-===//
//
// The CUDA launcher. Input: the PTX text, the launch sidecar JSON that
// `flashc -o K.ptx` writes next to it (lib/Target/Sidecar.h documents it),
// and host arguments (tensors as npy::Array, scalars as numbers). It
//   1. parses the sidecar (parseSidecar),
//   2. checks each tensor's dtype (bf16: `<V2`, or its bits as `<u2`) and
//      shape against the param's dims (static sizes equal, one value per dim
//      symbol) and evaluates the grid
//      expressions (flashc/Runtime/GridExpr.h) over the dim symbols and the
//      integer scalars (resolve),
//   3. allocates device buffers, copies the tensors in, loads the PTX, packs
//      the kernel parameters exactly as the sidecar's `abi` says (a tensor is
//      its device pointer then one i32 per dim; a scalar is its value),
//      raises the dynamic shared-memory limit when above 48 KiB, launches,
//      synchronizes and copies the tensors marked `copyBack` out (launch).
// No MLIR or LLVM dependency: C++17, libdl and lib/Runtime (Npy, GridExpr).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_LAUNCHER_LAUNCH_H
#define FLASH_LIB_LAUNCHER_LAUNCH_H

#include "flashc/Emulator/AsyncOps.h"
#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Runtime/GridExpr.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Runtime/SharedMemoryLimits.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace flash {
namespace launcher {

/// One entry of the sidecar's "params".
struct SidecarParam {
  std::string name;
  bool tensor = false;
  std::string dtype;             ///< "f16", "f32", "i32", ...
  std::vector<std::string> dims; ///< tensors: a symbol or a decimal size
  std::vector<std::string> abi;  ///< "ptr", "i32", "f32", ...
};

struct Sidecar {
  std::string entry, arch, ptxVersion;
  std::vector<SidecarParam> params;
  /// Passed after the params, each a 128-byte CUtensorMap the launcher
  /// builds with cuTensorMapEncodeTiled from its tensor's device pointer
  /// and shape.
  std::vector<emu::TensorMapSpec> tensorMaps;
  std::array<std::string, 3> grid;
  int64_t threadsPerCTA = 0;
  int64_t staticSharedBytes = 0, dynamicSharedBytes = 0;
};

/// Whether the launcher must raise the kernel's dynamic shared-memory limit
/// before launching it (the sidecar's shared_memory.opt_in says the same).
inline bool needsSharedOptIn(const Sidecar &sidecar) {
  return flash::needsSharedOptIn(sidecar.staticSharedBytes,
                                 sidecar.dynamicSharedBytes);
}

/// Parses the sidecar JSON; `error` says what is missing or malformed
/// (including a shared_memory.opt_in that disagrees with the sizes).
bool parseSidecar(const std::string &json, Sidecar &out, std::string &error);

/// A host argument, matched to the sidecar's params by name.
struct Arg {
  std::string name;
  npy::Array *tensor = nullptr; ///< tensors: the host data (not owned)
  double scalar = 0;            ///< scalars
  bool copyBack = false;        ///< tensors: copy the device data back
  /// Tensors already in device memory (zero-copy callers such as the Python
  /// module): the pointer; `tensor` then gives only dtype and shape (no
  /// data), and nothing is copied in or back.
  uint64_t devicePtr = 0;
};

struct Resolved {
  std::vector<const Arg *> argOf; ///< per sidecar param
  grid::Symbols symbols; ///< dim symbols and integer scalars
  std::array<int64_t, 3> grid{{1, 1, 1}};
  int64_t block = 0, dynamicSharedBytes = 0;
};

/// Matches args to params, checks dtypes and shapes, evaluates the grid. A
/// uint16 array given for a bf16 param (bf16 as raw bits) is retagged bf16.
bool resolve(const Sidecar &sidecar, const std::vector<Arg> &args,
             Resolved &out, std::string &error);

/// Encodes a validated tensor map into the 128 bytes a kernel receives
/// (Driver::encodeTensorMap on a GPU); false with `error` on failure.
using TensorMapEncoder = std::function<bool(
    const emu::TensorMap &, uint8_t *out, std::string &error)>;

/// The kernel parameter values in abi order: tensor t's pointer is
/// devicePtrs[t] (indexed like sidecar.params; unused for scalars), then
/// the tensor maps, built over those pointers and the tensors' shapes and
/// encoded by `encode`. Each entry is the bytes of one PTX parameter.
bool packParams(const Sidecar &sidecar, const Resolved &resolved,
                const std::vector<uint64_t> &devicePtrs,
                std::vector<std::vector<uint8_t>> &values, std::string &error,
                const TensorMapEncoder &encode = nullptr);

struct LaunchOptions {
  /// Launches before timing (benchmarks); 0 for a plain run.
  int warmup = 0;
  /// Timed launches (>= 1); the outputs come from the last one. Every
  /// tensor is copied in once, before the first launch.
  int iterations = 1;
  /// The stream the kernel is launched on (the caller's, for zero-copy
  /// tensors); null: the legacy default stream.
  cuda::CUstream stream = nullptr;
};

struct LaunchResult {
  std::array<int64_t, 3> grid{{0, 0, 0}};
  int64_t block = 0, dynamicSharedBytes = 0;
  /// Host wall time per launch (launch + synchronize), milliseconds, averaged
  /// over `iterations`.
  double milliseconds = 0;
};

/// resolve + device buffers + module load + launch + copy back. Errors are
/// one line (no "error: " prefix); everything allocated is freed either way.
bool launch(cuda::Driver &driver, const std::string &ptx,
            const Sidecar &sidecar, const std::vector<Arg> &args,
            std::string &error, LaunchResult *result = nullptr,
            const LaunchOptions &options = {});

} // namespace launcher
} // namespace flash

#endif // FLASH_LIB_LAUNCHER_LAUNCH_H

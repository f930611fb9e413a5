//===- CompileOptions.h - the switches of the compile pipeline --*- C++ -*-===//
//
// flash::CompileOptions holds one bool per row of CompileOptions.def;
// kCompileOptions lists the rows, from which the driver derives flashc's
// flags and the Python keyword arguments. Header only, no LLVM: every stage
// (pipelines, PTX emitter, runner, Python module) can include it.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_SUPPORT_COMPILEOPTIONS_H
#define FLASHC_SUPPORT_COMPILEOPTIONS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace flash {

struct CompileOptions {
#define FLASHC_OPTION(field, flag, init, help) bool field = init;
#include "flashc/Support/CompileOptions.def"

  /// LLVM's loop strength reduction in the NVPTX back end: unset, it runs
  /// except in register-bound kernels (lib/Target/PTX.cpp says why); set, it
  /// runs or not everywhere. flashc sets it from LLVM's own --disable-lsr
  /// when that is given.
  std::optional<bool> loopStrengthReduction;

  /// With `persistent`: the CTAs to launch at most; 0 takes the arch's SMs
  /// times the CTAs one SM holds (tile-persistent). flashc's
  /// --persistent-ctas, Python's persistent_ctas.
  int64_t persistentCtas = 0;
};

/// One row of CompileOptions.def.
struct CompileOptionInfo {
  std::string_view flag; ///< "lean-masks"; Python: "lean_masks"
  bool CompileOptions::*field;
  bool init;
  std::string_view help;
};

inline constexpr CompileOptionInfo kCompileOptions[] = {
#define FLASHC_OPTION(field, flag, init, help)                                 \
  {flag, &CompileOptions::field, init, help},
#include "flashc/Support/CompileOptions.def"
};

} // namespace flash

#endif // FLASHC_SUPPORT_COMPILEOPTIONS_H

//===- Diagnostics.h - Runtime error messages -------------------*- C++ -*-===//
//
// Every runtime error is one line, "<op name>: <what> [CTA (x, y, z) of
// kernel 'k']", at the op's location: the executor, memory and warp handlers
// supply <what>, the ErrorReporter the rest.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_DIAGNOSTICS_H
#define FLASH_LIB_EMULATOR_DIAGNOSTICS_H

#include "Program.h"

#include <array>
#include <string>

namespace flash::emu {

/// "thread t (warp w, lane l)".
std::string threadName(int64_t t);
/// "0x1f", "-0x4".
std::string hex(int64_t v);
/// "file:line:col" of an instruction's op ("?" without one).
std::string locOf(const Instr &I);
/// "op at file:line:col".
std::string where(const Instr &I);

/// Formats a launch's runtime error into its Error.
class ErrorReporter {
public:
  ErrorReporter(const std::string &kernelName, Error &error)
      : kernelName(kernelName), error(error) {}
  /// Reports `what` at instruction `I` in the current CTA; returns false.
  bool fail(const Instr &I, const std::string &what);

  std::array<int64_t, 3> cta{{0, 0, 0}}; ///< the CTA being run
  /// The error reported last (a role split joins its sides' reports).
  Error &last() { return error; }

private:
  const std::string &kernelName;
  Error &error;
};

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_DIAGNOSTICS_H

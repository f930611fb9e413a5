//===- Diagnostics.cpp - Runtime error messages ---------------------------===//

#include "Diagnostics.h"

#include <cstdio>

namespace flash::emu {

std::string threadName(int64_t t) {
  return "thread " + std::to_string(t) + " (warp " + std::to_string(t / 32) +
         ", lane " + std::to_string(t % 32) + ")";
}

std::string hex(int64_t v) {
  char buf[32];
  if (v < 0)
    snprintf(buf, sizeof buf, "-0x%llx", (unsigned long long)(-v));
  else
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

bool ErrorReporter::fail(const Instr &I, const std::string &what) {
  error.kind = Error::Kind::Runtime;
  error.message = I.op->getName().getStringRef().str() + ": " + what +
                  " [CTA (" + std::to_string(cta[0]) + ", " +
                  std::to_string(cta[1]) + ", " + std::to_string(cta[2]) +
                  ") of kernel '" + kernelName + "']";
  error.loc = I.op->getLoc();
  return false;
}

} // namespace flash::emu

//===- Diagnostics.cpp - Runtime error messages ---------------------------===//

#include "Diagnostics.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

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

std::string locOf(const Instr &I) {
  if (auto loc = I.op->getLoc()->findInstanceOf<mlir::FileLineColLoc>())
    return loc.getFilename().str() + ":" + std::to_string(loc.getLine()) +
           ":" + std::to_string(loc.getColumn());
  return "?";
}

std::string where(const Instr &I) {
  return I.op->getName().getStringRef().str() + " at " + locOf(I);
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

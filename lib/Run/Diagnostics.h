//===- Diagnostics.h - the one-line messages of `flashc run` ----*- C++ -*-===//
//
// Every part of the runner reports through this: "error: ..." and "note: ..."
// lines on the caller's stream, errors counted so that argument binding can
// report every bad argument before giving up.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_RUN_DIAGNOSTICS_H
#define FLASH_LIB_RUN_DIAGNOSTICS_H

#include "flashc/Run/Run.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace flash::run {

class Diagnostics {
public:
  explicit Diagnostics(llvm::raw_ostream &os) : stream(os) {}

  void error(const std::string &message) {
    stream << "error: " << message << "\n";
    ++errors;
  }
  void note(const std::string &message) {
    stream << "note: " << message << "\n";
  }
  unsigned numErrors() const { return errors; }
  /// For messages composed in place; they are not counted.
  llvm::raw_ostream &os() { return stream; }

private:
  llvm::raw_ostream &stream;
  unsigned errors = 0;
};

/// Where --stats output goes.
inline llvm::raw_ostream &statsStream(const RunRequest &request) {
  return request.statsOut ? *request.statsOut : llvm::outs();
}

} // namespace flash::run

#endif // FLASH_LIB_RUN_DIAGNOSTICS_H

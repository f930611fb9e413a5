//===- Diagnostics.h - the messages of `flashc run` -------------*- C++ -*-===//
//
// Every part of the runner reports through this. Problems with the command
// line, the arguments or the machine are one line, "error: ..." or
// "note: ...". Problems at a place in the kernel (a pass or PTX emission
// that rejects it, a runtime error of the interpreter or the emulator) are
// MLIR diagnostics at that location, printed clang-style with the source
// line and a caret (flashc/Support/SourceDiagnostics.h), like the compile
// path's. Errors of both kinds are counted, so that argument binding can
// report every bad argument before giving up.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_RUN_DIAGNOSTICS_H
#define FLASH_LIB_RUN_DIAGNOSTICS_H

#include "flashc/Run/Run.h"
#include "flashc/Support/SourceDiagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace flash::run {

class Diagnostics {
public:
  /// Prints to `os`, the kernel's diagnostics too while it lives.
  Diagnostics(mlir::MLIRContext *context, llvm::raw_ostream &os,
              llvm::SourceMgr *sources)
      : stream(os), located(context, os, sources) {}

  void error(const std::string &message) {
    stream << "error: " << message << "\n";
    ++errors;
  }
  /// An error at `loc` (clang-style); at no place when there is none.
  void error(std::optional<mlir::Location> loc, const std::string &message) {
    if (!loc) {
      error(message);
      return;
    }
    mlir::emitError(*loc) << message;
  }
  void note(const std::string &message) {
    stream << "note: " << message << "\n";
  }
  unsigned numErrors() const { return errors + located.numErrors(); }
  /// Errors at a place in the kernel (passes and runtime errors) so far.
  unsigned numLocatedErrors() const { return located.numErrors(); }
  /// For messages composed in place; they are not counted.
  llvm::raw_ostream &os() { return stream; }

private:
  llvm::raw_ostream &stream;
  SourceDiagnostics located;
  unsigned errors = 0;
};

/// Where --stats output goes.
inline llvm::raw_ostream &statsStream(const RunRequest &request) {
  return request.statsOut ? *request.statsOut : llvm::outs();
}

} // namespace flash::run

#endif // FLASH_LIB_RUN_DIAGNOSTICS_H

//===- SourceDiagnostics.h - clang-style located diagnostics --*- C++ -*-===//
//
// How every flashc tool prints a located problem, whoever finds it: a pass,
// PTX emission, or the interpreter or emulator at run time; the front end's
// DiagnosticPrinter prints the same form:
//
//   FILE:LINE:COL: error: MESSAGE
//   <the source line>
//          ^
//
// followed by the diagnostic's notes in the same form, and a "called from"
// note per call site of a call-site location. SourceDiagnostics is an MLIR
// diagnostic handler on a context: passes reach it with op->emitError(),
// runtime errors with mlir::emitError(loc). The files locations name come
// from the given source manager (the tool's input, even from stdin) or are
// read from disk; when a file cannot be read, the first line is printed
// alone, and a diagnostic without a file location prints as "error: MESSAGE".
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_SUPPORT_SOURCEDIAGNOSTICS_H
#define FLASH_SUPPORT_SOURCEDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace flash {

/// While alive, prints every diagnostic of `context` to `os` as above (it
/// takes precedence over handlers installed before it).
class SourceDiagnostics {
public:
  SourceDiagnostics(mlir::MLIRContext *context, llvm::raw_ostream &os,
                    llvm::SourceMgr *sources = nullptr);
  ~SourceDiagnostics();
  SourceDiagnostics(const SourceDiagnostics &) = delete;
  SourceDiagnostics &operator=(const SourceDiagnostics &) = delete;

  /// Errors printed so far.
  unsigned numErrors() const { return errors; }

private:
  llvm::SourceMgr ownSources; // when the caller has none
  mlir::SourceMgrDiagnosticHandler printer;
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID counter;
  unsigned errors = 0;
};

/// The first line only, "FILE:LINE:COL: error: MESSAGE" ("error: MESSAGE"
/// without a location): for logs and tests that have no source at hand.
std::string formatError(std::optional<mlir::Location> loc,
                        llvm::StringRef message);

} // namespace flash

#endif // FLASH_SUPPORT_SOURCEDIAGNOSTICS_H

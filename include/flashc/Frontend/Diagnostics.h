//===- Diagnostics.h - clang-style diagnostics for the tile front end -----===//
//
// Every error is printed as
//   FILE:LINE:COL: error: MESSAGE
//   <source line>
//        ^
// optionally followed by notes in the same format.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_DIAGNOSTICS_H
#define FLASH_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace flash {

class DiagnosticPrinter {
public:
  DiagnosticPrinter(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  /// Report an error at `loc` (no location when `loc` is invalid).
  void error(llvm::SMLoc loc, const llvm::Twine &message);
  /// Report an error with no source location (e.g. a bad -D option).
  void error(const llvm::Twine &message) { error(llvm::SMLoc(), message); }
  /// Attach a note to the previous error.
  void note(llvm::SMLoc loc, const llvm::Twine &message);

  unsigned getNumErrors() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }

  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }
  llvm::raw_ostream &getStream() { return os; }

private:
  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
};

} // namespace flash

#endif // FLASH_FRONTEND_DIAGNOSTICS_H

//===- Diagnostics.cpp ----------------------------------------------------===//

#include "flashc/Frontend/Diagnostics.h"

using namespace flash;

void DiagnosticPrinter::error(llvm::SMLoc loc, const llvm::Twine &message) {
  ++numErrors;
  if (!loc.isValid()) {
    os << "flashc: error: " << message << "\n";
    return;
  }
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, message,
                         /*Ranges=*/{}, /*FixIts=*/{}, /*ShowColors=*/false);
}

void DiagnosticPrinter::note(llvm::SMLoc loc, const llvm::Twine &message) {
  if (!loc.isValid()) {
    os << "flashc: note: " << message << "\n";
    return;
  }
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, message,
                         /*Ranges=*/{}, /*FixIts=*/{}, /*ShowColors=*/false);
}

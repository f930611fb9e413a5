//===- SourceDiagnostics.cpp - clang-style diagnostics at MLIR locations --===//
#include "flashc/Support/SourceDiagnostics.h"
#include "flashc/Support/SourceLocation.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;

namespace flash {

static const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

SourceDiagnostics::SourceDiagnostics(MLIRContext *context,
                                     llvm::raw_ostream &os,
                                     llvm::SourceMgr *sources)
    : printer(sources ? *sources : ownSources, context, os), context(context) {
  // Registered after the printer, so it sees each diagnostic first: it
  // counts, prints those at no file itself ("error: ...", where the printer
  // would say "<unknown>:0: error: ..."), and passes the others on.
  counter =
      context->getDiagEngine().registerHandler([this, &os](Diagnostic &d) {
        errors += d.getSeverity() == DiagnosticSeverity::Error;
        if (d.getLocation()->findInstanceOf<FileLineColLoc>())
          return failure();
        os << severityName(d.getSeverity()) << ": " << d << "\n";
        for (Diagnostic &note : d.getNotes())
          printer.emitDiagnostic(note.getLocation(), note.str(),
                                 note.getSeverity());
        return success();
      });
}

SourceDiagnostics::~SourceDiagnostics() {
  context->getDiagEngine().eraseHandler(counter);
}

std::string formatError(std::optional<Location> loc, llvm::StringRef message) {
  std::string prefix;
  if (loc && !isa<UnknownLoc>(*loc))
    prefix = formatSourceLocation(*loc) + ": ";
  return prefix + "error: " + message.str();
}

} // namespace flash

//===- TemporaryFiles.h - no temporary left behind by a signal --*- C++ -*-===//
//
// Outputs are written to a temporary beside the target and renamed over it
// once complete (flashc/Runtime/AtomicFile.h). Ctrl-C or a kill during the
// write would leave that temporary, as large as the output, behind; with
// this installed, LLVM's signal handlers (llvm::InitLLVM) remove it first.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_SUPPORT_TEMPORARYFILES_H
#define FLASHC_SUPPORT_TEMPORARYFILES_H

namespace flash {

/// Registers every temporary of writeFileAtomically for removal on SIGINT,
/// SIGTERM, SIGHUP and the crash signals, while it exists. Idempotent.
void removeTemporariesOnSignal();

} // namespace flash

#endif // FLASHC_SUPPORT_TEMPORARYFILES_H

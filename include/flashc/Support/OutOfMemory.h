//===- OutOfMemory.h - one line instead of LLVM ERROR -----------*- C++ -*-===//
//
// Sizes are checked before memory is taken (.npy headers, the emulator's
// limits, tile-check-resources), but the machine may still have less than
// the budget allows. Then the tools print one line and exit 1 (outputs are
// replaced only once complete, so none is lost) instead of LLVM's
// "LLVM ERROR: out of memory" and an abort.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_SUPPORT_OUTOFMEMORY_H
#define FLASHC_SUPPORT_OUTOFMEMORY_H

namespace flash {

/// Installs LLVM's bad-alloc handler (which InitLLVM's new-handler calls)
/// for tool `tool` ("flashc"). Call after llvm::InitLLVM.
void installOutOfMemoryHandler(const char *tool);

} // namespace flash

#endif // FLASHC_SUPPORT_OUTOFMEMORY_H

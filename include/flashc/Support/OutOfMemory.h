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

#include <string>

namespace flash {

/// Installs LLVM's bad-alloc handler (which InitLLVM's new-handler calls)
/// for tool `tool` ("flashc"). Call after llvm::InitLLVM.
void installOutOfMemoryHandler(const char *tool);

/// While one lives, the out-of-memory line names what the tool was doing
/// ("reading argument 'Q' from 'q.npy'"), as the budget's errors do.
class OutOfMemoryContext {
public:
  explicit OutOfMemoryContext(const std::string &doing);
  ~OutOfMemoryContext();
  OutOfMemoryContext(const OutOfMemoryContext &) = delete;
  OutOfMemoryContext &operator=(const OutOfMemoryContext &) = delete;

private:
  std::string previous;
};

} // namespace flash

#endif // FLASHC_SUPPORT_OUTOFMEMORY_H

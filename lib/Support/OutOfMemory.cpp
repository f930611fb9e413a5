//===- OutOfMemory.cpp - one line instead of LLVM ERROR on exhaustion -----===//
#include "flashc/Support/OutOfMemory.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstring>
#include <unistd.h>

namespace {
const char *toolName = "flashc";

/// Runs with the heap exhausted: no allocation, only write(2).
void onBadAlloc(void *, const char *, bool) {
  const char *parts[] = {toolName,
                         ": error: out of memory (the kernel or its inputs "
                         "need more than this machine has; see "
                         "--memory-limit)\n"};
  for (const char *p : parts)
    if (::write(STDERR_FILENO, p, std::strlen(p)) < 0)
      break;
  ::_exit(1);
}
} // namespace

void flash::installOutOfMemoryHandler(const char *tool) {
  toolName = tool;
  llvm::install_bad_alloc_error_handler(onBadAlloc);
}

//===- OutOfMemory.cpp - one line instead of LLVM ERROR on exhaustion -----===//
#include "flashc/Support/OutOfMemory.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cstring>
#include <unistd.h>

namespace {
const char *toolName = "flashc";
/// What OutOfMemoryContext says the tool is doing, NUL-terminated; written
/// before memory runs out, so that the handler needs none.
char doing[512];

/// Runs with the heap exhausted: no allocation, only write(2).
void onBadAlloc(void *, const char *, bool) {
  const char *parts[] = {toolName,
                         ": error: out of memory",
                         doing[0] ? " while " : "",
                         doing,
                         " (the kernel or its inputs need more than this "
                         "machine has; see --memory-limit)\n"};
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

static void setDoing(const std::string &text) {
  size_t n = std::min(text.size(), sizeof(doing) - 1);
  std::memcpy(doing, text.data(), n);
  doing[n] = '\0';
}

flash::OutOfMemoryContext::OutOfMemoryContext(const std::string &what)
    : previous(doing) {
  setDoing(what);
}

flash::OutOfMemoryContext::~OutOfMemoryContext() { setDoing(previous); }

//===- TemporaryFiles.cpp - no temporary left behind by a signal ----------===//
#include "flashc/Support/TemporaryFiles.h"

#include "flashc/Runtime/AtomicFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Signals.h"

static void registerForRemoval(const std::string &path, bool exists) {
  if (exists)
    llvm::sys::RemoveFileOnSignal(path);
  else
    llvm::sys::DontRemoveFileOnSignal(path);
}

void flash::removeTemporariesOnSignal() {
  setTemporaryFileObserver(registerForRemoval);
}

//===- VirtualFiles.h - Several source files in one test input ------------===//
//
// The fuzzer and `flashc --replay-corpus` read inputs that may hold several
// files, so that imports are exercised without touching the disk:
//
//   kernel k(...) { ... }     <- the main file, up to the first marker
//   #--- lib.tile             <- starts the file /virtual/lib.tile
//   fn f(x) { ... }
//
// An input without markers is one file, as before (a marker line is a
// comment to the lexer anyway). Imports of an input resolve in an in-memory
// file system that holds only its files.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_VIRTUALFILES_H
#define FLASH_FRONTEND_VIRTUALFILES_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <memory>

namespace flash {

struct VirtualFiles {
  /// The main file, named /virtual/main.tile.
  std::unique_ptr<llvm::MemoryBuffer> main;
  /// The other files, under /virtual/.
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fileSystem;
};

/// Splits `text` at its `#--- NAME` lines. NAME is a relative path of at
/// most 64 characters from [A-Za-z0-9_./-]; other marker lines stay
/// comments of the file they are in.
VirtualFiles splitVirtualFiles(llvm::StringRef text);

} // namespace flash

#endif // FLASH_FRONTEND_VIRTUALFILES_H

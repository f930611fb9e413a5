//===- SourceText.h - Source files as the front end reads them --*- C++ -*-===//
//
// llvm::SourceMgr counts lines by LF only, so a file saved with CR line
// endings (old Mac) would put every diagnostic on line 1, and CRLF would
// leave a CR in the printed source line. Every source buffer is therefore
// read with its line endings turned into LF first; columns do not change.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_FRONTEND_SOURCETEXT_H
#define FLASHC_FRONTEND_SOURCETEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace flash {

/// `text` with every CRLF and every lone CR as LF.
std::string withLineFeeds(llvm::StringRef text);

/// `buffer` with LF line endings, named `name` (the buffer's own name when
/// empty); `buffer` itself when it has no CR and needs no new name.
std::unique_ptr<llvm::MemoryBuffer>
withLineFeeds(std::unique_ptr<llvm::MemoryBuffer> buffer,
              llvm::StringRef name = {});

/// The main source file `path` ("-": standard input) with LF line endings.
/// Like an import, only a regular file is read: a directory, a device
/// (/dev/zero) or a pipe is refused before any byte is. On failure returns
/// null and sets `error` to the cause (without the path).
std::unique_ptr<llvm::MemoryBuffer> readSourceFile(llvm::StringRef path,
                                                   std::string &error);

} // namespace flash

#endif // FLASHC_FRONTEND_SOURCETEXT_H

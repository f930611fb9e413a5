//===- VirtualFiles.cpp ---------------------------------------------------===//

#include "flashc/Frontend/VirtualFiles.h"
#include "flashc/Frontend/SourceText.h"

#include "llvm/ADT/StringExtras.h"

using namespace flash;

static constexpr llvm::StringLiteral kMarker = "#--- ";
static constexpr llvm::StringLiteral kRoot = "/virtual/";

/// The file name of a marker line, or empty if `line` is not a marker.
static llvm::StringRef markerName(llvm::StringRef line) {
  if (!line.consume_front(kMarker))
    return {};
  llvm::StringRef name = line.rtrim("\r");
  bool plain = !name.empty() && name.size() <= 64 && name.front() != '/' &&
               llvm::all_of(name, [](char c) {
                 return llvm::isAlnum(c) || c == '_' || c == '.' ||
                        c == '/' || c == '-';
               });
  return plain ? name : llvm::StringRef();
}

VirtualFiles flash::splitVirtualFiles(llvm::StringRef rawText) {
  std::string lineFeeds = withLineFeeds(rawText);
  llvm::StringRef text = lineFeeds;
  VirtualFiles files;
  files.fileSystem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  (void)files.fileSystem->setCurrentWorkingDirectory(kRoot);
  llvm::StringRef name = "main.tile";
  size_t start = 0, pos = 0;
  auto flush = [&](size_t end) {
    llvm::StringRef body = text.slice(start, end);
    std::string path = (kRoot + name).str();
    if (!files.main)
      files.main = llvm::MemoryBuffer::getMemBufferCopy(body, path);
    else
      files.fileSystem->addFile(path, 0,
                                llvm::MemoryBuffer::getMemBufferCopy(body,
                                                                     path));
  };
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    llvm::StringRef line =
        text.slice(pos, eol == llvm::StringRef::npos ? text.size() : eol);
    if (llvm::StringRef next = markerName(line); !next.empty()) {
      flush(pos);
      name = next;
      start = eol == llvm::StringRef::npos ? text.size() : eol + 1;
    }
    if (eol == llvm::StringRef::npos)
      break;
    pos = eol + 1;
  }
  flush(text.size());
  return files;
}

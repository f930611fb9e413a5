//===- SourceText.cpp - Source files as the front end reads them ----------===//
#include "flashc/Frontend/SourceText.h"

#include "llvm/Support/FileSystem.h"

std::string flash::withLineFeeds(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
      continue;
    }
    out.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n')
      ++i;
  }
  return out;
}

std::unique_ptr<llvm::MemoryBuffer>
flash::withLineFeeds(std::unique_ptr<llvm::MemoryBuffer> buffer,
                     llvm::StringRef name) {
  llvm::StringRef text = buffer->getBuffer();
  if (!text.contains('\r') && name.empty())
    return buffer;
  std::string bufferName =
      name.empty() ? buffer->getBufferIdentifier().str() : name.str();
  return llvm::MemoryBuffer::getMemBufferCopy(withLineFeeds(text), bufferName);
}

std::unique_ptr<llvm::MemoryBuffer>
flash::readSourceFile(llvm::StringRef path, std::string &error) {
  if (path != "-") {
    llvm::sys::fs::file_status status;
    if (std::error_code ec = llvm::sys::fs::status(path, status)) {
      error = ec.message();
      return nullptr;
    }
    if (llvm::sys::fs::is_directory(status)) {
      error = "it is a directory";
      return nullptr;
    }
    if (!llvm::sys::fs::is_regular_file(status)) {
      error = "it is not a regular file (pass '-' to read standard input)";
      return nullptr;
    }
  }
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    error = buffer.getError().message();
    return nullptr;
  }
  return withLineFeeds(std::move(*buffer));
}

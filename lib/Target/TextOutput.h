//===- TextOutput.h - what flashc-emit-ptx and -sidecar write --*- C++ -*-===//
#ifndef FLASH_LIB_TARGET_TEXTOUTPUT_H
#define FLASH_LIB_TARGET_TEXTOUTPUT_H

#include "flashc/Runtime/AtomicFile.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace flash {

/// `text` to `path` ("-": stdout), replacing a file only once all of it is
/// written.
inline mlir::LogicalResult writeText(mlir::Operation *op, llvm::StringRef path,
                                     llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    return mlir::success();
  }
  std::string error;
  if (!flash::writeFileAtomically(path.str(), text.data(), text.size(), error))
    return op->emitError() << "cannot write '" << path << "': " << error;
  return mlir::success();
}

} // namespace flash

#endif // FLASH_LIB_TARGET_TEXTOUTPUT_H

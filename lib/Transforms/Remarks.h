//===- Remarks.h - optimization remarks of the loop passes ------*- C++ -*-===//
//
// With their `remarks` option (flashc -R), tile-split-masked-loops,
// tile-split-copies and tile-pipeline-copies say at each loop what they did
// to it, as MLIR remarks at the loop's location. The helpers name the places
// a remark refers to in the text.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_TRANSFORMS_REMARKS_H
#define FLASH_LIB_TRANSFORMS_REMARKS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace flash {
/// "line:col" of the first file location in `loc` (through name, call-site
/// and fused locations), "?" without one.
inline std::string lineCol(mlir::Location loc) {
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    return (llvm::Twine(file.getLine()) + ":" + llvm::Twine(file.getColumn()))
        .str();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return lineCol(name.getChildLoc());
  if (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(loc))
    return lineCol(call.getCallee());
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location sub : fused.getLocations()) {
      std::string text = lineCol(sub);
      if (text != "?")
        return text;
    }
  return "?";
}
} // namespace flash

#endif // FLASH_LIB_TRANSFORMS_REMARKS_H

//===- PersistentAttributes.h - the mark tile-persistent leaves -*- C++ -*-===//
//
// tile-persistent wraps a kernel's body in a loop over its tiles and says so
// on the kernel; the dialect verifies the mark.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_DIALECT_TILE_PERSISTENTATTRIBUTES_H
#define FLASH_DIALECT_TILE_PERSISTENTATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace flash::tile {
/// func.func attribute (string, "static" or "longest-first"): the kernel's
/// body is a loop over its tiles in that order, and its grid function
/// returns the CTAs it launches (flashc.persistent on the SIMT level).
inline constexpr llvm::StringLiteral kPersistentAttrName = "tile.persistent";
} // namespace flash::tile

#endif // FLASH_DIALECT_TILE_PERSISTENTATTRIBUTES_H

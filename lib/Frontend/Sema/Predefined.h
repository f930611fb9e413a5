//===- Predefined.h - what each predefined constant means -------*- C++ -*-===//
#ifndef FLASH_LIB_FRONTEND_SEMA_PREDEFINED_H
#define FLASH_LIB_FRONTEND_SEMA_PREDEFINED_H

#include "llvm/ADT/StringRef.h"

namespace flash {
/// What the predefined constant `name` (ARCH or WGMMA) holds, for the
/// errors that refuse redefining or assigning it.
inline const char *predefinedMeaning(llvm::StringRef name) {
  return name == "WGMMA" ? "whether MMAs lower to warpgroup MMAs"
                         : "the target's SM version";
}
} // namespace flash

#endif // FLASH_LIB_FRONTEND_SEMA_PREDEFINED_H

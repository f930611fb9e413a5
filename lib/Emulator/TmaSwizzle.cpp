//===- TmaSwizzle.cpp - The smem swizzle of TMA boxes ---------------------===//
//
// TMA boxes and wgmma operands share one swizzle function (WarpgroupLayouts.h);
// this file maps the tensor map's swizzle onto it. It stays apart from
// AsyncOps.cpp, which the standalone launcher also compiles without LLVM.
//
//===----------------------------------------------------------------------===//

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Emulator/AsyncOps.h"

namespace flash::emu {

int64_t tmaSwizzleOffset(int64_t offset, TmaSwizzle s) {
  using tile::layout::SmemSwizzle;
  static constexpr SmemSwizzle kOf[] = {SmemSwizzle::None, SmemSwizzle::B32,
                                        SmemSwizzle::B64, SmemSwizzle::B128};
  return tile::layout::swizzleByteOffset<int64_t>(offset,
                                                  kOf[static_cast<int>(s)]);
}

} // namespace flash::emu

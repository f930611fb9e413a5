//===- TensorMapSpecs.h - A kernel's tensor maps from its attribute -*- C++ -*-===//
//
// A SIMT kernel that copies with TMA lists the tensor maps it takes in its
// `flashc.tensor_maps` attribute, one dictionary per map:
//   {name = "K.tmap", tensor = "K", box = array<i64: 64, 64>,
//    swizzle = "128B", oob = "zero"}
// name: the gpu.func argument (tile.name) that receives the 128-byte map;
// tensor: the tensor parameter the map reads and writes; box: elements per
// dimension in the tensor's order (outermost first); swizzle: none, 32B, 64B
// or 128B; oob: zero or nan. The sidecar, the launcher and the emulate
// backend build the maps from it (AsyncOps.h's tensorMapFor).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_TARGET_TENSORMAPSPECS_H
#define FLASH_TARGET_TENSORMAPSPECS_H

#include "flashc/Emulator/AsyncOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace flash {

/// The specs of `kernel`'s tensor maps (none without the attribute); false
/// with `error` on a malformed entry.
inline bool collectTensorMapSpecs(mlir::Operation *kernel,
                                  std::vector<emu::TensorMapSpec> &specs,
                                  std::string &error) {
  specs.clear();
  auto list = kernel->getAttrOfType<mlir::ArrayAttr>(emu::kTensorMapsAttrName);
  if (!list)
    return true;
  for (mlir::Attribute a : list) {
    auto d = mlir::dyn_cast<mlir::DictionaryAttr>(a);
    auto name = d ? d.getAs<mlir::StringAttr>("name") : nullptr;
    auto tensor = d ? d.getAs<mlir::StringAttr>("tensor") : nullptr;
    auto box = d ? d.getAs<mlir::DenseI64ArrayAttr>("box") : nullptr;
    auto swizzle = d ? d.getAs<mlir::StringAttr>("swizzle") : nullptr;
    auto oob = d ? d.getAs<mlir::StringAttr>("oob") : nullptr;
    emu::TensorMapSpec spec;
    if (!name || !tensor || !box ||
        (swizzle && !emu::parseTmaSwizzle(swizzle.str(), spec.swizzle)) ||
        (oob && !emu::parseTmaOobFill(oob.str(), spec.oobFill))) {
      error = "malformed '" + std::string(emu::kTensorMapsAttrName) +
              "' entry #" + std::to_string(specs.size()) +
              " (needs name, tensor, box; swizzle none/32B/64B/128B, oob "
              "zero/nan)";
      return false;
    }
    spec.name = name.str();
    spec.tensor = tensor.str();
    spec.box.assign(box.asArrayRef().begin(), box.asArrayRef().end());
    specs.push_back(std::move(spec));
  }
  return true;
}

} // namespace flash

#endif // FLASH_TARGET_TENSORMAPSPECS_H

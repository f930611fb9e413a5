//===- ScalarType.cpp - The scalar type of an MLIR type -------------------===//

#include "flashc/Semantics/ScalarType.h"

#include "mlir/IR/BuiltinTypes.h"

namespace flash::sem {

std::optional<ScalarType> ScalarType::get(mlir::Type type) {
  if (type.isF16())
    return ScalarType{F16};
  if (type.isBF16())
    return ScalarType{BF16};
  if (mlir::isa<mlir::Float8E4M3FNType>(type))
    return ScalarType{F8E4M3};
  if (type.isF32())
    return ScalarType{F32};
  if (type.isF64())
    return ScalarType{F64};
  if (type.isIndex())
    return integer(64);
  if (auto it = mlir::dyn_cast<mlir::IntegerType>(type))
    if (it.getWidth() >= 1 && it.getWidth() <= 64)
      return integer(it.getWidth());
  return std::nullopt;
}

} // namespace flash::sem

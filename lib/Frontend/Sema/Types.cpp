//===- Types.cpp ----------------------------------------------------------===//

#include "Sema/Types.h"

#include "llvm/Support/raw_ostream.h"

using namespace flash;
using namespace flash::frontend;

mlir::Type frontend::elementType(mlir::Type t) {
  if (auto rt = mlir::dyn_cast<mlir::RankedTensorType>(t))
    return rt.getElementType();
  return t;
}

llvm::SmallVector<int64_t> frontend::shapeOf(mlir::Type t) {
  if (auto rt = mlir::dyn_cast<mlir::RankedTensorType>(t))
    return llvm::SmallVector<int64_t>(rt.getShape());
  return {};
}

std::string frontend::eltName(mlir::Type t) {
  t = elementType(t);
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (mlir::isa<mlir::Float8E4M3FNType>(t))
    return "f8e4m3";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(1))
    return "bool";
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::string frontend::shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string frontend::typeStr(mlir::Type t) {
  if (isTile(t))
    return eltName(t) + shapeStr(shapeOf(t));
  return eltName(t);
}

std::optional<mlir::Type> frontend::builtinTypeNamed(llvm::StringRef name,
                                                     mlir::Builder &b) {
  if (name == "f16")
    return b.getF16Type();
  if (name == "bf16")
    return b.getBF16Type();
  if (name == "f8e4m3")
    return b.getType<mlir::Float8E4M3FNType>();
  if (name == "f32" || name == "float")
    return b.getF32Type();
  if (name == "i32" || name == "int")
    return b.getI32Type();
  if (name == "bool" || name == "i1")
    return b.getI1Type();
  return std::nullopt;
}

std::optional<mlir::Type> frontend::parseTypeName(const ast::Expr &e,
                                                  mlir::Builder &b) {
  if (e.kind != ast::ExprKind::Name)
    return std::nullopt;
  return builtinTypeNamed(e.name, b);
}

bool frontend::isElementType(mlir::Type t) {
  return t && (t.isF16() || t.isBF16() || mlir::isa<mlir::Float8E4M3FNType>(t) ||
               t.isF32() || t.isInteger(32) || t.isInteger(1));
}

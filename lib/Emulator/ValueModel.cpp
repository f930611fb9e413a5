//===- ValueModel.cpp - Cell shapes of MLIR types -------------------------===//

#include "ValueModel.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace flash::emu {

std::optional<SK> scalarKind(Type t) {
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return SK::I1;
    case 8:
      return SK::I8;
    case 16:
      return SK::I16;
    case 32:
      return SK::I32;
    case 64:
      return SK::I64;
    default:
      return std::nullopt;
    }
  }
  if (isa<IndexType>(t))
    return SK::I64;
  if (t.isF16())
    return SK::F16;
  if (t.isBF16())
    return SK::BF16;
  if (isa<Float8E4M3FNType>(t))
    return SK::F8E4M3;
  if (t.isF32())
    return SK::F32;
  if (t.isF64())
    return SK::F64;
  if (auto p = dyn_cast<LLVM::LLVMPointerType>(t)) {
    // Generic pointers can only name global buffers (a tensor map
    // parameter); shared::cluster is the CTA's own window.
    if (p.getAddressSpace() == 1 || p.getAddressSpace() == 0)
      return SK::PG;
    if (p.getAddressSpace() == 3 || p.getAddressSpace() == 7)
      return SK::PS;
  }
  return std::nullopt;
}

std::optional<TypeInfo> typeInfo(Type t) {
  TypeInfo ti;
  if (auto v = dyn_cast<VectorType>(t)) {
    if (v.getRank() != 1 || v.isScalable())
      return std::nullopt;
    auto s = scalarKind(v.getElementType());
    if (!s)
      return std::nullopt;
    ti.n = v.getNumElements();
    ti.sk = *s;
    return ti;
  }
  if (auto st = dyn_cast<LLVM::LLVMStructType>(t)) {
    if (st.isOpaque() || st.getBody().empty())
      return std::nullopt;
    for (Type e : st.getBody()) {
      auto s = scalarKind(e);
      if (!s)
        return std::nullopt;
      ti.kinds.push_back(*s);
    }
    ti.n = ti.kinds.size();
    ti.sk = ti.kinds[0];
    bool uniform = llvm::all_of(ti.kinds, [&](SK k) { return k == ti.sk; });
    if (uniform)
      ti.kinds.clear();
    return ti;
  }
  auto s = scalarKind(t);
  if (!s)
    return std::nullopt;
  ti.sk = *s;
  return ti;
}

std::optional<int64_t> llvmTypeSize(Type t) {
  if (auto s = scalarKind(t))
    return byteSize(*s);
  if (auto v = dyn_cast<VectorType>(t)) {
    auto e = llvmTypeSize(v.getElementType());
    if (!e || v.getRank() != 1)
      return std::nullopt;
    return *e * v.getNumElements();
  }
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t)) {
    auto e = llvmTypeSize(a.getElementType());
    if (!e)
      return std::nullopt;
    return *e * a.getNumElements();
  }
  return std::nullopt;
}

} // namespace flash::emu

//===- Params.cpp - a kernel's parameters as `flashc run` binds them ------===//
#include "Params.h"
#include "Diagnostics.h"
#include "ParseNumber.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"

using namespace mlir;

namespace flash::run {

namespace {
/// A tensor entry's dims: decimal sizes are static, anything else a symbol.
void addSIMTDims(ArrayAttr dims, Param &p) {
  p.declared += "[";
  for (Attribute da : dims) {
    auto ds = dyn_cast<StringAttr>(da);
    std::string label = ds ? ds.getValue().str() : "?";
    long long v;
    bool overflow;
    bool isStatic = parseInteger(label, v, overflow) && !overflow;
    p.staticDims.push_back(isStatic ? v : -1);
    p.dimNames.push_back(label);
    p.declared += (p.dimNames.size() > 1 ? ", " : "") + label;
  }
  p.declared += "]";
}
} // namespace

bool ParamList::add(Param p, Diagnostics &diag) {
  auto e = interp::ElemType::get(p.elemType);
  if (!e) {
    diag.os() << "error: kernel parameter '" << p.name
              << "' has unsupported type " << p.declared << "\n";
    return false;
  }
  p.elem = *e;
  if (byName.count(p.name)) {
    diag.os() << "error: kernel declares parameter '" << p.name << "' twice\n";
    return false;
  }
  byName[p.name] = params.size();
  params.push_back(std::move(p));
  return true;
}

Param *ParamList::find(llvm::StringRef name) {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &params[it->second];
}

const Param &ParamList::get(llvm::StringRef name) const {
  return params[byName.lookup(name)];
}

std::string ParamList::names() const {
  std::string s;
  for (const Param &p : params) {
    if (!s.empty())
      s += ", ";
    s += p.name;
  }
  return s.empty() ? "(none)" : s;
}

bool collectTileParams(func::FuncOp kernel, ParamList &params,
                       Diagnostics &diag) {
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    Param p;
    p.index = i;
    Type type = kernel.getArgument(i).getType();
    auto nameAttr =
        kernel.getArgAttrOfType<StringAttr>(i, tile::kArgNameAttrName);
    if (!nameAttr) {
      diag.os() << "error: kernel argument #" << i << " has no '"
                << tile::kArgNameAttrName << "' attribute\n";
      return false;
    }
    p.name = nameAttr.getValue().str();
    p.declared = typeText(type);
    p.elemType = type;
    if (auto g = dyn_cast<tile::GlobalType>(type)) {
      p.tensor = true;
      p.elemType = g.getElementType();
      for (unsigned d = 0; d < g.getRank(); ++d) {
        bool isStatic = g.isStaticDim(d);
        p.staticDims.push_back(isStatic ? g.getShape()[d] : -1);
        p.dimNames.push_back(g.getDimLabel(d));
      }
    }
    if (!params.add(std::move(p), diag))
      return false;
  }
  return true;
}

bool collectSIMTParams(gpu::GPUFuncOp kernel, ParamList &params,
                       Diagnostics &diag) {
  auto list = kernel->getAttrOfType<ArrayAttr>(simt::kParamsAttrName);
  if (!list) {
    diag.os() << "error: SIMT kernel '" << kernel.getName()
              << "' has no 'flashc.params' attribute (its parameters are "
                 "unknown)\n";
    return false;
  }
  unsigned index = 0;
  for (Attribute a : list) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("name") : nullptr;
    auto kind = d ? d.getAs<StringAttr>("kind") : nullptr;
    auto elem = d ? d.getAs<TypeAttr>("element") : nullptr;
    if (!name || !kind || !elem) {
      diag.os() << "error: malformed 'flashc.params' entry #" << index
                << " of SIMT kernel '" << kernel.getName() << "'\n";
      return false;
    }
    Param p;
    p.index = index++;
    p.name = name.getValue().str();
    p.elemType = elem.getValue();
    p.tensor = kind.getValue() == "tensor";
    p.declared = typeText(p.elemType);
    if (p.tensor) {
      auto dims = d.getAs<ArrayAttr>("dims");
      if (!dims) {
        diag.os() << "error: 'flashc.params' entry '" << p.name
                  << "' is a tensor without dims\n";
        return false;
      }
      addSIMTDims(dims, p);
    }
    if (!params.add(std::move(p), diag))
      return false;
  }
  return true;
}

std::string typeText(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::optional<npy::DType> npyDTypeFor(interp::ElemType e) {
  switch (e.kind) {
  case interp::ElemType::F16:
    return npy::DType::F16;
  case interp::ElemType::BF16:
    return npy::DType::BF16;
  case interp::ElemType::F32:
    return npy::DType::F32;
  case interp::ElemType::F8E4M3:
    return npy::DType::F8E4M3;
  case interp::ElemType::Int:
    if (e.width == 32)
      return npy::DType::I32;
    if (e.width == 1)
      return npy::DType::Bool;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

} // namespace flash::run

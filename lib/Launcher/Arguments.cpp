//===- Arguments.cpp - host arguments checked and packed for a launch -----===//
//
// resolve: matches the host arguments to the sidecar's params, checks each
// tensor's dtype and shape (binding the dim symbols), evaluates the grid.
// packParams: the PTX parameter bytes, in the order the sidecar's abi says.
//
//===----------------------------------------------------------------------===//
#include "flashc/Launcher/Launch.h"
#include "flashc/Runtime/Arch.h"
#include "flashc/Runtime/Float16.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

namespace flash {
namespace launcher {

namespace {

bool isInteger(const std::string &s) {
  if (s.empty())
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size())
    return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

std::string shapeText(const std::vector<std::string> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

bool npyDTypeOf(const std::string &dtype, npy::DType &out) {
  if (dtype == "f16")
    out = npy::DType::F16;
  else if (dtype == "bf16")
    out = npy::DType::BF16;
  else if (dtype == "f32")
    out = npy::DType::F32;
  else if (dtype == "i32")
    out = npy::DType::I32;
  else if (dtype == "bool")
    out = npy::DType::Bool;
  else if (dtype == "f8e4m3")
    out = npy::DType::F8E4M3;
  else
    return false;
  return true;
}

const char *sidecarDType(npy::DType d) {
  switch (d) {
  case npy::DType::F16:
    return "f16";
  case npy::DType::BF16:
    return "bf16";
  case npy::DType::F32:
    return "f32";
  case npy::DType::I32:
    return "i32";
  case npy::DType::U16:
    return "uint16";
  case npy::DType::Bool:
    return "bool";
  case npy::DType::F8E4M3:
    return "f8e4m3";
  }
  return "?";
}

bool integerScalarType(const std::string &t, unsigned &bits) {
  if (t == "i1")
    bits = 1;
  else if (t == "i8")
    bits = 8;
  else if (t == "i16")
    bits = 16;
  else if (t == "i32")
    bits = 32;
  else if (t == "i64")
    bits = 64;
  else
    return false;
  return true;
}

template <typename T> std::vector<uint8_t> bytesOf(T v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

/// Matches each argument to its param by name: none unknown, none twice.
bool matchArgs(const Sidecar &sidecar, const std::vector<Arg> &args,
               Resolved &r, std::string &error) {
  r.argOf.assign(sidecar.params.size(), nullptr);
  for (const Arg &a : args) {
    size_t i = 0;
    while (i < sidecar.params.size() && sidecar.params[i].name != a.name)
      ++i;
    if (i == sidecar.params.size()) {
      error = "argument '" + a.name + "' matches no kernel parameter";
      return false;
    }
    if (r.argOf[i]) {
      error = "argument '" + a.name + "' is given twice";
      return false;
    }
    r.argOf[i] = &a;
  }
  return true;
}

/// Checks tensors and binds dim symbols; integer scalars become symbols too.
class ArgChecker {
public:
  ArgChecker(Resolved &r, std::string &error) : r(r), error(error) {}

  bool scalar(const SidecarParam &p, const Arg &a);
  bool tensor(const SidecarParam &p, const Arg &a);

private:
  /// `hasData`: the host data comes with it (not a device pointer).
  bool array(const SidecarParam &p, npy::Array &arr, bool hasData);
  bool dim(const SidecarParam &p, size_t d, int64_t size);

  Resolved &r;
  std::string &error;
  std::map<std::string, std::string> boundBy;
};

bool ArgChecker::scalar(const SidecarParam &p, const Arg &a) {
  unsigned bits;
  if (!integerScalarType(p.dtype, bits))
    return true;
  double v = a.scalar;
  if (v != std::floor(v) || std::fabs(v) > 9.2e18) {
    error = "argument '" + p.name + "' is " + std::to_string(v) +
            ", not an integer (" + p.dtype + ")";
    return false;
  }
  r.symbols[p.name] = static_cast<int64_t>(v);
  return true;
}

/// A uint16 array bound to a bf16 param becomes bf16 (the same bits), so
/// that it is copied back and written as bf16.
bool ArgChecker::array(const SidecarParam &p, npy::Array &arr, bool hasData) {
  npy::DType want;
  if (!npyDTypeOf(p.dtype, want)) {
    error = "parameter '" + p.name + "' has element type " + p.dtype +
            ", which the launcher cannot provide (supported: f16, bf16, f32, "
            "i32, bool)";
    return false;
  }
  if (!npy::viewAs(arr, want)) {
    error = "argument '" + p.name + "' is " + sidecarDType(arr.dtype) +
            " but the kernel declares " + p.dtype;
    return false;
  }
  if (arr.shape.size() != p.dims.size()) {
    error = "argument '" + p.name + "' has rank " +
            std::to_string(arr.shape.size()) + " (shape " +
            npy::shapeToString(arr.shape) + ") but the kernel declares " +
            p.dtype + shapeText(p.dims);
    return false;
  }
  if (hasData && arr.data.size() != static_cast<size_t>(arr.numElements()) *
                                        npy::elementSize(arr.dtype)) {
    error = "argument '" + p.name + "' holds " +
            std::to_string(arr.data.size()) + " bytes, not its shape's";
    return false;
  }
  return true;
}

bool ArgChecker::dim(const SidecarParam &p, size_t d, int64_t size) {
  if (size < 0 || size > std::numeric_limits<int32_t>::max()) {
    error = "dim " + std::to_string(d) + " of argument '" + p.name + "' is " +
            std::to_string(size) + ", which does not fit in i32";
    return false;
  }
  const std::string &dim = p.dims[d];
  if (isInteger(dim)) {
    if (std::to_string(size) == dim)
      return true;
    error = "argument '" + p.name + "' has size " + std::to_string(size) +
            " in dim " + std::to_string(d) + " but the kernel declares " + dim +
            " (" + p.dtype + shapeText(p.dims) + ")";
    return false;
  }
  auto it = r.symbols.find(dim);
  if (it == r.symbols.end()) {
    r.symbols[dim] = size;
    boundBy[dim] = p.name;
    return true;
  }
  if (it->second == size)
    return true;
  error = "dim '" + dim + "' is " + std::to_string(it->second) + " in " +
          boundBy[dim] + " but " + std::to_string(size) + " in " + p.name;
  return false;
}

bool ArgChecker::tensor(const SidecarParam &p, const Arg &a) {
  if (!a.tensor) {
    error = "argument '" + p.name + "' is a tensor parameter (" + p.dtype +
            shapeText(p.dims) + ") but got no array";
    return false;
  }
  if (!array(p, *a.tensor, a.devicePtr == 0))
    return false;
  for (size_t d = 0; d < p.dims.size(); ++d)
    if (!dim(p, d, a.tensor->shape[d]))
      return false;
  return true;
}

/// The grid from its expressions, within CUDA's limits per axis.
bool evaluateGrid(const Sidecar &sidecar, Resolved &r, std::string &error) {
  static const char *axis[3] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k) {
    if (!grid::evaluate(sidecar.grid[k], r.symbols, r.grid[k], error))
      return false;
    int64_t limit = kMaxGridDims[k];
    if (r.grid[k] < 0 || r.grid[k] > limit) {
      error = std::string("grid.") + axis[k] + " = " + sidecar.grid[k] + " = " +
              std::to_string(r.grid[k]) + " is outside 0.." +
              std::to_string(limit);
      return false;
    }
  }
  return true;
}

/// A scalar's bytes as its PTX parameter type.
bool packScalar(const SidecarParam &p, double v,
                std::vector<std::vector<uint8_t>> &values, std::string &error) {
  const std::string &t = p.abi[0];
  unsigned bits;
  double rounded = t == "f32"    ? static_cast<double>(static_cast<float>(v))
                   : t == "f16"  ? roundToHalf(v)
                   : t == "bf16" ? roundToBF16(v)
                                 : v;
  if (std::isfinite(v) && !std::isfinite(rounded)) {
    error = "argument '" + p.name + "' is " + std::to_string(v) +
            ", which does not fit in " + t + " (it would round to infinity)";
    return false;
  }
  if (t == "f32") {
    values.push_back(bytesOf<float>(static_cast<float>(v)));
  } else if (t == "f64") {
    values.push_back(bytesOf<double>(v));
  } else if (t == "f16") {
    values.push_back(bytesOf<uint16_t>(doubleToHalfBits(v)));
  } else if (t == "bf16") {
    values.push_back(bytesOf<uint16_t>(doubleToBF16Bits(v)));
  } else if (integerScalarType(t, bits)) {
    double lo = bits == 1 ? 0 : -std::ldexp(1.0, bits - 1);
    double hi = bits == 1 ? 1 : std::ldexp(1.0, bits - 1) - 1;
    if (v != std::floor(v) || v < lo || v > hi) {
      error = "argument '" + p.name + "' is " + std::to_string(v) +
              ", which does not fit in " + t;
      return false;
    }
    int64_t i64 = static_cast<int64_t>(v);
    if (bits <= 8)
      values.push_back(bytesOf<int8_t>(static_cast<int8_t>(i64)));
    else if (bits == 16)
      values.push_back(bytesOf<int16_t>(static_cast<int16_t>(i64)));
    else if (bits == 32)
      values.push_back(bytesOf<int32_t>(static_cast<int32_t>(i64)));
    else
      values.push_back(bytesOf<int64_t>(i64));
  } else {
    error = "scalar parameter '" + p.name + "' has type " + t +
            ", which the launcher cannot pass";
    return false;
  }
  return true;
}

} // namespace

bool resolve(const Sidecar &sidecar, const std::vector<Arg> &args,
             Resolved &out, std::string &error) {
  Resolved r;
  if (!matchArgs(sidecar, args, r, error))
    return false;
  ArgChecker check(r, error);
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const SidecarParam &p = sidecar.params[i];
    const Arg *a = r.argOf[i];
    if (!a) {
      error = "missing argument for kernel parameter '" + p.name + "'";
      return false;
    }
    if (!(p.tensor ? check.tensor(p, *a) : check.scalar(p, *a)))
      return false;
  }
  if (!evaluateGrid(sidecar, r, error))
    return false;
  r.block = sidecar.threadsPerCTA;
  r.dynamicSharedBytes = sidecar.dynamicSharedBytes;
  out = std::move(r);
  return true;
}

/// The TMA element type of a sidecar dtype.
static bool tmaDataTypeOf(const std::string &dtype, emu::TmaDataType &type) {
  if (dtype == "f16")
    type = emu::TmaDataType::F16;
  else if (dtype == "bf16")
    type = emu::TmaDataType::BF16;
  else if (dtype == "f8e4m3") // TMA moves fp8 as bytes
    type = emu::TmaDataType::U8;
  else if (dtype == "f32")
    type = emu::TmaDataType::F32;
  else if (dtype == "i32")
    type = emu::TmaDataType::I32;
  else if (dtype == "bool")
    type = emu::TmaDataType::U8;
  else
    return false;
  return true;
}

/// Appends tensor map `spec` over its tensor's device pointer and shape.
static bool packTensorMap(const Sidecar &sidecar, const Resolved &resolved,
                          const std::vector<uint64_t> &devicePtrs,
                          const emu::TensorMapSpec &spec,
                          const TensorMapEncoder &encode,
                          std::vector<std::vector<uint8_t>> &values,
                          std::string &error) {
  size_t i = 0;
  while (i < sidecar.params.size() && sidecar.params[i].name != spec.tensor)
    ++i;
  const Arg *a = i < resolved.argOf.size() ? resolved.argOf[i] : nullptr;
  emu::TmaDataType type;
  if (!a || !a->tensor || i >= devicePtrs.size() ||
      !tmaDataTypeOf(sidecar.params[i].dtype, type)) {
    error = "tensor map '" + spec.name + "': no device tensor '" +
            spec.tensor + "' of a TMA element type";
    return false;
  }
  auto map = emu::tensorMapFor(spec, type, a->tensor->shape, devicePtrs[i]);
  if (!map.ok()) {
    error = map.error();
    return false;
  }
  if (!encode) {
    error = "tensor map '" + spec.name + "': no tensor map encoder";
    return false;
  }
  std::vector<uint8_t> bytes(emu::kTensorMapBytes);
  if (!encode(*map, bytes.data(), error))
    return false;
  values.push_back(std::move(bytes));
  return true;
}

bool packParams(const Sidecar &sidecar, const Resolved &resolved,
                const std::vector<uint64_t> &devicePtrs,
                std::vector<std::vector<uint8_t>> &values, std::string &error,
                const TensorMapEncoder &encode) {
  values.clear();
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const SidecarParam &p = sidecar.params[i];
    const Arg *a = i < resolved.argOf.size() ? resolved.argOf[i] : nullptr;
    if (!a) {
      error = "missing argument for kernel parameter '" + p.name + "'";
      return false;
    }
    if (!p.tensor) {
      if (!packScalar(p, a->scalar, values, error))
        return false;
      continue;
    }
    if (i >= devicePtrs.size() || !a->tensor) {
      error = "no device buffer for tensor parameter '" + p.name + "'";
      return false;
    }
    values.push_back(bytesOf<uint64_t>(devicePtrs[i]));
    for (int64_t size : a->tensor->shape)
      values.push_back(bytesOf<int32_t>(static_cast<int32_t>(size)));
  }
  for (const emu::TensorMapSpec &spec : sidecar.tensorMaps)
    if (!packTensorMap(sidecar, resolved, devicePtrs, spec, encode, values,
                       error))
      return false;
  return true;
}

} // namespace launcher
} // namespace flash

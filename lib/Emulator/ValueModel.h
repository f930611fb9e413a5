//===- ValueModel.h - How the emulator stores SSA values --------*- C++ -*-===//
//
// The register file: every SSA value owns n * T cells (n cells per thread, T
// threads per CTA), element-major: cell (element e, thread t) is at
// base + e * T + t, so an element-wise op is one loop over n * T contiguous
// cells and a vector extract/insert/shuffle moves T contiguous cells per
// element.
//
// Cells are 64-bit: floats as double (already rounded to their type), integers
// sign-extended from their width (i1 as 0/1), pointers to global memory as
// (buffer id << 56) + 2^55 + byte offset, pointers to shared memory as the
// byte offset into the CTA's shared window. A cell of an integer or float
// kind is a value of flashc/Semantics' scalar type scalarType(kind), in that
// library's stored form (sem::wrapInt, sem::roundTo).
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_VALUEMODEL_H
#define FLASH_LIB_EMULATOR_VALUEMODEL_H

#include "flashc/Runtime/Float16.h"
#include "flashc/Runtime/Float8.h"
#include "flashc/Semantics/ScalarType.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace flash::emu {

/// Scalar kinds a cell can hold (PG / PS: pointers to global / shared memory).
enum class SK : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  F16,
  BF16,
  F32,
  F64,
  PG,
  PS,
  F8E4M3 ///< float8 e4m3 (e4m3fn): satfinite round to nearest even
};

inline bool isFloat(SK s) {
  return s == SK::F16 || s == SK::BF16 || s == SK::F32 || s == SK::F64 ||
         s == SK::F8E4M3;
}
inline unsigned intWidth(SK s) {
  switch (s) {
  case SK::I1:
    return 1;
  case SK::I8:
    return 8;
  case SK::I16:
    return 16;
  case SK::I32:
    return 32;
  default:
    return 64;
  }
}
inline unsigned byteSize(SK s) {
  switch (s) {
  case SK::I1:
  case SK::I8:
  case SK::F8E4M3:
    return 1;
  case SK::I16:
  case SK::F16:
  case SK::BF16:
    return 2;
  case SK::I32:
  case SK::F32:
    return 4;
  default:
    return 8;
  }
}

/// The scalar type of flashc/Semantics that cells of kind `s` hold (pointers
/// are 64-bit integers).
inline sem::ScalarType scalarType(SK s) {
  switch (s) {
  case SK::F16:
    return {sem::ScalarType::F16};
  case SK::BF16:
    return {sem::ScalarType::BF16};
  case SK::F8E4M3:
    return {sem::ScalarType::F8E4M3};
  case SK::F32:
    return {sem::ScalarType::F32};
  case SK::F64:
    return {sem::ScalarType::F64};
  default:
    return sem::ScalarType::integer(intWidth(s));
  }
}

union Cell {
  double d;
  int64_t i;
};

/// Offsets within +-2^55 bytes of a buffer stay in its id range, so that a
/// wild access at any distance a 64-bit GPU address space allows (2^49) is
/// reported out of bounds of its own buffer rather than landing in another.
constexpr int kPtrShift = 56;
constexpr int64_t kPtrBias = int64_t(1) << 55;
/// Buffer ids fit below the sign bit.
constexpr int kMaxGlobalBuffers = 126;
/// Buffer ids start at 1: id 0 is a pointer into no buffer (null, or an
/// integer turned into a pointer).
inline int64_t makeGlobalPtr(int id) {
  return (int64_t(id) << kPtrShift) + kPtrBias;
}
inline int globalPtrId(int64_t p) { return static_cast<int>(p >> kPtrShift); }
inline int64_t globalPtrOffset(int64_t p) {
  return (p & ((int64_t(1) << kPtrShift) - 1)) - kPtrBias;
}

/// Reads one little-endian element of kind `s` at `p` into a cell.
inline void decodeElem(SK s, const uint8_t *p, Cell &c) {
  switch (s) {
  case SK::I1:
    c.i = p[0] & 1;
    return;
  case SK::I8:
    c.i = static_cast<int8_t>(p[0]);
    return;
  case SK::I16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    c.i = v;
    return;
  }
  case SK::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    c.i = v;
    return;
  }
  case SK::I64:
  case SK::PG:
  case SK::PS:
    std::memcpy(&c.i, p, 8);
    return;
  case SK::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c.d = halfBitsToDouble(v);
    return;
  }
  case SK::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c.d = bf16BitsToDouble(v);
    return;
  }
  case SK::F8E4M3:
    c.d = e4m3BitsToDouble(p[0]);
    return;
  case SK::F32: {
    float v;
    std::memcpy(&v, p, 4);
    c.d = v;
    return;
  }
  case SK::F64:
    std::memcpy(&c.d, p, 8);
    return;
  }
}

/// Writes a cell as one little-endian element of kind `s` at `p`.
inline void encodeElem(SK s, const Cell &c, uint8_t *p) {
  switch (s) {
  case SK::I1:
    p[0] = c.i & 1;
    return;
  case SK::I8:
    p[0] = static_cast<uint8_t>(c.i);
    return;
  case SK::I16: {
    int16_t v = static_cast<int16_t>(c.i);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::I32: {
    int32_t v = static_cast<int32_t>(c.i);
    std::memcpy(p, &v, 4);
    return;
  }
  case SK::I64:
  case SK::PG:
  case SK::PS:
    std::memcpy(p, &c.i, 8);
    return;
  case SK::F16: {
    uint16_t v = doubleToHalfBits(c.d);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::BF16: {
    uint16_t v = doubleToBF16Bits(c.d);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::F8E4M3:
    p[0] = doubleToE4M3Bits(c.d);
    return;
  case SK::F32: {
    float v = static_cast<float>(c.d);
    std::memcpy(p, &v, 4);
    return;
  }
  case SK::F64:
    std::memcpy(p, &c.d, 8);
    return;
  }
}

/// Scalar kind of a (non-aggregate) type.
std::optional<SK> scalarKind(mlir::Type t);

/// Shape of a value type: n cells per thread, kinds per cell.
struct TypeInfo {
  unsigned n = 1;
  SK sk = SK::I32; ///< kind of cell 0 (of every cell unless struct)
  llvm::SmallVector<SK, 4> kinds; ///< per cell, for structs only
  SK kindAt(unsigned e) const { return kinds.empty() ? sk : kinds[e]; }
};

/// The shape of scalars, 1-D vectors and flat structs of scalars; nullopt for
/// any other type.
std::optional<TypeInfo> typeInfo(mlir::Type t);

/// Byte size of an LLVM element type (for GEP strides and accesses).
std::optional<int64_t> llvmTypeSize(mlir::Type t);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_VALUEMODEL_H

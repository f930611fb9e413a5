//===- Npy.h - Minimal .npy reader/writer --------------------------*- C++ -*-===//
//
// Reads and writes NumPy .npy files (format versions 1.0, 2.0 and 3.0) holding
// little-endian, C-ordered float16 (<f2), float32 (<f4), int32 (<i4) or bool
// (|b1, one byte per element) arrays.
// Data stays as raw little-endian bytes; element accessors convert to and
// from double (float16 rounding is round-to-nearest-even from double).
// Errors never abort: every entry point returns false with a message.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_RUNTIME_NPY_H
#define FLASH_RUNTIME_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flash {
namespace npy {

enum class DType { F16, F32, I32, Bool };

/// Bytes per element.
size_t elementSize(DType dtype);
/// The .npy descriptor: "<f2", "<f4", "<i4", "|b1".
const char *descr(DType dtype);
/// NumPy's name: "float16", "float32", "int32", "bool".
const char *dtypeName(DType dtype);

struct Array {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< empty for a 0-d array (one element)
  std::vector<uint8_t> data;  ///< numElements() * elementSize(dtype) bytes, LE

  Array() = default;
  /// A zero-filled array.
  Array(DType dtype, std::vector<int64_t> shape);

  int64_t numElements() const;
  /// Element `i` (row-major) as a double (exact for every dtype; a bool is 1
  /// for any nonzero byte).
  double get(size_t i) const;
  /// Stores `v` into element `i`: f16 rounds to nearest even, f32 rounds
  /// through float, i32 truncates toward zero and wraps (NaN -> 0), bool is
  /// v != 0.
  void set(size_t i, double v);
};

/// Parses an in-memory .npy image.
bool parse(const uint8_t *bytes, size_t size, Array &out, std::string &error);
/// Reads `path`; the error message does not repeat the path.
bool readFile(const std::string &path, Array &out, std::string &error);
/// Serializes `array` (version 1.0 unless the header needs 2.0).
bool serialize(const Array &array, std::vector<uint8_t> &out,
               std::string &error);
/// Writes `array` to `path`.
bool writeFile(const std::string &path, const Array &array,
               std::string &error);
/// "(2, 3)", "(5,)", "()".
std::string shapeToString(const std::vector<int64_t> &shape);

} // namespace npy
} // namespace flash

#endif // FLASH_RUNTIME_NPY_H

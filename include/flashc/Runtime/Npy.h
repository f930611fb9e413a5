//===- Npy.h - Minimal .npy reader/writer --------------------------*- C++ -*-===//
//
// Reads and writes NumPy .npy files (format versions 1.0, 2.0 and 3.0) holding
// little-endian, C-ordered float16 (<f2), bfloat16, float32 (<f4), int32
// (<i4), uint16 (<u2) or bool (|b1, one byte per element) arrays. NumPy has
// no bfloat16: `np.save` of an `ml_dtypes.bfloat16` array writes the 2-byte
// void descr `<V2` (np.load then gives `|V2`); both read as bf16, and bf16 is
// written as `<V2`, so that `np.load(f).view(ml_dtypes.bfloat16)` gives the
// values back and arithmetic on a forgotten view fails loudly. uint16 is how bf16 travels as raw bits
// (`x.view(np.uint16)`): viewAs() turns it into bf16. float8 e4m3 travels the
// same way: `np.save` of an `ml_dtypes.float8_e4m3fn` array writes the 1-byte
// void descr `<V1` (`|V1` after np.load); both read as f8e4m3, written as `<V1`.
// Data stays as raw little-endian bytes; element accessors convert to and
// from double (f16/bf16/f8e4m3 rounding is round-to-nearest-even from double,
// f8e4m3 saturating to +-448).
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

enum class DType { F16, BF16, F32, I32, U16, Bool, F8E4M3 };

/// Bytes per element.
size_t elementSize(DType dtype);
/// The .npy descriptor written: "<f2", "<V2", "<f4", "<i4", "<u2", "|b1",
/// "<V1".
const char *descr(DType dtype);
/// NumPy's name: "float16", "bfloat16", "float32", "int32", "uint16", "bool",
/// "float8_e4m3fn".
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
  /// Stores `v` into element `i`: f16 and bf16 round to nearest even, f32
  /// rounds through float, i32 and u16 truncate toward zero and wrap
  /// (NaN -> 0), bool is v != 0.
  void set(size_t i, double v);
};

/// Makes `array` hold `want` where its bytes already mean that: a uint16
/// array becomes bf16 (raw bits). True if `array` now holds `want`.
bool viewAs(Array &array, DType want);

/// Parses an in-memory .npy image.
bool parse(const uint8_t *bytes, size_t size, Array &out, std::string &error);
/// Reads `path`; the error message does not repeat the path. The header is
/// read first: data whose declared size differs from the file's (a regular
/// file's size; for other files, what can be read) or exceeds `maxDataBytes`
/// is an error before any memory is taken for it (so `/dev/zero` and a
/// header claiming terabytes fail at once).
bool readFile(const std::string &path, Array &out, std::string &error,
              uint64_t maxDataBytes = UINT64_MAX);
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

//===- ScalarType.h - Element types the executors compute in ----*- C++ -*-===//
//
// The element types of flashc's scalar semantics (flashc/Semantics/ScalarOps.h)
// and of the two executors that use them, the interpreter and the emulator.
// A value of a float type is held as a double already rounded to the type; a
// value of an integer type iN is held in "stored form" (sign-extended from N
// bits, except i1, which is 0 or 1).
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_SEMANTICS_SCALARTYPE_H
#define FLASHC_SEMANTICS_SCALARTYPE_H

#include <cstdint>
#include <optional>

namespace mlir {
class Type;
} // namespace mlir

namespace flash::sem {

struct ScalarType {
  enum Kind : uint8_t { F16, BF16, F32, F64, F8E4M3, Int };
  Kind kind = F32;
  unsigned width = 0; ///< bit width for Int (index counts as 64)

  bool isFloat() const { return kind != Int; }
  bool operator==(const ScalarType &o) const {
    return kind == o.kind && width == o.width;
  }
  bool operator!=(const ScalarType &o) const { return !(*this == o); }

  static ScalarType integer(unsigned width) { return {Int, width}; }
  /// Supported: f16, bf16, f32, f64, f8E4M3FN, iN (1 <= N <= 64) and index.
  static std::optional<ScalarType> get(mlir::Type type);
};

/// One value of some ScalarType: `f` for a float type (already rounded to
/// it), `i` for an integer type (in stored form).
union ScalarValue {
  double f;
  int64_t i;

  static ScalarValue ofFloat(double v) {
    ScalarValue s;
    s.f = v;
    return s;
  }
  static ScalarValue ofInt(int64_t v) {
    ScalarValue s;
    s.i = v;
    return s;
  }
};

} // namespace flash::sem

#endif // FLASHC_SEMANTICS_SCALARTYPE_H

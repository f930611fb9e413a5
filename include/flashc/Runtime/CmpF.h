//===- CmpF.h - Floating-point comparison predicates ------------*- C++ -*-===//
//
// The value of an arith.cmpf predicate on two doubles, shared by the
// interpreter and the emulator. The predicate enum is a template parameter
// (mlir::arith::CmpFPredicate at both uses), so this header stays plain
// C++17 with no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_RUNTIME_CMPF_H
#define FLASH_RUNTIME_CMPF_H

#include <cmath>

namespace flash {

/// arith.cmpf `p` of a and b: ordered predicates are false and unordered ones
/// true when either operand is NaN.
template <typename P> inline bool evalCmpF(P p, double a, double b) {
  bool uno = std::isnan(a) || std::isnan(b);
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !uno && a == b;
  case P::OGT:
    return !uno && a > b;
  case P::OGE:
    return !uno && a >= b;
  case P::OLT:
    return !uno && a < b;
  case P::OLE:
    return !uno && a <= b;
  case P::ONE:
    return !uno && a != b;
  case P::ORD:
    return !uno;
  case P::UEQ:
    return uno || a == b;
  case P::UGT:
    return uno || a > b;
  case P::UGE:
    return uno || a >= b;
  case P::ULT:
    return uno || a < b;
  case P::ULE:
    return uno || a <= b;
  case P::UNE:
    return uno || a != b;
  case P::UNO:
    return uno;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

} // namespace flash

#endif // FLASH_RUNTIME_CMPF_H

//===- CmpF.h - Floating-point comparison predicates ------------*- C++ -*-===//
//
// The value of an arith.cmpf predicate on two doubles. The predicate enum is
// a template parameter (any enum with arith.cmpf's predicate names:
// flash::sem::FloatPredicate, mlir::arith::CmpFPredicate), so this header
// stays plain C++17 with no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_SEMANTICS_CMPF_H
#define FLASHC_SEMANTICS_CMPF_H

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

#endif // FLASHC_SEMANTICS_CMPF_H

//===- ArithMathOps.cpp - arith/math ops over the register file -----------===//
//
// One element loop per ArithMathKind, with the switch on the opcode outside
// the loop (sem::visit*): the emulator's hot path. What each opcode computes
// comes from flashc/Semantics/ScalarOps.h.
//
//===----------------------------------------------------------------------===//

#include "ArithMathOps.h"

#include "flashc/Semantics/ScalarOps.h"

#include <cstring>

namespace flash::emu {

namespace {

using Kind = sem::ScalarType::Kind;

/// A cell as a sem::ScalarValue and back: both are a double or an int64 in
/// 64 bits, so the bits move unchanged.
static_assert(sizeof(Cell) == sizeof(sem::ScalarValue));
sem::ScalarValue toScalar(const Cell &c) {
  sem::ScalarValue v;
  std::memcpy(&v, &c, sizeof v);
  return v;
}
Cell toCell(const sem::ScalarValue &v) {
  Cell c;
  std::memcpy(&c, &v, sizeof c);
  return c;
}

int64_t numCells(const ArithMathCells &x) {
  return int64_t(x.resultElems) * x.threads;
}

/// R[i].d = value(i) rounded to `t` for every cell; f32 and f64, the common
/// cases, without a switch per cell.
template <typename F>
void storeRounded(sem::ScalarType t, Cell *R, int64_t n, F value) {
  auto loop = [&](sem::ScalarType type) {
    for (int64_t i = 0; i < n; ++i)
      R[i].d = sem::roundTo(type, value(i));
  };
  if (t.kind == Kind::F32)
    loop(sem::ScalarType{Kind::F32});
  else if (t.kind == Kind::F64)
    loop(sem::ScalarType{Kind::F64});
  else
    loop(t);
}

int64_t intBinary(sem::ArithMathOpcode opc, const ArithMathCells &x,
                  const uint8_t *mask) {
  const int64_t n = numCells(x), T = x.threads;
  const unsigned w = x.resultType.width;
  Cell *R = x.result;
  const Cell *A = x.a, *B = x.b;
  return sem::visitIntBinary(opc, [&](auto f) -> int64_t {
    for (int64_t i = 0; i < n; ++i) {
      int64_t out;
      if (!f(A[i].i, B[i].i, w, out)) {
        // A zero divisor: an error in an active thread, 0 in an inactive one.
        if (mask[i % T])
          return i % T;
        out = 0;
      }
      R[i].i = sem::wrapInt(out, w);
    }
    return -1;
  });
}

void intMulExtended(const ArithMathCells &x) {
  const int64_t n = numCells(x);
  const unsigned w = x.resultType.width;
  for (int64_t i = 0; i < n; ++i)
    sem::mulUIExtended(x.a[i].i, x.b[i].i, w, x.result[i].i, x.result2[i].i);
}

void intUnary(sem::ArithMathOpcode opc, const ArithMathCells &x) {
  const int64_t n = numCells(x);
  const unsigned w = x.resultType.width;
  for (int64_t i = 0; i < n; ++i)
    x.result[i].i = sem::evalIntUnary(opc, x.a[i].i, w);
}

void floatBinary(sem::ArithMathOpcode opc, const ArithMathCells &x) {
  const Cell *A = x.a, *B = x.b;
  sem::visitFloatBinary(opc, [&](auto f) {
    storeRounded(x.resultType, x.result, numCells(x),
                 [&](int64_t i) { return f(A[i].d, B[i].d); });
  });
}

void floatUnary(sem::ArithMathOpcode opc, const ArithMathCells &x) {
  const Cell *A = x.a;
  sem::visitFloatUnary(opc, [&](auto f) {
    storeRounded(x.resultType, x.result, numCells(x),
                 [&](int64_t i) { return f(A[i].d); });
  });
}

void floatTernary(sem::ArithMathOpcode opc, const ArithMathCells &x) {
  const int64_t n = numCells(x);
  for (int64_t i = 0; i < n; ++i)
    x.result[i].d =
        sem::evalFloatTernary(opc, x.resultType, x.a[i].d, x.b[i].d, x.c[i].d);
}

void cmpI(sem::IntPredicate p, const ArithMathCells &x) {
  const int64_t n = numCells(x);
  const unsigned w = x.sourceType.width;
  for (int64_t i = 0; i < n; ++i)
    x.result[i].i = sem::evalCmpI(p, x.a[i].i, x.b[i].i, w);
}

void cmpF(sem::FloatPredicate p, const ArithMathCells &x) {
  const int64_t n = numCells(x);
  for (int64_t i = 0; i < n; ++i)
    x.result[i].i = sem::evalCmpF(p, x.a[i].d, x.b[i].d);
}

/// Moves cells whatever their type; a condition with one cell per thread
/// picks whole vectors.
void select(const ArithMathCells &x) {
  const int64_t n = numCells(x), T = x.threads;
  const bool scalarCond = x.aElems == 1 && x.resultElems > 1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = scalarCond ? x.a[i % T].i : x.a[i].i;
    x.result[i] = c ? x.b[i] : x.c[i];
  }
}

void cast(sem::ArithMathOpcode opc, const ArithMathCells &x) {
  const int64_t n = numCells(x);
  const sem::ScalarType src = x.sourceType, dst = x.resultType;
  sem::visitCast(opc, [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      x.result[i] = toCell(f(src, dst, toScalar(x.a[i])));
  });
}

} // namespace

int64_t evaluateArithMath(const sem::ArithMathOp &op, const ArithMathCells &x,
                          const uint8_t *mask) {
  switch (op.kind()) {
  case sem::ArithMathKind::IntBinary:
    return intBinary(op.opcode, x, mask);
  case sem::ArithMathKind::IntMulExtended:
    intMulExtended(x);
    break;
  case sem::ArithMathKind::IntUnary:
    intUnary(op.opcode, x);
    break;
  case sem::ArithMathKind::FloatBinary:
    floatBinary(op.opcode, x);
    break;
  case sem::ArithMathKind::FloatUnary:
    floatUnary(op.opcode, x);
    break;
  case sem::ArithMathKind::FloatTernary:
    floatTernary(op.opcode, x);
    break;
  case sem::ArithMathKind::CmpI:
    cmpI(op.intPredicate, x);
    break;
  case sem::ArithMathKind::CmpF:
    cmpF(op.floatPredicate, x);
    break;
  case sem::ArithMathKind::Select:
    select(x);
    break;
  case sem::ArithMathKind::Cast:
    cast(op.opcode, x);
    break;
  }
  return -1;
}

} // namespace flash::emu

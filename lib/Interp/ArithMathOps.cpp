//===- ArithMathOps.cpp - arith / math ops through flashc/Semantics -------===//
//
// One element loop per ArithMathKind; what each opcode computes comes from
// flashc/Semantics/ScalarOps.h. Operands are a result-sized tensor or a
// scalar (stride 0). Integers are held as doubles in stored form.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "flashc/Semantics/ScalarOps.h"

namespace flash::interp {

/// A double-held value as a sem::ScalarValue of type `t`, and back.
static sem::ScalarValue toScalar(ElemType t, double v) {
  return t.isFloat() ? sem::ScalarValue::ofFloat(v)
                     : sem::ScalarValue::ofInt(static_cast<int64_t>(v));
}
static double fromScalar(ElemType t, sem::ScalarValue v) {
  return t.isFloat() ? v.f : static_cast<double>(v.i);
}

bool Executor::execArithMath(const Inst &inst) {
  sem::ArithMathOpcode opc = inst.arith.opcode;
  switch (inst.arith.kind()) {
  case sem::ArithMathKind::IntBinary:
    return sem::visitIntBinary(opc, [&](auto f) { return intBinary(inst, f); });
  case sem::ArithMathKind::FloatBinary:
    return sem::visitFloatBinary(opc,
                                 [&](auto f) { return floatBinary(inst, f); });
  case sem::ArithMathKind::FloatUnary:
    return sem::visitFloatUnary(opc,
                                [&](auto f) { return floatUnary(inst, f); });
  case sem::ArithMathKind::IntMulExtended:
    return intMulExtended(inst);
  case sem::ArithMathKind::IntUnary:
    return intUnary(inst);
  case sem::ArithMathKind::FloatTernary:
    return floatTernary(inst);
  case sem::ArithMathKind::CmpI:
    return cmpI(inst);
  case sem::ArithMathKind::CmpF:
    return cmpF(inst);
  case sem::ArithMathKind::Select:
    return select(inst);
  case sem::ArithMathKind::Cast:
    return convert(inst);
  }
  return internalError(inst, "unhandled arith/math kind");
}

template <typename F> bool Executor::intBinary(const Inst &inst, F f) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0, sb = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
    return false;
  unsigned w = r.elem.width;
  const double *pa = a.data.data(), *pb = b.data.data();
  double *pr = r.data.data();
  for (size_t i = 0; i < n; ++i) {
    int64_t out;
    if (!f(static_cast<int64_t>(pa[i * sa]), static_cast<int64_t>(pb[i * sb]),
           w, out))
      return runtimeError(inst, "integer division by zero");
    pr[i] = static_cast<double>(sem::wrapInt(out, w));
  }
  return true;
}

template <typename F> bool Executor::floatBinary(const Inst &inst, F f) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0, sb = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
    return false;
  const double *pa = a.data.data(), *pb = b.data.data();
  double *pr = r.data.data();
  ElemType t = r.elem;
  // f32, the common case, without a switch per element.
  if (t.kind == ElemType::F32) {
    for (size_t i = 0; i < n; ++i)
      pr[i] =
          static_cast<double>(static_cast<float>(f(pa[i * sa], pb[i * sb])));
  } else {
    for (size_t i = 0; i < n; ++i)
      pr[i] = roundTo(t, f(pa[i * sa], pb[i * sb]));
  }
  return true;
}

template <typename F> bool Executor::floatUnary(const Inst &inst, F f) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0;
  if (!strideFor(inst, a, n, sa))
    return false;
  const double *pa = a.data.data();
  double *pr = r.data.data();
  ElemType t = r.elem;
  if (t.kind == ElemType::F32) {
    for (size_t i = 0; i < n; ++i)
      pr[i] = static_cast<double>(static_cast<float>(f(pa[i * sa])));
  } else {
    for (size_t i = 0; i < n; ++i)
      pr[i] = roundTo(t, f(pa[i * sa]));
  }
  return true;
}

bool Executor::intMulExtended(const Inst &inst) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
  RtValue &low = prep(inst, 0);
  RtValue &high = prep(inst, 1);
  size_t n = low.data.size(), sa = 0, sb = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
    return false;
  unsigned w = low.elem.width;
  for (size_t i = 0; i < n; ++i) {
    int64_t lo, hi;
    sem::mulUIExtended(static_cast<int64_t>(a.data[i * sa]),
                       static_cast<int64_t>(b.data[i * sb]), w, lo, hi);
    low.data[i] = static_cast<double>(lo);
    high.data[i] = static_cast<double>(hi);
  }
  return true;
}

bool Executor::intUnary(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0;
  if (!strideFor(inst, a, n, sa))
    return false;
  unsigned w = r.elem.width;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = static_cast<double>(sem::evalIntUnary(
        inst.arith.opcode, static_cast<int64_t>(a.data[i * sa]), w));
  return true;
}

bool Executor::floatTernary(const Inst &inst) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]),
                &c = val(inst.in[2]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0, sb = 0, sc = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb) ||
      !strideFor(inst, c, n, sc))
    return false;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = sem::evalFloatTernary(inst.arith.opcode, r.elem, a.data[i * sa],
                                      b.data[i * sb], c.data[i * sc]);
  return true;
}

bool Executor::cmpI(const Inst &inst) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0, sb = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
    return false;
  unsigned w = a.elem.width;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = sem::evalCmpI(inst.arith.intPredicate,
                              static_cast<int64_t>(a.data[i * sa]),
                              static_cast<int64_t>(b.data[i * sb]), w);
  return true;
}

bool Executor::cmpF(const Inst &inst) {
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0, sb = 0;
  if (!strideFor(inst, a, n, sa) || !strideFor(inst, b, n, sb))
    return false;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = sem::evalCmpF(inst.arith.floatPredicate, a.data[i * sa],
                              b.data[i * sb]);
  return true;
}

bool Executor::select(const Inst &inst) {
  const RtValue &c = val(inst.in[0]), &a = val(inst.in[1]),
                &b = val(inst.in[2]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sc = 0, sa = 0, sb = 0;
  if (!strideFor(inst, c, n, sc) || !strideFor(inst, a, n, sa) ||
      !strideFor(inst, b, n, sb))
    return false;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = c.data[i * sc] != 0 ? a.data[i * sa] : b.data[i * sb];
  return true;
}

bool Executor::convert(const Inst &inst) {
  const RtValue &a = val(inst.in[0]);
  RtValue &r = prep(inst, 0);
  size_t n = r.data.size(), sa = 0;
  if (!strideFor(inst, a, n, sa))
    return false;
  ElemType src = a.elem, dst = r.elem;
  for (size_t i = 0; i < n; ++i)
    r.data[i] = fromScalar(dst, sem::evalCast(inst.arith.opcode, src, dst,
                                              toScalar(src, a.data[i * sa])));
  return true;
}

} // namespace flash::interp

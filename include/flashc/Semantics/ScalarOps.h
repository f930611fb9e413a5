//===- ScalarOps.h - What each arith / math op computes ---------*- C++ -*-===//
//
// The scalar semantics of every ArithMathOpcode, shared by the interpreter
// and the emulator so that both compute the same bits. Values are plain: a
// float as a double already rounded to its type, an integer of width w in
// stored form (ScalarType.h).
//
// Two ways in, both a switch on an opcode classified once beforehand:
//   - eval*(opcode, operands...) for one element;
//   - visit*(opcode, fn) for an element loop: calls `fn(f)` with `f` a
//     stateless callable computing the opcode, so a caller's loop is compiled
//     once per opcode with the op inlined and the switch outside the loop.
// Everything an element loop calls is inline; the .cpp holds evalCast and
// the rarer halves of casts (float to int saturation, bit patterns).
//
//===----------------------------------------------------------------------===//

#ifndef FLASHC_SEMANTICS_SCALAROPS_H
#define FLASHC_SEMANTICS_SCALAROPS_H

#include "flashc/Runtime/Float16.h"
#include "flashc/Runtime/Float8.h"
#include "flashc/Semantics/ArithMathOpcode.h"
#include "flashc/Semantics/CmpF.h"
#include "flashc/Semantics/ScalarType.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace flash::sem {

//===----------------------------------------------------------------------===//
// Integers in stored form
//===----------------------------------------------------------------------===//

/// The stored form of the low `w` bits of `v`: sign-extended, except i1,
/// which is 0 or 1.
inline int64_t wrapInt(int64_t v, unsigned w) {
  if (w == 1)
    return v & 1;
  if (w >= 64)
    return v;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << (64 - w)) >>
         (64 - w);
}
/// The signed value of a stored iN (an i1 that is set is -1).
inline int64_t asSigned(int64_t stored, unsigned w) {
  return w == 1 ? -(stored & 1) : stored;
}
/// The unsigned value of a stored iN.
inline uint64_t asUnsigned(int64_t stored, unsigned w) {
  if (w >= 64)
    return static_cast<uint64_t>(stored);
  return static_cast<uint64_t>(stored) & ((uint64_t(1) << w) - 1);
}

//===----------------------------------------------------------------------===//
// Rounding
//===----------------------------------------------------------------------===//

/// `v` truncated toward zero and saturated to int64; NaN gives 0.
inline int64_t saturateToInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

/// `v` as a value of `t`: floats round to nearest even (f16 and bf16 in one
/// step, never through f32); integers truncate toward zero, saturate to 64
/// bits and wrap to the width.
inline double roundTo(ScalarType t, double v) {
  switch (t.kind) {
  case ScalarType::F16:
    return roundToHalf(v);
  case ScalarType::BF16:
    return roundToBF16(v);
  case ScalarType::F8E4M3:
    return roundToE4M3(v);
  case ScalarType::F32:
    return static_cast<double>(static_cast<float>(v));
  case ScalarType::F64:
    return v;
  case ScalarType::Int:
    return static_cast<double>(wrapInt(saturateToInt64(v), t.width));
  }
  return v;
}

//===----------------------------------------------------------------------===//
// IntBinary: f(a, b, w, out) -> false on a zero divisor
//===----------------------------------------------------------------------===//
//
// Operands are stored iN values of width w; `out` receives the result before
// wrapping (callers keep wrapInt(out, w)). A zero divisor is the caller's to
// report (the interpreter fails, the emulator fails for active threads).

/// Signed a / b and a % b rounded toward zero (b != 0); the one overflowing
/// case, INT64_MIN / -1, wraps to INT64_MIN with remainder 0.
inline void divRemSigned(int64_t a, int64_t b, int64_t &q, int64_t &r) {
  if (b == -1) {
    q = static_cast<int64_t>(0 - static_cast<uint64_t>(a));
    r = 0;
    return;
  }
  q = a / b;
  r = a % b;
}

/// divsi, remsi, ceildivsi, floordivsi.
template <ArithMathOpcode Opc>
inline bool signedDivision(int64_t a, int64_t b, unsigned w, int64_t &out) {
  int64_t sa = asSigned(a, w), sb = asSigned(b, w);
  if (sb == 0) {
    out = 0;
    return false;
  }
  int64_t q, r;
  divRemSigned(sa, sb, q, r);
  if constexpr (Opc == ArithMathOpcode::DivSI)
    out = q;
  else if constexpr (Opc == ArithMathOpcode::RemSI)
    out = r;
  else if constexpr (Opc == ArithMathOpcode::CeilDivSI)
    out = (r != 0 && (sa < 0) == (sb < 0)) ? q + 1 : q;
  else
    out = (r != 0 && (sa < 0) != (sb < 0)) ? q - 1 : q;
  return true;
}

/// divui, remui, ceildivui.
template <ArithMathOpcode Opc>
inline bool unsignedDivision(int64_t a, int64_t b, unsigned w, int64_t &out) {
  uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
  if (ub == 0) {
    out = 0;
    return false;
  }
  uint64_t q = ua / ub, r = ua % ub;
  if constexpr (Opc == ArithMathOpcode::DivUI)
    out = static_cast<int64_t>(q);
  else if constexpr (Opc == ArithMathOpcode::RemUI)
    out = static_cast<int64_t>(r);
  else
    out = static_cast<int64_t>(r != 0 ? q + 1 : q);
  return true;
}

/// Shifts by an unsigned amount; an amount >= w shifts every bit out (the
/// sign bit fills for shrsi).
template <ArithMathOpcode Opc>
inline bool shift(int64_t a, int64_t b, unsigned w, int64_t &out) {
  uint64_t s = asUnsigned(b, w);
  if constexpr (Opc == ArithMathOpcode::ShLI)
    out = s >= w ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << s);
  else if constexpr (Opc == ArithMathOpcode::ShRUI)
    out = s >= w ? 0 : static_cast<int64_t>(asUnsigned(a, w) >> s);
  else
    out = s >= w ? (asSigned(a, w) < 0 ? -1 : 0) : (asSigned(a, w) >> s);
  return true;
}

/// Calls `fn(f)` with `f(a, b, w, out)` computing the IntBinary `opc`. Each
/// case passes its own lambda type, so `fn` is instantiated per opcode.
template <typename Fn>
decltype(auto) visitIntBinary(ArithMathOpcode opc, Fn &&fn) {
  using O = ArithMathOpcode;
  using I = int64_t;
  using U = uint64_t; // wrapping arithmetic, where overflow is defined
  switch (opc) {
  case O::AddI:
    return fn([](I a, I b, unsigned, I &o) {
      o = static_cast<I>(U(a) + U(b));
      return true;
    });
  case O::SubI:
    return fn([](I a, I b, unsigned, I &o) {
      o = static_cast<I>(U(a) - U(b));
      return true;
    });
  case O::MulI:
    return fn([](I a, I b, unsigned, I &o) {
      o = static_cast<I>(U(a) * U(b));
      return true;
    });
  case O::DivSI:
    return fn([](I a, I b, unsigned w, I &o) {
      return signedDivision<O::DivSI>(a, b, w, o);
    });
  case O::RemSI:
    return fn([](I a, I b, unsigned w, I &o) {
      return signedDivision<O::RemSI>(a, b, w, o);
    });
  case O::CeilDivSI:
    return fn([](I a, I b, unsigned w, I &o) {
      return signedDivision<O::CeilDivSI>(a, b, w, o);
    });
  case O::FloorDivSI:
    return fn([](I a, I b, unsigned w, I &o) {
      return signedDivision<O::FloorDivSI>(a, b, w, o);
    });
  case O::DivUI:
    return fn([](I a, I b, unsigned w, I &o) {
      return unsignedDivision<O::DivUI>(a, b, w, o);
    });
  case O::RemUI:
    return fn([](I a, I b, unsigned w, I &o) {
      return unsignedDivision<O::RemUI>(a, b, w, o);
    });
  case O::CeilDivUI:
    return fn([](I a, I b, unsigned w, I &o) {
      return unsignedDivision<O::CeilDivUI>(a, b, w, o);
    });
  case O::MaxSI:
    return fn([](I a, I b, unsigned w, I &o) {
      o = asSigned(a, w) >= asSigned(b, w) ? a : b;
      return true;
    });
  case O::MinSI:
    return fn([](I a, I b, unsigned w, I &o) {
      o = asSigned(a, w) <= asSigned(b, w) ? a : b;
      return true;
    });
  case O::MaxUI:
    return fn([](I a, I b, unsigned w, I &o) {
      o = asUnsigned(a, w) >= asUnsigned(b, w) ? a : b;
      return true;
    });
  case O::MinUI:
    return fn([](I a, I b, unsigned w, I &o) {
      o = asUnsigned(a, w) <= asUnsigned(b, w) ? a : b;
      return true;
    });
  case O::AndI:
    return fn([](I a, I b, unsigned, I &o) {
      o = a & b;
      return true;
    });
  case O::OrI:
    return fn([](I a, I b, unsigned, I &o) {
      o = a | b;
      return true;
    });
  case O::XOrI:
    return fn([](I a, I b, unsigned, I &o) {
      o = a ^ b;
      return true;
    });
  case O::ShLI:
    return fn([](I a, I b, unsigned w, I &o) {
      return shift<O::ShLI>(a, b, w, o);
    });
  case O::ShRSI:
    return fn([](I a, I b, unsigned w, I &o) {
      return shift<O::ShRSI>(a, b, w, o);
    });
  case O::ShRUI:
    return fn([](I a, I b, unsigned w, I &o) {
      return shift<O::ShRUI>(a, b, w, o);
    });
  default:
    break;
  }
  llvm_unreachable("not an IntBinary opcode");
}

/// The stored result of an IntBinary opcode; false (out = 0) on a zero
/// divisor.
inline bool evalIntBinary(ArithMathOpcode opc, int64_t a, int64_t b,
                          unsigned w, int64_t &out) {
  bool ok = visitIntBinary(opc, [&](auto f) { return f(a, b, w, out); });
  out = wrapInt(out, w);
  return ok;
}

/// The stored result of an IntUnary opcode (absi: |INT_MIN| wraps to
/// INT_MIN).
inline int64_t evalIntUnary(ArithMathOpcode opc, int64_t a, unsigned w) {
  if (opc != ArithMathOpcode::AbsI)
    llvm_unreachable("not an IntUnary opcode");
  int64_t x = asSigned(a, w);
  uint64_t mag = x < 0 ? 0 - static_cast<uint64_t>(x) : x;
  return wrapInt(static_cast<int64_t>(mag), w);
}

/// arith.mului_extended: the low and high w bits of the unsigned 2w-bit
/// product of a and b, in stored form.
inline void mulUIExtended(int64_t a, int64_t b, unsigned w, int64_t &low,
                          int64_t &high) {
  if (w > 32) {
    unsigned __int128 p = static_cast<unsigned __int128>(asUnsigned(a, w)) *
                          asUnsigned(b, w);
    low = wrapInt(static_cast<int64_t>(static_cast<uint64_t>(p)), w);
    high = wrapInt(static_cast<int64_t>(static_cast<uint64_t>(p >> w)), w);
    return;
  }
  uint64_t p = asUnsigned(a, w) * asUnsigned(b, w); // below 2^64 for w <= 32
  low = wrapInt(static_cast<int64_t>(p), w);
  high = wrapInt(static_cast<int64_t>(p >> w), w);
}

//===----------------------------------------------------------------------===//
// FloatBinary, FloatUnary, FloatTernary: computed in double, then rounded
//===----------------------------------------------------------------------===//

/// arith.maximumf: NaN if either is NaN; -0 < +0.
inline double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
/// arith.minimumf: NaN if either is NaN; -0 < +0.
inline double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
/// arith.maxnumf: a NaN operand yields the other; -0 < +0 (MLIR leaves the
/// sign of a zero result open; this picks IEEE 754-2019 maximumNumber).
inline double maxNumF(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return maximumF(a, b);
}
/// arith.minnumf: a NaN operand yields the other; -0 < +0.
inline double minNumF(double a, double b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return minimumF(a, b);
}

/// Calls `fn(f)` with `f(a, b)` computing the FloatBinary `opc` in double
/// (callers round the result to the element type).
template <typename Fn>
decltype(auto) visitFloatBinary(ArithMathOpcode opc, Fn &&fn) {
  using O = ArithMathOpcode;
  switch (opc) {
  case O::AddF:
    return fn([](double a, double b) { return a + b; });
  case O::SubF:
    return fn([](double a, double b) { return a - b; });
  case O::MulF:
    return fn([](double a, double b) { return a * b; });
  case O::DivF:
    return fn([](double a, double b) { return a / b; });
  case O::RemF:
    return fn([](double a, double b) { return std::fmod(a, b); });
  case O::MaximumF:
    return fn([](double a, double b) { return maximumF(a, b); });
  case O::MinimumF:
    return fn([](double a, double b) { return minimumF(a, b); });
  case O::MaxNumF:
    return fn([](double a, double b) { return maxNumF(a, b); });
  case O::MinNumF:
    return fn([](double a, double b) { return minNumF(a, b); });
  case O::PowF:
    return fn([](double a, double b) { return std::pow(a, b); });
  case O::CopySign:
    return fn([](double a, double b) { return std::copysign(a, b); });
  default:
    break;
  }
  llvm_unreachable("not a FloatBinary opcode");
}

/// Calls `fn(f)` with `f(a)` computing the FloatUnary `opc` in double
/// (callers round the result to the element type).
template <typename Fn>
decltype(auto) visitFloatUnary(ArithMathOpcode opc, Fn &&fn) {
  using O = ArithMathOpcode;
  switch (opc) {
#define FLASH_FLOAT_UNARY(Opcode, MlirOp, Result, Builtin)                              \
  case O::Opcode:                                                              \
    return fn([](double a) { return Result; });
#include "flashc/Semantics/FloatUnaryOps.def"
  case O::Exp2Ftz:
    return fn([](double a) {
      double r = std::exp2(a);
      return r < 0x1p-126 ? 0.0 : r;
    });
  default:
    break;
  }
  llvm_unreachable("not a FloatUnary opcode");
}

/// A FloatBinary opcode's result rounded to `t`.
inline double evalFloatBinary(ArithMathOpcode opc, ScalarType t, double a,
                              double b) {
  return roundTo(t, visitFloatBinary(opc, [&](auto f) { return f(a, b); }));
}
/// A FloatUnary opcode's result rounded to `t`.
inline double evalFloatUnary(ArithMathOpcode opc, ScalarType t, double a) {
  return roundTo(t, visitFloatUnary(opc, [&](auto f) { return f(a); }));
}
/// A FloatTernary opcode's result rounded to `t` (fma rounds once).
inline double evalFloatTernary(ArithMathOpcode opc, ScalarType t, double a,
                               double b, double c) {
  if (opc != ArithMathOpcode::Fma)
    llvm_unreachable("not a FloatTernary opcode");
  return roundTo(t, std::fma(a, b, c));
}

//===----------------------------------------------------------------------===//
// Compares
//===----------------------------------------------------------------------===//

/// arith.cmpi on stored operands of width w.
inline bool evalCmpI(IntPredicate p, int64_t a, int64_t b, unsigned w) {
  int64_t sa = asSigned(a, w), sb = asSigned(b, w);
  uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
  switch (p) {
  case IntPredicate::eq:
    return ua == ub;
  case IntPredicate::ne:
    return ua != ub;
  case IntPredicate::slt:
    return sa < sb;
  case IntPredicate::sle:
    return sa <= sb;
  case IntPredicate::sgt:
    return sa > sb;
  case IntPredicate::sge:
    return sa >= sb;
  case IntPredicate::ult:
    return ua < ub;
  case IntPredicate::ule:
    return ua <= ub;
  case IntPredicate::ugt:
    return ua > ub;
  case IntPredicate::uge:
    return ua >= ub;
  }
  return false;
}

/// arith.cmpf: evalCmpF(FloatPredicate, a, b) from CmpF.h.
using flash::evalCmpF;

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

/// fptosi / fptoui: `v` truncated toward zero, saturated to the range of a
/// signed or unsigned iN (as PTX's cvt.rzi does); NaN gives 0. Stored form.
int64_t floatToInt(double v, bool isSigned, unsigned w);

/// The bit pattern of `v` (a value of `t`), zero-extended to 64 bits.
uint64_t toBits(ScalarType t, ScalarValue v);
/// The value of `t` whose bit pattern is the low bits of `bits`.
ScalarValue fromBits(ScalarType t, uint64_t bits);

/// Calls `fn(f)` with `f(src, dst, v)` computing the Cast `opc`: `v` of type
/// `src` as a value of `dst`.
template <typename Fn> decltype(auto) visitCast(ArithMathOpcode opc, Fn &&fn) {
  using O = ArithMathOpcode;
  using T = ScalarType;
  using V = ScalarValue;
  switch (opc) {
  // Integer to integer: extend or truncate, by the source's sign or not.
  case O::ExtSI:
  case O::TruncI:
  case O::IndexCast:
    return fn([](T src, T dst, V v) {
      return V::ofInt(wrapInt(asSigned(v.i, src.width), dst.width));
    });
  case O::ExtUI:
  case O::IndexCastUI:
    return fn([](T src, T dst, V v) {
      return V::ofInt(
          wrapInt(static_cast<int64_t>(asUnsigned(v.i, src.width)), dst.width));
    });
  case O::SIToFP:
    return fn([](T src, T dst, V v) {
      return V::ofFloat(
          roundTo(dst, static_cast<double>(asSigned(v.i, src.width))));
    });
  case O::UIToFP:
    return fn([](T src, T dst, V v) {
      return V::ofFloat(
          roundTo(dst, static_cast<double>(asUnsigned(v.i, src.width))));
    });
  case O::FPToSI:
    return fn([](T, T dst, V v) {
      return V::ofInt(floatToInt(v.f, /*isSigned=*/true, dst.width));
    });
  case O::FPToUI:
    return fn([](T, T dst, V v) {
      return V::ofInt(floatToInt(v.f, /*isSigned=*/false, dst.width));
    });
  case O::ExtF:
  case O::TruncF:
    return fn([](T, T dst, V v) { return V::ofFloat(roundTo(dst, v.f)); });
  case O::Bitcast:
    return fn([](T src, T dst, V v) { return fromBits(dst, toBits(src, v)); });
  default:
    break;
  }
  llvm_unreachable("not a Cast opcode");
}

/// A Cast opcode applied to `v` of type `src`, giving a value of `dst`.
ScalarValue evalCast(ArithMathOpcode opc, ScalarType src, ScalarType dst,
                     ScalarValue v);

} // namespace flash::sem

#endif // FLASHC_SEMANTICS_SCALAROPS_H

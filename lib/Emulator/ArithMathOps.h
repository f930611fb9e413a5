//===- ArithMathOps.h - arith/math ops over the register file ---*- C++ -*-===//
//
// The emulator runs the arith / math ops of flashc/Semantics: the compiler
// classifies an op with sem::classifyArithMath, and evaluateArithMath runs it
// over every cell of its result (every thread, every vector element) with
// the library's semantics. What each op computes, and which ops there are,
// is the library's, so the emulator and the interpreter agree by
// construction; this file only walks the cells.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_ARITHMATHOPS_H
#define FLASH_LIB_EMULATOR_ARITHMATHOPS_H

#include "ValueModel.h"

#include "flashc/Semantics/ArithMathOpcode.h"

namespace flash::emu {

/// The cells one arith/math op reads and writes. Operands and result hold
/// `resultElems` cells per thread, element-major over `threads` threads (cell
/// i belongs to thread i % threads), except a select's condition, which may
/// hold one cell per thread for vector operands (`aElems` == 1).
struct ArithMathCells {
  Cell *result;
  Cell *result2; ///< the second result (IntMulExtended's high words), or null
  const Cell *a, *b, *c; ///< the operands in order; null past the arity
  uint32_t resultElems, aElems;
  sem::ScalarType resultType;
  sem::ScalarType sourceType; ///< of `a` (what casts and compares read)
  int64_t threads;
};

/// Computes `op` for every cell of `x.result`. An integer division by zero is
/// an error only in an active thread (mask[t]): returns the first such
/// thread, else -1.
int64_t evaluateArithMath(const sem::ArithMathOp &op, const ArithMathCells &x,
                          const uint8_t *mask);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_ARITHMATHOPS_H

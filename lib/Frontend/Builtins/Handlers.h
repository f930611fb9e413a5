//===- Handlers.h - The handlers the registry's rows point to -------------===//
//
// Each handler checks the operands of one builtin and builds its IR; the
// registry has already checked the callee, its keywords and the number of
// arguments. Grouped by family, one file each.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_BUILTINS_HANDLERS_H
#define FLASH_FRONTEND_BUILTINS_HANDLERS_H

#include "Builtins/Builtins.h"

#include "flashc/Dialect/Tile/TileDialect.h"

namespace flash::frontend {

// Math.cpp: elementwise math.
OptVal emitCdiv(BuiltinCall &call);
OptVal emitMin(BuiltinCall &call);
OptVal emitMax(BuiltinCall &call); // max(a, b) or the reduction max(x, axis=K)
OptVal emitWhere(BuiltinCall &call);
OptVal emitCast(BuiltinCall &call);
// Bit operations on i32 (u32 bit patterns): bit_xor, bit_and, bit_or, shl,
// shr (logical), umulhi, umul_wide.
OptVal emitBitXor(BuiltinCall &call);
OptVal emitBitAnd(BuiltinCall &call);
OptVal emitBitOr(BuiltinCall &call);
OptVal emitShl(BuiltinCall &call);
OptVal emitShr(BuiltinCall &call);
OptVal emitUMulHi(BuiltinCall &call);
OptVal emitUMulWide(BuiltinCall &call);
/// Appends the rows of the unary math table (abs, exp, ...) to `registry`.
void appendUnaryMathBuiltins(std::vector<Builtin> &registry);

// Reduce.cpp: reductions along one axis.
OptVal emitReduction(BuiltinCall &call, tile::ReduceKind kind);
OptVal emitSum(BuiltinCall &call);

// Tile.cpp: program indices and tile construction.
OptVal emitProgramId(BuiltinCall &call);
OptVal emitNumPrograms(BuiltinCall &call);
OptVal emitArange(BuiltinCall &call);
OptVal emitZerosOrFull(BuiltinCall &call);
/// dtype(x): the element type of a tile, a scalar or a tensor parameter.
OptVal emitDtype(BuiltinCall &call);
OptVal emitTrans(BuiltinCall &call);
OptVal emitDot(BuiltinCall &call);

// Attention.cpp: the online-softmax ops.
OptVal emitOnlineSoftmax(BuiltinCall &call);
OptVal emitFinalize(BuiltinCall &call);

// Memory.cpp: windows of tensor parameters.
OptVal emitLoad(BuiltinCall &call);
/// store() or atomic_add() used as an expression: they have no value.
OptVal emitStoreValue(BuiltinCall &call);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_BUILTINS_HANDLERS_H

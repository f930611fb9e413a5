//===- ExecHandlers.h - What runs each kind of instruction ------*- C++ -*-===//
//
// The exec handlers a compile handler can pick for its Instr (Program.h), by
// the file that defines them. Each comment says which Instr fields it reads.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_EXECHANDLERS_H
#define FLASH_LIB_EMULATOR_EXECHANDLERS_H

#include "Program.h"

namespace flash::emu {

// Executor.cpp: control flow, special registers, arith/math ops.

/// scf.if: condition a; branches and results in ifs[aux].
bool execIf(Executor &, const Instr &, const ActiveThreads &);
/// scf.for: bounds, iter_args and body in fors[aux].
bool execFor(Executor &, const Instr &, const ActiveThreads &);
/// cf.assert: the first active thread whose condition a is false fails the
/// launch with the op's message.
bool execAssert(Executor &, const Instr &, const ActiveThreads &);
/// A special register (imm: SReg) into res.
bool execSReg(Executor &, const Instr &, const ActiveThreads &);
/// An arith/math op (ArithMathOps.h): arith, res = f(a, b, c); sk: result
/// kind, sk2: kind of a.
bool execArithMath(Executor &, const Instr &, const ActiveThreads &);

enum SReg : int64_t {
  SR_TidX,
  SR_TidY,
  SR_TidZ,
  SR_NTidX,
  SR_NTidY,
  SR_NTidZ,
  SR_CtaX,
  SR_CtaY,
  SR_CtaZ,
  SR_NCtaX,
  SR_NCtaY,
  SR_NCtaZ,
  SR_Lane,
  SR_Warp,
  SR_NWarp,
};

// ValueExec.cpp: moves between and within values, address arithmetic.

/// res = broadcast of a (one cell per thread, or as many as res).
bool execBroadcast(Executor &, const Instr &, const ActiveThreads &);
/// res = the scalars lists[aux].
bool execFromElements(Executor &, const Instr &, const ActiveThreads &);
/// res = a[imm], or a[b] per thread when imm < 0.
bool execExtract(Executor &, const Instr &, const ActiveThreads &);
/// res = c with a at imm, or at b per thread when imm < 0.
bool execInsert(Executor &, const Instr &, const ActiveThreads &);
/// res = elements ilists[aux] of a ++ b (negative: 0).
bool execShuffle(Executor &, const Instr &, const ActiveThreads &);
/// res = field imm of struct a.
bool execExtractValue(Executor &, const Instr &, const ActiveThreads &);
/// res = struct c with field imm set to a.
bool execInsertValue(Executor &, const Instr &, const ActiveThreads &);
/// res = the bytes of a (same total size) reinterpreted.
bool execBitcast(Executor &, const Instr &, const ActiveThreads &);
/// res = prmt.b32 of a (bytes 0-3) and b (bytes 4-7) by selector c, each
/// result byte the pool byte its selector nibble names (the default mode;
/// a nibble's bit 3 replicates the byte's sign bit).
bool execPermute(Executor &, const Instr &, const ActiveThreads &);
/// res = pointer a + geps[aux].
bool execGEP(Executor &, const Instr &, const ActiveThreads &);

// Memory.cpp: loads and stores (global or shared by sk2), global atomics,
// sanitized.

/// res = *a (alignment imm).
bool execLoad(Executor &, const Instr &, const ActiveThreads &);
/// *a = b (alignment imm).
bool execStore(Executor &, const Instr &, const ActiveThreads &);
/// res = *a; *a += b, atomically on global f32 (alignment imm).
bool execAtomicAdd(Executor &, const Instr &, const ActiveThreads &);

// WarpExec.cpp: warp-wide ops through WarpOps.h, barriers, cp.async.

/// res = shfl.sync(lists[aux] = {mask, value, offset, clamp}), mode imm;
/// imm2: res also holds the valid bit.
bool execShfl(Executor &, const Instr &, const ActiveThreads &);
/// res = mma.sync m16n8k16 of mmas[aux].
bool execMma(Executor &, const Instr &, const ActiveThreads &);
/// res = ldmatrix.x{imm} from row addresses a; imm2: .trans.
bool execLdMatrix(Executor &, const Instr &, const ActiveThreads &);
/// cp.async of imm bytes from global b to shared a (c: src-size or -1).
bool execCpAsync(Executor &, const Instr &, const ActiveThreads &);
bool execCpAsyncCommit(Executor &, const Instr &, const ActiveThreads &);
/// cp.async.wait_group imm.
bool execCpAsyncWait(Executor &, const Instr &, const ActiveThreads &);
/// A CTA-wide barrier; a: barrier id or -1.
bool execBarrier(Executor &, const Instr &, const ActiveThreads &);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_EXECHANDLERS_H

//===- AsyncExec.h - Exec handlers of the asynchronous ops ------*- C++ -*-===//
//
// What runs each op CompileAsync.cpp compiles (AsyncExec.cpp), and which Instr
// fields it reads. pred: a predicate value id, or -1 for none.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_LIB_EMULATOR_ASYNCEXEC_H
#define FLASH_LIB_EMULATOR_ASYNCEXEC_H

#include "Program.h"

namespace flash::emu {

/// mbarrier.init of barrier a with count b; imm2: pred.
bool execMbarrierInit(Executor &, const Instr &, const ActiveThreads &);
/// mbarrier.inval of barrier a.
bool execMbarrierInval(Executor &, const Instr &, const ActiveThreads &);
/// arrive on barrier a (count b, or 1 if b < 0) after expect-tx of c bytes
/// (c >= 0); imm: arrive_drop; res: the state (or -1); imm2: pred.
bool execMbarrierArrive(Executor &, const Instr &, const ActiveThreads &);
/// cp.async.mbarrier.arrive on barrier a; imm: .noinc.
bool execCpAsyncArrive(Executor &, const Instr &, const ActiveThreads &);
/// expect-tx (imm 0) or complete-tx (imm 1) of b bytes on barrier a.
bool execMbarrierTx(Executor &, const Instr &, const ActiveThreads &);
/// A wait on barrier a for parity b (imm2: b is an arrive's state); imm:
/// blocking; res: whether the phase had completed (or -1).
bool execMbarrierWait(Executor &, const Instr &, const ActiveThreads &);
/// bar.sync (imm 1) or bar.arrive (imm 0) on named barrier a (-1: 0) of b
/// threads (-1: the CTA).
bool execNamedBarrier(Executor &, const Instr &, const ActiveThreads &);
bool execSetMaxNReg(Executor &, const Instr &, const ActiveThreads &);
/// res = elect.sync(membermask a, -1: all lanes).
bool execElect(Executor &, const Instr &, const ActiveThreads &);
/// TMA load: lists[aux] = {dst, map, mbar, coords...}; imm2: pred.
bool execTmaLoad(Executor &, const Instr &, const ActiveThreads &);
/// TMA store: lists[aux] = {map, src, coords...}; imm2: pred.
bool execTmaStore(Executor &, const Instr &, const ActiveThreads &);
/// cp.async.bulk.commit_group.
bool execBulkCommit(Executor &, const Instr &, const ActiveThreads &);
/// cp.async.bulk.wait_group{.read} imm.
bool execBulkWait(Executor &, const Instr &, const ActiveThreads &);

/// Whether `fn` is one of the handlers above (the program uses the
/// asynchronous unit).
bool isAsyncExec(ExecFn fn);

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_ASYNCEXEC_H

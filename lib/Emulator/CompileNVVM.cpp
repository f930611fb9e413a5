//===- CompileNVVM.cpp - nvvm and gpu dialect ops -------------------------===//
//
// Special registers (nvvm.read.ptx.sreg.* and the gpu id ops), barriers,
// and the warp-level instructions WarpExec.cpp runs through WarpOps.h:
// shfl.sync, mma.sync, ldmatrix, cp.async; prmt.
//
//===----------------------------------------------------------------------===//

#include "AsyncUnit.h"
#include "ExecHandlers.h"
#include "Program.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace flash::emu {

//===----------------------------------------------------------------------===//
// Special registers
//===----------------------------------------------------------------------===//

static constexpr std::pair<llvm::StringLiteral, SReg> kNVVMSRegs[] = {
    {"nvvm.read.ptx.sreg.tid.x", SR_TidX},
    {"nvvm.read.ptx.sreg.tid.y", SR_TidY},
    {"nvvm.read.ptx.sreg.tid.z", SR_TidZ},
    {"nvvm.read.ptx.sreg.ntid.x", SR_NTidX},
    {"nvvm.read.ptx.sreg.ntid.y", SR_NTidY},
    {"nvvm.read.ptx.sreg.ntid.z", SR_NTidZ},
    {"nvvm.read.ptx.sreg.ctaid.x", SR_CtaX},
    {"nvvm.read.ptx.sreg.ctaid.y", SR_CtaY},
    {"nvvm.read.ptx.sreg.ctaid.z", SR_CtaZ},
    {"nvvm.read.ptx.sreg.nctaid.x", SR_NCtaX},
    {"nvvm.read.ptx.sreg.nctaid.y", SR_NCtaY},
    {"nvvm.read.ptx.sreg.nctaid.z", SR_NCtaZ},
    {"nvvm.read.ptx.sreg.laneid", SR_Lane},
    {"nvvm.read.ptx.sreg.warpid", SR_Warp},
    {"nvvm.read.ptx.sreg.nwarpid", SR_NWarp},
};

static bool compileSRegOf(ProgramBuilder &b, Operation *op, SReg reg) {
  Instr I = ProgramBuilder::instr(op, execSReg);
  I.imm = reg;
  if (!b.defineResult(I))
    return false;
  b.emit(I);
  return true;
}

static bool compileNVVMSReg(ProgramBuilder &b, Operation *op) {
  StringRef name = op->getName().getStringRef();
  for (const auto &[regName, reg] : kNVVMSRegs)
    if (name == regName)
      return compileSRegOf(b, op, reg);
  llvm_unreachable("registered for the names of kNVVMSRegs only");
}

static bool compileGPUId(ProgramBuilder &b, Operation *op) {
  auto dim = [](gpu::Dimension d) { return static_cast<int64_t>(d); };
  int64_t reg = SR_Lane;
  if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
    reg = SR_TidX + dim(o.getDimension());
  else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
    reg = SR_NTidX + dim(o.getDimension());
  else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
    reg = SR_CtaX + dim(o.getDimension());
  else if (auto o = dyn_cast<gpu::GridDimOp>(op))
    reg = SR_NCtaX + dim(o.getDimension());
  return compileSRegOf(b, op, static_cast<SReg>(reg));
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

static bool compileBarrier0(ProgramBuilder &b, Operation *op) {
  b.emit(ProgramBuilder::instr(op, execBarrier));
  return true;
}

static bool compileBarrier(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::BarrierOp>(op);
  if (o.getNumberOfThreads())
    return compileNamedBarrier(b, op);
  if (op->getNumResults() || o.getReductionOp())
    return b.fail(op, "only barriers without reduction are supported");
  Instr I = ProgramBuilder::instr(op, execBarrier);
  I.a = o.getBarrierId() ? b.idOf(o.getBarrierId()) : -1;
  b.emit(I);
  return true;
}

//===----------------------------------------------------------------------===//
// Warp-level instructions
//===----------------------------------------------------------------------===//

static ShflMode shflMode(NVVM::ShflKind kind) {
  switch (kind) {
  case NVVM::ShflKind::bfly:
    return ShflMode::Bfly;
  case NVVM::ShflKind::up:
    return ShflMode::Up;
  case NVVM::ShflKind::down:
    return ShflMode::Down;
  case NVVM::ShflKind::idx:
    return ShflMode::Idx;
  }
  llvm_unreachable("unknown shfl kind");
}

static bool compileShfl(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::ShflOp>(op);
  Instr I = ProgramBuilder::instr(op, execShfl);
  if (!b.defineResult(I))
    return false;
  I.aux = b.program.lists.size();
  b.program.lists.push_back({b.idOf(o.getThreadMask()), b.idOf(o.getVal()),
                             b.idOf(o.getOffset()),
                             b.idOf(o.getMaskAndClamp())});
  I.sk = b.val(b.idOf(o.getVal())).sk;
  if (I.sk != SK::I32 && I.sk != SK::F32)
    return b.fail(op, "shfl.sync of " + typeStr(o.getVal().getType()));
  I.imm = static_cast<int64_t>(shflMode(o.getKind()));
  I.imm2 = op->hasAttr("return_value_and_is_valid") ? 1 : 0;
  b.emit(I);
  return true;
}

/// prmt.b32 in its default mode with both source words: what transposes
/// bytes (the f8e4m3 V copy of WgmmaOpToSIMT).
static bool compilePermute(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::PermuteOp>(op);
  if (o.getMode() != NVVM::PermuteMode::DEFAULT || !o.getHi())
    return b.fail(op, "prmt is supported in its default mode with two "
                      "source words only");
  Instr I = ProgramBuilder::instr(op, execPermute);
  if (!b.defineResult(I))
    return false;
  I.a = b.idOf(o.getLo());
  I.b = b.idOf(o.getHi());
  I.c = b.idOf(o.getSelector());
  I.sk = SK::I32;
  b.emit(I);
  return true;
}

/// The A/B register form and multiplicand type of an mma.sync.
static bool mmaOperandForm(ProgramBuilder &b, NVVM::MmaOp o, MmaInfo &mi) {
  const ValInfo &a0 = b.val(mi.a[0]);
  mi.aPacked = a0.n == 1;
  if (mi.aPacked && a0.sk != SK::I32)
    return b.fail(o, "mma.sync A registers must be i32 or vector<2x16>");
  if (!mi.aPacked && (a0.n != 2 || (a0.sk != SK::F16 && a0.sk != SK::BF16)))
    return b.fail(o, "mma.sync A registers must be i32 or vector<2x16>");
  bool bf16 = !mi.aPacked && a0.sk == SK::BF16;
  if (auto t = o.getMultiplicandAPtxType()) {
    if (*t == NVVM::MMATypes::bf16)
      bf16 = true;
    else if (*t != NVVM::MMATypes::f16)
      return b.fail(o, "mma.sync multiplicand type must be f16 or bf16");
  }
  mi.type = bf16 ? ElementType::BF16 : ElementType::F16;
  for (int i = 0; i < 2; ++i)
    if ((b.val(mi.b[i]).n == 1) != mi.aPacked)
      return b.fail(o, "mma.sync A and B registers differ in form");
  return true;
}

/// m16n8k16 row.col with 4 A, 2 B and 4 C registers: what WarpOps runs.
static bool isM16N8K16RowCol(NVVM::MmaOp o) {
  auto shape = o.getShapeAttr();
  return shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 &&
         o.getLayoutA() == NVVM::MMALayout::row &&
         o.getLayoutB() == NVVM::MMALayout::col &&
         o.getOperandA().size() == 4 && o.getOperandB().size() == 2 &&
         o.getOperandC().size() == 4;
}

static bool compileMma(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::MmaOp>(op);
  Instr I = ProgramBuilder::instr(op, execMma);
  if (!isM16N8K16RowCol(o))
    return b.fail(op, "only mma.sync m16n8k16 row.col with f16/bf16 "
                      "operands and 4 x f32 accumulators is supported");
  if (!b.defineResult(I))
    return false;
  auto rt = typeInfo(o.getType());
  if (rt->n != 4 || rt->sk != SK::F32 || !rt->kinds.empty())
    return b.fail(op, "mma.sync result must be 4 x f32");
  MmaInfo mi;
  for (int i = 0; i < 4; ++i)
    mi.a[i] = b.idOf(o.getOperandA()[i]);
  for (int i = 0; i < 2; ++i)
    mi.b[i] = b.idOf(o.getOperandB()[i]);
  for (int i = 0; i < 4; ++i) {
    mi.c[i] = b.idOf(o.getOperandC()[i]);
    if (b.val(mi.c[i]).sk != SK::F32 || b.val(mi.c[i]).n != 1)
      return b.fail(op, "mma.sync accumulator operands must be f32");
  }
  if (!mmaOperandForm(b, o, mi))
    return false;
  I.aux = b.program.mmas.size();
  b.program.mmas.push_back(mi);
  b.emit(I);
  return true;
}

static bool compileLdMatrix(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::LdMatrixOp>(op);
  Instr I = ProgramBuilder::instr(op, execLdMatrix);
  I.a = b.idOf(o.getPtr());
  if (!b.defineResult(I))
    return false;
  I.imm = o.getNum();
  I.imm2 = o.getLayout() == NVVM::MMALayout::col ? 1 : 0;
  auto rt = typeInfo(o.getType());
  if (rt->n != (unsigned)I.imm || rt->sk != SK::I32 || !rt->kinds.empty())
    return b.fail(op, "ldmatrix result must be num x i32");
  b.emit(I);
  return true;
}

static bool compileCpAsync(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::CpAsyncOp>(op);
  Instr I = ProgramBuilder::instr(op, execCpAsync);
  I.a = b.idOf(o.getDst());
  I.b = b.idOf(o.getSrc());
  I.c = o.getCpSize() ? b.idOf(o.getCpSize()) : -1;
  I.imm = o.getSize();
  b.emit(I);
  return true;
}

static bool compileCpAsyncCommit(ProgramBuilder &b, Operation *op) {
  b.emit(ProgramBuilder::instr(op, execCpAsyncCommit));
  return true;
}

static bool compileCpAsyncWait(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execCpAsyncWait);
  I.imm = cast<NVVM::CpAsyncWaitGroupOp>(op).getN();
  b.emit(I);
  return true;
}

/// membar orders a thread's memory accesses; the emulator performs each
/// thread's accesses in program order and at once for the whole CTA, so
/// there is nothing to order.
static bool compileMembar(ProgramBuilder &, Operation *) { return true; }

/// gpu.return ends the kernel body: nothing to run.
static bool compileReturn(ProgramBuilder &, Operation *) { return true; }

void addNVVMOps(OpHandlers &handlers) {
  for (const auto &entry : kNVVMSRegs)
    handlers.add(entry.first, compileNVVMSReg);
  handlers.add<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::GridDimOp, gpu::BlockDimOp,
               gpu::LaneIdOp>(compileGPUId);
  handlers.add<NVVM::Barrier0Op, gpu::BarrierOp>(compileBarrier0);
  handlers.add<NVVM::BarrierOp>(compileBarrier);
  handlers.add<NVVM::ShflOp>(compileShfl);
  handlers.add<NVVM::PermuteOp>(compilePermute);
  handlers.add<NVVM::MmaOp>(compileMma);
  handlers.add<NVVM::LdMatrixOp>(compileLdMatrix);
  handlers.add<NVVM::CpAsyncOp>(compileCpAsync);
  handlers.add<NVVM::CpAsyncCommitGroupOp>(compileCpAsyncCommit);
  handlers.add<NVVM::CpAsyncWaitGroupOp>(compileCpAsyncWait);
  handlers.add<NVVM::MembarOp>(compileMembar);
  handlers.add<gpu::ReturnOp>(compileReturn);
  addAsyncOps(handlers);
  addWgmmaOps(handlers);
}

} // namespace flash::emu

//===- CompileLLVM.cpp - llvm dialect ops (and arith.bitcast) -------------===//
//
// Structs, pointers and memory: extractvalue / insertvalue, addressof of
// shared globals, getelementptr, load, store, atomicrmw, and the bitcasts between
// values of one byte size.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Program.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace flash::emu {

static bool compileExtractValue(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::ExtractValueOp>(op);
  Instr I = ProgramBuilder::instr(op, execExtractValue);
  I.a = b.idOf(o.getContainer());
  if (!b.defineResult(I))
    return false;
  if (o.getPosition().size() != 1)
    return b.fail(op, "only one-level extractvalue is supported");
  I.imm = o.getPosition()[0];
  b.emit(I);
  return true;
}

static bool compileInsertValue(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::InsertValueOp>(op);
  Instr I = ProgramBuilder::instr(op, execInsertValue);
  I.a = b.idOf(o.getValue());
  I.c = b.idOf(o.getContainer());
  if (!b.defineResult(I))
    return false;
  if (o.getPosition().size() != 1)
    return b.fail(op, "only one-level insertvalue is supported");
  I.imm = o.getPosition()[0];
  b.emit(I);
  return true;
}

/// A shared global's address is a constant: its offset in the shared window.
static bool compileAddressOf(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::AddressOfOp>(op);
  auto gm = op->getParentOfType<gpu::GPUModuleOp>();
  Operation *g =
      gm ? SymbolTable::lookupSymbolIn(gm, o.getGlobalNameAttr()) : nullptr;
  const auto &bases = b.program.shared.base;
  auto it = g ? bases.find(g) : bases.end();
  if (it == bases.end())
    return b.fail(op, "address of '" + o.getGlobalName().str() +
                          "', which is not a shared-memory (addr_space "
                          "3) global of the gpu.module");
  int32_t id;
  if (!b.define(op, o.getResult(), id))
    return false;
  Cell offset;
  offset.i = it->second;
  b.program.constants.push_back({id, {offset}});
  return true;
}

/// The byte stride of each GEP index: the element type's size for the first,
/// then the size of the array or vector element stepped into.
static bool gepOffsets(ProgramBuilder &b, LLVM::GEPOp o, GepInfo &gi) {
  Type cur = o.getElemType();
  bool first = true;
  for (auto idx : o.getIndices()) {
    int64_t scale;
    if (first) {
      auto s = llvmTypeSize(cur);
      if (!s)
        return b.fail(o, "GEP over unsupported type " + typeStr(cur));
      scale = *s;
      first = false;
    } else if (auto a = dyn_cast<LLVM::LLVMArrayType>(cur)) {
      cur = a.getElementType();
      auto s = llvmTypeSize(cur);
      if (!s)
        return b.fail(o, "GEP over unsupported type");
      scale = *s;
    } else if (auto v = dyn_cast<VectorType>(cur)) {
      cur = v.getElementType();
      scale = *llvmTypeSize(cur);
    } else {
      return b.fail(o,
                    "GEP into " + typeStr(cur) + " is not supported (structs)");
    }
    if (auto attr = dyn_cast<IntegerAttr>(idx))
      gi.constOffset += attr.getInt() * scale;
    else
      gi.dyn.push_back({b.idOf(cast<Value>(idx)), scale});
  }
  return true;
}

static bool compileGEP(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::GEPOp>(op);
  Instr I = ProgramBuilder::instr(op, execGEP);
  I.a = b.idOf(o.getBase());
  if (!b.defineResult(I))
    return false;
  GepInfo gi;
  if (!gepOffsets(b, o, gi))
    return false;
  I.aux = b.program.geps.size();
  b.program.geps.push_back(std::move(gi));
  b.emit(I);
  return true;
}

static bool compileLoad(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::LoadOp>(op);
  Instr I = ProgramBuilder::instr(op, execLoad);
  I.a = b.idOf(o.getAddr());
  if (!b.defineResult(I))
    return false;
  if (!b.val(I.res).n || typeInfo(o.getType())->kinds.size())
    return b.fail(op, "loads of structs are not supported");
  I.sk = b.val(I.res).sk;
  I.sk2 = b.val(I.a).sk;
  I.imm = o.getAlignment() ? *o.getAlignment() : byteSize(I.sk);
  b.emit(I);
  return true;
}

static bool compileStore(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::StoreOp>(op);
  Instr I = ProgramBuilder::instr(op, execStore);
  I.a = b.idOf(o.getAddr());
  I.b = b.idOf(o.getValue());
  if (typeInfo(o.getValue().getType())->kinds.size())
    return b.fail(op, "stores of structs are not supported");
  I.sk = b.val(I.b).sk;
  I.sk2 = b.val(I.a).sk;
  I.imm = o.getAlignment() ? *o.getAlignment() : byteSize(I.sk);
  b.emit(I);
  return true;
}

/// Only what flashc emits: a relaxed fadd of f32 in global memory.
static bool compileAtomicRMW(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::AtomicRMWOp>(op);
  Instr I = ProgramBuilder::instr(op, execAtomicAdd);
  I.a = b.idOf(o.getPtr());
  I.b = b.idOf(o.getVal());
  if (!b.defineResult(I))
    return false;
  if (o.getBinOp() != LLVM::AtomicBinOp::fadd || !o.getVal().getType().isF32())
    return b.fail(op, "only atomicrmw fadd of f32 is supported");
  if (b.val(I.a).sk != SK::PG)
    return b.fail(op, "only atomics on global memory are supported");
  I.imm = o.getAlignment() ? *o.getAlignment() : 4;
  b.program.serialCTAs = true; // the additions round in CTA order
  b.emit(I);
  return true;
}

/// llvm.bitcast and arith.bitcast: the same bytes, reshaped (e.g.
/// vector<2xf16> <-> i32).
static bool compileBitcast(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execBitcast);
  if (op->getNumResults() != 1)
    return b.fail(op, "expected one result", Error::Kind::Internal);
  if (!b.defineResult(I))
    return false;
  I.a = b.idOf(op->getOperand(0));
  auto in = llvmTypeSize(op->getOperand(0).getType());
  auto out = llvmTypeSize(op->getResult(0).getType());
  if (!in || !out || *in != *out || *in > 64)
    return b.fail(op, "unsupported bitcast");
  b.emit(I);
  return true;
}

/// llvm.ptrtoint of a shared pointer: its byte offset in the CTA's shared
/// window, which is what the hardware's shared-window address is (wgmma
/// descriptors are built from it). Global pointers have no such address here.
static bool compilePtrToInt(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::PtrToIntOp>(op);
  auto ptr = dyn_cast<LLVM::LLVMPointerType>(o.getArg().getType());
  if (!ptr || ptr.getAddressSpace() != 3)
    return b.fail(op, "ptrtoint is supported for shared (addr_space 3) "
                      "pointers only");
  return b.emitMove(op);
}

void addLLVMOps(OpHandlers &handlers) {
  handlers.add<LLVM::ExtractValueOp>(compileExtractValue);
  handlers.add<LLVM::InsertValueOp>(compileInsertValue);
  handlers.add<LLVM::AddressOfOp>(compileAddressOf);
  handlers.add<LLVM::GEPOp>(compileGEP);
  handlers.add<LLVM::LoadOp>(compileLoad);
  handlers.add<LLVM::StoreOp>(compileStore);
  handlers.add<LLVM::AtomicRMWOp>(compileAtomicRMW);
  handlers.add<LLVM::BitcastOp, arith::BitcastOp>(compileBitcast);
  handlers.add<LLVM::PtrToIntOp>(compilePtrToInt);
}

} // namespace flash::emu

//===- Program.cpp - Compiling a gpu.func to the emulator's instructions --===//
//
// The kernel's shape (block size, shared layout, arguments) and the op walk;
// the ops themselves compile in the Compile*.cpp family files.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "ExecHandlers.h"

#include "flashc/Dialect/Tile/Attributes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace flash::emu {

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

bool ProgramBuilder::fail(Operation *op, const std::string &what,
                          Error::Kind kind) {
  error.kind = kind;
  error.message = op->getName().getStringRef().str() + ": " + what;
  error.loc = op->getLoc();
  return false;
}

bool ProgramBuilder::define(Operation *op, Value v, int32_t &id) {
  auto ti = typeInfo(v.getType());
  if (!ti)
    return fail(op, "values of type " + typeStr(v.getType()) +
                        " are not supported by the emulator");
  // Bounded before the register file is allocated at launch.
  uint64_t cells = uint64_t(ti->n) * uint64_t(program.T);
  if (program.numCells + cells > kMaxRegisterCells)
    return fail(op,
                "the kernel's values need more than " +
                    std::to_string(kMaxRegisterCells) +
                    " register cells per CTA (a value of type " +
                    typeStr(v.getType()) + " holds " + std::to_string(cells) +
                    "), more than the emulator holds",
                Error::Kind::Runtime);
  ValInfo vi;
  vi.base = program.numCells;
  vi.n = ti->n;
  vi.sk = ti->sk;
  program.numCells += cells;
  id = program.vals.size();
  program.vals.push_back(vi);
  valueIds[v] = id;
  return true;
}

bool ProgramBuilder::defineAll(Operation *op, ValueRange vs,
                               std::vector<int32_t> &ids) {
  for (Value v : vs) {
    int32_t id;
    if (!define(op, v, id))
      return false;
    ids.push_back(id);
  }
  return true;
}

uint32_t ProgramBuilder::emit(Instr I) {
  uint32_t at = here();
  I.next = at + 1;
  program.code.push_back(I);
  return at;
}

bool ProgramBuilder::emitMove(mlir::Operation *op) {
  Instr I = instr(op, execBroadcast);
  I.a = idOf(op->getOperand(0));
  if (!defineResult(I))
    return false;
  emit(I);
  return true;
}

/// Block size from known_block_size, else 32 * flashc.num_warps.
static bool blockSize(gpu::GPUFuncOp f, std::array<int64_t, 3> &block) {
  if (auto kb = f.getKnownBlockSizeAttr()) {
    auto sizes = kb.asArrayRef();
    for (size_t i = 0; i < sizes.size() && i < 3; ++i)
      block[i] = sizes[i];
    return true;
  }
  if (auto nw = f->getAttrOfType<IntegerAttr>(flash::simt::kNumWarpsAttrName)) {
    block = {32 * nw.getInt(), 1, 1};
    return true;
  }
  return false;
}

bool ProgramBuilder::layOutShared(gpu::GPUFuncOp f) {
  SharedLayout &s = program.shared;
  if (auto gm = f->getParentOfType<gpu::GPUModuleOp>()) {
    for (auto g : gm.getOps<LLVM::GlobalOp>()) {
      if (g.getAddrSpace() != 3)
        continue;
      auto size = llvmTypeSize(g.getGlobalType());
      if (!size)
        return fail(g, "shared global of unsupported type " +
                           typeStr(g.getGlobalType()));
      int64_t align = g.getAlignment() ? *g.getAlignment() : 16;
      if (align < 1)
        align = 1;
      s.total = (s.total + align - 1) / align * align;
      s.base[g.getOperation()] = s.total;
      s.total += *size;
    }
  }
  s.limit = s.total;
  s.limitWhy = "the shared globals' size";
  if (auto sb =
          f->getAttrOfType<IntegerAttr>(flash::simt::kSharedBytesAttrName)) {
    if (sb.getInt() > 0 && sb.getInt() < s.limit) {
      s.limit = sb.getInt();
      s.limitWhy = "the kernel's flashc.shared_bytes";
    }
  }
  return true;
}

bool ProgramBuilder::compileKernel(gpu::GPUFuncOp f) {
  program.kernelName = f.getName().str();
  if (!blockSize(f, program.block))
    return fail(f,
                "the kernel has neither known_block_size nor "
                "flashc.num_warps: the block size is unknown",
                Error::Kind::Internal);
  const std::array<int64_t, 3> &block = program.block;
  program.T = block[0] * block[1] * block[2];
  if (program.T <= 0 || program.T > 1024)
    return fail(f,
                "the kernel has " + std::to_string(program.T) +
                    " threads per CTA, more than the 1024 a GPU launches",
                Error::Kind::Runtime);
  program.numWarps = (program.T + 31) / 32;
  if (!layOutShared(f))
    return false;

  Block &entry = f.getBody().front();
  if (!f.getBody().hasOneBlock())
    return fail(f, "the kernel body has more than one block (the "
                   "emulator runs structured control flow only)");
  program.numArgs = entry.getNumArguments();
  for (BlockArgument arg : entry.getArguments()) {
    int32_t id;
    if (!define(f, arg, id))
      return false;
  }
  if (!planWgmma(*this, f) || !compileBlock(entry))
    return false;
  finishWgmmaPlan(*this);
  program.topEnd = here();
  return true;
}

bool ProgramBuilder::compileBlock(Block &block) {
  for (Operation &op : block)
    if (!compileOp(&op))
      return false;
  return true;
}

bool ProgramBuilder::compileRegion(Block &block) {
  program.maxDepth = std::max(program.maxDepth, ++depth);
  bool ok = compileBlock(block);
  --depth;
  return ok;
}

static const OpHandlers &opHandlers() {
  static const OpHandlers handlers = [] {
    OpHandlers h;
    addArithOps(h);
    addVectorOps(h);
    addLLVMOps(h);
    addNVVMOps(h);
    addSCFOps(h);
    return h;
  }();
  return handlers;
}

bool ProgramBuilder::compileOp(Operation *op) {
  // Every operand must already have a slot (SSA dominance in one block tree).
  for (Value v : op->getOperands())
    if (idOf(v) < 0)
      return fail(op,
                  "operand defined outside the kernel or not yet "
                  "defined (unsupported IR form)",
                  Error::Kind::Internal);
  // arith.bitcast may reshape bytes (vector<2xf16> <-> i32), which no
  // element-wise op can: CompileLLVM's byte-level handler runs it.
  if (!wgmmaBeforeOp(*this, op))
    return false;
  bool compiled;
  if (auto arith = sem::classifyArithMath(op);
      arith && arith->opcode != sem::ArithMathOpcode::Bitcast)
    compiled = compileArithMath(*this, op, *arith);
  else if (CompileFn compile =
               opHandlers().lookup(op->getName().getStringRef()))
    compiled = compile(*this, op);
  else
    return fail(op, "op is not supported by the emulator");
  return compiled && wgmmaAfterOp(*this, op);
}

} // namespace flash::emu

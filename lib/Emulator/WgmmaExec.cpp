//===- WgmmaExec.cpp - sm_90a warpgroup MMA in the emulator ---------------===//
//
// Compiles and runs nvvm.wgmma.fence.aligned / commit.group.sync.aligned /
// wait.group.sync.aligned, nvvm.wgmma.mma_async (SS: A and B through
// descriptors) and the register-A (RS) form, which MLIR has no op for and
// which arrives as llvm.inline_asm (parseRegisterAWgmma below). The
// arithmetic is WarpgroupOps.h's.
//
// Asynchrony. A wgmma's result is computed at issue, but its registers hold
// a pending marker (a signalling NaN naming the wgmma and the register) until
// a wgmma.wait_group covers its group; the wait then replaces every marker of
// the wgmmas it completes. Markers travel with moves, the ops that only
// rename registers (extractvalue, insertvalue, vector extract / insert /
// shuffle / from_elements / broadcast, loop-carried and if-yielded values),
// so an accumulator carried through a loop lands where it went.
//
// Sanitizer, at the SSA level (each SSA value is a register):
//   * a read of an in-flight accumulator: before every other op that reads a
//     value a wgmma result moves into, a check instruction looks for markers
//     of pending wgmmas; a wgmma whose every copy of its result was
//     overwritten before its wait is reported too (its registers were
//     written while in flight);
//   * a read or a redefinition of an RS wgmma's A registers while it is in
//     flight (check instructions before the readers and the definer);
//   * a missing wgmma.fence: before a warpgroup's first wgmma, and between a
//     non-wgmma op that produces (through moves) a wgmma's accumulator or A
//     operand and that wgmma; an in-flight accumulator chained into the next
//     wgmma of the same shape needs none;
//   * the .aligned ops executed by part of a warpgroup; descriptors that
//     differ across the warpgroup, set reserved bits or a base offset, or
//     place a swizzle atom of the operand (its start, or one its stride or
//     leading byte offset reaches) off the first row of its pattern, or
//     with its rows past that row's end; operand bytes outside the
//     shared window, never written, racing with another thread's write in
//     the same barrier interval, written through the generic proxy with no
//     fence.proxy.async since (Memory's proxy state), or written while the
//     wgmma reading them is in flight.
//
//===----------------------------------------------------------------------===//

#include "ExecHandlers.h"
#include "Executor.h"

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Emulator/WarpgroupOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdio>
#include <unordered_map>

using namespace mlir;
namespace lay = flash::tile::layout;

namespace flash::emu {

//===----------------------------------------------------------------------===//
// The RS form: llvm.inline_asm
//===----------------------------------------------------------------------===//

namespace {

/// What an RS wgmma's asm string and constraints say: the result field of
/// each D register, the inline_asm operand of each register's incoming
/// accumulator, the A registers' and B descriptor's operands, the
/// immediates; scaleDOperand >= 0 when scale-d is a runtime predicate
/// (setp.ne.b32 p, $k, 0).
struct RegisterAWgmma {
  WgmmaConfig config;
  std::vector<int> accIn;  ///< per D register: inline_asm operand index
  std::array<int, 4> aOperands{};
  int bOperand = -1;
  int scaleDOperand = -1;
};

/// Splits on `sep` outside braces, trimming spaces.
std::vector<std::string> splitTop(llvm::StringRef s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{')
      ++depth;
    if (c == '}')
      --depth;
    if (c == sep && depth == 0) {
      out.push_back(llvm::StringRef(cur).trim().str());
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(llvm::StringRef(cur).trim().str());
  return out;
}

/// "$12" -> 12.
std::optional<int> dollar(llvm::StringRef s) {
  s = s.trim();
  int v;
  if (!s.consume_front("$") || s.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

/// Parses the RS wgmma asm: optionally wrapped as
///   { .reg .pred p; setp.ne.b32 p, $k, 0;
///     wgmma.mma_async.sync.aligned.m64n<N>k16.f32.<t>.<t> {d...}, {a0..a3},
///     $b, p, <scale-a>, <scale-b>, <trans-b>; }
/// with scale-d also accepted as an immediate 0/1. $i below the number of
/// results names result field i, above it inline_asm operand i - results.
/// Each D register's incoming accumulator is the operand tied to it in the
/// constraints ("=f" outputs, then inputs, a digit naming the output it is
/// tied to). Empty error on success.
std::string parseRegisterAWgmma(LLVM::InlineAsmOp op, RegisterAWgmma &out) {
  std::string text = op.getAsmString().str();
  for (char &c : text)
    if (c == '\n' || c == '\t')
      c = ' ';
  llvm::StringRef s = llvm::StringRef(text).trim();
  // The predicate prologue.
  std::optional<int> predOperand;
  if (s.consume_front("{")) {
    s = s.trim();
    if (!s.consume_back("}"))
      return "unbalanced braces around the wgmma";
    s = s.trim();
    if (s.consume_front(".reg")) {
      auto semi = s.find(';');
      s = s.drop_front(semi + 1).trim();
    }
    if (s.consume_front("setp.ne.b32")) {
      auto semi = s.find(';');
      auto parts = splitTop(s.take_front(semi), ',');
      if (parts.size() != 3 || parts[2] != "0" || !dollar(parts[1]))
        return "expected 'setp.ne.b32 p, $k, 0;' before the wgmma";
      predOperand = *dollar(parts[1]);
      s = s.drop_front(semi + 1).trim();
    }
  }
  if (!s.consume_back(";"))
    return "the wgmma instruction must end with ';'";
  size_t space = s.find(' ');
  llvm::StringRef mnemonic = s.take_front(space);
  llvm::StringRef rest = s.drop_front(space).trim();
  if (!mnemonic.consume_front("wgmma.mma_async.sync.aligned.m64n"))
    return "not a wgmma.mma_async.sync.aligned.m64nNk16 instruction";
  size_t k = mnemonic.find("k16.f32.");
  size_t k32 = mnemonic.find("k32.f32.");
  bool fp8 = k == llvm::StringRef::npos && k32 != llvm::StringRef::npos;
  if (fp8)
    k = k32;
  if (k == llvm::StringRef::npos ||
      mnemonic.take_front(k).getAsInteger(10, out.config.n))
    return "expected m64n<N>k16.f32.<f16|bf16>.<f16|bf16> or "
           "m64n<N>k32.f32.e4m3.e4m3";
  llvm::StringRef types = mnemonic.drop_front(k + strlen("k16.f32."));
  if (!fp8 && types == "f16.f16")
    out.config.type = ElementType::F16;
  else if (!fp8 && types == "bf16.bf16")
    out.config.type = ElementType::BF16;
  else if (fp8 && types == "e4m3.e4m3")
    out.config.type = ElementType::E4M3;
  else
    return "input types must be f16.f16 or bf16.bf16 (k16) or e4m3.e4m3 "
           "(k32), got " +
           types.str();
  if (std::string e = lay::checkWgmmaN(out.config.n); !e.empty())
    return e;

  // 8-bit forms have no imm-trans-b (K-major only).
  auto ops = splitTop(rest, ',');
  size_t numOps = fp8 ? 6 : 7;
  if (ops.size() != numOps)
    return fp8 ? "expected 6 operands (d, a, b-desc, scale-d, imm-scale-a, "
                 "imm-scale-b), got " +
                     std::to_string(ops.size())
               : "expected 7 operands (d, a, b-desc, scale-d, imm-scale-a, "
                 "imm-scale-b, imm-trans-b), got " +
                     std::to_string(ops.size());
  unsigned numResults = op.getNumResults() ? 1 : 0;
  auto resType =
      numResults ? dyn_cast<LLVM::LLVMStructType>(op.getRes().getType())
                 : nullptr;
  int64_t regs = lay::wgmmaAccNumRegisters(out.config.n);
  if (!resType || int64_t(resType.getBody().size()) != regs)
    return "the result must be a struct of N/2 = " + std::to_string(regs) +
           " f32";
  int numOut = static_cast<int>(regs);
  auto braced = [](llvm::StringRef list) -> std::optional<std::vector<int>> {
    list = list.trim();
    if (!list.consume_front("{") || !list.consume_back("}"))
      return std::nullopt;
    std::vector<int> ids;
    for (auto &e : splitTop(list, ','))
      if (auto d = dollar(e))
        ids.push_back(*d);
      else
        return std::nullopt;
    return ids;
  };
  auto d = braced(ops[0]);
  if (!d || int64_t(d->size()) != regs)
    return "d must list the N/2 = " + std::to_string(regs) + " results";
  for (int i = 0; i < numOut; ++i)
    if ((*d)[i] != i)
      return "d register " + std::to_string(i) + " must be $" +
             std::to_string(i);
  auto a = braced(ops[1]);
  if (!a || a->size() != 4)
    return "a must be a list of 4 registers";
  for (int i = 0; i < 4; ++i) {
    out.aOperands[i] = (*a)[i] - numOut;
    if (out.aOperands[i] < 0)
      return "a registers must be inputs";
  }
  auto b = dollar(ops[2]);
  if (!b || *b < numOut)
    return "b-desc must be an input operand";
  out.bOperand = *b - numOut;
  if (ops[3] == "p" && predOperand)
    out.scaleDOperand = *predOperand - numOut;
  else if (ops[3] == "1" || ops[3] == "0")
    out.config.scaleD = ops[3] == "1";
  else
    return "scale-d must be 0, 1 or the predicate p set from an operand";
  auto imm = [](const std::string &s, std::initializer_list<int> ok,
                int &v) {
    if (llvm::StringRef(s).getAsInteger(10, v))
      return false;
    return std::find(ok.begin(), ok.end(), v) != ok.end();
  };
  int transB = 0;
  if (!imm(ops[4], {1, -1}, out.config.scaleA) ||
      !imm(ops[5], {1, -1}, out.config.scaleB) ||
      (!fp8 && !imm(ops[6], {0, 1}, transB)))
    return "imm-scale-a/b must be 1 or -1 and imm-trans-b 0 or 1";
  out.config.transB = transB;

  // Constraints: outputs "=f", then one per operand; tied ones name outputs.
  auto cons = splitTop(op.getConstraints(), ',');
  if (int64_t(cons.size()) != numOut + int64_t(op.getOperands().size()))
    return "the constraints must name every output and operand";
  out.accIn.assign(numOut, -1);
  for (size_t i = numOut; i < cons.size(); ++i) {
    int tied;
    if (!llvm::StringRef(cons[i]).getAsInteger(10, tied) && tied >= 0 &&
        tied < numOut)
      out.accIn[tied] = static_cast<int>(i) - numOut;
  }
  for (int i = 0; i < numOut; ++i)
    if (out.accIn[i] < 0)
      return "accumulator register " + std::to_string(i) +
             " has no input tied to it";
  for (int i = 0; i < numOut; ++i)
    if (cons[i] != "=f")
      return "outputs must be '=f'";
  return {};
}

bool isWgmmaAsm(Operation *op) {
  auto a = dyn_cast<LLVM::InlineAsmOp>(op);
  return a && a.getAsmString().contains("wgmma.mma_async");
}

bool isWgmma(Operation *op) {
  return isa<NVVM::WgmmaMmaAsyncOp>(op) || isWgmmaAsm(op);
}

//===----------------------------------------------------------------------===//
// The compile-time plan: which values carry wgmma registers
//===----------------------------------------------------------------------===//

/// The data operands of an op that only moves register contents (a rename,
/// no instruction): struct and vector element moves. Empty for other ops.
SmallVector<Value> moveSources(Operation *op) {
  if (auto o = dyn_cast<LLVM::ExtractValueOp>(op))
    return {o.getContainer()};
  if (auto o = dyn_cast<LLVM::InsertValueOp>(op))
    return {o.getContainer(), o.getValue()};
  if (auto o = dyn_cast<vector::ExtractOp>(op))
    return {o.getSource()};
  if (auto o = dyn_cast<vector::InsertOp>(op))
    return {o.getDest(), o.getValueToStore()};
  if (auto o = dyn_cast<vector::ShuffleOp>(op))
    return {o.getV1(), o.getV2()};
  if (auto o = dyn_cast<vector::FromElementsOp>(op))
    return SmallVector<Value>(o.getElements());
  if (auto o = dyn_cast<vector::BroadcastOp>(op))
    return {o.getSource()};
  return {};
}

/// Ops that move register contents without an instruction, control flow's
/// included.
bool isAccMove(Operation *op) {
  return !moveSources(op).empty() ||
         isa<scf::YieldOp, scf::ForOp, scf::IfOp>(op);
}

/// The accumulator inputs and A operands of a wgmma.
SmallVector<Value> wgmmaRegisterInputs(Operation *op) {
  if (auto o = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
    return {o.getInouts()};
  RegisterAWgmma rs;
  auto asmOp = cast<LLVM::InlineAsmOp>(op);
  SmallVector<Value> in;
  if (!parseRegisterAWgmma(asmOp, rs).empty())
    return in;
  for (int i : rs.accIn)
    in.push_back(asmOp.getOperands()[i]);
  for (int i : rs.aOperands)
    in.push_back(asmOp.getOperands()[i]);
  return in;
}

} // namespace

struct WgmmaPlan {
  llvm::DenseMap<Operation *, int> index;  ///< wgmma op -> its number
  std::vector<Operation *> wgmmas;
  llvm::DenseSet<Value> accValues; ///< values wgmma results move into
  llvm::DenseSet<Value> aValues;   ///< A operands of RS wgmmas
  /// Non-move ops whose results reach wgmma register inputs -> the wgmmas.
  llvm::DenseMap<Operation *, SmallVector<int>> producers;
  uint32_t accList = 0; ///< lists[accList]: ids of accValues (after compile)
  /// RS wgmma -> (lists index, the values holding its A registers).
  llvm::DenseMap<Operation *, std::pair<uint32_t, SmallVector<Value>>>
      aRegisters;
  /// Ops defining RS A registers -> lists index of their write check.
  llvm::DenseMap<Operation *, uint32_t> aDefinitions;
};

bool planWgmma(ProgramBuilder &b, gpu::GPUFuncOp f) {
  auto plan = std::make_shared<WgmmaPlan>();
  f.walk([&](Operation *op) {
    if (isWgmma(op)) {
      plan->index[op] = plan->wgmmas.size();
      plan->wgmmas.push_back(op);
    }
  });
  if (plan->wgmmas.empty())
    return true;

  // Forward: where wgmma results go.
  SmallVector<Value> work;
  auto addAcc = [&](Value v) {
    if (plan->accValues.insert(v).second)
      work.push_back(v);
  };
  for (Operation *op : plan->wgmmas)
    for (Value r : op->getResults())
      addAcc(r);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      unsigned n = use.getOperandNumber();
      if (llvm::is_contained(moveSources(user), v)) {
        addAcc(user->getResult(0));
      } else if (isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        if (auto loop = dyn_cast<scf::ForOp>(parent)) {
          addAcc(loop.getRegionIterArgs()[n]);
          addAcc(loop.getResult(n));
        } else if (isa<scf::IfOp>(parent)) {
          addAcc(parent->getResult(n));
        }
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (n >= loop.getNumControlOperands()) {
          unsigned k = n - loop.getNumControlOperands();
          addAcc(loop.getRegionIterArgs()[k]);
          addAcc(loop.getResult(k));
        }
      }
    }
  }

  // Backward: the non-move ops that produce each wgmma's register inputs.
  for (Operation *op : plan->wgmmas) {
    int j = plan->index[op];
    SmallVector<Value> inputs = wgmmaRegisterInputs(op);
    // An RS wgmma's A registers: its A operands and the registers they are
    // renames of (moves and bitcasts back to the op computing them).
    if (isWgmmaAsm(op)) {
      auto &closure = plan->aRegisters[op];
      closure.first = b.program.lists.size();
      b.program.lists.emplace_back();
      SmallVector<Value> regs(ArrayRef<Value>(inputs).take_back(4));
      while (!regs.empty()) {
        Value a = regs.pop_back_val();
        if (llvm::is_contained(closure.second, a))
          continue;
        closure.second.push_back(a);
        plan->aValues.insert(a);
        Operation *def = a.getDefiningOp();
        if (!def)
          continue;
        if (isa<LLVM::BitcastOp, arith::BitcastOp>(def))
          regs.push_back(def->getOperand(0));
        for (Value from : moveSources(def))
          regs.push_back(from);
      }
    }
    llvm::DenseSet<Value> seen;
    SmallVector<Value> back(inputs.begin(), inputs.end());
    while (!back.empty()) {
      Value v = back.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
        if (loop && arg.getArgNumber() >= 1) {
          unsigned k = arg.getArgNumber() - 1;
          back.push_back(loop.getInitArgs()[k]);
          back.push_back(loop.getYieldedValues()[k]);
        }
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (isWgmma(def))
        continue; // chained: ordered by the hardware (shape checked at run)
      if (SmallVector<Value> from = moveSources(def); !from.empty()) {
        back.append(from.begin(), from.end());
      } else if (isa<LLVM::BitcastOp, arith::BitcastOp>(def)) {
        back.push_back(def->getOperand(0));
      } else if (auto loop = dyn_cast<scf::ForOp>(def)) {
        unsigned k = cast<OpResult>(v).getResultNumber();
        back.push_back(loop.getInitArgs()[k]);
        back.push_back(loop.getYieldedValues()[k]);
      } else if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
        unsigned k = cast<OpResult>(v).getResultNumber();
        back.push_back(ifOp.thenYield().getOperand(k));
        if (!ifOp.getElseRegion().empty())
          back.push_back(ifOp.elseYield().getOperand(k));
      } else {
        auto &feeds = plan->producers[def];
        if (feeds.empty() || feeds.back() != j)
          feeds.push_back(j);
      }
    }
  }
  plan->accList = b.program.lists.size();
  b.program.lists.emplace_back();
  b.wgmmaPlan = plan;
  return true;
}

void finishWgmmaPlan(ProgramBuilder &b) {
  if (!b.wgmmaPlan)
    return;
  auto &ids = b.program.lists[b.wgmmaPlan->accList];
  for (Value v : b.wgmmaPlan->accValues)
    if (int32_t id = b.idOf(v); id >= 0 && b.val(id).sk == SK::F32)
      ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (auto &[op, closure] : b.wgmmaPlan->aRegisters)
    for (Value v : closure.second)
      if (int32_t id = b.idOf(v); id >= 0)
        b.program.lists[closure.first].push_back(id);
}

//===----------------------------------------------------------------------===//
// Runtime state
//===----------------------------------------------------------------------===//

namespace {

/// A register whose wgmma is in flight holds this signalling NaN: bits
/// 63-48 0x7ff4, 47-8 the wgmma's id, 7-0 its register.
constexpr int64_t kMarkerTag = 0x7ff4;
inline int64_t markerOf(uint64_t id, int64_t reg) {
  return (kMarkerTag << 48) | int64_t((id & 0xffffffffffull) << 8) | reg;
}
inline bool isMarker(const Cell &c) { return (c.i >> 48) == kMarkerTag; }
inline uint64_t markerId(const Cell &c) { return (c.i >> 8) & 0xffffffffffull; }
inline int64_t markerReg(const Cell &c) { return c.i & 0xff; }

/// Descriptor bits as unsigned hex.
std::string bitsHex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}


struct InFlight {
  const Instr *issuer;
  int64_t n;
  WgmmaAccumulator result;
  std::vector<int32_t> aValues; ///< RS: the A registers it reads
  std::vector<uint32_t> chunks; ///< the 16-byte shared chunks it reads
  bool chained = false; ///< its accumulator fed a later wgmma
};

struct Warpgroup {
  WgmmaQueue queue;
  bool fenced = false; ///< a wgmma.fence ran
  /// Per wgmma op: the producer of its registers that ran since the last
  /// fence, or null.
  std::vector<const Instr *> unfenced;
  std::unordered_map<uint64_t, InFlight> inFlight;
};

} // namespace

struct WgmmaState {
  int64_t ctaCount = -1; ///< stats.ctas when made: a new CTA starts fresh
  std::vector<Warpgroup> groups;
  uint64_t nextId = 1;
};

namespace {

/// The state of the current CTA.
WgmmaState &stateOf(Executor &ex) {
  if (!ex.wgmma || ex.wgmma->ctaCount != ex.stats.ctas) {
    ex.wgmma = std::make_shared<WgmmaState>();
    ex.wgmma->ctaCount = ex.stats.ctas;
    ex.wgmma->groups.resize((ex.T + 127) / 128);
  }
  return *ex.wgmma;
}

/// Calls fn(g) for each warpgroup with an active thread; errors unless all
/// its 128 threads are active (.aligned) and exist.
template <typename F>
bool forWarpgroups(Executor &ex, const Instr &I, const ActiveThreads &threads,
                   const char *what, F &&fn) {
  for (int64_t g = 0; g * 128 < ex.T; ++g) {
    int64_t active = 0, first = -1, firstOff = -1;
    for (int64_t t = g * 128; t < std::min<int64_t>(ex.T, g * 128 + 128); ++t) {
      if (threads.mask[t]) {
        ++active;
        if (first < 0)
          first = t;
      } else if (firstOff < 0) {
        firstOff = t;
      }
    }
    if (!active)
      continue;
    if (ex.T < g * 128 + 128)
      return ex.fail(I, std::string(what) + " needs whole warpgroups of 128 "
                                            "threads; the CTA has " +
                            std::to_string(ex.T));
    if (active != 128)
      return ex.fail(I, std::string(what) +
                            " is .aligned: every thread of warpgroup " +
                            std::to_string(g) + " must execute it, but " +
                            threadName(firstOff) +
                            " does not (divergent control flow?)");
    if (!fn(g))
      return false;
  }
  return true;
}

std::string pendingRead(const InFlight &f) {
  return "the wgmma (" + where(*f.issuer) +
         ") is still in flight: no wgmma.wait_group has covered its group";
}

} // namespace

//===----------------------------------------------------------------------===//
// Exec handlers
//===----------------------------------------------------------------------===//

static bool execWgmmaFence(Executor &ex, const Instr &I,
                           const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  return forWarpgroups(ex, I, threads, "wgmma.fence", [&](int64_t g) {
    Warpgroup &wg = st.groups[g];
    wg.fenced = true;
    std::fill(wg.unfenced.begin(), wg.unfenced.end(), nullptr);
    return true;
  });
}

static bool execWgmmaCommit(Executor &ex, const Instr &I,
                            const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  return forWarpgroups(ex, I, threads, "wgmma.commit_group", [&](int64_t g) {
    st.groups[g].queue.commitGroup();
    return true;
  });
}

/// wait_group imm; lists[aux]: every value a wgmma result may be in.
static bool execWgmmaWait(Executor &ex, const Instr &I,
                          const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  const auto &accIds = ex.program.lists[I.aux];
  const int64_t T = ex.T;
  return forWarpgroups(ex, I, threads, "wgmma.wait_group", [&](int64_t g) {
    Warpgroup &wg = st.groups[g];
    std::vector<uint64_t> done = wg.queue.waitGroup(uint32_t(I.imm));
    if (done.empty())
      return true;
    std::unordered_map<uint64_t, int64_t> landed;
    for (uint64_t id : done)
      landed[id] = 0;
    for (int32_t v : accIds) {
      Cell *C = ex.cellsOf(v);
      for (uint32_t e = 0; e < ex.val(v).n; ++e)
        for (int64_t t = g * 128; t < g * 128 + 128; ++t) {
          Cell &c = C[e * T + t];
          if (!isMarker(c))
            continue;
          auto it = landed.find(markerId(c));
          if (it == landed.end())
            continue;
          c.d = wg.inFlight.at(it->first).result[markerReg(c)][t - g * 128];
          ++it->second;
        }
    }
    for (uint64_t id : done) {
      InFlight &f = wg.inFlight.at(id);
      if (!landed[id] && !f.chained)
        return ex.fail(*f.issuer,
                       "the accumulator registers of this wgmma were all "
                       "overwritten while it was in flight (before the "
                       "wgmma.wait_group at " +
                           locOf(I) + " that covers it)");
      for (uint32_t chunk : f.chunks) {
        ex.memory.holdAsyncRead(chunk, 16, -1);
        // Each warp of the group has read the operands once the wait
        // retires the wgmma.
        if (ex.memory.ordering())
          for (int64_t w = g * 4; w < g * 4 + 4; ++w)
            ex.memory.noteRead(w, chunk, 16, *f.issuer);
      }
      wg.inFlight.erase(id);
    }
    return true;
  });
}

/// Before an op reading wgmma registers: lists[aux] = the operands to check.
static bool execWgmmaReadCheck(Executor &ex, const Instr &I,
                               const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  const int64_t T = ex.T;
  for (int32_t v : ex.program.lists[I.aux]) {
    const Cell *C = ex.cellsOf(v);
    for (int64_t t = 0; t < T; ++t) {
      if (!threads.mask[t])
        continue;
      Warpgroup &wg = st.groups[t / 128];
      for (const auto &[id, f] : wg.inFlight)
        for (int32_t a : f.aValues)
          if (a == v)
            return ex.fail(I, "reads an A register of an in-flight RS "
                              "wgmma in " +
                                  threadName(t) + ": " + pendingRead(f));
      for (uint32_t e = 0; e < ex.val(v).n; ++e) {
        const Cell &c = C[e * T + t];
        if (!isMarker(c))
          continue;
        auto it = wg.inFlight.find(markerId(c));
        return ex.fail(I, "reads accumulator register " +
                              std::to_string(markerReg(c)) + " in " +
                              threadName(t) + " before it is ready: " +
                              (it == wg.inFlight.end()
                                   ? std::string("its wgmma never completed")
                                   : pendingRead(it->second)));
      }
    }
  }
  return true;
}

/// Whether any thread of warpgroup `g` is active.
static bool warpgroupRuns(const Executor &ex, const ActiveThreads &threads,
                          int64_t g) {
  for (int64_t t = g * 128; t < std::min<int64_t>(ex.T, g * 128 + 128); ++t)
    if (threads.mask[t])
      return true;
  return false;
}

/// Before an op redefining RS A registers: lists[aux] = its results.
static bool execWgmmaWriteCheck(Executor &ex, const Instr &I,
                                const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  for (int32_t v : ex.program.lists[I.aux])
    for (int64_t g = 0; g < int64_t(st.groups.size()); ++g) {
      if (!warpgroupRuns(ex, threads, g))
        continue;
      for (const auto &[id, f] : st.groups[g].inFlight)
        for (int32_t a : f.aValues)
          if (a == v)
            return ex.fail(I, "overwrites an A register of an in-flight RS "
                              "wgmma (warpgroup " +
                                  std::to_string(g) + "): " + pendingRead(f));
    }
  return true;
}

/// After a producer of wgmma registers: lists[aux] = the wgmmas it feeds.
static bool execWgmmaProduced(Executor &ex, const Instr &I,
                              const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  const auto &feeds = ex.program.lists[I.aux];
  for (int64_t g = 0; g < int64_t(st.groups.size()); ++g) {
    if (!warpgroupRuns(ex, threads, g))
      continue;
    Warpgroup &wg = st.groups[g];
    for (int32_t j : feeds) {
      if (wg.unfenced.size() <= size_t(j))
        wg.unfenced.resize(j + 1, nullptr);
      wg.unfenced[j] = &I;
    }
  }
  return true;
}

namespace {
/// A wgmma's operands in the Instr: a = A descriptor (SS) or -1, b = B
/// descriptor, c = accumulator struct (SS) or -1; res; imm = packed config;
/// imm2 = the wgmma's number in the plan; aux = lists index of
/// {acc inputs..., A registers x 4, scale-d predicate or -1, lists index of
/// the values holding its A registers} for RS.
int64_t packConfig(const WgmmaConfig &c) {
  return c.n | int64_t(c.type == ElementType::BF16) << 16 |
         int64_t(c.scaleD) << 17 | int64_t(c.scaleA < 0) << 18 |
         int64_t(c.scaleB < 0) << 19 | int64_t(c.transA) << 20 |
         int64_t(c.transB) << 21 | int64_t(c.type == ElementType::E4M3) << 22;
}
WgmmaConfig unpackConfig(int64_t v) {
  WgmmaConfig c;
  c.n = v & 0xffff;
  c.type = (v >> 22 & 1)   ? ElementType::E4M3
           : (v >> 16 & 1) ? ElementType::BF16
                           : ElementType::F16;
  c.scaleD = v >> 17 & 1;
  c.scaleA = (v >> 18 & 1) ? -1 : 1;
  c.scaleB = (v >> 19 & 1) ? -1 : 1;
  c.transA = v >> 20 & 1;
  c.transB = v >> 21 & 1;
  return c;
}

/// The descriptor operand of warpgroup g, identical in all its threads.
bool uniformDescriptor(Executor &ex, const Instr &I, int32_t id, int64_t g,
                       const char *what, uint64_t &desc) {
  const Cell *D = ex.cellsOf(id);
  desc = static_cast<uint64_t>(D[g * 128].i);
  for (int64_t t = g * 128; t < g * 128 + 128; ++t)
    if (static_cast<uint64_t>(D[t].i) != desc)
      return ex.fail(I, std::string("the ") + what +
                            " descriptor must be the same in every thread "
                            "of the warpgroup: " +
                            threadName(g * 128) + " has " + bitsHex(desc) +
                            ", " + threadName(t) + " has " +
                            bitsHex(static_cast<uint64_t>(D[t].i)));
  return true;
}

/// Reads an operand through its descriptor, with the shared-memory checks.
bool readOperand(Executor &ex, const Instr &I, int64_t g, uint64_t desc,
                 bool mnMajor, int64_t mnExtent, ElementType type,
                 const char *what, WgmmaOperand &out,
                 std::vector<uint32_t> &chunks) {
  Status s = checkWgmmaDescriptorBits(desc, what);
  if (s.ok())
    s = checkWgmmaOperandAtoms(desc, mnMajor, mnExtent, type, what);
  if (!s.ok())
    return ex.fail(I, s.error());
  Memory &mem = ex.memory;
  std::vector<uint32_t> addrs =
      wgmmaOperandAddresses(desc, mnMajor, mnExtent, type);
  std::string label = std::string("wgmma ") + what + " operand read";
  int64_t t0 = g * 128;
  for (uint32_t addr : addrs) {
    if (addr % 16 != 0)
      continue; // whole 16-byte chunks: check each once
    if (!mem.checkShared(I, t0, addr, 16, 16, label.c_str()) ||
        !mem.trackShared(I, t0, addr, 16, false) ||
        !mem.checkAsyncProxyRead(I, addr, 16, label.c_str()))
      return false;
    chunks.push_back(addr);
  }
  auto r = readWgmmaOperand(mem.shared(), desc, mnMajor, mnExtent, type, what);
  if (!r.ok())
    return ex.fail(I, r.error());
  out = std::move(*r);
  ex.stats.sharedBytesRead += int64_t(addrs.size()) * wgmmaElementBytes(type);
  return true;
}
} // namespace

static bool execWgmma(Executor &ex, const Instr &I,
                      const ActiveThreads &threads) {
  WgmmaState &st = stateOf(ex);
  const int64_t T = ex.T;
  const WgmmaConfig cfg = unpackConfig(I.imm);
  const int64_t regs = lay::wgmmaAccNumRegisters(cfg.n);
  const bool rs = I.a < 0;
  const std::vector<int32_t> *rsOps = rs ? &ex.program.lists[I.aux] : nullptr;
  return forWarpgroups(ex, I, threads, "wgmma.mma_async", [&](int64_t g) {
    Warpgroup &wg = st.groups[g];
    if (!wg.fenced)
      return ex.fail(I, "no wgmma.fence.aligned before the first wgmma of "
                        "warpgroup " +
                            std::to_string(g));
    if (size_t(I.imm2) < wg.unfenced.size() && wg.unfenced[I.imm2])
      return ex.fail(I, "missing wgmma.fence.aligned between " +
                            where(*wg.unfenced[I.imm2]) +
                            ", which writes this wgmma's accumulator or A "
                            "registers, and this wgmma");
    WgmmaConfig c = cfg;
    if (rs && (*rsOps)[regs + 4] >= 0) {
      const Cell *P = ex.cellsOf((*rsOps)[regs + 4]);
      c.scaleD = P[g * 128].i != 0;
      for (int64_t t = g * 128; t < g * 128 + 128; ++t)
        if ((P[t].i != 0) != c.scaleD)
          return ex.fail(I, "scale-d differs across the warpgroup (" +
                                threadName(t) + ")");
    }
    // Operands.
    WgmmaOperand a, b;
    uint64_t descB;
    if (!uniformDescriptor(ex, I, I.b, g, "B", descB))
      return false;
    std::vector<int32_t> aValues;
    std::vector<uint32_t> chunks;
    if (!rs) {
      uint64_t descA;
      if (!uniformDescriptor(ex, I, I.a, g, "A", descA) ||
          !readOperand(ex, I, g, descA, c.transA, lay::kWgmmaAtomM, c.type,
                       "A", a, chunks))
        return false;
    } else {
      aValues = ex.program.lists[(*rsOps)[regs + 5]];
      WgmmaARegisters aRegs{};
      for (int r = 0; r < 4; ++r) {
        int32_t v = (*rsOps)[regs + r];
        const Cell *A = ex.cellsOf(v);
        for (int64_t t = 0; t < 128; ++t)
          aRegs[r][t] = static_cast<uint32_t>(A[g * 128 + t].i);
      }
      a = wgmmaRegisterOperandA(aRegs, c.type);
    }
    if (!readOperand(ex, I, g, descB, c.transB, c.n, c.type, "B", b, chunks))
      return false;
    // The accumulator: registers, or the results of in-flight wgmmas of the
    // same shape chained into this one.
    WgmmaAccumulator acc(regs);
    for (int64_t i = 0; i < regs; ++i) {
      const Cell *C = rs ? ex.cellsOf((*rsOps)[i]) : ex.cellsOf(I.c) + i * T;
      for (int64_t t = 0; t < 128; ++t) {
        const Cell &cell = C[g * 128 + t];
        if (!isMarker(cell)) {
          acc[i][t] = static_cast<float>(cell.d);
          continue;
        }
        auto it = wg.inFlight.find(markerId(cell));
        if (it == wg.inFlight.end())
          return ex.fail(I, "accumulator register " + std::to_string(i) +
                                " holds the result of a wgmma that never "
                                "completed");
        if (it->second.n != c.n || markerReg(cell) != i)
          return ex.fail(I, "accumulator register " + std::to_string(i) +
                                " belongs to an in-flight wgmma of another "
                                "shape or register (" +
                                where(*it->second.issuer) +
                                "): only consecutive wgmmas of one shape "
                                "into the same registers need no wait");
        it->second.chained = true;
        acc[i][t] = it->second.result[i][t];
      }
    }
    auto d = wgmmaM64NK16(c, a, b, acc);
    if (!d.ok())
      return ex.fail(I, d.error());
    uint64_t id = st.nextId++;
    Cell *R = ex.cellsOf(I.res);
    for (int64_t i = 0; i < regs; ++i)
      for (int64_t t = 0; t < 128; ++t)
        R[i * T + g * 128 + t].i = markerOf(id, i);
    // The hardware reads the operands any time until the wgmma completes.
    for (uint32_t chunk : chunks)
      ex.memory.holdAsyncRead(chunk, 16, +1, &I);
    wg.inFlight[id] = InFlight{&I, c.n, std::move(*d), std::move(aValues),
                               std::move(chunks)};
    wg.queue.issue(id);
    ++ex.stats.wgmma;
    ex.stats.wgmmaFlops += 2 * lay::kWgmmaAtomM * c.n * wgmmaK(c.type);
    return true;
  });
}

//===----------------------------------------------------------------------===//
// Compile handlers and hooks
//===----------------------------------------------------------------------===//

static bool compileWgmmaFence(ProgramBuilder &b, Operation *op) {
  b.emit(ProgramBuilder::instr(op, execWgmmaFence));
  return true;
}

static bool compileWgmmaCommit(ProgramBuilder &b, Operation *op) {
  b.emit(ProgramBuilder::instr(op, execWgmmaCommit));
  return true;
}

static bool compileWgmmaWait(ProgramBuilder &b, Operation *op) {
  Instr I = ProgramBuilder::instr(op, execWgmmaWait);
  I.imm = cast<NVVM::WgmmaWaitGroupSyncOp>(op).getGroup();
  if (!b.wgmmaPlan) { // no wgmma in the kernel: nothing ever lands
    I.aux = b.program.lists.size();
    b.program.lists.emplace_back();
    b.emit(I);
    return true;
  }
  I.aux = b.wgmmaPlan->accList;
  b.emit(I);
  return true;
}

/// The checks every wgmma form shares at compile time.
static bool checkResult(ProgramBuilder &b, Operation *op, int64_t n,
                        Instr &I) {
  if (!b.defineResult(I))
    return false;
  const ValInfo &r = b.val(I.res);
  if (r.sk != SK::F32 || int64_t(r.n) != lay::wgmmaAccNumRegisters(n))
    return b.fail(op, "the wgmma result must be a struct of N/2 f32");
  I.imm2 = b.wgmmaPlan->index.lookup(op);
  return true;
}

static bool compileWgmmaSS(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::WgmmaMmaAsyncOp>(op);
  auto shape = o.getShape();
  bool fp8 = o.getTypeA() == NVVM::WGMMATypes::e4m3;
  if (shape.getM() != 64 || shape.getK() != (fp8 ? 32 : 16) ||
      o.getTypeD() != NVVM::WGMMATypes::f32 ||
      (o.getTypeA() != NVVM::WGMMATypes::f16 &&
       o.getTypeA() != NVVM::WGMMATypes::bf16 && !fp8) ||
      o.getTypeB() != o.getTypeA())
    return b.fail(op, "only wgmma m64nNk16 with f16 or bf16 inputs or "
                      "m64nNk32 with e4m3 inputs, and an f32 accumulator, "
                      "is supported");
  WgmmaConfig c;
  c.n = shape.getN();
  if (std::string e = lay::checkWgmmaN(c.n); !e.empty())
    return b.fail(op, e);
  c.type = fp8 ? ElementType::E4M3
               : o.getTypeA() == NVVM::WGMMATypes::bf16 ? ElementType::BF16
                                                        : ElementType::F16;
  c.scaleD = o.getScaleD() == NVVM::WGMMAScaleOut::one;
  c.scaleA = o.getScaleA() == NVVM::WGMMAScaleIn::neg ? -1 : 1;
  c.scaleB = o.getScaleB() == NVVM::WGMMAScaleIn::neg ? -1 : 1;
  // A "row" and B "col" are K-major; the other layouts are MN-major.
  c.transA = o.getLayoutA() == NVVM::MMALayout::col;
  c.transB = o.getLayoutB() == NVVM::MMALayout::row;
  if (std::string e = checkWgmmaConfig(c); !e.empty())
    return b.fail(op, e);
  Instr I = ProgramBuilder::instr(op, execWgmma);
  I.a = b.idOf(o.getDescriptorA());
  I.b = b.idOf(o.getDescriptorB());
  I.c = b.idOf(o.getInouts());
  I.imm = packConfig(c);
  if (!checkResult(b, op, c.n, I))
    return false;
  b.emit(I);
  return true;
}

static bool compileInlineAsm(ProgramBuilder &b, Operation *op) {
  auto o = cast<LLVM::InlineAsmOp>(op);
  if (!isWgmmaAsm(op))
    return b.fail(op, "inline asm is not supported by the emulator, except "
                      "the register-A wgmma.mma_async form");
  RegisterAWgmma rs;
  if (std::string e = parseRegisterAWgmma(o, rs); !e.empty())
    return b.fail(op, "register-A wgmma asm: " + e);
  Instr I = ProgramBuilder::instr(op, execWgmma);
  I.a = -1;
  I.b = b.idOf(o.getOperands()[rs.bOperand]);
  I.imm = packConfig(rs.config);
  std::vector<int32_t> ops;
  for (int i : rs.accIn)
    ops.push_back(b.idOf(o.getOperands()[i]));
  for (int i : rs.aOperands)
    ops.push_back(b.idOf(o.getOperands()[i]));
  ops.push_back(rs.scaleDOperand >= 0
                    ? b.idOf(o.getOperands()[rs.scaleDOperand])
                    : -1);
  ops.push_back(b.wgmmaPlan->aRegisters.lookup(op).first);
  for (size_t i = 0; i < rs.accIn.size() + 4; ++i) {
    SK want = i < rs.accIn.size() ? SK::F32 : SK::I32;
    if (b.val(ops[i]).sk != want || b.val(ops[i]).n != 1)
      return b.fail(op, "register-A wgmma operands must be f32 accumulators "
                        "and i32 A registers");
  }
  if (b.val(I.b).sk != SK::I64)
    return b.fail(op, "the B descriptor must be i64");
  I.aux = b.program.lists.size();
  b.program.lists.push_back(std::move(ops));
  if (!checkResult(b, op, rs.config.n, I))
    return false;
  b.emit(I);
  return true;
}

bool wgmmaBeforeOp(ProgramBuilder &b, Operation *op) {
  WgmmaPlan *plan = b.wgmmaPlan.get();
  if (!plan || isWgmma(op))
    return true;
  std::vector<int32_t> reads;
  if (!isAccMove(op))
    for (Value v : op->getOperands())
      if (plan->accValues.contains(v) || plan->aValues.contains(v))
        reads.push_back(b.idOf(v));
  if (!reads.empty()) {
    Instr I = ProgramBuilder::instr(op, execWgmmaReadCheck);
    I.aux = b.program.lists.size();
    b.program.lists.push_back(std::move(reads));
    b.emit(I);
  }
  // An op redefining RS A registers: checked before it runs; its result ids
  // exist only once its own handler has run (wgmmaAfterOp fills them in).
  if (llvm::any_of(op->getResults(),
                   [&](Value r) { return plan->aValues.contains(r); })) {
    Instr I = ProgramBuilder::instr(op, execWgmmaWriteCheck);
    I.aux = b.program.lists.size();
    b.program.lists.emplace_back();
    plan->aDefinitions[op] = I.aux;
    b.emit(I);
  }
  return true;
}

bool wgmmaAfterOp(ProgramBuilder &b, Operation *op) {
  WgmmaPlan *plan = b.wgmmaPlan.get();
  if (!plan)
    return true;
  if (auto it = plan->aDefinitions.find(op); it != plan->aDefinitions.end())
    for (Value r : op->getResults())
      if (plan->aValues.contains(r))
        b.program.lists[it->second].push_back(b.idOf(r));
  auto it = plan->producers.find(op);
  if (it == plan->producers.end())
    return true;
  Instr I = ProgramBuilder::instr(op, execWgmmaProduced);
  I.aux = b.program.lists.size();
  b.program.lists.emplace_back(it->second.begin(), it->second.end());
  b.emit(I);
  return true;
}

//===----------------------------------------------------------------------===//
// fence.proxy.async (the async-proxy fence the wgmma operand check needs)
//===----------------------------------------------------------------------===//

static bool execFenceProxyAsync(Executor &ex, const Instr &,
                                const ActiveThreads &threads) {
  ex.memory.fenceProxyAsync(threads.mask);
  return true;
}

static bool compileFenceProxy(ProgramBuilder &b, Operation *op) {
  auto o = cast<NVVM::FenceProxyOp>(op);
  if (o.getKind() != NVVM::ProxyKind::async_shared &&
      o.getKind() != NVVM::ProxyKind::async)
    return b.fail(op, "only fence.proxy.async(.shared::cta) is supported");
  b.emit(ProgramBuilder::instr(op, execFenceProxyAsync));
  return true;
}

void addWgmmaOps(OpHandlers &handlers) {
  handlers.add<NVVM::WgmmaFenceAlignedOp>(compileWgmmaFence);
  handlers.add<NVVM::WgmmaGroupSyncAlignedOp>(compileWgmmaCommit);
  handlers.add<NVVM::WgmmaWaitGroupSyncOp>(compileWgmmaWait);
  handlers.add<NVVM::WgmmaMmaAsyncOp>(compileWgmmaSS);
  handlers.add<LLVM::InlineAsmOp>(compileInlineAsm);
  handlers.add<NVVM::FenceProxyOp>(compileFenceProxy);
}

} // namespace flash::emu

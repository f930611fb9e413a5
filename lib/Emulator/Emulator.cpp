//===- Emulator.cpp - SIMT-level IR executor and sanitizer ----------------===//
//
// See Emulator.h for the execution model. Layout of the register file: every
// SSA value owns n * T cells (n cells per thread, T threads per CTA),
// element-major: cell (element e, thread t) is at base + e * T + t, so an
// element-wise op is one loop over n * T contiguous cells and a vector
// extract/insert/shuffle moves T contiguous cells per element.
//
// Cells are 64-bit: floats as double (already rounded to their type), integers
// sign-extended from their width (i1 as 0/1), pointers to global memory as
// (buffer id << 40) + 2^39 + byte offset, pointers to shared memory as the
// byte offset into the CTA's shared window.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"
#include "flashc/Support/SourceLocation.h"
#include "flashc/Emulator/WarpOps.h"
#include "flashc/Semantics/CmpF.h"
#include "flashc/Runtime/Float16.h"

#include "flashc/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace flash {
namespace emu {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool findSIMTKernel(ModuleOp module, gpu::GPUFuncOp &kernel,
                    std::string &error) {
  kernel = nullptr;
  unsigned count = 0;
  module.walk([&](gpu::GPUFuncOp f) {
    if (f.isKernel()) {
      if (!kernel)
        kernel = f;
      ++count;
    }
  });
  if (count == 0) {
    error = "the module has no SIMT-level kernel (a gpu.func with the "
            "'kernel' attribute inside a gpu.module)";
    return false;
  }
  if (count > 1) {
    error = "the module has " + std::to_string(count) +
            " SIMT-level kernels; the emulator runs one";
    return false;
  }
  return true;
}

namespace {

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::string hex(int64_t v) {
  char buf[32];
  if (v < 0)
    snprintf(buf, sizeof buf, "-0x%llx", (unsigned long long)(-v));
  else
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

/// Scalar kinds a cell can hold.
enum class SK : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64, PG, PS };

bool isFloat(SK s) {
  return s == SK::F16 || s == SK::BF16 || s == SK::F32 || s == SK::F64;
}
unsigned intWidth(SK s) {
  switch (s) {
  case SK::I1:
    return 1;
  case SK::I8:
    return 8;
  case SK::I16:
    return 16;
  case SK::I32:
    return 32;
  default:
    return 64;
  }
}
unsigned byteSize(SK s) {
  switch (s) {
  case SK::I1:
  case SK::I8:
    return 1;
  case SK::I16:
  case SK::F16:
  case SK::BF16:
    return 2;
  case SK::I32:
  case SK::F32:
    return 4;
  default:
    return 8;
  }
}

union Cell {
  double d;
  int64_t i;
};

inline int64_t wrapInt(int64_t v, unsigned w) {
  if (w >= 64)
    return v;
  if (w == 1)
    return v & 1;
  unsigned sh = 64 - w;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << sh) >> sh;
}
/// Signed value of a canonical cell of width w (i1: 0 / -1).
inline int64_t sval(int64_t v, unsigned w) { return w == 1 ? -(v & 1) : v; }
/// Unsigned value of a canonical cell of width w.
inline uint64_t uval(int64_t v, unsigned w) {
  if (w >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
}

inline double roundF(SK s, double v) {
  switch (s) {
  case SK::F32:
    return static_cast<double>(static_cast<float>(v));
  case SK::F16:
    return roundToHalf(v);
  case SK::BF16:
    return roundToBF16(v);
  default:
    return v;
  }
}

constexpr int kPtrShift = 40;
constexpr int64_t kPtrBias = int64_t(1) << 39;
inline int64_t makeGlobalPtr(int id) {
  return (int64_t(id) << kPtrShift) + kPtrBias;
}
inline int globalPtrId(int64_t p) { return static_cast<int>(p >> kPtrShift); }
inline int64_t globalPtrOffset(int64_t p) {
  return (p & ((int64_t(1) << kPtrShift) - 1)) - kPtrBias;
}

void decodeElem(SK s, const uint8_t *p, Cell &c) {
  switch (s) {
  case SK::I1:
    c.i = p[0] & 1;
    return;
  case SK::I8:
    c.i = static_cast<int8_t>(p[0]);
    return;
  case SK::I16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    c.i = v;
    return;
  }
  case SK::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    c.i = v;
    return;
  }
  case SK::I64:
  case SK::PG:
  case SK::PS:
    std::memcpy(&c.i, p, 8);
    return;
  case SK::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c.d = halfBitsToDouble(v);
    return;
  }
  case SK::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c.d = bf16BitsToDouble(v);
    return;
  }
  case SK::F32: {
    float v;
    std::memcpy(&v, p, 4);
    c.d = v;
    return;
  }
  case SK::F64:
    std::memcpy(&c.d, p, 8);
    return;
  }
}
void encodeElem(SK s, const Cell &c, uint8_t *p) {
  switch (s) {
  case SK::I1:
    p[0] = c.i & 1;
    return;
  case SK::I8:
    p[0] = static_cast<uint8_t>(c.i);
    return;
  case SK::I16: {
    int16_t v = static_cast<int16_t>(c.i);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::I32: {
    int32_t v = static_cast<int32_t>(c.i);
    std::memcpy(p, &v, 4);
    return;
  }
  case SK::I64:
  case SK::PG:
  case SK::PS:
    std::memcpy(p, &c.i, 8);
    return;
  case SK::F16: {
    uint16_t v = doubleToHalfBits(c.d);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::BF16: {
    uint16_t v = doubleToBF16Bits(c.d);
    std::memcpy(p, &v, 2);
    return;
  }
  case SK::F32: {
    float v = static_cast<float>(c.d);
    std::memcpy(p, &v, 4);
    return;
  }
  case SK::F64:
    std::memcpy(p, &c.d, 8);
    return;
  }
}

/// Scalar kind of a (non-aggregate) type.
std::optional<SK> scalarKind(Type t) {
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return SK::I1;
    case 8:
      return SK::I8;
    case 16:
      return SK::I16;
    case 32:
      return SK::I32;
    case 64:
      return SK::I64;
    default:
      return std::nullopt;
    }
  }
  if (isa<IndexType>(t))
    return SK::I64;
  if (t.isF16())
    return SK::F16;
  if (t.isBF16())
    return SK::BF16;
  if (t.isF32())
    return SK::F32;
  if (t.isF64())
    return SK::F64;
  if (auto p = dyn_cast<LLVM::LLVMPointerType>(t)) {
    if (p.getAddressSpace() == 1)
      return SK::PG;
    if (p.getAddressSpace() == 3)
      return SK::PS;
  }
  return std::nullopt;
}

/// Shape of a value type: n cells per thread, kinds per cell.
struct TypeInfo {
  unsigned n = 1;
  SK sk = SK::I32; ///< kind of cell 0 (of every cell unless struct)
  llvm::SmallVector<SK, 4> kinds; ///< per cell, for structs only
  SK kindAt(unsigned e) const { return kinds.empty() ? sk : kinds[e]; }
};

std::optional<TypeInfo> typeInfo(Type t) {
  TypeInfo ti;
  if (auto v = dyn_cast<VectorType>(t)) {
    if (v.getRank() != 1 || v.isScalable())
      return std::nullopt;
    auto s = scalarKind(v.getElementType());
    if (!s)
      return std::nullopt;
    ti.n = v.getNumElements();
    ti.sk = *s;
    return ti;
  }
  if (auto st = dyn_cast<LLVM::LLVMStructType>(t)) {
    if (st.isOpaque() || st.getBody().empty())
      return std::nullopt;
    for (Type e : st.getBody()) {
      auto s = scalarKind(e);
      if (!s)
        return std::nullopt;
      ti.kinds.push_back(*s);
    }
    ti.n = ti.kinds.size();
    ti.sk = ti.kinds[0];
    bool uniform = llvm::all_of(ti.kinds, [&](SK k) { return k == ti.sk; });
    if (uniform)
      ti.kinds.clear();
    return ti;
  }
  auto s = scalarKind(t);
  if (!s)
    return std::nullopt;
  ti.sk = *s;
  return ti;
}

/// Byte size of an LLVM element type (for GEP strides and accesses).
std::optional<int64_t> llvmTypeSize(Type t) {
  if (auto s = scalarKind(t))
    return byteSize(*s);
  if (auto v = dyn_cast<VectorType>(t)) {
    auto e = llvmTypeSize(v.getElementType());
    if (!e || v.getRank() != 1)
      return std::nullopt;
    return *e * v.getNumElements();
  }
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t)) {
    auto e = llvmTypeSize(a.getElementType());
    if (!e)
      return std::nullopt;
    return *e * a.getNumElements();
  }
  return std::nullopt;
}

enum class Opc : uint8_t {
  // element-wise integer binary
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  CeilDivSI,
  CeilDivUI,
  FloorDivSI,
  AndI,
  OrI,
  XOrI,
  ShlI,
  ShrSI,
  ShrUI,
  MaxSI,
  MinSI,
  MaxUI,
  MinUI,
  // element-wise float binary
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  PowF,
  CopySign,
  // float unary
  NegF,
  AbsF,
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Sin,
  Cos,
  Erf,
  Ceil,
  Floor,
  Round,
  RoundEven,
  Trunc,
  ExpM1,
  // ternary
  Fma,
  Select,
  // integer unary
  AbsI,
  // compares
  CmpI,
  CmpF,
  // casts
  ExtSI,
  ExtUI,
  TruncI,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  FExt,
  FTrunc,
  Bitcast,
  IndexCast,
  IndexCastUI,
  // data movement
  Copy,
  Broadcast,
  FromElements,
  Extract,
  Insert,
  Shuffle,
  ExtractValue,
  InsertValue,
  // ids
  SReg,
  // memory
  GEP,
  Load,
  Store,
  CpAsync,
  CpAsyncCommit,
  CpAsyncWait,
  // warp ops
  Shfl,
  Mma,
  LdMatrix,
  Barrier,
  // control flow
  If,
  For,
};

enum SRegKind : int64_t {
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

struct ValInfo {
  uint32_t base = 0;
  uint32_t n = 1;
  SK sk = SK::I32;
};

struct Instr {
  Opc opc;
  SK sk = SK::I32;  ///< result kind (or operand kind for compares / casts)
  SK sk2 = SK::I32; ///< the other kind for casts (source)
  uint8_t pred = 0;
  int32_t res = -1;
  int32_t a = -1, b = -1, c = -1;
  int64_t imm = 0, imm2 = 0;
  uint32_t aux = 0; ///< index into a side table
  Operation *op = nullptr;
};

struct IfInfo {
  uint32_t thenBegin, thenEnd, elseBegin, elseEnd;
  std::vector<int32_t> thenYield, elseYield, results;
};
struct ForInfo {
  uint32_t bodyBegin, bodyEnd;
  int32_t lb, ub, step, iv;
  bool unsignedCmp = false;
  std::vector<int32_t> inits, iterArgs, yields, results;
};
struct GepInfo {
  int64_t constOffset = 0;
  std::vector<std::pair<int32_t, int64_t>> dyn; ///< (value, byte scale)
};
struct MmaInfo {
  std::array<int32_t, 4> a;
  std::array<int32_t, 2> b;
  std::array<int32_t, 4> c;
  ElementType type;
  bool aPacked; ///< A/B registers are i32 (packed) rather than vector<2x16>
};

/// Per-byte shadow state of shared memory for race detection.
struct ByteShadow {
  uint32_t wEpoch = 0, rEpoch = 0;
  int32_t wTid = -1, rTid = -1; ///< rTid == kMany: several readers
  uint16_t pending = 0;         ///< cp.async copies in flight to this byte
};
constexpr int32_t kMany = -2;

} // namespace

//===----------------------------------------------------------------------===//
// Stats
//===----------------------------------------------------------------------===//

void Stats::print(llvm::raw_ostream &os, llvm::StringRef kernelName) const {
  os << "emulator stats for kernel '" << kernelName << "': grid (" << grid[0]
     << ", " << grid[1] << ", " << grid[2] << "), " << ctas << " CTAs of "
     << threadsPerCTA << " threads (" << (threadsPerCTA + 31) / 32
     << " warps), " << sharedBytesPerCTA << " shared bytes per CTA\n";
  auto line = [&](const char *name, int64_t v) {
    os << "  " << name;
    for (size_t i = strlen(name); i < 42; ++i)
      os << ' ';
    os << v << "\n";
  };
  line("ops dispatched (CTA-wide)", opsExecuted);
  line("mma.sync (warp instrs)", mma);
  line("ldmatrix (warp instrs)", ldmatrix);
  line("shfl.sync (warp instrs)", shfl);
  line("barriers (per CTA)", barriers);
  line("barriers (warp instrs)", barrierWarps);
  line("cp.async (warp instrs)", cpAsync);
  line("cp.async bytes", cpAsyncBytes);
  line("cp.async commit_group (warp)", cpAsyncCommits);
  line("cp.async wait_group (warp)", cpAsyncWaits);
  line("global loads (warp instrs)", globalLoads);
  line("global stores (warp instrs)", globalStores);
  line("global bytes read", globalBytesRead);
  line("global bytes written", globalBytesWritten);
  line("shared loads (warp instrs)", sharedLoads);
  line("shared stores (warp instrs)", sharedStores);
  line("shared bytes read", sharedBytesRead);
  line("shared bytes written", sharedBytesWritten);
  line("shared requests (warp-wide)", sharedRequests);
  line("shared bank conflicts (extra wavefronts)", bankConflicts);
}

//===----------------------------------------------------------------------===//
// Kernel implementation
//===----------------------------------------------------------------------===//

struct Kernel::Impl {
  gpu::GPUFuncOp func;
  std::string kernelName;
  int64_t T = 0; ///< threads per CTA
  int64_t numWarps = 0;
  std::array<int64_t, 3> block{{1, 1, 1}};
  int64_t sharedLimit = 0;
  std::string sharedLimitWhy;

  std::vector<ValInfo> vals;
  std::vector<Instr> code;
  std::vector<IfInfo> ifs;
  std::vector<ForInfo> fors;
  std::vector<GepInfo> geps;
  std::vector<MmaInfo> mmas;
  std::vector<std::vector<int32_t>> lists;  ///< operand lists
  std::vector<std::vector<int64_t>> ilists; ///< integer lists (shuffle masks)
  llvm::DenseMap<Value, int32_t> valueIds;
  std::vector<std::pair<int32_t, Operation *>> constants; ///< prefilled
  uint32_t numCells = 0;
  uint32_t topEnd = 0;
  unsigned depth = 0, maxDepth = 0; ///< region nesting while compiling
  llvm::DenseMap<Operation *, int64_t> sharedBase; ///< LLVM::GlobalOp -> offset
  int64_t sharedTotal = 0;

  // --- run state ---
  std::vector<Cell> cells;
  std::vector<std::vector<uint8_t>> maskPool;
  std::array<int64_t, 3> cta{{0, 0, 0}};
  std::array<int64_t, 3> grid{{1, 1, 1}};
  std::vector<GlobalBuffer> *buffers = nullptr;
  std::unique_ptr<SharedMemory> smem;
  std::vector<ByteShadow> shadow;
  uint32_t epoch = 0;
  std::vector<CpAsyncState> cpStates;
  struct Range {
    uint32_t dst, size;
  };
  std::vector<std::vector<Range>> cpCurrent;
  std::vector<std::deque<std::vector<Range>>> cpGroups;
  Stats *stats = nullptr;
  Options options;
  Error *err = nullptr;

  // ---------------------------------------------------------------- prepare
  bool prepError(Operation *op, const std::string &what, Error &error,
                 Error::Kind kind = Error::Kind::Unsupported) {
    error.kind = kind;
    error.message = formatSourceLocation(op->getLoc()) +
                    ": error: " + op->getName().getStringRef().str() + ": " +
                    what;
    return false;
  }

  int32_t newValue(Value v, const TypeInfo &ti) {
    ValInfo vi;
    vi.base = numCells;
    vi.n = ti.n;
    vi.sk = ti.sk;
    numCells += ti.n * T;
    int32_t id = vals.size();
    vals.push_back(vi);
    valueIds[v] = id;
    return id;
  }
  bool defineValue(Operation *op, Value v, Error &error, int32_t &id) {
    auto ti = typeInfo(v.getType());
    if (!ti)
      return prepError(op,
                       "values of type " + typeStr(v.getType()) +
                           " are not supported by the emulator",
                       error);
    id = newValue(v, *ti);
    return true;
  }
  /// Defines each of `vs`, appending their ids to `ids`.
  bool defineValues(Operation *op, ValueRange vs, Error &error,
                    std::vector<int32_t> &ids) {
    for (Value v : vs) {
      int32_t id;
      if (!defineValue(op, v, error, id))
        return false;
      ids.push_back(id);
    }
    return true;
  }
  int32_t idOf(Value v) {
    auto it = valueIds.find(v);
    return it == valueIds.end() ? -1 : it->second;
  }

  struct RegionDepth {
    Impl &impl;
    explicit RegionDepth(Impl &impl) : impl(impl) {
      impl.maxDepth = std::max(impl.maxDepth, ++impl.depth);
    }
    ~RegionDepth() { --impl.depth; }
  };
  bool prepare(gpu::GPUFuncOp f, Error &error);
  bool compileBlock(Block &block, Error &error);
  bool compileOp(Operation *op, Error &error);

  // ---------------------------------------------------------------- execute
  bool fail(const Instr &I, const std::string &what) {
    err->kind = Error::Kind::Runtime;
    err->message = formatSourceLocation(I.op->getLoc()) +
                   ": error: " + I.op->getName().getStringRef().str() + ": " +
                   what + " [CTA (" + std::to_string(cta[0]) + ", " +
                   std::to_string(cta[1]) + ", " + std::to_string(cta[2]) +
                   ") of kernel '" + kernelName + "']";
    return false;
  }
  std::string threadName(int64_t t) const {
    return "thread " + std::to_string(t) + " (warp " + std::to_string(t / 32) +
           ", lane " + std::to_string(t % 32) + ")";
  }
  Cell *cellsOf(int32_t id) { return &cells[vals[id].base]; }

  bool run(uint32_t begin, uint32_t end, const uint8_t *mask, int64_t count,
           unsigned depth);
  bool execPure(const Instr &I, const uint8_t *mask);
  bool execIf(const Instr &I, const uint8_t *mask, int64_t count,
              unsigned depth);
  bool execFor(const Instr &I, const uint8_t *mask, int64_t count,
               unsigned depth);
  bool execLoad(const Instr &I, const uint8_t *mask);
  bool execStore(const Instr &I, const uint8_t *mask);
  template <bool Write> bool execMemAccess(const Instr &I, const uint8_t *mask);
  template <typename F>
  bool sharedRequests(const uint8_t *mask, int64_t &count, F &&lane);
  void copyMasked(const std::vector<int32_t> &from,
                  const std::vector<int32_t> &to, const uint8_t *m,
                  int64_t cnt);
  bool execShfl(const Instr &I, const uint8_t *mask);
  bool execMma(const Instr &I, const uint8_t *mask);
  bool execLdMatrix(const Instr &I, const uint8_t *mask);
  bool execCpAsync(const Instr &I, const uint8_t *mask);
  bool execCpAsyncWait(const Instr &I, const uint8_t *mask);
  bool execSReg(const Instr &I);

  /// Calls f(p, t) for each thread t whose dynamic position p (operand
  /// I.b) is in [0, n); fails if an active thread's position is not.
  template <typename F>
  bool forDynPositions(const Instr &I, const uint8_t *mask, uint32_t n, F &&f) {
    const Cell *Pp = cellsOf(I.b);
    for (int64_t t = 0; t < T; ++t) {
      int64_t p = Pp[t].i;
      if (p < 0 || p >= n) {
        if (mask[t])
          return fail(I, "dynamic position " + std::to_string(p) +
                             " out of range in " + threadName(t));
        continue;
      }
      f(p, t);
    }
    return true;
  }
  uint32_t warpMask(const uint8_t *mask, int64_t w) const {
    uint32_t m = 0;
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t < T && mask[t])
        m |= 1u << l;
    }
    return m;
  }
  /// Validates a global access of `bytes` at pointer `p` by thread t.
  bool checkGlobal(const Instr &I, int64_t t, int64_t p, int64_t bytes,
                   int64_t align, bool write, uint8_t *&addr);
  /// Bounds / alignment of a shared access.
  bool checkShared(const Instr &I, int64_t t, int64_t off, int64_t bytes,
                   int64_t align, const char *what);
  /// Race and in-flight cp.async checks of a shared access; records it.
  bool trackShared(const Instr &I, int64_t t, uint32_t off, uint32_t bytes,
                   bool write, bool fromCpAsync = false);
  bool landCopies(const Instr &I, int64_t t, std::vector<Range> &ranges);
};

Kernel::Kernel() : impl(std::make_unique<Impl>()) {}
Kernel::~Kernel() = default;
int64_t Kernel::threadsPerCTA() const { return impl->T; }
bool Kernel::prepare(gpu::GPUFuncOp func, Error &error) {
  return impl->prepare(func, error);
}

bool Kernel::Impl::prepare(gpu::GPUFuncOp f, Error &error) {
  func = f;
  kernelName = f.getName().str();
  if (auto kb = f.getKnownBlockSizeAttr()) {
    auto sizes = kb.asArrayRef();
    for (size_t i = 0; i < sizes.size() && i < 3; ++i)
      block[i] = sizes[i];
  } else if (auto nw = f->getAttrOfType<IntegerAttr>(flash::simt::kNumWarpsAttrName)) {
    block = {32 * nw.getInt(), 1, 1};
  } else {
    return prepError(f,
                     "the kernel has neither known_block_size nor "
                     "flashc.num_warps: the block size is unknown",
                     error, Error::Kind::Internal);
  }
  T = block[0] * block[1] * block[2];
  if (T <= 0 || T > 1024)
    return prepError(
        f, "block of " + std::to_string(T) + " threads (expected 1..1024)",
        error, Error::Kind::Internal);
  numWarps = (T + 31) / 32;

  // Shared memory: every addr-space-3 global of the gpu.module, in order.
  if (auto gm = f->getParentOfType<gpu::GPUModuleOp>()) {
    for (auto g : gm.getOps<LLVM::GlobalOp>()) {
      if (g.getAddrSpace() != 3)
        continue;
      auto size = llvmTypeSize(g.getGlobalType());
      if (!size)
        return prepError(g,
                         "shared global of unsupported type " +
                             typeStr(g.getGlobalType()),
                         error);
      int64_t align = g.getAlignment() ? *g.getAlignment() : 16;
      if (align < 1)
        align = 1;
      sharedTotal = (sharedTotal + align - 1) / align * align;
      sharedBase[g.getOperation()] = sharedTotal;
      sharedTotal += *size;
    }
  }
  sharedLimit = sharedTotal;
  sharedLimitWhy = "the shared globals' size";
  if (auto sb = f->getAttrOfType<IntegerAttr>(flash::simt::kSharedBytesAttrName)) {
    if (sb.getInt() > 0 && sb.getInt() < sharedLimit) {
      sharedLimit = sb.getInt();
      sharedLimitWhy = "the kernel's flashc.shared_bytes";
    }
  }

  Block &entry = f.getBody().front();
  if (!f.getBody().hasOneBlock())
    return prepError(f,
                     "the kernel body has more than one block (the "
                     "emulator runs structured control flow only)",
                     error);
  for (BlockArgument arg : entry.getArguments()) {
    int32_t id;
    if (!defineValue(f, arg, error, id))
      return false;
  }
  if (!compileBlock(entry, error))
    return false;
  topEnd = code.size();
  return true;
}

bool Kernel::Impl::compileBlock(Block &block, Error &error) {
  for (Operation &op : block)
    if (!compileOp(&op, error))
      return false;
  return true;
}

static std::optional<Opc> elementwiseOpc(StringRef name) {
  return llvm::StringSwitch<std::optional<Opc>>(name)
      .Case("arith.addi", Opc::AddI)
      .Case("arith.subi", Opc::SubI)
      .Case("arith.muli", Opc::MulI)
      .Case("arith.divsi", Opc::DivSI)
      .Case("arith.divui", Opc::DivUI)
      .Case("arith.remsi", Opc::RemSI)
      .Case("arith.remui", Opc::RemUI)
      .Case("arith.ceildivsi", Opc::CeilDivSI)
      .Case("arith.ceildivui", Opc::CeilDivUI)
      .Case("arith.floordivsi", Opc::FloorDivSI)
      .Case("arith.andi", Opc::AndI)
      .Case("arith.ori", Opc::OrI)
      .Case("arith.xori", Opc::XOrI)
      .Case("arith.shli", Opc::ShlI)
      .Case("arith.shrsi", Opc::ShrSI)
      .Case("arith.shrui", Opc::ShrUI)
      .Case("arith.maxsi", Opc::MaxSI)
      .Case("arith.minsi", Opc::MinSI)
      .Case("arith.maxui", Opc::MaxUI)
      .Case("arith.minui", Opc::MinUI)
      .Case("arith.addf", Opc::AddF)
      .Case("arith.subf", Opc::SubF)
      .Case("arith.mulf", Opc::MulF)
      .Case("arith.divf", Opc::DivF)
      .Case("arith.remf", Opc::RemF)
      .Case("arith.maximumf", Opc::MaximumF)
      .Case("arith.minimumf", Opc::MinimumF)
      .Case("arith.maxnumf", Opc::MaxNumF)
      .Case("arith.minnumf", Opc::MinNumF)
      .Case("math.powf", Opc::PowF)
      .Case("math.copysign", Opc::CopySign)
      .Case("arith.negf", Opc::NegF)
      .Case("math.absf", Opc::AbsF)
      .Case("math.exp", Opc::Exp)
      .Case("math.exp2", Opc::Exp2)
      .Case("math.expm1", Opc::ExpM1)
      .Case("math.log", Opc::Log)
      .Case("math.log2", Opc::Log2)
      .Case("math.log1p", Opc::Log1p)
      .Case("math.sqrt", Opc::Sqrt)
      .Case("math.rsqrt", Opc::Rsqrt)
      .Case("math.tanh", Opc::Tanh)
      .Case("math.sin", Opc::Sin)
      .Case("math.cos", Opc::Cos)
      .Case("math.erf", Opc::Erf)
      .Case("math.ceil", Opc::Ceil)
      .Case("math.floor", Opc::Floor)
      .Case("math.round", Opc::Round)
      .Case("math.roundeven", Opc::RoundEven)
      .Case("math.trunc", Opc::Trunc)
      .Case("math.fma", Opc::Fma)
      .Case("arith.select", Opc::Select)
      .Case("math.absi", Opc::AbsI)
      .Case("arith.cmpi", Opc::CmpI)
      .Case("arith.cmpf", Opc::CmpF)
      .Case("arith.extsi", Opc::ExtSI)
      .Case("arith.extui", Opc::ExtUI)
      .Case("arith.trunci", Opc::TruncI)
      .Case("arith.sitofp", Opc::SIToFP)
      .Case("arith.uitofp", Opc::UIToFP)
      .Case("arith.fptosi", Opc::FPToSI)
      .Case("arith.fptoui", Opc::FPToUI)
      .Case("arith.extf", Opc::FExt)
      .Case("arith.truncf", Opc::FTrunc)
      .Case("arith.bitcast", Opc::Bitcast)
      .Case("llvm.bitcast", Opc::Bitcast)
      .Case("arith.index_cast", Opc::IndexCast)
      .Case("arith.index_castui", Opc::IndexCastUI)
      .Default(std::nullopt);
}

static std::optional<int64_t> sregKind(StringRef name) {
  return llvm::StringSwitch<std::optional<int64_t>>(name)
      .Case("nvvm.read.ptx.sreg.tid.x", SR_TidX)
      .Case("nvvm.read.ptx.sreg.tid.y", SR_TidY)
      .Case("nvvm.read.ptx.sreg.tid.z", SR_TidZ)
      .Case("nvvm.read.ptx.sreg.ntid.x", SR_NTidX)
      .Case("nvvm.read.ptx.sreg.ntid.y", SR_NTidY)
      .Case("nvvm.read.ptx.sreg.ntid.z", SR_NTidZ)
      .Case("nvvm.read.ptx.sreg.ctaid.x", SR_CtaX)
      .Case("nvvm.read.ptx.sreg.ctaid.y", SR_CtaY)
      .Case("nvvm.read.ptx.sreg.ctaid.z", SR_CtaZ)
      .Case("nvvm.read.ptx.sreg.nctaid.x", SR_NCtaX)
      .Case("nvvm.read.ptx.sreg.nctaid.y", SR_NCtaY)
      .Case("nvvm.read.ptx.sreg.nctaid.z", SR_NCtaZ)
      .Case("nvvm.read.ptx.sreg.laneid", SR_Lane)
      .Case("nvvm.read.ptx.sreg.warpid", SR_Warp)
      .Case("nvvm.read.ptx.sreg.nwarpid", SR_NWarp)
      .Default(std::nullopt);
}

bool Kernel::Impl::compileOp(Operation *op, Error &error) {
  StringRef name = op->getName().getStringRef();
  Instr I;
  I.op = op;
  auto operandId = [&](unsigned i) -> int32_t {
    return idOf(op->getOperand(i));
  };
  // Every operand must already have a slot (SSA dominance in one block tree).
  for (Value v : op->getOperands())
    if (idOf(v) < 0)
      return prepError(op,
                       "operand defined outside the kernel or not yet "
                       "defined (unsupported IR form)",
                       error, Error::Kind::Internal);

  // Terminators handled by their parents.
  if (isa<scf::YieldOp, gpu::ReturnOp>(op))
    return true;

  auto defineResult = [&](unsigned i) -> bool {
    int32_t id;
    if (!defineValue(op, op->getResult(i), error, id))
      return false;
    if (i == 0)
      I.res = id;
    return true;
  };

  // Constants: filled once per launch.
  if (isa<arith::ConstantOp, LLVM::ConstantOp, LLVM::UndefOp, LLVM::PoisonOp,
          LLVM::ZeroOp, ub::PoisonOp>(op)) {
    if (!defineResult(0))
      return false;
    Attribute attr;
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      attr = c.getValue();
    else if (auto c = dyn_cast<LLVM::ConstantOp>(op))
      attr = c.getValue();
    if (attr && !isa<IntegerAttr, FloatAttr, DenseElementsAttr, BoolAttr>(attr))
      return prepError(
          op,
          "constant attribute " +
              [&] {
                std::string s;
                llvm::raw_string_ostream os(s);
                os << attr;
                return s;
              }() +
              " is not supported",
          error);
    constants.push_back({I.res, op});
    return true;
  }

  if (auto opc = elementwiseOpc(name)) {
    I.opc = *opc;
    if (op->getNumResults() != 1)
      return prepError(op, "expected one result", error, Error::Kind::Internal);
    if (!defineResult(0))
      return false;
    I.a = operandId(0);
    if (op->getNumOperands() > 1)
      I.b = operandId(1);
    if (op->getNumOperands() > 2)
      I.c = operandId(2);
    I.sk = vals[I.res].sk;
    I.sk2 = vals[I.a].sk;
    if (auto c = dyn_cast<arith::CmpIOp>(op))
      I.pred = static_cast<uint8_t>(c.getPredicate());
    if (auto c = dyn_cast<arith::CmpFOp>(op))
      I.pred = static_cast<uint8_t>(c.getPredicate());
    // Operand/result cell counts must agree (a scalar select condition may
    // pick whole vectors).
    uint32_t n = vals[I.res].n;
    for (int32_t id : {I.a, I.b, I.c}) {
      if (id < 0)
        continue;
      if (vals[id].n != n &&
          !(I.opc == Opc::Select && id == I.a && vals[id].n == 1) &&
          I.opc != Opc::Bitcast)
        return prepError(op, "operand and result shapes differ", error,
                         Error::Kind::Internal);
    }
    if (I.opc == Opc::Bitcast) {
      auto in = llvmTypeSize(op->getOperand(0).getType());
      auto out = llvmTypeSize(op->getResult(0).getType());
      if (!in || !out || *in != *out || *in > 64)
        return prepError(op, "unsupported bitcast", error);
    }
    code.push_back(I);
    return true;
  }

  if (auto k = sregKind(name)) {
    I.opc = Opc::SReg;
    I.imm = *k;
    if (!defineResult(0))
      return false;
    code.push_back(I);
    return true;
  }
  if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::GridDimOp, gpu::BlockDimOp,
          gpu::LaneIdOp>(op)) {
    I.opc = Opc::SReg;
    auto dimOf = [](gpu::Dimension d) { return static_cast<int64_t>(d); };
    if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
      I.imm = SR_TidX + dimOf(o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
      I.imm = SR_NTidX + dimOf(o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
      I.imm = SR_CtaX + dimOf(o.getDimension());
    else if (auto o = dyn_cast<gpu::GridDimOp>(op))
      I.imm = SR_NCtaX + dimOf(o.getDimension());
    else
      I.imm = SR_Lane;
    if (!defineResult(0))
      return false;
    code.push_back(I);
    return true;
  }

  if (auto o = dyn_cast<vector::BroadcastOp>(op)) {
    I.opc = Opc::Broadcast;
    I.a = operandId(0);
    if (!defineResult(0))
      return false;
    if (vals[I.a].n != 1 && vals[I.a].n != vals[I.res].n)
      return prepError(op, "unsupported broadcast shape", error);
    code.push_back(I);
    return true;
  }
  if (name == "vector.splat") {
    I.opc = Opc::Broadcast;
    I.a = operandId(0);
    if (!defineResult(0))
      return false;
    code.push_back(I);
    return true;
  }
  if (isa<vector::FromElementsOp>(op)) {
    I.opc = Opc::FromElements;
    if (!defineResult(0))
      return false;
    std::vector<int32_t> ops;
    for (Value v : op->getOperands())
      ops.push_back(idOf(v));
    I.aux = lists.size();
    lists.push_back(std::move(ops));
    code.push_back(I);
    return true;
  }
  // vector.extract / vector.insert: defines the result, then sets the
  // 1-D position (I.imm, or I.b with I.imm = -1 when dynamic).
  auto setPosition = [&](auto o, const char *what) -> bool {
    if (!defineResult(0))
      return false;
    auto pos = o.getStaticPosition();
    if (pos.size() != 1)
      return prepError(op, std::string("only 1-D ") + what + " are supported",
                       error);
    if (pos[0] == ShapedType::kDynamic) {
      I.b = idOf(o.getDynamicPosition()[0]);
      I.imm = -1;
    } else {
      I.imm = pos[0];
    }
    code.push_back(I);
    return true;
  };
  if (auto o = dyn_cast<vector::ExtractOp>(op)) {
    I.opc = Opc::Extract;
    I.a = idOf(o.getSource());
    return setPosition(o, "extracts");
  }
  if (auto o = dyn_cast<vector::InsertOp>(op)) {
    I.opc = Opc::Insert;
    I.a = idOf(o.getValueToStore());
    I.c = idOf(o.getDest());
    return setPosition(o, "inserts");
  }
  if (auto o = dyn_cast<vector::ShuffleOp>(op)) {
    I.opc = Opc::Shuffle;
    I.a = idOf(o.getV1());
    I.b = idOf(o.getV2());
    if (!defineResult(0))
      return false;
    std::vector<int64_t> m(o.getMask().begin(), o.getMask().end());
    I.aux = ilists.size();
    ilists.push_back(std::move(m));
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<LLVM::ExtractValueOp>(op)) {
    I.opc = Opc::ExtractValue;
    I.a = idOf(o.getContainer());
    if (!defineResult(0))
      return false;
    if (o.getPosition().size() != 1)
      return prepError(op, "only one-level extractvalue is supported", error);
    I.imm = o.getPosition()[0];
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<LLVM::InsertValueOp>(op)) {
    I.opc = Opc::InsertValue;
    I.a = idOf(o.getValue());
    I.c = idOf(o.getContainer());
    if (!defineResult(0))
      return false;
    if (o.getPosition().size() != 1)
      return prepError(op, "only one-level insertvalue is supported", error);
    I.imm = o.getPosition()[0];
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<LLVM::AddressOfOp>(op)) {
    auto gm = op->getParentOfType<gpu::GPUModuleOp>();
    Operation *g =
        gm ? SymbolTable::lookupSymbolIn(gm, o.getGlobalNameAttr()) : nullptr;
    auto it = g ? sharedBase.find(g) : sharedBase.end();
    if (it == sharedBase.end())
      return prepError(op,
                       "address of '" + o.getGlobalName().str() +
                           "', which is not a shared-memory (addr_space "
                           "3) global of the gpu.module",
                       error);
    if (!defineResult(0))
      return false;
    // A constant shared pointer: fill like a constant.
    constants.push_back({I.res, op});
    return true;
  }
  if (auto o = dyn_cast<LLVM::GEPOp>(op)) {
    I.opc = Opc::GEP;
    I.a = idOf(o.getBase());
    if (!defineResult(0))
      return false;
    GepInfo gi;
    Type cur = o.getElemType();
    bool first = true;
    for (auto idx : o.getIndices()) {
      int64_t scale;
      if (first) {
        auto s = llvmTypeSize(cur);
        if (!s)
          return prepError(op, "GEP over unsupported type " + typeStr(cur),
                           error);
        scale = *s;
        first = false;
      } else if (auto a = dyn_cast<LLVM::LLVMArrayType>(cur)) {
        cur = a.getElementType();
        auto s = llvmTypeSize(cur);
        if (!s)
          return prepError(op, "GEP over unsupported type", error);
        scale = *s;
      } else if (auto v = dyn_cast<VectorType>(cur)) {
        cur = v.getElementType();
        scale = *llvmTypeSize(cur);
      } else {
        return prepError(
            op, "GEP into " + typeStr(cur) + " is not supported (structs)",
            error);
      }
      if (auto attr = dyn_cast<IntegerAttr>(idx))
        gi.constOffset += attr.getInt() * scale;
      else
        gi.dyn.push_back({idOf(cast<Value>(idx)), scale});
    }
    I.aux = geps.size();
    geps.push_back(std::move(gi));
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<LLVM::LoadOp>(op)) {
    I.opc = Opc::Load;
    I.a = idOf(o.getAddr());
    if (!defineResult(0))
      return false;
    if (!vals[I.res].n || typeInfo(o.getType())->kinds.size())
      return prepError(op, "loads of structs are not supported", error);
    I.sk = vals[I.res].sk;
    I.sk2 = vals[I.a].sk;
    I.imm = o.getAlignment() ? *o.getAlignment() : byteSize(I.sk);
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<LLVM::StoreOp>(op)) {
    I.opc = Opc::Store;
    I.a = idOf(o.getAddr());
    I.b = idOf(o.getValue());
    if (typeInfo(o.getValue().getType())->kinds.size())
      return prepError(op, "stores of structs are not supported", error);
    I.sk = vals[I.b].sk;
    I.sk2 = vals[I.a].sk;
    I.imm = o.getAlignment() ? *o.getAlignment() : byteSize(I.sk);
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::ShflOp>(op)) {
    I.opc = Opc::Shfl;
    if (!defineResult(0))
      return false;
    std::vector<int32_t> ops = {idOf(o.getThreadMask()), idOf(o.getVal()),
                                idOf(o.getOffset()), idOf(o.getMaskAndClamp())};
    I.aux = lists.size();
    lists.push_back(std::move(ops));
    I.sk = vals[idOf(o.getVal())].sk;
    if (I.sk != SK::I32 && I.sk != SK::F32)
      return prepError(op, "shfl.sync of " + typeStr(o.getVal().getType()),
                       error);
    switch (o.getKind()) {
    case NVVM::ShflKind::bfly:
      I.imm = (int64_t)ShflMode::Bfly;
      break;
    case NVVM::ShflKind::up:
      I.imm = (int64_t)ShflMode::Up;
      break;
    case NVVM::ShflKind::down:
      I.imm = (int64_t)ShflMode::Down;
      break;
    case NVVM::ShflKind::idx:
      I.imm = (int64_t)ShflMode::Idx;
      break;
    }
    I.imm2 = op->hasAttr("return_value_and_is_valid") ? 1 : 0;
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::MmaOp>(op)) {
    I.opc = Opc::Mma;
    auto shape = o.getShapeAttr();
    if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
        o.getLayoutA() != NVVM::MMALayout::row ||
        o.getLayoutB() != NVVM::MMALayout::col || o.getOperandA().size() != 4 ||
        o.getOperandB().size() != 2 || o.getOperandC().size() != 4)
      return prepError(op,
                       "only mma.sync m16n8k16 row.col with f16/bf16 "
                       "operands and 4 x f32 accumulators is supported",
                       error);
    if (!defineResult(0))
      return false;
    auto rt = typeInfo(o.getType());
    if (rt->n != 4 || rt->sk != SK::F32 || !rt->kinds.empty())
      return prepError(op, "mma.sync result must be 4 x f32", error);
    MmaInfo mi;
    for (int i = 0; i < 4; ++i)
      mi.a[i] = idOf(o.getOperandA()[i]);
    for (int i = 0; i < 2; ++i)
      mi.b[i] = idOf(o.getOperandB()[i]);
    for (int i = 0; i < 4; ++i) {
      mi.c[i] = idOf(o.getOperandC()[i]);
      if (vals[mi.c[i]].sk != SK::F32 || vals[mi.c[i]].n != 1)
        return prepError(op, "mma.sync accumulator operands must be f32",
                         error);
    }
    const ValInfo &a0 = vals[mi.a[0]];
    mi.aPacked = a0.n == 1;
    if (mi.aPacked && a0.sk != SK::I32)
      return prepError(op, "mma.sync A registers must be i32 or vector<2x16>",
                       error);
    if (!mi.aPacked && (a0.n != 2 || (a0.sk != SK::F16 && a0.sk != SK::BF16)))
      return prepError(op, "mma.sync A registers must be i32 or vector<2x16>",
                       error);
    bool bf16 = !mi.aPacked && a0.sk == SK::BF16;
    if (auto t = o.getMultiplicandAPtxType()) {
      if (*t == NVVM::MMATypes::bf16)
        bf16 = true;
      else if (*t != NVVM::MMATypes::f16)
        return prepError(op, "mma.sync multiplicand type must be f16 or bf16",
                         error);
    }
    mi.type = bf16 ? ElementType::BF16 : ElementType::F16;
    for (int i = 0; i < 2; ++i)
      if ((vals[mi.b[i]].n == 1) != mi.aPacked)
        return prepError(op, "mma.sync A and B registers differ in form",
                         error);
    I.aux = mmas.size();
    mmas.push_back(mi);
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::LdMatrixOp>(op)) {
    I.opc = Opc::LdMatrix;
    I.a = idOf(o.getPtr());
    if (!defineResult(0))
      return false;
    I.imm = o.getNum();
    I.imm2 = o.getLayout() == NVVM::MMALayout::col ? 1 : 0;
    auto rt = typeInfo(o.getType());
    if (rt->n != (unsigned)I.imm || rt->sk != SK::I32 || !rt->kinds.empty())
      return prepError(op, "ldmatrix result must be num x i32", error);
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::CpAsyncOp>(op)) {
    I.opc = Opc::CpAsync;
    I.a = idOf(o.getDst());
    I.b = idOf(o.getSrc());
    I.c = o.getCpSize() ? idOf(o.getCpSize()) : -1;
    I.imm = o.getSize();
    code.push_back(I);
    return true;
  }
  if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    I.opc = Opc::CpAsyncCommit;
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    I.opc = Opc::CpAsyncWait;
    I.imm = o.getN();
    code.push_back(I);
    return true;
  }
  if (isa<NVVM::Barrier0Op, gpu::BarrierOp>(op)) {
    I.opc = Opc::Barrier;
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<NVVM::BarrierOp>(op)) {
    if (o.getNumberOfThreads() || op->getNumResults() || o.getReductionOp())
      return prepError(op,
                       "only full-CTA barriers without reduction are "
                       "supported",
                       error);
    I.opc = Opc::Barrier;
    I.a = o.getBarrierId() ? idOf(o.getBarrierId()) : -1;
    code.push_back(I);
    return true;
  }
  if (auto o = dyn_cast<scf::IfOp>(op)) {
    I.opc = Opc::If;
    I.a = idOf(o.getCondition());
    if (vals[I.a].n != 1)
      return prepError(op, "vector condition", error, Error::Kind::Internal);
    IfInfo info;
    if (!defineValues(op, op->getResults(), error, info.results))
      return false;
    uint32_t at = code.size();
    I.aux = ifs.size();
    ifs.push_back(info);
    code.push_back(I);
    RegionDepth guard(*this);
    info.thenBegin = code.size();
    if (!compileBlock(o.getThenRegion().front(), error))
      return false;
    info.thenEnd = code.size();
    for (Value v : o.thenYield().getOperands())
      info.thenYield.push_back(idOf(v));
    info.elseBegin = info.elseEnd = code.size();
    if (!o.getElseRegion().empty()) {
      if (!compileBlock(o.getElseRegion().front(), error))
        return false;
      info.elseEnd = code.size();
      for (Value v : o.elseYield().getOperands())
        info.elseYield.push_back(idOf(v));
    }
    ifs[code[at].aux] = std::move(info);
    return true;
  }
  if (auto o = dyn_cast<scf::ForOp>(op)) {
    I.opc = Opc::For;
    ForInfo info;
    info.lb = idOf(o.getLowerBound());
    info.ub = idOf(o.getUpperBound());
    info.step = idOf(o.getStep());
    info.unsignedCmp = o.getUnsignedCmp();
    for (Value v : o.getInitArgs())
      info.inits.push_back(idOf(v));
    if (!defineValue(op, o.getInductionVar(), error, info.iv))
      return false;
    if (!defineValues(op, o.getRegionIterArgs(), error, info.iterArgs) ||
        !defineValues(op, o.getResults(), error, info.results))
      return false;
    uint32_t at = code.size();
    I.aux = fors.size();
    fors.push_back(info);
    code.push_back(I);
    RegionDepth guard(*this);
    info.bodyBegin = code.size();
    if (!compileBlock(*o.getBody(), error))
      return false;
    info.bodyEnd = code.size();
    auto yield = cast<scf::YieldOp>(o.getBody()->getTerminator());
    for (Value v : yield.getOperands())
      info.yields.push_back(idOf(v));
    fors[code[at].aux] = std::move(info);
    return true;
  }
  return prepError(op, "op is not supported by the emulator", error);
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

namespace {
inline double fmaxIEEE(double a, double b) { // maximumf: NaN wins, -0 < +0
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double fminIEEE(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
inline bool cmpF(uint8_t pred, double a, double b) {
  return evalCmpF(static_cast<arith::CmpFPredicate>(pred), a, b);
}
inline int64_t fpToInt(double v, unsigned w, bool isSigned) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (isSigned) {
    double lo = w >= 64 ? -9.2233720368547758e18 : -std::ldexp(1.0, w - 1);
    double hi = w >= 64 ? 9.2233720368547758e18 : std::ldexp(1.0, w - 1) - 1;
    if (v <= lo)
      return wrapInt(w >= 64 ? std::numeric_limits<int64_t>::min()
                             : -(int64_t(1) << (w - 1)),
                     w);
    if (v >= hi)
      return wrapInt(w >= 64 ? std::numeric_limits<int64_t>::max()
                             : (int64_t(1) << (w - 1)) - 1,
                     w);
    return wrapInt(static_cast<int64_t>(v), w);
  }
  if (v <= 0)
    return 0;
  double hi = std::ldexp(1.0, w);
  if (v >= hi)
    return wrapInt(-1, w);
  return wrapInt(static_cast<int64_t>(static_cast<uint64_t>(v)), w);
}
} // namespace

bool Kernel::Impl::execSReg(const Instr &I) {
  Cell *R = cellsOf(I.res);
  for (int64_t t = 0; t < T; ++t) {
    int64_t v = 0;
    switch (I.imm) {
    case SR_TidX:
      v = t % block[0];
      break;
    case SR_TidY:
      v = (t / block[0]) % block[1];
      break;
    case SR_TidZ:
      v = t / (block[0] * block[1]);
      break;
    case SR_NTidX:
      v = block[0];
      break;
    case SR_NTidY:
      v = block[1];
      break;
    case SR_NTidZ:
      v = block[2];
      break;
    case SR_CtaX:
      v = cta[0];
      break;
    case SR_CtaY:
      v = cta[1];
      break;
    case SR_CtaZ:
      v = cta[2];
      break;
    case SR_NCtaX:
      v = grid[0];
      break;
    case SR_NCtaY:
      v = grid[1];
      break;
    case SR_NCtaZ:
      v = grid[2];
      break;
    case SR_Lane:
      v = t % 32;
      break;
    case SR_Warp:
      v = t / 32;
      break;
    case SR_NWarp:
      v = numWarps;
      break;
    }
    R[t].i = wrapInt(v, intWidth(vals[I.res].sk));
  }
  return true;
}

bool Kernel::Impl::execPure(const Instr &I, const uint8_t *mask) {
  const ValInfo &rv = vals[I.res];
  const int64_t N = int64_t(rv.n) * T;
  Cell *R = cellsOf(I.res);
  const Cell *A = I.a >= 0 ? cellsOf(I.a) : nullptr;
  const Cell *B = I.b >= 0 ? cellsOf(I.b) : nullptr;
  const Cell *C = I.c >= 0 ? cellsOf(I.c) : nullptr;
  const unsigned w = intWidth(I.sk);
  const SK s = I.sk;

#define INT_BIN(EXPR)                                                          \
  for (int64_t i = 0; i < N; ++i) {                                            \
    int64_t a = A[i].i, b = B[i].i;                                            \
    (void)a;                                                                   \
    (void)b;                                                                   \
    R[i].i = wrapInt(EXPR, w);                                                 \
  }                                                                            \
  return true;
#define FLT_BIN(EXPR)                                                          \
  if (s == SK::F64) {                                                          \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = (EXPR);                                                         \
    }                                                                          \
  } else if (s == SK::F32) {                                                   \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = static_cast<double>(static_cast<float>(EXPR));                  \
    }                                                                          \
  } else {                                                                     \
    for (int64_t i = 0; i < N; ++i) {                                          \
      double a = A[i].d, b = B[i].d;                                           \
      R[i].d = roundF(s, (EXPR));                                              \
    }                                                                          \
  }                                                                            \
  return true;
#define FLT_UN(EXPR)                                                           \
  for (int64_t i = 0; i < N; ++i) {                                            \
    double a = A[i].d;                                                         \
    R[i].d = roundF(s, (EXPR));                                                \
  }                                                                            \
  return true;

  // Division-like ops: a zero divisor in an active thread is an error.
  auto checkDivisor = [&]() -> bool {
    for (int64_t i = 0; i < N; ++i)
      if (uval(B[i].i, w) == 0 && mask[i % T])
        return fail(I, "integer division by zero in " + threadName(i % T));
    return true;
  };

  switch (I.opc) {
  case Opc::AddI:
    INT_BIN(int64_t(uint64_t(a) + uint64_t(b)))
  case Opc::SubI:
    INT_BIN(int64_t(uint64_t(a) - uint64_t(b)))
  case Opc::MulI:
    INT_BIN(int64_t(uint64_t(a) * uint64_t(b)))
  case Opc::AndI:
    INT_BIN(a & b)
  case Opc::OrI:
    INT_BIN(a | b)
  case Opc::XOrI:
    INT_BIN(a ^ b)
  case Opc::MaxSI:
    INT_BIN(std::max(sval(a, w), sval(b, w)))
  case Opc::MinSI:
    INT_BIN(std::min(sval(a, w), sval(b, w)))
  case Opc::MaxUI:
    INT_BIN(int64_t(std::max(uval(a, w), uval(b, w))))
  case Opc::MinUI:
    INT_BIN(int64_t(std::min(uval(a, w), uval(b, w))))
  case Opc::ShlI:
    INT_BIN(uval(b, w) >= w ? 0 : int64_t(uint64_t(a) << uval(b, w)))
  case Opc::ShrUI:
    INT_BIN(uval(b, w) >= w ? 0 : int64_t(uval(a, w) >> uval(b, w)))
  case Opc::ShrSI:
    INT_BIN(sval(a, w) >> std::min<uint64_t>(uval(b, w), 63))
  case Opc::DivSI:
  case Opc::RemSI:
  case Opc::CeilDivSI:
  case Opc::FloorDivSI:
  case Opc::DivUI:
  case Opc::RemUI:
  case Opc::CeilDivUI: {
    if (!checkDivisor())
      return false;
    for (int64_t i = 0; i < N; ++i) {
      int64_t a = sval(A[i].i, w), b = sval(B[i].i, w);
      uint64_t ua = uval(A[i].i, w), ub = uval(B[i].i, w);
      int64_t r = 0;
      if (ub == 0) {
        R[i].i = 0;
        continue;
      }
      bool ovf = b == -1 && a == std::numeric_limits<int64_t>::min();
      switch (I.opc) {
      case Opc::DivSI:
        r = ovf ? a : a / b;
        break;
      case Opc::RemSI:
        r = ovf ? 0 : a % b;
        break;
      case Opc::CeilDivSI: {
        if (ovf) {
          r = a;
          break;
        }
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) == (b < 0)))
          ++q;
        r = q;
        break;
      }
      case Opc::FloorDivSI: {
        if (ovf) {
          r = a;
          break;
        }
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0)))
          --q;
        r = q;
        break;
      }
      case Opc::DivUI:
        r = int64_t(ua / ub);
        break;
      case Opc::RemUI:
        r = int64_t(ua % ub);
        break;
      case Opc::CeilDivUI:
        r = int64_t(ua / ub + (ua % ub != 0));
        break;
      default:
        break;
      }
      R[i].i = wrapInt(r, w);
    }
    return true;
  }
  case Opc::AbsI:
    for (int64_t i = 0; i < N; ++i) {
      int64_t a = sval(A[i].i, w);
      R[i].i = wrapInt(a < 0 ? int64_t(0 - uint64_t(a)) : a, w);
    }
    return true;
  case Opc::AddF:
    FLT_BIN(a + b)
  case Opc::SubF:
    FLT_BIN(a - b)
  case Opc::MulF:
    FLT_BIN(a * b)
  case Opc::DivF:
    FLT_BIN(a / b)
  case Opc::RemF:
    FLT_BIN(std::fmod(a, b))
  case Opc::MaximumF:
    FLT_BIN(fmaxIEEE(a, b))
  case Opc::MinimumF:
    FLT_BIN(fminIEEE(a, b))
  case Opc::MaxNumF:
    FLT_BIN(std::fmax(a, b))
  case Opc::MinNumF:
    FLT_BIN(std::fmin(a, b))
  case Opc::PowF:
    FLT_BIN(std::pow(a, b))
  case Opc::CopySign:
    FLT_BIN(std::copysign(a, b))
  case Opc::NegF:
    FLT_UN(-a)
  case Opc::AbsF:
    FLT_UN(std::fabs(a))
  case Opc::Exp:
    FLT_UN(std::exp(a))
  case Opc::Exp2:
    FLT_UN(std::exp2(a))
  case Opc::ExpM1:
    FLT_UN(std::expm1(a))
  case Opc::Log:
    FLT_UN(std::log(a))
  case Opc::Log2:
    FLT_UN(std::log2(a))
  case Opc::Log1p:
    FLT_UN(std::log1p(a))
  case Opc::Sqrt:
    FLT_UN(std::sqrt(a))
  case Opc::Rsqrt:
    FLT_UN(1.0 / std::sqrt(a))
  case Opc::Tanh:
    FLT_UN(std::tanh(a))
  case Opc::Sin:
    FLT_UN(std::sin(a))
  case Opc::Cos:
    FLT_UN(std::cos(a))
  case Opc::Erf:
    FLT_UN(std::erf(a))
  case Opc::Ceil:
    FLT_UN(std::ceil(a))
  case Opc::Floor:
    FLT_UN(std::floor(a))
  case Opc::Round:
    FLT_UN(std::round(a))
  case Opc::RoundEven:
    FLT_UN(std::nearbyint(a))
  case Opc::Trunc:
    FLT_UN(std::trunc(a))
  case Opc::Fma:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, std::fma(A[i].d, B[i].d, C[i].d));
    return true;
  case Opc::Select: {
    bool scalarCond = vals[I.a].n == 1 && rv.n > 1;
    for (int64_t i = 0; i < N; ++i) {
      int64_t c = scalarCond ? A[i % T].i : A[i].i;
      R[i] = c ? B[i] : C[i];
    }
    return true;
  }
  case Opc::CmpI: {
    unsigned ow = intWidth(I.sk2);
    using P = arith::CmpIPredicate;
    auto p = static_cast<P>(I.pred);
    for (int64_t i = 0; i < N; ++i) {
      int64_t a = sval(A[i].i, ow), b = sval(B[i].i, ow);
      uint64_t ua = uval(A[i].i, ow), ub = uval(B[i].i, ow);
      bool r = false;
      switch (p) {
      case P::eq:
        r = ua == ub;
        break;
      case P::ne:
        r = ua != ub;
        break;
      case P::slt:
        r = a < b;
        break;
      case P::sle:
        r = a <= b;
        break;
      case P::sgt:
        r = a > b;
        break;
      case P::sge:
        r = a >= b;
        break;
      case P::ult:
        r = ua < ub;
        break;
      case P::ule:
        r = ua <= ub;
        break;
      case P::ugt:
        r = ua > ub;
        break;
      case P::uge:
        r = ua >= ub;
        break;
      }
      R[i].i = r;
    }
    return true;
  }
  case Opc::CmpF:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = cmpF(I.pred, A[i].d, B[i].d);
    return true;
  case Opc::ExtUI:
  case Opc::IndexCastUI: {
    unsigned sw = intWidth(I.sk2);
    for (int64_t i = 0; i < N; ++i)
      R[i].i = wrapInt(int64_t(uval(A[i].i, sw)), w);
    return true;
  }
  case Opc::ExtSI:
  case Opc::TruncI:
  case Opc::IndexCast: {
    unsigned sw = intWidth(I.sk2);
    for (int64_t i = 0; i < N; ++i)
      R[i].i = wrapInt(sval(A[i].i, sw), w);
    return true;
  }
  case Opc::SIToFP: {
    unsigned sw = intWidth(I.sk2);
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, static_cast<double>(sval(A[i].i, sw)));
    return true;
  }
  case Opc::UIToFP: {
    unsigned sw = intWidth(I.sk2);
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, static_cast<double>(uval(A[i].i, sw)));
    return true;
  }
  case Opc::FPToSI:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = fpToInt(A[i].d, w, true);
    return true;
  case Opc::FPToUI:
    for (int64_t i = 0; i < N; ++i)
      R[i].i = fpToInt(A[i].d, w, false);
    return true;
  case Opc::FExt:
  case Opc::FTrunc:
    for (int64_t i = 0; i < N; ++i)
      R[i].d = roundF(s, A[i].d);
    return true;
  case Opc::Bitcast: {
    const ValInfo &av = vals[I.a];
    SK in = av.sk, out = rv.sk;
    uint8_t buf[64];
    for (int64_t t = 0; t < T; ++t) {
      for (uint32_t e = 0; e < av.n; ++e)
        encodeElem(in, A[e * T + t], buf + e * byteSize(in));
      for (uint32_t e = 0; e < rv.n; ++e)
        decodeElem(out, buf + e * byteSize(out), R[e * T + t]);
    }
    return true;
  }
  default:
    break;
  }
#undef INT_BIN
#undef FLT_BIN
#undef FLT_UN
  return fail(I, "internal error: not a pure op");
}

bool Kernel::Impl::checkGlobal(const Instr &I, int64_t t, int64_t p,
                               int64_t bytes, int64_t align, bool write,
                               uint8_t *&addr) {
  int id = globalPtrId(p);
  int64_t off = globalPtrOffset(p);
  const char *what = write ? "write" : "read";
  if (id < 1 || id > (int)buffers->size())
    return fail(I, std::string("global ") + what + " of " +
                       std::to_string(bytes) +
                       " bytes through a pointer "
                       "that is not inside any argument buffer, by " +
                       threadName(t));
  GlobalBuffer &buf = (*buffers)[id - 1];
  int64_t size = buf.bytes.size();
  if (off < 0 || off + bytes > size)
    return fail(I, std::string("out-of-bounds global ") + what + " of " +
                       std::to_string(bytes) + " bytes at byte offset " +
                       std::to_string(off) + " of '" + buf.name + "' (" +
                       std::to_string(size) + " bytes; element " +
                       std::to_string(off / std::max<int64_t>(1, bytes)) +
                       " of this access size) by " + threadName(t));
  if (align > 1 && off % align != 0)
    return fail(I, std::string("misaligned global ") + what + ": byte offset " +
                       std::to_string(off) + " of '" + buf.name +
                       "' is not a multiple of the alignment " +
                       std::to_string(align) + ", by " + threadName(t));
  addr = buf.bytes.data() + off;
  return true;
}

bool Kernel::Impl::checkShared(const Instr &I, int64_t t, int64_t off,
                               int64_t bytes, int64_t align, const char *what) {
  if (off < 0 || off + bytes > sharedLimit)
    return fail(I, std::string("out-of-bounds shared ") + what + " of " +
                       std::to_string(bytes) + " bytes at byte offset " +
                       std::to_string(off) + " (shared memory is " +
                       std::to_string(sharedLimit) +
                       " bytes: " + sharedLimitWhy + ") by " + threadName(t));
  if (align > 1 && off % align != 0)
    return fail(I, std::string("misaligned shared ") + what + ": byte offset " +
                       std::to_string(off) +
                       " is not a multiple of the alignment " +
                       std::to_string(align) + ", by " + threadName(t));
  return true;
}

bool Kernel::Impl::trackShared(const Instr &I, int64_t t, uint32_t off,
                               uint32_t bytes, bool write, bool fromCpAsync) {
  int32_t tid = static_cast<int32_t>(t);
  for (uint32_t k = 0; k < bytes; ++k) {
    ByteShadow &b = shadow[off + k];
    if (b.pending && !fromCpAsync)
      return fail(I, std::string(write ? "write to" : "read of") +
                         " shared byte " + hex(off + k) + " by " +
                         threadName(t) +
                         " while a cp.async to it is still in flight "
                         "(missing or too weak cp.async.wait_group?)");
    if (!options.checkRaces)
      continue;
    if (write) {
      if (b.wEpoch == epoch && b.wTid != tid)
        return fail(I, "shared-memory race: " + threadName(t) +
                           " writes byte " + hex(off + k) + " that " +
                           threadName(b.wTid) +
                           " wrote since the last barrier (missing "
                           "barrier?)");
      if (b.rEpoch == epoch && b.rTid != tid)
        return fail(I, "shared-memory race: " + threadName(t) +
                           " writes byte " + hex(off + k) + " that " +
                           (b.rTid == kMany ? std::string("several threads")
                                            : threadName(b.rTid)) +
                           " read since the last barrier (missing "
                           "barrier?)");
      b.wEpoch = epoch;
      b.wTid = tid;
    } else {
      if (b.wEpoch == epoch && b.wTid != tid)
        return fail(I, "shared-memory race: " + threadName(t) + " reads byte " +
                           hex(off + k) + " that " + threadName(b.wTid) +
                           " wrote since the last barrier (missing "
                           "barrier?)");
      if (b.rEpoch != epoch) {
        b.rEpoch = epoch;
        b.rTid = tid;
      } else if (b.rTid != tid) {
        b.rTid = kMany;
      }
    }
  }
  return true;
}

/// Adds the bank-conflict cost of one warp-wide shared request.
static int64_t requestConflicts(std::vector<std::pair<uint32_t, uint32_t>> &acc,
                                uint32_t active) {
  // Accesses narrower than 4 bytes: the containing word (same bank, and a
  // shared word is a broadcast). Wider than 16: 16-byte pieces.
  uint32_t size = 0;
  for (int l = 0; l < 32; ++l)
    if ((active >> l) & 1u)
      size = acc[l].second;
  if (size == 0)
    return 0;
  if (size < 4) {
    for (auto &a : acc)
      a = {a.first & ~3u, 4};
    return std::max(0, bankConflicts(acc, active));
  }
  if (size == 4 || size == 8 || size == 16)
    return std::max(0, bankConflicts(acc, active));
  int64_t total = 0;
  uint32_t piece = size % 16 == 0 ? 16 : (size % 8 == 0 ? 8 : 4);
  for (uint32_t p = 0; p < size; p += piece) {
    std::vector<std::pair<uint32_t, uint32_t>> sub(32);
    for (int l = 0; l < 32; ++l)
      sub[l] = {acc[l].first + p, piece};
    total += std::max(0, bankConflicts(sub, active));
  }
  return total;
}

/// Walks a warp-wide shared request warp by warp: lane(t, acc) checks and
/// performs active thread t's access (false: it failed) and sets acc to its
/// (offset, size); each warp with an active lane counts once in `count` and
/// in the request and bank-conflict statistics.
template <typename F>
bool Kernel::Impl::sharedRequests(const uint8_t *mask, int64_t &count,
                                  F &&lane) {
  std::vector<std::pair<uint32_t, uint32_t>> acc(32);
  for (int64_t w = 0; w < numWarps; ++w) {
    uint32_t active = 0;
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      acc[l] = {0, 0};
      if (t >= T || !mask[t])
        continue;
      active |= 1u << l;
      if (!lane(t, acc[l]))
        return false;
    }
    if (active) {
      ++count;
      ++stats->sharedRequests;
      stats->bankConflicts += requestConflicts(acc, active);
    }
  }
  return true;
}

/// One warp-wide ld or st (Write) of a global or shared pointer: the
/// per-warp/per-lane walk, checks and statistics shared by both.
template <bool Write>
bool Kernel::Impl::execMemAccess(const Instr &I, const uint8_t *mask) {
  // A load defines I.res from memory; a store writes I.b to memory.
  const int32_t valId = Write ? I.b : I.res;
  const ValInfo &vv = vals[valId];
  const Cell *P = cellsOf(I.a);
  Cell *X = cellsOf(valId);
  const uint32_t esz = byteSize(vv.sk);
  const int64_t bytes = int64_t(esz) * vv.n;
  if (I.sk2 == SK::PG) {
    for (int64_t w = 0; w < numWarps; ++w) {
      bool any = false;
      for (int64_t t = w * 32; t < std::min<int64_t>(T, w * 32 + 32); ++t) {
        if (!mask[t])
          continue;
        any = true;
        uint8_t *addr;
        if (!checkGlobal(I, t, P[t].i, bytes, I.imm, Write, addr))
          return false;
        for (uint32_t e = 0; e < vv.n; ++e) {
          if constexpr (Write)
            encodeElem(vv.sk, X[e * T + t], addr + e * esz);
          else
            decodeElem(vv.sk, addr + e * esz, X[e * T + t]);
        }
        (Write ? stats->globalBytesWritten : stats->globalBytesRead) += bytes;
      }
      (Write ? stats->globalStores : stats->globalLoads) += any;
    }
    return true;
  }
  // Shared.
  uint8_t buf[256];
  return sharedRequests(
      mask, Write ? stats->sharedStores : stats->sharedLoads,
      [&](int64_t t, std::pair<uint32_t, uint32_t> &acc) {
        int64_t off = P[t].i;
        if (!checkShared(I, t, off, bytes, I.imm, Write ? "write" : "read"))
          return false;
        if (!trackShared(I, t, off, bytes, Write))
          return false;
        if constexpr (Write) {
          for (uint32_t e = 0; e < vv.n; ++e)
            encodeElem(vv.sk, X[e * T + t], buf + e * esz);
          Status s = smem->write(static_cast<uint32_t>(off), buf,
                                 static_cast<uint32_t>(bytes));
          if (!s.ok())
            return fail(I, s.error() + " (" + threadName(t) + ")");
        } else {
          Status s = smem->read(static_cast<uint32_t>(off), buf,
                                static_cast<uint32_t>(bytes));
          if (!s.ok())
            return fail(I, s.error() + " (" + threadName(t) +
                               "; nothing stored these bytes before the read)");
          for (uint32_t e = 0; e < vv.n; ++e)
            decodeElem(vv.sk, buf + e * esz, X[e * T + t]);
        }
        acc = {static_cast<uint32_t>(off), static_cast<uint32_t>(bytes)};
        (Write ? stats->sharedBytesWritten : stats->sharedBytesRead) += bytes;
        return true;
      });
}

bool Kernel::Impl::execLoad(const Instr &I, const uint8_t *mask) {
  return execMemAccess<false>(I, mask);
}

bool Kernel::Impl::execStore(const Instr &I, const uint8_t *mask) {
  return execMemAccess<true>(I, mask);
}

bool Kernel::Impl::execShfl(const Instr &I, const uint8_t *mask) {
  const auto &ops = lists[I.aux];
  const Cell *M = cellsOf(ops[0]), *V = cellsOf(ops[1]), *O = cellsOf(ops[2]),
             *Cc = cellsOf(ops[3]);
  Cell *R = cellsOf(I.res);
  bool isF = I.sk == SK::F32;
  for (int64_t w = 0; w < numWarps; ++w) {
    uint32_t active = warpMask(mask, w);
    if (!active)
      continue;
    ++stats->shfl;
    LaneValues a{}, b{};
    int first = __builtin_ctz(active);
    uint32_t member = static_cast<uint32_t>(M[w * 32 + first].i);
    uint32_t c = static_cast<uint32_t>(Cc[w * 32 + first].i);
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      a[l] = isF ? floatBits(static_cast<float>(V[t].d))
                 : static_cast<uint32_t>(V[t].i);
      b[l] = static_cast<uint32_t>(O[t].i);
      if ((active >> l) & 1u) {
        if (static_cast<uint32_t>(M[t].i) != member)
          return fail(I, "lanes of warp " + std::to_string(w) +
                             " disagree on the member mask (" + threadName(t) +
                             ")");
        if (static_cast<uint32_t>(Cc[t].i) != c)
          return fail(I, "lanes of warp " + std::to_string(w) +
                             " disagree on the clamp/segment operand (" +
                             threadName(t) + ")");
      }
    }
    // Every lane named in membermask must execute this shfl.sync (PTX waits
    // for them; lanes that never arrive are divergence).
    uint32_t exists = T - w * 32 >= 32 ? kFullMask : ((1u << (T - w * 32)) - 1);
    if (uint32_t missing = member & exists & ~active)
      return fail(I, "membermask " + hex(member) + " of warp " +
                         std::to_string(w) + " names lanes " + hex(missing) +
                         " that do not execute this shfl.sync (active lanes " +
                         hex(active) + "; divergent control flow?)");
    auto r = shfl(static_cast<ShflMode>(I.imm), a, b, c, member, active);
    if (!r.ok())
      return fail(I, r.error() + " (warp " + std::to_string(w) +
                         ", active lanes " + hex(active) + ")");
    for (int l = 0; l < 32; ++l) {
      if (!((active >> l) & 1u))
        continue;
      int64_t t = w * 32 + l;
      if (isF)
        R[t].d = bitsFloat(r->d[l]);
      else
        R[t].i = static_cast<int32_t>(r->d[l]);
      if (I.imm2)
        R[T + t].i = (r->predicate >> l) & 1u;
    }
  }
  return true;
}

bool Kernel::Impl::execMma(const Instr &I, const uint8_t *mask) {
  const MmaInfo &mi = mmas[I.aux];
  Cell *R = cellsOf(I.res);
  auto reg = [&](int32_t id, int64_t t) -> uint32_t {
    const Cell *X = cellsOf(id);
    if (mi.aPacked)
      return static_cast<uint32_t>(X[t].i);
    uint16_t lo = doubleToBits16(X[t].d, mi.type);
    uint16_t hi = doubleToBits16(X[T + t].d, mi.type);
    return pack16x2(lo, hi);
  };
  for (int64_t w = 0; w < numWarps; ++w) {
    uint32_t active = warpMask(mask, w);
    if (!active)
      continue;
    ++stats->mma;
    MmaAFragment a{};
    MmaBFragment b{};
    MmaAccFragment c{};
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      for (int r = 0; r < 4; ++r)
        a[r][l] = reg(mi.a[r], t);
      for (int r = 0; r < 2; ++r)
        b[r][l] = reg(mi.b[r], t);
      for (int r = 0; r < 4; ++r)
        c[r][l] = static_cast<float>(cellsOf(mi.c[r])[t].d);
    }
    auto d = mmaM16N8K16(a, b, c, mi.type, active);
    if (!d.ok())
      return fail(I, d.error() + " (warp " + std::to_string(w) +
                         ", active lanes " + hex(active) +
                         ": mma.sync is warp-wide; divergent control flow?)");
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      if (t >= T)
        continue;
      for (int r = 0; r < 4; ++r)
        R[r * T + t].d = (*d)[r][l];
    }
  }
  return true;
}

bool Kernel::Impl::execLdMatrix(const Instr &I, const uint8_t *mask) {
  const Cell *P = cellsOf(I.a);
  Cell *R = cellsOf(I.res);
  int num = static_cast<int>(I.imm);
  for (int64_t w = 0; w < numWarps; ++w) {
    uint32_t active = warpMask(mask, w);
    if (!active)
      continue;
    ++stats->ldmatrix;
    if (active != kFullMask)
      return fail(I, "ldmatrix is warp-wide but warp " + std::to_string(w) +
                         " executes it with active lanes " + hex(active) +
                         " (divergent control flow?)");
    LaneValues addrs{};
    for (int l = 0; l < 32; ++l) {
      int64_t t = w * 32 + l;
      int64_t off = P[t].i;
      if (l < 8 * num) {
        if (!checkShared(I, t, off, 16, 16, "ldmatrix row read"))
          return false;
        if (!trackShared(I, t, static_cast<uint32_t>(off), 16, false))
          return false;
      }
      addrs[l] = static_cast<uint32_t>(off);
    }
    auto r = ldmatrix(*smem, addrs, num, I.imm2 != 0, active);
    if (!r.ok())
      return fail(I, r.error() + " (warp " + std::to_string(w) + ")");
    for (int m = 0; m < num; ++m)
      for (int l = 0; l < 32; ++l)
        R[m * T + w * 32 + l].i = static_cast<int32_t>((*r)[m][l]);
    stats->sharedBytesRead += int64_t(num) * 8 * 16;
    stats->sharedRequests += 1;
    stats->bankConflicts += std::max(0, ldmatrixBankConflicts(addrs, num));
  }
  return true;
}

bool Kernel::Impl::execCpAsync(const Instr &I, const uint8_t *mask) {
  const Cell *D = cellsOf(I.a), *S = cellsOf(I.b);
  const Cell *SS = I.c >= 0 ? cellsOf(I.c) : nullptr;
  uint32_t cpSize = static_cast<uint32_t>(I.imm);
  return sharedRequests(
      mask, stats->cpAsync, [&](int64_t t, std::pair<uint32_t, uint32_t> &acc) {
        int64_t dst = D[t].i;
        int64_t srcSize = SS ? SS[t].i : cpSize;
        if (srcSize < 0 || srcSize > cpSize)
          return fail(I, "src-size " + std::to_string(srcSize) +
                             " is not in [0, " + std::to_string(cpSize) +
                             "] (" + threadName(t) + ")");
        if (!checkShared(I, t, dst, cpSize, cpSize, "cp.async destination"))
          return false;
        const uint8_t *src = nullptr;
        if (srcSize > 0) {
          uint8_t *addr;
          if (!checkGlobal(I, t, S[t].i, srcSize,
                           std::min<int64_t>(srcSize, 16), false, addr))
            return false;
          src = addr;
        }
        // The copy may land any time until its wait: a write from now on.
        if (!trackShared(I, t, dst, cpSize, true))
          return false;
        Status s = cpStates[t].issue(static_cast<uint32_t>(dst), src, cpSize,
                                     static_cast<uint32_t>(srcSize));
        if (!s.ok())
          return fail(I, s.error() + " (" + threadName(t) + ")");
        for (uint32_t k = 0; k < cpSize; ++k)
          ++shadow[dst + k].pending;
        cpCurrent[t].push_back({static_cast<uint32_t>(dst), cpSize});
        acc = {static_cast<uint32_t>(dst), cpSize};
        stats->cpAsyncBytes += cpSize;
        stats->globalBytesRead += srcSize;
        stats->sharedBytesWritten += cpSize;
        return true;
      });
}

bool Kernel::Impl::landCopies(const Instr &I, int64_t t,
                              std::vector<Range> &ranges) {
  for (const Range &r : ranges) {
    for (uint32_t k = 0; k < r.size; ++k)
      --shadow[r.dst + k].pending;
    if (!trackShared(I, t, r.dst, r.size, true, /*fromCpAsync=*/true))
      return false;
  }
  return true;
}

bool Kernel::Impl::execCpAsyncWait(const Instr &I, const uint8_t *mask) {
  uint32_t n = static_cast<uint32_t>(I.imm);
  for (int64_t w = 0; w < numWarps; ++w)
    stats->cpAsyncWaits += warpMask(mask, w) != 0;
  for (int64_t t = 0; t < T; ++t) {
    if (!mask[t])
      continue;
    Status s = cpStates[t].waitGroup(*smem, n);
    if (!s.ok())
      return fail(I, s.error() + " (" + threadName(t) + ")");
    auto &groups = cpGroups[t];
    while (groups.size() > n) {
      if (!landCopies(I, t, groups.front()))
        return false;
      groups.pop_front();
    }
  }
  return true;
}

/// Copies each value from[k] into to[k] in the threads of mask `m` (`cnt` of
/// them; all T means a plain copy).
void Kernel::Impl::copyMasked(const std::vector<int32_t> &from,
                              const std::vector<int32_t> &to, const uint8_t *m,
                              int64_t cnt) {
  for (size_t k = 0; k < from.size(); ++k) {
    const ValInfo &rv = vals[to[k]];
    Cell *R = cellsOf(to[k]);
    const Cell *Y = cellsOf(from[k]);
    if (cnt == T) {
      std::memcpy(R, Y, sizeof(Cell) * rv.n * T);
      continue;
    }
    for (uint32_t e = 0; e < rv.n; ++e)
      for (int64_t t = 0; t < T; ++t)
        if (m[t])
          R[e * T + t] = Y[e * T + t];
  }
}

bool Kernel::Impl::execIf(const Instr &I, const uint8_t *mask, int64_t count,
                          unsigned depth) {
  const IfInfo &info = ifs[I.aux];
  const Cell *Cn = cellsOf(I.a);
  auto &sub = maskPool[depth + 1];
  sub.assign(T, 0);
  int64_t thenCount = 0;
  for (int64_t t = 0; t < T; ++t) {
    uint8_t m = mask[t] && (Cn[t].i & 1);
    sub[t] = m;
    thenCount += m;
  }
  int64_t elseCount = count - thenCount;
  if (thenCount) {
    if (!run(info.thenBegin, info.thenEnd, sub.data(), thenCount, depth + 1))
      return false;
    // `sub` may have been reused by nested regions at deeper levels only.
    copyMasked(info.thenYield, info.results, sub.data(), thenCount);
  }
  if (elseCount) {
    auto &esub = maskPool[depth + 1];
    for (int64_t t = 0; t < T; ++t)
      esub[t] = mask[t] && !(Cn[t].i & 1);
    if (info.elseEnd > info.elseBegin || !info.elseYield.empty()) {
      if (!run(info.elseBegin, info.elseEnd, esub.data(), elseCount, depth + 1))
        return false;
      copyMasked(info.elseYield, info.results, esub.data(), elseCount);
    }
  }
  return true;
}

bool Kernel::Impl::execFor(const Instr &I, const uint8_t *mask, int64_t count,
                           unsigned depth) {
  const ForInfo &info = fors[I.aux];
  const unsigned w = intWidth(vals[info.iv].sk);
  const Cell *LB = cellsOf(info.lb), *UB = cellsOf(info.ub),
             *ST = cellsOf(info.step);
  Cell *IV = cellsOf(info.iv);
  copyMasked(info.inits, info.iterArgs, mask, count);
  for (int64_t t = 0; t < T; ++t) {
    IV[t] = LB[t];
    if (mask[t] && sval(ST[t].i, w) <= 0 && !info.unsignedCmp)
      return fail(I, "loop step " + std::to_string(sval(ST[t].i, w)) +
                         " is not positive in " + threadName(t));
    if (mask[t] && ST[t].i == 0)
      return fail(I, "loop step is zero in " + threadName(t));
  }
  auto &sub = maskPool[depth + 1];
  sub.assign(T, 0);
  while (true) {
    int64_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      bool go = info.unsignedCmp ? uval(IV[t].i, w) < uval(UB[t].i, w)
                                 : sval(IV[t].i, w) < sval(UB[t].i, w);
      uint8_t m = mask[t] && go;
      sub[t] = m;
      n += m;
    }
    if (!n)
      break;
    if (!run(info.bodyBegin, info.bodyEnd, sub.data(), n, depth + 1))
      return false;
    copyMasked(info.yields, info.iterArgs, sub.data(), n);
    for (int64_t t = 0; t < T; ++t)
      if (sub[t]) {
        // Stop on overflow of the induction variable, as hardware would
        // wrap: treat a wrapped iv as done.
        int64_t next = sval(IV[t].i, w) + sval(ST[t].i, w);
        int64_t wrapped = wrapInt(next, w);
        IV[t].i = wrapped;
        if (wrapped != next)
          IV[t] = UB[t];
      }
  }
  copyMasked(info.iterArgs, info.results, mask, count);
  return true;
}

bool Kernel::Impl::run(uint32_t begin, uint32_t end, const uint8_t *mask,
                       int64_t count, unsigned depth) {
  uint32_t pc = begin;
  while (pc < end) {
    const Instr &I = code[pc];
    ++stats->opsExecuted;
    switch (I.opc) {
    case Opc::If:
      if (!execIf(I, mask, count, depth))
        return false;
      pc = ifs[I.aux].elseEnd;
      continue;
    case Opc::For:
      if (!execFor(I, mask, count, depth))
        return false;
      pc = fors[I.aux].bodyEnd;
      continue;
    case Opc::SReg:
      execSReg(I);
      break;
    case Opc::Copy:
      std::memcpy(cellsOf(I.res), cellsOf(I.a),
                  sizeof(Cell) * vals[I.res].n * T);
      break;
    case Opc::Broadcast: {
      const ValInfo &rv = vals[I.res];
      Cell *R = cellsOf(I.res);
      const Cell *A = cellsOf(I.a);
      if (vals[I.a].n == rv.n) {
        std::memcpy(R, A, sizeof(Cell) * rv.n * T);
      } else {
        for (uint32_t e = 0; e < rv.n; ++e)
          std::memcpy(R + e * T, A, sizeof(Cell) * T);
      }
      break;
    }
    case Opc::FromElements: {
      const auto &ops = lists[I.aux];
      Cell *R = cellsOf(I.res);
      for (size_t e = 0; e < ops.size(); ++e)
        std::memcpy(R + e * T, cellsOf(ops[e]), sizeof(Cell) * T);
      break;
    }
    case Opc::Extract: {
      Cell *R = cellsOf(I.res);
      const Cell *A = cellsOf(I.a);
      uint32_t n = vals[I.a].n;
      if (I.imm >= 0) {
        if (I.imm >= n)
          return fail(I, "position " + std::to_string(I.imm) + " out of range");
        std::memcpy(R, A + I.imm * T, sizeof(Cell) * T);
      } else {
        if (!forDynPositions(
                I, mask, n, [&](int64_t p, int64_t t) { R[t] = A[p * T + t]; }))
          return false;
      }
      break;
    }
    case Opc::Insert: {
      Cell *R = cellsOf(I.res);
      const Cell *S = cellsOf(I.a);
      uint32_t n = vals[I.res].n;
      std::memcpy(R, cellsOf(I.c), sizeof(Cell) * n * T);
      if (I.imm >= 0) {
        if (I.imm >= n)
          return fail(I, "position out of range");
        std::memcpy(R + I.imm * T, S, sizeof(Cell) * T);
      } else {
        if (!forDynPositions(
                I, mask, n, [&](int64_t p, int64_t t) { R[p * T + t] = S[t]; }))
          return false;
      }
      break;
    }
    case Opc::Shuffle: {
      const auto &m = ilists[I.aux];
      Cell *R = cellsOf(I.res);
      const Cell *A = cellsOf(I.a), *B = cellsOf(I.b);
      int64_t n1 = vals[I.a].n;
      for (size_t e = 0; e < m.size(); ++e) {
        int64_t k = m[e];
        if (k < 0) {
          std::memset(R + e * T, 0, sizeof(Cell) * T);
          continue;
        }
        const Cell *src = k < n1 ? A + k * T : B + (k - n1) * T;
        std::memcpy(R + e * T, src, sizeof(Cell) * T);
      }
      break;
    }
    case Opc::ExtractValue:
      std::memcpy(cellsOf(I.res), cellsOf(I.a) + I.imm * T, sizeof(Cell) * T);
      break;
    case Opc::InsertValue: {
      Cell *R = cellsOf(I.res);
      std::memcpy(R, cellsOf(I.c), sizeof(Cell) * vals[I.res].n * T);
      std::memcpy(R + I.imm * T, cellsOf(I.a), sizeof(Cell) * T);
      break;
    }
    case Opc::GEP: {
      const GepInfo &g = geps[I.aux];
      Cell *R = cellsOf(I.res);
      const Cell *B = cellsOf(I.a);
      for (int64_t t = 0; t < T; ++t)
        R[t].i = B[t].i + g.constOffset;
      for (auto [id, scale] : g.dyn) {
        const Cell *X = cellsOf(id);
        for (int64_t t = 0; t < T; ++t)
          R[t].i =
              int64_t(uint64_t(R[t].i) + uint64_t(X[t].i) * uint64_t(scale));
      }
      break;
    }
    case Opc::Load:
      if (!execLoad(I, mask))
        return false;
      break;
    case Opc::Store:
      if (!execStore(I, mask))
        return false;
      break;
    case Opc::Shfl:
      if (!execShfl(I, mask))
        return false;
      break;
    case Opc::Mma:
      if (!execMma(I, mask))
        return false;
      break;
    case Opc::LdMatrix:
      if (!execLdMatrix(I, mask))
        return false;
      break;
    case Opc::CpAsync:
      if (!execCpAsync(I, mask))
        return false;
      break;
    case Opc::CpAsyncCommit:
      for (int64_t w = 0; w < numWarps; ++w)
        stats->cpAsyncCommits += warpMask(mask, w) != 0;
      for (int64_t t = 0; t < T; ++t)
        if (mask[t]) {
          cpStates[t].commitGroup();
          cpGroups[t].push_back(std::move(cpCurrent[t]));
          cpCurrent[t].clear();
        }
      break;
    case Opc::CpAsyncWait:
      if (!execCpAsyncWait(I, mask))
        return false;
      break;
    case Opc::Barrier: {
      if (count != T) {
        int64_t missing = -1;
        for (int64_t t = 0; t < T && missing < 0; ++t)
          if (!mask[t])
            missing = t;
        return fail(I, "barrier reached by " + std::to_string(count) +
                           " of the CTA's " + std::to_string(T) +
                           " threads (divergent control flow: " +
                           threadName(missing) + " does not arrive)");
      }
      if (I.a >= 0) {
        int64_t id = cellsOf(I.a)[0].i;
        for (int64_t t = 0; t < T; ++t)
          if (cellsOf(I.a)[t].i != id)
            return fail(I, "threads disagree on the barrier id");
      }
      ++epoch;
      ++stats->barriers;
      stats->barrierWarps += numWarps;
      break;
    }
    default:
      if (!execPure(I, mask))
        return false;
      break;
    }
    ++pc;
  }
  return true;
}

bool Kernel::launch(const std::array<int64_t, 3> &grid,
                    const std::vector<KernelArg> &args,
                    std::vector<GlobalBuffer> &buffers, Stats &stats,
                    Error &error, const Options &options) {
  Impl &k = *impl;
  k.err = &error;
  k.stats = &stats;
  k.options = options;
  k.buffers = &buffers;
  k.grid = grid;
  const int64_t T = k.T;
  Block &entry = k.func.getBody().front();
  if (args.size() != entry.getNumArguments()) {
    error.kind = Error::Kind::Internal;
    error.message = "error: kernel '" + k.kernelName + "' takes " +
                    std::to_string(entry.getNumArguments()) +
                    " arguments but " + std::to_string(args.size()) +
                    " were given";
    return false;
  }
  k.cells.assign(k.numCells, Cell{0});
  // Arguments.
  for (unsigned i = 0; i < args.size(); ++i) {
    const ValInfo &vi = k.vals[i];
    Cell *R = &k.cells[vi.base];
    Cell c;
    const KernelArg &a = args[i];
    if (vi.sk == SK::PG) {
      if (a.kind != KernelArg::Kind::Buffer || a.buffer < 0 ||
          a.buffer >= (int)buffers.size()) {
        error.kind = Error::Kind::Internal;
        error.message = "error: argument #" + std::to_string(i) +
                        " of kernel '" + k.kernelName +
                        "' is a global pointer but no buffer was bound";
        return false;
      }
      c.i = makeGlobalPtr(a.buffer + 1);
    } else if (isFloat(vi.sk)) {
      c.d = roundF(vi.sk, a.kind == KernelArg::Kind::Float ? a.f : double(a.i));
    } else if (vi.sk == SK::PS) {
      c.i = a.i;
    } else {
      c.i = wrapInt(a.kind == KernelArg::Kind::Int ? a.i : int64_t(a.f),
                    intWidth(vi.sk));
    }
    for (uint32_t e = 0; e < vi.n; ++e)
      for (int64_t t = 0; t < T; ++t)
        R[e * T + t] = c;
  }
  // Constants.
  for (auto [id, op] : k.constants) {
    const ValInfo &vi = k.vals[id];
    Cell *R = &k.cells[vi.base];
    auto ti = typeInfo(op->getResult(0).getType());
    std::vector<Cell> elems(vi.n, Cell{0});
    Attribute attr;
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      attr = c.getValue();
    else if (auto c = dyn_cast<LLVM::ConstantOp>(op))
      attr = c.getValue();
    else if (auto a = dyn_cast<LLVM::AddressOfOp>(op)) {
      auto gm = op->getParentOfType<gpu::GPUModuleOp>();
      Operation *g = SymbolTable::lookupSymbolIn(gm, a.getGlobalNameAttr());
      elems[0].i = k.sharedBase.lookup(g);
    }
    auto fromAttr = [&](Attribute x, unsigned e) {
      SK s = ti->kindAt(e);
      if (auto ia = dyn_cast<IntegerAttr>(x))
        elems[e].i = wrapInt(ia.getValue().getSExtValue(), intWidth(s));
      else if (auto fa = dyn_cast<FloatAttr>(x))
        elems[e].d = roundF(s, fa.getValueAsDouble());
      else if (auto ba = dyn_cast<BoolAttr>(x))
        elems[e].i = ba.getValue();
    };
    if (attr) {
      if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
        if (dense.isSplat()) {
          Attribute s = dense.getSplatValue<Attribute>();
          for (unsigned e = 0; e < vi.n; ++e)
            fromAttr(s, e);
        } else {
          unsigned e = 0;
          for (Attribute x : dense.getValues<Attribute>())
            if (e < vi.n)
              fromAttr(x, e++);
        }
      } else {
        fromAttr(attr, 0);
      }
    }
    for (uint32_t e = 0; e < vi.n; ++e)
      for (int64_t t = 0; t < T; ++t)
        R[e * T + t] = elems[e];
  }

  stats.grid = grid;
  stats.threadsPerCTA = T;
  stats.sharedBytesPerCTA = k.sharedLimit;
  std::vector<uint8_t> full(T, 1);
  // Sized once: run() keeps references into it across nested regions.
  k.maskPool.assign(k.maxDepth + 2, std::vector<uint8_t>(T, 0));
  k.shadow.assign(k.sharedLimit, ByteShadow());
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        k.cta = {x, y, z};
        k.smem = std::make_unique<SharedMemory>(
            static_cast<uint32_t>(k.sharedLimit));
        for (auto &b : k.shadow)
          b.pending = 0;
        k.epoch += 2; // a new CTA: no access of the previous one counts
        k.cpStates.assign(T, CpAsyncState());
        k.cpCurrent.assign(T, {});
        k.cpGroups.assign(T, {});
        ++stats.ctas;
        if (!k.run(0, k.topEnd, full.data(), T, 0))
          return false;
      }
  return true;
}

} // namespace emu
} // namespace flash

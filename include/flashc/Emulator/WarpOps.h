//===- WarpOps.h - Exact semantics of PTX warp-level operations -*- C++ -*-===//
//
// The warp-op semantics library of the flashc emulator: pure functions (and
// two small state classes) that implement, bit for bit, the PTX operations a
// FlashAttention kernel lowered to SIMT-level IR uses:
//
//   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
//   ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16
//   shfl.sync.{bfly,up,down,idx}.b32
//   cp.async.{ca,cg}.shared.global / commit_group / wait_group / wait_all
//   shared-memory bank-conflict accounting
//   cvt.rn.{f16x2,bf16x2}.f32 and f16x2 / bf16x2 packing
//
// Every operation also acts as a sanitizer: whatever the PTX ISA leaves
// undefined (a warp-wide .aligned op with inactive lanes, a shuffle reading a
// lane outside membermask, a misaligned or out-of-bounds shared address, a
// read of never-written shared bytes) is reported as an error naming the
// lane and address instead of producing some value.
//
// The normative facts are in shared/reference/ptx-warp-ops.md; the mma
// fragment maps are the same facts as dialect/Tile/LayoutFunctions.h (the
// unit tests check the two agree). Plain C++17, no MLIR/LLVM dependency.
//
// Conventions:
//   * A warp's 32-bit register is a LaneValues: entry L is lane L's value.
//     f32 registers are carried as float (LaneFloats) where arithmetic
//     happens and as raw bits (LaneValues) everywhere else.
//   * activeMask: bit L set when lane L executes the instruction. Entries of
//     inactive lanes in a result are 0 and must not be written back (the
//     caller keeps their old register values).
//   * Errors: Status (ok() or error()) or Result<T> (a value or an
//     error). Error texts start with the PTX mnemonic.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_EMULATOR_WARPOPS_H
#define FLASH_EMULATOR_WARPOPS_H

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace flash::emu {

inline constexpr int kWarpSize = 32;
inline constexpr uint32_t kFullMask = 0xffffffffu;

/// One 32-bit register of every lane of a warp.
using LaneValues = std::array<uint32_t, kWarpSize>;
/// One f32 register of every lane of a warp.
using LaneFloats = std::array<float, kWarpSize>;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Success, or the reason an operation is undefined/invalid.
class Status {
public:
  Status() = default; ///< Success.
  static Status success() { return {}; }
  static Status failure(std::string message) {
    Status s;
    s.error_ = message.empty() ? "unknown error" : std::move(message);
    return s;
  }
  bool ok() const { return error_.empty(); }
  /// The message; empty on success.
  const std::string &error() const { return error_; }

private:
  std::string error_;
};

/// A value, or the error that prevented computing it. Implicitly built from a
/// value or from a failed Status.
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : error_(status.error()) {
    if (error_.empty())
      error_ = "internal error: Result built from a successful Status";
  }
  bool ok() const { return value_.has_value(); }
  const std::string &error() const { return error_; }
  const T &value() const { return *value_; }
  T &value() { return *value_; }
  const T &operator*() const { return *value_; }
  T &operator*() { return *value_; }
  const T *operator->() const { return &*value_; }
  T *operator->() { return &*value_; }

private:
  std::optional<T> value_;
  std::string error_;
};

//===----------------------------------------------------------------------===//
// 16-bit float packing and cvt (bit-exact, via lib/Runtime/Float16.h)
//===----------------------------------------------------------------------===//

/// MMA input types: the 16-bit floats, and e4m3 (wgmma m64nNk32 only).
enum class ElementType { F16, BF16, E4M3 };

/// The 32-bit register holding two 16-bit values: `lo` in bits 15:0 (the
/// first element of the pair in every PTX fragment), `hi` in bits 31:16.
inline uint32_t pack16x2(uint16_t lo, uint16_t hi) {
  return uint32_t(lo) | (uint32_t(hi) << 16);
}
inline uint16_t low16(uint32_t v) { return static_cast<uint16_t>(v & 0xffff); }
inline uint16_t high16(uint32_t v) { return static_cast<uint16_t>(v >> 16); }

/// The exact value of 16-bit float bits of type `type`.
double bits16ToDouble(uint16_t bits, ElementType type);
/// `value` rounded to nearest even (cvt.rn) into 16-bit float bits of `type`.
/// NaN keeps its sign and top payload bits (quieted); the hardware may return
/// its canonical NaN instead (0x7fff), so do not compare NaN bits.
uint16_t doubleToBits16(double value, ElementType type);

/// cvt.rn.f16x2.f32 d, a, b: d = {hi: f16(a), lo: f16(b)}. Note the operand
/// order: b goes to the LOW half. Each half is rounded once, to nearest even.
uint32_t cvtRnF16x2F32(float a, float b);
/// cvt.rn.bf16x2.f32 d, a, b: d = {hi: bf16(a), lo: bf16(b)}.
uint32_t cvtRnBF16x2F32(float a, float b);
/// The two values of an f16x2 / bf16x2 register, {low, high}, exactly.
std::pair<float, float> unpack16x2(uint32_t v, ElementType type);

/// f32 <-> register bits (mov.b32 between .f32 and .b32).
inline uint32_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline float bitsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

//===----------------------------------------------------------------------===//
// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
//===----------------------------------------------------------------------===//

/// A: 4 x b32 per lane. B: 2 x b32 per lane. C/D: 4 x f32 per lane.
using MmaAFragment = std::array<LaneValues, 4>;
using MmaBFragment = std::array<LaneValues, 2>;
using MmaAccFragment = std::array<LaneFloats, 4>;

/// D = A(16x16) * B(16x8) + C(16x8), with g = lane / 4, q = lane % 4:
///   A register r, half h (low half first): row g + 8 (r % 2),
///                                          col 2q + h + 8 (r / 2)
///   B register r, half h:                  k 2q + h + 8r, n g
///   C/D element i:                         row g + 8 (i / 2), col 2q + i % 2
/// Numerics: every product of two f16/bf16 values is exact in double; the 16
/// products of a dot product and c are summed in double (k ascending, c
/// last) and rounded once to f32, nearest even. This is exact-then-round-once
/// whenever the terms' exponents span less than ~30 binades (always for
/// typical attention data). Real tensor cores align and truncate
/// intermediate sums, so hardware results may differ in the last bit (and
/// hardware may flush f32 subnormals); compare against hardware with 1 ulp.
/// NaN/Inf propagate as IEEE double arithmetic does.
/// mma.sync is warp-wide (.aligned): any inactive lane is an error.
Result<MmaAccFragment> mmaM16N8K16(const MmaAFragment &a,
                                   const MmaBFragment &b,
                                   const MmaAccFragment &c, ElementType type,
                                   uint32_t activeMask = kFullMask);

/// The arithmetic of mmaM16N8K16 on unpacked operands, for callers that hold
/// the elements as values: A (16 x 16, row-major) and B (16 x 8, k-major)
/// exact f16/bf16 values in double, C (16 x 8) f32; D = A B + C with the
/// numerics above.
void mmaM16N8K16Values(const double (&A)[16][16], const double (&B)[16][8],
                       const float (&C)[16][8], float (&D)[16][8]);

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// A CTA's shared memory: bytes plus a per-byte "written" flag so reads of
/// never-written bytes (a missing store, a missing cp.async wait) are caught.
/// Addresses are byte offsets from the start of the shared window. Accesses
/// outside [0, size) are errors. Multi-byte values are little-endian.
class SharedMemory {
public:
  explicit SharedMemory(uint32_t sizeBytes);

  uint32_t size() const { return static_cast<uint32_t>(bytes_.size()); }

  /// Error unless [address, address + bytes) lies inside the memory.
  Status checkBounds(uint32_t address, uint32_t bytes) const;

  /// Copies `bytes` bytes in and marks them written.
  Status write(uint32_t address, const void *src, uint32_t bytes);
  /// Copies `bytes` bytes out; error if out of bounds or if any byte was never
  /// written (the message names the first such byte).
  Status read(uint32_t address, void *dst, uint32_t bytes) const;

  /// st.shared / ld.shared of a naturally aligned scalar (PTX requires the
  /// address to be a multiple of the access size: misaligned is an error).
  template <typename T> Status store(uint32_t address, T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (Status s = checkAligned(address, sizeof(T)); !s.ok())
      return s;
    return write(address, &value, sizeof(T));
  }
  template <typename T> Result<T> load(uint32_t address) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (Status s = checkAligned(address, sizeof(T)); !s.ok())
      return s;
    T value;
    if (Status s = read(address, &value, sizeof(T)); !s.ok())
      return s;
    return value;
  }

  /// Whether byte `address` has been written (false when out of bounds).
  bool isWritten(uint32_t address) const;
  /// Whether every byte of the range is in bounds and written.
  bool allWritten(uint32_t address, uint32_t bytes) const;
  /// Marks a range unwritten (e.g. a buffer reused for a new stage).
  void invalidate(uint32_t address, uint32_t bytes);
  /// The raw byte, without bounds-to-error or initialisation checks (0 when
  /// out of bounds). For tests and diagnostics.
  uint8_t peekByte(uint32_t address) const;

private:
  Status checkAligned(uint32_t address, uint32_t bytes) const;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> written_;
};

//===----------------------------------------------------------------------===//
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16
//===----------------------------------------------------------------------===//

/// Loads `num` (1, 2 or 4) 8x8 matrices of 16-bit elements. Lane 8m + r
/// supplies in `addresses` the shared address of row r of matrix m (x1 reads
/// lanes 0-7, x2 lanes 0-15, x4 all; the other lanes' addresses are ignored).
/// Each row is 16 contiguous bytes (8 elements, element c at address + 2c)
/// and must be 16-byte aligned and in bounds; rows need not be contiguous.
/// Result register m of lane L (g = L / 4, q = L % 4):
///   non-trans: {lo: M_m[g][2q],   hi: M_m[g][2q + 1]}
///   .trans:    {lo: M_m[2q][g],   hi: M_m[2q + 1][g]}
/// Errors: num not in {1,2,4}; any inactive lane (warp-wide .aligned); a
/// misaligned or out-of-bounds row address, or a row with never-written
/// bytes (each naming the lane and address).
Result<std::vector<LaneValues>> ldmatrix(const SharedMemory &smem,
                                         const LaneValues &addresses, int num,
                                         bool trans,
                                         uint32_t activeMask = kFullMask);
/// The same into `out` (registers 0 .. num - 1), without allocating.
Status ldmatrixInto(const SharedMemory &smem, const LaneValues &addresses,
                    int num, bool trans, uint32_t activeMask,
                    std::array<LaneValues, 4> &out);

//===----------------------------------------------------------------------===//
// shfl.sync.{bfly,up,down,idx}.b32 d|p, a, b, c, membermask
//===----------------------------------------------------------------------===//

enum class ShflMode { Bfly, Up, Down, Idx };

struct ShflResult {
  LaneValues d{};          ///< Destination of active lanes (0 elsewhere).
  uint32_t predicate = 0;  ///< Bit L: lane L's p (source lane was valid).
};

/// The PTX ISA rule, per active lane, with bval = b[lane][4:0] (b is per
/// lane), cval = c[4:0], segmask = c[12:8]:
///   maxLane = (lane & segmask) | (cval & ~segmask); minLane = lane & segmask
///   up:   j = lane - bval;                     valid = j >= maxLane
///   down: j = lane + bval;                     valid = j <= maxLane
///   bfly: j = lane ^ bval;                     valid = j <= maxLane
///   idx:  j = minLane | (bval & ~segmask);     valid = j <= maxLane
///   if (!valid) j = lane;  d = a[j];  p = valid
/// Full-warp use: c = 0x1f for bfly/down/idx, c = 0 for up; c = 0x181f-style
/// values ((32 - w) << 8 | 0x1f) restrict bfly/down/idx to w-lane segments.
/// Errors (undefined in PTX): an active lane not in memberMask, or a lane
/// reading (valid j) a lane that is not in memberMask or not active.
Result<ShflResult> shfl(ShflMode mode, const LaneValues &a,
                        const LaneValues &b, uint32_t c, uint32_t memberMask,
                        uint32_t activeMask);
/// Convenience: the same b for every lane (the usual immediate operand).
Result<ShflResult> shfl(ShflMode mode, const LaneValues &a, uint32_t b,
                        uint32_t c, uint32_t memberMask, uint32_t activeMask);

//===----------------------------------------------------------------------===//
// cp.async groups
//===----------------------------------------------------------------------===//

/// The cp.async state of ONE thread: PTX groups are per thread
/// (commit_group / wait_group act on the executing thread's copies only),
/// so the emulator keeps one CpAsyncState per thread.
///
/// The source bytes are captured when the copy is issued (global memory the
/// kernel reads is not written concurrently); the destination bytes land in
/// shared memory only when a wait_group / wait_all retires the copy's group,
/// so a kernel that reads the destination before the matching wait sees the
/// old (or never-written, hence reported) bytes. Visibility to OTHER threads
/// additionally needs a barrier, which is the emulator proper's business.
class CpAsyncState {
public:
  /// cp.async.{ca,cg}.shared.global [dst], [src], cpSize{, srcSize}:
  /// records a pending copy of cpSize (4, 8 or 16) bytes to shared address
  /// `dst`: the first srcSize bytes from `src`, the rest zero-filled
  /// (srcSize = 0: a bounds-safe all-zero copy; `src` may then be null).
  /// Errors: bad cpSize, srcSize > cpSize, dst not a multiple of cpSize.
  /// (Destination bounds are checked when the copy lands.)
  Status issue(uint32_t dst, const uint8_t *src, uint32_t cpSize,
               uint32_t srcSize);
  /// Overload: srcSize = src.size().
  Status issue(uint32_t dst, const std::vector<uint8_t> &src,
               uint32_t cpSize) {
    return issue(dst, src.data(), cpSize, static_cast<uint32_t>(src.size()));
  }
  /// cp.async.commit_group: closes the copies issued since the last commit
  /// into a new group (an empty group when there are none, as in PTX).
  void commitGroup();
  /// cp.async.wait_group n: retires (writes to `smem`, in issue order) every
  /// committed group but the n most recent. Uncommitted copies stay pending.
  /// Error if a retired copy's destination is out of bounds (the other
  /// copies still land).
  Status waitGroup(SharedMemory &smem, uint32_t n);
  /// cp.async.wait_all: commit_group then wait_group 0.
  Status waitAll(SharedMemory &smem);

  /// Committed groups not yet retired.
  size_t numPendingGroups() const { return groups_.size(); }
  /// Copies issued since the last commit_group.
  size_t numUncommittedCopies() const { return current_.size(); }
  /// Whether [address, address + bytes) overlaps the destination of a copy
  /// that has not landed (committed or not): reading it now is a missing
  /// wait, writing it a race with the copy.
  bool overlapsPending(uint32_t address, uint32_t bytes) const;

  /// A copy in flight: `size` bytes for shared address `dst`.
  struct Copy {
    uint32_t dst;
    std::array<uint8_t, 16> data;
    uint32_t size;
  };
  /// cp.async.mbarrier.arrive: every copy not yet landed (committed or not),
  /// in issue order, taken out of its group; the groups stay, empty, so that
  /// wait_group counts them as before. The arrival owns the copies now.
  std::vector<Copy> takePending();

private:
  std::vector<Copy> current_;
  std::deque<std::vector<Copy>> groups_; // oldest first
  std::vector<std::vector<Copy>> spare_; // retired groups' storage, reused
};

//===----------------------------------------------------------------------===//
// Shared-memory bank conflicts
//===----------------------------------------------------------------------===//

/// Extra wavefronts (replays) of one warp-wide shared-memory request.
/// perLaneAccess[L] = {byte address, bytes} of lane L (entries past the
/// vector's end count as inactive). 32 banks of 4 bytes, bank = (address/4)
/// % 32. 4-byte accesses: one phase of 32 lanes; 8-byte: two phases of 16
/// lanes (0-15, 16-31); 16-byte: four phases of 8 lanes. Within a phase two
/// lanes touching the same bank at different 4-byte words conflict (the same
/// word is a broadcast). A phase costs the maximum over banks of the number
/// of distinct words; the result is the sum over phases of (cost - 1),
/// phases without active lanes costing nothing.
/// Returns -1 for an invalid request: access sizes other than 4/8/16, sizes
/// differing between active lanes, or a misaligned address.
int bankConflicts(const std::vector<std::pair<uint32_t, uint32_t>> &perLaneAccess,
                  uint32_t activeMask);
/// The same for `lanes` (at most 32) entries at `perLaneAccess`.
int bankConflicts(const std::pair<uint32_t, uint32_t> *perLaneAccess, int lanes,
                  uint32_t activeMask);

/// Extra wavefronts of ldmatrix.x{num}: each 8-row group (matrix) is one
/// phase of eight 16-byte row reads, addresses as for ldmatrix(). -1 for an
/// invalid num or misaligned address.
int ldmatrixBankConflicts(const LaneValues &addresses, int num);

} // namespace flash::emu

#endif // FLASH_EMULATOR_WARPOPS_H

//===- AsyncOps.h - Exact semantics of Hopper barriers and TMA --*- C++ -*-===//
//
// The state machines the emulator runs for the asynchronous side of sm_90:
//
//   mbarrier.{init,inval,arrive,arrive_drop,expect_tx,complete_tx,
//             test_wait,try_wait}{.parity}          (class Mbarrier)
//   bar.sync / bar.arrive id, nthreads               (class NamedBarrier)
//   CUtensorMap as cuTensorMapEncodeTiled builds it  (struct TensorMap)
//   cp.async.bulk.tensor box walks, OOB elements, the smem swizzle
//
// Each operation is also a sanitizer rule: what the PTX ISA leaves undefined
// (arriving past the pending count, a tx-count outside its range, init of a
// live barrier, a map the driver would refuse) is a Status error whose text
// says what went wrong. The facts are in shared/reference/ptx-hopper.md
// (sections 2-4). Plain C++17, no MLIR/LLVM dependency.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_EMULATOR_ASYNCOPS_H
#define FLASH_EMULATOR_ASYNCOPS_H

#include "flashc/Emulator/WarpOps.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace flash::emu {

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

/// The largest expected/pending arrival count and |tx-count|: 2^20 - 1.
inline constexpr int64_t kMbarrierMaxCount = (int64_t(1) << 20) - 1;

/// One mbarrier object: phase, expected and pending arrival counts, a signed
/// transaction count. A phase completes when pending == 0 and tx == 0; then
/// the phase number advances and pending is reset to expected. The phase
/// number is kept whole (the hardware keeps its parity) so that waits can be
/// checked against the phase a waiter means.
class Mbarrier {
public:
  bool live() const { return live_; }
  int64_t phase() const { return phase_; }
  int64_t pending() const { return pending_; }
  int64_t expected() const { return expected_; }
  int64_t tx() const { return tx_; }

  /// mbarrier.init: phase 0, expected = pending = count, tx 0. Error on a
  /// live barrier (inval first) or a count outside [1, 2^20 - 1].
  Status init(int64_t count);
  /// mbarrier.inval: error unless live.
  Status inval();
  /// arrive (or arrive_drop: the expected count of this and later phases
  /// drops by `count` too) of `count`; may complete the phase. Error when
  /// the pending count would go below zero (more arrivals than the phase
  /// expects), or when the barrier completed a phase that no wait has
  /// observed yet (an arrival on the next phase before any thread saw the
  /// previous one complete: PTX requires one successful wait per phase).
  Status arrive(int64_t count, bool drop = false);
  /// One more arrival expected in the current phase (cp.async.mbarrier.arrive
  /// without .noinc, whose own arrival follows when the copies land); error
  /// past the largest count.
  Status expectArrival();
  /// expect-tx(bytes): tx += bytes; error outside the tx range.
  Status expectTx(int64_t bytes);
  /// complete-tx(bytes): tx -= bytes; error outside the tx range; may
  /// complete the phase.
  Status completeTx(int64_t bytes);
  /// The hardware's parity test: true iff the phase of parity `parity` is
  /// the immediately preceding one, i.e. (current phase & 1) != parity.
  bool parityDone(uint32_t parity) const {
    return (phase_ & 1) != int64_t(parity & 1);
  }
  /// A wait returned true: the last completed phase has been observed.
  void observe() { unobserved_ = false; }
  /// Whether the last completion has not been observed by any wait.
  bool unobserved() const { return unobserved_; }

private:
  void maybeComplete();

  bool live_ = false;
  bool unobserved_ = false;
  int64_t phase_ = 0, pending_ = 0, expected_ = 0, tx_ = 0;
};

/// The phase a thread means by waiting on parity `parity` when it has seen
/// `seen` phases of the barrier complete (its last successful wait saw
/// phase seen - 1 done): phase `seen` when the parities match, else the
/// phase before it (which the thread has already seen done, as the producer
/// of a pipeline does when it starts with parity 1 on a fresh barrier).
inline int64_t phaseMeant(int64_t seen, uint32_t parity) {
  return (seen & 1) == int64_t(parity & 1) ? seen : seen - 1;
}

//===----------------------------------------------------------------------===//
// Named barriers (bar.sync / bar.arrive with an id and a thread count)
//===----------------------------------------------------------------------===//

inline constexpr int kNumNamedBarriers = 16;
inline constexpr int kMaxWarpsPerCTA = 32;

/// One of a CTA's 16 barriers between two completions. Arrival counts per
/// warp: a warp's arrival adds its threads (32, fewer for a CTA's last
/// partial warp).
class NamedBarrier {
public:
  /// Warp `warp` (contributing `threads` threads) arrives on a barrier of
  /// `count` threads; `completed` says whether this arrival completed it
  /// (the barrier is then ready for reuse). Errors: `count` not a positive
  /// multiple of 32, a count that differs from the other arrivals', a warp
  /// arriving twice before the barrier completes, more threads than `count`.
  Status arrive(int warp, int64_t threads, int64_t count, bool &completed);
  /// Threads arrived so far in the current round (0 when idle).
  int64_t arrived() const { return arrived_; }
  int64_t count() const { return count_; }

private:
  uint32_t warps_ = 0; ///< bit w: warp w arrived in this round
  int64_t arrived_ = 0, count_ = 0;
};

//===----------------------------------------------------------------------===//
// Tensor maps (CUtensorMap, cuTensorMapEncodeTiled) and TMA box copies
//===----------------------------------------------------------------------===//

/// CUtensorMapDataType, the subset of whole-byte types.
enum class TmaDataType : uint8_t {
  U8,
  U16,
  U32,
  I32,
  U64,
  I64,
  F16,
  F32,
  F64,
  BF16,
  F32Ftz,
  TF32,
  TF32Ftz,
};
enum class TmaInterleave : uint8_t { None, B16, B32 };
/// CUtensorMapSwizzle: the 16-byte chunk index XORed with the line index,
/// over a span of 32, 64 or 128 bytes (None: 16).
enum class TmaSwizzle : uint8_t { None, B32, B64, B128 };
/// CUtensorMapFloatOOBfill.
enum class TmaOobFill : uint8_t { Zero, NanRequestZeroFma };

inline constexpr int kTmaMaxRank = 5;
inline constexpr int64_t kTensorMapBytes = 128;
inline constexpr int64_t kTensorMapAlign = 64;

/// The parameters of cuTensorMapEncodeTiled, dimension 0 innermost.
struct TensorMap {
  TmaDataType type = TmaDataType::F16;
  int rank = 1;
  uint64_t globalAddress = 0;
  std::array<uint64_t, kTmaMaxRank> globalDim{};
  /// Byte strides of dimensions 1..rank-1 (entry k is dimension k + 1); the
  /// stride of dimension 0 is the element size.
  std::array<uint64_t, kTmaMaxRank - 1> globalStrides{};
  std::array<uint32_t, kTmaMaxRank> boxDim{};
  std::array<uint32_t, kTmaMaxRank> elementStrides{{1, 1, 1, 1, 1}};
  TmaInterleave interleave = TmaInterleave::None;
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaOobFill oobFill = TmaOobFill::Zero;
};

/// Bytes of one element of `type`.
int64_t tmaElementBytes(TmaDataType type);
/// "f16", "bf16", ... for messages and the sidecar.
const char *tmaDataTypeName(TmaDataType type);
/// The swizzle span in bytes: 16 (None), 32, 64, 128.
int64_t tmaSwizzleSpan(TmaSwizzle s);
/// The swizzle pattern's repeat in bytes: 128 (None), 256, 512, 1024; a
/// swizzled box's shared address must be a multiple of it.
int64_t tmaSwizzleAtom(TmaSwizzle s);
/// The physical shared byte offset of byte `offset` of a box under `s`:
/// the 16-byte chunk index (bits 4..) XORed with the 128-byte line index
/// (WarpgroupLayouts.h's swizzleByteOffset, TmaSwizzle.cpp).
int64_t tmaSwizzleOffset(int64_t offset, TmaSwizzle s);

/// The rules cuTensorMapEncodeTiled applies (ptx-hopper.md section 2.2):
/// rank 1..5, global address 16-byte aligned, dims in 1..2^32, strides
/// multiples of 16 below 2^40, box dims 1..256 with box[0] * element size a
/// multiple of 16 and at most the swizzle span, element strides 1..8.
/// Interleaved maps are refused (the emulator does not model them).
Status validateTensorMap(const TensorMap &map);

/// Elements the box holds in dimension d: ceil(boxDim[d] / elementStrides[d])
/// (the element stride of dimension 0 is ignored without interleave).
int64_t boxExtent(const TensorMap &map, int d);
/// Bytes one box copy moves into shared memory (and signals as complete-tx).
int64_t boxBytes(const TensorMap &map);

/// Encodes the map into the 128 opaque bytes the kernel receives (the
/// emulator's own encoding; a GPU gets the driver's) and back. decode fails
/// on bytes that do not hold an encoded map.
void encodeTensorMap(const TensorMap &map, uint8_t out[kTensorMapBytes]);
Result<TensorMap> decodeTensorMap(const uint8_t in[kTensorMapBytes]);

/// A kernel's use of a tensor map, as the sidecar and the gpu.func's
/// `flashc.tensor_maps` attribute describe it: the host builds the map from
/// the tensor parameter's pointer and runtime shape (row-major, contiguous).
struct TensorMapSpec {
  std::string name;          ///< the kernel argument that receives the map
  std::string tensor;        ///< the tensor parameter it reads and writes
  std::vector<int64_t> box;  ///< elements per dimension, outermost first
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaOobFill oobFill = TmaOobFill::Zero;
};
/// The gpu.func attribute listing its TensorMapSpecs.
inline constexpr const char *kTensorMapsAttrName = "flashc.tensor_maps";

/// "none", "32B", "64B", "128B" and back.
const char *tmaSwizzleName(TmaSwizzle s);
bool parseTmaSwizzle(const std::string &text, TmaSwizzle &s);
/// "zero", "nan" and back.
const char *tmaOobFillName(TmaOobFill f);
bool parseTmaOobFill(const std::string &text, TmaOobFill &f);

/// The map cuTensorMapEncodeTiled gets for `spec` over a contiguous
/// row-major tensor of `shape` (outermost first) of `type` at `address`,
/// validated; errors name the spec and the tensor.
Result<TensorMap> tensorMapFor(const TensorMapSpec &spec, TmaDataType type,
                               const std::vector<int64_t> &shape,
                               uint64_t address);

/// One element of a box copy.
struct BoxElement {
  int64_t smemOffset;  ///< byte offset from the box's shared address, swizzled
  bool inBounds;       ///< inside [0, globalDim) in every dimension
  uint64_t globalByte; ///< byte offset from globalAddress (if inBounds)
};

/// Walks the box at element coordinates `coords` (dimension 0 first) in
/// shared-memory order (dimension 0 fastest), calling f(const BoxElement &).
template <typename F>
void forEachBoxElement(const TensorMap &map, const int32_t *coords, F &&f) {
  const int64_t esz = tmaElementBytes(map.type);
  std::array<int64_t, kTmaMaxRank> extent{}, idx{};
  int64_t total = 1;
  for (int d = 0; d < map.rank; ++d)
    total *= extent[d] = boxExtent(map, d);
  for (int64_t linear = 0; linear < total; ++linear) {
    BoxElement e{tmaSwizzleOffset(linear * esz, map.swizzle), true, 0};
    for (int d = 0; d < map.rank; ++d) {
      int64_t stride = d == 0 ? 1 : map.elementStrides[d];
      int64_t c = int64_t(coords[d]) + idx[d] * stride;
      if (c < 0 || c >= int64_t(map.globalDim[d]))
        e.inBounds = false;
      else
        e.globalByte += uint64_t(c) * (d == 0 ? uint64_t(esz)
                                              : map.globalStrides[d - 1]);
    }
    f(e);
    for (int d = 0; d < map.rank && ++idx[d] == extent[d]; ++d)
      idx[d] = 0;
  }
}

} // namespace flash::emu

#endif // FLASH_EMULATOR_ASYNCOPS_H

//===- WarpgroupOps.h - Exact semantics of sm_90a warpgroup MMA -*- C++ -*-===//
//
// The emulator's MLIR-free semantics of
//
//   wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}
//     SS: d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, trans-a, trans-b
//     RS: d, {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, trans-b
//   wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 (K-major A and B)
//     SS: d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
//     RS: d, {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b
//   wgmma.commit_group / wgmma.wait_group N (the group queue)
//
// beside WarpOps.h (same conventions: Status / Result errors whose texts
// start with the PTX mnemonic). Fragment maps, descriptors and the operand
// address recipe are dialect/Tile/WarpgroupLayouts.h's (header-only, no
// MLIR). Facts: shared/reference/ptx-hopper.md §1.
//
// Numerics (PTX leaves wgmma's accumulation order unspecified): as for
// mma.sync in this emulator, each output element is its 16 products
// (each exact in double) summed in double in ascending k, plus the old
// accumulator (none when scale-d is false), rounded once to f32, nearest
// even. For f16/bf16 data this is the exact result rounded once, so it does
// not depend on an order the hardware does not promise; hardware (which
// truncates aligned partial sums) may differ in the last bit. e4m3 (k32)
// the same way: its 32 products and their sum are exact in double (at most
// 41 significant bits), rounded once to f32 with the old accumulator. The
// hardware accumulates fp8 products with fewer than f32's bits (PTX: "higher
// than half but lower than single precision"), so the emulator is the more
// accurate of the two and GPU comparisons need fp8 tolerances.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_EMULATOR_WARPGROUPOPS_H
#define FLASH_EMULATOR_WARPGROUPOPS_H

#include "flashc/Emulator/WarpOps.h"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace flash::emu {

inline constexpr int kWarpgroupThreads = 128;

/// One 32-bit register of each thread of a warpgroup (entry t: thread t).
using WarpgroupValues = std::array<uint32_t, kWarpgroupThreads>;
/// The f32 accumulator of m64nN: N / 2 registers, [register][thread].
using WgmmaAccumulator = std::vector<std::array<float, kWarpgroupThreads>>;
/// The register operand A of m64nNk16 / m64nNk32: 4 x b32 (8 halves or 16
/// e4m3 bytes) per thread.
using WgmmaARegisters = std::array<WarpgroupValues, 4>;

/// The immediates and shape of one wgmma (f32 accumulator, 16-bit inputs).
struct WgmmaConfig {
  int64_t n = 8;                   ///< N, 8..256 step 8
  ElementType type = ElementType::F16; ///< A and B
  bool scaleD = true;  ///< false: D = A * B (the old accumulator is ignored)
  int scaleA = 1, scaleB = 1; ///< imm-scale-a/b: 1 or -1 (negates the input)
  bool transA = false; ///< A read MN-major (SS only; 16-bit only)
  bool transB = false; ///< B read MN-major (16-bit only)
};
/// K of one wgmma of `type`: 16 (16-bit inputs) or 32 (e4m3).
inline int64_t wgmmaK(ElementType type) {
  return type == ElementType::E4M3 ? 32 : 16;
}
/// Bytes of one element of `type`.
inline int64_t wgmmaElementBytes(ElementType type) {
  return type == ElementType::E4M3 ? 1 : 2;
}
/// Why `config` is not a valid m64nNk16 (m64nNk32 for e4m3) f32 wgmma, or
/// empty.
std::string checkWgmmaConfig(const WgmmaConfig &config);

/// An operand as exact values: element (mn, k) at [mn * K + k], mn over M
/// (64) for A and N for B, k over K = wgmmaK(type).
using WgmmaOperand = std::vector<double>;

/// Checks a descriptor the way the emulator's sanitizer does: no reserved
/// bits, base offset 0 (the emulator does not model a shifted pattern), and
/// for a swizzled layout the start address in the first row of its swizzle
/// atom (a pattern not starting on its natural boundary needs a base
/// offset). Errors name `what` ("A" / "B").
Status checkWgmmaDescriptorBits(uint64_t descriptor, const char *what);

/// Checks that a swizzled operand of `mnExtent` x 16 elements read through
/// `descriptor` keeps every swizzle atom it touches on its pattern: each
/// atom (8 rows of the swizzle span: rows along MN for K-major, along K for
/// MN-major) must start in the first row of an atom-aligned block with room
/// there for the row it reads (16 elements K-major, up to a span of MN
/// elements MN-major). The start address is one atom's origin; the stride
/// (and, MN-major, leading) byte offsets place the others, so an offset that
/// is not a multiple of the atom shifts the pattern under them, which only a
/// base offset could describe. Unswizzled operands have no atoms to check.
Status checkWgmmaOperandAtoms(uint64_t descriptor, bool mnMajor,
                              int64_t mnExtent, ElementType type,
                              const char *what);

/// Reads an operand of `mnExtent` x K elements of `type` through a
/// descriptor (WarpgroupLayouts' wgmmaOperandAddress, `mnMajor` = trans).
/// Errors: descriptor and atom checks, out-of-bounds or never-written bytes.
Result<WgmmaOperand> readWgmmaOperand(const SharedMemory &smem,
                                      uint64_t descriptor, bool mnMajor,
                                      int64_t mnExtent, ElementType type,
                                      const char *what);
/// The shared byte addresses (one per element, row-major as WgmmaOperand)
/// such a read touches, for race and proxy tracking.
std::vector<uint32_t> wgmmaOperandAddresses(uint64_t descriptor, bool mnMajor,
                                            int64_t mnExtent,
                                            ElementType type);

/// A from registers: element (m, k) from WarpgroupLayouts' wgmmaARegCoord
/// (wgmmaA8RegCoord for e4m3).
WgmmaOperand wgmmaRegisterOperandA(const WgmmaARegisters &regs,
                                   ElementType type);

/// D = scaleA A (64 x K) * scaleB B^T (B given as N x K) + (scaleD ? C : 0)
/// with the numerics above; C and D in the accumulator fragment.
Result<WgmmaAccumulator> wgmmaM64NK16(const WgmmaConfig &config,
                                      const WgmmaOperand &a,
                                      const WgmmaOperand &b,
                                      const WgmmaAccumulator &c);

/// The wgmma groups of one warpgroup: wgmmas (named by caller ids) issued
/// since the last commit_group, and the committed groups, oldest first.
class WgmmaQueue {
public:
  /// wgmma.mma_async: `id` joins the uncommitted wgmmas.
  void issue(uint64_t id) { current_.push_back(id); }
  /// wgmma.commit_group: the uncommitted wgmmas become a new group (an
  /// empty one when there are none).
  void commitGroup();
  /// wgmma.wait_group n: completes every group but the n most recent;
  /// returns the ids completed, in issue order. Uncommitted wgmmas stay
  /// pending (a wait never covers them).
  std::vector<uint64_t> waitGroup(uint32_t n);
  size_t numPendingGroups() const { return groups_.size(); }
  size_t numUncommitted() const { return current_.size(); }
  /// Whether `id` is issued and not yet completed.
  bool isPending(uint64_t id) const;
  bool empty() const { return current_.empty() && groups_.empty(); }

private:
  std::vector<uint64_t> current_;
  std::deque<std::vector<uint64_t>> groups_;
};

} // namespace flash::emu

#endif // FLASH_EMULATOR_WARPGROUPOPS_H

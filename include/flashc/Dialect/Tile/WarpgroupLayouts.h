//===- WarpgroupLayouts.h - Hopper wgmma fragments and shared layouts -*- C++ -*-===//
//
// The one definition of the layout facts of sm_90a's warpgroup MMA
// (wgmma.mma_async m64nNk16, f16/bf16 inputs, and m64nNk32, e4m3 inputs,
// f32 accumulator) and of the
// swizzled shared-memory tiles it reads (which TMA also writes):
//
//   * register fragments of a warpgroup (128 threads, 4 warps): the
//     accumulator D of m64nN and the register operand A of m64nNk16;
//   * the swizzle function of the 16-byte chunks of shared memory
//     (none / 32B / 64B / 128B), the same for wgmma descriptors and TMA;
//   * the canonical shared layout of a wgmma operand (= a TMA box layout);
//   * the 64-bit matrix descriptor (encode, decode, checks) and the shared
//     byte address the hardware reads for element (mn, k) of an operand.
//
// Sources (shared/reference/ptx-hopper.md): PTX ISA 9.7.15 (wgmma), 5.5.7
// (swizzle modes), CUTLASS cute/atom/mma_traits_sm90_gmma.hpp (fragments),
// cute/arch/mma_sm90_desc.hpp (descriptor). As in LayoutFunctions.h, the
// coordinate and offset functions are templates over the integer type (only
// + * / % ^ are used), so a formula is written once for constants and for
// index arithmetic emitted into a kernel. Header-only: the emulator's
// MLIR-free wgmma semantics use it too.
//
// Notation: warpgroup thread t in 0..127, w = t / 32, g = t % 32 / 4,
// q = t % 4.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_DIALECT_TILE_WARPGROUPLAYOUTS_H
#define FLASH_DIALECT_TILE_WARPGROUPLAYOUTS_H

#include "flashc/Dialect/Tile/LayoutFunctions.h"

#include <cstdint>
#include <optional>
#include <string>

namespace flash::tile::layout {

/// A warpgroup: 4 consecutive warps, the first one's rank a multiple of 4.
inline constexpr int64_t kWarpgroupSize = 128;
inline constexpr int64_t kWarpgroupWarps = 4;
/// wgmma m64nNk16 with f16/bf16 inputs: M = 64 rows (16 per warp), K = 16.
inline constexpr int64_t kWgmmaAtomM = 64, kWgmmaAtomK16 = 16;

//===----------------------------------------------------------------------===//
// Register fragments (ptx-hopper.md §1.3)
//===----------------------------------------------------------------------===//

/// Why N is not a valid wgmma N (8..256, a multiple of 8), or empty.
inline std::string checkWgmmaN(int64_t n) {
  if (n >= 8 && n <= 256 && n % 8 == 0)
    return {};
  return "wgmma N must be a multiple of 8 in [8, 256], got " +
         std::to_string(n);
}
/// f32 accumulator registers per thread of m64nN: N / 2.
inline int64_t wgmmaAccNumRegisters(int64_t n) { return n / 2; }
/// 32-bit A registers per thread of m64nNk16 (16-bit A): 4, 8 elements.
inline constexpr int64_t kWgmmaARegisters = 4, kWgmmaAElements = 8;

/// Accumulator D of m64nN (f32): register `reg` in [0, N/2) of warpgroup
/// thread `thread` holds (row, col) =
///   (16 w + g + 8 ((reg / 2) % 2),  8 (reg / 4) + 2 q + reg % 2),
/// i.e. each warp owns 16 rows, and the mma.sync m16n8 C fragment repeats
/// N/8 times along N.
template <typename Int>
CoordOf<Int> wgmmaAccCoord(Int thread, int64_t reg) {
  Int lane = thread % kWarpSize;
  Int row = thread / kWarpSize * 16 + lane / 4 + 8 * (reg / 2 % 2);
  Int col = lane % 4 * 2 + (8 * (reg / 4) + reg % 2);
  return {row, col};
}

/// Register operand A of m64nNk16 (16-bit elements): element `elem` in
/// [0, 8) of thread `thread` (register elem / 2, low half first) holds
/// (row, k) = (16 w + g + 8 ((elem / 2) % 2),  2 q + elem % 2 + 8 (elem / 4)):
/// per warp the mma.sync m16n8k16 A fragment. The f32 accumulator registers
/// 8j..8j+7 of a thread, packed in pairs, are exactly its A elements of the
/// K slice 16j..16j+15 (no shuffles between S = Q K^T and P V).
template <typename Int>
CoordOf<Int> wgmmaARegCoord(Int thread, int64_t elem) {
  Int lane = thread % kWarpSize;
  Int row = thread / kWarpSize * 16 + lane / 4 + 8 * (elem / 2 % 2);
  Int k = lane % 4 * 2 + (elem % 2 + 8 * (elem / 4));
  return {row, k};
}

/// wgmma m64nNk32 with 8-bit (e4m3) inputs: K = 32 per instruction, both
/// operands K-major (no transpose immediates for 8-bit types).
inline constexpr int64_t kWgmmaAtomK8 = 32;
/// 8-bit A elements per thread of m64nNk32: 16 bytes in 4 registers.
inline constexpr int64_t kWgmmaA8Elements = 16;

/// Register operand A of m64nNk32 (8-bit elements): byte `byte` in [0, 16)
/// of thread `thread` (register byte / 4, least significant byte first)
/// holds (row, k) =
///   (16 w + g + 8 ((byte / 4) % 2),  4 q + byte % 4 + 16 (byte / 8)).
/// Unlike the 16-bit fragment this is not the accumulator's pattern (which
/// gives a thread columns 2q, 2q + 1 of every 8).
template <typename Int>
CoordOf<Int> wgmmaA8RegCoord(Int thread, int64_t byte) {
  Int lane = thread % kWarpSize;
  Int row = thread / kWarpSize * 16 + lane / 4 + 8 * (byte / 4 % 2);
  Int k = lane % 4 * 4 + (byte % 4 + 16 * (byte / 8));
  return {row, k};
}

/// The key order of an 8-bit P V: A-fragment position k of a 32-key block
/// (the K index wgmma sees) holds key fp8PKey(k) of the block, where
/// k = 4 q + e + 16 h (e < 4, h < 2) maps to 16 h + 8 (e / 2) + 2 q + e % 2.
/// With this relabeling the thread holding byte (row, k) of P's A fragment
/// is the thread holding score (row, fp8PKey(k)) in the f32 accumulator of
/// S, so converting S to P needs no data movement between threads; V's
/// rows (the keys, K of P V) are stored in the same order.
inline constexpr int64_t fp8PKey(int64_t k) {
  int64_t q = k % 16 / 4, e = k % 4, h = k / 16;
  return 16 * h + 8 * (e / 2) + 2 * q + e % 2;
}

/// The accumulator register (of an m64nN S tile, N a multiple of 32) whose
/// score goes into byte `byte` of P's A registers for the 32-key block
/// `block`: same thread, same row, column 32 block + fp8PKey(k).
inline constexpr int64_t fp8PAccRegister(int64_t block, int64_t byte) {
  int64_t col8 = 4 * block + 2 * (byte / 8) + byte % 4 / 2;
  return 4 * col8 + 2 * (byte / 4 % 2) + byte % 2;
}

//===----------------------------------------------------------------------===//
// Swizzle (ptx-hopper.md §1.5)
//===----------------------------------------------------------------------===//

/// The swizzle modes of wgmma descriptors and TMA tensor maps, named by
/// their span: the bytes of one swizzled row (None: one 16-byte chunk).
enum class SmemSwizzle : uint8_t { None, B32, B64, B128 };

/// Bytes of one row of the swizzle pattern: 16 (None), 32, 64, 128.
inline constexpr int64_t swizzleSpanBytes(SmemSwizzle s) {
  switch (s) {
  case SmemSwizzle::None:
    return 16;
  case SmemSwizzle::B32:
    return 32;
  case SmemSwizzle::B64:
    return 64;
  case SmemSwizzle::B128:
    return 128;
  }
  return 16;
}
/// The pattern's period, 8 rows of the span: 128 (None: one core matrix of
/// 8 x 16 B), 256, 512, 1024. Swizzled tiles start on a multiple of it.
inline constexpr int64_t swizzleAtomBytes(SmemSwizzle s) {
  return 8 * swizzleSpanBytes(s);
}
/// How many 128-byte lines the XOR pattern cycles through: 1, 2, 4, 8.
inline constexpr int64_t swizzlePhases(SmemSwizzle s) {
  return swizzleSpanBytes(s) / 16;
}
inline const char *swizzleName(SmemSwizzle s) {
  switch (s) {
  case SmemSwizzle::None:
    return "none";
  case SmemSwizzle::B32:
    return "32B";
  case SmemSwizzle::B64:
    return "64B";
  case SmemSwizzle::B128:
    return "128B";
  }
  return "?";
}

/// The physical shared byte address of logical byte address `offset`: the
/// 16-byte chunk index within each 128-byte line is XORed with the line
/// index modulo the number of phases (CuTe Swizzle<B,4,3> on bytes,
/// phys = a ^ ((a >> 3) & (((1 << B) - 1) << 4))). The one definition used
/// by wgmma descriptors and TMA boxes; addresses are taken relative to a
/// base aligned to swizzleAtomBytes (descriptor base offset 0). An
/// involution: applying it twice gives `offset` back.
template <typename Int>
Int swizzleByteOffset(Int offset, SmemSwizzle s) {
  int64_t phases = swizzlePhases(s);
  if (phases == 1)
    return offset;
  return offset ^ (offset / 128 % phases * 16);
}

//===----------------------------------------------------------------------===//
// Canonical shared layouts of wgmma operands / TMA boxes (§1.4)
//===----------------------------------------------------------------------===//

/// A tile of `rows` x `cols` elements of `elemBytes`, `cols` contiguous,
/// split into column blocks one swizzle span wide (span / elemBytes
/// elements); each block holds all rows, row-major (row r at r * span), the
/// blocks follow one another (block b at b * rows * span), and every byte
/// address goes through swizzleByteOffset. For a wgmma operand:
///   K-major  (A "row", B "col"): rows = M or N, cols = K;
///   MN-major (A "col", B "row", trans = 1): rows = K, cols = M or N.
/// One column block is exactly the smem image of a TMA box of
/// span / elemBytes x rows elements with that swizzle. `rows` must be a
/// multiple of 8 so that every block starts on a swizzle atom
/// (checkCanonicalSmem). The byte offset of element (r, c), relative to a
/// base aligned to swizzleAtomBytes(s):
inline int64_t canonicalSmemOffset(SmemSwizzle s, int64_t elemBytes,
                                   int64_t rows, int64_t cols, int64_t r,
                                   int64_t c) {
  (void)cols;
  int64_t span = swizzleSpanBytes(s);
  int64_t bytes = c * elemBytes;
  int64_t logical = bytes / span * rows * span + r * span + bytes % span;
  return swizzleByteOffset<int64_t>(logical, s);
}
/// Bytes the canonical tile occupies (column blocks are whole spans).
inline int64_t canonicalSmemBytes(SmemSwizzle s, int64_t elemBytes,
                                  int64_t rows, int64_t cols) {
  int64_t span = swizzleSpanBytes(s);
  return (cols * elemBytes + span - 1) / span * rows * span;
}
/// Why (rows, cols, elemBytes) has no canonical layout, or empty: element
/// size 1, 2, 4 or 8, positive sizes, rows a multiple of 8, and the span a
/// multiple of the element size.
inline std::string checkCanonicalSmem(SmemSwizzle s, int64_t elemBytes,
                                      int64_t rows, int64_t cols) {
  if (elemBytes != 1 && elemBytes != 2 && elemBytes != 4 && elemBytes != 8)
    return "element size must be 1, 2, 4 or 8 bytes, got " +
           std::to_string(elemBytes);
  if (rows <= 0 || cols <= 0)
    return "a canonical shared tile needs positive sizes";
  if (rows % 8 != 0)
    return "a canonical shared tile needs a multiple of 8 rows, got " +
           std::to_string(rows);
  (void)s;
  return {};
}

/// The swizzle of a wgmma operand tile whose rows hold `rowBytes`: the
/// widest span (128, 64 or 32 bytes) that divides the row, so that the row
/// is one span or whole column blocks of one span (CUTLASS's choice of
/// K-major swizzle atom: 96 f16 = three 64-byte blocks, 80 f16 = five
/// 32-byte blocks, 256 f16 = four 128-byte blocks). None (no swizzled
/// layout) for rows of an odd number of 16-byte chunks or none at all.
inline std::optional<SmemSwizzle> wgmmaRowSwizzle(int64_t rowBytes) {
  if (rowBytes <= 0)
    return std::nullopt;
  for (SmemSwizzle s : {SmemSwizzle::B128, SmemSwizzle::B64, SmemSwizzle::B32})
    if (rowBytes % swizzleSpanBytes(s) == 0)
      return s;
  return std::nullopt;
}

/// The staging swizzle (SwizzleParams, !tile.shared's swizzle and
/// block_cols) equal to canonicalSmemOffset under `s`: the phase advances
/// every 128 / span rows (one 128-byte line), span / 16 phases, column
/// blocks one span wide (blockBytes 0 when the row is one span).
inline SwizzleParams canonicalSwizzleParams(SmemSwizzle s, int64_t elemBytes,
                                            int64_t rows, int64_t rowBytes) {
  int64_t span = swizzleSpanBytes(s);
  SwizzleParams p;
  p.rowBytes = rowBytes;
  p.elementBytes = elemBytes;
  p.perPhase = 128 / span;
  p.maxPhase = span / 16;
  p.blockBytes = rowBytes == span ? 0 : span;
  p.rows = rows;
  return p;
}

//===----------------------------------------------------------------------===//
// Matrix descriptor (PTX 9.7.15.5.1.2.2; ptx-hopper.md §1.4)
//===----------------------------------------------------------------------===//

/// The fields of a wgmma shared-memory matrix descriptor, in bytes. What
/// LBO and SBO mean depends on the operand's major-ness and swizzle (see
/// wgmmaOperandAddress). baseOffset is bits 49-51 (0 when the pattern starts
/// on its natural boundary; the emulator refuses non-zero values).
struct WgmmaDescriptor {
  int64_t startAddress = 0;      ///< shared-window byte address
  int64_t leadingByteOffset = 0; ///< LBO, bytes
  int64_t strideByteOffset = 0;  ///< SBO, bytes
  int baseOffset = 0;
  SmemSwizzle swizzle = SmemSwizzle::None;
  bool operator==(const WgmmaDescriptor &o) const {
    return startAddress == o.startAddress &&
           leadingByteOffset == o.leadingByteOffset &&
           strideByteOffset == o.strideByteOffset &&
           baseOffset == o.baseOffset && swizzle == o.swizzle;
  }
};

/// The 2-bit layout code of bits 62-63: 0 none, 1 128B, 2 64B, 3 32B.
inline constexpr uint64_t wgmmaSwizzleCode(SmemSwizzle s) {
  switch (s) {
  case SmemSwizzle::None:
    return 0;
  case SmemSwizzle::B128:
    return 1;
  case SmemSwizzle::B64:
    return 2;
  case SmemSwizzle::B32:
    return 3;
  }
  return 0;
}

/// Why `d` cannot be encoded exactly, or empty: the three byte fields must
/// be multiples of 16 below 2^18 (14 bits of 16-byte units), baseOffset in
/// [0, 8).
inline std::string checkWgmmaDescriptor(const WgmmaDescriptor &d) {
  auto field = [](const char *name, int64_t v) -> std::string {
    if (v < 0 || v >= (int64_t(1) << 18) || v % 16 != 0)
      return std::string(name) + " " + std::to_string(v) +
             " is not a multiple of 16 in [0, 262144)";
    return {};
  };
  for (std::string e : {field("start address", d.startAddress),
                        field("leading byte offset", d.leadingByteOffset),
                        field("stride byte offset", d.strideByteOffset)})
    if (!e.empty())
      return e;
  if (d.baseOffset < 0 || d.baseOffset > 7)
    return "base offset " + std::to_string(d.baseOffset) + " is not in [0, 8)";
  return {};
}

/// The 64-bit descriptor: bits 0-13 start address >> 4, 16-29 LBO >> 4,
/// 32-45 SBO >> 4, 49-51 base offset, 62-63 wgmmaSwizzleCode; the rest 0.
/// Fields are masked (addresses taken modulo 2^18); checkWgmmaDescriptor
/// says whether the encoding is exact.
inline uint64_t encodeWgmmaDescriptor(const WgmmaDescriptor &d) {
  auto units = [](int64_t bytes) {
    return (static_cast<uint64_t>(bytes) & 0x3ffff) >> 4;
  };
  return units(d.startAddress) | units(d.leadingByteOffset) << 16 |
         units(d.strideByteOffset) << 32 |
         (static_cast<uint64_t>(d.baseOffset) & 7) << 49 |
         wgmmaSwizzleCode(d.swizzle) << 62;
}

/// The fields of descriptor bits (reserved bits are ignored; see
/// wgmmaDescriptorReservedBits).
inline WgmmaDescriptor decodeWgmmaDescriptor(uint64_t bits) {
  static constexpr SmemSwizzle kByCode[4] = {
      SmemSwizzle::None, SmemSwizzle::B128, SmemSwizzle::B64,
      SmemSwizzle::B32};
  WgmmaDescriptor d;
  d.startAddress = static_cast<int64_t>(bits & 0x3fff) << 4;
  d.leadingByteOffset = static_cast<int64_t>(bits >> 16 & 0x3fff) << 4;
  d.strideByteOffset = static_cast<int64_t>(bits >> 32 & 0x3fff) << 4;
  d.baseOffset = static_cast<int>(bits >> 49 & 7);
  d.swizzle = kByCode[bits >> 62 & 3];
  return d;
}
/// The bits of a descriptor that must be 0 on sm_90 (14-15, 30-31, 46-48,
/// 52-61).
inline constexpr uint64_t wgmmaDescriptorReservedBits(uint64_t bits) {
  constexpr uint64_t fields = 0x3fffull | 0x3fffull << 16 | 0x3fffull << 32 |
                              7ull << 49 | 3ull << 62;
  return bits & ~fields;
}

/// The descriptor of the (MN) x 16 (K) slice of a wgmma operand whose tile
/// lies in the canonical layout at `tileAddress` (aligned to
/// swizzleAtomBytes(s)): rows x cols as canonicalSmemOffset takes them
/// (K-major: rows = MN extent, cols = K extent; MN-major: rows = K extent,
/// cols = MN extent), the slice starting at MN index `mn0` (a multiple of 8,
/// and for MN-major of span / elemBytes) and K index `k0` (a multiple of 16).
/// Fields, with span = swizzleSpanBytes(s):
///   K-major,  none:     LBO = rows * 16 (next 8 x 16 B core matrix along K),
///                       SBO = 128       (next 8 rows along MN)
///   K-major,  swizzled: LBO = 16 (unused), SBO = 8 * span
///   MN-major, none:     LBO = 128       (next 8 rows along K),
///                       SBO = rows * 16 (next 16 bytes along MN)
///   MN-major, swizzled: LBO = rows * span (next span along MN),
///                       SBO = 8 * span    (next 8 rows along K)
/// start = tileAddress + the unswizzled canonical offset of (mn0, k0), so a
/// k16 step inside a swizzle span adds k0 * elemBytes to the start address
/// (CUTLASS's descriptor iterator) and the hardware swizzle of the final
/// address does the rest. baseOffset = 0.
inline WgmmaDescriptor wgmmaOperandDescriptor(SmemSwizzle s, bool mnMajor,
                                              int64_t elemBytes, int64_t rows,
                                              int64_t cols,
                                              int64_t tileAddress,
                                              int64_t mn0, int64_t k0) {
  (void)cols;
  int64_t span = swizzleSpanBytes(s);
  bool swizzled = s != SmemSwizzle::None;
  int64_t r0 = mnMajor ? k0 : mn0, c0 = mnMajor ? mn0 : k0;
  int64_t bytes = c0 * elemBytes;
  WgmmaDescriptor d;
  d.startAddress = tileAddress + bytes / span * rows * span + r0 * span +
                   bytes % span;
  d.swizzle = s;
  if (!mnMajor) {
    d.leadingByteOffset = swizzled ? 16 : rows * 16;
    d.strideByteOffset = swizzled ? 8 * span : 128;
  } else {
    d.leadingByteOffset = swizzled ? rows * span : 128;
    d.strideByteOffset = swizzled ? 8 * span : rows * 16;
  }
  return d;
}

/// The shared byte address the hardware reads for element (mn, k) of a wgmma
/// operand (mn < M or N, k < 16) through descriptor `d`, from the PTX ISA's
/// canonical layouts (CuTe notation in elements, T = 16 / elemBytes,
/// W = span / 16):
///   K-major,  none:     ((8,m),(T,2k)):((T,SBO),(1,LBO))
///   K-major,  swizzled: ((8,m),(T,2k)):((W T,SBO),(1,T))
///   MN-major, none:     ((T,1,m),(8,k)):((1,T,SBO),(T,LBO))
///   MN-major, swizzled: ((T,W,m),(8,k)):((1,T,LBO),(W T,SBO))
/// giving an unswizzled address from the start address, then
/// swizzleByteOffset of it (base offset 0).
inline int64_t wgmmaOperandAddress(const WgmmaDescriptor &d, bool mnMajor,
                                   int64_t elemBytes, int64_t mn, int64_t k) {
  int64_t span = swizzleSpanBytes(d.swizzle);
  int64_t perChunk = 16 / elemBytes;
  bool swizzled = d.swizzle != SmemSwizzle::None;
  int64_t a = d.startAddress;
  if (!mnMajor) {
    a += mn / 8 * d.strideByteOffset;
    if (swizzled)
      a += mn % 8 * span + k * elemBytes;
    else
      a += mn % 8 * 16 + k / perChunk * d.leadingByteOffset +
           k % perChunk * elemBytes;
  } else {
    a += k / 8 * (swizzled ? d.strideByteOffset : d.leadingByteOffset);
    if (swizzled) {
      int64_t perSpan = span / elemBytes;
      a += mn / perSpan * d.leadingByteOffset + mn % perSpan * elemBytes +
           k % 8 * span;
    } else {
      a += mn / perChunk * d.strideByteOffset + mn % perChunk * elemBytes +
           k % 8 * 16;
    }
  }
  return swizzleByteOffset<int64_t>(a, d.swizzle);
}

} // namespace flash::tile::layout

#endif // FLASH_DIALECT_TILE_WARPGROUPLAYOUTS_H

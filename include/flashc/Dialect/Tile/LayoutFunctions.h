//===- LayoutFunctions.h - (warp, lane, register) -> tile coordinate -*- C++ -*-===//
//
// The one definition of every distributed layout flashc uses: given a tile
// shape, which element of the tile register `reg` of lane `lane` of warp `warp`
// holds. Layout attributes, index computations in generated code, layout
// conversions and the emulator all derive from these functions. Several
// threads may hold the same element (broadcast); within one thread the
// registers of a layout hold distinct elements.
//
// The coordinate functions are templates over the integer type of warp and
// lane: int64_t to evaluate them, or a type whose operators build IR (index
// arithmetic of a kernel), so the formula is written once for both.
// Registers are always compile-time.
//
// Every layout takes a tile of any positive size along any dim. A layout
// covers whole steps (its atoms over its lanes, warps and registers): when a
// dim is not a multiple of the step, the tile is padded to whole steps and
// the padding's registers hold copies of the first elements (coordinates
// wrap modulo the size). So a size-1 dim broadcasts into any layout, a tile
// smaller than one step is held by several threads, and a thread may hold
// one element in several registers. Space::Padded gives the coordinate
// before wrapping, where no thread holds an element twice: reductions and
// the MMA's K steps use it to tell padding from data.
//
// Facts from the PTX ISA (see docs/ptx-warp-facts.md), lane = 32
// threads, g = lane / 4, q = lane % 4:
//   mma.m16n8k16 C/D element i: row g + 8 (i / 2), col 2q + i % 2
//   A element e = 2r + h:       row g + 8 (r % 2), col 2q + h + 8 (r / 2)
//   B element e = 2r + h:       k 2q + h + 8r,     n g
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_DIALECT_TILE_LAYOUTFUNCTIONS_H
#define FLASH_DIALECT_TILE_LAYOUTFUNCTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flash::tile::layout {

inline constexpr int64_t kWarpSize = 32;
/// The MMA atom: mma.sync m16n8k16 with f16/bf16 operands and f32 accumulator.
inline constexpr int64_t kAtomM = 16, kAtomN = 8, kAtomK = 16;

template <typename Int>
using CoordOf = llvm::SmallVector<Int, 2>;
using Coord = CoordOf<int64_t>;
using Shape = llvm::SmallVector<int64_t, 2>;

/// Which coordinates a coordinate function returns: the element of the tile
/// (padding wraps onto the first elements), or the position in the tile
/// padded to whole steps of the layout.
enum class Space { Tile, Padded };

/// A TiledMMA: the atom repeated over warps (AtomLayoutMNK) and, within a
/// warp, over registers (ValueLayoutMNK). One step covers
/// (16 wM vM) x (8 wN vN) x (16 wK vK); larger tiles repeat that step in
/// registers, smaller ones are held by several warps (broadcast), and a
/// tile that is not a multiple of the step is padded (see above). An MMA
/// reads its operands' K padding as zeros.
/// Warp w sits at (w % wM, w / wM % wN) and owns 16 vM consecutive rows and
/// 8 vN consecutive columns of each step: rows grow with warps, so the row
/// statistics of attention never cross warps.
struct MmaParams {
  int64_t warps[3] = {1, 1, 1};  // M, N, K
  int64_t values[3] = {1, 1, 1}; // M, N, K
  int64_t numWarps() const { return warps[0] * warps[1] * warps[2]; }
};

/// Which MMA role a tile plays: the accumulator C (M x N, also the layout of
/// every element-wise tile around it), operand A (M x K) or operand B (K x N).
enum class MmaRole { Acc, OperandA, OperandB };

/// Triton's blocked layout: each thread holds sizePerThread contiguous
/// elements per dim, lanes and warps tile the dims, `order` lists the dims
/// fastest first. Used for coalesced global access (16 bytes per thread).
struct BlockedParams {
  llvm::SmallVector<int64_t, 2> sizePerThread, threadsPerWarp, warpsPerCTA,
      order;
  int64_t numWarps() const;
};

//===----------------------------------------------------------------------===//
// Shape checks and register counts (compile time only)
//===----------------------------------------------------------------------===//

/// Why `shape` cannot be distributed by the layout, or empty when it can:
/// any 2-D tile of positive sizes can. An accumulator-layout tile with a dim
/// of size 1 (a row or column of a broadcast) holds what the slice layout of
/// the other dim holds.
std::string checkMmaShape(const MmaParams &mma, MmaRole role,
                          llvm::ArrayRef<int64_t> shape);
/// Elements per thread (for operands: 16-bit values, two per 32-bit register).
int64_t mmaNumRegisters(const MmaParams &mma, MmaRole role,
                        llvm::ArrayRef<int64_t> shape);
/// The tile padded to whole steps of the layout (Space::Padded's extent).
Shape mmaPaddedShape(const MmaParams &mma, MmaRole role,
                     llvm::ArrayRef<int64_t> shape);
/// Whether the layout holds `shape` without partial padding: every dim is a
/// multiple of the step, or divides it (whole copies, a broadcast).
bool mmaHoldsWhole(const MmaParams &mma, MmaRole role,
                   llvm::ArrayRef<int64_t> shape);

/// The accumulator layout with one dim removed: dim 1 gives per-row vectors
/// (attention's running max and sum), dim 0 per-column vectors. Lanes of a
/// quad (and warps along the removed dim) hold the same elements.
std::string checkMmaSliceShape(const MmaParams &mma, int64_t dim,
                               llvm::ArrayRef<int64_t> shape);
int64_t mmaSliceNumRegisters(const MmaParams &mma, int64_t dim,
                             llvm::ArrayRef<int64_t> shape);
Shape mmaSlicePaddedShape(const MmaParams &mma, int64_t dim,
                          llvm::ArrayRef<int64_t> shape);

std::string checkBlocked(const BlockedParams &blocked);
/// The parameters a blocked layout uses for a tile of `shape`: a dim of size
/// 1 (a row or column of a broadcast) holds one element per thread, like the
/// slice layout of the other dims.
BlockedParams blockedForShape(const BlockedParams &blocked,
                              llvm::ArrayRef<int64_t> shape);
std::string checkBlockedShape(const BlockedParams &blocked,
                              llvm::ArrayRef<int64_t> shape);
int64_t blockedNumRegisters(const BlockedParams &blocked,
                            llvm::ArrayRef<int64_t> shape);
Shape blockedPaddedShape(const BlockedParams &blocked,
                         llvm::ArrayRef<int64_t> shape);
/// The blocked layout with dim `dim` removed (lanes and warps along it hold
/// copies): the layout of a reduction of a blocked tile along `dim`.
BlockedParams blockedSliceParent(const BlockedParams &blocked, int64_t dim);

//===----------------------------------------------------------------------===//
// Coordinates
//===----------------------------------------------------------------------===//

namespace detail {
/// How one tile dim is spread: atom extent, atoms per warp in registers
/// (values), warps, and this thread's warp coordinate along it.
template <typename Int>
struct DimSpread {
  int64_t atom, values, warps;
  Int warpCoord;
  int64_t warpExtent() const { return atom * values; }
  int64_t step() const { return atom * values * warps; }
  /// Steps that cover a dim of `size` (the last one may overhang it).
  int64_t repeats(int64_t size) const {
    return std::max<int64_t>(1, (size + step() - 1) / step());
  }
  int64_t padded(int64_t size) const { return repeats(size) * step(); }
  /// Whether the steps cover the dim exactly or in whole copies.
  bool holdsWhole(int64_t size) const {
    return size % step() == 0 || step() % size == 0;
  }
};

/// Wraps the padded coordinate `coord` of repeat `rep` into a dim of `size`.
/// Only a repeat that overhangs the dim needs the modulo, so the generated
/// index arithmetic of the others stays "thread part + constant" and folds
/// into address offsets.
template <typename Int>
Int wrap(Int coord, int64_t size, int64_t step, int64_t rep, Space space) {
  return space == Space::Tile && (rep + 1) * step > size ? coord % size
                                                         : coord;
}

/// Coordinate along a dim: repeat `rep`, value `value` (compile time) and a
/// position `inAtom` (thread dependent) inside the atom.
template <typename Int>
Int place(const DimSpread<Int> &dim, int64_t size, int64_t rep, int64_t value,
          Int inAtom, Space space) {
  return wrap(dim.warpCoord * dim.warpExtent() + inAtom +
                  (rep * dim.step() + value * dim.atom),
              size, dim.step(), rep, space);
}

template <typename Int>
struct RoleSpread {
  DimSpread<Int> dims[2];
  int64_t atomElements;
};

template <typename Int>
RoleSpread<Int> spreadFor(const MmaParams &mma, MmaRole role, Int warp) {
  Int wm = warp % mma.warps[0];
  Int wn = warp / mma.warps[0] % mma.warps[1];
  Int wk = warp / (mma.warps[0] * mma.warps[1]) % mma.warps[2];
  DimSpread<Int> m{kAtomM, mma.values[0], mma.warps[0], wm};
  DimSpread<Int> n{kAtomN, mma.values[1], mma.warps[1], wn};
  DimSpread<Int> k{kAtomK, mma.values[2], mma.warps[2], wk};
  switch (role) {
  case MmaRole::OperandA:
    return {{m, k}, 8};
  case MmaRole::OperandB:
    return {{k, n}, 4};
  case MmaRole::Acc:
    break;
  }
  return {{m, n}, 4};
}

/// Position inside the atom of element `e` of `lane`, per the PTX ISA.
template <typename Int>
std::pair<Int, Int> atomPosition(MmaRole role, Int lane, int64_t e) {
  Int g = lane / 4, q = lane % 4;
  int64_t r = e / 2, h = e % 2;
  switch (role) {
  case MmaRole::OperandA:
    return {g + 8 * (r % 2), q * 2 + (h + 8 * (r / 2))};
  case MmaRole::OperandB:
    return {q * 2 + (h + 8 * r), g};
  case MmaRole::Acc:
    break;
  }
  return {g + 8 * r, q * 2 + h};
}
} // namespace detail

/// Slice of the accumulator layout. Register order, fastest first: position
/// in the atom (rows g, g + 8 or columns 2q, 2q + 1), value, repeat.
template <typename Int>
CoordOf<Int> mmaSliceCoord(const MmaParams &mma, int64_t dim,
                           llvm::ArrayRef<int64_t> shape, Int warp, Int lane,
                           int64_t reg, Space space = Space::Tile) {
  detail::DimSpread<Int> kept =
      detail::spreadFor(mma, MmaRole::Acc, warp).dims[1 - dim];
  int64_t a = reg % 2;
  int64_t value = reg / 2 % kept.values;
  int64_t rep = reg / 2 / kept.values;
  Int inAtom = dim == 1 ? lane / 4 + 8 * a : lane % 4 * 2 + a;
  return {detail::place(kept, shape[0], rep, value, inAtom, space)};
}

/// Whether an accumulator-layout tile of `shape` holds what a slice layout
/// holds (a dim of size 1); returns the dim that is kept.
inline std::optional<int64_t> mmaAccKeptDim(MmaRole role,
                                            llvm::ArrayRef<int64_t> shape) {
  if (role != MmaRole::Acc || (shape[0] != 1 && shape[1] != 1))
    return std::nullopt;
  return shape[0] == 1 ? 1 : 0;
}

/// Register order, fastest first: element of the atom, value along dim 1,
/// value along dim 0, repeat along dim 1, repeat along dim 0.
template <typename Int>
CoordOf<Int> mmaCoord(const MmaParams &mma, MmaRole role,
                      llvm::ArrayRef<int64_t> shape, Int warp, Int lane,
                      int64_t reg, Space space = Space::Tile) {
  if (std::optional<int64_t> kept = mmaAccKeptDim(role, shape)) {
    Int at = mmaSliceCoord(mma, 1 - *kept, shape.slice(*kept, 1), warp, lane,
                           reg, space)[0];
    Int zero = at * 0;
    return *kept == 0 ? CoordOf<Int>{at, zero} : CoordOf<Int>{zero, at};
  }
  detail::RoleSpread<Int> spread = detail::spreadFor(mma, role, warp);
  const detail::DimSpread<Int> &d0 = spread.dims[0], &d1 = spread.dims[1];
  int64_t e = reg % spread.atomElements;
  reg /= spread.atomElements;
  int64_t v1 = reg % d1.values;
  reg /= d1.values;
  int64_t v0 = reg % d0.values;
  reg /= d0.values;
  int64_t p1 = reg % d1.repeats(shape[1]);
  int64_t p0 = reg / d1.repeats(shape[1]);
  auto [a0, a1] = detail::atomPosition(role, lane, e);
  return {detail::place(d0, shape[0], p0, v0, a0, space),
          detail::place(d1, shape[1], p1, v1, a1, space)};
}

/// The first register (element 0) of one MMA atom of this thread: the atom
/// `atom0`-th along dim 0 and `atom1`-th along dim 1 among those of its warp
/// (0 <= atomK < values_K * repeats_K). The atom's elements follow in
/// PTX fragment order (a0..a7, b0..b3, c0..c3), so a mma.sync's operand
/// registers are reg..reg + atomElements - 1.
int64_t mmaAtomFirstRegister(const MmaParams &mma, MmaRole role,
                             llvm::ArrayRef<int64_t> shape, int64_t atom0,
                             int64_t atom1);
/// Atoms per warp along dim 0 and dim 1 (values x repeats) of a tile.
std::pair<int64_t, int64_t> mmaAtomsPerWarp(const MmaParams &mma, MmaRole role,
                                            llvm::ArrayRef<int64_t> shape);
/// The registers of an accumulator tile of `shape` that hold elements c0..c3
/// of the C fragment of atom (atomM, atomN), or nothing when that atom's
/// registers are those of an earlier atom (a dim of size 1: the tile holds
/// one atom's worth along it, see mmaAccKeptDim).
std::optional<std::array<int64_t, 4>>
mmaAccFragment(const MmaParams &mma, llvm::ArrayRef<int64_t> shape,
               int64_t atomM, int64_t atomN);

/// Register order, fastest first: elements along order[0], order[1], ...,
/// then repeats along order[0], order[1], ...
template <typename Int>
CoordOf<Int> blockedCoord(const BlockedParams &params,
                          llvm::ArrayRef<int64_t> shape, Int warp, Int lane,
                          int64_t reg, Space space = Space::Tile) {
  BlockedParams blocked = blockedForShape(params, shape);
  size_t rank = shape.size();
  llvm::SmallVector<int64_t, 2> elem(rank), rep(rank);
  CoordOf<Int> laneCoord(rank, lane), warpCoord(rank, warp);
  for (int64_t d : blocked.order) {
    laneCoord[d] = lane % blocked.threadsPerWarp[d];
    lane = lane / blocked.threadsPerWarp[d];
    warpCoord[d] = warp % blocked.warpsPerCTA[d];
    warp = warp / blocked.warpsPerCTA[d];
    elem[d] = reg % blocked.sizePerThread[d];
    reg /= blocked.sizePerThread[d];
  }
  auto spread = [&](size_t d) {
    return detail::DimSpread<Int>{blocked.sizePerThread[d],
                                  blocked.threadsPerWarp[d],
                                  blocked.warpsPerCTA[d], warpCoord[d]};
  };
  for (int64_t d : blocked.order) {
    int64_t repeats = spread(d).repeats(shape[d]);
    rep[d] = reg % repeats;
    reg /= repeats;
  }
  CoordOf<Int> coord;
  for (size_t d = 0; d < rank; ++d) {
    detail::DimSpread<Int> s = spread(d);
    // The lane's position counts in blocks of sizePerThread: it plays the
    // role the atom's values play in an MMA layout.
    coord.push_back(
        detail::wrap(s.warpCoord * s.warpExtent() + laneCoord[d] * s.atom +
                         (rep[d] * s.step() + elem[d]),
                     shape[d], s.step(), rep[d], space));
  }
  return coord;
}

/// A blocked tile reduced along `dim`.
template <typename Int>
CoordOf<Int> blockedSliceCoord(const BlockedParams &blocked, int64_t dim,
                               llvm::ArrayRef<int64_t> shape, Int warp,
                               Int lane, int64_t reg,
                               Space space = Space::Tile) {
  llvm::SmallVector<int64_t, 2> parentShape(shape);
  parentShape.insert(parentShape.begin() + dim, 1);
  CoordOf<Int> coord = blockedCoord(blockedSliceParent(blocked, dim),
                                    parentShape, warp, lane, reg, space);
  coord.erase(coord.begin() + dim);
  return coord;
}

//===----------------------------------------------------------------------===//
// Shared memory: swizzled tiles, cp.async chunks, ldmatrix
//===----------------------------------------------------------------------===//

/// A tile in shared memory (one slot of a !tile.shared): rows of `rowBytes`
/// (whole 16-byte chunks); chunk c of row r is stored at chunk
/// c ^ ((r / perPhase) % maxPhase) of that row, so that the same chunk of
/// eight consecutive rows lands in eight different groups of four banks.
/// With `blockBytes` > 0 the rows are cut into column blocks of that many
/// bytes, stored one after another (`rows` rows each, row-major, swizzled
/// as above within the block): wgmma's operand layout for rows longer than
/// its swizzle span of 32, 64 or 128 bytes (!tile.shared's block_cols).
struct SwizzleParams {
  int64_t rowBytes = 16, elementBytes = 2, perPhase = 1, maxPhase = 1;
  int64_t blockBytes = 0, rows = 0;
};

/// Byte offset of element (row, col) of a swizzled tile.
template <typename Int>
Int swizzledOffset(const SwizzleParams &s, Int row, Int col) {
  Int bytes = col * s.elementBytes;
  Int phase = row / s.perPhase % s.maxPhase;
  if (s.blockBytes == 0)
    return row * s.rowBytes + ((bytes / 16) ^ phase) * 16 + bytes % 16;
  // The phase is below blockBytes / 16 (a power of two), so XORing the
  // chunk index of the whole row keeps the block: block b's chunks move
  // from b * blockBytes to b * rows * blockBytes.
  return row * s.blockBytes + bytes / s.blockBytes * ((s.rows - 1) * s.blockBytes) +
         ((bytes / 16) ^ phase) * 16 + bytes % 16;
}

/// The cp.async assignment of a tile's 16-byte chunks (`chunksPerRow` per
/// row) to `numThreads` threads: chunk `i` of thread `tid` is chunk
/// i * numThreads + tid in row-major order, so that consecutive threads copy
/// consecutive chunks of a row (coalesced reads, and the eight chunks of one
/// 8-lane phase of a 16-byte store are eight distinct swizzled chunks of one
/// 128-byte line). Returns (row, chunk). When one of chunksPerRow and
/// numThreads divides the other the thread part and the `i` part add up
/// without carries, so generated code computes the thread part once and
/// adds constants.
template <typename Int>
CoordOf<Int> copyChunkCoord(int64_t chunksPerRow, int64_t numThreads, Int tid,
                            int64_t i) {
  if (numThreads % chunksPerRow == 0 || chunksPerRow % numThreads == 0)
    return {tid / chunksPerRow + (i * numThreads / chunksPerRow),
            tid % chunksPerRow + (i * numThreads % chunksPerRow)};
  Int id = tid + i * numThreads;
  return {id / chunksPerRow, id % chunksPerRow};
}

/// The chunks of a gathered copy (rows from runtime indices, each row a run
/// of `chunksPerRow` 16-byte chunks with its own address) spread over
/// `numWarps` warps as a blocked layout over the [rows, chunksPerRow] grid:
/// lanes along a row (the largest power of two dividing chunksPerRow, at most
/// a warp), the rest of a warp and the warps down the rows. Every chunk is
/// held by exactly one thread, and the layout's slice along dim 1 gives each
/// thread the rows it copies, so that it can hold their indices. For a power
/// of two chunksPerRow it is copyChunkCoord's assignment. Nothing when the
/// rows do not take the warps' rows whole.
std::optional<BlockedParams> gatherChunkParams(int64_t rows,
                                               int64_t chunksPerRow,
                                               int64_t numWarps);

/// How ldmatrix.x{1,2,4}{,.trans}.m8n8.b16 reads a tile from shared memory
/// into the registers of a distributed layout. The registers of each thread
/// are taken in consecutive pairs (pair p = registers 2p, 2p + 1, one 32-bit
/// register); every pair must be one 8x8 matrix of the stored tile at
/// (r0, c0), both multiples of 8, held as ldmatrix leaves it in lane l
/// (e = 0, 1 the half):
///   non-trans: (r0 + l / 4, c0 + 2 (l % 4) + e)
///   .trans:    (r0 + 2 (l % 4) + e, c0 + l / 4)
/// with the same mode for every pair, lane and warp. Consecutive pairs are
/// read four at a time (x4; x2 and x1 for the rest, and where the pairs of
/// a group do not lie at the same distances in every warp, as in a padded
/// layout's wrapped step); lane l supplies the address of row l % 8 of the
/// load's matrix l / 8, stored (r0 + l % 8, c0).
struct LdMatrixPlan {
  bool trans = false;
  /// The pairs each ldmatrix reads, in order (1, 2 or 4 consecutive ones).
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>, 16> loads;
  /// Stored origin (r0, c0) of every pair's matrix: [warp][pair].
  std::vector<std::vector<Coord>> origins;
  /// Origin of matrix m of a load minus that of its matrix 0, the same in
  /// every warp: [load][m].
  std::vector<llvm::SmallVector<Coord, 4>> deltas;
};

/// The layout as a function of (warp, lane, register) -> stored coordinate.
using RegisterCoordFn =
    llvm::function_ref<Coord(int64_t warp, int64_t lane, int64_t reg)>;

/// The plan for a layout of `numRegs` 16-bit registers per thread, or
/// nothing when some pair is not an 8x8 matrix as above (the registers must
/// then be read one by one).
std::optional<LdMatrixPlan> planLdMatrix(int64_t numRegs, int64_t numWarps,
                                         RegisterCoordFn coord);

/// The stored coordinate whose address `lane` supplies to load `load`, given
/// the origin of the load's matrix 0 in the lane's warp (the layout at lane
/// 0, register 2 * loads[load][0]).
template <typename Int>
CoordOf<Int> ldmatrixRowCoord(const LdMatrixPlan &plan, int64_t load,
                              const CoordOf<Int> &origin, Int lane) {
  const auto &d = plan.deltas[load];
  int64_t num = d.size();
  Int m = lane / 8; // < 4: x2 reads lanes 0-15, x1 lanes 0-7
  if (num < 4)
    m = m % num;
  // delta[m] for m = 2 b1 + b0, written with the bits of m (no lookup).
  CoordOf<Int> coord = {origin[0] + lane % 8, origin[1]};
  if (num == 1)
    return coord;
  Int b0 = num == 2 ? m : m % 2;
  for (int dim = 0; dim < 2; ++dim) {
    coord[dim] = coord[dim] + b0 * d[1][dim];
    if (num == 4) {
      Int b1 = m / 2;
      coord[dim] = coord[dim] + b1 * d[2][dim] +
                   b0 * (b1 * (d[3][dim] - d[2][dim] - d[1][dim]));
    }
  }
  return coord;
}

/// Offsets `to[t] = (from[t] ^ xorMask) + add` for every t, with xorMask a
/// multiple of 16 below `xorLimit` (16 * max_phase: the swizzled chunk
/// bits). Two accesses of a swizzled tile related this way share one
/// per-thread address: the second is one xor and an immediate offset away.
struct XorAdd {
  int64_t xorMask = 0, add = 0;
};
std::optional<XorAdd> relateByXorAdd(llvm::ArrayRef<int64_t> from,
                                     llvm::ArrayRef<int64_t> to,
                                     int64_t xorLimit);

} // namespace flash::tile::layout

#endif // FLASH_DIALECT_TILE_LAYOUTFUNCTIONS_H

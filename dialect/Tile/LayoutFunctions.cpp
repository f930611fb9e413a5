//===- LayoutFunctions.cpp - layout checks, register counts, ldmatrix plans ===//
#include "flashc/Dialect/Tile/LayoutFunctions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/raw_ostream.h"

using namespace flash::tile::layout;
using detail::DimSpread;
using llvm::ArrayRef;

namespace {
/// Sizes the layouts take: any positive size (a dynamic dim is negative).
std::string checkSizes(ArrayRef<int64_t> shape) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] <= 0)
      return "dim " + std::to_string(d) + " has no static positive size";
  return {};
}

std::string checkRank(const char *what, ArrayRef<int64_t> shape,
                      size_t rank) {
  if (shape.size() == rank)
    return checkSizes(shape);
  return std::string(what) + " distributes " + std::to_string(rank) +
         "-D tiles, got rank " + std::to_string(shape.size());
}
} // namespace

std::string flash::tile::layout::checkMmaShape(const MmaParams &mma,
                                               MmaRole role,
                                               ArrayRef<int64_t> shape) {
  return checkRank("an MMA layout", shape, 2);
}

int64_t flash::tile::layout::mmaNumRegisters(const MmaParams &mma, MmaRole role,
                                             ArrayRef<int64_t> shape) {
  if (std::optional<int64_t> kept = mmaAccKeptDim(role, shape))
    return mmaSliceNumRegisters(mma, 1 - *kept, shape.slice(*kept, 1));
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  int64_t count = spread.atomElements;
  for (int dim = 0; dim < 2; ++dim)
    count *= spread.dims[dim].values * spread.dims[dim].repeats(shape[dim]);
  return count;
}

Shape flash::tile::layout::mmaPaddedShape(const MmaParams &mma, MmaRole role,
                                          ArrayRef<int64_t> shape) {
  if (std::optional<int64_t> kept = mmaAccKeptDim(role, shape)) {
    Shape padded = {1, 1};
    padded[*kept] =
        mmaSlicePaddedShape(mma, 1 - *kept, shape.slice(*kept, 1))[0];
    return padded;
  }
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  return {spread.dims[0].padded(shape[0]), spread.dims[1].padded(shape[1])};
}

bool flash::tile::layout::mmaHoldsWhole(const MmaParams &mma, MmaRole role,
                                        ArrayRef<int64_t> shape) {
  if (!checkMmaShape(mma, role, shape).empty())
    return false;
  if (std::optional<int64_t> kept = mmaAccKeptDim(role, shape))
    return detail::spreadFor<int64_t>(mma, role, 0)
        .dims[*kept]
        .holdsWhole(shape[*kept]);
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  return spread.dims[0].holdsWhole(shape[0]) &&
         spread.dims[1].holdsWhole(shape[1]);
}

std::pair<int64_t, int64_t>
flash::tile::layout::mmaAtomsPerWarp(const MmaParams &mma, MmaRole role,
                                     ArrayRef<int64_t> shape) {
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  return {spread.dims[0].values * spread.dims[0].repeats(shape[0]),
          spread.dims[1].values * spread.dims[1].repeats(shape[1])};
}

// Inverse of the register decomposition in mmaCoord.
int64_t flash::tile::layout::mmaAtomFirstRegister(const MmaParams &mma,
                                                  MmaRole role,
                                                  ArrayRef<int64_t> shape,
                                                  int64_t atom0, int64_t atom1) {
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  const DimSpread<int64_t> &d0 = spread.dims[0], &d1 = spread.dims[1];
  int64_t v0 = atom0 % d0.values, p0 = atom0 / d0.values;
  int64_t v1 = atom1 % d1.values, p1 = atom1 / d1.values;
  int64_t index = ((p0 * d1.repeats(shape[1]) + p1) * d0.values + v0) *
                      d1.values + v1;
  return index * spread.atomElements;
}

std::optional<std::array<int64_t, 4>>
flash::tile::layout::mmaAccFragment(const MmaParams &mma,
                                    ArrayRef<int64_t> shape, int64_t atomM,
                                    int64_t atomN) {
  std::optional<int64_t> kept = mmaAccKeptDim(MmaRole::Acc, shape);
  std::array<int64_t, 4> regs;
  if (!kept) {
    int64_t first =
        mmaAtomFirstRegister(mma, MmaRole::Acc, shape, atomM, atomN);
    for (int64_t i = 0; i < 4; ++i)
      regs[i] = first + i;
    return regs;
  }
  // The slice register order (mmaSliceCoord): position a in the atom, then
  // the atom along the kept dim. Along the size-1 dim every atom holds the
  // same registers: only the first is distinct.
  if ((*kept == 1 ? atomM : atomN) != 0)
    return std::nullopt;
  int64_t atom = *kept == 1 ? atomN : atomM;
  for (int64_t i = 0; i < 4; ++i) // c_i: row g + 8 (i / 2), col 2q + i % 2
    regs[i] = (*kept == 1 ? i % 2 : i / 2) + 2 * atom;
  return regs;
}

std::string flash::tile::layout::checkMmaSliceShape(const MmaParams &mma,
                                                    int64_t dim,
                                                    ArrayRef<int64_t> shape) {
  if (dim != 0 && dim != 1)
    return "a slice of an MMA layout removes dim 0 or 1, got " +
           std::to_string(dim);
  return checkRank("a slice of an MMA layout", shape, 1);
}

int64_t flash::tile::layout::mmaSliceNumRegisters(const MmaParams &mma,
                                                  int64_t dim,
                                                  ArrayRef<int64_t> shape) {
  const DimSpread<int64_t> &kept =
      detail::spreadFor<int64_t>(mma, MmaRole::Acc, 0).dims[1 - dim];
  // Two positions per atom along either dim: rows g and g + 8, or columns
  // 2q and 2q + 1.
  return 2 * kept.values * kept.repeats(shape[0]);
}

Shape flash::tile::layout::mmaSlicePaddedShape(const MmaParams &mma,
                                               int64_t dim,
                                               ArrayRef<int64_t> shape) {
  return {detail::spreadFor<int64_t>(mma, MmaRole::Acc, 0)
              .dims[1 - dim]
              .padded(shape[0])};
}

//===----------------------------------------------------------------------===//
// Blocked
//===----------------------------------------------------------------------===//

int64_t BlockedParams::numWarps() const {
  int64_t count = 1;
  for (int64_t w : warpsPerCTA)
    count *= w;
  return count;
}

std::string flash::tile::layout::checkBlocked(const BlockedParams &blocked) {
  size_t rank = blocked.order.size();
  if (rank == 0 || blocked.sizePerThread.size() != rank ||
      blocked.threadsPerWarp.size() != rank ||
      blocked.warpsPerCTA.size() != rank)
    return "sizePerThread, threadsPerWarp, warpsPerCTA and order must have "
           "the same non-zero length";
  int64_t lanes = 1;
  llvm::SmallVector<bool, 4> seen(rank, false);
  for (size_t d = 0; d < rank; ++d) {
    if (blocked.sizePerThread[d] <= 0 || blocked.threadsPerWarp[d] <= 0 ||
        blocked.warpsPerCTA[d] <= 0)
      return "sizePerThread, threadsPerWarp and warpsPerCTA must be positive";
    lanes *= blocked.threadsPerWarp[d];
    int64_t o = blocked.order[d];
    if (o < 0 || o >= static_cast<int64_t>(rank) || seen[o])
      return "order must be a permutation of the dims";
    seen[o] = true;
  }
  if (lanes != kWarpSize)
    return "threadsPerWarp must multiply to 32, got " + std::to_string(lanes);
  return {};
}

BlockedParams flash::tile::layout::blockedForShape(const BlockedParams &blocked,
                                                  ArrayRef<int64_t> shape) {
  BlockedParams effective = blocked;
  for (size_t d = 0; d < shape.size() && d < effective.sizePerThread.size(); ++d)
    if (shape[d] == 1)
      effective.sizePerThread[d] = 1;
  return effective;
}

std::string flash::tile::layout::checkBlockedShape(const BlockedParams &params,
                                                   ArrayRef<int64_t> shape) {
  if (shape.size() != params.order.size())
    return "the blocked layout has rank " +
           std::to_string(params.order.size()) + " but the tile has rank " +
           std::to_string(shape.size());
  return checkSizes(shape);
}

namespace {
DimSpread<int64_t> blockedSpread(const BlockedParams &blocked, size_t d) {
  return {blocked.sizePerThread[d], blocked.threadsPerWarp[d],
          blocked.warpsPerCTA[d], 0};
}
} // namespace

int64_t flash::tile::layout::blockedNumRegisters(const BlockedParams &params,
                                                 ArrayRef<int64_t> shape) {
  BlockedParams blocked = blockedForShape(params, shape);
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    count *= blocked.sizePerThread[d] * blockedSpread(blocked, d).repeats(shape[d]);
  return count;
}

Shape flash::tile::layout::blockedPaddedShape(const BlockedParams &params,
                                              ArrayRef<int64_t> shape) {
  BlockedParams blocked = blockedForShape(params, shape);
  Shape padded;
  for (size_t d = 0; d < shape.size(); ++d)
    padded.push_back(blockedSpread(blocked, d).padded(shape[d]));
  return padded;
}

BlockedParams flash::tile::layout::blockedSliceParent(const BlockedParams &blocked,
                                                      int64_t dim) {
  BlockedParams parent = blocked;
  parent.sizePerThread[dim] = 1;
  return parent;
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

std::optional<BlockedParams>
flash::tile::layout::gatherChunkParams(int64_t rows, int64_t chunksPerRow,
                                       int64_t numWarps) {
  if (rows <= 0 || chunksPerRow <= 0 || numWarps <= 0)
    return std::nullopt;
  int64_t along = std::min<int64_t>(kWarpSize, chunksPerRow & -chunksPerRow);
  int64_t down = kWarpSize / along;
  // Wrapping around the rows would copy a chunk twice.
  if (rows % (down * numWarps) != 0)
    return std::nullopt;
  return BlockedParams{{1, 1}, {down, along}, {numWarps, 1}, {1, 0}};
}

namespace {
/// Whether pair `pair` of (warp, every lane) is an 8x8 matrix in the given
/// mode; its origin when it is.
std::optional<Coord> pairMatrixOrigin(RegisterCoordFn coord, int64_t warp,
                                      int64_t pair, bool trans) {
  Coord origin = coord(warp, 0, 2 * pair);
  if (origin[0] % 8 != 0 || origin[1] % 8 != 0)
    return std::nullopt;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t e = 0; e < 2; ++e) {
      int64_t across = 2 * (lane % 4) + e, down = lane / 4;
      Coord expected =
          trans ? Coord{origin[0] + across, origin[1] + down}
                : Coord{origin[0] + down, origin[1] + across};
      if (coord(warp, lane, 2 * pair + e) != expected)
        return std::nullopt;
    }
  return origin;
}
} // namespace

std::optional<LdMatrixPlan>
flash::tile::layout::planLdMatrix(int64_t numRegs, int64_t numWarps,
                                  RegisterCoordFn coord) {
  if (numRegs <= 0 || numRegs % 2 != 0)
    return std::nullopt;
  int64_t pairs = numRegs / 2;
  for (bool trans : {false, true}) {
    LdMatrixPlan plan;
    plan.trans = trans;
    plan.origins.assign(numWarps, {});
    bool ok = true;
    for (int64_t w = 0; ok && w < numWarps; ++w)
      for (int64_t p = 0; ok && p < pairs; ++p) {
        std::optional<Coord> origin = pairMatrixOrigin(coord, w, p, trans);
        ok = origin.has_value();
        if (ok)
          plan.origins[w].push_back(*origin);
      }
    if (!ok)
      continue;
    // Whether pair first + m lies as far from pair `first` in every warp:
    // one ldmatrix takes one address per lane, computed alike in each warp.
    auto sameDelta = [&](int64_t first, int64_t m) {
      const Coord &o = plan.origins[0][first + m], &o0 = plan.origins[0][first];
      for (int64_t w = 1; w < numWarps; ++w) {
        const Coord &ow = plan.origins[w][first + m], &ow0 = plan.origins[w][first];
        if (ow[0] - ow0[0] != o[0] - o0[0] || ow[1] - ow0[1] != o[1] - o0[1])
          return false;
      }
      return true;
    };
    for (int64_t first = 0; first < pairs;) {
      // The widest load whose matrices keep their distances in every warp
      // (a padded layout's wrapped step puts some warps' matrices elsewhere).
      int64_t num = 1;
      for (int64_t wide : {4, 2})
        if (num == 1 && pairs - first >= wide &&
            llvm::all_of(llvm::seq<int64_t>(1, wide),
                         [&](int64_t m) { return sameDelta(first, m); }))
          num = wide;
      auto &load = plan.loads.emplace_back();
      llvm::SmallVector<Coord, 4> deltas;
      for (int64_t m = 0; m < num; ++m) {
        load.push_back(first + m);
        const Coord &o = plan.origins[0][first + m], &o0 = plan.origins[0][first];
        deltas.push_back({o[0] - o0[0], o[1] - o0[1]});
      }
      plan.deltas.push_back(deltas);
      first += num;
    }
    return plan;
  }
  return std::nullopt;
}

std::optional<XorAdd> flash::tile::layout::relateByXorAdd(ArrayRef<int64_t> from,
                                                          ArrayRef<int64_t> to,
                                                          int64_t xorLimit) {
  if (from.empty() || from.size() != to.size())
    return std::nullopt;
  auto holds = [&](XorAdd r) {
    for (size_t t = 0; t < from.size(); ++t)
      if ((from[t] ^ r.xorMask) + r.add != to[t])
        return false;
    return true;
  };
  // A plain offset first; else the chunk bits that differ in the first pair.
  int64_t mask = (from[0] ^ to[0]) & (xorLimit - 1) & ~int64_t(15);
  for (int64_t x : {int64_t(0), mask}) {
    XorAdd r{x, to[0] - (from[0] ^ x)};
    if (holds(r))
      return r;
  }
  return std::nullopt;
}

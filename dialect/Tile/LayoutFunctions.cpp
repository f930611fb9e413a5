//===- LayoutFunctions.cpp - layout checks, register counts, ldmatrix plans ===//
#include "flashc/Dialect/Tile/LayoutFunctions.h"

#include "llvm/Support/raw_ostream.h"

using namespace flash::tile::layout;
using detail::DimSpread;
using llvm::ArrayRef;

namespace {
/// A tile dim is distributable when each warp's registers cover distinct
/// elements (size is a multiple of the warp's extent) and steps either tile
/// the dim or fit a whole number of times into one step (broadcast).
std::string checkDim(const char *what, int64_t size,
                     const DimSpread<int64_t> &dim) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (size <= 0 || size % dim.warpExtent() != 0)
    os << what << " size " << size << " must be a positive multiple of "
       << dim.warpExtent() << " (atom " << dim.atom << " x " << dim.values
       << " values per warp)";
  else if (size % dim.step() != 0 && dim.step() % size != 0)
    os << what << " size " << size << " and the layout's step " << dim.step()
       << " must divide one another";
  return error;
}

const char *dimName(MmaRole role, int dim) {
  static const char *names[3][2] = {{"M", "N"}, {"M", "K"}, {"K", "N"}};
  return names[static_cast<int>(role)][dim];
}
} // namespace

std::string flash::tile::layout::checkMmaShape(const MmaParams &mma,
                                               MmaRole role,
                                               ArrayRef<int64_t> shape) {
  if (shape.size() != 2)
    return "an MMA layout distributes 2-D tiles, got rank " +
           std::to_string(shape.size());
  if (role == MmaRole::Acc && shape[0] == 1 && shape[1] != 1)
    return checkMmaSliceShape(mma, 0, shape.slice(1, 1));
  if (role == MmaRole::Acc && shape[1] == 1 && shape[0] != 1)
    return checkMmaSliceShape(mma, 1, shape.slice(0, 1));
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  for (int dim = 0; dim < 2; ++dim) {
    std::string error = checkDim(dimName(role, dim), shape[dim], spread.dims[dim]);
    if (!error.empty())
      return error;
  }
  return {};
}

int64_t flash::tile::layout::mmaNumRegisters(const MmaParams &mma, MmaRole role,
                                             ArrayRef<int64_t> shape) {
  if (role == MmaRole::Acc && shape[0] == 1)
    return mmaSliceNumRegisters(mma, 0, shape.slice(1, 1));
  if (role == MmaRole::Acc && shape[1] == 1)
    return mmaSliceNumRegisters(mma, 1, shape.slice(0, 1));
  auto spread = detail::spreadFor<int64_t>(mma, role, 0);
  int64_t count = spread.atomElements;
  for (int dim = 0; dim < 2; ++dim)
    count *= spread.dims[dim].values * spread.dims[dim].repeats(shape[dim]);
  return count;
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

std::string flash::tile::layout::checkMmaSliceShape(const MmaParams &mma,
                                                    int64_t dim,
                                                    ArrayRef<int64_t> shape) {
  if (dim != 0 && dim != 1)
    return "a slice of an MMA layout removes dim 0 or 1, got " +
           std::to_string(dim);
  if (shape.size() != 1)
    return "a slice of an MMA layout distributes 1-D tiles, got rank " +
           std::to_string(shape.size());
  auto spread = detail::spreadFor<int64_t>(mma, MmaRole::Acc, 0);
  int kept = 1 - dim;
  return checkDim(dimName(MmaRole::Acc, kept), shape[0], spread.dims[kept]);
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
  BlockedParams blocked = blockedForShape(params, shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    // A thread's elements along d are contiguous: sizePerThread must divide
    // the dim; lanes and warps may wrap around smaller dims (broadcast).
    int64_t size = shape[d], perThread = blocked.sizePerThread[d];
    int64_t step = perThread * blocked.threadsPerWarp[d] * blocked.warpsPerCTA[d];
    if (size <= 0 || size % perThread != 0 ||
        (size % step != 0 && step % size != 0))
      return "dim " + std::to_string(d) + " of size " + std::to_string(size) +
             " does not fit the blocked layout (" + std::to_string(perThread) +
             " per thread, " + std::to_string(step) + " per step)";
  }
  return {};
}

int64_t flash::tile::layout::blockedNumRegisters(const BlockedParams &params,
                                                 ArrayRef<int64_t> shape) {
  BlockedParams blocked = blockedForShape(params, shape);
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t step = blocked.sizePerThread[d] * blocked.threadsPerWarp[d] *
                   blocked.warpsPerCTA[d];
    count *= blocked.sizePerThread[d] * std::max<int64_t>(1, shape[d] / step);
  }
  return count;
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
    for (int64_t first = 0; first < pairs;) {
      int64_t num = pairs - first >= 4 ? 4 : pairs - first >= 2 ? 2 : 1;
      auto &load = plan.loads.emplace_back();
      llvm::SmallVector<Coord, 4> deltas;
      for (int64_t m = 0; m < num; ++m) {
        load.push_back(first + m);
        const Coord &o = plan.origins[0][first + m], &o0 = plan.origins[0][first];
        deltas.push_back({o[0] - o0[0], o[1] - o0[1]});
        for (int64_t w = 1; w < numWarps; ++w) {
          const Coord &ow = plan.origins[w][first + m],
                      &ow0 = plan.origins[w][first];
          if (ow[0] - ow0[0] != deltas.back()[0] ||
              ow[1] - ow0[1] != deltas.back()[1])
            return std::nullopt;
        }
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

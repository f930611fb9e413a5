//===- WarpOps.cpp - Exact semantics of PTX warp-level operations ---------===//
//
// See WarpOps.h; each function's comment there states the PTX rule it
// implements.
//
//===----------------------------------------------------------------------===//
#include "flashc/Emulator/WarpOps.h"

#include "flashc/Runtime/Float16.h"

#include <algorithm>
#include <cstdio>

namespace flash::emu {

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool laneActive(uint32_t mask, int lane) { return (mask >> lane) & 1u; }

/// Error naming the first lane of `required` missing from `activeMask`.
Status requireLanes(const char *op, uint32_t required, uint32_t activeMask) {
  uint32_t missing = required & ~activeMask;
  if (!missing)
    return Status::success();
  int lane = 0;
  while (!laneActive(missing, lane))
    ++lane;
  return Status::failure(std::string(op) +
                         ": warp-wide (.aligned) instruction executed with "
                         "lane " +
                         std::to_string(lane) + " inactive (activeMask " +
                         hex(activeMask) + ")");
}

} // namespace

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

double bits16ToDouble(uint16_t bits, ElementType type) {
  return type == ElementType::F16 ? halfBitsToDouble(bits)
                                  : bf16BitsToDouble(bits);
}

uint16_t doubleToBits16(double value, ElementType type) {
  return type == ElementType::F16 ? doubleToHalfBits(value)
                                  : doubleToBF16Bits(value);
}

// float -> double is exact, so rounding the double once is cvt.rn from f32.
uint32_t cvtRnF16x2F32(float a, float b) {
  return pack16x2(doubleToHalfBits(b), doubleToHalfBits(a));
}

uint32_t cvtRnBF16x2F32(float a, float b) {
  return pack16x2(doubleToBF16Bits(b), doubleToBF16Bits(a));
}

// Every f16/bf16 value is exactly representable as f32.
std::pair<float, float> unpack16x2(uint32_t v, ElementType type) {
  return {static_cast<float>(bits16ToDouble(low16(v), type)),
          static_cast<float>(bits16ToDouble(high16(v), type))};
}

//===----------------------------------------------------------------------===//
// mma.sync m16n8k16
//===----------------------------------------------------------------------===//

Result<MmaAccFragment> mmaM16N8K16(const MmaAFragment &a,
                                   const MmaBFragment &b,
                                   const MmaAccFragment &c, ElementType type,
                                   uint32_t activeMask) {
  if (Status s = requireLanes("mma.sync.m16n8k16", kFullMask, activeMask);
      !s.ok())
    return s;

  double A[16][16], B[16][8];
  float C[16][8];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const int g = lane / 4, q = lane % 4;
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h) {
        uint16_t bits = h ? high16(a[r][lane]) : low16(a[r][lane]);
        A[g + 8 * (r % 2)][2 * q + h + 8 * (r / 2)] = bits16ToDouble(bits, type);
      }
    for (int r = 0; r < 2; ++r)
      for (int h = 0; h < 2; ++h) {
        uint16_t bits = h ? high16(b[r][lane]) : low16(b[r][lane]);
        B[2 * q + h + 8 * r][g] = bits16ToDouble(bits, type);
      }
    for (int i = 0; i < 4; ++i)
      C[g + 8 * (i / 2)][2 * q + i % 2] = c[i][lane];
  }
  float D[16][8];
  mmaM16N8K16Values(A, B, C, D);
  MmaAccFragment d;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const int g = lane / 4, q = lane % 4;
    for (int i = 0; i < 4; ++i)
      d[i][lane] = D[g + 8 * (i / 2)][2 * q + i % 2];
  }
  return d;
}

// Wider vector units where the CPU has them; the file is compiled without
// fused multiply-adds (CMakeLists.txt), so each lane computes exactly what
// the scalar code does, NaN propagation included.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#endif
void mmaM16N8K16Values(const double (&A)[16][16], const double (&B)[16][8],
                       const float (&C)[16][8], float (&D)[16][8]) {
  // A row's eight dot products side by side, one vector lane each; each is
  // still summed from 0 in k order, then C added, then rounded once.
  typedef double Double8 __attribute__((vector_size(8 * sizeof(double))));
  for (int row = 0; row < 16; ++row) {
    Double8 sum = {};
    for (int k = 0; k < 16; ++k) {
      Double8 b;
      std::memcpy(&b, B[k], sizeof b);
      sum += A[row][k] * b; // each product exact in double
    }
    for (int col = 0; col < 8; ++col)
      D[row][col] = static_cast<float>(sum[col] + C[row][col]);
  }
}

//===----------------------------------------------------------------------===//
// SharedMemory
//===----------------------------------------------------------------------===//

SharedMemory::SharedMemory(uint32_t sizeBytes)
    : bytes_(sizeBytes, 0), written_(sizeBytes, 0) {}

Status SharedMemory::checkBounds(uint32_t address, uint32_t bytes) const {
  if (uint64_t(address) + bytes > bytes_.size())
    return Status::failure("shared access [" + hex(address) + ", " +
                           hex(uint64_t(address) + bytes) +
                           ") out of bounds (shared size " +
                           hex(bytes_.size()) + ")");
  return Status::success();
}

Status SharedMemory::checkAligned(uint32_t address, uint32_t bytes) const {
  if (bytes && address % bytes)
    return Status::failure("shared access of " + std::to_string(bytes) +
                           " bytes at " + hex(address) + " is misaligned");
  return Status::success();
}

Status SharedMemory::write(uint32_t address, const void *src, uint32_t bytes) {
  if (Status s = checkBounds(address, bytes); !s.ok())
    return s;
  if (bytes) {
    std::memcpy(bytes_.data() + address, src, bytes);
    std::fill_n(written_.begin() + address, bytes, uint8_t(1));
  }
  return Status::success();
}

Status SharedMemory::read(uint32_t address, void *dst, uint32_t bytes) const {
  if (Status s = checkBounds(address, bytes); !s.ok())
    return s;
  for (uint32_t i = 0; i < bytes; ++i)
    if (!written_[address + i])
      return Status::failure("shared read of uninitialised byte " +
                             hex(address + i) + " (access [" + hex(address) +
                             ", " + hex(uint64_t(address) + bytes) + "))");
  if (bytes)
    std::memcpy(dst, bytes_.data() + address, bytes);
  return Status::success();
}

bool SharedMemory::isWritten(uint32_t address) const {
  return address < written_.size() && written_[address];
}

bool SharedMemory::allWritten(uint32_t address, uint32_t bytes) const {
  if (!checkBounds(address, bytes).ok())
    return false;
  return std::all_of(written_.begin() + address,
                     written_.begin() + address + bytes,
                     [](uint8_t w) { return w != 0; });
}

void SharedMemory::invalidate(uint32_t address, uint32_t bytes) {
  uint64_t end = std::min<uint64_t>(uint64_t(address) + bytes, written_.size());
  for (uint64_t i = address; i < end; ++i)
    written_[i] = 0;
}

uint8_t SharedMemory::peekByte(uint32_t address) const {
  return address < bytes_.size() ? bytes_[address] : 0;
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

Result<std::vector<LaneValues>> ldmatrix(const SharedMemory &smem,
                                         const LaneValues &addresses, int num,
                                         bool trans, uint32_t activeMask) {
  std::array<LaneValues, 4> regs;
  if (Status s = ldmatrixInto(smem, addresses, num, trans, activeMask, regs);
      !s.ok())
    return s;
  return std::vector<LaneValues>(regs.begin(), regs.begin() + num);
}

Status ldmatrixInto(const SharedMemory &smem, const LaneValues &addresses,
                    int num, bool trans, uint32_t activeMask,
                    std::array<LaneValues, 4> &out) {
  // Messages are built only on failure: this runs for every ldmatrix.
  auto op = [&] {
    return std::string("ldmatrix.sync.aligned.m8n8.x") + std::to_string(num) +
           (trans ? ".trans" : "") + ".shared.b16";
  };
  if (num != 1 && num != 2 && num != 4)
    return Status::failure("ldmatrix: .num must be x1, x2 or x4, got " +
                           std::to_string(num));
  if (activeMask != kFullMask)
    return requireLanes(op().c_str(), kFullMask, activeMask);

  // rows[m][r][c]: element c of row r of matrix m, read by lane 8m + r.
  uint16_t rows[4][8][8];
  for (int m = 0; m < num; ++m)
    for (int r = 0; r < 8; ++r) {
      const int lane = 8 * m + r;
      const uint32_t addr = addresses[lane];
      auto who = [&] {
        return op() + ": lane " + std::to_string(lane) + " (row " +
               std::to_string(r) + " of matrix " + std::to_string(m) +
               ") address " + hex(addr);
      };
      if (addr % 16)
        return Status::failure(who() + " is not 16-byte aligned");
      if (Status s = smem.checkBounds(addr, 16); !s.ok())
        return Status::failure(who() + ": " + s.error());
      uint8_t raw[16];
      if (Status s = smem.read(addr, raw, 16); !s.ok())
        return Status::failure(who() + ": " + s.error());
      for (int c = 0; c < 8; ++c)
        rows[m][r][c] = static_cast<uint16_t>(raw[2 * c] | (raw[2 * c + 1] << 8));
    }

  for (int m = 0; m < num; ++m)
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int g = lane / 4, q = lane % 4;
      out[m][lane] = trans ? pack16x2(rows[m][2 * q][g], rows[m][2 * q + 1][g])
                           : pack16x2(rows[m][g][2 * q], rows[m][g][2 * q + 1]);
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// shfl.sync
//===----------------------------------------------------------------------===//

Result<ShflResult> shfl(ShflMode mode, const LaneValues &a,
                        const LaneValues &b, uint32_t c, uint32_t memberMask,
                        uint32_t activeMask) {
  static const char *names[] = {"bfly", "up", "down", "idx"};
  auto op = [&] {
    return std::string("shfl.sync.") + names[static_cast<int>(mode)] + ".b32";
  };
  if (uint32_t stray = activeMask & ~memberMask) {
    int lane = 0;
    while (!laneActive(stray, lane))
      ++lane;
    return Status::failure(op() + ": lane " + std::to_string(lane) +
                           " executes it but is not in membermask " +
                           hex(memberMask));
  }
  const int cval = static_cast<int>(c & 0x1f);
  const int segmask = static_cast<int>((c >> 8) & 0x1f);
  ShflResult res;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    if (!laneActive(activeMask, lane))
      continue;
    const int bval = static_cast<int>(b[lane] & 0x1f);
    const int maxLane = (lane & segmask) | (cval & ~segmask);
    const int minLane = lane & segmask;
    int j = lane;
    bool valid = false;
    switch (mode) {
    case ShflMode::Up:
      j = lane - bval;
      valid = j >= maxLane;
      break;
    case ShflMode::Down:
      j = lane + bval;
      valid = j <= maxLane;
      break;
    case ShflMode::Bfly:
      j = lane ^ bval;
      valid = j <= maxLane;
      break;
    case ShflMode::Idx:
      j = minLane | (bval & ~segmask);
      valid = j <= maxLane;
      break;
    }
    if (!valid)
      j = lane;
    if (!laneActive(memberMask, j) || !laneActive(activeMask, j))
      return Status::failure(
          op() + ": lane " + std::to_string(lane) + " reads lane " +
          std::to_string(j) + ", which is " +
          (laneActive(memberMask, j) ? "inactive" : "not in membermask") +
          " (membermask " + hex(memberMask) + ", activeMask " +
          hex(activeMask) + "): undefined");
    res.d[lane] = a[j];
    if (valid)
      res.predicate |= 1u << lane;
  }
  return res;
}

Result<ShflResult> shfl(ShflMode mode, const LaneValues &a, uint32_t b,
                        uint32_t c, uint32_t memberMask, uint32_t activeMask) {
  LaneValues bs;
  bs.fill(b);
  return shfl(mode, a, bs, c, memberMask, activeMask);
}

//===----------------------------------------------------------------------===//
// cp.async
//===----------------------------------------------------------------------===//

Status CpAsyncState::issue(uint32_t dst, const uint8_t *src, uint32_t cpSize,
                           uint32_t srcSize) {
  if (cpSize != 4 && cpSize != 8 && cpSize != 16)
    return Status::failure("cp.async: cp-size must be 4, 8 or 16, got " +
                           std::to_string(cpSize));
  if (srcSize > cpSize)
    return Status::failure("cp.async: src-size " + std::to_string(srcSize) +
                           " exceeds cp-size " + std::to_string(cpSize));
  if (dst % cpSize)
    return Status::failure("cp.async: shared destination " + hex(dst) +
                           " is not aligned to cp-size " +
                           std::to_string(cpSize));
  if (srcSize && !src)
    return Status::failure("cp.async: null source with src-size " +
                           std::to_string(srcSize));
  Copy copy{dst, {}, cpSize};
  copy.data.fill(0); // zero-fill past src-size
  if (srcSize)
    std::memcpy(copy.data.data(), src, srcSize);
  current_.push_back(copy);
  return Status::success();
}

void CpAsyncState::commitGroup() {
  groups_.emplace_back();
  groups_.back().swap(current_);
  if (!spare_.empty()) {
    current_.swap(spare_.back());
    spare_.pop_back();
  }
}

Status CpAsyncState::waitGroup(SharedMemory &smem, uint32_t n) {
  Status first;
  while (groups_.size() > n) {
    for (const Copy &copy : groups_.front()) {
      Status s = smem.write(copy.dst, copy.data.data(), copy.size);
      if (!s.ok() && first.ok())
        first = Status::failure("cp.async to " + hex(copy.dst) +
                                " landing at wait_group: " + s.error());
    }
    groups_.front().clear();
    spare_.push_back(std::move(groups_.front()));
    groups_.pop_front();
  }
  return first;
}

std::vector<CpAsyncState::Copy> CpAsyncState::takePending() {
  std::vector<Copy> taken;
  for (std::vector<Copy> &group : groups_) {
    taken.insert(taken.end(), group.begin(), group.end());
    group.clear();
  }
  taken.insert(taken.end(), current_.begin(), current_.end());
  current_.clear();
  return taken;
}

Status CpAsyncState::waitAll(SharedMemory &smem) {
  commitGroup();
  return waitGroup(smem, 0);
}

bool CpAsyncState::overlapsPending(uint32_t address, uint32_t bytes) const {
  auto overlaps = [&](const Copy &copy) {
    return uint64_t(copy.dst) < uint64_t(address) + bytes &&
           uint64_t(address) < uint64_t(copy.dst) + copy.size;
  };
  for (const Copy &copy : current_)
    if (overlaps(copy))
      return true;
  for (const auto &group : groups_)
    for (const Copy &copy : group)
      if (overlaps(copy))
        return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Bank conflicts
//===----------------------------------------------------------------------===//

int bankConflicts(
    const std::vector<std::pair<uint32_t, uint32_t>> &perLaneAccess,
    uint32_t activeMask) {
  return bankConflicts(perLaneAccess.data(),
                       std::min<int>(kWarpSize, perLaneAccess.size()),
                       activeMask);
}

int bankConflicts(const std::pair<uint32_t, uint32_t> *perLaneAccess, int lanes,
                  uint32_t activeMask) {
  lanes = std::min(lanes, kWarpSize);
  uint32_t width = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    if (!laneActive(activeMask, lane))
      continue;
    auto [addr, bytes] = perLaneAccess[lane];
    if (bytes != 4 && bytes != 8 && bytes != 16)
      return -1;
    if (width && bytes != width)
      return -1;
    if (addr % bytes)
      return -1;
    width = bytes;
  }
  if (!width)
    return 0; // no active lane
  const int lanesPerPhase = 128 / static_cast<int>(width);
  int extra = 0;
  for (int phase = 0; phase * lanesPerPhase < kWarpSize; ++phase) {
    // A phase touches at most 32 words (128 bytes); a bank's cost is the
    // number of distinct words it serves.
    uint32_t words[kWarpSize];
    int n = 0;
    for (int lane = phase * lanesPerPhase;
         lane < std::min(lanes, (phase + 1) * lanesPerPhase); ++lane) {
      if (!laneActive(activeMask, lane))
        continue;
      const uint32_t firstWord = perLaneAccess[lane].first / 4;
      for (uint32_t w = 0; w < width / 4; ++w)
        words[n++] = firstWord + w;
    }
    // Usually every bank serves one word (or none): no conflict, no sort.
    uint32_t firstOfBank[kWarpSize];
    uint32_t banksUsed = 0;
    bool shared = false;
    for (int i = 0; i < n && !shared; ++i) {
      const uint32_t bank = words[i] % kWarpSize;
      if (!laneActive(banksUsed, bank)) {
        banksUsed |= 1u << bank;
        firstOfBank[bank] = words[i];
      } else {
        shared = firstOfBank[bank] != words[i];
      }
    }
    if (!shared)
      continue;
    std::sort(words, words + n);
    n = static_cast<int>(std::unique(words, words + n) - words);
    int perBank[kWarpSize] = {};
    int cost = 0;
    for (int i = 0; i < n; ++i)
      cost = std::max(cost, ++perBank[words[i] % kWarpSize]);
    if (cost > 1)
      extra += cost - 1;
  }
  return extra;
}

int ldmatrixBankConflicts(const LaneValues &addresses, int num) {
  if (num != 1 && num != 2 && num != 4)
    return -1;
  std::pair<uint32_t, uint32_t> access[kWarpSize];
  for (int lane = 0; lane < kWarpSize; ++lane)
    access[lane] = {addresses[lane], 16};
  const uint32_t mask = num == 4 ? kFullMask : (1u << (8 * num)) - 1;
  return bankConflicts(access, kWarpSize, mask);
}

} // namespace flash::emu

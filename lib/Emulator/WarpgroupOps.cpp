//===- WarpgroupOps.cpp - Exact semantics of sm_90a warpgroup MMA ---------===//
//
// See WarpgroupOps.h.
//
//===----------------------------------------------------------------------===//
#include "flashc/Emulator/WarpgroupOps.h"

#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Runtime/Float8.h"

#include <algorithm>
#include <cstdio>

namespace flash::emu {

namespace lay = flash::tile::layout;

namespace {
std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
constexpr const char *kMnemonic = "wgmma.mma_async";
} // namespace

std::string checkWgmmaConfig(const WgmmaConfig &config) {
  if (std::string e = lay::checkWgmmaN(config.n); !e.empty())
    return e;
  if ((config.scaleA != 1 && config.scaleA != -1) ||
      (config.scaleB != 1 && config.scaleB != -1))
    return "imm-scale-a/b must be 1 or -1";
  if (config.type == ElementType::E4M3 && (config.transA || config.transB))
    return "e4m3 operands are K-major only (no transpose for 8-bit types)";
  return {};
}

Status checkWgmmaDescriptorBits(uint64_t descriptor, const char *what) {
  std::string who = std::string(kMnemonic) + ": " + what + " descriptor " +
                    hex(descriptor);
  if (uint64_t r = lay::wgmmaDescriptorReservedBits(descriptor))
    return Status::failure(who + " sets reserved bits " + hex(r));
  lay::WgmmaDescriptor d = lay::decodeWgmmaDescriptor(descriptor);
  if (d.baseOffset != 0)
    return Status::failure(who + " has base offset " +
                           std::to_string(d.baseOffset) +
                           " (the emulator models base offset 0 only: place "
                           "swizzled tiles on their pattern's boundary)");
  int64_t atom = lay::swizzleAtomBytes(d.swizzle);
  int64_t span = lay::swizzleSpanBytes(d.swizzle);
  if (d.swizzle != lay::SmemSwizzle::None && d.startAddress % atom >= span)
    return Status::failure(
        who + ": start address " + hex(d.startAddress) +
        " is not in the first row of a " + lay::swizzleName(d.swizzle) +
        " swizzle atom (" + std::to_string(atom) +
        "-byte aligned); such a pattern needs a base offset");
  return Status::success();
}

Status checkWgmmaOperandAtoms(uint64_t descriptor, bool mnMajor,
                              int64_t mnExtent, ElementType type,
                              const char *what) {
  const int64_t elemBytes = wgmmaElementBytes(type), K = wgmmaK(type);
  lay::WgmmaDescriptor d = lay::decodeWgmmaDescriptor(descriptor);
  if (d.swizzle == lay::SmemSwizzle::None)
    return Status::success();
  const int64_t span = lay::swizzleSpanBytes(d.swizzle);
  const int64_t atom = lay::swizzleAtomBytes(d.swizzle);
  const int64_t perSpan = span / elemBytes;
  // The bytes one row of an atom reads, from the atom's origin on.
  const int64_t rowBytes =
      mnMajor ? std::min(mnExtent, perSpan) * elemBytes : K * elemBytes;
  auto check = [&](int64_t origin, int64_t mn, int64_t k) -> Status {
    int64_t into = origin % atom;
    if (into + rowBytes <= span)
      return Status::success();
    return Status::failure(
        std::string(kMnemonic) + ": " + what + " descriptor " +
        hex(descriptor) + ": the swizzle atom of element (" +
        std::to_string(mn) + ", " + std::to_string(k) + ") starts at " +
        hex(origin) + ", " + std::to_string(into) + " bytes into a " +
        lay::swizzleName(d.swizzle) + " swizzle atom (" +
        std::to_string(atom) + "-byte aligned), where its " +
        std::to_string(rowBytes) +
        "-byte rows do not fit in the first row (stride byte offset " +
        std::to_string(d.strideByteOffset) +
        ", leading byte offset " + std::to_string(d.leadingByteOffset) +
        ": every atom must start on its pattern)");
  };
  if (!mnMajor) {
    // Atoms of 8 MN rows, SBO apart.
    for (int64_t mn = 0; mn < mnExtent; mn += 8)
      if (Status s = check(d.startAddress + mn / 8 * d.strideByteOffset, mn, 0);
          !s.ok())
        return s;
    return Status::success();
  }
  // Atoms of 8 K rows: a span of MN elements wide (LBO apart along MN),
  // SBO apart along K.
  for (int64_t mn = 0; mn < mnExtent; mn += perSpan)
    for (int64_t k = 0; k < K; k += 8)
      if (Status s = check(d.startAddress + mn / perSpan * d.leadingByteOffset +
                               k / 8 * d.strideByteOffset,
                           mn, k);
          !s.ok())
        return s;
  return Status::success();
}

std::vector<uint32_t> wgmmaOperandAddresses(uint64_t descriptor, bool mnMajor,
                                            int64_t mnExtent,
                                            ElementType type) {
  const int64_t K = wgmmaK(type), elemBytes = wgmmaElementBytes(type);
  lay::WgmmaDescriptor d = lay::decodeWgmmaDescriptor(descriptor);
  std::vector<uint32_t> out(mnExtent * K);
  for (int64_t mn = 0; mn < mnExtent; ++mn)
    for (int64_t k = 0; k < K; ++k)
      out[mn * K + k] = static_cast<uint32_t>(
          lay::wgmmaOperandAddress(d, mnMajor, elemBytes, mn, k));
  return out;
}

Result<WgmmaOperand> readWgmmaOperand(const SharedMemory &smem,
                                      uint64_t descriptor, bool mnMajor,
                                      int64_t mnExtent, ElementType type,
                                      const char *what) {
  if (Status s = checkWgmmaDescriptorBits(descriptor, what); !s.ok())
    return s;
  if (Status s =
          checkWgmmaOperandAtoms(descriptor, mnMajor, mnExtent, type, what);
      !s.ok())
    return s;
  std::vector<uint32_t> addrs =
      wgmmaOperandAddresses(descriptor, mnMajor, mnExtent, type);
  const int64_t K = wgmmaK(type);
  const bool fp8 = type == ElementType::E4M3;
  WgmmaOperand out(addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    uint16_t bits = 0;
    if (Status s = smem.read(addrs[i], &bits, fp8 ? 1 : 2); !s.ok())
      return Status::failure(std::string(kMnemonic) + ": " + what +
                             " element (" + std::to_string(i / K) + ", " +
                             std::to_string(i % K) + ") through descriptor " +
                             hex(descriptor) + ": " + s.error());
    out[i] = fp8 ? e4m3BitsToDouble(static_cast<uint8_t>(bits))
                 : bits16ToDouble(bits, type);
  }
  return out;
}

WgmmaOperand wgmmaRegisterOperandA(const WgmmaARegisters &regs,
                                   ElementType type) {
  if (type == ElementType::E4M3) {
    WgmmaOperand a(lay::kWgmmaAtomM * lay::kWgmmaAtomK8);
    for (int64_t t = 0; t < kWarpgroupThreads; ++t)
      for (int64_t e = 0; e < lay::kWgmmaA8Elements; ++e) {
        lay::Coord at = lay::wgmmaA8RegCoord<int64_t>(t, e);
        uint32_t reg = regs[e / 4][t];
        a[at[0] * lay::kWgmmaAtomK8 + at[1]] =
            e4m3BitsToDouble(static_cast<uint8_t>(reg >> (8 * (e % 4))));
      }
    return a;
  }
  WgmmaOperand a(lay::kWgmmaAtomM * 16);
  for (int64_t t = 0; t < kWarpgroupThreads; ++t)
    for (int64_t e = 0; e < lay::kWgmmaAElements; ++e) {
      lay::Coord at = lay::wgmmaARegCoord<int64_t>(t, e);
      uint32_t reg = regs[e / 2][t];
      a[at[0] * 16 + at[1]] =
          bits16ToDouble(e % 2 ? high16(reg) : low16(reg), type);
    }
  return a;
}

Result<WgmmaAccumulator> wgmmaM64NK16(const WgmmaConfig &config,
                                      const WgmmaOperand &a,
                                      const WgmmaOperand &b,
                                      const WgmmaAccumulator &c) {
  if (std::string e = checkWgmmaConfig(config); !e.empty())
    return Status::failure(std::string(kMnemonic) + ": " + e);
  const int64_t n = config.n, regs = lay::wgmmaAccNumRegisters(n);
  const int64_t K = wgmmaK(config.type);
  if (a.size() != size_t(lay::kWgmmaAtomM * K) || b.size() != size_t(n * K) ||
      (config.scaleD && c.size() != size_t(regs)))
    return Status::failure(std::string(kMnemonic) +
                           ": operand sizes do not match m64n" +
                           std::to_string(n) + "k" + std::to_string(K));
  // Negation is exact, and so is its product with a 16- or 8-bit value.
  const double sign = double(config.scaleA) * double(config.scaleB);
  WgmmaAccumulator d(regs);
  for (int64_t t = 0; t < kWarpgroupThreads; ++t)
    for (int64_t i = 0; i < regs; ++i) {
      lay::Coord at = lay::wgmmaAccCoord<int64_t>(t, i);
      const double *arow = &a[at[0] * K], *bcol = &b[at[1] * K];
      double sum = 0.0;
      for (int64_t k = 0; k < K; ++k)
        sum += arow[k] * bcol[k]; // each product exact in double
      sum *= sign;
      if (config.scaleD)
        sum += c[i][t];
      d[i][t] = static_cast<float>(sum); // one rounding, nearest even
    }
  return d;
}

void WgmmaQueue::commitGroup() {
  groups_.push_back(std::move(current_));
  current_.clear();
}

std::vector<uint64_t> WgmmaQueue::waitGroup(uint32_t n) {
  std::vector<uint64_t> done;
  while (groups_.size() > n) {
    done.insert(done.end(), groups_.front().begin(), groups_.front().end());
    groups_.pop_front();
  }
  return done;
}

bool WgmmaQueue::isPending(uint64_t id) const {
  if (std::find(current_.begin(), current_.end(), id) != current_.end())
    return true;
  for (const auto &g : groups_)
    if (std::find(g.begin(), g.end(), id) != g.end())
      return true;
  return false;
}

} // namespace flash::emu

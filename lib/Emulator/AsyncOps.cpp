//===- AsyncOps.cpp - Exact semantics of Hopper barriers and TMA ----------===//

#include "flashc/Emulator/AsyncOps.h"

#include <algorithm>
#include <cstring>

namespace flash::emu {

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

static std::string describe(const Mbarrier &b) {
  return "phase " + std::to_string(b.phase()) + ", pending arrivals " +
         std::to_string(b.pending()) + " of " + std::to_string(b.expected()) +
         ", tx-count " + std::to_string(b.tx());
}

Status Mbarrier::init(int64_t count) {
  if (live_)
    return Status::failure("mbarrier.init of a live mbarrier (" + describe(*this) +
                           "; mbarrier.inval it first)");
  if (count < 1 || count > kMbarrierMaxCount)
    return Status::failure("mbarrier.init count " + std::to_string(count) +
                           " is outside [1, 2^20 - 1]");
  live_ = true;
  unobserved_ = false;
  phase_ = 0;
  pending_ = expected_ = count;
  tx_ = 0;
  return Status::success();
}

Status Mbarrier::inval() {
  if (!live_)
    return Status::failure("mbarrier.inval of an mbarrier that is not live");
  live_ = false;
  return Status::success();
}

void Mbarrier::maybeComplete() {
  if (pending_ != 0 || tx_ != 0)
    return;
  ++phase_;
  pending_ = expected_;
  unobserved_ = true;
}

Status Mbarrier::arrive(int64_t count, bool drop) {
  if (count < 1 || count > kMbarrierMaxCount)
    return Status::failure("mbarrier.arrive count " + std::to_string(count) +
                           " is outside [1, 2^20 - 1]");
  if (unobserved_)
    return Status::failure(
        "mbarrier.arrive on phase " + std::to_string(phase_) +
        " before any wait observed phase " + std::to_string(phase_ - 1) +
        " complete (more arrivals than the barrier's count, or a missing "
        "wait: every phase needs a successful wait before arrivals on the "
        "next; " +
        describe(*this) + ")");
  if (count > pending_)
    return Status::failure(
        "mbarrier.arrive of " + std::to_string(count) +
        " underflows the pending arrival count (" + describe(*this) +
        "; more arrivals than the barrier's count)");
  if (drop) {
    if (count > expected_)
      return Status::failure("mbarrier.arrive_drop of " +
                             std::to_string(count) +
                             " drops the expected count below zero (" +
                             describe(*this) + ")");
    expected_ -= count;
  }
  pending_ -= count;
  maybeComplete();
  return Status::success();
}

Status Mbarrier::expectArrival() {
  if (!live_)
    return Status::failure("cp.async.mbarrier.arrive on a barrier that is "
                           "not initialised");
  if (pending_ + 1 > kMbarrierMaxCount)
    return Status::failure("cp.async.mbarrier.arrive overflows the pending "
                           "arrival count (" + describe(*this) + ")");
  ++pending_;
  return Status::success();
}

Status Mbarrier::expectTx(int64_t bytes) {
  if (bytes < 0 || tx_ + bytes > kMbarrierMaxCount)
    return Status::failure("mbarrier expect-tx of " + std::to_string(bytes) +
                           " bytes overflows the tx-count (" + describe(*this) +
                           "; the range is +-(2^20 - 1))");
  tx_ += bytes;
  return Status::success();
}

Status Mbarrier::completeTx(int64_t bytes) {
  if (bytes < 0 || tx_ - bytes < -kMbarrierMaxCount)
    return Status::failure("mbarrier complete-tx of " + std::to_string(bytes) +
                           " bytes underflows the tx-count (" +
                           describe(*this) + "; the range is +-(2^20 - 1))");
  tx_ -= bytes;
  maybeComplete();
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Named barriers
//===----------------------------------------------------------------------===//

Status NamedBarrier::arrive(int warp, int64_t threads, int64_t count,
                            bool &completed) {
  completed = false;
  if (count <= 0 || count % 32 != 0)
    return Status::failure("barrier thread count " + std::to_string(count) +
                           " is not a positive multiple of 32");
  if (arrived_ && count != count_)
    return Status::failure("barrier thread count " + std::to_string(count) +
                           " differs from the " + std::to_string(count_) +
                           " of the warps that arrived before");
  if (warp < 0 || warp >= kMaxWarpsPerCTA)
    return Status::failure("warp " + std::to_string(warp) +
                           " is outside a CTA");
  if ((warps_ >> warp) & 1u)
    return Status::failure("warp " + std::to_string(warp) +
                           " arrives twice on the barrier before it "
                           "completes (" +
                           std::to_string(arrived_) + " of " +
                           std::to_string(count) + " threads arrived)");
  if (arrived_ + threads > count)
    return Status::failure("more threads arrive on the barrier than its "
                           "count " +
                           std::to_string(count) + " (" +
                           std::to_string(arrived_ + threads) + ")");
  count_ = count;
  warps_ |= 1u << warp;
  arrived_ += threads;
  if (arrived_ == count_) {
    completed = true;
    warps_ = 0;
    arrived_ = count_ = 0;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

int64_t tmaElementBytes(TmaDataType type) {
  switch (type) {
  case TmaDataType::U8:
    return 1;
  case TmaDataType::U16:
  case TmaDataType::F16:
  case TmaDataType::BF16:
    return 2;
  case TmaDataType::U32:
  case TmaDataType::I32:
  case TmaDataType::F32:
  case TmaDataType::F32Ftz:
  case TmaDataType::TF32:
  case TmaDataType::TF32Ftz:
    return 4;
  case TmaDataType::U64:
  case TmaDataType::I64:
  case TmaDataType::F64:
    return 8;
  }
  return 0;
}

const char *tmaDataTypeName(TmaDataType type) {
  switch (type) {
  case TmaDataType::U8:
    return "u8";
  case TmaDataType::U16:
    return "u16";
  case TmaDataType::U32:
    return "u32";
  case TmaDataType::I32:
    return "i32";
  case TmaDataType::U64:
    return "u64";
  case TmaDataType::I64:
    return "i64";
  case TmaDataType::F16:
    return "f16";
  case TmaDataType::F32:
    return "f32";
  case TmaDataType::F64:
    return "f64";
  case TmaDataType::BF16:
    return "bf16";
  case TmaDataType::F32Ftz:
    return "f32_ftz";
  case TmaDataType::TF32:
    return "tf32";
  case TmaDataType::TF32Ftz:
    return "tf32_ftz";
  }
  return "?";
}

int64_t tmaSwizzleSpan(TmaSwizzle s) {
  switch (s) {
  case TmaSwizzle::None:
    return 16;
  case TmaSwizzle::B32:
    return 32;
  case TmaSwizzle::B64:
    return 64;
  case TmaSwizzle::B128:
    return 128;
  }
  return 16;
}

int64_t tmaSwizzleAtom(TmaSwizzle s) { return tmaSwizzleSpan(s) * 8; }

static bool isFloatType(TmaDataType t) {
  switch (t) {
  case TmaDataType::F16:
  case TmaDataType::F32:
  case TmaDataType::F64:
  case TmaDataType::BF16:
  case TmaDataType::F32Ftz:
  case TmaDataType::TF32:
  case TmaDataType::TF32Ftz:
    return true;
  default:
    return false;
  }
}

Status validateTensorMap(const TensorMap &map) {
  auto fail = [](const std::string &what) {
    return Status::failure("tensor map: " + what);
  };
  if (map.rank < 1 || map.rank > kTmaMaxRank)
    return fail("rank " + std::to_string(map.rank) + " is outside 1..5");
  if (map.interleave != TmaInterleave::None)
    return fail("interleaved layouts are not modelled");
  const int64_t esz = tmaElementBytes(map.type);
  if (map.globalAddress % 16 != 0)
    return fail("global address is not 16-byte aligned (byte offset " +
                std::to_string(map.globalAddress % 16) + " past a multiple "
                "of 16)");
  for (int d = 0; d < map.rank; ++d) {
    std::string dim = "dimension " + std::to_string(d);
    if (map.globalDim[d] < 1 || map.globalDim[d] > (uint64_t(1) << 32))
      return fail(dim + " size " + std::to_string(map.globalDim[d]) +
                  " is outside 1..2^32");
    if (d > 0) {
      uint64_t stride = map.globalStrides[d - 1];
      if (stride % 16 != 0)
        return fail(dim + " stride of " + std::to_string(stride) +
                    " bytes is not a multiple of 16");
      if (stride >= (uint64_t(1) << 40))
        return fail(dim + " stride of " + std::to_string(stride) +
                    " bytes is not below 2^40");
    }
    if (map.boxDim[d] < 1 || map.boxDim[d] > 256)
      return fail(dim + " box size " + std::to_string(map.boxDim[d]) +
                  " is outside 1..256");
    if (map.elementStrides[d] < 1 || map.elementStrides[d] > 8)
      return fail(dim + " element stride " +
                  std::to_string(map.elementStrides[d]) + " is outside 1..8");
  }
  int64_t innerBytes = int64_t(map.boxDim[0]) * esz;
  if (innerBytes % 16 != 0)
    return fail("the inner box dimension is " + std::to_string(innerBytes) +
                " bytes, not a multiple of 16");
  if (map.swizzle != TmaSwizzle::None && innerBytes > tmaSwizzleSpan(map.swizzle))
    return fail("the inner box dimension is " + std::to_string(innerBytes) +
                " bytes, more than the " +
                std::to_string(tmaSwizzleSpan(map.swizzle)) +
                "-byte swizzle span");
  if (map.oobFill == TmaOobFill::NanRequestZeroFma && !isFloatType(map.type))
    return fail("NaN out-of-bounds fill needs a floating-point type, not " +
                std::string(tmaDataTypeName(map.type)));
  return Status::success();
}

int64_t boxExtent(const TensorMap &map, int d) {
  int64_t stride = d == 0 ? 1 : map.elementStrides[d];
  return (int64_t(map.boxDim[d]) + stride - 1) / stride;
}

int64_t boxBytes(const TensorMap &map) {
  int64_t n = tmaElementBytes(map.type);
  for (int d = 0; d < map.rank; ++d)
    n *= boxExtent(map, d);
  return n;
}

const char *tmaSwizzleName(TmaSwizzle s) {
  switch (s) {
  case TmaSwizzle::None:
    return "none";
  case TmaSwizzle::B32:
    return "32B";
  case TmaSwizzle::B64:
    return "64B";
  case TmaSwizzle::B128:
    return "128B";
  }
  return "?";
}

bool parseTmaSwizzle(const std::string &text, TmaSwizzle &s) {
  for (TmaSwizzle c : {TmaSwizzle::None, TmaSwizzle::B32, TmaSwizzle::B64,
                       TmaSwizzle::B128})
    if (text == tmaSwizzleName(c)) {
      s = c;
      return true;
    }
  return false;
}

const char *tmaOobFillName(TmaOobFill f) {
  return f == TmaOobFill::Zero ? "zero" : "nan";
}

bool parseTmaOobFill(const std::string &text, TmaOobFill &f) {
  if (text != "zero" && text != "nan")
    return false;
  f = text == "zero" ? TmaOobFill::Zero : TmaOobFill::NanRequestZeroFma;
  return true;
}

Result<TensorMap> tensorMapFor(const TensorMapSpec &spec, TmaDataType type,
                               const std::vector<int64_t> &shape,
                               uint64_t address) {
  auto fail = [&](const std::string &what) {
    return Status::failure("tensor map '" + spec.name + "' of '" +
                           spec.tensor + "': " + what);
  };
  int rank = static_cast<int>(shape.size());
  if (rank != static_cast<int>(spec.box.size()))
    return fail("a box of rank " + std::to_string(spec.box.size()) +
                " for a tensor of rank " + std::to_string(rank));
  if (rank < 1 || rank > kTmaMaxRank)
    return fail("rank " + std::to_string(rank) + " is outside 1..5");
  TensorMap map;
  map.type = type;
  map.rank = rank;
  map.globalAddress = address;
  map.swizzle = spec.swizzle;
  map.oobFill = spec.oobFill;
  uint64_t stride = static_cast<uint64_t>(tmaElementBytes(type));
  for (int d = 0; d < rank; ++d) {
    int src = rank - 1 - d; // dimension 0 of the map is the innermost
    if (shape[src] < 0 || spec.box[src] < 0)
      return fail("negative size");
    map.globalDim[d] = static_cast<uint64_t>(shape[src]);
    map.boxDim[d] = static_cast<uint32_t>(
        std::min<int64_t>(spec.box[src], int64_t(1) << 31));
    if (d > 0)
      map.globalStrides[d - 1] = stride;
    stride *= static_cast<uint64_t>(shape[src]);
  }
  Status s = validateTensorMap(map);
  if (!s.ok())
    return fail(s.error().substr(std::string("tensor map: ").size()));
  return map;
}

// The encoding: a magic word, then the fields in declaration order at fixed
// offsets, little-endian.
static constexpr uint32_t kTensorMapMagic = 0x544d4150; // "TMAP"

namespace {
struct Writer {
  uint8_t *p;
  template <typename T> void put(T v) {
    std::memcpy(p, &v, sizeof v);
    p += sizeof v;
  }
};
struct Reader {
  const uint8_t *p;
  template <typename T> T get() {
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
};
} // namespace

void encodeTensorMap(const TensorMap &map, uint8_t out[kTensorMapBytes]) {
  std::memset(out, 0, kTensorMapBytes);
  Writer w{out};
  w.put(kTensorMapMagic);
  w.put(uint8_t(map.type));
  w.put(uint8_t(map.rank));
  w.put(uint8_t(map.interleave));
  w.put(uint8_t(map.swizzle));
  w.put(uint8_t(map.oobFill));
  w.put(uint8_t(0));
  w.put(uint16_t(0));
  w.put(map.globalAddress);
  for (uint64_t v : map.globalDim)
    w.put(v);
  for (uint64_t v : map.globalStrides)
    w.put(v);
  for (uint32_t v : map.boxDim)
    w.put(uint16_t(v));
  for (uint32_t v : map.elementStrides)
    w.put(uint8_t(v));
}

Result<TensorMap> decodeTensorMap(const uint8_t in[kTensorMapBytes]) {
  Reader r{in};
  if (r.get<uint32_t>() != kTensorMapMagic)
    return Status::failure("the 128 bytes do not hold a tensor map (not built "
                           "by the host from a tensor)");
  TensorMap map;
  map.type = TmaDataType(r.get<uint8_t>());
  map.rank = r.get<uint8_t>();
  map.interleave = TmaInterleave(r.get<uint8_t>());
  map.swizzle = TmaSwizzle(r.get<uint8_t>());
  map.oobFill = TmaOobFill(r.get<uint8_t>());
  r.get<uint8_t>();
  r.get<uint16_t>();
  map.globalAddress = r.get<uint64_t>();
  for (uint64_t &v : map.globalDim)
    v = r.get<uint64_t>();
  for (uint64_t &v : map.globalStrides)
    v = r.get<uint64_t>();
  for (uint32_t &v : map.boxDim)
    v = r.get<uint16_t>();
  for (uint32_t &v : map.elementStrides)
    v = r.get<uint8_t>();
  if (uint8_t(map.type) > uint8_t(TmaDataType::TF32Ftz) ||
      uint8_t(map.swizzle) > uint8_t(TmaSwizzle::B128) ||
      uint8_t(map.interleave) > uint8_t(TmaInterleave::B32) ||
      uint8_t(map.oobFill) > uint8_t(TmaOobFill::NanRequestZeroFma))
    return Status::failure("the tensor map's bytes are corrupt");
  return map;
}

} // namespace flash::emu

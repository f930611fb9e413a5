//===- NpyTest.cpp - .npy reader/writer -----------------------------------===//

#include "flashc/Runtime/Float16.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Runtime/AtomicFile.h"
#include "flashc/Support/TemporaryFiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace flash;
using namespace flash::npy;

namespace {

std::string tempPath(const std::string &name) {
  return testing::TempDir() + "flash_npy_" + std::to_string(getpid()) + "_" +
         name;
}

/// Builds a .npy image with a given version, header dict and payload.
std::vector<uint8_t> makeNpy(unsigned major, const std::string &dict,
                             const std::vector<uint8_t> &payload,
                             bool pad = true) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  if (pad) {
    size_t total = prefix + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
  }
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y',
                              static_cast<uint8_t>(major), 0};
  uint32_t len = header.size();
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<uint8_t> f32Bytes(std::initializer_list<float> vals) {
  std::vector<uint8_t> out;
  for (float f : vals) {
    uint8_t b[4];
    std::memcpy(b, &f, 4);
    out.insert(out.end(), b, b + 4);
  }
  return out;
}

bool parseBytes(const std::vector<uint8_t> &bytes, Array &a, std::string &err) {
  return parse(bytes.data(), bytes.size(), a, err);
}

void expectError(const std::vector<uint8_t> &bytes, const std::string &needle) {
  Array a;
  std::string err;
  EXPECT_FALSE(parseBytes(bytes, a, err));
  EXPECT_NE(err.find(needle), std::string::npos)
      << "error '" << err << "' does not mention '" << needle << "'";
}

TEST(Npy, RoundTripEachDType) {
  for (DType dt :
       {DType::F16, DType::BF16, DType::F32, DType::I32, DType::U16}) {
    Array a(dt, {2, 3});
    std::vector<double> vals = {1.5, -2.25, 0, 100, -7, 3};
    if (dt == DType::U16)
      vals = {1.5, 65535, 0, 100, 16256, 3};
    for (size_t i = 0; i < vals.size(); ++i)
      a.set(i, vals[i]);
    std::string path = tempPath(std::string("rt_") + dtypeName(dt) + ".npy");
    std::string err;
    ASSERT_TRUE(writeFile(path, a, err)) << err;
    Array b;
    ASSERT_TRUE(readFile(path, b, err)) << err;
    EXPECT_EQ(b.dtype, dt);
    EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(b.data, a.data);
    for (size_t i = 0; i < vals.size(); ++i) {
      bool integer = dt == DType::I32 || dt == DType::U16;
      double want = integer ? std::trunc(vals[i]) : vals[i];
      EXPECT_EQ(b.get(i), want) << dtypeName(dt) << " " << i;
    }
    std::remove(path.c_str());
  }
}

TEST(Npy, BoolIsOneBytePerElement) {
  // numpy writes bool arrays as '|b1', one byte 0 or 1 per element.
  Array a;
  std::string err;
  ASSERT_TRUE(parseBytes(makeNpy(1, "{'descr': '|b1', 'fortran_order': "
                                    "False, 'shape': (4,), }",
                                 {1, 0, 0, 1}),
                         a, err))
      << err;
  EXPECT_EQ(a.dtype, DType::Bool);
  EXPECT_EQ(elementSize(a.dtype), 1u);
  EXPECT_EQ(std::vector<double>({a.get(0), a.get(1), a.get(2), a.get(3)}),
            std::vector<double>({1, 0, 0, 1}));
  a.set(1, 0.5); // anything nonzero is true, stored as 1
  EXPECT_EQ(a.data[1], 1);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(serialize(a, bytes, err)) << err;
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'descr': '|b1'"),
            std::string::npos);
}

TEST(Npy, WrittenHeaderIsNumpyCompatible) {
  Array a(DType::F32, {5});
  std::vector<uint8_t> bytes;
  std::string err;
  ASSERT_TRUE(serialize(a, bytes, err)) << err;
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[7], 0);
  size_t hlen = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  std::string header(bytes.begin() + 10, bytes.begin() + 10 + hlen);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos);
  EXPECT_NE(header.find("'shape': (5,)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + hlen + 20);
}

TEST(Npy, HeaderVariants) {
  Array a;
  std::string err;
  // Version 1.0, 1-D shape with trailing comma.
  ASSERT_TRUE(parseBytes(
      makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
              f32Bytes({1, 2, 3, 4, 5})),
      a, err))
      << err;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(a.get(4), 5.0);
  // Version 2.0, keys in another order, no trailing comma, double quotes.
  ASSERT_TRUE(parseBytes(
      makeNpy(2, "{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \"<f4\"}",
              f32Bytes({1, 2, 3, 4})),
      a, err))
      << err;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  // Version 3.0 (utf-8 header).
  ASSERT_TRUE(parseBytes(
      makeNpy(3, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
              {0xFF, 0xFF, 0xFF, 0xFF}),
      a, err))
      << err;
  EXPECT_EQ(a.dtype, DType::I32);
  EXPECT_EQ(a.get(0), -1.0);
  // 0-d array: shape () has one element.
  ASSERT_TRUE(parseBytes(
      makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
              f32Bytes({2.5f})),
      a, err))
      << err;
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.numElements(), 1);
  EXPECT_EQ(a.get(0), 2.5);
  // Empty array.
  ASSERT_TRUE(parseBytes(
      makeNpy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 3), }",
              {}),
      a, err))
      << err;
  EXPECT_EQ(a.numElements(), 0);
  // Unpadded header is fine too.
  ASSERT_TRUE(parseBytes(
      makeNpy(1, "{'descr':'<f2','fortran_order':False,'shape':(1,)}",
              {0x00, 0x3C}, /*pad=*/false),
      a, err))
      << err;
  EXPECT_EQ(a.get(0), 1.0);
}

TEST(Npy, ScalarAndEmptyRoundTrip) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{0},
        std::vector<int64_t>{3, 0, 2}}) {
    Array a(DType::F16, shape);
    if (a.numElements())
      a.set(0, 3.0);
    std::vector<uint8_t> bytes;
    std::string err;
    ASSERT_TRUE(serialize(a, bytes, err)) << err;
    Array b;
    ASSERT_TRUE(parseBytes(bytes, b, err)) << err;
    EXPECT_EQ(b.shape, shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST(Npy, F16SetRoundsToNearestEven) {
  Array a(DType::F16, {3});
  a.set(0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  a.set(1, 1e6);
  a.set(2, 1.0 + std::ldexp(1.0, -11));
  EXPECT_EQ(a.get(0), 1.0 + std::ldexp(1.0, -10));
  EXPECT_TRUE(std::isinf(a.get(1)));
  EXPECT_EQ(a.get(2), 1.0);
}

// np.save of an ml_dtypes.bfloat16 array writes descr '<V2', np.load gives
// it back as '|V2', and `x.view(np.uint16)` saves the bits as '<u2'.
TEST(Npy, BF16FromMlDtypesOrBits) {
  const std::vector<uint8_t> bits = {0xC0, 0x3F, 0x80, 0xBF}; // 1.5, -1
  for (const char *descr : {"<V2", "|V2"}) {
    Array a;
    std::string err;
    ASSERT_TRUE(parseBytes(makeNpy(1,
                                   std::string("{'descr': '") + descr +
                                       "', 'fortran_order': False, "
                                       "'shape': (2,), }",
                                   bits),
                           a, err))
        << descr << ": " << err;
    EXPECT_EQ(a.dtype, DType::BF16) << descr;
    EXPECT_EQ(a.get(0), 1.5);
    EXPECT_EQ(a.get(1), -1.0);
  }
  Array raw;
  std::string err;
  ASSERT_TRUE(parseBytes(
      makeNpy(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
              bits),
      raw, err))
      << err;
  EXPECT_EQ(raw.dtype, DType::U16);
  EXPECT_EQ(raw.get(0), 0x3FC0);
  // Raw bits become bf16, nothing else does.
  EXPECT_FALSE(viewAs(raw, DType::F16));
  EXPECT_TRUE(viewAs(raw, DType::BF16));
  EXPECT_EQ(raw.dtype, DType::BF16);
  EXPECT_EQ(raw.get(0), 1.5);
  Array half(DType::F16, {1});
  EXPECT_FALSE(viewAs(half, DType::BF16));
  // Written the way ml_dtypes writes it, so that
  // np.load(f).view(ml_dtypes.bfloat16) reads it.
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(serialize(raw, bytes, err)) << err;
  std::string header(bytes.begin() + 10, bytes.end() - 4);
  EXPECT_NE(header.find("'descr': '<V2'"), std::string::npos) << header;
  EXPECT_EQ(std::vector<uint8_t>(bytes.end() - 4, bytes.end()), bits);
}

// np.save of an ml_dtypes.float8_e4m3fn array writes descr '<V1' ('|V1'
// after np.load); set() rounds to nearest even and saturates to +-448.
TEST(Npy, F8E4M3FromMlDtypes) {
  const std::vector<uint8_t> bits = {0x3C, 0xFE, 0x7F, 0x01}; // 1.5, -448, NaN, 2^-9
  for (const char *descr : {"<V1", "|V1"}) {
    Array a;
    std::string err;
    ASSERT_TRUE(parseBytes(makeNpy(1,
                                   std::string("{'descr': '") + descr +
                                       "', 'fortran_order': False, "
                                       "'shape': (4,), }",
                                   bits),
                           a, err))
        << descr << ": " << err;
    EXPECT_EQ(a.dtype, DType::F8E4M3) << descr;
    EXPECT_EQ(a.get(0), 1.5);
    EXPECT_EQ(a.get(1), -448.0);
    EXPECT_TRUE(std::isnan(a.get(2)));
    EXPECT_EQ(a.get(3), std::ldexp(1.0, -9));
    a.set(0, 1000.0); // saturates
    EXPECT_EQ(a.data[0], 0x7E);
    a.set(0, 1.0625); // halfway between 1 and 1.125: ties to even
    EXPECT_EQ(a.data[0], 0x38);
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(serialize(a, bytes, err)) << err;
    std::string header(bytes.begin() + 10, bytes.end() - 4);
    EXPECT_NE(header.find("'descr': '<V1'"), std::string::npos) << header;
  }
}

TEST(Npy, BF16SetRoundsToNearestEven) {
  Array a(DType::BF16, {3});
  a.set(0, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40));
  a.set(1, 1e39);
  a.set(2, 1.0 + std::ldexp(1.0, -8));
  EXPECT_EQ(a.get(0), 1.0 + std::ldexp(1.0, -7));
  EXPECT_TRUE(std::isinf(a.get(1)));
  EXPECT_EQ(a.get(2), 1.0);
}

TEST(Npy, MalformedInputs) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  auto two = f32Bytes({1, 2});
  expectError({'N', 'O', 'P', 'E'}, "bad magic");
  expectError({0x93, 'N', 'U', 'M', 'P', 'Y'}, "truncated header");
  expectError({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 200, 0, '{'},
              "truncated header");
  expectError(makeNpy(4, ok, two), "version 4.0");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", two),
              "Fortran");
  expectError(makeNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", two),
              "big-endian");
  expectError(makeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                      f32Bytes({0, 0})),
              "unsupported dtype '<f8'");
  // A void of another size is no bfloat16.
  expectError(makeNpy(1, "{'descr': '<V4', 'fortran_order': False, 'shape': (1,), }",
                      f32Bytes({0})),
              "unsupported dtype '<V4'");
  expectError(makeNpy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", two),
              "structured");
  expectError(makeNpy(1, "{'descr': '<f4', 'shape': (2,), }", two),
              "no 'fortran_order'");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': False}", two),
              "no 'shape'");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", two),
              "malformed header");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", two),
              "malformed header");
  expectError(makeNpy(1, "not a dict", two), "malformed header");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
              "unexpected key 'x'");
  expectError(makeNpy(1, ok, f32Bytes({1})), "truncated data");
  expectError(makeNpy(1, ok, f32Bytes({1, 2, 3})), "unexpected bytes");
  expectError(makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", two),
              "too large");
  // Every prefix of a valid file fails cleanly.
  auto full = makeNpy(1, ok, two);
  for (size_t n = 0; n < full.size(); ++n) {
    Array a;
    std::string err;
    std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
    EXPECT_FALSE(parseBytes(prefix, a, err)) << n;
    EXPECT_FALSE(err.empty()) << n;
  }
}

TEST(Npy, FileErrors) {
  Array a;
  std::string err;
  EXPECT_FALSE(readFile(tempPath("does_not_exist.npy"), a, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_FALSE(readFile(testing::TempDir(), a, err)); // a directory
  EXPECT_FALSE(err.empty());
  Array b(DType::F32, {1});
  EXPECT_FALSE(writeFile("/nonexistent-dir/x.npy", b, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

/// Files are replaced only once complete (AtomicFile.h): a write that fails
/// at the rename (the target is a directory) leaves no temporary behind, and
/// a successful one replaces the previous contents.
TEST(Npy, WritesReplaceAtomically) {
  std::string dir = tempPath("atomic_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  Array b(DType::F32, {1});
  std::string err;
  EXPECT_FALSE(writeFile(dir, b, err));
  EXPECT_NE(err.find("cannot replace"), std::string::npos) << err;
  std::string prefix = dir.substr(dir.rfind('/') + 1) + ".tmp-";
  DIR *listing = ::opendir(testing::TempDir().c_str());
  ASSERT_NE(listing, nullptr);
  while (dirent *entry = ::readdir(listing))
    EXPECT_NE(std::string(entry->d_name).rfind(prefix, 0), 0u)
        << "temporary left behind: " << entry->d_name;
  ::closedir(listing);
  ::rmdir(dir.c_str());

  std::string path = tempPath("atomic.npy");
  Array one(DType::F32, {1}), two(DType::F32, {2});
  ASSERT_TRUE(writeFile(path, one, err)) << err;
  ASSERT_TRUE(writeFile(path, two, err)) << err;
  Array back;
  ASSERT_TRUE(readFile(path, back, err)) << err;
  EXPECT_EQ(back.shape, std::vector<int64_t>({2}));
  std::remove(path.c_str());
}

/// Whether TempDir holds a file whose name starts with `prefix`.
bool tempDirHas(const std::string &prefix) {
  bool found = false;
  DIR *listing = ::opendir(testing::TempDir().c_str());
  while (listing && !found)
    if (dirent *entry = ::readdir(listing))
      found = std::string(entry->d_name).rfind(prefix, 0) == 0;
    else
      break;
  if (listing)
    ::closedir(listing);
  return found;
}

TemporaryFileObserver signalRemoval = nullptr;

/// The registration of removeTemporariesOnSignal, then SIGTERM while the
/// temporary exists: a kill in the middle of the write.
void terminateMidWrite(const std::string &tmp, bool exists) {
  signalRemoval(tmp, exists);
  if (exists)
    std::raise(SIGTERM);
}

/// A signal during the write (flashc run --out, -o) removes the temporary
/// and keeps the previous output (TemporaryFiles.h).
TEST(NpyDeathTest, SignalMidWriteLeavesNoTemporary) {
  std::string path = tempPath("signalled.npy");
  Array previous(DType::F32, {3}), next(DType::F32, {1 << 16});
  std::string err;
  ASSERT_TRUE(writeFile(path, previous, err)) << err;
  EXPECT_EXIT(
      {
        removeTemporariesOnSignal();
        signalRemoval = temporaryFileObserver();
        setTemporaryFileObserver(terminateMidWrite);
        writeFile(path, next, err);
        std::exit(0);
      },
      testing::KilledBySignal(SIGTERM), "");
  EXPECT_FALSE(tempDirHas(path.substr(path.rfind('/') + 1) + ".tmp-"))
      << "temporary left behind";
  Array back;
  ASSERT_TRUE(readFile(path, back, err)) << err;
  EXPECT_EQ(back.shape, std::vector<int64_t>({3}));
  std::remove(path.c_str());
}

} // namespace

//===- LauncherTest.cpp - the CUDA launcher, without a GPU -----------------===//
//
// Sidecar parsing, argument checks and parameter packing are pure functions
// (grid expressions: GridExprTest.cpp); the driver paths run against the stub
// libcuda (test/Launcher/stub_libcuda.c, FLASH_STUB_CUDA_PATH) selected
// through $FLASHC_LIBCUDA, its behaviour through $FLASH_STUB_CUDA.
//
//===----------------------------------------------------------------------===//

#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Launcher/Launch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

using namespace flash;
using namespace flash::launcher;

namespace {

//===----------------------------------------------------------------------===//
// Sidecar parsing
//===----------------------------------------------------------------------===//

/// What `flashc kernels/fa2.tile -o fa2.ptx` writes.
const char *kFa2Sidecar = R"J({
  "entry": "fa2",
  "arch": "sm_80",
  "ptx_version": "8.0",
  "params": [
    {"name":"Q","kind":"tensor","dtype":"f16","dims":["B","H","Nq",64],"abi":["ptr","i32","i32","i32","i32"]},
    {"name":"K","kind":"tensor","dtype":"f16","dims":["B","H","Nk",64],"abi":["ptr","i32","i32","i32","i32"]},
    {"name":"V","kind":"tensor","dtype":"f16","dims":["B","H","Nk",64],"abi":["ptr","i32","i32","i32","i32"]},
    {"name":"O","kind":"tensor","dtype":"f16","dims":["B","H","Nq",64],"abi":["ptr","i32","i32","i32","i32"]},
    {"name":"sm_scale","kind":"scalar","dtype":"f32","abi":["f32"]}
  ],
  "grid": ["cdiv(Nq, 128)","B * H","1"],
  "threads_per_cta": 128,
  "num_warps": 4,
  "shared_memory": {"static_bytes":0,"dynamic_bytes":0},
  "constants": {"BLOCK_M":128,"BLOCK_N":64,"CAUSAL":false,"HEAD_DIM":64,"WARPS":4}
}
)J";

Sidecar fa2() {
  Sidecar sc;
  std::string err;
  EXPECT_TRUE(parseSidecar(kFa2Sidecar, sc, err)) << err;
  return sc;
}

std::string parseError(const std::string &json) {
  Sidecar sc;
  std::string err;
  EXPECT_FALSE(parseSidecar(json, sc, err)) << json;
  return err;
}

std::string replace(std::string s, const std::string &from,
                    const std::string &to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    s.replace(at, from.size(), to);
  return s;
}

TEST(LauncherSidecar, ParsesFa2) {
  Sidecar sc = fa2();
  EXPECT_EQ(sc.entry, "fa2");
  EXPECT_EQ(sc.arch, "sm_80");
  EXPECT_EQ(sc.ptxVersion, "8.0");
  ASSERT_EQ(sc.params.size(), 5u);
  EXPECT_EQ(sc.params[0].name, "Q");
  EXPECT_TRUE(sc.params[0].tensor);
  EXPECT_EQ(sc.params[0].dtype, "f16");
  EXPECT_EQ(sc.params[0].dims,
            (std::vector<std::string>{"B", "H", "Nq", "64"}));
  EXPECT_EQ(sc.params[0].abi.size(), 5u);
  EXPECT_FALSE(sc.params[4].tensor);
  EXPECT_EQ(sc.params[4].abi, std::vector<std::string>{"f32"});
  EXPECT_EQ(sc.grid[0], "cdiv(Nq, 128)");
  EXPECT_EQ(sc.grid[1], "B * H");
  EXPECT_EQ(sc.grid[2], "1");
  EXPECT_EQ(sc.threadsPerCTA, 128);
  EXPECT_EQ(sc.dynamicSharedBytes, 0);
}

TEST(LauncherSidecar, Malformed) {
  std::string s = kFa2Sidecar;
  EXPECT_NE(parseError(s.substr(0, 100)).find("malformed sidecar JSON at "
                                              "offset"),
            std::string::npos);
  EXPECT_NE(parseError("[1, 2]").find("top level is not an object"),
            std::string::npos);
  EXPECT_NE(parseError(s + "x").find("trailing text"), std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"entry\": \"fa2\",", ""))
                .find("'entry' is missing"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"B * H\",", "")).find("'grid'"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"threads_per_cta\": 128",
                               "\"threads_per_cta\": 0"))
                .find("threads_per_cta"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"abi\":[\"f32\"]", "\"abi\":[\"f64\"]"))
                .find("param 'sm_scale': unsupported 'abi'"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"kind\":\"scalar\"", "\"kind\":\"x\""))
                .find("neither tensor nor scalar"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"name\":\"K\"", "\"name\":\"Q\""))
                .find("param 'Q' appears twice"),
            std::string::npos);
  EXPECT_NE(parseError(replace(s, "\"Nq\",64]", "\"Nq\",true]"))
                .find("neither a symbol nor a size"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Argument checks and packing
//===----------------------------------------------------------------------===//

struct Fa2Args {
  npy::Array q, k, v, o;
  std::vector<Arg> args;
  Fa2Args(int64_t B, int64_t H, int64_t Nq, int64_t Nk, int64_t D = 64)
      : q(npy::DType::F16, {B, H, Nq, D}), k(npy::DType::F16, {B, H, Nk, D}),
        v(npy::DType::F16, {B, H, Nk, D}), o(npy::DType::F16, {B, H, Nq, D}) {
    args = {{"Q", &q, 0, false},
            {"K", &k, 0, false},
            {"V", &v, 0, false},
            {"O", &o, 0, true},
            {"sm_scale", nullptr, 0.125, false}};
  }
};

std::string resolveError(const Sidecar &sc, const std::vector<Arg> &args) {
  Resolved r;
  std::string err;
  EXPECT_FALSE(resolve(sc, args, r, err));
  return err;
}

TEST(LauncherResolve, GridAndSymbols) {
  Sidecar sc = fa2();
  Fa2Args a(2, 3, 200, 136);
  Resolved r;
  std::string err;
  ASSERT_TRUE(resolve(sc, a.args, r, err)) << err;
  EXPECT_EQ(r.grid, (std::array<int64_t, 3>{{2, 6, 1}}));
  EXPECT_EQ(r.block, 128);
  EXPECT_EQ(r.symbols.at("Nq"), 200);
  EXPECT_EQ(r.symbols.at("Nk"), 136);
  // Args in any order.
  std::swap(a.args[0], a.args[4]);
  ASSERT_TRUE(resolve(sc, a.args, r, err)) << err;
  EXPECT_EQ(r.grid, (std::array<int64_t, 3>{{2, 6, 1}}));
}

TEST(LauncherResolve, ShapeErrors) {
  Sidecar sc = fa2();
  {
    Fa2Args a(2, 3, 200, 136);
    a.k = npy::Array(npy::DType::F16, {2, 4, 136, 64});
    EXPECT_EQ(resolveError(sc, a.args), "dim 'H' is 3 in Q but 4 in K");
  }
  {
    Fa2Args a(1, 1, 16, 16, 32);
    EXPECT_EQ(resolveError(sc, a.args),
              "argument 'Q' has size 32 in dim 3 but the kernel declares 64 "
              "(f16[B, H, Nq, 64])");
  }
  {
    Fa2Args a(1, 1, 16, 16);
    a.v = npy::Array(npy::DType::F16, {16, 64});
    EXPECT_EQ(resolveError(sc, a.args),
              "argument 'V' has rank 2 (shape (16, 64)) but the kernel "
              "declares f16[B, H, Nk, 64]");
  }
  {
    Fa2Args a(1, 1, 16, 16);
    a.o = npy::Array(npy::DType::F32, {1, 1, 16, 64});
    EXPECT_EQ(resolveError(sc, a.args),
              "argument 'O' is f32 but the kernel declares f16");
  }
  {
    Fa2Args a(1, 1, 16, 16);
    a.args.pop_back();
    EXPECT_EQ(resolveError(sc, a.args),
              "missing argument for kernel parameter 'sm_scale'");
  }
  {
    Fa2Args a(1, 1, 16, 16);
    a.args.push_back({"scale", nullptr, 1, false});
    EXPECT_EQ(resolveError(sc, a.args),
              "argument 'scale' matches no kernel parameter");
  }
  {
    Fa2Args a(1, 1, 16, 16);
    a.args[1].tensor = nullptr;
    EXPECT_NE(resolveError(sc, a.args).find("'K' is a tensor parameter"),
              std::string::npos);
  }
}

// bf16 tensors come as ml_dtypes.bfloat16 arrays ('<V2') or as their bits
// ('<u2'); the bits become bf16, so that they are written back as bf16.
TEST(LauncherResolve, BF16FromBits) {
  Sidecar sc = fa2();
  for (SidecarParam &p : sc.params)
    if (p.tensor)
      p.dtype = "bf16";
  Fa2Args a(1, 1, 16, 16);
  a.q.dtype = npy::DType::BF16;
  a.k.dtype = a.v.dtype = a.o.dtype = npy::DType::U16;
  Resolved r;
  std::string err;
  ASSERT_TRUE(resolve(sc, a.args, r, err)) << err;
  EXPECT_EQ(a.o.dtype, npy::DType::BF16);
  EXPECT_EQ(a.k.dtype, npy::DType::BF16);
  a.v.dtype = npy::DType::F16;
  EXPECT_EQ(resolveError(sc, a.args),
            "argument 'V' is f16 but the kernel declares bf16");
}

TEST(LauncherResolve, GridLimits) {
  Sidecar sc = fa2();
  sc.grid[1] = "B * H * 70000";
  Fa2Args a(1, 1, 16, 16);
  EXPECT_EQ(resolveError(sc, a.args),
            "grid.y = B * H * 70000 = 70000 is outside 0..65535");
  sc.grid[1] = "B * Z";
  EXPECT_EQ(resolveError(sc, a.args),
            "grid expression 'B * Z': unknown symbol 'Z'");
}

TEST(LauncherResolve, BoolTensors) {
  // A bool tensor's dtype is "bool": a numpy bool array, one byte per
  // element, and nothing else.
  Sidecar sc;
  std::string err;
  ASSERT_TRUE(parseSidecar(R"J({"entry":"k","arch":"sm_80","params":[
      {"name":"M","kind":"tensor","dtype":"bool","dims":["N"],"abi":["ptr","i32"]}],
      "grid":["N","1","1"],"threads_per_cta":32})J",
                           sc, err))
      << err;
  npy::Array mask(npy::DType::Bool, {5});
  std::vector<Arg> args{{"M", &mask, 0, false}};
  Resolved r;
  ASSERT_TRUE(resolve(sc, args, r, err)) << err;
  EXPECT_EQ(r.grid[0], 5);
  mask = npy::Array(npy::DType::I32, {5});
  EXPECT_EQ(resolveError(sc, args),
            "argument 'M' is i32 but the kernel declares bool");
}

template <typename T> T as(const std::vector<uint8_t> &b) {
  EXPECT_EQ(b.size(), sizeof(T));
  T v{};
  std::memcpy(&v, b.data(), sizeof(T) < b.size() ? sizeof(T) : b.size());
  return v;
}

TEST(LauncherPack, Fa2Abi) {
  Sidecar sc = fa2();
  Fa2Args a(2, 3, 200, 136);
  Resolved r;
  std::string err;
  ASSERT_TRUE(resolve(sc, a.args, r, err)) << err;
  std::vector<uint64_t> ptrs{0x1000, 0x2000, 0x3000, 0x4000, 0};
  std::vector<std::vector<uint8_t>> values;
  ASSERT_TRUE(packParams(sc, r, ptrs, values, err)) << err;
  ASSERT_EQ(values.size(), 21u); // 4 x (ptr + 4 dims) + sm_scale
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(as<uint64_t>(values[t * 5]), ptrs[t]);
    EXPECT_EQ(as<int32_t>(values[t * 5 + 1]), 2);
    EXPECT_EQ(as<int32_t>(values[t * 5 + 2]), 3);
    EXPECT_EQ(as<int32_t>(values[t * 5 + 3]), t == 0 || t == 3 ? 200 : 136);
    EXPECT_EQ(as<int32_t>(values[t * 5 + 4]), 64);
  }
  EXPECT_EQ(as<float>(values[20]), 0.125f);
}

TEST(LauncherPack, ScalarTypes) {
  Sidecar sc;
  std::string err;
  ASSERT_TRUE(parseSidecar(R"J({"entry":"k","arch":"sm_80","params":[
      {"name":"a","kind":"scalar","dtype":"i32","abi":["i32"]},
      {"name":"b","kind":"scalar","dtype":"i64","abi":["i64"]},
      {"name":"c","kind":"scalar","dtype":"f16","abi":["f16"]},
      {"name":"d","kind":"scalar","dtype":"i1","abi":["i1"]}],
      "grid":["a","1","1"],"threads_per_cta":32})J",
                           sc, err))
      << err;
  std::vector<Arg> args{{"a", nullptr, -5, false},
                        {"b", nullptr, 1e12, false},
                        {"c", nullptr, 1.5, false},
                        {"d", nullptr, 1, false}};
  Resolved r;
  // An i32 scalar sizes the grid; a negative grid is an error.
  EXPECT_EQ(resolveError(sc, args), "grid.x = a = -5 is outside 0..2147483647");
  args[0].scalar = 7;
  ASSERT_TRUE(resolve(sc, args, r, err)) << err;
  EXPECT_EQ(r.grid[0], 7);
  std::vector<std::vector<uint8_t>> values;
  ASSERT_TRUE(packParams(sc, r, {}, values, err)) << err;
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(as<int32_t>(values[0]), 7);
  EXPECT_EQ(as<int64_t>(values[1]), 1000000000000LL);
  EXPECT_EQ(as<uint16_t>(values[2]), 0x3e00); // 1.5 in binary16
  EXPECT_EQ(as<uint8_t>(values[3]), 1);
  args[3].scalar = 2;
  ASSERT_TRUE(resolve(sc, args, r, err)) << err;
  EXPECT_FALSE(packParams(sc, r, {}, values, err));
  EXPECT_NE(err.find("does not fit in i1"), std::string::npos) << err;
  // A finite float beyond f16's range is an error, not a silent inf.
  args[3].scalar = 1;
  args[2].scalar = 1e5;
  ASSERT_TRUE(resolve(sc, args, r, err)) << err;
  EXPECT_FALSE(packParams(sc, r, {}, values, err));
  EXPECT_NE(err.find("does not fit in f16"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Driver paths through the stub
//===----------------------------------------------------------------------===//

/// Sets $FLASHC_LIBCUDA and $FLASH_STUB_CUDA for one test.
class StubEnv {
public:
  StubEnv(const char *mode, const char *lib = FLASH_STUB_CUDA_PATH) {
    setenv(cuda::kLibCudaEnv, lib, 1);
    setenv("FLASH_STUB_CUDA", mode, 1);
  }
  ~StubEnv() {
    unsetenv(cuda::kLibCudaEnv);
    unsetenv("FLASH_STUB_CUDA");
  }
};

const char *kTinyPtx = R"J(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1,
	.param .f32 k_param_2
)
{
	ret;
}
)J";

const char *kTinySidecar = R"J({"entry":"k","arch":"sm_80","params":[
  {"name":"X","kind":"tensor","dtype":"f32","dims":["N"],"abi":["ptr","i32"]},
  {"name":"s","kind":"scalar","dtype":"f32","abi":["f32"]}],
  "grid":["cdiv(N, 4)","1","1"],"threads_per_cta":32,
  "shared_memory":{"static_bytes":0,"dynamic_bytes":DYN}})J";

Sidecar tiny(int64_t dynamicBytes = 0) {
  Sidecar sc;
  std::string err;
  EXPECT_TRUE(parseSidecar(replace(kTinySidecar, "DYN",
                                   std::to_string(dynamicBytes)),
                           sc, err))
      << err;
  return sc;
}

TEST(LauncherDriver, NoDriver) {
  StubEnv env("ok", "/nonexistent/libcuda.so.1");
  std::string err;
  EXPECT_EQ(cuda::Driver::open(err), nullptr);
  EXPECT_EQ(err.rfind("no CUDA driver (/nonexistent/libcuda.so.1 could not "
                      "be loaded: ",
                      0),
            0u)
      << err;
  EXPECT_NE(err.find("); --target=cuda needs a machine with an NVIDIA GPU "
                     "and driver"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

TEST(LauncherDriver, NoDevice) {
  {
    StubEnv env("no-device");
    std::string err;
    EXPECT_EQ(cuda::Driver::open(err), nullptr);
    EXPECT_EQ(err, "no usable CUDA device: cuInit failed: "
                   "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
                   "detected)");
  }
  {
    StubEnv env("zero-devices");
    std::string err;
    EXPECT_EQ(cuda::Driver::open(err), nullptr);
    EXPECT_EQ(err, "no usable CUDA device: the driver reports 0 devices");
  }
}

TEST(LauncherDriver, BadPtxGivesJitLog) {
  StubEnv env("bad-ptx");
  std::string err;
  auto driver = cuda::Driver::open(err);
  ASSERT_NE(driver, nullptr) << err;
  npy::Array x(npy::DType::F32, {8});
  std::vector<Arg> args{{"X", &x, 0, true}, {"s", nullptr, 2, false}};
  EXPECT_FALSE(launch(*driver, kTinyPtx, tiny(), args, err));
  EXPECT_EQ(err, "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX "
                 "JIT compilation failed): ptxas application ptx input, line "
                 "7; error   : stub rejects this PTX; ptxas fatal   : Ptx "
                 "assembly aborted due to errors");
}

TEST(LauncherDriver, LaunchAndSyncFailures) {
  npy::Array x(npy::DType::F32, {8});
  std::vector<Arg> args{{"X", &x, 0, true}, {"s", nullptr, 2, false}};
  {
    StubEnv env("launch-fails");
    std::string err;
    auto driver = cuda::Driver::open(err);
    ASSERT_NE(driver, nullptr) << err;
    testing::internal::CaptureStderr();
    EXPECT_FALSE(launch(*driver, kTinyPtx, tiny(), args, err));
    driver.reset();
    std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "
                   "(too many resources requested for launch)");
    // Everything freed on the error path.
    EXPECT_NE(log.find("live-allocations=0 live-modules=0"), std::string::npos)
        << log;
  }
  {
    StubEnv env("sync-fails");
    std::string err;
    auto driver = cuda::Driver::open(err);
    ASSERT_NE(driver, nullptr) << err;
    EXPECT_FALSE(launch(*driver, kTinyPtx, tiny(), args, err));
    EXPECT_EQ(err, "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (an "
                   "illegal memory access was encountered)");
  }
}

TEST(LauncherDriver, MissingEntry) {
  StubEnv env("ok");
  std::string err;
  auto driver = cuda::Driver::open(err);
  ASSERT_NE(driver, nullptr) << err;
  Sidecar sc = tiny();
  sc.entry = "other";
  npy::Array x(npy::DType::F32, {8});
  std::vector<Arg> args{{"X", &x, 0, true}, {"s", nullptr, 2, false}};
  EXPECT_FALSE(launch(*driver, kTinyPtx, sc, args, err));
  EXPECT_EQ(err, "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named "
                 "symbol not found) for kernel 'other'");
}

TEST(LauncherDriver, OkLaunchPacksAndCopies) {
  StubEnv env("ok");
  std::string err;
  auto driver = cuda::Driver::open(err);
  ASSERT_NE(driver, nullptr) << err;
  EXPECT_EQ(driver->deviceName(), "flashc stub device");
  EXPECT_EQ(driver->ccMajor(), 8);
  EXPECT_EQ(driver->ccMinor(), 0);
  npy::Array x(npy::DType::F32, {10});
  for (int i = 0; i < 10; ++i)
    x.set(i, i * 0.5);
  std::vector<Arg> args{{"X", &x, 0, true}, {"s", nullptr, 0.25, false}};
  LaunchResult result;
  testing::internal::CaptureStderr();
  bool ok = launch(*driver, kTinyPtx, tiny(), args, err, &result);
  driver.reset();
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(result.grid, (std::array<int64_t, 3>{{3, 1, 1}}));
  EXPECT_EQ(result.block, 32);
  // (bufN: the stub numbers allocations per process, across tests.)
  EXPECT_NE(log.find("stub-cuda: launch k grid=(3,1,1) block=(32,1,1) "
                     "shared=0 params=3\n"
                     "stub-cuda: param 0 .u64 = buf"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("+0\nstub-cuda: param 1 .u32 = 10\n"
                     "stub-cuda: param 2 .f32 = 0.25\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("live-allocations=0 live-modules=0"), std::string::npos)
      << log;
  // The stub runs nothing: the copy back returns what went in.
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(x.get(i), i * 0.5);
}

TEST(LauncherDriver, LargeDynamicSharedMemoryOptsIn) {
  StubEnv env("ok");
  std::string err;
  auto driver = cuda::Driver::open(err);
  ASSERT_NE(driver, nullptr) << err;
  npy::Array x(npy::DType::F32, {4});
  std::vector<Arg> args{{"X", &x, 0, false}, {"s", nullptr, 1, false}};
  testing::internal::CaptureStderr();
  bool ok = launch(*driver, kTinyPtx, tiny(98304), args, err);
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ok) << err;
  EXPECT_NE(log.find("cuFuncSetAttribute k attr=8 value=98304"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("shared=98304"), std::string::npos) << log;
  // 48 KiB and below: no opt-in.
  testing::internal::CaptureStderr();
  ok = launch(*driver, kTinyPtx, tiny(49152), args, err);
  log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(log.find("cuFuncSetAttribute"), std::string::npos) << log;
  EXPECT_NE(log.find("shared=49152"), std::string::npos) << log;
  // Above what the device allows: the driver's error, named.
  EXPECT_FALSE(launch(*driver, kTinyPtx, tiny(200000), args, err));
  EXPECT_NE(err.find("cuFuncSetAttribute failed: CUDA_ERROR_INVALID_VALUE "
                     "(invalid argument) (MAX_DYNAMIC_SHARED_SIZE_BYTES = "
                     "200000; the device allows 166912)"),
            std::string::npos)
      << err;
}

} // namespace

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

namespace {

/// A TMA kernel's sidecar: X (R x 64, f16) read through one map.
const char *kTmaSidecar = R"J({
  "entry": "tma_copy",
  "arch": "sm_90a",
  "params": [
    {"name":"X","kind":"tensor","dtype":"f16","dims":["R",64],"abi":["ptr","i32","i32"]}
  ],
  "tensor_maps": [
    {"name":"X.tmap","tensor":"X","box":[16,64],"swizzle":"128B","oob":"zero","abi":"tensormap"}
  ],
  "grid": ["1","1","1"],
  "threads_per_cta": 32
}
)J";

TEST(LauncherTensorMaps, ParsesAndRejects) {
  Sidecar sc;
  std::string err;
  ASSERT_TRUE(parseSidecar(kTmaSidecar, sc, err)) << err;
  ASSERT_EQ(sc.tensorMaps.size(), 1u);
  EXPECT_EQ(sc.tensorMaps[0].name, "X.tmap");
  EXPECT_EQ(sc.tensorMaps[0].tensor, "X");
  EXPECT_EQ(sc.tensorMaps[0].box, (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(sc.tensorMaps[0].swizzle, emu::TmaSwizzle::B128);
  EXPECT_EQ(parseError(replace(kTmaSidecar, "\"tensor\":\"X\"",
                               "\"tensor\":\"Y\"")),
            "malformed sidecar: tensor map 'X.tmap': names no tensor "
            "parameter ('Y')");
  EXPECT_EQ(parseError(replace(kTmaSidecar, "[16,64]", "[16]")),
            "malformed sidecar: tensor map 'X.tmap': a box of rank 1 for "
            "tensor 'X' of rank 2");
  EXPECT_EQ(parseError(replace(kTmaSidecar, "\"128B\"", "\"96B\"")),
            "malformed sidecar: tensor map 'X.tmap': swizzle '96B' is not "
            "none, 32B, 64B or 128B");
}

/// Packs kTmaSidecar for X of `rows` x `cols` at device pointer `ptr`,
/// encoding maps with the emulator's encoder.
bool packTma(int64_t rows, int64_t cols, uint64_t ptr,
             std::vector<std::vector<uint8_t>> &values, std::string &err) {
  Sidecar sc;
  EXPECT_TRUE(parseSidecar(kTmaSidecar, sc, err)) << err;
  if (cols != 64)
    sc.params[0].dims[1] = "C";
  npy::Array x(npy::DType::F16, {rows, cols});
  std::vector<Arg> args(1);
  args[0].name = "X";
  args[0].tensor = &x;
  Resolved r;
  if (!resolve(sc, args, r, err))
    return false;
  return packParams(sc, r, {ptr}, values, err,
                    [](const emu::TensorMap &m, uint8_t *out, std::string &) {
                      emu::encodeTensorMap(m, out);
                      return true;
                    });
}

TEST(LauncherTensorMaps, PacksTheMapAfterTheParams) {
  std::vector<std::vector<uint8_t>> values;
  std::string err;
  ASSERT_TRUE(packTma(20, 64, 0x10000, values, err)) << err;
  ASSERT_EQ(values.size(), 4u); // ptr, 2 dims, the map
  ASSERT_EQ(values[3].size(), 128u);
  auto map = emu::decodeTensorMap(values[3].data());
  ASSERT_TRUE(map.ok()) << map.error();
  // Dimension 0 of the map is the tensor's innermost.
  EXPECT_EQ(map->rank, 2);
  EXPECT_EQ(map->globalAddress, 0x10000u);
  EXPECT_EQ(map->globalDim[0], 64u);
  EXPECT_EQ(map->globalDim[1], 20u);
  EXPECT_EQ(map->globalStrides[0], 128u);
  EXPECT_EQ(map->boxDim[0], 64u);
  EXPECT_EQ(map->boxDim[1], 16u);
  EXPECT_EQ(map->type, emu::TmaDataType::F16);
  EXPECT_EQ(map->swizzle, emu::TmaSwizzle::B128);
}

TEST(LauncherTensorMaps, WhatAMapCannotExpress) {
  std::vector<std::vector<uint8_t>> values;
  std::string err;
  EXPECT_FALSE(packTma(20, 36, 0x10000, values, err));
  EXPECT_EQ(err, "tensor map 'X.tmap' of 'X': dimension 1 stride of 72 "
                 "bytes is not a multiple of 16");
  EXPECT_FALSE(packTma(20, 64, 0x10008, values, err));
  EXPECT_EQ(err, "tensor map 'X.tmap' of 'X': global address is not "
                 "16-byte aligned (byte offset 8 past a multiple of 16)");
}

TEST(LauncherTensorMaps, EncodesThroughTheDriver) {
  StubEnv env("ok");
  std::string err;
  auto driver = cuda::Driver::open(err);
  ASSERT_NE(driver, nullptr) << err;
  emu::TensorMap m;
  m.type = emu::TmaDataType::BF16;
  m.rank = 2;
  m.globalAddress = 0x20000;
  m.globalDim = {64, 20, 1, 1, 1};
  m.globalStrides = {128, 0, 0, 0};
  m.boxDim = {64, 16, 1, 1, 1};
  m.swizzle = emu::TmaSwizzle::B128;
  uint8_t out[128] = {};
  ASSERT_TRUE(driver->encodeTensorMap(m, out, err)) << err;
  EXPECT_EQ(std::string(reinterpret_cast<char *>(out)),
            "t9 r2 64/64/0 20/16/128 s3 o0");
  m.globalAddress = 0x20004; // the stub refuses it as the driver would
  EXPECT_FALSE(driver->encodeTensorMap(m, out, err));
  EXPECT_EQ(err, "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE "
                 "(invalid argument)");
}

} // namespace

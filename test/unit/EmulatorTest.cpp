//===- EmulatorTest.cpp - the SIMT-level executor and sanitizer -----------===//
//
// Small hand-written SIMT modules (one thread's program) run on every thread
// of a CTA in lockstep: control flow under masks, warp ops, shared memory,
// the sanitizer's errors and the stats. The last tests lower tile IR with
// convert-tile-to-simt and compare mma.sync results with a float64
// reference.
//
//===----------------------------------------------------------------------===//

#include "flashc/Emulator/Emulator.h"
#include "flashc/InitAllDialects.h"
#include "flashc/Conversion/Passes.h"
#include "flashc/Runtime/Float16.h"
#include "flashc/Support/SourceDiagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace flash;

namespace {

/// A gpu.func kernel with the given args and body (threads per CTA = `block`).
std::string kernel(const std::string &args, const std::string &body,
                   int block = 32, int smemBytes = 0) {
  std::string s = "module attributes {gpu.container_module} {\n"
                  "gpu.module @k {\n";
  if (smemBytes)
    s += "llvm.mlir.global internal @smem() {addr_space = 3 : i32, "
         "alignment = 16 : i64} : !llvm.array<" +
         std::to_string(smemBytes) + " x i8>\n";
  s += "gpu.func @t(" + args +
       ") kernel attributes {known_block_size = array<i32: " +
       std::to_string(block) + ", 1, 1>} {\n" + body +
       "\ngpu.return\n}\n}\n}\n";
  return s;
}

class EmulatorTest : public ::testing::Test {
public:
  EmulatorTest() {
    flash::loadAllDialects(ctx);
  }

  /// Parses `src`, runs its kernel on `grid`; buffers are bound to the
  /// pointer arguments in order, `ints` to the i32 arguments in order.
  /// Returns the error message ("" on success).
  std::string run(const std::string &src,
                  std::vector<std::vector<uint8_t>> bufs,
                  std::vector<int64_t> ints = {},
                  std::array<int64_t, 3> grid = {{1, 1, 1}}) {
    module = parseSourceString<ModuleOp>(src, ParserConfig(&ctx));
    if (!module)
      return "parse error";
    return launch(std::move(bufs), ints, grid);
  }

  std::string launch(std::vector<std::vector<uint8_t>> bufs,
                     std::vector<int64_t> ints,
                     std::array<int64_t, 3> grid = {{1, 1, 1}}) {
    gpu::GPUFuncOp f;
    std::string why;
    if (!emu::findSIMTKernel(*module, f, why))
      return why;
    emu::Kernel k;
    emu::Error err;
    if (!k.prepare(f, err))
      return formatError(err.loc, err.message);
    buffers.clear();
    for (auto &b : bufs)
      buffers.push_back({"buf" + std::to_string(buffers.size()), b});
    std::vector<emu::KernelArg> args;
    size_t nb = 0, ni = 0;
    for (BlockArgument a : f.getArguments()) {
      if (isa<LLVM::LLVMPointerType>(a.getType()))
        args.push_back(emu::KernelArg::ofBuffer(nb++));
      else if (a.getType().isF32())
        args.push_back(emu::KernelArg::ofFloat(ints.at(ni++)));
      else
        args.push_back(emu::KernelArg::ofInt(ints.at(ni++)));
    }
    stats = emu::Stats();
    if (!k.launch(grid, args, buffers, stats, err))
      return err.message.empty() ? "unknown error"
                                 : formatError(err.loc, err.message);
    return "";
  }

  template <typename T> std::vector<T> as(int i) const {
    std::vector<T> v(buffers[i].bytes.size() / sizeof(T));
    std::memcpy(v.data(), buffers[i].bytes.data(), v.size() * sizeof(T));
    return v;
  }
  template <typename T> static std::vector<uint8_t> bytes(std::vector<T> v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::vector<emu::GlobalBuffer> buffers;
  emu::Stats stats;
};

// Stores one i32 per thread: Y[tid] = value.
const char *kStoreTid = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %p = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
)";

TEST_F(EmulatorTest, ScfIfMergesByMask) {
  std::string body = std::string(kStoreTid) + R"(
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c100 = arith.constant 100 : i32
  %bit = arith.andi %tid, %c1 : i32
  %even = arith.cmpi eq, %bit, %c1 : i32
  %v = scf.if %even -> (i32) {
    %a = arith.addi %tid, %c100 : i32
    scf.yield %a : i32
  } else {
    %b = arith.muli %tid, %c2 : i32
    scf.yield %b : i32
  }
  llvm.store %v, %p : i32, !llvm.ptr<1>)";
  ASSERT_EQ(
      run(kernel("%Y: !llvm.ptr<1>", body, 64), {std::vector<uint8_t>(64 * 4)}),
      "");
  auto y = as<int32_t>(0);
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(y[t], t % 2 ? t + 100 : 2 * t) << t;
}

TEST_F(EmulatorTest, ScfForWithPerThreadBounds) {
  // Thread t sums 0..t-1 (t trips): threads leave the loop one by one.
  std::string body = std::string(kStoreTid) + R"(
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %s = scf.for %i = %c0 to %tid step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %n = arith.addi %acc, %i : i32
    scf.yield %n : i32
  }
  llvm.store %s, %p : i32, !llvm.ptr<1>)";
  ASSERT_EQ(
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(32 * 4)}),
      "");
  auto y = as<int32_t>(0);
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(y[t], t * (t - 1) / 2) << t;
}

TEST_F(EmulatorTest, IntegerWrapAndF16Rounding) {
  std::string body = std::string(kStoreTid) + R"(
  %big = arith.constant 2147483647 : i32
  %w = arith.addi %big, %tid : i32
  %f = arith.sitofp %tid : i32 to f16
  %third = arith.constant 0.333333343 : f16
  %m = arith.mulf %f, %third : f16
  %e = arith.extf %m : f16 to f32
  %q = llvm.getelementptr %Z[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %w, %p : i32, !llvm.ptr<1>
  llvm.store %e, %q : f32, !llvm.ptr<1>)";
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>, %Z: !llvm.ptr<1>", body, 32),
                {std::vector<uint8_t>(32 * 4), std::vector<uint8_t>(32 * 4)}),
            "");
  auto y = as<int32_t>(0);
  auto z = as<float>(1);
  double third = roundToHalf(0.333333343);
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(y[t], (int32_t)(uint32_t(2147483647u) + uint32_t(t))) << t;
    EXPECT_EQ(z[t], (float)roundToHalf(t * third)) << t;
  }
}

TEST_F(EmulatorTest, ShflButterflySumsAWarp) {
  std::string body = std::string(kStoreTid) + R"(
  %full = arith.constant -1 : i32
  %c31 = arith.constant 31 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %c16 = arith.constant 16 : i32
  %v0 = arith.sitofp %tid : i32 to f32
  %s1 = nvvm.shfl.sync bfly %full, %v0, %c1, %c31 : f32 -> f32
  %v1 = arith.addf %v0, %s1 : f32
  %s2 = nvvm.shfl.sync bfly %full, %v1, %c2, %c31 : f32 -> f32
  %v2 = arith.addf %v1, %s2 : f32
  %s4 = nvvm.shfl.sync bfly %full, %v2, %c4, %c31 : f32 -> f32
  %v4 = arith.addf %v2, %s4 : f32
  %s8 = nvvm.shfl.sync bfly %full, %v4, %c8, %c31 : f32 -> f32
  %v8 = arith.addf %v4, %s8 : f32
  %s16 = nvvm.shfl.sync bfly %full, %v8, %c16, %c31 : f32 -> f32
  %v16 = arith.addf %v8, %s16 : f32
  %q = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %v16, %q : f32, !llvm.ptr<1>)";
  ASSERT_EQ(
      run(kernel("%Y: !llvm.ptr<1>", body, 64), {std::vector<uint8_t>(64 * 4)}),
      "");
  auto y = as<float>(0);
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(y[t], t < 32 ? 496.f : 496.f + 32 * 32) << t;
  EXPECT_EQ(stats.shfl, 10); // 5 per warp
}

TEST_F(EmulatorTest, ShflUnderDivergenceIsAnError) {
  std::string body = std::string(kStoreTid) + R"(
  %full = arith.constant -1 : i32
  %c31 = arith.constant 31 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %lo = arith.cmpi ult, %tid, %c16 : i32
  scf.if %lo {
    %s = nvvm.shfl.sync bfly %full, %tid, %c1, %c31 : i32 -> i32
    llvm.store %s, %p : i32, !llvm.ptr<1>
  })";
  std::string err =
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: nvvm.shfl.sync: membermask 0xffffffff of warp 0 "
                     "names lanes 0xffff0000 that do not execute this "
                     "shfl.sync"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, DivergentBarrierIsAnError) {
  std::string body = std::string(kStoreTid) + R"(
  %c16 = arith.constant 16 : i32
  %lo = arith.cmpi ult, %tid, %c16 : i32
  scf.if %lo {
    nvvm.barrier0
  })";
  std::string err =
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: nvvm.barrier0: barrier reached by 16 of the "
                     "CTA's 32 threads"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, OutOfBoundsGlobalAccessIsReported) {
  std::string body = std::string(kStoreTid) + R"(
  %c1 = arith.constant 1 : i32
  %n = arith.addi %tid, %c1 : i32
  %q = llvm.getelementptr %Y[%n] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %v = llvm.load %q : !llvm.ptr<1> -> i32
  llvm.store %v, %p : i32, !llvm.ptr<1>)";
  std::string err =
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: llvm.load: out-of-bounds global read of 4 bytes "
                     "at byte offset 128 of 'buf0' (128 bytes"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("thread 31 (warp 0, lane 31)"), std::string::npos) << err;
}

TEST_F(EmulatorTest, InactiveThreadsDoNotTouchMemory) {
  // The same off-by-one load, guarded: thread 31 never executes it, and a
  // division by zero in an inactive thread is no error either.
  std::string body = std::string(kStoreTid) + R"(
  %c1 = arith.constant 1 : i32
  %c31 = arith.constant 31 : i32
  %c0 = arith.constant 0 : i32
  %n = arith.addi %tid, %c1 : i32
  %in = arith.cmpi slt, %tid, %c31 : i32
  scf.if %in {
    %q = llvm.getelementptr %Y[%n] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %d = arith.subi %c31, %tid : i32
    %x = arith.divsi %tid, %d : i32
    %v = llvm.load %q : !llvm.ptr<1> -> i32
    %s = arith.addi %v, %x : i32
    llvm.store %s, %p : i32, !llvm.ptr<1>
  })";
  std::vector<int32_t> in(32);
  for (int i = 0; i < 32; ++i)
    in[i] = 1000 * i;
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>", body, 32), {bytes(in)}), "");
  auto y = as<int32_t>(0);
  EXPECT_EQ(y[0], 1000 + 0);
  EXPECT_EQ(y[30], 31000 + 30);
  EXPECT_EQ(y[31], 31000);
}

// Every thread of two CTAs adds into one f32 and keeps the old value.
const char *kAtomicAdd = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %cta = nvvm.read.ptx.sreg.ctaid.x : i32
  %c64 = arith.constant 64 : i32
  %base = arith.muli %cta, %c64 : i32
  %i = arith.addi %base, %tid : i32
  %q = llvm.getelementptr %X[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %v = llvm.load %q : !llvm.ptr<1> -> f32
  %at = llvm.getelementptr %S[%off] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %old = llvm.atomicrmw fadd %at, %v syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, f32
  %r = llvm.getelementptr %Y[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %old, %r : f32, !llvm.ptr<1>)";

TEST_F(EmulatorTest, AtomicAddsInThreadOrderThenCTAOrder) {
  // Values of very different magnitudes, so that the order of the f32
  // additions shows in the result: it must be the documented one, threads
  // in order within a CTA, CTAs in grid order. Atomics by different threads
  // to one address are no race.
  std::vector<float> x(128);
  for (int i = 0; i < 128; ++i)
    x[i] = (i % 3 ? 1.0f / (i + 1) : 1000.0f * (i + 1)) * (i % 2 ? -1 : 1);
  float sum = 0.5f;
  std::vector<float> olds;
  for (float v : x) {
    olds.push_back(sum);
    sum += v;
  }
  std::string args = "%X: !llvm.ptr<1>, %S: !llvm.ptr<1>, %Y: !llvm.ptr<1>, "
                     "%off: i32";
  ASSERT_EQ(run(kernel(args, kAtomicAdd, 64),
                {bytes(x), bytes(std::vector<float>{0, 0.5f}),
                 std::vector<uint8_t>(128 * 4)},
                {1}, {{2, 1, 1}}),
            "");
  EXPECT_EQ(as<float>(1)[1], sum);
  EXPECT_EQ(as<float>(2), olds);
  EXPECT_EQ(stats.globalAtomics, 4); // 2 warps x 2 CTAs
  EXPECT_EQ(stats.globalBytesWritten, 128 * 4 + 128 * 4);
}

TEST_F(EmulatorTest, OutOfBoundsAtomicIsReported) {
  std::string args = "%X: !llvm.ptr<1>, %S: !llvm.ptr<1>, %Y: !llvm.ptr<1>, "
                     "%off: i32";
  std::string err = run(kernel(args, kAtomicAdd, 64),
                        {std::vector<uint8_t>(128 * 4),
                         std::vector<uint8_t>(8), std::vector<uint8_t>(128 * 4)},
                        {2}, {{2, 1, 1}});
  EXPECT_NE(err.find("error: llvm.atomicrmw: out-of-bounds global atomic add "
                     "of 4 bytes at byte offset 8 of 'buf1' (8 bytes"),
            std::string::npos)
      << err;
}

// Each thread of a CTA stores to its own element of Y, which every CTA
// writes; with `shift` = 1, lane l also stores to element l + 1 (after a
// barrier when `barrier` is set).
const char *kGlobalStores = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %p = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %v = arith.sitofp %tid : i32 to f32
  llvm.store %v, %p : f32, !llvm.ptr<1>
  %c1 = arith.constant 1 : i32
  %is = arith.cmpi eq, %shift, %c1 : i32
  scf.if %is {
    %nb = arith.cmpi eq, %barrier, %c1 : i32
    scf.if %nb {
      nvvm.barrier0
    }
    %j = arith.addi %tid, %c1 : i32
    %q = llvm.getelementptr %Y[%j] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    llvm.store %v, %q : f32, !llvm.ptr<1>
  }
)";

TEST_F(EmulatorTest, PlainGlobalStoresOfTwoCTAsRace) {
  std::string args = "%Y: !llvm.ptr<1>, %shift: i32, %barrier: i32";
  // One CTA, each thread its own element: clean.
  ASSERT_EQ(run(kernel(args, kGlobalStores, 32),
                {std::vector<uint8_t>(33 * 4)}, {0, 0}),
            "");
  // Two CTAs store to the same elements: a race, whichever value wins.
  std::string err = run(kernel(args, kGlobalStores, 32),
                        {std::vector<uint8_t>(33 * 4)}, {0, 0}, {{2, 1, 1}});
  EXPECT_NE(err.find("error: llvm.store: global-memory race: thread 0 (warp "
                     "0, lane 0) writes byte 0 of 'buf0' that thread 0 (warp "
                     "0, lane 0) of CTA (0, 0, 0) wrote"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, PlainGlobalStoresOfOneCTANeedABarrier) {
  std::string args = "%Y: !llvm.ptr<1>, %shift: i32, %barrier: i32";
  // Thread l + 1's element written again by thread l: a race without a
  // barrier between, none with one.
  std::string err = run(kernel(args, kGlobalStores, 32),
                        {std::vector<uint8_t>(33 * 4)}, {1, 0});
  EXPECT_NE(err.find("global-memory race: thread 0 (warp 0, lane 0) writes "
                     "byte 4 of 'buf0' that thread 1 (warp 0, lane 1) of CTA "
                     "(0, 0, 0) wrote"),
            std::string::npos)
      << err;
  EXPECT_EQ(run(kernel(args, kGlobalStores, 32),
                {std::vector<uint8_t>(33 * 4)}, {1, 1}),
            "");
}

// Each thread adds 1 to its element of Y, atomically, except that with
// `mode` 1 CTA 0 stores instead, with `mode` 2 the other CTAs do.
const char *kStoreOrAdd = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %cta = nvvm.read.ptx.sreg.ctaid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %one = arith.constant 1.0 : f32
  %p = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %first = arith.cmpi eq, %cta, %c0 : i32
  %later = arith.cmpi ne, %cta, %c0 : i32
  %m1 = arith.cmpi eq, %mode, %c1 : i32
  %m2 = arith.cmpi eq, %mode, %c2 : i32
  %s1 = arith.andi %m1, %first : i1
  %s2 = arith.andi %m2, %later : i1
  %plain = arith.ori %s1, %s2 : i1
  scf.if %plain {
    llvm.store %one, %p : f32, !llvm.ptr<1>
  } else {
    %old = llvm.atomicrmw fadd %p, %one syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, f32
  }
)";

TEST_F(EmulatorTest, AtomicsRaceOnlyWithPlainStores) {
  std::string args = "%Y: !llvm.ptr<1>, %mode: i32";
  ASSERT_EQ(run(kernel(args, kStoreOrAdd, 32), {std::vector<uint8_t>(32 * 4)},
                {0}, {{3, 1, 1}}),
            "");
  EXPECT_EQ(as<float>(0), std::vector<float>(32, 3.0f));
  std::string err = run(kernel(args, kStoreOrAdd, 32),
                        {std::vector<uint8_t>(32 * 4)}, {1}, {{3, 1, 1}});
  EXPECT_NE(err.find("global-memory race: thread 0 (warp 0, lane 0) "
                     "atomically adds to byte 0 of 'buf0' that thread 0 (warp "
                     "0, lane 0) of CTA (0, 0, 0) wrote"),
            std::string::npos)
      << err;
  err = run(kernel(args, kStoreOrAdd, 32), {std::vector<uint8_t>(32 * 4)},
            {2}, {{3, 1, 1}});
  EXPECT_NE(err.find("global-memory race: thread 0 (warp 0, lane 0) writes "
                     "byte 0 of 'buf0' that thread 0 (warp 0, lane 0) of CTA "
                     "(0, 0, 0) added to"),
            std::string::npos)
      << err;
}

const char *kSmemPtr = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %base = llvm.mlir.addressof @smem : !llvm.ptr<3>
  %c1 = arith.constant 1 : i32
  %c31 = arith.constant 31 : i32
  %mine = llvm.getelementptr %base[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %t1 = arith.addi %tid, %c1 : i32
  %nb = arith.andi %t1, %c31 : i32
  %theirs = llvm.getelementptr %base[%nb] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %v = arith.sitofp %tid : i32 to f32
  %out = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
)";

TEST_F(EmulatorTest, SharedMemoryWithBarrierRunsClean) {
  std::string body = std::string(kSmemPtr) + R"(
  llvm.store %v, %mine : f32, !llvm.ptr<3>
  nvvm.barrier0
  %r = llvm.load %theirs : !llvm.ptr<3> -> f32
  llvm.store %r, %out : f32, !llvm.ptr<1>)";
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>", body, 32, 128),
                {std::vector<uint8_t>(128)}),
            "");
  auto y = as<float>(0);
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(y[t], float((t + 1) % 32));
  EXPECT_EQ(stats.barriers, 1);
  EXPECT_EQ(stats.sharedBytesWritten, 128);
  EXPECT_EQ(stats.sharedBytesRead, 128);
  EXPECT_EQ(stats.bankConflicts, 0);
}

TEST_F(EmulatorTest, MissingBarrierIsARace) {
  std::string body = std::string(kSmemPtr) + R"(
  llvm.store %v, %mine : f32, !llvm.ptr<3>
  %r = llvm.load %theirs : !llvm.ptr<3> -> f32
  llvm.store %r, %out : f32, !llvm.ptr<1>)";
  std::string err = run(kernel("%Y: !llvm.ptr<1>", body, 32, 128),
                        {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: llvm.load: shared-memory race: thread 0 (warp 0, "
                     "lane 0) reads byte 0x4 that thread 1 (warp 0, lane 1) "
                     "wrote since the last barrier"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, OverwriteBeforeOthersReadIsARace) {
  // Write-after-read: a second store to the buffer without a barrier after
  // the other threads' reads.
  std::string body = std::string(kSmemPtr) + R"(
  llvm.store %v, %mine : f32, !llvm.ptr<3>
  nvvm.barrier0
  %r = llvm.load %theirs : !llvm.ptr<3> -> f32
  llvm.store %r, %mine : f32, !llvm.ptr<3>
  llvm.store %r, %out : f32, !llvm.ptr<1>)";
  std::string err = run(kernel("%Y: !llvm.ptr<1>", body, 32, 128),
                        {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: llvm.store: shared-memory race: thread 0 (warp 0, "
                     "lane 0) writes byte 0x0 that thread 31 (warp 0, lane 31) "
                     "read since the last barrier"),
            std::string::npos)
      << err;
}

// A producer warp (threads 32..63) copies X into shared memory with cp.async
// and arrives on an mbarrier of count 32 with cp.async.mbarrier.arrive.noinc;
// the consumer warp waits on it and copies shared memory to Y (readFirst:
// reads before its wait).
std::string cpAsyncProducer(const std::string &noinc, bool readFirst) {
  std::string read = R"(
    %p = llvm.getelementptr %base[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
    %v = llvm.load %p : !llvm.ptr<3> -> i32
    %o = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    llvm.store %v, %o : i32, !llvm.ptr<1>)";
  std::string waitOp = R"(
    nvvm.mbarrier.try_wait.parity %bar, %c0, %ticks : !llvm.ptr<3>, i32, i32)";
  return std::string(R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %ticks = arith.constant 1000 : i32
  %base = llvm.mlir.addressof @smem : !llvm.ptr<3>
  %bar = llvm.getelementptr %base[256] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %first = arith.cmpi eq, %tid, %c0 : i32
  scf.if %first {
    nvvm.mbarrier.init %bar, %c32 : !llvm.ptr<3>, i32
  }
  nvvm.barrier0
  %producer = arith.cmpi uge, %tid, %c32 : i32
  scf.if %producer {
    %i = arith.subi %tid, %c32 : i32
    %src = llvm.getelementptr %X[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %dst = llvm.getelementptr %base[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
    nvvm.cp.async.shared.global %dst, %src, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    nvvm.cp.async.mbarrier.arrive %bar )") +
         noinc + R"( : !llvm.ptr<3>
  } else {)" +
         (readFirst ? read + waitOp : waitOp + read) + R"(
  } {tile.warp_roles})";
}

TEST_F(EmulatorTest, CpAsyncArriveFiresWhenTheCopiesLand) {
  std::vector<int32_t> x(32);
  for (int i = 0; i < 32; ++i)
    x[i] = 100 + i;
  ASSERT_EQ(run(kernel("%X: !llvm.ptr<1>, %Y: !llvm.ptr<1>",
                       cpAsyncProducer("{noinc = true}", false), 64, 264),
                {bytes(x), std::vector<uint8_t>(64 * 4)}),
            "");
  auto y = as<int32_t>(1);
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(y[t], 100 + t) << t;
  EXPECT_EQ(stats.cpAsyncArrives, 32);
}

TEST_F(EmulatorTest, CpAsyncArriveLeavesTheCopiesInFlight) {
  // A read of the slot before the wait: the copies land only when a wait on
  // the barrier needs them.
  std::vector<int32_t> x(32, 7);
  std::string err = run(kernel("%X: !llvm.ptr<1>, %Y: !llvm.ptr<1>",
                               cpAsyncProducer("{noinc = true}", true), 64, 264),
                        {bytes(x), std::vector<uint8_t>(64 * 4)});
  EXPECT_NE(err.find("error: llvm.load: read of shared byte 0x0 by thread 0 "
                     "(warp 0, lane 0) while a cp.async to it is still in "
                     "flight"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, CpAsyncArriveWithoutNoincExpectsOneMoreArrival) {
  // Each thread's arrive adds one to the count, its own arrival takes it
  // back: 32 arrivals stay pending.
  std::vector<int32_t> x(32, 7);
  std::string err = run(kernel("%X: !llvm.ptr<1>, %Y: !llvm.ptr<1>",
                               cpAsyncProducer("", false), 64, 264),
                        {bytes(x), std::vector<uint8_t>(64 * 4)});
  EXPECT_NE(err.find("deadlock: thread 0 (warp 0, lane 0) waits for phase 0 "
                     "of the mbarrier at shared 0x100, which cannot complete: "
                     "32 of 32 arrivals pending"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, UninitialisedSharedReadIsReported) {
  std::string body = std::string(kSmemPtr) + R"(
  %r = llvm.load %mine : !llvm.ptr<3> -> f32
  llvm.store %r, %out : f32, !llvm.ptr<1>)";
  std::string err = run(kernel("%Y: !llvm.ptr<1>", body, 32, 128),
                        {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: llvm.load: shared read of uninitialised byte"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, OutOfBoundsSharedAccessIsReported) {
  std::string body = std::string(kSmemPtr) + R"(
  llvm.store %v, %mine : f32, !llvm.ptr<3>)";
  std::string err = run(kernel("%Y: !llvm.ptr<1>", body, 64, 128),
                        {std::vector<uint8_t>(256)});
  EXPECT_NE(err.find("error: llvm.store: out-of-bounds shared write of 4 bytes "
                     "at byte offset 128 (shared memory is 128 bytes"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, BankConflictsOfAColumnAccess) {
  // Lane l stores f32 at word 32 * l: all 32 lanes in bank 0, 32 distinct
  // words: 31 extra wavefronts. Lane l at word l: none.
  std::string body = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %base = llvm.mlir.addressof @smem : !llvm.ptr<3>
  %c32 = arith.constant 32 : i32
  %w = arith.muli %tid, %c32 : i32
  %col = llvm.getelementptr %base[%w] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %v = arith.sitofp %tid : i32 to f32
  llvm.store %v, %col : f32, !llvm.ptr<3>
  nvvm.barrier0
  %row = llvm.getelementptr %base[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  llvm.store %v, %row : f32, !llvm.ptr<3>)";
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>", body, 32, 4096),
                {std::vector<uint8_t>(4)}),
            "");
  EXPECT_EQ(stats.bankConflicts, 31);
  EXPECT_EQ(stats.sharedRequests, 2);
}

TEST_F(EmulatorTest, GridAndBlockIds) {
  std::string body = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %bx = nvvm.read.ptx.sreg.ctaid.x : i32
  %by = nvvm.read.ptx.sreg.ctaid.y : i32
  %nx = nvvm.read.ptx.sreg.nctaid.x : i32
  %c64 = arith.constant 64 : i32
  %row = arith.muli %by, %nx : i32
  %cta = arith.addi %row, %bx : i32
  %b0 = arith.muli %cta, %c64 : i32
  %i = arith.addi %b0, %tid : i32
  %p = llvm.getelementptr %Y[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %v = arith.muli %cta, %c64 : i32
  llvm.store %i, %p : i32, !llvm.ptr<1>)";
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>", body, 64),
                {std::vector<uint8_t>(6 * 64 * 4)}, {}, {{3, 2, 1}}),
            "");
  auto y = as<int32_t>(0);
  for (int i = 0; i < 6 * 64; ++i)
    EXPECT_EQ(y[i], i);
  EXPECT_EQ(stats.ctas, 6);
}

TEST_F(EmulatorTest, UnsupportedOpFailsAtPrepare) {
  std::string body = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %f = arith.sitofp %tid : i32 to f32
  %x = math.cbrt %f : f32)";
  std::string err =
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(4)});
  EXPECT_NE(err.find("error: math.cbrt: op is not supported by the "
                     "emulator"),
            std::string::npos)
      << err;
}

TEST_F(EmulatorTest, LdMatrixX4AndTrans) {
  // Shared holds 4 matrices of 8x8 f16, element (m, r, c) = 64m + 8r + c at
  // byte 128m + 16r + 2c (written by lane l as 16 bytes: row l % 8 of matrix
  // l / 8). Lane l supplies the address of that same row. Y[m][l] receives
  // register m of lane l; Z the .trans variant.
  std::string body = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %base = llvm.mlir.addressof @smem : !llvm.ptr<3>
  %c8 = arith.constant 8 : i32
  %c32 = arith.constant 32 : i32
  %row0 = arith.muli %tid, %c8 : i32
  %rowp = llvm.getelementptr %base[%row0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
  %e0 = arith.sitofp %row0 : i32 to f16
  %v0 = vector.broadcast %e0 : f16 to vector<8xf16>
  %steps = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : vector<8xf16>
  %v = arith.addf %v0, %steps : vector<8xf16>
  llvm.store %v, %rowp {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
  nvvm.barrier0
  %r = nvvm.ldmatrix %rowp {num = 4 : i32, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  %t = nvvm.ldmatrix %rowp {num = 4 : i32, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  %r0 = llvm.extractvalue %r[0] : !llvm.struct<(i32, i32, i32, i32)>
  %r3 = llvm.extractvalue %r[3] : !llvm.struct<(i32, i32, i32, i32)>
  %t1 = llvm.extractvalue %t[1] : !llvm.struct<(i32, i32, i32, i32)>
  %i3 = arith.addi %tid, %c32 : i32
  %py0 = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %py3 = llvm.getelementptr %Y[%i3] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %pz1 = llvm.getelementptr %Z[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  llvm.store %r0, %py0 : i32, !llvm.ptr<1>
  llvm.store %r3, %py3 : i32, !llvm.ptr<1>
  llvm.store %t1, %pz1 : i32, !llvm.ptr<1>)";
  ASSERT_EQ(run(kernel("%Y: !llvm.ptr<1>, %Z: !llvm.ptr<1>", body, 32, 512),
                {std::vector<uint8_t>(64 * 4), std::vector<uint8_t>(32 * 4)}),
            "");
  auto y = as<uint32_t>(0);
  auto z = as<uint32_t>(1);
  auto lo = [](uint32_t v) { return halfBitsToDouble(v & 0xffff); };
  auto hi = [](uint32_t v) { return halfBitsToDouble(v >> 16); };
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, q = l % 4;
    for (int m : {0, 3}) {
      uint32_t v = y[(m == 0 ? 0 : 32) + l];
      EXPECT_EQ(lo(v), 64 * m + 8 * g + 2 * q) << l;
      EXPECT_EQ(hi(v), 64 * m + 8 * g + 2 * q + 1) << l;
    }
    // .trans, matrix 1: {M[2q][g], M[2q + 1][g]}.
    EXPECT_EQ(lo(z[l]), 64 + 8 * (2 * q) + g) << l;
    EXPECT_EQ(hi(z[l]), 64 + 8 * (2 * q + 1) + g) << l;
  }
  EXPECT_EQ(stats.ldmatrix, 2);
  EXPECT_EQ(stats.bankConflicts, 0);
}

TEST_F(EmulatorTest, MmaUnderDivergenceIsAnError) {
  std::string body = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c8 = arith.constant 8 : i32
  %h = arith.constant dense<1.0> : vector<2xf16>
  %f = arith.constant 0.0 : f32
  %lo = arith.cmpi ult, %tid, %c8 : i32
  scf.if %lo {
    %d = nvvm.mma.sync A[%h, %h, %h, %h] B[%h, %h] C[%f, %f, %f, %f] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
    %p = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    llvm.store %d0, %p : f32, !llvm.ptr<1>
  })";
  std::string err =
      run(kernel("%Y: !llvm.ptr<1>", body, 32), {std::vector<uint8_t>(128)});
  EXPECT_NE(err.find("error: nvvm.mma.sync: "), std::string::npos) << err;
  EXPECT_NE(err.find("active lanes 0xff"), std::string::npos) << err;
  // Converged, every lane gets 16 (sixteen products of 1 * 1).
  std::string ok = R"(
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %h = arith.constant dense<1.0> : vector<2xf16>
  %f = arith.constant 0.0 : f32
  %d = nvvm.mma.sync A[%h, %h, %h, %h] B[%h, %h] C[%f, %f, %f, %f] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
  %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
  %p = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %d3, %p : f32, !llvm.ptr<1>)";
  ASSERT_EQ(
      run(kernel("%Y: !llvm.ptr<1>", ok, 32), {std::vector<uint8_t>(128)}), "");
  for (float v : as<float>(0))
    EXPECT_EQ(v, 16.f);
}

//===----------------------------------------------------------------------===//
// Lowered tile IR: mma.sync through convert-tile-to-simt
//===----------------------------------------------------------------------===//

class LoweredTest : public EmulatorTest {
public:
  std::string lowerAndRun(const std::string &tileIR,
                          std::vector<std::vector<uint8_t>> bufs,
                          std::vector<int64_t> ints) {
    module = parseSourceString<ModuleOp>(tileIR, ParserConfig(&ctx));
    if (!module)
      return "parse error";
    PassManager pm(&ctx);
    pm.addPass(createConvertTileToSIMT());
    if (failed(pm.run(*module)))
      return "lowering failed";
    return launch(std::move(bufs), ints);
  }
};

/// C = A(MxK) * B(KxN) in one CTA, f16 (or bf16) in, f32 out, against float64.
void checkMatmul(LoweredTest &t, const std::string &warps,
                 const std::string &values, int M, int N, int K, bool bf16) {
  std::string et = bf16 ? "bf16" : "f16";
  std::string ms = std::to_string(M), ns = std::to_string(N),
              ks = std::to_string(K);
  std::string src =
      "#mma = #tile.mma<warps = " + warps + ", values = " + values +
      ">\n"
      "#A = #tile.dot_op<0, #mma>\n#B = #tile.dot_op<1, #mma>\n"
      "func.func @mm(%A: !tile.global<[" +
      ms + ", " + ks + "], " + et +
      "> {tile.name = \"A\"}, %B: !tile.global<[" + ks + ", " + ns + "], " +
      et + "> {tile.name = \"B\"}, %C: !tile.global<[" + ms + ", " + ns +
      "], f32> {tile.name = \"C\"}) attributes "
      "{tile.num_warps = NW : i32} {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : " +
      et + " : !tile.global<[" + ms + ", " + ks + "], " + et + "> -> tensor<" +
      ms + "x" + ks + "x" + et +
      ", #A>\n"
      "  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : " +
      et + " : !tile.global<[" + ks + ", " + ns + "], " + et + "> -> tensor<" +
      ks + "x" + ns + "x" + et +
      ", #B>\n"
      "  %z = arith.constant dense<0.0> : tensor<" +
      ms + "x" + ns +
      "xf32, #mma>\n"
      "  %c = tile.mma %a, %b, %z : tensor<" +
      ms + "x" + ks + "x" + et + ", #A>, tensor<" + ks + "x" + ns + "x" + et +
      ", #B> -> tensor<" + ms + "x" + ns +
      "xf32, #mma>\n"
      "  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<" +
      ms + "x" + ns + "xf32, #mma> -> !tile.global<[" + ms + ", " + ns +
      "], f32>\n  return\n}\n";
  // warps = [w, 1, 1]
  int nw = warps[1] - '0';
  src.replace(src.find("NW"), 2, std::to_string(nw));
  std::mt19937 rng(42);
  std::normal_distribution<double> dist;
  std::vector<uint16_t> a(M * K), b(K * N);
  std::vector<double> ad(M * K), bd(K * N);
  for (int i = 0; i < M * K; ++i) {
    a[i] = bf16 ? doubleToBF16Bits(dist(rng)) : doubleToHalfBits(dist(rng));
    ad[i] = bf16 ? bf16BitsToDouble(a[i]) : halfBitsToDouble(a[i]);
  }
  for (int i = 0; i < K * N; ++i) {
    b[i] = bf16 ? doubleToBF16Bits(dist(rng)) : doubleToHalfBits(dist(rng));
    bd[i] = bf16 ? bf16BitsToDouble(b[i]) : halfBitsToDouble(b[i]);
  }
  std::vector<float> nan(M * N, std::nanf(""));
  ASSERT_EQ(t.lowerAndRun(src,
                          {EmulatorTest::bytes(a), EmulatorTest::bytes(b),
                           EmulatorTest::bytes(nan)},
                          {M, K, K, N, M, N}),
            "");
  auto c = t.as<float>(2);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k)
        ref += ad[i * K + k] * bd[k * N + j];
      // Exact products, one f32 rounding per mma (K / 16 of them).
      EXPECT_NEAR(c[i * N + j], ref, 1e-5 * (K / 16) * (1 + std::fabs(ref)))
          << i << "," << j;
    }
}

TEST_F(LoweredTest, MmaF16OneWarp) {
  checkMatmul(*this, "[1, 1, 1]", "[1, 1, 1]", 16, 8, 16, false);
  EXPECT_EQ(stats.mma, 1);
}

TEST_F(LoweredTest, MmaF16FourWarpsRegisterRepeats) {
  checkMatmul(*this, "[4, 1, 1]", "[2, 1, 1]", 128, 64, 64, false);
  EXPECT_EQ(stats.mma, 4 * 64); // 2 m-atoms x 8 n-atoms x 4 k-steps per warp
}

TEST_F(LoweredTest, MmaBF16) {
  checkMatmul(*this, "[2, 1, 1]", "[1, 1, 1]", 32, 16, 32, true);
  EXPECT_EQ(stats.mma, 2 * 2 * 2);
}

} // namespace

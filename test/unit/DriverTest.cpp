//===- DriverTest.cpp - flash::Compilation from several threads at once ---===//
//
// Compiles fa2 with different constants, archs and switches from several
// threads at once; each PTX must be byte for byte the one a sequential
// compile gives, and no compile may change LLVM's process-global options
// (the NVPTX back end's --disable-lsr among them).
//
//===----------------------------------------------------------------------===//
#include "flashc/Driver/Compilation.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace flash;

namespace {

struct Job {
  std::string name;
  std::vector<Define> defines;
  std::string arch;
  CompileOptions options;
};

/// fa2's PTX for `job`, or the diagnostics prefixed by "FAILED".
std::string compileFa2(const Job &job) {
  auto source = llvm::MemoryBuffer::getFile(FLASH_KERNELS_DIR "/fa2.tile",
                                            /*IsText=*/true);
  if (!source)
    return "FAILED: cannot read fa2.tile";
  CompileInput input;
  input.source = std::move(*source);
  input.defines = job.defines;
  input.arch = job.arch;
  input.options = job.options;
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  Compilation compilation(std::move(input), os);
  std::string ptx, sidecar;
  if (compilation.emitMachineCode(Level::PTX, ptx, sidecar) != 0)
    return "FAILED: " + diagnostics;
  return ptx;
}

std::vector<Job> jobs() {
  CompileOptions lean;
  lean.leanMasks = true;
  CompileOptions unsplit;
  unsplit.splitMaskedLoops = false;
  unsplit.deferLoopSums = false;
  CompileOptions withLSR; // LSR in a register-bound kernel too
  withLSR.loopStrengthReduction = true;
  CompileOptions unfenced;
  unfenced.fenceLoopExits = false;
  unfenced.sinkAccumulatorScales = false;
  return {
      // Register-bound (Q re-read in the loop): LSR skipped.
      {"d128 sm_80", {{"HEAD_DIM", "128"}, {"BLOCK_M", "128"}}, "sm_80", {}},
      {"d128 sm_80 LSR", {{"HEAD_DIM", "128"}, {"BLOCK_M", "128"}}, "sm_80",
       withLSR},
      {"d128 causal sm_90 unfenced",
       {{"HEAD_DIM", "128"}, {"CAUSAL", "true"}},
       "sm_90",
       unfenced},
      // Not register-bound: LSR runs.
      {"d64 causal sm_90", {{"HEAD_DIM", "64"}, {"CAUSAL", "true"}}, "sm_90",
       {}},
      {"d64 causal sm_80 lean", {{"HEAD_DIM", "64"}, {"CAUSAL", "true"}},
       "sm_80", lean},
      {"d64 causal sm_86 unsplit", {{"HEAD_DIM", "64"}, {"CAUSAL", "true"}},
       "sm_86", unsplit},
  };
}

bool lsrDisabledGlobally(unsigned &occurrences) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("disable-lsr");
  if (it == options.end()) {
    occurrences = 0;
    return false;
  }
  occurrences = it->second->getNumOccurrences();
  return static_cast<llvm::cl::opt<bool> *>(it->second)->getValue();
}

TEST(DriverTest, ParallelCompilesGiveTheSequentialPTX) {
  std::vector<Job> all = jobs();
  std::vector<std::string> sequential;
  for (const Job &job : all) {
    sequential.push_back(compileFa2(job));
    ASSERT_NE(sequential.back().rfind("FAILED", 0), 0u)
        << job.name << ": " << sequential.back();
  }
  // The switches reach each compile: LSR changes the register-bound PTX.
  EXPECT_NE(sequential[0], sequential[1]);

  // Every job twice, all at once.
  std::vector<std::string> parallel(2 * all.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < parallel.size(); ++i)
    threads.emplace_back(
        [&, i] { parallel[i] = compileFa2(all[i % all.size()]); });
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < parallel.size(); ++i)
    EXPECT_TRUE(parallel[i] == sequential[i % all.size()])
        << all[i % all.size()].name << " differs when compiled in parallel";

  // No compile wrote LLVM's global --disable-lsr.
  unsigned occurrences = 0;
  EXPECT_FALSE(lsrDisabledGlobally(occurrences));
  EXPECT_EQ(occurrences, 0u);
}

TEST(DriverTest, LowerToOnlyGoesForward) {
  auto source = llvm::MemoryBuffer::getFile(FLASH_KERNELS_DIR "/fa2.tile",
                                            /*IsText=*/true);
  ASSERT_TRUE(source);
  CompileInput input;
  input.source = std::move(*source);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  Compilation compilation(std::move(input), os);
  ASSERT_EQ(compilation.lowerTo(Level::Tile), 0) << diagnostics;
  EXPECT_EQ(compilation.level(), Level::Tile);
  ASSERT_EQ(compilation.lowerTo(Level::SIMT), 0) << diagnostics;
  EXPECT_EQ(compilation.level(), Level::SIMT);
  // Lower levels are behind it: nothing runs again.
  std::string simt;
  llvm::raw_string_ostream simtOS(simt);
  compilation.module()->print(simtOS);
  EXPECT_EQ(compilation.lowerTo(Level::Layout), 0);
  std::string again;
  llvm::raw_string_ostream againOS(again);
  compilation.module()->print(againOS);
  EXPECT_EQ(simt, again);
}

TEST(DriverTest, UnsupportedArchIsAUserError) {
  CompileInput input;
  input.source = llvm::MemoryBuffer::getMemBufferCopy(
      "kernel k(X: tensor<f32>[N]) { }\n", "k.tile");
  input.arch = "sm_70";
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  Compilation compilation(std::move(input), os);
  EXPECT_EQ(compilation.lowerTo(Level::Tile), 1);
  EXPECT_NE(diagnostics.find("unsupported arch 'sm_70'"), std::string::npos)
      << diagnostics;
}

} // namespace

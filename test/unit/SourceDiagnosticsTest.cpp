//===- SourceDiagnosticsTest.cpp - clang-style diagnostics at locations ---===//

#include "flashc/Support/SourceDiagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace mlir;
using namespace flash;

namespace {

class SourceDiagnosticsTest : public testing::Test {
protected:
  SourceDiagnosticsTest() {
    path = testing::TempDir() + "flash_diag_" + std::to_string(getpid()) +
           ".tile";
    std::ofstream(path) << "kernel k() {\n  let x = a + b;\n  f(x);\n}\n";
  }
  ~SourceDiagnosticsTest() override { std::remove(path.c_str()); }

  Location at(const std::string &file, unsigned line, unsigned col) {
    return FileLineColLoc::get(&ctx, file, line, col);
  }

  MLIRContext ctx;
  std::string path;
  std::string out;
  llvm::raw_string_ostream os{out};
};

TEST_F(SourceDiagnosticsTest, LineAndCaretFromDisk) {
  SourceDiagnostics diags(&ctx, os);
  emitError(at(path, 2, 13)) << "shape mismatch";
  EXPECT_EQ(out, path + ":2:13: error: shape mismatch\n"
                        "  let x = a + b;\n"
                        "            ^\n");
  EXPECT_EQ(diags.numErrors(), 1u);
}

// A call-site location (code inlined from a function) shows the callee's
// line, then the call as a note.
TEST_F(SourceDiagnosticsTest, CallSitesAreNotes) {
  SourceDiagnostics diags(&ctx, os);
  emitError(CallSiteLoc::get(at(path, 2, 11), at(path, 3, 3))) << "bad";
  EXPECT_EQ(out, path + ":2:11: error: bad\n"
                        "  let x = a + b;\n"
                        "          ^\n" +
                     path + ":3:3: note: called from\n"
                            "  f(x);\n"
                            "  ^\n");
}

// The caller's buffers serve files that are not on disk (stdin).
TEST_F(SourceDiagnosticsTest, BuffersOfTheSourceManager) {
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer("a\n  b / c\n", "<stdin>"),
      llvm::SMLoc());
  SourceDiagnostics diags(&ctx, os, &sources);
  emitError(at("<stdin>", 2, 5)) << "division by zero";
  EXPECT_EQ(out, "<stdin>:2:5: error: division by zero\n"
                 "  b / c\n"
                 "    ^\n");
}

TEST_F(SourceDiagnosticsTest, WithoutASourceLine) {
  SourceDiagnostics diags(&ctx, os);
  emitError(at("/nonexistent/k.tile", 4, 2)) << "gone";
  emitError(UnknownLoc::get(&ctx)) << "nowhere";
  emitWarning(at("/nonexistent/k.tile", 1, 1)) << "just a warning";
  EXPECT_EQ(out, "/nonexistent/k.tile:4:2: error: gone\n"
                 "error: nowhere\n"
                 "/nonexistent/k.tile:1:1: warning: just a warning\n");
  EXPECT_EQ(diags.numErrors(), 2u);
}

TEST_F(SourceDiagnosticsTest, OnlyWhileAlive) {
  {
    SourceDiagnostics diags(&ctx, os);
  }
  std::string other;
  llvm::raw_string_ostream otherOS(other);
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &d) {
    otherOS << d;
    return success();
  });
  emitError(at(path, 1, 1)) << "later";
  EXPECT_EQ(out, "");
  EXPECT_EQ(other, "later");
}

TEST(FormatError, OneLine) {
  MLIRContext ctx;
  EXPECT_EQ(formatError(FileLineColLoc::get(&ctx, "k.tile", 3, 9), "bad"),
            "k.tile:3:9: error: bad");
  EXPECT_EQ(formatError(std::nullopt, "bad"), "error: bad");
  EXPECT_EQ(formatError(UnknownLoc::get(&ctx), "bad"), "error: bad");
}

} // namespace

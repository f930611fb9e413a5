//===- FuzzFrontend.cpp - libFuzzer target for the tile front end ---------===//
//
// Feeds arbitrary bytes through the import loader, lexer, parser, IRGen and
// the MLIR verifier. An input may hold several files (`#--- NAME` lines,
// flashc/Frontend/VirtualFiles.h); imports read only those, from memory,
// never the disk. User errors are expected and swallowed; a crash, an
// assertion, a hang or a verifier failure (an internal error: sema should
// have caught it) is a bug.
//
//===----------------------------------------------------------------------===//

#include "flashc/Frontend/IRGen.h"
#include "flashc/Frontend/VirtualFiles.h"
#include "flashc/InitAllDialects.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    flash::loadAllDialects(*ctx);
    return ctx;
  }();
  flash::VirtualFiles files = flash::splitVirtualFiles(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(files.main), llvm::SMLoc());
  flash::ImportOptions imports;
  imports.fileSystem = files.fileSystem;
  std::string out;
  llvm::raw_string_ostream os(out);
  flash::DiagnosticPrinter diags(sourceMgr, os);
  flash::CompileStatus status;
  auto module = flash::compileTileSource(sourceMgr, {}, *context, diags,
                                         &status, imports);
  if (status == flash::CompileStatus::InternalError) {
    fprintf(stderr, "%s\n", out.c_str());
    abort(); // sema let something through that the verifier rejects
  }
  return 0;
}

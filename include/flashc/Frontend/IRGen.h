//===- IRGen.h - The front end: tile source -> verified tile IR -----------===//
//
// The public entry point of the front end: compile the main buffer of a
// SourceMgr (a kernel, its functions and the files it imports) into a
// verified builtin.module in the tile IR described in
// docs/ir-conventions.md. All user errors are reported through the
// DiagnosticPrinter; the result is null when compilation failed.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_IRGEN_H
#define FLASH_FRONTEND_IRGEN_H

#include "flashc/Frontend/Diagnostics.h"
#include "flashc/Runtime/Arch.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>
#include <vector>

namespace flash {

/// A `-D NAME=VALUE` override of a compile-time constant parameter.
struct Define {
  std::string name;
  std::string value;
};

/// Where `import "path";` finds files: the importing file's directory, then
/// `searchDirs` in order (flashc -I DIR).
struct ImportOptions {
  std::vector<std::string> searchDirs;
  /// The file system imports are read from; null: the real one. The fuzzer
  /// passes an in-memory one so that no input can read the disk.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fileSystem;
};

enum class CompileStatus {
  Success,
  UserError,     // reported through the DiagnosticPrinter; exit code 1
  InternalError, // IRGen produced IR that fails verification; exit code 2
};

/// Parse `-D` text "NAME=VALUE" into a Define; false if there is no '=' or
/// the name is empty.
bool parseDefine(llvm::StringRef text, Define &out);

/// The name of the predefined constant that holds the target's SM version
/// (archNumber: 80 for sm_80): kernels read it in their constants' defaults
/// and body; it cannot be declared, redefined or set with -D.
inline constexpr llvm::StringLiteral kArchConstantName = "ARCH";
/// The name of the predefined bool constant that says whether the kernel's
/// MMAs lower to warpgroup MMAs (wgmma: true for sm_90a, whose ARCH is 90
/// like sm_90's), so that tiles can default by it.
inline constexpr llvm::StringLiteral kWgmmaConstantName = "WGMMA";

/// Lex, parse, lower and verify the main buffer of `sourceMgr` and the
/// files it imports (added to `sourceMgr`). Loads the needed dialects into
/// `context`. Returns null on any error; `status` (if given) tells user
/// errors from internal ones. Internal errors (verifier failures) are printed
/// to the DiagnosticPrinter's stream. `arch` is the SM version the kernel is
/// compiled for, its ARCH; `wgmma` (archHasWgmma) its WGMMA, also recorded
/// on the module as tile.wgmma.
mlir::OwningOpRef<mlir::ModuleOp>
compileTileSource(llvm::SourceMgr &sourceMgr, llvm::ArrayRef<Define> defines,
                  mlir::MLIRContext &context, DiagnosticPrinter &diags,
                  CompileStatus *status = nullptr,
                  const ImportOptions &imports = ImportOptions(),
                  int arch = archNumber(kDefaultArch), bool wgmma = false);

} // namespace flash

#endif // FLASH_FRONTEND_IRGEN_H

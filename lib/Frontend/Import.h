//===- Import.h - A kernel's file and the files it imports ----------------===//
//
// Parses the main buffer, follows its `import "path";` declarations (paths
// relative to the importing file, then the search directories), and gathers
// the functions of every file into one namespace and the program's one
// kernel. An import cycle is an error; a file imported twice is read once.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_IMPORT_H
#define FLASH_FRONTEND_IMPORT_H

#include "AST.h"
#include "flashc/Frontend/Diagnostics.h"
#include "flashc/Frontend/IRGen.h"

#include <memory>

namespace flash {

/// Maximum number of files in one program.
constexpr unsigned kMaxImportedFiles = 256;

/// The program rooted at the main buffer of `diags.getSourceMgr()`; imported
/// files are added to that SourceMgr, each with the location of its import.
/// Returns null after reporting the first error.
std::unique_ptr<ast::Program> loadProgram(DiagnosticPrinter &diags,
                                          const ImportOptions &options);

} // namespace flash

#endif // FLASH_FRONTEND_IMPORT_H

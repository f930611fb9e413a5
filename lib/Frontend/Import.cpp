//===- Import.cpp - A kernel's file and the files it imports --------------===//

#include "Import.h"
#include "Parser.h"

#include "Builtins/Builtins.h"
#include "flashc/Frontend/SourceText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace flash;
using namespace flash::ast;
using llvm::SMLoc;
using llvm::Twine;

namespace {
class Loader {
public:
  Loader(DiagnosticPrinter &diags, const ImportOptions &options)
      : diags(diags), sm(diags.getSourceMgr()), options(options),
        fs(options.fileSystem ? options.fileSystem
                              : llvm::vfs::getRealFileSystem()) {}

  std::unique_ptr<Program> run();

private:
  bool loadFile(unsigned bufferId);
  bool loadImport(const ImportDecl &imp, llvm::StringRef importerDir);
  std::optional<std::string> resolve(const ImportDecl &imp,
                                     llvm::StringRef importerDir);
  std::string canonical(llvm::StringRef path);
  void reportCycle(const ImportDecl &imp, const std::string &key);
  bool collectDeclarations();

  DiagnosticPrinter &diags;
  llvm::SourceMgr &sm;
  const ImportOptions &options;
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs;
  std::unique_ptr<Program> program = std::make_unique<Program>();
  /// Canonical paths of the files read so far.
  std::map<std::string, unsigned> loaded;
  /// The files being loaded, outermost first: (canonical path, buffer).
  std::vector<std::pair<std::string, unsigned>> stack;
};
} // namespace

/// An absolute path without `.` and `..`, so that one file has one name
/// however it is imported (the real path when the file system knows it).
std::string Loader::canonical(llvm::StringRef path) {
  llvm::SmallString<256> out;
  if (!fs->getRealPath(path, out))
    return out.str().str();
  out = path;
  (void)fs->makeAbsolute(out);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return out.str().str();
}

/// The path `imp` names: relative to the importing file's directory, then
/// to each search directory; absolute paths as they are.
std::optional<std::string> Loader::resolve(const ImportDecl &imp,
                                           llvm::StringRef importerDir) {
  std::vector<std::string> dirs;
  if (!llvm::sys::path::is_absolute(imp.path)) {
    dirs.push_back(importerDir.str());
    dirs.insert(dirs.end(), options.searchDirs.begin(),
                options.searchDirs.end());
  } else {
    dirs.push_back("");
  }
  for (const std::string &dir : dirs) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, imp.path);
    llvm::sys::path::remove_dots(candidate); // "./x.tile" is "x.tile"
    llvm::ErrorOr<llvm::vfs::Status> st = fs->status(candidate);
    if (!st)
      continue;
    if (!st->isRegularFile())
      return diags.error(imp.loc, "cannot import '" + imp.path +
                                      "': '" + candidate +
                                      "' is not a regular file"),
             std::nullopt;
    return candidate.str().str();
  }
  std::string looked;
  for (const std::string &dir : dirs)
    looked += (looked.empty() ? "'" : ", '") +
              (dir.empty() ? std::string(".") : dir) + "'";
  diags.error(imp.loc, "cannot find imported file '" + imp.path +
                           "' (looked in " + looked + ")");
  return std::nullopt;
}

void Loader::reportCycle(const ImportDecl &imp, const std::string &key) {
  std::string chain, first;
  for (auto &[path, buffer] : stack) {
    if (path == key)
      first = sm.getMemoryBuffer(buffer)->getBufferIdentifier().str();
    if (!first.empty())
      chain += sm.getMemoryBuffer(buffer)->getBufferIdentifier().str() +
               " -> ";
  }
  diags.error(imp.loc, "import cycle: " + chain + first);
}

bool Loader::loadImport(const ImportDecl &imp, llvm::StringRef importerDir) {
  std::optional<std::string> path = resolve(imp, importerDir);
  if (!path)
    return false;
  std::string key = canonical(*path);
  if (llvm::any_of(stack, [&](auto &entry) { return entry.first == key; })) {
    reportCycle(imp, key);
    return false;
  }
  if (loaded.count(key))
    return true; // imported before: its functions are known already
  if (loaded.size() >= kMaxImportedFiles) {
    diags.error(imp.loc, "too many imported files (the limit is " +
                             Twine(kMaxImportedFiles) + ")");
    return false;
  }
  auto buffer = fs->getBufferForFile(*path, /*FileSize=*/-1,
                                     /*RequiresNullTerminator=*/true,
                                     /*IsVolatile=*/false, /*IsText=*/true);
  if (!buffer) {
    diags.error(imp.loc, "cannot read imported file '" + *path +
                             "': " + buffer.getError().message());
    return false;
  }
  // The buffer's name is the path as resolved, so that diagnostics name the
  // file as the user would (relative to where flashc runs); LF line endings
  // (SourceText.h).
  auto named = withLineFeeds(std::move(*buffer), *path);
  unsigned id = sm.AddNewSourceBuffer(std::move(named), imp.loc);
  loaded[key] = id;
  return loadFile(id);
}

bool Loader::loadFile(unsigned bufferId) {
  std::unique_ptr<SourceFile> file = parseSourceFile(diags, bufferId);
  if (!file)
    return false;
  SourceFile &f = *file;
  program->files.push_back(std::move(file));
  llvm::StringRef name = sm.getMemoryBuffer(bufferId)->getBufferIdentifier();
  llvm::StringRef dir = llvm::sys::path::parent_path(name);
  stack.push_back({canonical(name), bufferId});
  for (const ImportDecl &imp : f.imports)
    if (!loadImport(imp, dir))
      return false;
  stack.pop_back();
  return true;
}

/// Names a function may not take: the builtins and the statements.
static bool isReserved(llvm::StringRef name) {
  return frontend::lookupBuiltin(name) || name == "grid" || name == "warps" ||
         name == "mma_layout" || name == "static_assert" ||
         name == "device_assert" || name == "range";
}

/// One namespace of functions for the whole program, and its one kernel.
bool Loader::collectDeclarations() {
  for (auto &file : program->files) {
    for (auto &fn : file->functions) {
      if (isReserved(fn->name)) {
        diags.error(fn->loc, "function '" + fn->name +
                                 "' has the name of a builtin; choose "
                                 "another name");
        return false;
      }
      auto [it, inserted] = program->functions.insert({fn->name, fn.get()});
      if (!inserted) {
        diags.error(fn->loc, "redefinition of function '" + fn->name + "'");
        diags.note(it->second->loc, "previous definition here");
        return false;
      }
    }
    if (!file->kernel)
      continue;
    if (program->kernel) {
      diags.error(file->kernel->loc,
                  "a second kernel '" + file->kernel->name +
                      "': a program (a file and its imports) has one kernel");
      diags.note(program->kernel->loc, "kernel '" + program->kernel->name +
                                           "' is defined here");
      return false;
    }
    program->kernel = file->kernel.get();
  }
  if (program->kernel)
    return true;
  llvm::StringRef main =
      sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier();
  diags.error("no kernel in '" + main +
              "' or the files it imports; a file of functions only is a "
              "library: import it from a kernel's file");
  return false;
}

std::unique_ptr<Program> Loader::run() {
  unsigned mainId = sm.getMainFileID();
  loaded[canonical(sm.getMemoryBuffer(mainId)->getBufferIdentifier())] =
      mainId;
  if (!loadFile(mainId) || !collectDeclarations())
    return nullptr;
  return std::move(program);
}

std::unique_ptr<Program> flash::loadProgram(DiagnosticPrinter &diags,
                                            const ImportOptions &options) {
  return Loader(diags, options).run();
}

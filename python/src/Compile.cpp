//===- Compile.cpp - flashc.compile: source -> tile IR, and its levels ----===//
//
// A flash::Compilation, as flashc runs it: `compile` runs the front end and
// the tile pipeline once; `emit` and `lower` run the later pipelines on a
// clone. The switches are CompileOptions.def's rows, by their Python names.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "flashc/Frontend/SourceText.h"
#include "flashc/Runtime/Arch.h"

#include "llvm/Support/MemoryBuffer.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace flash::python {

namespace {

using Defines = std::vector<std::pair<std::string, std::string>>;

/// "lean-masks" -> "lean_masks".
std::string pythonName(std::string_view flag) {
  std::string name(flag);
  for (char &c : name)
    if (c == '-')
      c = '_';
  return name;
}

/// The switches named in `values` (Python names) over their defaults.
CompileOptions compileOptions(const std::map<std::string, bool> &values) {
  CompileOptions options;
  size_t known = 0;
  for (const CompileOptionInfo &info : kCompileOptions) {
    auto it = values.find(pythonName(info.flag));
    if (it == values.end())
      continue;
    options.*info.field = it->second;
    ++known;
  }
  if (known != values.size())
    for (const auto &[name, value] : values) {
      bool found = false;
      for (const CompileOptionInfo &info : kCompileOptions)
        found |= pythonName(info.flag) == name;
      if (!found)
        throw std::invalid_argument("unknown compile option '" + name + "'");
    }
  return options;
}

} // namespace

/// Captures the kernel's diagnostics for the length of one call.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(Compilation &compilation)
      : compilation(compilation), os(text) {
    compilation.setDiagnosticStream(os);
  }
  ~DiagnosticCapture() { compilation.setDiagnosticStream(llvm::nulls()); }
  const std::string &captured() const { return text; }
  llvm::raw_ostream &stream() { return os; }

private:
  Compilation &compilation;
  std::string text;
  llvm::raw_string_ostream os;
};

namespace {

std::unique_ptr<Kernel> compile(const std::optional<std::string> &text,
                                const std::string &name,
                                const Defines &defineList,
                                const std::vector<std::string> &importDirs,
                                const std::string &arch,
                                const std::map<std::string, bool> &options) {
  CompileInput input;
  // A file is read as flashc reads it: its bytes as they are (the lexer
  // locates what is not ASCII), only if it is a regular file.
  if (text) {
    input.source = llvm::MemoryBuffer::getMemBufferCopy(*text, name);
  } else {
    std::string error;
    input.source = readSourceFile(name, error);
    if (!input.source)
      throw CompileFailure("error: cannot open '" + name + "': " + error +
                           "\n");
  }
  for (const auto &[key, value] : defineList)
    input.defines.push_back({key, value});
  input.imports.searchDirs = importDirs;
  input.arch = arch;
  input.options = compileOptions(options);
  auto kernel = std::make_unique<Kernel>();
  kernel->compilation =
      std::make_unique<Compilation>(std::move(input), llvm::nulls());
  DiagnosticCapture capture(*kernel->compilation);
  if (kernel->compilation->lowerTo(Level::Tile) != 0)
    throw CompileFailure(capture.captured());
  return kernel;
}

std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return text;
}

/// The IR at one --emit level below PTX.
std::string emit(const Kernel &kernel, const std::string &levelName) {
  std::optional<Level> level = parseEmitLevel(levelName);
  if (!level || *level >= Level::PTX)
    throw std::invalid_argument("unknown IR level '" + levelName +
                                "' (tile, layout, simt, llvm)");
  return print(*kernel.lowered(*level));
}

/// PTX and its launch sidecar (JSON), as `flashc -o K.ptx` writes them.
std::pair<std::string, std::string> lower(const Kernel &kernel) {
  mlir::OwningOpRef<mlir::ModuleOp> module = kernel.lowered(Level::SIMT);
  DiagnosticCapture capture(*kernel.compilation);
  std::string ptx, sidecar;
  if (emitMachineCode(*module, kernel.compilation->target(), Level::PTX, ptx,
                      sidecar, capture.stream()) != 0)
    throw CompileFailure(capture.captured());
  return {ptx, sidecar};
}

nb::bytes cubin(const std::string &ptx, const std::string &arch) {
  TargetOptions target;
  target.arch = arch;
  llvm::Expected<std::string> bytes = assembleCubin(ptx, target);
  if (!bytes)
    throw CompileFailure("error: " + llvm::toString(bytes.takeError()) + "\n");
  return nb::bytes(bytes->data(), bytes->size());
}

/// Every buffer the kernel was read from: the main file, then its imports;
/// bytes, since a comment may hold any.
std::vector<std::pair<std::string, nb::bytes>> sources(const Kernel &k) {
  std::vector<std::pair<std::string, nb::bytes>> out;
  const llvm::SourceMgr &sourceMgr = k.compilation->sources();
  for (unsigned id = 1; id <= sourceMgr.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
    llvm::StringRef text = buffer->getBuffer();
    out.emplace_back(buffer->getBufferIdentifier().str(),
                     nb::bytes(text.data(), text.size()));
  }
  return out;
}

/// (Python name, default, help) of every switch: the keyword arguments of
/// flashc.compile beside the constants.
std::vector<std::tuple<std::string, bool, std::string>> optionTable() {
  std::vector<std::tuple<std::string, bool, std::string>> rows;
  for (const CompileOptionInfo &info : kCompileOptions)
    rows.emplace_back(pythonName(info.flag), info.init, std::string(info.help));
  return rows;
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> Kernel::lowered(Level level) const {
  if (std::string error = compilation->checkTarget(level); !error.empty())
    throw CompileFailure("error: " + error + "\n");
  mlir::OwningOpRef<mlir::ModuleOp> module = clone();
  DiagnosticCapture capture(*compilation);
  if (lowerModule(*module, Level::Tile, level, compilation->target()) ==
      LowerResult::Success)
    return module;
  const std::string &diagText = capture.captured();
  throw CompileFailure(diagText.empty()
                           ? "internal error: the lowering failed without a "
                             "diagnostic\n"
                           : diagText);
}

void bindCompile(nb::module_ &m) {
  nb::class_<Kernel>(m, "Kernel")
      .def("emit", &emit, nb::arg("level"),
           "The IR at an --emit level below PTX: tile, layout, simt, llvm.")
      .def("lower", &lower, "(PTX, launch sidecar JSON) for the kernel's arch.")
      .def("sources", &sources,
           "(name, bytes) of the main file and of every imported file.");
  m.def("compile", &compile, nb::arg("text").none(), nb::arg("name"),
        nb::arg("defines"), nb::arg("import_dirs"), nb::arg("arch"),
        nb::arg("options"),
        "Front end (ARCH from `arch`) on `text`, or on the file `name` when "
        "`text` is None, + tile pipeline, with the switches `options` names "
        "(option_table()); raises CompileError.");
  m.def("option_table", &optionTable,
        "(name, default, help) of every compile switch (flashc's --FLAG "
        "with '_' for '-').");
  m.attr("DEFAULT_ARCH") = std::string(kDefaultArch);
  m.def("assemble_cubin", &cubin, nb::arg("ptx"), nb::arg("arch"),
        "ptxas: PTX -> cubin bytes; raises CompileError.");
}

} // namespace flash::python

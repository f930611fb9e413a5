//===- Compile.cpp - flashc.compile: source -> tile IR, and its levels ----===//
//
// The front end and the pipelines exactly as the flashc driver runs them
// (tools/flashc/flashc.cpp): `compile` parses and canonicalizes once;
// `emit` and `lower` run the later pipelines on a clone.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "flashc/Frontend/IRGen.h"
#include "flashc/Frontend/SourceText.h"
#include "flashc/Pipelines/Pipelines.h"
#include "flashc/Support/SourceDiagnostics.h"
#include "flashc/Target/PTX.h"
#include "flashc/Target/Sidecar.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace flash::python {
namespace {

using Defines = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<Kernel> compile(const std::optional<std::string> &text,
                                const std::string &name,
                                const Defines &defineList,
                                const std::vector<std::string> &importDirs,
                                const std::string &arch,
                                bool mergeMaskBounds, bool leanMasks) {
  auto kernel = std::make_unique<Kernel>();
  kernel->tileOptions.mergeMaskBounds = mergeMaskBounds;
  kernel->tileOptions.leanMasks = leanMasks;
  mlir::DialectRegistry registry;
  registerTargetDialects(registry);
  kernel->context = std::make_unique<mlir::MLIRContext>(registry);
  kernel->context->printOpOnDiagnostic(false);
  // A file is read as flashc reads it: its bytes as they are (the lexer
  // locates what is not ASCII), only if it is a regular file.
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (text) {
    buffer =
        llvm::MemoryBuffer::getMemBufferCopy(withLineFeeds(*text), name);
  } else {
    std::string error;
    buffer = readSourceFile(name, error);
    if (!buffer)
      throw CompileFailure("error: cannot open '" + name + "': " + error +
                           "\n");
  }
  kernel->sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::vector<Define> defines;
  for (const auto &[key, value] : defineList)
    defines.push_back({key, value});
  ImportOptions imports;
  imports.searchDirs = importDirs;
  if (!findArch(arch))
    throw CompileFailure("error: " + unsupportedArchMessage(arch) + "\n");

  std::string diagText;
  llvm::raw_string_ostream os(diagText);
  SourceDiagnostics located(kernel->context.get(), os, &kernel->sources);
  DiagnosticPrinter diags(kernel->sources, os);
  kernel->module = compileTileSource(kernel->sources, defines, *kernel->context,
                                     diags, nullptr, imports,
                                     archNumber(arch), archHasWgmma(arch));
  if (!kernel->module)
    throw CompileFailure(diagText);
  mlir::PassManager pm(kernel->context.get());
  buildTilePipeline(pm, kernel->tileOptions);
  if (mlir::failed(pm.run(*kernel->module)))
    throw CompileFailure("internal error: the tile pipeline failed\n" +
                         diagText);
  return kernel;
}

TargetOptions targetFor(const std::string &arch) {
  TargetOptions target;
  target.arch = arch;
  if (llvm::Error error = verifyTargetOptions(target))
    throw CompileFailure("error: " + llvm::toString(std::move(error)) + "\n");
  return target;
}

/// Runs the pipelines up to `level` (layout, simt, llvm) on a clone of the
/// tile IR; the diagnostics of a pass that rejects the kernel are the error.
mlir::OwningOpRef<mlir::ModuleOp> lowerTo(const Kernel &kernel,
                                          const std::string &level,
                                          const TargetOptions &target,
                                          std::string &diagText) {
  mlir::OwningOpRef<mlir::ModuleOp> module = kernel.clone();
  LayoutPipelineOptions layout;
  layout.maxSharedBytes = maxSharedBytesPerCTA(target.arch);
  layout.arch = target.arch;
  layout.tile = kernel.tileOptions;
  mlir::PassManager pm(kernel.context.get());
  if (level == "layout")
    buildLayoutPipeline(pm, layout);
  else
    buildSIMTPipeline(pm, layout);
  if (level == "llvm")
    buildSIMTToLLVMPipeline(pm, target);
  if (mlir::failed(pm.run(*module)))
    throw CompileFailure(diagText.empty()
                             ? "internal error: the lowering failed without a "
                               "diagnostic\n"
                             : diagText);
  return module;
}

std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return text;
}

/// The IR at one --emit level below PTX.
std::string emit(const Kernel &kernel, const std::string &level,
                 const std::string &arch) {
  if (level == "tile")
    return print(kernel.module.get());
  if (level != "layout" && level != "simt" && level != "llvm")
    throw std::invalid_argument("unknown IR level '" + level +
                                "' (tile, layout, simt, llvm)");
  TargetOptions target = targetFor(arch);
  std::string diagText;
  llvm::raw_string_ostream os(diagText);
  SourceDiagnostics located(kernel.context.get(), os,
                            const_cast<llvm::SourceMgr *>(&kernel.sources));
  return print(*lowerTo(kernel, level, target, diagText));
}

/// PTX and its launch sidecar (JSON), as `flashc -o K.ptx` writes them.
std::pair<std::string, std::string> lower(const Kernel &kernel,
                                          const std::string &arch) {
  TargetOptions target = targetFor(arch);
  std::string diagText;
  llvm::raw_string_ostream os(diagText);
  SourceDiagnostics located(kernel.context.get(), os,
                            const_cast<llvm::SourceMgr *>(&kernel.sources));
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lowerTo(kernel, "simt", target, diagText);
  mlir::FailureOr<std::string> sidecar = writeLaunchSidecar(*module, target);
  mlir::FailureOr<std::string> ptx =
      mlir::failed(sidecar) ? mlir::FailureOr<std::string>(mlir::failure())
                            : emitPTX(*module, target);
  if (mlir::failed(sidecar) || mlir::failed(ptx))
    throw CompileFailure(diagText.empty()
                             ? "internal error: no PTX, without a diagnostic\n"
                             : diagText);
  return {*ptx, *sidecar};
}

nb::bytes cubin(const std::string &ptx, const std::string &arch) {
  llvm::Expected<std::string> bytes = assembleCubin(ptx, targetFor(arch));
  if (!bytes)
    throw CompileFailure("error: " + llvm::toString(bytes.takeError()) + "\n");
  return nb::bytes(bytes->data(), bytes->size());
}

/// Every buffer the kernel was read from: the main file, then its imports;
/// bytes, since a comment may hold any.
std::vector<std::pair<std::string, nb::bytes>> sources(const Kernel &k) {
  std::vector<std::pair<std::string, nb::bytes>> out;
  for (unsigned id = 1; id <= k.sources.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = k.sources.getMemoryBuffer(id);
    llvm::StringRef text = buffer->getBuffer();
    out.emplace_back(buffer->getBufferIdentifier().str(),
                     nb::bytes(text.data(), text.size()));
  }
  return out;
}

} // namespace

void bindCompile(nb::module_ &m) {
  nb::class_<Kernel>(m, "Kernel")
      .def("emit", &emit, nb::arg("level"), nb::arg("arch"),
           "The IR at an --emit level below PTX: tile, layout, simt, llvm.")
      .def("lower", &lower, nb::arg("arch"),
           "(PTX, launch sidecar JSON) for `arch`.")
      .def("sources", &sources,
           "(name, bytes) of the main file and of every imported file.");
  m.def("compile", &compile, nb::arg("text").none(), nb::arg("name"),
        nb::arg("defines"), nb::arg("import_dirs"), nb::arg("arch"),
        nb::arg("merge_mask_bounds"), nb::arg("lean_masks"),
        "Front end (ARCH from `arch`) on `text`, or on the file `name` when "
        "`text` is None, + tile pipeline (and the masked-loop "
        "rewrites asked for); raises CompileError.");
  m.def("assemble_cubin", &cubin, nb::arg("ptx"), nb::arg("arch"),
        "ptxas: PTX -> cubin bytes; raises CompileError.");
}

} // namespace flash::python

# Precompiled MLIR/LLVM headers. Parsing MLIR's headers (the op classes of
# every dialect a file touches) is a large part of compiling one of our C++
# files (a TileToSIMT pattern file: 35 CPU seconds without, 7.5 with; README,
# "Two commands"); one precompiled header of the headers most files include,
# built once and shared by every library compiled with the same flags, parses
# them once per build instead of once per file. A library opts in with one line after
# its add_*_library: flash_add_pch(FlashFoo).
#
# The list holds MLIR/LLVM headers only, never flashc's own: those change
# (and their generated .inc files with them) while the precompiled header stays
# the same in every worktree, so ccache shares it (with the sloppiness set
# below).
option(FLASH_PCH "Precompile the MLIR/LLVM headers the libraries share" ON)

set(FLASH_PCH_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/ControlFlow/IR/ControlFlow.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Vector/IR/VectorOps.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/BuiltinTypes.h>
  <mlir/IR/Dialect.h>
  <mlir/IR/Matchers.h>
  <mlir/IR/MLIRContext.h>
  <mlir/IR/OpDefinition.h>
  <mlir/IR/OpImplementation.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Interfaces/SideEffectInterfaces.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>
  <mlir/Transforms/DialectConversion.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  <llvm/ADT/DenseMap.h>
  <llvm/ADT/STLExtras.h>
  <llvm/ADT/SmallVector.h>
  <llvm/ADT/StringRef.h>
  <llvm/ADT/TypeSwitch.h>
  <llvm/Support/raw_ostream.h>
)

# ccache caches compiles that use a precompiled header, and the precompiled
# header itself, only with this sloppiness (its manual, "Precompiled
# headers"); the header is newer than the files that include it, hence the
# mtime/ctime entries.
if(FLASH_PCH AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
  set(CMAKE_CXX_COMPILER_LAUNCHER env
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

if(FLASH_PCH)
  # The target that owns the precompiled header: no code of its own, the
  # directory-wide flags of the top level (LLVM's, the include paths) that
  # every library below shares.
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/flash-pch/empty.cpp CONTENT "")
  add_library(flash-pch OBJECT ${PROJECT_BINARY_DIR}/flash-pch/empty.cpp)
  # The per-target flags add_mlir_library gives a library (-fno-exceptions):
  # GCC rejects a precompiled header built with other exception settings.
  llvm_update_compile_flags(flash-pch)
  target_precompile_headers(flash-pch PRIVATE ${FLASH_PCH_HEADERS})
endif()

# flash_add_pch(TARGET): the C++ files of TARGET, an add_mlir_library (its
# obj.TARGET compiles them), start from the shared precompiled header. Only
# such libraries opt in: plain executables and python/ compile with
# exceptions on, which the header does not match.
function(flash_add_pch target)
  if(NOT TARGET obj.${target})
    message(FATAL_ERROR "flash_add_pch(${target}): not an add_mlir_library")
  endif()
  if(FLASH_PCH)
    target_precompile_headers(obj.${target} REUSE_FROM flash-pch)
  endif()
endfunction()

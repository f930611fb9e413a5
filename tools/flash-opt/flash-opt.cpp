//===- flash-opt.cpp - mlir-opt with flashc's dialects and passes ---------===//
#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Conversion/Passes.h"
#include "flashc/Target/PTX.h"
#include "flashc/Transforms/Passes.h"
#include "flashc/Pipelines/Pipelines.h"
#include "flashc/Support/OutOfMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // One line instead of "LLVM ERROR: out of memory" and an abort
  // (MlirOptMain's InitLLVM routes exhaustion to it).
  flash::installOutOfMemoryHandler("flash-opt");
  mlir::DialectRegistry registry;
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  flash::registerTilePasses();
  flash::registerConversionPasses();
  flash::registerFlashPipelines();
  flash::registerTargetDialects(registry);
  flash::registerTargetPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "flashc optimizer driver\n", registry));
}

//===- Passes.h - the backend's passes --------------------------*- C++ -*-===//
//
// Declared in Passes.td: flashc-prepare-nvvm, flashc-approx-math-to-nvvm,
// flashc-float8-to-nvvm and flashc-wgmma-assert-to-trap
// (parts of the flashc-simt-to-llvm pipeline, PTX.h), flashc-emit-ptx and
// flashc-emit-sidecar (emitPTX and writeLaunchSidecar as passes, for lit).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_TARGET_PASSES_H
#define FLASH_TARGET_PASSES_H

#include "flashc/Runtime/Arch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace flash {
#define GEN_PASS_DECL
#include "flashc/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "flashc/Target/Passes.h.inc"
} // namespace flash

#endif // FLASH_TARGET_PASSES_H

//===- TmaCopyToSIMT.h - lowering of the TMA copies -------------*- C++ -*-===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace flash::simt {
/// Lowers the copies and waits tile-tma-copies marked in `kernel` (after its
/// signature is expanded and its buffers are reserved): mbarrier init at the
/// entry, TMA boxes issued by thread 0, parity waits; adds a tensor map
/// parameter per tensor and box and lists them in flashc.tensor_maps.
mlir::LogicalResult lowerTmaCopies(mlir::func::FuncOp kernel);
} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_TMACOPYTOSIMT_H

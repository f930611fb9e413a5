//===- WindowAnalysis.h - what is known of a window access ------*- C++ -*-===//
//
// Facts about the global window accesses of a kernel (tile.load, tile.store,
// tile.async_copy, tile.load_scalar), proven at compile time from the IR that computes their
// offsets: along which dims a window provably stays inside its tensor (so
// its registers need no bounds check there), how many registers can move
// as one aligned vector, and whether a store's mask allows that.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWANALYSIS_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWANALYSIS_H

#include "Utility.h"

namespace flash::simt {

/// Marks every window access of `kernel` with the global dims along which it
/// provably stays inside the tensor whenever it happens (an async_copy only
/// happens when its predicate holds), as a flashc.in_bounds bool array. Runs
/// before the conversion, while the loops and offsets are intact;
/// WindowAddressing reads the marks.
void markWindowsInBounds(mlir::Operation *kernel);

/// Marks (kUniformMaskAttrName) each masked tile.store whose mask provably
/// has one value along the tile dim that runs along the tensor's last dim
/// (a row mask broadcast over the columns, a splat, element-wise ops of
/// such masks): its registers may still be stored as vectors, one mask bit
/// per vector. Other masked stores store element by element.
void markUniformMasks(mlir::Operation *kernel);

/// The widest vector (elements) in which runs of registers of `tile` can be
/// accessed in the window `window` (tileWindow: one global dim per tile dim)
/// of `view` whose offset along the last
/// global dim is `lastOffset`: registers kV..kV+V-1 of every thread are
/// consecutive along the tile dim that runs along the last global dim, start
/// at a multiple of V, the last global dim is static and a multiple of V and
/// the offset a known multiple of V (so each vector is aligned and wholly in
/// or out of bounds). For stores (`writers`: firstHolderMasks) the run must
/// also have one writer.
int64_t chooseVectorWidth(const TileInfo &tile, llvm::ArrayRef<int64_t> window,
                          const GlobalView &view, mlir::Value lastOffset,
                          int64_t numWarps,
                          const std::vector<std::vector<uint32_t>> *writers);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_WINDOWANALYSIS_H

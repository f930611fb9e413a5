//===- Patterns.h - the op families of the tile -> SIMT lowering -*- C++ -*-===//
//
// One populate function per op family, each defined in its XOpToSIMT.cpp,
// and what a family must check or mark on the kernel before any op is
// rewritten. A new tile op is a pattern in its family's file (or a new
// family file) plus one line in flash::populateTileToSIMTPatterns.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_PATTERNS_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_PATTERNS_H

#include "mlir/Transforms/DialectConversion.h"

namespace flash::simt {

/// program_id, num_programs, dim, splat, iota, constants, and the arith and
/// math ops on tiles (ElementwiseOpToSIMT.cpp).
void populateElementwiseOpToSIMTPatterns(mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
/// arith.cmpi of an iota tile with a broadcast: registers' constants as
/// immediates (IotaCompareToSIMT.cpp).
void populateIotaCompareToSIMTPatterns(mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// expand_dims, broadcast, convert_layout, trans (LayoutMoveOpToSIMT.cpp).
void populateLayoutMoveOpToSIMTPatterns(mlir::TypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
/// reduce (ReduceOpToSIMT.cpp).
void populateReduceOpToSIMTPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
/// mma (MmaOpToSIMT.cpp).
void populateMmaOpToSIMTPatterns(mlir::TypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);
/// mma on a warpgroup layout: wgmma.mma_async (WgmmaOpToSIMT.cpp).
void populateWgmmaOpToSIMTPatterns(mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
/// load, store of global windows (LoadStoreOpToSIMT.cpp).
void populateLoadStoreOpToSIMTPatterns(mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// local_alloc, async_copy, async_commit, async_wait, barrier, local_load,
/// and the !tile.shared type (SharedMemoryOpToSIMT.cpp).
void populateSharedMemoryOpToSIMTPatterns(mlir::TypeConverter &converter,
                                          mlir::RewritePatternSet &patterns);
/// device_assert: cf.assert on the AND of each thread's registers
/// (AssertOpToSIMT.cpp).
void populateAssertOpToSIMTPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

/// Rejects what the shared-memory lowering cannot take (a buffer without
/// an offset, a copy window that does not start at column 0).
mlir::LogicalResult verifySharedMemoryOps(mlir::Operation *kernel);
/// Records the bytes of the kernel's buffers, which come first in
/// @__flashc_smem (the conversion's scratch follows them).
void reserveSharedBuffers(mlir::Operation *kernel);

/// Marks each load and local_load that the MMA using it reads itself,
/// fragment by fragment (see MmaOpToSIMT.cpp).
void markLoadsFusedIntoMma(mlir::Operation *kernel);

/// Rejects a warpgroup MMA whose shared operand starts where a wgmma
/// descriptor cannot address it (off its swizzle pattern's boundary, at a
/// statically known offset), naming the buffer and the alignment
/// (WgmmaOpToSIMT.cpp). Needs markLoadsFusedIntoMma's marks.
mlir::LogicalResult verifyWgmmaOperands(mlir::Operation *kernel);
/// Gives each f8e4m3 warpgroup MMA whose B is stored [K, N] (P V's V) a
/// buffer of its own after the kernel's buffers for B's K-major copy, and
/// grows the kernel's shared bytes by them (WgmmaOpToSIMT.cpp). After
/// reserveSharedBuffers, before the conversion's scratch is placed.
void reserveFp8TransposeBuffers(mlir::Operation *kernel);

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_PATTERNS_H

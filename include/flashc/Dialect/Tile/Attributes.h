//===- Attributes.h - names of flashc's discardable attributes --*- C++ -*-===//
//
// Every discardable attribute name that more than one stage reads or writes,
// stated once: the tile.* names that make a func.func a tile kernel (written
// by the front end, read by the passes and the interpreter), and the flashc.*
// names convert-tile-to-simt records on the SIMT level (read by the emulator,
// the backend, the sidecar writer and `flashc run`). docs/ir-conventions.md
// describes each.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_DIALECT_TILE_ATTRIBUTES_H
#define FLASHC_DIALECT_TILE_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace flash::tile {
/// Names of the discardable attributes that make a func.func a tile kernel.
inline constexpr llvm::StringLiteral kGridAttrName = "tile.grid";
inline constexpr llvm::StringLiteral kNumWarpsAttrName = "tile.num_warps";
inline constexpr llvm::StringLiteral kConstantsAttrName = "tile.constants";
/// Optional: the TiledMMA the kernel asks for (a #tile.mma), instead of the
/// layout assignment's default.
inline constexpr llvm::StringLiteral kMmaLayoutAttrName = "tile.mma_layout";
/// Argument attribute: the parameter's name in the source program.
inline constexpr llvm::StringLiteral kArgNameAttrName = "tile.name";
/// scf.for attribute (integer >= 1): pipeline stages of the loop's staged
/// copies, from `range(..., stages = N)`; read by tile-pipeline-copies.
inline constexpr llvm::StringLiteral kNumStagesAttrName = "tile.num_stages";
/// scf.for attribute (unit): the loop's staged copies keep one buffer each
/// and each is issued as soon as the previous iteration has read its buffer,
/// from `range(..., split_copies = true)`; read by tile-split-copies.
inline constexpr llvm::StringLiteral kSplitCopiesAttrName = "tile.split_copies";
/// scf.for attribute (unit): a range of masked blocks that
/// tile-split-masked-loops made; it does not split it again.
inline constexpr llvm::StringLiteral kMaskSplitAttrName = "tile.mask_split";
/// func.func attribute (i64 >= 0): the bytes of the kernel's shared buffers,
/// set by tile-allocate-shared.
inline constexpr llvm::StringLiteral kSharedBytesAttrName = "tile.shared_bytes";
/// func.func attribute (unit): tile-stage-shared re-reads an MMA operand in a
/// loop because the loop's tiles fill the registers; the PTX emitter then
/// keeps the loop's addressing plain (flashc.register_bound on the gpu.func).
inline constexpr llvm::StringLiteral kRegisterBoundAttrName =
    "tile.register_bound";
/// builtin.module attribute (i64 > 0): the SM version, ARCH (80 for sm_80),
/// the front end resolved the kernel's constants for.
inline constexpr llvm::StringLiteral kArchAttrName = "tile.arch";
} // namespace flash::tile

namespace flash::simt {
/// The prefix that replaces `tile.` when a kernel attribute moves onto the
/// SIMT-level gpu.func (tile.grid -> flashc.grid, ...).
inline constexpr llvm::StringLiteral kAttrPrefix = "flashc.";
/// On each gpu.func: the kernel's parameters as the launcher passes them
/// (name, kind, element type, dims), in order.
inline constexpr llvm::StringLiteral kParamsAttrName = "flashc.params";
/// On each gpu.func: the grid function (tile.grid on the tile level).
inline constexpr llvm::StringLiteral kGridAttrName = "flashc.grid";
/// On each gpu.func: warps per CTA (tile.num_warps on the tile level).
inline constexpr llvm::StringLiteral kNumWarpsAttrName = "flashc.num_warps";
/// On a gpu.func: tile.register_bound on the tile level.
inline constexpr llvm::StringLiteral kRegisterBoundAttrName =
    "flashc.register_bound";
/// On each gpu.func: the bytes of @__flashc_smem the kernel uses (buffers,
/// then the conversion's scratch).
inline constexpr llvm::StringLiteral kSharedBytesAttrName =
    "flashc.shared_bytes";
/// Set by flashc-prepare-nvvm on a gpu.module whose shared buffer it made
/// dynamic: the buffer's size in bytes.
inline constexpr llvm::StringLiteral kDynamicSharedBytesAttrName =
    "flashc.dynamic_shared_bytes";
/// The one shared-memory global of a SIMT-level gpu.module.
inline constexpr llvm::StringLiteral kSharedGlobalName = "__flashc_smem";
/// Conversion-internal marks: a load or local_load that the MMA using it reads
/// itself, fragment by fragment; a window load proven in bounds.
inline constexpr llvm::StringLiteral kFusedIntoMmaAttrName =
    "flashc.fused_into_mma";
inline constexpr llvm::StringLiteral kInBoundsAttrName = "flashc.in_bounds";
/// Conversion-internal mark: a masked store whose mask is the same along the
/// tile dim its vectors would run along, so that it may still store vectors.
inline constexpr llvm::StringLiteral kUniformMaskAttrName =
    "flashc.uniform_mask";
} // namespace flash::simt

#endif // FLASHC_DIALECT_TILE_ATTRIBUTES_H

//===- TmaAttributes.h - the marks tile-tma-copies leaves -------*- C++ -*-===//
//
// tile-tma-copies (sm_90a) marks the pipelined copies that go through the
// TMA unit; convert-tile-to-simt lowers them (TmaCopyToSIMT.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_DIALECT_TILE_TMAATTRIBUTES_H
#define FLASH_DIALECT_TILE_TMAATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace flash::tile {
/// tile.async_copy and tile.async_wait attribute (i64): the index of the
/// kernel's mbarrier for slot 0 of the copies' loop (slot s: index + s). On a
/// copy: one TMA box per column block, signalled on the barrier of its slot.
/// On the wait at the top of the loop body: a parity wait on the barrier of
/// the slot the iteration reads.
inline constexpr llvm::StringLiteral kTmaBarrierAttrName = "tile.tma_barrier";
/// tile.async_copy attribute (string): the TMA swizzle of the copy's boxes,
/// "128B", "64B", "32B" or "none" (the slot's swizzle over one box).
inline constexpr llvm::StringLiteral kTmaSwizzleAttrName = "tile.tma_swizzle";
/// tile.async_wait attribute (i64): the slots of the loop's buffers.
inline constexpr llvm::StringLiteral kTmaStagesAttrName = "tile.tma_stages";
/// func.func attribute (dense i64 array): the arrival count of each of the
/// kernel's mbarriers (the TMA copies into one slot).
inline constexpr llvm::StringLiteral kTmaBarriersAttrName = "tile.tma_barriers";
/// tile-warp-specialize: on the kernel, {consumer_warps, producer_regs,
/// consumer_regs}; on the producer's copies, a unit attr (they wait on the
/// slot's empty barrier and are issued by lane 0 of the producer warp); on
/// a ring's wait, a unit attr (each consumer warp releases the slot at the
/// end of the body); on the scf.if that splits the roles, a unit attr.
inline constexpr llvm::StringLiteral kWarpSpecializeAttrName =
    "tile.warp_specialize";
inline constexpr llvm::StringLiteral kTmaProducerAttrName = "tile.tma_producer";
inline constexpr llvm::StringLiteral kTmaReleaseAttrName = "tile.tma_release";
inline constexpr llvm::StringLiteral kWarpRolesAttrName = "tile.warp_roles";
/// tile-warp-specialize, cp.async rings (gathered rows the TMA unit cannot
/// read): on a ring's copies and commits (i64), the index of the kernel's
/// full mbarrier for slot 0 of the ring, as tile.tma_barrier; the producer
/// warpgroup's threads wait on the slot's empty barrier before its copies
/// and each commit becomes the issuing thread's
/// cp.async.mbarrier.arrive.noinc on the slot's full barrier (whose count,
/// in tile.tma_barriers, is the producer's threads). On the ring's wait,
/// beside the TMA marks: the slot's bytes were written through the generic
/// proxy, so the consumers fence.proxy.async after their full wait.
inline constexpr llvm::StringLiteral kCpAsyncBarrierAttrName =
    "tile.cp_async_barrier";
/// tile-overlap-wgmma: on a releasing wait (i64, default 1), how many
/// iterations back the slot it releases was read: iteration k releases the
/// slot of k - lag (lag 2: block k - 1's V is read by P V in iteration k).
inline constexpr llvm::StringLiteral kTmaReleaseLagAttrName =
    "tile.tma_release_lag";
/// tile-persistent: on a persistent kernel's loop over its tiles (dense i64
/// array, one entry per iter_arg of the loop), the first barrier index of
/// a ring: iter_arg n counts the blocks ring I_n filled in the tiles before
/// this one. Its copies, reads and waits take block k's slot and phase from
/// that count plus k, so the rings' barriers carry on from tile to tile.
inline constexpr llvm::StringLiteral kTmaRingCountsAttrName =
    "tile.tma_ring_counts";
/// tile-persistent: on an arith.addi in a loop over the tiles (i64, a ring's
/// first barrier index), the ring's count before the ring's next loop (its
/// prologue copies, the loop, and the reads after it): the count before the
/// earlier loop plus that loop's trip count.
inline constexpr llvm::StringLiteral kTmaRingBaseAttrName =
    "tile.tma_ring_base";
/// Named barriers of a warp-specialized kernel (0 stays the CTA's): the
/// consumers' own barriers, and the consumers' hand-over of the shared
/// memory to the producer before a ring's first copies.
inline constexpr int64_t kConsumerBarrierId = 1;
inline constexpr int64_t kHandoverBarrierId = 2;
/// tile-pingpong-warpgroups: consumer warpgroup g waits on named barrier
/// kPingPongBarrierId + g before its GEMMs; on the role split's scf.if, the
/// number of consumer warpgroups taking turns (i64; the emulator runs each
/// of them as its own side).
inline constexpr int64_t kPingPongBarrierId = 3;
inline constexpr llvm::StringLiteral kPingPongAttrName = "tile.pingpong";
/// The consumers' transposed copy of an f8e4m3 V for P V (its barriers,
/// loads, stores and proxy fence) and the wgmma that reads the copy: a
/// wgmma group that does not read it stays in flight across the copy
/// (simt-defer-wgmma-waits).
inline constexpr llvm::StringLiteral kFp8TransposeAttrName =
    "simt.fp8_transpose";
/// tile.atomic_add attribute (unit), from atomic_add's `tma = true`: on
/// sm_90a, where the window is a box of whole rows of an f32 tensor, the
/// adds go through the TMA unit as reduce-adds from a shared staging buffer
/// (convert-tile-to-simt, TmaCopyToSIMT.cpp) instead of one red.global.add
/// per element.
inline constexpr llvm::StringLiteral kTmaReduceAttrName = "tile.tma_reduce";
/// The producer warpgroup's threads (one warp of them issues the copies).
inline constexpr int64_t kProducerThreads = 128;
} // namespace flash::tile

#endif // FLASH_DIALECT_TILE_TMAATTRIBUTES_H

//===- TmaCopyToSIMT.cpp - the TMA copies tile-tma-copies marked ----------===//
//
// Lowered before the conversion, while the loops are intact (a wait needs its
// loop's induction variable), into ops the conversion keeps:
//
//   kernel entry        thread 0 inits each mbarrier with its arrival count,
//                       fence.mbarrier_init, bar.sync 0; the barriers follow
//                       the kernel's buffers in @__flashc_smem (8 bytes each)
//   tile.async_copy     if thread 0 (and the copy's predicate):
//     {tma_barrier = I}   mbarrier.arrive.expect_tx(bar[I + slot], slot bytes)
//                         and one cp.async.bulk.tensor per column block of
//                         the slot, coordinates innermost first, the column
//                         block's start in the last dim; the map is a
//                         __grid_constant__ kernel parameter `T.tmap` (one
//                         per tensor, box and swizzle) listed in
//                         the kernel's flashc.tensor_maps
//   tile.async_wait     iteration k = (iv - lb) / step of its loop waits on
//     {tma_barrier = I}   bar[I + k % S] for parity (k / S) & 1: round k / S
//                         of that slot
//
// In a kernel tile-warp-specialize split (`tile.warp_specialize`), each
// slot also has an "empty" mbarrier (after the full ones, one arrival per
// consumer warp), and:
//
//   tile.async_copy     lane 0 of the producer warp issues; in a loop the
//     {tma_producer}      whole warp first waits on empty[I + slot] for
//                         parity ((j / S) & 1) ^ 1, j = k + S - 1 the copy's
//                         iteration: the release of round j / S - 1 (a
//                         fresh barrier passes parity 1 at once)
//   tile.async_wait     as above, and first (k > 0) lane 0 of each
//     {tma_release}       consumer warp arrives on empty[I + (k - L) % S]
//                         (k >= L; L: tile.tma_release_lag, default 1):
//                         a wgmma.wait_group 0 since iteration k - L
//                         retired its reads of that slot
//
// cp.async rings of a warp-specialized kernel (tile.cp_async_barrier = I,
// the full barriers counting the producer warpgroup's threads):
//
//   tile.async_copy     under its predicate as a whole (else it would
//     {cp_async_barrier}  zero-fill a slot unwaited), and in a loop after
//                         the producer's threads wait on empty[I + slot]
//                         as above; the copy stays for the conversion
//                         (cp.async in the consumers' layout, the
//                         producer's threads counted from the split)
//   tile.async_commit   if the predicate of the copy before it: each thread
//     {cp_async_barrier}  cp.async.mbarrier.arrive.noinc on full[I + slot]
//   tile.async_wait     the TMA wait above, then fence.proxy.async: the
//     {cp_async_barrier}  slot was written through the generic proxy
//
// In a persistent kernel (tile-persistent) the loop over the tiles carries
// each ring's count of the blocks it filled in earlier tiles
// (tile.tma_ring_counts), and a ring's later key loop in a tile starts from
// the arith.addi marked tile.tma_ring_base: block j of the loop is block
// base + j of the CTA's, in slot (base + j) % S with phase ((base + j) / S)
// & 1. Every copy's and read's slot moves on by the base, the producer's
// prologue copies wait on their slot's empty barrier like the loop's, and
// the releases carry over: iteration k of a tile's first loop releases the
// previous tile's last blocks.
//
// Rows past the tensor's end arrive as zeros from the TMA unit and count in
// the transaction bytes like the others. Predicated-off copies (past the
// loop's end) are not issued: nothing waits for them.
//
// On sm_90a a tile.atomic_add marked tile.tma_reduce whose window is a box
// (tmaReduceStagingOf) goes to global memory as TMA reduce-adds instead of
// one red.global.add per element, whose addresses take registers a
// consumer warp may not have beside dK and dV (FlashAttention-3's dQ). The
// staging buffer (one for all such ops, after the kernel's buffers, on a
// 128-byte boundary; where it does not fit, the adds stay atomics) holds
// the tile as boxes of 8 columns (TmaReduceStaging), and around the op:
//
//   before              thread 0: cp.async.bulk.wait_group.read 0 (its
//                       reduce-adds from the buffer's last use have read
//                       it), then a barrier
//   tile.atomic_add     kept, marked simt.tma_reduce_staging: each thread
//                       stores its registers into the buffer
//   after               fence.proxy.async.shared::cta (the TMA unit reads
//                       through the async proxy), a barrier, and thread 0
//                       issues one cp.reduce.async.bulk.tensor .add per
//                       column block and commits the bulk group
//   each return         thread 0: cp.async.bulk.wait_group 0
//
// The barriers are the CTA's, the consumers' named barrier in a
// warp-specialized kernel, where thread 0 is a consumer's. Rows of the box
// past the tensor's end are not written.
//
//===----------------------------------------------------------------------===//
#include "TmaCopyToSIMT.h"
#include "Patterns.h"
#include "Utility.h"

#include "flashc/Dialect/Tile/Attributes.h"
#include "flashc/Dialect/Tile/TileDialect.h"

#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "flashc/Runtime/Arch.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace flash::tile;
using namespace flash::simt;

namespace {
constexpr int64_t kMbarrierBytes = 8;
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlignment = 64;
/// How long one try_wait may suspend the thread before it probes again, in
/// nanoseconds (CUTLASS's hint).
constexpr int64_t kWaitTicks = 0x989680;

struct TmaLowering {
  func::FuncOp kernel;
  int64_t barriersAt = 0;
  /// The index of empty[0] (the number of full barriers), when the kernel
  /// is warp-specialized.
  int64_t emptyFirst = -1;
  Value leader, lane0;
  /// Persistent kernels: each ring copy's block over the CTA's tiles.
  DenseMap<Operation *, Value> blocks;
  /// Map arguments by (tensor, box, swizzle).
  std::map<std::string, Value> maps;
  SmallVector<Attribute> specs;

  Value barrierAddress(OpBuilder &b, Location loc, int64_t first, Value slot) {
    Value offset = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, slot, i32Const(b, loc, 8)),
        i32Const(b, loc, barriersAt + kMbarrierBytes * first));
    return sharedByteAddress(b, loc, sharedGlobal(b, loc), offset);
  }

  /// Iteration k = (iv - lb) / step of `loop`.
  Value iteration(OpBuilder &b, Location loc, scf::ForOp loop) {
    Value since = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                        loop.getLowerBound());
    return arith::DivUIOp::create(b, loc, since, loop.getStep());
  }

  /// The blocks ring `first` filled before the loop `op` belongs to, in a
  /// persistent kernel's loop over the tiles: the last count tile-persistent
  /// marked before `op` in the tile (`tile.tma_ring_base`: the ring's next
  /// loop), else the count of the earlier tiles; null outside such a loop.
  static Value ringBase(Operation *op, int64_t first) {
    for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
         loop = loop->getParentOfType<scf::ForOp>()) {
      auto rings =
          loop->getAttrOfType<DenseI64ArrayAttr>(kTmaRingCountsAttrName);
      if (!rings)
        continue;
      Operation *at = loop.getBody()->findAncestorOpInBlock(*op);
      for (Operation *prev = at->getPrevNode(); prev;
           prev = prev->getPrevNode())
        if (auto ring = prev->getAttrOfType<IntegerAttr>(kTmaRingBaseAttrName);
            ring && ring.getInt() == first)
          return prev->getResult(0);
      for (auto [n, ring] : llvm::enumerate(rings.asArrayRef()))
        if (ring == first)
          return loop.getRegionIterArgs()[n];
    }
    return {};
  }

  /// The ring loop `copy` refills slots in, or null for a prologue's copy
  /// (whose parent may be a persistent kernel's loop over the tiles).
  static scf::ForOp ringLoopOf(AsyncCopyOp copy) {
    auto loop = dyn_cast<scf::ForOp>(copy->getParentOp());
    return loop && !loop->hasAttr(kTmaRingCountsAttrName) ? loop : scf::ForOp();
  }

  /// Iteration k of `op`'s loop, counted from the ring's first block in the
  /// CTA: plus the blocks of earlier tiles in a persistent kernel.
  Value ringIteration(OpBuilder &b, Location loc, scf::ForOp loop,
                      Operation *op, int64_t first) {
    Value k = iteration(b, loc, loop);
    if (Value base = ringBase(op, first))
      return arith::AddIOp::create(b, loc, base, k);
    return k;
  }

  /// In a persistent kernel, block j of a tile's ring is block base + j of
  /// the CTA's (base: the blocks of its earlier tiles) and takes slot
  /// (base + j) % S, the slot and barrier phase that follow the last tile's:
  /// each copy's and each read's slot moves on by the base, and each copy's
  /// block (j = k + S - 1 in the loop, the slot in the prologue) is kept for
  /// its empty wait.
  LogicalResult carryRings() {
    SmallVector<AsyncCopyOp> copies;
    kernel.walk([&](AsyncCopyOp copy) {
      if (copy->hasAttr(kTmaBarrierAttrName) ||
          copy->hasAttr(kCpAsyncBarrierAttrName))
        copies.push_back(copy);
    });
    DenseMap<Operation *, int64_t> ringOfBuffer;
    for (AsyncCopyOp copy : copies) {
      auto attr = copy->getAttrOfType<IntegerAttr>(kTmaBarrierAttrName);
      if (!attr)
        attr = copy->getAttrOfType<IntegerAttr>(kCpAsyncBarrierAttrName);
      int64_t first = attr.getInt();
      Operation *buffer = copy.getDest().getDefiningOp();
      if (!buffer)
        return copy.emitOpError("ring copy into a buffer that is not a "
                                "tile.local_alloc");
      ringOfBuffer[buffer] = first;
      Value base = ringBase(copy, first);
      if (!base)
        continue;
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      int64_t slots = copy.getDest().getType().getSlots();
      Value stages = i32Const(b, loc, slots);
      Value j = blockOf(b, loc, copy, slots);
      Value block =
          arith::AddIOp::create(b, loc, base, j ? j : copy.getSlot());
      blocks[copy] = block;
      copy.getSlotMutable().assign(
          arith::RemUIOp::create(b, loc, block, stages));
    }
    for (auto [buffer, first] : ringOfBuffer)
      for (Operation *user : buffer->getUsers()) {
        auto read = dyn_cast<LocalLoadOp>(user);
        Value base = read ? ringBase(read, first) : Value();
        if (!base)
          continue;
        OpBuilder b(read);
        Location loc = read.getLoc();
        Value slots = i32Const(b, loc, read.getSource().getType().getSlots());
        read.getSlotMutable().assign(arith::RemUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, base, read.getSlot()),
            slots));
      }
    return success();
  }

  /// The block of its ring whose slot `copy` fills, where the producer
  /// waits for that slot's release: in a persistent kernel every copy's,
  /// else that of a copy in the loop (iteration k refills the slot S - 1
  /// blocks ahead; the prologue's slots are fresh); else null.
  Value blockOf(OpBuilder &b, Location loc, AsyncCopyOp copy, int64_t stages) {
    if (Value block = blocks.lookup(copy))
      return block;
    scf::ForOp loop = ringLoopOf(copy);
    if (!loop)
      return {};
    return arith::AddIOp::create(b, loc, iteration(b, loc, loop),
                                 i32Const(b, loc, stages - 1));
  }

  /// The producer's wait, before the copies of block j of the ring, for the
  /// release of their slot's round j / S - 1.
  void waitEmpty(OpBuilder &b, Location loc, Value j, int64_t stages,
                 int64_t first, Value slot) {
    Value round = arith::DivUIOp::create(b, loc, j, i32Const(b, loc, stages));
    Value parity = arith::XOrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, round, i32Const(b, loc, 1)),
        i32Const(b, loc, 1));
    NVVM::MBarrierTryWaitParityOp::create(
        b, loc, barrierAddress(b, loc, emptyFirst + first, slot), parity,
        i32Const(b, loc, kWaitTicks));
  }

  /// A cp.async ring's copy on the producer side, under its predicate as a
  /// whole (a predicated-off copy would still zero-fill its slot, unwaited
  /// and into a slot the consumers may be reading): in the loop, the slot's
  /// empty wait first; the copy stays for the conversion.
  LogicalResult lowerCpAsyncCopy(AsyncCopyOp copy, int64_t first) {
    if (emptyFirst < 0)
      return copy.emitOpError("cp.async ring copy in a kernel that is not "
                              "warp-specialized");
    copy->removeAttr(kCpAsyncBarrierAttrName);
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    int64_t stages = copy.getDest().getType().getSlots();
    Value block = blockOf(b, loc, copy, stages);
    Value pred = copy.getPred();
    if (pred) {
      auto guard = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
      copy->moveBefore(guard.getThenRegion().front().getTerminator());
      copy.getPredMutable().clear();
      b.setInsertionPoint(copy);
    }
    if (block)
      waitEmpty(b, loc, block, stages, first, copy.getSlot());
    return success();
  }

  /// A cp.async ring's commit: each producer thread's arrival on the full
  /// barrier of the slot the copy before it filled, once its copies so far
  /// have landed (.noinc: the count holds the arrivals).
  LogicalResult lowerCpAsyncCommit(AsyncCommitOp commit, int64_t first) {
    auto copy = dyn_cast_or_null<AsyncCopyOp>(commit->getPrevNode());
    if (!copy || emptyFirst < 0)
      return commit.emitOpError("cp.async ring commit must follow its slot's "
                                "copies in a warp-specialized kernel");
    OpBuilder b(commit);
    Location loc = commit.getLoc();
    emitGuarded(b, loc, copy.getPred(), [&] {
      NVVM::CpAsyncMBarrierArriveOp::create(
          b, loc, barrierAddress(b, loc, first, copy.getSlot()),
          /*noinc=*/true);
    });
    commit.erase();
    return success();
  }

  /// The map of `tensor` (a kernel tensor parameter that `op` accesses)
  /// for boxes `box` swizzled by `swizzle`.
  FailureOr<Value> mapFor(Operation *op, Value tensor, ArrayRef<int64_t> box,
                          StringRef swizzle) {
    auto cast = tensor.getDefiningOp<UnrealizedConversionCastOp>();
    auto arg = cast ? dyn_cast<BlockArgument>(cast.getOperand(0)) : nullptr;
    auto name = arg ? kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          kArgNameAttrName)
                    : nullptr;
    if (!name)
      return op->emitOpError("TMA tensor is not a kernel tensor parameter");
    std::string key = name.str() + "|" + swizzle.str();
    for (int64_t d : box)
      key += "|" + std::to_string(d);
    if (auto it = maps.find(key); it != maps.end())
      return it->second;
    MLIRContext *ctx = kernel.getContext();
    Builder b(ctx);
    std::string mapName = name.str() + ".tmap";
    if (llvm::any_of(specs, [&](Attribute a) {
          return llvm::cast<DictionaryAttr>(a).getAs<StringAttr>("name").getValue() ==
                 mapName;
        }))
      mapName += std::to_string(specs.size());
    // By value, 64-byte aligned; the PTX emitter makes the kernel's last
    // flashc.tensor_maps parameters __grid_constant__ (NVVM takes
    // nvvm.grid_constant on an llvm.func kernel only), so that the TMA unit
    // reads each map in place.
    auto byval = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
    DictionaryAttr attrs = b.getDictionaryAttr({
        b.getNamedAttr(kArgNameAttrName, b.getStringAttr(mapName)),
        b.getNamedAttr(LLVM::LLVMDialect::getByValAttrName(),
                       TypeAttr::get(byval)),
        b.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(),
                       b.getI64IntegerAttr(kTensorMapAlignment)),
    });
    unsigned index = kernel.getNumArguments();
    if (failed(kernel.insertArgument(index, LLVM::LLVMPointerType::get(ctx),
                                     attrs, op->getLoc())))
      return op->emitOpError("cannot add the tensor map parameter");
    specs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(mapName)),
        b.getNamedAttr("tensor", name),
        b.getNamedAttr("box", b.getDenseI64ArrayAttr(box)),
        b.getNamedAttr("swizzle", b.getStringAttr(swizzle)),
        b.getNamedAttr("oob", b.getStringAttr("zero")),
    }));
    Value map = kernel.getArgument(index);
    maps[key] = map;
    return map;
  }

  LogicalResult lowerCopy(AsyncCopyOp copy) {
    Location loc = copy.getLoc();
    int64_t first = copy->getAttrOfType<IntegerAttr>(kTmaBarrierAttrName).getInt();
    auto swizzle = copy->getAttrOfType<StringAttr>(kTmaSwizzleAttrName);
    auto alloc = copy.getDest().getDefiningOp<LocalAllocOp>();
    if (!swizzle || !alloc)
      return copy.emitOpError("TMA copy needs tile.tma_swizzle and a "
                              "tile.local_alloc destination");
    SharedType type = copy.getDest().getType();
    ArrayRef<int64_t> window = copy.getWindow();
    unsigned rank = copy.getSource().getType().getRank();
    int64_t boxCols = type.getStoredRowBytes() / type.getElementBytes();
    int64_t blocks = type.getCols() / boxCols;
    int64_t blockBytes = type.getRows() * type.getStoredRowBytes();
    SmallVector<int64_t> box(rank, 1);
    box[window[0]] = type.getRows();
    box[rank - 1] = boxCols;
    FailureOr<Value> map =
        mapFor(copy, copy.getSource(), box, swizzle.getValue());
    if (failed(map))
      return failure();

    OpBuilder b(copy);
    Value slot = copy.getSlot();
    bool producer = copy->hasAttr(kTmaProducerAttrName);
    if (producer && emptyFirst < 0)
      return copy.emitOpError("producer copy in a kernel that is not "
                              "warp-specialized");
    Value issue = producer ? lane0 : leader;
    if (producer) {
      // The whole warp waits for the slot's release, then lane 0 issues.
      Value block = blockOf(b, loc, copy, type.getSlots());
      if (Value pred = copy.getPred()) {
        auto guard = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
        b.setInsertionPointToStart(&guard.getThenRegion().front());
      }
      if (block)
        waitEmpty(b, loc, block, type.getSlots(), first, slot);
    } else if (Value pred = copy.getPred()) {
      issue = arith::AndIOp::create(b, loc, issue, pred);
    }
    auto ifOp = scf::IfOp::create(b, loc, issue, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value bar = barrierAddress(b, loc, first, slot);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), bar, i32Const(b, loc, type.getSlotBytes()), {}, {},
        Value());
    Value slotAt = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, slot,
                              i32Const(b, loc, type.getSlotBytes())),
        i32Const(b, loc, *alloc.getOffset()));
    auto ptr7 = LLVM::LLVMPointerType::get(b.getContext(), 7);
    for (int64_t blk = 0; blk < blocks; ++blk) {
      Value at = arith::AddIOp::create(b, loc, slotAt,
                                       i32Const(b, loc, blk * blockBytes));
      Value dst = LLVM::AddrSpaceCastOp::create(
          b, loc, ptr7, sharedByteAddress(b, loc, sharedGlobal(b, loc), at));
      SmallVector<Value> coords;
      for (int d = rank - 1; d >= 0; --d)
        coords.push_back(d == int(rank) - 1 ? i32Const(b, loc, blk * boxCols)
                                            : copy.getOffsets()[d]);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, dst, *map, coords, bar, ValueRange{}, Value(), Value(),
          NVVM::TMALoadModeAttr(), BoolAttr(), NVVM::CTAGroupKindAttr(),
          Value());
    }
    copy.erase();
    return success();
  }

  LogicalResult lowerWait(AsyncWaitOp wait) {
    Location loc = wait.getLoc();
    auto loop = dyn_cast<scf::ForOp>(wait->getParentOp());
    auto stages = wait->getAttrOfType<IntegerAttr>(kTmaStagesAttrName);
    if (!loop || loop->hasAttr(kTmaRingCountsAttrName) || !stages ||
        !loop.getInductionVar().getType().isInteger(32))
      return wait.emitOpError("TMA wait must be in the body of its copies' "
                              "i32 scf.for and carry tile.tma_stages");
    int64_t first = wait->getAttrOfType<IntegerAttr>(kTmaBarrierAttrName).getInt();
    OpBuilder b(wait);
    Value k = ringIteration(b, loc, loop, wait, first);
    Value numSlots = i32Const(b, loc, stages.getInt());
    if (wait->hasAttr(kTmaReleaseAttrName)) {
      if (emptyFirst < 0)
        return wait.emitOpError("releasing wait in a kernel that is not "
                                "warp-specialized");
      // Iteration k - lag ended its reads of its slot, (k + S - lag) % S,
      // with a wgmma.wait_group 0 before this iteration (lag 1: the body's
      // last op once converted; lag 2, tile-overlap-wgmma: the wait for
      // that block's P V in iteration k - 1); lane 0 releases it here
      // rather than at the end of the iteration before, so that no address
      // stays live across the body.
      int64_t lag = 1;
      if (auto attr = wait->getAttrOfType<IntegerAttr>(kTmaReleaseLagAttrName))
        lag = attr.getInt();
      if (lag < 1 || lag > stages.getInt())
        return wait.emitOpError("releases the slot of ")
               << lag << " iterations back, outside its " << stages.getInt()
               << " stages";
      Value prev = arith::RemUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, k,
                                i32Const(b, loc, stages.getInt() - lag)),
          numSlots);
      Value notFirst =
          lag == 1 ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, k,
                                           i32Const(b, loc, 0))
                   : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           k, i32Const(b, loc, lag));
      auto release = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, lane0, notFirst),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&release.getThenRegion().front());
      NVVM::MBarrierArriveOp::create(
          b, loc, Type(), barrierAddress(b, loc, emptyFirst + first, prev),
          Value(), NVVM::MemScopeKindAttr());
    }
    Value slot = arith::RemUIOp::create(b, loc, k, numSlots);
    Value round = arith::DivUIOp::create(b, loc, k, numSlots);
    Value parity = arith::AndIOp::create(b, loc, round, i32Const(b, loc, 1));
    NVVM::MBarrierTryWaitParityOp::create(b, loc,
                                          barrierAddress(b, loc, first, slot),
                                          parity, i32Const(b, loc, kWaitTicks));
    // cp.async wrote the slot through the generic proxy, wgmma reads it
    // through the async one: the reader's proxy fence, after the acquire.
    if (wait->hasAttr(kCpAsyncBarrierAttrName))
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
    wait.erase();
    return success();
  }

  /// The staging buffer's bytes at `offset`.
  Value stagingAddress(OpBuilder &b, Location loc, int64_t offset) {
    return sharedByteAddress(b, loc, sharedGlobal(b, loc),
                             i32Const(b, loc, stagingAt + offset));
  }

  /// The wait and barrier before `op`, and the fence, barrier and TMA
  /// reduce-adds after it (the file's header).
  LogicalResult lowerReduce(AtomicAddOp op, const TmaReduceStaging &staging) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> window = op.getWindow();
    unsigned rank = op.getDest().getType().getRank();
    SmallVector<int64_t> box(rank, 1);
    box[window[0]] = staging.rows;
    box[rank - 1] = TmaReduceStaging::kBlockCols;
    FailureOr<Value> map =
        mapFor(op, op.getDest(), box, "none");
    if (failed(map))
      return failure();
    MLIRContext *ctx = op.getContext();
    OpBuilder b(op);
    emitGuarded(b, loc, leader, [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                           b.getUnitAttr());
    });
    barrier(b, loc);
    op->setAttr(kTmaReduceStagingAttrName, b.getI64IntegerAttr(stagingAt));
    b.setInsertionPointAfter(op);
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    barrier(b, loc);
    emitGuarded(b, loc, leader, [&] {
      for (int64_t blk = 0; blk < staging.blocks(); ++blk) {
        SmallVector<Value> coords;
        for (int d = rank - 1; d >= 0; --d)
          coords.push_back(
              d == int(rank) - 1
                  ? arith::AddIOp::create(
                        b, loc, op.getOffsets()[d],
                        i32Const(b, loc, blk * TmaReduceStaging::kBlockCols))
                        .getResult()
                  : op.getOffsets()[d]);
        NVVM::CpAsyncBulkTensorReduceOp::create(
            b, loc, *map, stagingAddress(b, loc, blk * staging.blockBytes()),
            NVVM::TMAReduxKindAttr::get(ctx, NVVM::TMAReduxKind::ADD),
            NVVM::TMAStoreModeAttr::get(ctx, NVVM::TMAStoreMode::TILE), coords,
            Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
    return success();
  }

  /// Thread 0 waits for its reduce-adds before the kernel returns.
  void waitReducesAtReturns() {
    kernel.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      emitGuarded(b, ret.getLoc(), leader, [&] {
        NVVM::CpAsyncBulkWaitGroupOp::create(b, ret.getLoc(),
                                             b.getI32IntegerAttr(0),
                                             UnitAttr());
      });
    });
  }

  /// Where the staging buffer starts in @__flashc_smem.
  int64_t stagingAt = 0;
};
} // namespace

flash::tile::layout::SwizzleParams TmaReduceStaging::swizzle() const {
  return {cols * 4, 4, /*perPhase=*/1, /*maxPhase=*/1,
          cols > kBlockCols ? kBlockCols * 4 : 0, rows};
}

std::optional<TmaReduceStaging>
flash::simt::tmaReduceStagingOf(AtomicAddOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getValue().getType());
  GlobalType global = op.getDest().getType();
  ArrayRef<int64_t> window = op.getWindow();
  unsigned rank = global.getRank();
  if (!op->hasAttr(kTmaReduceAttrName) || !targetsWgmma(op) || op.getMask() ||
      !type || type.getRank() != 2 ||
      !global.getElementType().isF32() || window.size() != 2 ||
      window[1] != int64_t(rank) - 1 || window[0] >= window[1] ||
      !global.isStaticDim(rank - 1))
    return std::nullopt;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  if (global.getShape()[rank - 1] != cols ||
      cols % TmaReduceStaging::kBlockCols != 0 || rows > 256 || rows % 8 != 0)
    return std::nullopt;
  return TmaReduceStaging{rows, cols};
}

LogicalResult flash::simt::lowerTmaCopies(func::FuncOp kernel) {
  auto counts = kernel->getAttrOfType<DenseI64ArrayAttr>(kTmaBarriersAttrName);
  SmallVector<std::pair<AtomicAddOp, TmaReduceStaging>> reduces;
  kernel.walk([&](AtomicAddOp op) {
    if (std::optional<TmaReduceStaging> staging = tmaReduceStagingOf(op))
      reduces.push_back({op, *staging});
  });
  MLIRContext *ctx = kernel.getContext();
  Builder attrs(ctx);
  TmaLowering lowering;
  lowering.kernel = kernel;
  int64_t buffers = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>(
          flash::tile::kSharedBytesAttrName))
    buffers = attr.getInt();
  if (!reduces.empty()) {
    // Each op waits for the buffer's last reads before it writes, so one
    // buffer serves them all. Where it would not fit beside the kernel's
    // buffers, the adds stay atomics.
    lowering.stagingAt = llvm::alignTo(buffers, 128);
    int64_t bytes = 0;
    for (auto &[op, staging] : reduces)
      bytes = std::max(bytes, staging.bytes());
    int64_t barrierBytes =
        kMbarrierBytes * (counts ? 2 * int64_t(counts.size()) : 0);
    if (lowering.stagingAt + bytes + barrierBytes >
        flash::findArch("sm_90a")->maxShared)
      reduces.clear();
    else
      buffers = lowering.stagingAt + bytes;
  }
  if (!counts && reduces.empty())
    return success();
  kernel->removeAttr(kTmaBarriersAttrName);
  lowering.barriersAt = llvm::alignTo(buffers, kMbarrierBytes);
  SmallVector<int64_t> all;
  if (counts)
    all.append(counts.asArrayRef().begin(), counts.asArrayRef().end());
  auto split = kernel->getAttrOfType<DictionaryAttr>(kWarpSpecializeAttrName);
  if (split && counts) {
    auto warps = split.getAs<IntegerAttr>("consumer_warps");
    if (!warps)
      return kernel.emitOpError("tile.warp_specialize without consumer_warps");
    lowering.emptyFirst = counts.size();
    all.append(counts.size(), warps.getInt());
  }
  auto bytes = attrs.getI64IntegerAttr(
      lowering.barriersAt + kMbarrierBytes * int64_t(all.size()));
  kernel->setAttr(flash::tile::kSharedBytesAttrName, bytes);
  kernel->setAttr(flash::simt::kSharedBytesAttrName, bytes);

  Location loc = kernel.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  lowering.leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          tid, i32Const(b, loc, 0));
  if (lowering.emptyFirst >= 0)
    lowering.lane0 = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, tid, i32Const(b, loc, 31)),
        i32Const(b, loc, 0));
  // Thread 0 inits every barrier before any thread arms or waits on one.
  if (!all.empty()) {
    auto init = scf::IfOp::create(b, loc, lowering.leader, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&init.getThenRegion().front());
      for (auto [i, count] : llvm::enumerate(all)) {
        Value bar = sharedByteAddress(
            b, loc, sharedGlobal(b, loc),
            i32Const(b, loc,
                     lowering.barriersAt + kMbarrierBytes * int64_t(i)));
        NVVM::MBarrierInitOp::create(b, loc, bar, i32Const(b, loc, count),
                                     Value());
      }
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
    barrier(b, loc);
  }
  for (auto &[op, staging] : reduces)
    if (failed(lowering.lowerReduce(op, staging)))
      return failure();
  if (!reduces.empty())
    lowering.waitReducesAtReturns();

  if (failed(lowering.carryRings()))
    return failure();
  // The commits first: each reads the slot and predicate of the copy
  // before it, which then moves under its predicate.
  SmallVector<AsyncCommitOp> commits;
  SmallVector<AsyncCopyOp> copies;
  kernel.walk([&](Operation *op) {
    if (!op->hasAttr(kCpAsyncBarrierAttrName))
      return;
    if (auto commit = dyn_cast<AsyncCommitOp>(op))
      commits.push_back(commit);
    else if (auto copy = dyn_cast<AsyncCopyOp>(op))
      copies.push_back(copy);
  });
  auto firstOf = [](Operation *op) {
    return op->getAttrOfType<IntegerAttr>(kCpAsyncBarrierAttrName).getInt();
  };
  for (AsyncCommitOp commit : commits)
    if (failed(lowering.lowerCpAsyncCommit(commit, firstOf(commit))))
      return failure();
  for (AsyncCopyOp copy : copies)
    if (failed(lowering.lowerCpAsyncCopy(copy, firstOf(copy))))
      return failure();
  SmallVector<Operation *> marked;
  kernel.walk([&](Operation *op) {
    if (op->hasAttr(kTmaBarrierAttrName))
      marked.push_back(op);
  });
  for (Operation *op : marked) {
    LogicalResult done = failure();
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      done = lowering.lowerCopy(copy);
    else if (auto wait = dyn_cast<AsyncWaitOp>(op))
      done = lowering.lowerWait(wait);
    else
      return op->emitOpError("carries tile.tma_barrier but is neither an "
                             "async_copy nor an async_wait");
    if (failed(done))
      return failure();
  }
  // The rings' counts are lowered into every slot and phase.
  kernel.walk([](Operation *op) {
    op->removeAttr(kTmaRingBaseAttrName);
    op->removeAttr(kTmaRingCountsAttrName);
  });
  if (!lowering.specs.empty())
    // Under its SIMT-level name: copied as it is onto the gpu.func.
    kernel->setAttr("flashc.tensor_maps", attrs.getArrayAttr(lowering.specs));
  return success();
}

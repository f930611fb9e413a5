//===- AllocateShared.cpp - offsets for shared-memory buffers by liveness -===//
//
// Every tile.local_alloc of a kernel gets a byte offset in the kernel's shared
// memory; buffers that are never live at the same time share bytes.
//
// Live ranges are intervals over the ops of the function body's (only) block:
// a use is represented by its ancestor in that block, so a use inside a loop
// (or any other region) covers the whole loop. A tile.async_copy also keeps
// its buffer live until the first `tile.async_wait 0` after it (in its block,
// else after an enclosing op): until then the copy may still land, e.g. the
// zero-filled prefetches of a pipelined loop's last iterations, drained after
// the loop.
//
// With `persistent-rings` the buffers of a TMA ring are live across the whole
// body: in a persistent kernel the ring's producer refills them for the next
// tile while the consumers still work on this one, so no other buffer may
// take their bytes at any point of the body.
//
// Re-running the pass recomputes everything (offsets already present are
// ignored; barriers it inserted are found again and not duplicated), so it is
// idempotent. A function without buffers gets no `tile.shared_bytes`.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/TmaAttributes.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace flash {
#define GEN_PASS_DEF_TILEALLOCATESHARED
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
namespace tile = flash::tile;

namespace {
// cp.async writes and ldmatrix reads 16-byte chunks.
constexpr int64_t kAlignment = 16;
// wgmma reads swizzled buffers whose pattern starts on its natural boundary
// (the descriptors' base offset 0): up to 1024 bytes for 128-byte rows.
constexpr int64_t kWgmmaAlignment = 1024;

struct Buffer {
  tile::LocalAllocOp alloc;
  int64_t bytes = 0;
  // Positions in the body block, inclusive; `first` is the op at `start`.
  int64_t start = 0, end = 0;
  Operation *first = nullptr;
  int64_t offset = 0;

  bool liveWith(const Buffer &o) const {
    return start <= o.end && o.start <= end;
  }
  bool sharesBytesWith(const Buffer &o) const {
    return offset < o.offset + o.bytes && o.offset < offset + bytes;
  }
};

class Allocator {
public:
  Allocator(func::FuncOp func, bool persistentRings)
      : func(func), persistentRings(persistentRings) {}

  LogicalResult run() {
    SmallVector<tile::LocalAllocOp> allocs;
    func.walk([&](tile::LocalAllocOp op) { allocs.push_back(op); });
    if (allocs.empty()) {
      func->removeAttr(tile::kSharedBytesAttrName);
      return success();
    }
    if (!func.getBody().hasOneBlock())
      return func.emitError()
             << "tile-allocate-shared: the live ranges of shared buffers are "
                "computed over one block; this function's body has "
             << func.getBody().getBlocks().size();
    body = &func.getBody().front();
    for (Operation &op : *body)
      position[&op] = static_cast<int64_t>(position.size());
    for (tile::LocalAllocOp alloc : allocs)
      if (failed(addBuffer(alloc)))
        return failure();
    assignOffsets();
    insertReuseBarriers();
    return success();
  }

private:
  LogicalResult addBuffer(tile::LocalAllocOp alloc) {
    Buffer b;
    b.alloc = alloc;
    b.bytes = alloc.getType().getBytes();
    for (Operation *user : alloc->getUsers()) {
      if (!isa<tile::AsyncCopyOp, tile::LocalLoadOp>(user))
        return user->emitError()
               << "tile-allocate-shared: a shared buffer may only be used by "
                  "tile.async_copy and tile.local_load, not by '"
               << user->getName() << "' (its live range would be unknown)";
      Operation *anchor = body->findAncestorOpInBlock(*user);
      if (!b.first || position[anchor] < b.start)
        b.first = anchor;
      b.start = position[b.first];
      b.end = std::max(b.end, position[anchor]);
      if (isa<tile::AsyncCopyOp>(user))
        b.end = std::max(b.end, position[landed(user)]);
    }
    if (persistentRings && fillsTmaRing(alloc)) {
      b.first = &body->front();
      b.start = 0;
      b.end = position[&body->back()];
    }
    if (!b.first) {
      // Unused: live at its own position only.
      b.first = body->findAncestorOpInBlock(*alloc);
      b.start = b.end = position[b.first];
    }
    index[alloc] = buffers.size();
    buffers.push_back(b);
    return success();
  }

  static bool fillsTmaRing(tile::LocalAllocOp alloc) {
    return llvm::any_of(alloc->getUsers(), [](Operation *user) {
      return isa<tile::AsyncCopyOp>(user) &&
             user->hasAttr(tile::kTmaBarrierAttrName);
    });
  }

  // The op of the body block by which `copy` has surely landed: the anchor of
  // the first `tile.async_wait 0` after it in its block or, failing that,
  // after an enclosing op; else the body's terminator.
  Operation *landed(Operation *copy) {
    for (Operation *op = copy;; op = op->getParentOp()) {
      for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
        if (auto wait = dyn_cast<tile::AsyncWaitOp>(next);
            wait && wait.getPending() == 0)
          return body->findAncestorOpInBlock(*next);
      if (op->getBlock() == body)
        return &body->back();
    }
  }

  // Linear scan: buffers in order of their first use, each at the lowest
  // aligned offset whose bytes no buffer live at the same time occupies
  // (first fit). The fa2 shapes (a Q buffer dead before the KV loops, loops
  // whose buffers are live only in their own loop) come out optimal.
  void assignOffsets() {
    for (size_t i = 0; i < buffers.size(); ++i)
      order.push_back(i);
    llvm::stable_sort(order, [&](size_t a, size_t b) {
      return buffers[a].start < buffers[b].start;
    });
    int64_t total = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      Buffer &b = buffers[order[k]];
      SmallVector<std::pair<int64_t, int64_t>> taken;
      for (size_t j = 0; j < k; ++j) {
        const Buffer &o = buffers[order[j]];
        if (o.liveWith(b))
          taken.push_back({o.offset, o.offset + o.bytes});
      }
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [lo, hi] : taken) {
        if (offset + b.bytes <= lo)
          break;
        offset = std::max(offset, static_cast<int64_t>(
                                      llvm::alignTo(hi, alignment())));
      }
      b.offset = offset;
      total = std::max(total, offset + b.bytes);
    }
    Builder builder(func.getContext());
    for (Buffer &b : buffers)
      b.alloc.setOffsetAttr(builder.getI64IntegerAttr(b.offset));
    func->setAttr(tile::kSharedBytesAttrName, builder.getI64IntegerAttr(total));
  }

  // A buffer that reuses bytes of a buffer live earlier needs a barrier
  // between the earlier buffer's last access (other warps may still be
  // reading it) and each of its own accesses. Only ops before its first
  // anchor can touch those bytes, so a barrier that an access reaches walking
  // back through its own and its enclosing blocks will do for it, e.g. the
  // one at the top of a loop body that stages into the buffer. When some
  // access has none, one goes right before the first anchor.
  void insertReuseBarriers() {
    for (size_t i : order) {
      const Buffer &b = buffers[i];
      bool reuses = llvm::any_of(buffers, [&](const Buffer &o) {
        return o.end < b.start && o.sharesBytesWith(b);
      });
      if (!reuses || llvm::all_of(b.alloc->getUsers(), [&](Operation *user) {
            return followsBarrier(user, b);
          }))
        continue;
      OpBuilder builder(b.first);
      tile::BarrierOp::create(builder, b.first->getLoc());
    }
  }

  bool followsBarrier(Operation *access, const Buffer &b) {
    for (Operation *op = access; op != func.getOperation();
         op = op->getParentOp())
      for (Operation *prev = op->getPrevNode(); prev;
           prev = prev->getPrevNode()) {
        if (isa<tile::BarrierOp>(prev))
          return true;
        if (prev->getBlock() == body && position.lookup(prev) < b.start &&
            touchesBytesOf(prev, b))
          return false;
      }
    return false;
  }

  // Whether `op` (or an op nested in it) may access the bytes of `b` other
  // than through `b` itself. Conservative: a wait lands copies of any buffer,
  // and unknown shared-memory effects count.
  bool touchesBytesOf(Operation *op, const Buffer &b) {
    auto result = op->walk([&](Operation *nested) {
      Value buffer;
      if (auto copy = dyn_cast<tile::AsyncCopyOp>(nested))
        buffer = copy.getDest();
      else if (auto load = dyn_cast<tile::LocalLoadOp>(nested))
        buffer = load.getSource();
      if (buffer) {
        auto alloc = buffer.getDefiningOp<tile::LocalAllocOp>();
        if (!alloc || !index.count(alloc))
          return WalkResult::interrupt();
        const Buffer &o = buffers[index.lookup(alloc)];
        return alloc != b.alloc && o.sharesBytesWith(b)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      }
      if (isa<tile::AsyncWaitOp>(nested))
        return WalkResult::interrupt();
      if (isa<tile::AsyncCommitOp, tile::BarrierOp, tile::LocalAllocOp>(nested))
        return WalkResult::advance();
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested)) {
        SmallVector<MemoryEffects::EffectInstance> list;
        effects.getEffects(list);
        return llvm::any_of(list,
                            [](const MemoryEffects::EffectInstance &e) {
                              return isa<tile::SharedMemoryResource>(
                                  e.getResource());
                            })
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      }
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    return result.wasInterrupted();
  }

  /// Buffer alignment: wgmma's on sm_90a (tile.wgmma on the module).
  int64_t alignment() const {
    return tile::targetsWgmma(func) ? kWgmmaAlignment : kAlignment;
  }

  func::FuncOp func;
  bool persistentRings;
  Block *body = nullptr;
  DenseMap<Operation *, int64_t> position; // of the ops of `body`
  DenseMap<Operation *, size_t> index;
  SmallVector<Buffer> buffers;
  SmallVector<size_t> order; // buffers by start
};

struct TileAllocateSharedPass
    : flash::impl::TileAllocateSharedBase<TileAllocateSharedPass> {
  using TileAllocateSharedBase::TileAllocateSharedBase;
  void runOnOperation() override {
    if (failed(Allocator(getOperation(), persistentRings).run()) ||
        failed(checkLimit()))
      signalPassFailure();
  }

  /// The kernel's buffers against the target's shared memory per CTA: a
  /// kernel that cannot launch fails here, not after its whole lowering.
  LogicalResult checkLimit() {
    func::FuncOp func = getOperation();
    auto total = func->getAttrOfType<IntegerAttr>(tile::kSharedBytesAttrName);
    int64_t limit = maxSharedBytes;
    if (limit <= 0 || !total || total.getInt() <= limit)
      return success();
    InFlightDiagnostic diag = func.emitError()
                              << "the kernels need " << total.getInt()
                              << " bytes of shared memory per CTA, more than "
                                 "the "
                              << limit << " that "
                              << (arch.empty() ? std::string("the target")
                                               : std::string(arch))
                              << " allows";
    func.walk([&](tile::LocalAllocOp alloc) {
      diag.attachNote(alloc.getLoc())
          << "staged in shared memory as " << alloc.getType();
    });
    return failure();
  }
};
} // namespace

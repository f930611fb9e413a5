//===- AssignLayouts.cpp - give every tile a distributed layout -----------===//
//
// Values that must share a layout (operands and results of element-wise ops,
// the inputs and outputs of a broadcast, loop-carried values, a store's value
// and mask) form classes;
// each class gets one layout, chosen from what its members are used for:
// accumulators of an MMA take the MMA layout, operands of an MMA their
// operand layout, reductions and the row/column vectors they feed a slice of
// the 2-D layout. Where a use needs another layout than its class has, one
// tile.convert_layout is inserted at that use.
//
// The index tiles of a gathered load follow its rows: a 1-D gather shares
// its indices' class; a 2-D one wants them in the slice of its layout along
// dim 1, or, when it will be staged through shared memory, in the slice of
// the copy's chunk layout (every thread holds the rows it copies). A 2-D
// gather that cannot be staged never takes an MMA operand layout (a slice of
// one does not exist): it is loaded in the default layout and converted.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"
#include "SharedStaging.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Dialect/Tile/WarpgroupLayouts.h"
#include "flashc/Dialect/Tile/WgmmaTarget.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace flash {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// Triton-style blocked layout for tiles of `shape` (rank >= 2) with no MMA
/// around: up to 4 contiguous elements (16 bytes of f32) per thread along
/// the last dim, as many lanes along it as it has vectors, the other lanes
/// along the dim before, warps along the first dim.
BlockedLayoutAttr chooseBlocked(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                int64_t numWarps) {
  size_t rank = shape.size();
  int64_t cols = shape.back();
  int64_t vector = 4;
  while (vector > 1 && cols % vector != 0)
    vector /= 2;
  int64_t lanesPerRow = 1;
  while (lanesPerRow < layout::kWarpSize && cols % (vector * lanesPerRow * 2) == 0)
    lanesPerRow *= 2;
  SmallVector<int64_t> sizePerThread(rank, 1), threadsPerWarp(rank, 1),
      warpsPerCTA(rank, 1), order;
  sizePerThread[rank - 1] = vector;
  threadsPerWarp[rank - 1] = lanesPerRow;
  threadsPerWarp[rank - 2] = layout::kWarpSize / lanesPerRow;
  warpsPerCTA[0] = numWarps;
  for (size_t d = rank; d-- > 0;)
    order.push_back(d);
  return BlockedLayoutAttr::get(ctx, sizePerThread, threadsPerWarp,
                                warpsPerCTA, order);
}

/// The TiledMMA for the kernel's accumulators (of up to `rows` rows, that is
/// ceil(rows / 16) atoms) on `numWarps` warps, unless the kernel names one.
/// When the rows of an accumulator must meet in one warp (row statistics,
/// an accumulator that becomes an A operand: attention), FlashAttention-2's
/// choice: all warps along M, each repeating the atom in registers over its
/// rows, the last step padded if the warps do not divide the atoms (96 rows
/// on 4 warps: [4, 1, 1] x [2, 1, 1], 128 rows computed). Otherwise no warp
/// needs another's rows: the atoms split evenly over as many warps along M
/// as divide them and the other warps go along N, so that no work is padded
/// (96 rows: [2, 2, 1] x [3, 1, 1]; one row: [1, 4, 1]).
MmaLayoutAttr mmaForRows(MLIRContext *ctx, int64_t rows, int64_t numWarps,
                         bool rowsMeet) {
  int64_t atoms = llvm::divideCeilSigned(rows, layout::kAtomM);
  int64_t warpsM = rowsMeet ? numWarps : std::gcd(numWarps, atoms);
  return MmaLayoutAttr::get(ctx, {warpsM, numWarps / warpsM, 1},
                            {llvm::divideCeilSigned(atoms, warpsM), 1, 1});
}

/// Why `mma` cannot be a warpgroup MMA (wgmma m64nNk16) of a TiledMMA of
/// `numWarps` warps along M; empty when it can. Its B operand must be a
/// load that tile-stage-shared stages into a buffer whose slots are wgmma's
/// canonical layout (flash::wgmmaOperandBuffer: rows, or column blocks of
/// longer rows, of the widest swizzle span of 128, 64 or 32 bytes that
/// divides the row), so that wgmma reads it through a descriptor; gathered
/// or not.
std::string warpgroupMismatch(MmaOp mma, int64_t numWarps) {
  auto elementOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  Type element = elementOf(mma.getA());
  bool fp8 = isa<Float8E4M3FNType>(element);
  if (!(element.isF16() || element.isBF16() || fp8) ||
      elementOf(mma.getB()) != element || !mma.getType().getElementType().isF32())
    return "operands are not f16, bf16 or f8e4m3 with an f32 accumulator";
  int64_t m = mma.getType().getDimSize(0), n = mma.getType().getDimSize(1);
  int64_t k = cast<RankedTensorType>(mma.getA().getType())
                  .getDimSize(mma.getTransposeA() ? 0 : 1);
  // wgmma takes e4m3 in k32 steps (m64nNk32).
  int64_t stepK = fp8 ? layout::kWgmmaAtomK8 : layout::kAtomK;
  if (m % (layout::kAtomM * numWarps) != 0 || n % layout::kAtomN != 0 ||
      k % stepK != 0)
    return "its shape does not divide into the warpgroups' 64 x N x " +
           std::to_string(stepK) + " steps";
  if (fp8 && mma.getTransposeA())
    return "its f8e4m3 A is transposed (wgmma reads 8-bit A K-major only)";
  // Gathered rows (a paged or masked KV load) stage like any other load:
  // the gather only decides where each row's chunks come from.
  auto load = mma.getB().getDefiningOp<LoadOp>();
  if (!load || !load->hasOneUse())
    return "B is not a load of its own";
  SharedType buffer = flash::stagingBufferFor(load);
  if (!buffer || !flash::wgmmaOperandBuffer(buffer))
    return "B's staging buffer is not a wgmma operand layout";
  return "";
}

MmaLayoutAttr chooseMma(func::FuncOp kernel, int64_t numWarps,
                        bool rowsMeet) {
  if (auto chosen = kernel->getAttrOfType<MmaLayoutAttr>(kMmaLayoutAttrName))
    return chosen;
  int64_t rows = 0;
  bool warpgroup = numWarps % 4 == 0;
  kernel.walk([&](MmaOp mma) {
    rows = std::max(rows, mma.getType().getDimSize(0));
    warpgroup = warpgroup && warpgroupMismatch(mma, numWarps).empty();
  });
  if (rows == 0)
    return {};
  // On sm_90a (tile.wgmma on the module) the warps of a kernel whose MMAs
  // all fit go along M in warpgroups, one atom per warp and step: the
  // warpgroup MMA layout (WgmmaTarget.h).
  if (warpgroup && targetsWgmma(kernel))
    return MmaLayoutAttr::get(kernel.getContext(), {numWarps, 1, 1}, {1, 1, 1});
  return mmaForRows(kernel.getContext(), rows, numWarps, rowsMeet);
}

/// Whether `value` is computed (within its function) from a tile.reduce.
bool dependsOnReduce(Value value) {
  SmallVector<Value> work = {value};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def)
      continue;
    if (isa<ReduceOp>(def))
      return true;
    for (Value operand : def->getOperands())
      if (seen.insert(operand).second)
        work.push_back(operand);
  }
  return false;
}

RankedTensorType withLayout(Type type, Attribute layout) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               layout);
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  return text + "]";
}

class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp kernel, int64_t numWarps)
      : kernel(kernel), ctx(kernel.getContext()), numWarps(numWarps) {}

  LogicalResult run() {
    for (Type type : kernel.getFunctionType().getInputs())
      if (isa<RankedTensorType>(type))
        return kernel.emitOpError()
               << "takes a tile argument (" << type
               << "); kernel arguments are global tensors and scalars";
    splitCheapProducers();
    if (failed(collect()))
      return failure();
    for (Value v : nodes)
      members[find(v)].push_back(v);
    bool rowsMeet = accumulatorRowsMeet();
    mma = chooseMma(kernel, numWarps, rowsMeet);
    if (rowsMeet && !kernel->hasAttr(kMmaLayoutAttrName))
      chooseOwnMmas();
    if (mma && mma.getNumWarps() != numWarps)
      return kernel.emitOpError()
             << "MMA layout " << mma << " spreads over " << mma.getNumWarps()
             << " warps but the kernel has " << numWarps;
    // Higher ranks first: a tile expanded into a higher rank wants a slice
    // of that rank's layout.
    if (failed(decideHigherRanks()) || failed(decide2D()) || failed(decide1D()))
      return failure();
    apply();
    return success();
  }

private:
  /// A use that needs `layout` whatever its value's class gets.
  struct UseWant {
    OpOperand *use;
    std::function<Attribute()> layout;
    /// Whether the value's class may take this layout (an MMA operand, a
    /// slice of an expansion), or only this use is converted.
    bool choosesClass = true;
  };
  /// A result that is produced in `layout` (a reduction: a slice of its
  /// input's layout), whatever its class gets.
  struct DefWant {
    Value value;
    std::function<Attribute()> layout;
  };

  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }
  void unite(Value a, Value b) { parent[find(a)] = find(b); }
  void addNode(Value v) {
    if (isa<RankedTensorType>(v.getType()) && !parent.count(v)) {
      parent[v] = v;
      nodes.push_back(v);
    }
  }
  void uniteTensors(ValueRange values) {
    Value first;
    for (Value v : values) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      addNode(v);
      if (first)
        unite(first, v);
      else
        first = v;
    }
  }
  Attribute layoutOf(Value v) { return classLayout.lookup(find(v)); }

  /// Gives every use of an index tile that is cheap to recompute its own
  /// copy: iota, splat and constant tiles, and integer (or bool) element-wise
  /// arithmetic on such tiles and scalars (`start_n + arange(0, 64)`, its
  /// `/ PAGE`, `< seqlen`). Uses wanting different layouts (CSE merges
  /// arange(0, 64) for rows and for columns; a paged load's rows and a mask's
  /// columns are one `n`) then each get theirs without a conversion. The
  /// pipeline's CSE merges the copies that end up with one layout again.
  void splitCheapProducers() {
    SmallVector<Operation *> producers;
    DenseSet<Operation *> cheap;
    kernel.walk([&](Operation *op) {
      if (isCheapProducer(op, cheap)) {
        producers.push_back(op);
        cheap.insert(op);
      }
    });
    // Users first: the copies of a chain's last op become further uses of
    // the ops that feed it, which are split after it.
    OpBuilder builder(ctx);
    for (Operation *op : llvm::reverse(producers)) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          op->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      if (uses.size() < 2)
        continue;
      for (OpOperand *use : llvm::drop_begin(uses)) {
        builder.setInsertionPoint(op);
        use->set(builder.clone(*op)->getResult(0));
      }
    }
  }

  static bool isCheapProducer(Operation *op,
                              const DenseSet<Operation *> &cheap) {
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return false;
    if (isa<IotaOp, SplatOp, arith::ConstantOp>(op))
      return true;
    if (!isElementwise(op) ||
        !getElementTypeOrSelf(op->getResult(0).getType()).isInteger())
      return false;
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      return !isa<RankedTensorType>(operand.getType()) ||
             cheap.contains(operand.getDefiningOp());
    });
  }

  static bool isElementwise(Operation *op) {
    if (isa<arith::ConstantOp>(op))
      return false;
    return op->getDialect() &&
           isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
  }

  LogicalResult collect() {
    WalkResult walk = kernel.walk([&](Operation *op) -> WalkResult {
      for (Value result : op->getResults())
        addNode(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            addNode(arg);
      for (Value operand : op->getOperands())
        addNode(operand);

      if (isa<OnlineSoftmaxOp, OnlineSoftmaxFinalizeOp>(op))
        return op->emitOpError()
               << "must be decomposed before layout assignment (run "
                  "tile-decompose-online-softmax first)";
      if (auto tensor = dyn_cast_if_present<RankedTensorType>(
              op->getNumResults() ? op->getResult(0).getType() : Type())) {
        if (tensor.getEncoding() && !isa<ConvertLayoutOp>(op))
          return op->emitOpError() << "already has a layout; "
                                      "tile-assign-layouts runs once";
        if (tensor.getRank() < 1)
          return op->emitOpError() << "produces a tile of rank 0; tiles "
                                      "have at least one dim";
      }

      if (isElementwise(op)) {
        SmallVector<Value> all(op->getOperands());
        llvm::append_range(all, op->getResults());
        uniteTensors(all);
      } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
        uniteTensors({broadcast.getInput(), broadcast.getResult()});
      } else if (auto store = dyn_cast<StoreOp>(op)) {
        // Each thread's mask registers guard its value registers.
        if (Value mask = store.getMask())
          uniteTensors({store.getValue(), mask});
      } else if (auto add = dyn_cast<AtomicAddOp>(op)) {
        if (Value mask = add.getMask())
          uniteTensors({add.getValue(), mask});
      } else if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        for (auto [init, arg, result, yielded] :
             llvm::zip(forOp.getInitArgs(), forOp.getRegionIterArgs(),
                       forOp.getResults(),
                       forOp.getBody()->getTerminator()->getOperands()))
          uniteTensors({init, arg, result, yielded});
      } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        for (auto [i, result] : llvm::enumerate(ifOp.getResults())) {
          SmallVector<Value> all = {result};
          for (Region *branch : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
            if (!branch->empty())
              all.push_back(branch->front().getTerminator()->getOperand(i));
          uniteTensors(all);
        }
      } else if (auto mmaOp = dyn_cast<MmaOp>(op)) {
        uniteTensors({mmaOp.getAcc(), mmaOp.getResult()});
        accumulators.insert(mmaOp.getResult());
        Value result = mmaOp.getResult();
        auto operand = [&](OpOperand &use, unsigned index, bool transposed) {
          useWants.push_back({&use, [this, index, transposed, result] {
                                return DotOperandLayoutAttr::get(
                                    ctx, index, mmaOf(result), transposed);
                              }});
        };
        operand(mmaOp.getAMutable(), 0, mmaOp.getTransposeA());
        operand(mmaOp.getBMutable(), 1, mmaOp.getTransposeB());
      } else if (auto load = dyn_cast<LoadOp>(op); load && load.isGathered()) {
        collectGather(load);
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        Value input = reduce.getInput();
        unsigned axis = reduce.getAxis();
        useWants.push_back({&reduce.getInputMutable(),
                            [this, input] { return reducibleLayout(input); },
                            /*choosesClass=*/false});
        defWants.push_back({reduce.getResult(), [this, input, axis] {
                              return SliceLayoutAttr::get(
                                  ctx, axis, reducibleLayout(input));
                            }});
      } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
        Value result = expand.getResult();
        unsigned axis = expand.getAxis();
        useWants.push_back({&expand.getInputMutable(), [this, result, axis] {
                              return SliceLayoutAttr::get(ctx, axis,
                                                          layoutOf(result));
                            }});
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  void collectGather(LoadOp load) {
    if (load.getType().getRank() == 1) {
      SmallVector<Value> all(load.getIndices());
      all.push_back(load.getResult());
      uniteTensors(all);
      return;
    }
    if (!flash::stagingBufferFor(load))
      unstagedGathers.push_back(load.getResult());
    for (OpOperand &index : load.getIndicesMutable())
      useWants.push_back({&index, [this, load] { return gatherRows(load); }});
  }

  /// The layout of the index tiles of a 2-D gathered load.
  Attribute gatherRows(LoadOp load) {
    Attribute rows = layoutOf(load.getResult());
    if (isa<DotOperandLayoutAttr>(rows)) // staged through shared memory
      rows = flash::gatherChunkLayout(flash::stagingBufferFor(load), numWarps);
    return SliceLayoutAttr::get(ctx, 1, rows);
  }

  static Operation *producer(Value v) {
    return v.getDefiningOp() ? v.getDefiningOp()
                             : v.getParentRegion()->getParentOp();
  }

  /// Checks that every member of the class of `root` fits `layout`. Errors
  /// point at a member that has a source location (constants hoisted by
  /// canonicalization have none).
  LogicalResult assign(Value root, Attribute layout) {
    ArrayRef<Value> values = members[root];
    for (Value v : values) {
      auto shape = cast<RankedTensorType>(v.getType()).getShape();
      std::string error = cast<LayoutAttrInterface>(layout).checkShape(shape);
      if (error.empty())
        continue;
      Operation *at = producer(v);
      for (Value other : values)
        if (!isa<UnknownLoc>(producer(other)->getLoc())) {
          at = producer(other);
          break;
        }
      return at->emitOpError() << "cannot lay out a tile of shape "
                               << shapeString(shape) << " as " << layout
                               << ": " << error;
    }
    classLayout[root] = layout;
    return success();
  }

  /// The accumulator classes whose rows must come together in one warp:
  /// reduced along the rows, or (`operands`) also those that are an MMA's A
  /// operand.
  DenseSet<Value> rowsMeetingRoots(bool operands) {
    DenseSet<Value> accRoots, meeting;
    for (Value acc : accumulators)
      accRoots.insert(find(acc));
    kernel.walk([&](Operation *op) {
      auto reduce = dyn_cast<ReduceOp>(op);
      auto mmaOp = dyn_cast<MmaOp>(op);
      Value root = reduce && reduce.getAxis() == 1 ? find(reduce.getInput())
                   : mmaOp && operands             ? find(mmaOp.getA())
                                                   : Value();
      if (root && accRoots.contains(root))
        meeting.insert(root);
    });
    return meeting;
  }

  /// Whether the rows of some MMA accumulator must come together in one warp.
  bool accumulatorRowsMeet() {
    return !rowsMeetingRoots(/*operands=*/true).empty();
  }

  /// In a kernel whose TiledMMA puts all warps along M (attention), an
  /// accumulator class with fewer atoms than warps, never reduced along its
  /// rows, and into which no column of row statistics is broadcast ([M, 1]
  /// computed from a reduction, as the forward's rescale factors) takes its
  /// own TiledMMA, warps along N: the kernel's would compute each of its rows
  /// several times, in registers needed elsewhere (a backward pass's dQ,
  /// added into memory, and p^T and ds^T of 64 keys on 8 warps). Its MMAs'
  /// operands follow it; an A operand made from it then crosses warps
  /// (shared memory) instead of a register repack.
  void chooseOwnMmas() {
    DenseSet<Value> meeting = rowsMeetingRoots(/*operands=*/false);
    DenseMap<Value, int64_t> rows;
    for (Value acc : accumulators) {
      int64_t m = cast<RankedTensorType>(acc.getType()).getDimSize(0);
      rows[find(acc)] = std::max(rows.lookup(find(acc)), m);
    }
    for (auto [root, m] : rows) {
      bool broadcastInto = llvm::any_of(members[root], [](Value v) {
        auto broadcast = v.getDefiningOp<BroadcastOp>();
        return broadcast && broadcast.getInput().getType().getDimSize(1) == 1 &&
               broadcast.getType().getDimSize(1) != 1 &&
               dependsOnReduce(broadcast.getInput());
      });
      bool replicated = llvm::divideCeilSigned(m, layout::kAtomM) < numWarps;
      if (replicated && !meeting.contains(root) && !broadcastInto)
        ownMma[root] = mmaForRows(ctx, m, numWarps, /*rowsMeet=*/false);
    }
  }

  /// The TiledMMA of the accumulator class of `acc`.
  MmaLayoutAttr mmaOf(Value acc) {
    auto it = ownMma.find(find(acc));
    return it != ownMma.end() ? it->second : mma;
  }

  /// The layout a reduction reads its input in: the input's own, unless that
  /// is an MMA operand layout (which has no slices); then the kernel's
  /// default for the (2-D) shape.
  Attribute reducibleLayout(Value input) {
    Attribute layout = layoutOf(input);
    if (!isa<DotOperandLayoutAttr>(layout))
      return layout;
    return default2D(cast<RankedTensorType>(input.getType()).getShape());
  }

  /// The kernel's MMA layout when it holds the tile without partial
  /// padding (no conversion to and from the MMA's tiles), else blocked.
  Attribute default2D(ArrayRef<int64_t> shape) {
    if (mma && layout::mmaHoldsWhole(mma.getParams(), layout::MmaRole::Acc,
                                     shape))
      return mma;
    return chooseBlocked(ctx, shape, numWarps);
  }

  /// Tiles of rank 3 and more never meet an MMA directly (dot, trans and
  /// online_softmax take 2-D tiles): blocked, whatever their uses want.
  LogicalResult decideHigherRanks() {
    for (auto &[root, values] : members) {
      auto type = cast<RankedTensorType>(root.getType());
      if (type.getRank() > 2 &&
          failed(assign(root, chooseBlocked(ctx, type.getShape(), numWarps))))
        return failure();
    }
    return success();
  }

  LogicalResult decide2D() {
    DenseMap<Value, Attribute> operandWant;
    for (UseWant &want : useWants) {
      Value root = find(want.use->get());
      if (want.choosesClass &&
          cast<RankedTensorType>(want.use->get().getType()).getRank() == 2 &&
          !operandWant.count(root))
        operandWant[root] = want.layout();
    }
    for (Value gathered : unstagedGathers)
      operandWant.erase(find(gathered));
    DenseSet<Value> accRoots;
    for (Value acc : accumulators)
      accRoots.insert(find(acc));
    for (auto &[root, values] : members) {
      auto type = cast<RankedTensorType>(root.getType());
      if (type.getRank() != 2)
        continue;
      Attribute layout = accRoots.count(root) ? Attribute(mmaOf(root))
                         : operandWant.count(root) ? operandWant[root]
                                                   : default2D(type.getShape());
      if (failed(assign(root, layout)))
        return failure();
    }
    return success();
  }

  LogicalResult decide1D() {
    auto wantFor = [&](Value root) -> Attribute {
      for (DefWant &want : defWants)
        if (find(want.value) == root)
          return want.layout();
      for (UseWant &want : useWants)
        if (want.choosesClass && find(want.use->get()) == root)
          return want.layout();
      return {};
    };
    for (auto &[root, values] : members) {
      auto type = cast<RankedTensorType>(root.getType());
      if (type.getRank() != 1)
        continue;
      Attribute layout = wantFor(root);
      if (!layout) {
        // A vector nobody reduces or broadcasts: lay it out as the rows of
        // the kernel's 2-D tiles.
        SmallVector<int64_t, 2> rows = {type.getDimSize(0), 1};
        layout = SliceLayoutAttr::get(ctx, 1, default2D(rows));
      }
      if (failed(assign(root, layout)))
        return failure();
    }
    return success();
  }

  void apply() {
    for (Value v : nodes)
      v.setType(withLayout(v.getType(), layoutOf(v)));
    // Splat constants carry their type in their value too.
    kernel.walk([&](arith::ConstantOp constant) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (splat && splat.getType() != constant.getType())
        constant.setValueAttr(SplatElementsAttr::get(
            cast<ShapedType>(constant.getType()),
            splat.getSplatValue<Attribute>()));
    });
    OpBuilder builder(ctx);
    for (DefWant &want : defWants) {
      Attribute produced = want.layout();
      Type classType = want.value.getType();
      if (withLayout(classType, produced) == classType)
        continue;
      want.value.setType(withLayout(classType, produced));
      builder.setInsertionPointAfterValue(want.value);
      auto convert = ConvertLayoutOp::create(builder, want.value.getLoc(),
                                             classType, want.value);
      want.value.replaceAllUsesExcept(convert, convert);
    }
    for (UseWant &want : useWants) {
      Type needed = withLayout(want.use->get().getType(), want.layout());
      if (want.use->get().getType() == needed)
        continue;
      builder.setInsertionPoint(want.use->getOwner());
      want.use->set(ConvertLayoutOp::create(builder, want.use->get().getLoc(),
                                            needed, want.use->get()));
    }
  }

  func::FuncOp kernel;
  MLIRContext *ctx;
  int64_t numWarps;
  MmaLayoutAttr mma;
  /// Accumulator classes (roots) with a TiledMMA of their own.
  DenseMap<Value, MmaLayoutAttr> ownMma;
  DenseMap<Value, Value> parent;
  SmallVector<Value> nodes;
  llvm::MapVector<Value, SmallVector<Value>> members;
  DenseMap<Value, Attribute> classLayout;
  SmallPtrSet<Value, 8> accumulators;
  /// Results of 2-D gathered loads that tile-stage-shared cannot stage.
  SmallVector<Value> unstagedGathers;
  SmallVector<UseWant> useWants;
  SmallVector<DefWant> defWants;
};

/// An MMA on f8e4m3 operands lowers only to wgmma m64nNk32 (mma.sync has no
/// e4m3 form before sm_89): off sm_90a, or where it cannot be a warpgroup
/// MMA, it is an error at its location here, before any other layout is
/// chosen for it (the interpreter runs it).
LogicalResult rejectFloat8Mma(func::FuncOp func, int64_t numWarps) {
  LogicalResult result = success();
  func.walk([&](MmaOp mma) {
    if (!isa<Float8E4M3FNType>(
            cast<RankedTensorType>(mma.getA().getType()).getElementType()))
      return WalkResult::advance();
    std::string why;
    if (!targetsWgmma(func))
      why = "needs --arch=sm_90a (wgmma with e4m3 operands)";
    else if (std::string m = warpgroupMismatch(mma, numWarps); !m.empty())
      why = "must be a warpgroup MMA (wgmma m64nNk32) on sm_90a, but " + m;
    if (why.empty())
      return WalkResult::advance();
    mma.emitError() << "'dot' on f8e4m3 tiles " << why
                    << "; it runs on --target=interp";
    result = failure();
    return WalkResult::interrupt();
  });
  return result;
}

struct TileAssignLayoutsPass
    : flash::impl::TileAssignLayoutsBase<TileAssignLayoutsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto warps = func->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
    if (!warps)
      return; // not a kernel (e.g. a grid function)
    if (failed(rejectFloat8Mma(func, warps.getInt())))
      return signalPassFailure();
    if (failed(LayoutAssigner(func, warps.getInt()).run()))
      signalPassFailure();
  }
};
} // namespace

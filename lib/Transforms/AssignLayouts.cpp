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
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace flash {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
using namespace flash::tile;

namespace {
/// Triton-style blocked layout for 2-D tiles of `shape` with no MMA around:
/// up to 4 contiguous elements (16 bytes of f32) per thread along the rows,
/// as many lanes along a row as the row has vectors, warps down the columns.
BlockedLayoutAttr chooseBlocked(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                int64_t numWarps) {
  int64_t cols = shape.back();
  int64_t vector = 4;
  while (vector > 1 && cols % vector != 0)
    vector /= 2;
  int64_t lanesPerRow = 1;
  while (lanesPerRow < layout::kWarpSize && cols % (vector * lanesPerRow * 2) == 0)
    lanesPerRow *= 2;
  return BlockedLayoutAttr::get(ctx, {1, vector},
                                {layout::kWarpSize / lanesPerRow, lanesPerRow},
                                {numWarps, 1}, {1, 0});
}

/// FlashAttention-2's TiledMMA: warps along M only, and enough atoms per warp
/// along M that the warps together cover the largest accumulator's rows.
MmaLayoutAttr chooseMma(func::FuncOp kernel, int64_t numWarps) {
  if (auto chosen = kernel->getAttrOfType<MmaLayoutAttr>(kMmaLayoutAttrName))
    return chosen;
  int64_t rows = 0;
  kernel.walk([&](MmaOp mma) {
    rows = std::max(rows, mma.getType().getDimSize(0));
  });
  if (rows == 0)
    return {};
  int64_t perWarp = layout::kAtomM * numWarps;
  int64_t values = rows % perWarp == 0 ? rows / perWarp : 1;
  return MmaLayoutAttr::get(kernel.getContext(), {numWarps, 1, 1},
                            {values, 1, 1});
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
      : kernel(kernel), ctx(kernel.getContext()), numWarps(numWarps),
        mma(chooseMma(kernel, numWarps)) {}

  LogicalResult run() {
    if (mma && mma.getNumWarps() != numWarps)
      return kernel.emitOpError()
             << "MMA layout " << mma << " spreads over " << mma.getNumWarps()
             << " warps but the kernel has " << numWarps;
    for (Type type : kernel.getFunctionType().getInputs())
      if (isa<RankedTensorType>(type))
        return kernel.emitOpError()
               << "takes a tile argument (" << type
               << "); kernel arguments are global tensors and scalars";
    splitCheapProducers();
    if (failed(collect()) || failed(decide2D()) || failed(decide1D()))
      return failure();
    apply();
    return success();
  }

private:
  /// A use that needs `layout` whatever its value's class gets.
  struct UseWant {
    OpOperand *use;
    std::function<Attribute()> layout;
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

  /// Gives every use of an iota, splat or constant tile its own copy, so
  /// that uses wanting different layouts (CSE merges arange(0, 64) for rows
  /// and for columns) each get theirs without a conversion. The pipeline's
  /// CSE merges the copies that end up with one layout again.
  void splitCheapProducers() {
    SmallVector<Operation *> producers;
    kernel.walk([&](Operation *op) {
      if (isa<IotaOp, SplatOp, arith::ConstantOp>(op) &&
          op->getNumResults() == 1 &&
          isa<RankedTensorType>(op->getResult(0).getType()))
        producers.push_back(op);
    });
    OpBuilder builder(ctx);
    for (Operation *op : producers) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          op->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      for (OpOperand *use : llvm::drop_begin(uses)) {
        builder.setInsertionPoint(op);
        use->set(builder.clone(*op)->getResult(0));
      }
    }
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
        if (tensor.getRank() < 1 || tensor.getRank() > 2)
          return op->emitOpError() << "produces a tile of rank "
                                   << tensor.getRank()
                                   << "; only 1-D and 2-D tiles can be laid "
                                      "out over threads";
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
        auto operand = [&](OpOperand &use, unsigned index, bool transposed) {
          useWants.push_back({&use, [this, index, transposed] {
                                return DotOperandLayoutAttr::get(
                                    ctx, index, mma, transposed);
                              }});
        };
        operand(mmaOp.getAMutable(), 0, mmaOp.getTransposeA());
        operand(mmaOp.getBMutable(), 1, mmaOp.getTransposeB());
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        Value input = reduce.getInput();
        unsigned axis = reduce.getAxis();
        defWants.push_back({reduce.getResult(), [this, input, axis] {
                              return SliceLayoutAttr::get(ctx, axis,
                                                          layoutOf(input));
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

  Attribute default2D(ArrayRef<int64_t> shape) {
    if (mma && cast<LayoutAttrInterface>(Attribute(mma)).checkShape(shape).empty())
      return mma;
    return chooseBlocked(ctx, shape, numWarps);
  }

  LogicalResult decide2D() {
    for (Value v : nodes)
      members[find(v)].push_back(v);
    DenseMap<Value, Attribute> operandWant;
    for (UseWant &want : useWants) {
      Value root = find(want.use->get());
      if (cast<RankedTensorType>(want.use->get().getType()).getRank() == 2 &&
          !operandWant.count(root))
        operandWant[root] = want.layout();
    }
    DenseSet<Value> accRoots;
    for (Value acc : accumulators)
      accRoots.insert(find(acc));
    for (auto &[root, values] : members) {
      auto type = cast<RankedTensorType>(root.getType());
      if (type.getRank() != 2)
        continue;
      Attribute layout = accRoots.count(root) ? Attribute(mma)
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
        if (find(want.use->get()) == root)
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
  DenseMap<Value, Value> parent;
  SmallVector<Value> nodes;
  llvm::MapVector<Value, SmallVector<Value>> members;
  DenseMap<Value, Attribute> classLayout;
  SmallPtrSet<Value, 8> accumulators;
  SmallVector<UseWant> useWants;
  SmallVector<DefWant> defWants;
};

struct TileAssignLayoutsPass
    : flash::impl::TileAssignLayoutsBase<TileAssignLayoutsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto warps = func->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
    if (!warps)
      return; // not a kernel (e.g. a grid function)
    if (failed(LayoutAssigner(func, warps.getInt()).run()))
      signalPassFailure();
  }
};
} // namespace

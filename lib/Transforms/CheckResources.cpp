//===- CheckResources.cpp - kernels beyond one CTA's resources, rejected
//---===//
//
// The lowering unrolls every tile into per-thread registers and every
// pipeline stage into its own buffer: a tile of a million elements, or a
// million stages, would run for minutes before any later check. This pass
// bounds both first and names the constants that set them.
//
//===----------------------------------------------------------------------===//
#include "flashc/Transforms/Passes.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "llvm/ADT/SmallString.h"

namespace flash {
#define GEN_PASS_DEF_TILECHECKRESOURCES
#include "flashc/Transforms/Passes.h.inc"
} // namespace flash

using namespace mlir;
namespace tile = flash::tile;

namespace {
/// The front end's limit on the elements of one tile (docs/language.md).
constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// "; change BLOCK_R (256) or BLOCK_C (128)": the kernel's integer constants
/// whose value is one of `sizes`, or a generic hint when none is.
std::string constantsToChange(func::FuncOp kernel, ArrayRef<int64_t> sizes) {
  SmallVector<std::string> names;
  if (auto consts =
          kernel->getAttrOfType<DictionaryAttr>(tile::kConstantsAttrName))
    for (NamedAttribute c : consts)
      if (auto v = dyn_cast<IntegerAttr>(c.getValue()))
        if (v.getType().isInteger(64) && v.getInt() > 1 &&
            llvm::is_contained(sizes, v.getInt()))
          names.push_back(c.getName().str() + " (" +
                          std::to_string(v.getInt()) + ")");
  if (names.empty())
    return "; lower the constants that set it";
  std::string text = "; change ";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? i + 1 == names.size() ? " or " : ", " : "") + names[i];
  return text;
}

/// Whether `loc` names a place in a source file.
bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location l) {
    found |= isa<FileLineColLoc>(l);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Where to report a value of `op`: the op, or for one without a source
/// location (a constant the canonicalizer hoisted and merged) its first
/// user that has one, else the kernel.
Operation *reportAt(Operation *op, func::FuncOp kernel) {
  if (hasFileLocation(op->getLoc()))
    return op;
  for (Operation *user : op->getUsers())
    if (hasFileLocation(user->getLoc()))
      return user;
  return kernel;
}

class ResourceChecker {
public:
  ResourceChecker(func::FuncOp kernel, int64_t threads, int64_t maxRegisters,
                  int64_t maxStages)
      : kernel(kernel), threads(threads), maxRegisters(maxRegisters),
        maxStages(maxStages) {}

  /// The first value or loop over a limit, reported; failure if any.
  LogicalResult run() {
    WalkResult result = kernel.walk([&](Operation *op) {
      if (failed(checkStages(op)))
        return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (BlockArgument arg : region.getArguments())
          if (failed(checkValue(op, arg.getType())))
            return WalkResult::interrupt();
      for (Type t : op->getResultTypes())
        if (failed(checkValue(op, t)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

private:
  LogicalResult checkStages(Operation *op) {
    auto stages = op->getAttrOfType<IntegerAttr>(tile::kNumStagesAttrName);
    if (!stages || stages.getInt() <= maxStages)
      return success();
    return op->emitError() << "the loop has " << stages.getInt()
                           << " pipeline stages, more than the " << maxStages
                           << " a kernel may have"
                           << constantsToChange(kernel, {stages.getInt()});
  }

  LogicalResult checkValue(Operation *op, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return success();
    int64_t elements = tensor.getNumElements();
    if (elements > kMaxTileElements)
      return reportAt(op, kernel)->emitError()
             << "tile of type " << tensor << " has " << elements
             << " elements, more than the 2^20 "
             << "a tile may have"
             << constantsToChange(kernel, tensor.getShape());
    Type element = tensor.getElementType();
    int64_t bits =
        element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
    int64_t words = llvm::divideCeil(elements * bits, 32);
    int64_t registers = llvm::divideCeil(words, threads);
    if (registers <= maxRegisters)
      return success();
    return reportAt(op, kernel)->emitError()
           << "tile of type " << tensor << " needs at least " << registers
           << " registers per thread (" << threads
           << " threads per CTA), more than the " << maxRegisters
           << " a thread has" << constantsToChange(kernel, tensor.getShape())
           << ", or give the kernel more warps";
  }

  func::FuncOp kernel;
  int64_t threads, maxRegisters, maxStages;
};

struct TileCheckResources
    : public flash::impl::TileCheckResourcesBase<TileCheckResources> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto warps = func->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName);
    if (!warps || warps.getInt() <= 0)
      return;
    int64_t threads = 32 * warps.getInt();
    if (failed(ResourceChecker(func, threads, maxRegisters, maxStages).run()))
      signalPassFailure();
  }
};
} // namespace

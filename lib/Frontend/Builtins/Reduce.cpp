//===- Reduce.cpp - Reductions of a tile along one axis -------------------===//

#include "Builtins/Handlers.h"
#include "IRGen/IRGen.h"
#include "Sema/Types.h"

using namespace flash;
using namespace flash::frontend;
using llvm::Twine;

OptVal frontend::emitReduction(BuiltinCall &call, tile::ReduceKind kind) {
  FrontendContext &cx = call.cx;
  std::optional<mlir::Value> x = call.tileArg(0, "a tile");
  if (!x)
    return std::nullopt;
  const ast::KeywordArg *axisArg = call.keyword("axis");
  auto axis = call.gen.evalConstInt(*axisArg->value,
                                    "the axis of " + call.name() + "()");
  if (!axis)
    return std::nullopt;
  auto shape = shapeOf(x->getType());
  if (*axis < 0 || *axis >= (int64_t)shape.size())
    return cx.error(axisArg->value->loc,
                    "axis " + Twine(*axis) +
                        " is out of range for a tile of shape " +
                        shapeStr(shape));
  if (shape.size() < 2)
    return cx.error(call.argLoc(0),
                    "reducing a 1-D tile to a scalar is not supported; '" +
                        call.name() + "' needs a tile of rank >= 2");
  if (isI1(x->getType()))
    return cx.error(call.argLoc(0),
                    "'" + call.name() + "' is not defined on bool tiles");
  shape.erase(shape.begin() + *axis);
  return Val::ofValue(tile::ReduceOp::create(
      call.builder(), call.irLoc(),
      tileType(shape, elementType(x->getType())),
      tile::ReduceKindAttr::get(&cx.context, kind), *x,
      call.builder().getI64IntegerAttr(*axis)));
}

OptVal frontend::emitSum(BuiltinCall &call) {
  if (!call.keyword("axis"))
    return call.cx.error(call.loc(), "'" + call.name() +
                                         "' needs the axis keyword: " +
                                         call.builtin.signature);
  return emitReduction(call, tile::ReduceKind::Sum);
}

//===- InterpBackend.cpp - --target=interp: the tile program --------------===//
//
// Runs the tile-level kernel on the interpreter, every program instance in
// order, on buffers of doubles rounded to the element type.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "Diagnostics.h"
#include "Outputs.h"

namespace flash::run {

namespace {

class InterpBackend : public Backend {
public:
  explicit InterpBackend(const BackendContext &context) : context(context) {}

  int prepare(ParamList &params) override {
    std::string why;
    if (!interp::findKernel(context.module, kernel, gridFn, why)) {
      context.diag.os() << "error: " << why << "\n";
      return 2;
    }
    return collectTileParams(kernel, params, context.diag) ? 0 : 2;
  }

  int run(ParamList &params) override;

private:
  /// The kernel's arguments; tensors move from their arrays into buffers.
  std::vector<interp::RtValue> makeArguments(ParamList &params);
  int report(const interp::InterpError &error) {
    context.diag.error(error.loc, error.message);
    return error.kind == interp::ErrorKind::Runtime ? 1 : 2;
  }

  BackendContext context;
  mlir::func::FuncOp kernel, gridFn;
  std::vector<std::unique_ptr<interp::GlobalBuffer>> buffers;
  std::vector<interp::GlobalBuffer *> bufferOf; // by parameter index
};

std::vector<interp::RtValue> InterpBackend::makeArguments(ParamList &params) {
  std::vector<interp::RtValue> args;
  bufferOf.assign(params.size(), nullptr);
  for (Param &p : params) {
    if (!p.tensor) {
      args.push_back(interp::RtValue::scalar(p.elem, p.scalar));
      continue;
    }
    auto buf = std::make_unique<interp::GlobalBuffer>();
    buf->elem = p.elem;
    buf->shape = p.array.shape;
    size_t n = static_cast<size_t>(p.array.numElements());
    buf->data.resize(n);
    for (size_t i = 0; i < n; ++i)
      buf->data[i] = p.array.get(i);
    p.array.data.clear();
    p.array.data.shrink_to_fit();
    bufferOf[p.index] = buf.get();
    args.push_back(interp::RtValue::globalRef(buf.get()));
    buffers.push_back(std::move(buf));
  }
  return args;
}

int InterpBackend::run(ParamList &params) {
  std::vector<interp::RtValue> args = makeArguments(params);
  std::array<int64_t, 3> grid;
  interp::InterpError error;
  if (!interp::evaluateGrid(gridFn, args, grid, error))
    return report(error);
  if (!interp::runAllPrograms(kernel, args, grid, error))
    return report(error);
  return writeOutputs(
      context.request, params,
      [&](Param &p) {
        interp::GlobalBuffer *buf = bufferOf[p.index];
        npy::Array out(*npyDTypeFor(p.elem), buf->shape);
        for (size_t i = 0; i < buf->data.size(); ++i)
          out.set(i, buf->data[i]);
        return out;
      },
      context.diag);
}

} // namespace

std::unique_ptr<Backend> createInterpBackend(const BackendContext &context) {
  return std::make_unique<InterpBackend>(context);
}

} // namespace flash::run

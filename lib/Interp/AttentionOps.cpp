//===- AttentionOps.cpp - tile.mma and the online softmax -----------------===//
//
// The attention building blocks. Sums accumulate in double and round to f32
// once, at the points where the lowered kernel rounds.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "flashc/Dialect/Tile/TileDialect.h"
#include "flashc/Semantics/ScalarOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flash::interp {

static double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

bool Executor::execMma(const Inst &inst) {
  auto mma = mlir::cast<tile::MmaOp>(inst.op);
  const RtValue &a = val(inst.in[0]), &b = val(inst.in[1]),
                &c = val(inst.in[2]);
  RtValue &r = prep(inst, 0);
  if (a.shape.size() != 2 || b.shape.size() != 2 || r.shape.size() != 2)
    return internalError(inst, "mma operands must be 2-D");
  bool ta = mma.getTransposeA(), tb = mma.getTransposeB();
  int64_t M = r.shape[0], N = r.shape[1];
  int64_t K = ta ? a.shape[0] : a.shape[1];
  if ((ta ? a.shape[1] : a.shape[0]) != M ||
      (tb ? b.shape[1] : b.shape[0]) != K ||
      (tb ? b.shape[0] : b.shape[1]) != N || c.data.size() != r.data.size())
    return internalError(inst, "mma shape mismatch");
  // A as M x K and B^T as N x K, both contiguous along K.
  std::vector<double> A(M * K), BT(N * K);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      A[i * K + k] = ta ? a.data[k * M + i] : a.data[i * K + k];
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k)
      BT[j * K + k] = tb ? b.data[j * K + k] : b.data[k * N + j];
  for (int64_t i = 0; i < M; ++i) {
    const double *ai = A.data() + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const double *bj = BT.data() + j * K;
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += ai[k] * bj[k];
      r.data[i * N + j] = f32(c.data[i * N + j] + s);
    }
  }
  return true;
}

namespace {
/// One tile.online_softmax: the operands, the mode, and scratch rows.
struct OnlineSoftmaxStep {
  OnlineSoftmaxStep(tile::OnlineSoftmaxOp op, const RtValue &S,
                    const RtValue &V, const RtValue &m, const RtValue &l,
                    const RtValue &acc, double scale)
      : S(S), V(V), m(m), l(l), acc(acc), N(S.shape[1]), D(V.shape[1]),
        eager(op.getNormalization() == tile::Normalization::Eager),
        useExp2(op.getExp2()), scaled(static_cast<bool>(op.getScale())),
        scale(scale), sumRounded(op.getSumByMma()), P(N), PV(D) {}

  const RtValue &S, &V, &m, &l, &acc;
  int64_t N, D;
  bool eager, useExp2, scaled;
  double scale;
  bool sumRounded; ///< sum_by_mma: l adds P rounded to V's type
  std::vector<double> P, PV; ///< scratch rows

  /// e^x, or 2^x with exp2: for the scores (`approx`) the lowering's
  /// ex2.approx.ftz, whose subnormal results flush to 0.
  double exp(double x, bool approx) const {
    if (!useExp2)
      return std::exp(x);
    if (!approx)
      return std::exp2(x);
    return sem::visitFloatUnary(sem::ArithMathOpcode::Exp2Ftz,
                                [&](auto fn) { return fn(x); });
  }

  /// Row i of the results: the new max, the new sum and the new acc row.
  void row(int64_t i, double &mNew, double &lNew, double *accOut) {
    const double inf = std::numeric_limits<double>::infinity();
    const double *s = S.data.data() + i * N;
    double mi = m.data[i], li = l.data[i];
    double rowMax = -inf;
    for (int64_t j = 0; j < N; ++j) {
      double x = s[j];
      if (x != x) {
        rowMax = x;
        break;
      }
      if (x > rowMax)
        rowMax = x;
    }
    // As the decomposition: scale the row max of the raw scores, then one
    // fused multiply-add per score.
    if (scaled)
      rowMax = f32(scale * rowMax);
    mNew = (mi != mi || rowMax != rowMax)
               ? std::numeric_limits<double>::quiet_NaN()
               : std::max(mi, rowMax);
    double base = mNew == -inf ? 0.0 : mNew;
    double alpha = f32(exp(f32(mi - base), /*approx=*/true));
    double sumP = 0;
    for (int64_t j = 0; j < N; ++j) {
      double x = f32(scaled ? std::fma(s[j], scale, -base) : s[j] - base);
      P[j] = f32(exp(x, /*approx=*/true));
      sumP += sumRounded ? roundTo(V.elem, P[j]) : P[j];
    }
    lNew = f32(alpha * li + sumP);
    // P rounds to V's type before the P @ V product, as in the lowering.
    std::fill(PV.begin(), PV.end(), 0.0);
    for (int64_t j = 0; j < N; ++j) {
      double pc = roundTo(V.elem, P[j]);
      if (pc == 0)
        continue;
      const double *vj = V.data.data() + j * D;
      for (int64_t d = 0; d < D; ++d)
        PV[d] += pc * vj[d];
    }
    const double *ai = acc.data.data() + i * D;
    for (int64_t d = 0; d < D; ++d) {
      if (eager)
        accOut[d] = lNew == 0 ? 0.0 : f32((alpha * li * ai[d] + PV[d]) / lNew);
      else
        accOut[d] = f32(alpha * ai[d] + PV[d]);
    }
  }
};
} // namespace

bool Executor::execOnlineSoftmax(const Inst &inst) {
  auto os = mlir::cast<tile::OnlineSoftmaxOp>(inst.op);
  const RtValue &S = val(inst.in[0]), &V = val(inst.in[1]),
                &m = val(inst.in[2]), &l = val(inst.in[3]),
                &acc = val(inst.in[4]);
  if (S.shape.size() != 2 || V.shape.size() != 2 || acc.shape.size() != 2)
    return internalError(inst, "online_softmax operands must be 2-D");
  int64_t M = S.shape[0], N = S.shape[1], D = V.shape[1];
  if (V.shape[0] != N || acc.shape[0] != M || acc.shape[1] != D ||
      m.data.size() != static_cast<size_t>(M) ||
      l.data.size() != static_cast<size_t>(M))
    return internalError(inst, "online_softmax shape mismatch");
  // With a scale c, S stands for c * scores. The verifier rejects only
  // constant scales <= 0; a runtime one is checked here.
  bool scaled = static_cast<bool>(os.getScale());
  double scale = scaled ? val(inst.in[5]).data[0] : 1.0;
  if (!(scale > 0)) {
    std::string shown;
    llvm::raw_string_ostream(shown) << llvm::format("%g", scale);
    return runtimeError(inst,
                        "online_softmax scale must be positive, got " + shown);
  }
  OnlineSoftmaxStep step(os, S, V, m, l, acc, scale);
  // Results are distinct SSA values from the operands: writing them leaves
  // the operands intact.
  RtValue &newMax = prep(inst, 0);
  RtValue &newSum = prep(inst, 1);
  RtValue &newAcc = prep(inst, 2);
  for (int64_t i = 0; i < M; ++i)
    step.row(i, newMax.data[i], newSum.data[i], newAcc.data.data() + i * D);
  return true;
}

bool Executor::execFinalize(const Inst &inst) {
  const RtValue &acc = val(inst.in[0]), &l = val(inst.in[1]);
  RtValue &r = prep(inst, 0);
  if (acc.shape.size() != 2 ||
      l.data.size() != static_cast<size_t>(acc.shape[0]))
    return internalError(inst, "online_softmax_finalize shape mismatch");
  int64_t M = acc.shape[0], D = acc.shape[1];
  for (int64_t i = 0; i < M; ++i) {
    double li = l.data[i];
    for (int64_t d = 0; d < D; ++d)
      r.data[i * D + d] = li == 0 ? 0.0 : f32(acc.data[i * D + d] / li);
  }
  return true;
}

} // namespace flash::interp

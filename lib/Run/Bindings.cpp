//===- Bindings.cpp - --arg / --out matched to kernel parameters ----------===//
#include "Bindings.h"
#include "Diagnostics.h"
#include "ParseNumber.h"

#include "flashc/Support/OutOfMemory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace flash::run {

namespace {

/// Binds tensors' arrays; every dim symbol must have one size everywhere.
class ArgumentBinder {
public:
  ArgumentBinder(Diagnostics &diag, uint64_t budget)
      : diag(diag), budgetLeft(budget) {}

  void bindScalar(Param &p);
  void bindTensor(Param &p);

private:
  bool checkArray(Param &p);
  void bindDim(Param &p, unsigned d);

  Diagnostics &diag;
  /// What the tensors read so far left of the run's memory budget.
  uint64_t budgetLeft;
  /// symbol -> (value, name of the param that bound it)
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
};

void ArgumentBinder::bindScalar(Param &p) {
  const std::string &s = p.text;
  double d;
  bool tooLarge;
  if (!parseNumber(s, d, tooLarge)) {
    diag.error("argument '" + p.name + "' is a scalar " + p.declared +
               " parameter and needs a number, not '" + s + "'");
    return;
  }
  if (p.elem.isFloat()) {
    p.scalar = interp::roundTo(p.elem, d);
    // A finite number beyond the type's range (or beyond double's) would
    // silently become inf.
    if (tooLarge || (std::isfinite(d) && !std::isfinite(p.scalar)))
      diag.error("argument '" + p.name + "' is " + s +
                 ", which does not fit in " + p.declared +
                 " (it would round to infinity)");
    return;
  }
  long long v;
  bool overflow;
  if (!parseInteger(s, v, overflow)) {
    diag.error("argument '" + p.name + "' is a scalar " + p.declared +
               " parameter and needs an integer, not '" + s + "'");
    return;
  }
  unsigned w = p.elem.width;
  long long lo = w >= 64 ? std::numeric_limits<long long>::min()
                         : (w == 1 ? 0 : -(1LL << (w - 1)));
  long long hi = w >= 64 ? std::numeric_limits<long long>::max()
                         : (w == 1 ? 1 : (1LL << (w - 1)) - 1);
  if (overflow || v < lo || v > hi) {
    diag.error("argument '" + p.name + "' is " + s +
               ", which does not fit in " + p.declared);
    return;
  }
  p.scalar = static_cast<double>(v);
}

/// Reads the array and checks its dtype and rank.
bool ArgumentBinder::checkArray(Param &p) {
  double ignored;
  if (p.inMemory) {
    // Already loaded.
  } else if (parseNumber(p.text, ignored)) {
    diag.error("argument '" + p.name + "' is a tensor parameter (" +
               p.declared + ") and needs an .npy file, not the number '" +
               p.text + "'");
    return false;
  }
  std::string why;
  OutOfMemoryContext reading("reading argument '" + p.name + "' from '" +
                             p.text + "'");
  if (!p.inMemory && !npy::readFile(p.text, p.array, why, budgetLeft)) {
    bool budget = why.find("memory budget") != std::string::npos;
    diag.error("cannot read argument '" + p.name + "' from '" + p.text +
               "': " + why +
               (budget ? std::string(" (set by --memory-limit or ") +
                             kMemoryBudgetEnv + ", default 8G)"
                       : ""));
    return false;
  }
  // Arrays handed over in memory (Python) were never read against the
  // budget; they only use up what is left.
  budgetLeft -= std::min<uint64_t>(budgetLeft, p.array.data.size());
  auto want = npyDTypeFor(p.elem);
  if (!want) {
    diag.error("parameter '" + p.name + "' has element type " +
               typeText(p.elemType) +
               ", which .npy arguments cannot provide (supported: f16, bf16, "
               "f32, i32, bool, f8e4m3)");
    return false;
  }
  if (!npy::viewAs(p.array, *want)) {
    std::string declared =
        *want == npy::DType::Bool ? "bool" : typeText(p.elemType);
    diag.error("argument '" + p.name + "' is " + npy::dtypeName(p.array.dtype) +
               " but the kernel declares " + declared +
               (*want == npy::DType::BF16
                    ? " (pass an ml_dtypes.bfloat16 array, or its bits as "
                      "uint16)"
                : *want == npy::DType::F8E4M3
                    ? " (pass an ml_dtypes.float8_e4m3fn array)"
                    : ""));
    return false;
  }
  unsigned rank = p.staticDims.size();
  if (p.array.shape.size() != rank) {
    diag.error("argument '" + p.name + "' has rank " +
               std::to_string(p.array.shape.size()) + " (shape " +
               npy::shapeToString(p.array.shape) +
               ") but the kernel declares rank " + std::to_string(rank) + " (" +
               p.declared + ")");
    return false;
  }
  return true;
}

void ArgumentBinder::bindDim(Param &p, unsigned d) {
  int64_t size = p.array.shape[d];
  if (size > std::numeric_limits<int32_t>::max()) {
    diag.error("dim " + std::to_string(d) + " of argument '" + p.name +
               "' is " + std::to_string(size) + ", which does not fit in i32");
    return;
  }
  if (p.staticDims[d] >= 0) {
    int64_t want = p.staticDims[d];
    if (size != want)
      diag.error("argument '" + p.name + "' has size " + std::to_string(size) +
                 " in dim " + std::to_string(d) + " but the kernel declares " +
                 std::to_string(want) + " (" + p.declared + ")");
    return;
  }
  const std::string &sym = p.dimNames[d];
  auto [it, inserted] = symbols.try_emplace(sym, size, p.name);
  if (!inserted && it->second.first != size)
    diag.error("dim '" + sym + "' is " + std::to_string(it->second.first) +
               " in " + it->second.second + " but " + std::to_string(size) +
               " in " + p.name);
}

void ArgumentBinder::bindTensor(Param &p) {
  if (!checkArray(p))
    return;
  for (unsigned d = 0; d < p.staticDims.size(); ++d)
    bindDim(p, d);
  if (llvm::is_contained(p.array.shape, 0))
    diag.note("argument '" + p.name + "' has shape " +
              npy::shapeToString(p.array.shape) + " and holds no elements");
}

/// The parameter `name` names, unless it is unknown or already given.
Param *matchOne(ParamList &params, const std::string &name,
                Diagnostics &diag) {
  Param *p = params.find(name);
  if (!p) {
    diag.error("unknown argument '" + name +
               "' (the kernel's parameters are: " + params.names() + ")");
    return nullptr;
  }
  if (p->given) {
    diag.error("argument '" + name + "' is given twice");
    return nullptr;
  }
  p->given = true;
  return p;
}

/// Records each --arg's text (or in-memory array) on its parameter; names
/// the missing ones.
void matchArguments(ParamList &params, const RunRequest &request,
                    Diagnostics &diag) {
  for (const auto &[name, value] : request.args)
    if (Param *p = matchOne(params, name, diag))
      p->text = value;
  for (const auto &[name, array] : request.arrays) {
    if (Param *p = matchOne(params, name, diag)) {
      // A scalar parameter rejects the text, naming what it got.
      p->inMemory = p->tensor;
      p->array = array;
      p->text = "an array";
    }
  }
  std::string missing;
  for (const Param &p : params)
    if (!p.given)
      missing += (missing.empty() ? "" : ", ") + p.name;
  if (!missing.empty())
    diag.error("missing argument(s) for kernel parameter(s): " + missing +
               " (pass each with --arg NAME=FILE.npy|NUMBER)");
}

/// Each --out names a bound tensor parameter, once.
void checkOutputs(ParamList &params, const RunRequest &request,
                  Diagnostics &diag) {
  llvm::StringSet<> seen;
  for (const auto &[name, file] : request.outs) {
    const Param *p = params.find(name);
    if (!p) {
      diag.error("--out names unknown parameter '" + name +
                 "' (the kernel's parameters are: " + params.names() + ")");
      continue;
    }
    if (!p->tensor) {
      diag.error("--out names scalar parameter '" + name +
                 "'; only tensor parameters can be written");
      continue;
    }
    if (!p->given) {
      diag.error("--out names parameter '" + name +
                 "', which has no --arg (its shape is unknown)");
      continue;
    }
    if (!seen.insert(name).second)
      diag.error("--out names parameter '" + name + "' twice");
  }
}

} // namespace

bool bindArguments(ParamList &params, const RunRequest &request,
                   Diagnostics &diag) {
  unsigned before = diag.numErrors();
  matchArguments(params, request, diag);
  // Loaded and checked in parameter order.
  ArgumentBinder binder(diag, request.memoryBudget);
  for (Param &p : params) {
    if (!p.given)
      continue;
    if (p.tensor)
      binder.bindTensor(p);
    else
      binder.bindScalar(p);
  }
  checkOutputs(params, request, diag);
  return diag.numErrors() == before;
}

} // namespace flash::run

std::string flash::addRunBindings(RunRequest &request,
                                  const std::vector<std::string> &args,
                                  const std::vector<std::string> &outs) {
  auto add = [](const std::string &option, const char *flag, const char *form,
                std::vector<std::pair<std::string, std::string>> &into) {
    size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0)
      return std::string(flag) + " expects " + form + ", got '" + option + "'";
    into.emplace_back(option.substr(0, eq), option.substr(eq + 1));
    return std::string();
  };
  for (const std::string &a : args)
    if (std::string error =
            add(a, "--arg", "NAME=FILE.npy or NAME=NUMBER", request.args);
        !error.empty())
      return error;
  for (const std::string &o : outs)
    if (std::string error = add(o, "--out", "NAME=FILE.npy", request.outs);
        !error.empty())
      return error;
  return {};
}

//===- ArithMathParityTest.cpp - the two executors agree on every op ------===//
//
// Every arith / math opcode of flashc/Semantics runs through both executors
// on the same inputs: one small tile kernel per batch of ops runs on the
// interpreter (the tile program) and on the emulator (the SIMT program that
// `flashc run --target=emulate` lowers it to), and every output must hold the
// same bits. Inputs are edge cases: signed zeros, infinities, NaN,
// subnormals, the extremes of each integer width, shift amounts around the
// width, and a sweep for the unary float ops.
//
// The interpreter holds integers as doubles, so i64 and index run only the
// ops whose results stay far below 2^53 for 32-bit inputs.
//
//===----------------------------------------------------------------------===//

#include "flashc/InitAllDialects.h"
#include "flashc/Pipelines/Pipelines.h"
#include "flashc/Run/Run.h"
#include "flashc/Runtime/Npy.h"
#include "flashc/Semantics/ArithMathOpcode.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace mlir;
using namespace flash;

namespace {

constexpr int kElems = 256; // 16 x 16 operand pairs
const std::string kTensor = "tensor<" + std::to_string(kElems) + "x";
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kI32Min = std::numeric_limits<int32_t>::min();
constexpr double kI32Max = std::numeric_limits<int32_t>::max();

/// One op under test: `"op"(operands) props : (...) -> result`. An operand
/// is "X:type": kernel input X (A, B, ...) converted to `type`, or "s:i1",
/// the scalar parameter s truncated to i1.
struct OpCase {
  std::string op;
  std::vector<std::string> operands;
  std::string result;
  std::string props = ""; ///< e.g. "<{predicate = 1 : i64}>"
  int results = 1;        ///< the op's results, all of type `result`
  int pick = 0;           ///< the one the kernel stores
};

/// An input of a batch: a global of `storage` (i32, f32 or f16) holding
/// kElems values.
struct Input {
  std::string storage;
  std::vector<double> values;
};

/// Ops run by one kernel; op k writes output Ok.
struct Batch {
  std::string name;
  std::map<char, Input> inputs;
  std::vector<OpCase> ops;
  int64_t s = 0; ///< the scalar parameter
};

bool isFloatType(const std::string &t) { return t[0] == 'f' || t[0] == 'b'; }

std::string tensorOf(const std::string &elem) { return kTensor + elem + ">"; }

/// The global element type that holds values of `t` in the kernel's I/O.
std::string storageOf(const std::string &t) {
  if (t == "f16")
    return "f16";
  return isFloatType(t) ? "f32" : "i32";
}

/// The cast op from `from` to `to` (element types), between a storage type
/// and the type it holds.
std::string castOp(const std::string &from, const std::string &to) {
  if (from == "index" || to == "index")
    return "arith.index_cast";
  if (isFloatType(from))
    return from == "f64" || (from == "f32" && to != "f64") ? "arith.truncf"
                                                           : "arith.extf";
  auto width = [](const std::string &t) { return std::stoi(t.substr(1)); };
  return width(from) > width(to) ? "arith.trunci" : "arith.extsi";
}

/// Builds the kernel of a batch as generic-form tile IR.
class KernelBuilder {
public:
  explicit KernelBuilder(const Batch &batch) : batch(batch) {}

  std::string build() {
    std::string body = "  %c0 = arith.constant 0 : i32\n";
    for (const auto &[name, in] : batch.inputs)
      body += "  %in" + std::string(1, name) + " = tile.load %" + name +
              "[%c0] window [0] pad " + (in.storage == "i32" ? "0" : "0.0") +
              " : " + in.storage + " : " + global(in.storage) + " -> " +
              tensorOf(in.storage) + "\n";
    std::string ops;
    for (size_t k = 0; k < batch.ops.size(); ++k)
      ops += opLines(batch.ops[k], k);
    std::string params = paramList();
    return "func.func @grid(" + params +
           ") -> (i32, i32, i32) {\n"
           "  %c1 = arith.constant 1 : i32\n"
           "  return %c1, %c1, %c1 : i32, i32, i32\n}\n"
           "func.func @kernel(" +
           params +
           ") attributes {tile.grid = @grid, tile.num_warps = 1 : i32} {\n" +
           body + conversions + ops + "  return\n}\n";
  }

private:
  static std::string global(const std::string &storage) {
    return "!tile.global<[N], " + storage + ">";
  }
  static std::string operandType(const std::string &operand) {
    std::string t = operand.substr(2);
    return operand[0] == 's' ? t : tensorOf(t);
  }

  std::string paramList() const {
    std::string p;
    auto add = [&](const std::string &name, const std::string &type) {
      p += (p.empty() ? "%" : ",\n    %") + name + ": " + type +
           " {tile.name = \"" + name + "\"}";
    };
    for (const auto &[name, in] : batch.inputs)
      add(std::string(1, name), global(in.storage));
    for (size_t k = 0; k < batch.ops.size(); ++k)
      add("O" + std::to_string(k), global(storageOf(batch.ops[k].result)));
    add("s", "i32");
    return p;
  }

  /// The SSA name of `operand` ("X:type"), converting the input once.
  std::string operandValue(const std::string &operand) {
    auto it = converted.find(operand);
    if (it != converted.end())
      return it->second;
    char name = operand[0];
    std::string t = operand.substr(2);
    std::string v = "%v" + std::to_string(converted.size());
    if (name == 's') {
      conversions += "  " + v + " = arith.trunci %s : i32 to i1\n";
    } else {
      std::string storage = batch.inputs.at(name).storage;
      std::string loaded = "%in" + std::string(1, name);
      if (t == storage)
        return converted[operand] = loaded;
      conversions += "  " + v + " = \"" + castOp(storage, t) + "\"(" + loaded +
                     ") : (" + tensorOf(storage) + ") -> " + tensorOf(t) + "\n";
    }
    return converted[operand] = v;
  }

  std::string opLines(const OpCase &c, size_t k) {
    std::string args, types;
    for (size_t i = 0; i < c.operands.size(); ++i) {
      args += (i ? ", " : "") + operandValue(c.operands[i]);
      types += (i ? ", " : "") + operandType(c.operands[i]);
    }
    std::string name = "%r" + std::to_string(k), r = name;
    std::string resultTypes = tensorOf(c.result);
    for (int i = 1; i < c.results; ++i)
      resultTypes += ", " + tensorOf(c.result);
    std::string s = "  " + r +
                    (c.results > 1 ? ":" + std::to_string(c.results) : "") +
                    " = \"" + c.op + "\"(" + args + ") " + c.props + " : (" +
                    types + ") -> (" + resultTypes + ")\n";
    if (c.results > 1)
      r += "#" + std::to_string(c.pick);
    std::string storage = storageOf(c.result);
    if (c.result != storage) {
      s += "  " + name + "s = \"" + castOp(c.result, storage) + "\"(" + r +
           ") : (" + tensorOf(c.result) + ") -> " + tensorOf(storage) + "\n";
      r = name + "s";
    }
    return s + "  tile.store " + r + ", %O" + std::to_string(k) +
           "[%c0] window [0] : " + tensorOf(storage) + " -> " +
           global(storage) + "\n";
  }

  const Batch &batch;
  std::map<std::string, std::string> converted;
  std::string conversions;
};

//===----------------------------------------------------------------------===//
// The batches
//===----------------------------------------------------------------------===//

/// kElems values: all pairs of `list` (16 entries) for binary operands, by
/// row (`first`) or by column.
std::vector<double> pairs(const std::vector<double> &list, bool first) {
  std::vector<double> v(kElems);
  for (int i = 0; i < kElems; ++i)
    v[i] = list[first ? i / 16 : i % 16];
  return v;
}
/// kElems values: `list`, then a sweep of `step` around 0.
std::vector<double> sweep(const std::vector<double> &list, double step) {
  std::vector<double> v(list);
  for (int i = static_cast<int>(list.size()); i < kElems; ++i)
    v.push_back((i - kElems / 2) * step);
  return v;
}
/// Select conditions (as i32; their low bit is the i1).
std::vector<double> conditions() {
  std::vector<double> v(kElems);
  for (int i = 0; i < kElems; ++i)
    v[i] = (i / 3) % 2;
  return v;
}

OpCase binary(const std::string &op, const std::string &t, char a = 'A',
              char b = 'B') {
  return {op, {std::string(1, a) + ":" + t, std::string(1, b) + ":" + t}, t};
}

/// Integer ops of width `t` on pairs of `values`; divisions take their
/// divisor from `divisors` (none zero at that width). `signedOnly`: the ops
/// whose results stay within 64-bit range of 32-bit inputs.
Batch intBatch(const std::string &t, const std::vector<double> &values,
               const std::vector<double> &divisors, bool signedOnly = false) {
  Batch b{t, {}, {}};
  b.inputs['A'] = {"i32", pairs(values, true)};
  b.inputs['B'] = {"i32", pairs(values, false)};
  b.inputs['D'] = {"i32", pairs(divisors, false)};
  b.inputs['K'] = {"i32", conditions()};
  for (const char *op :
       {"arith.addi", "arith.subi", "arith.maxsi", "arith.minsi", "arith.andi",
        "arith.ori", "arith.xori", "arith.shrsi"})
    b.ops.push_back(binary(op, t));
  for (const char *op :
       {"arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi"})
    b.ops.push_back(binary(op, t, 'A', 'D'));
  if (!signedOnly) {
    for (const char *op : {"arith.muli", "arith.maxui", "arith.minui",
                           "arith.shli", "arith.shrui"})
      b.ops.push_back(binary(op, t));
    for (const char *op : {"arith.divui", "arith.remui", "arith.ceildivui"})
      b.ops.push_back(binary(op, t, 'A', 'D'));
    for (int pick : {0, 1}) { // the low and the high word
      OpCase c = binary("arith.mului_extended", t);
      c.results = 2;
      c.pick = pick;
      b.ops.push_back(c);
    }
  }
  b.ops.push_back({"math.absi", {"A:" + t}, t});
  for (int p = 0; p < 10; ++p) { // every arith.cmpi predicate
    OpCase c = binary("arith.cmpi", t);
    c.result = "i1";
    c.props = "<{predicate = " + std::to_string(p) + " : i64}>";
    b.ops.push_back(c);
  }
  b.ops.push_back({"arith.select", {"K:i1", "A:" + t, "B:" + t}, t});
  return b;
}

/// Float ops of type `t` on pairs of `specials` (16 values in the storage
/// type) and, for unary ops, on them and a sweep.
Batch floatBatch(const std::string &t, const std::vector<double> &specials) {
  Batch b{t, {}, {}};
  std::string storage = storageOf(t);
  std::vector<double> third(kElems);
  for (int i = 0; i < kElems; ++i)
    third[i] = specials[(i * 5 + 3) % 16];
  b.inputs['A'] = {storage, pairs(specials, true)};
  b.inputs['B'] = {storage, pairs(specials, false)};
  b.inputs['C'] = {storage, third};
  b.inputs['E'] = {storage, sweep(specials, 0.1371)};
  b.inputs['K'] = {"i32", conditions()};
  for (const char *op :
       {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf",
        "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
        "math.powf", "math.copysign"})
    b.ops.push_back(binary(op, t));
  for (const char *op :
       {"arith.negf", "math.absf",  "math.exp",       "math.exp2",
        "math.expm1", "math.log",   "math.log2",      "math.log10",
        "math.log1p", "math.sqrt",  "math.rsqrt",     "math.tanh",
        "math.sin",   "math.cos",   "math.erf",       "math.floor",
        "math.ceil",  "math.round", "math.roundeven", "math.trunc"})
    b.ops.push_back({op, {"E:" + t}, t});
  // ex2.approx.ftz's model, Exp2Ftz (its flush: SemanticsTest's cases).
  b.ops.push_back({"math.exp2", {"E:" + t}, t,
                   "<{fastmath = #arith.fastmath<afn>}>"});
  b.ops.push_back({"math.fma", {"A:" + t, "B:" + t, "C:" + t}, t});
  for (int p = 0; p < 16; ++p) { // every arith.cmpf predicate
    OpCase c = binary("arith.cmpf", t);
    c.result = "i1";
    c.props = "<{predicate = " + std::to_string(p) + " : i64}>";
    b.ops.push_back(c);
  }
  b.ops.push_back({"arith.select", {"K:i1", "A:" + t, "B:" + t}, t});
  return b;
}

/// Every cast opcode between the types the executors share.
Batch castBatch() {
  Batch b{"casts", {}, {}};
  b.inputs['A'] = {
      "i32", sweep({0, 1, -1, 127, 128, -129, 255, 256, 2049, 65519, 65520,
                    16777217, -16777217, kI32Max, kI32Min, -123456789},
                   12345.678)};
  b.inputs['B'] = {"f32",
                   sweep({-0.5, 0.99, -1.5, 2.5, 127.9, 128, -129.5, 255.5, 3e9,
                          -3e9, 1e-40, -0.0, kNaN, kInf, -kInf, 65520},
                         0.731)};
  b.inputs['C'] = {"f16",
                   sweep({0, -0.0, 1, -1, 0.5, 65504, -65504, kInf, -kInf, kNaN,
                          std::ldexp(1.0, -24), 0.1, 300, -300, 2.5, -2.5},
                         0.377)};
  auto cast = [&](const char *op, const char *from, const std::string &to) {
    b.ops.push_back({op, {from}, to});
  };
  cast("arith.extsi", "A:i8", "i32");
  cast("arith.extsi", "A:i1", "i16");
  cast("arith.extsi", "A:i32", "i64");
  cast("arith.extui", "A:i8", "i32");
  cast("arith.extui", "A:i1", "i32");
  cast("arith.extui", "A:i32", "i64");
  cast("arith.trunci", "A:i32", "i8");
  cast("arith.trunci", "A:i16", "i1");
  cast("arith.trunci", "A:i64", "i16");
  cast("arith.index_cast", "A:i32", "index");
  cast("arith.index_cast", "A:index", "i16");
  cast("arith.index_castui", "A:i32", "index");
  cast("arith.index_castui", "A:i8", "index");
  cast("arith.sitofp", "A:i32", "f32");
  cast("arith.sitofp", "A:i32", "f16");
  cast("arith.sitofp", "A:i32", "bf16");
  cast("arith.sitofp", "A:i1", "f32");
  cast("arith.sitofp", "A:i64", "f64");
  cast("arith.uitofp", "A:i32", "f32");
  cast("arith.uitofp", "A:i32", "f16");
  cast("arith.uitofp", "A:i8", "bf16");
  cast("arith.fptosi", "B:f32", "i32");
  cast("arith.fptosi", "B:f32", "i8");
  cast("arith.fptosi", "B:f32", "i1");
  cast("arith.fptosi", "C:f16", "i16");
  cast("arith.fptoui", "B:f32", "i32");
  cast("arith.fptoui", "B:f32", "i8");
  cast("arith.fptoui", "C:f16", "i16");
  cast("arith.extf", "C:f16", "f32");
  cast("arith.extf", "B:bf16", "f32");
  cast("arith.extf", "B:f32", "f64");
  cast("arith.extf", "C:f16", "f64");
  cast("arith.truncf", "B:f32", "f16");
  cast("arith.truncf", "B:f32", "bf16");
  cast("arith.truncf", "B:f32", "f8E4M3FN"); // satfinite
  cast("arith.truncf", "C:f16", "f8E4M3FN");
  cast("arith.extf", "B:f8E4M3FN", "f16");
  cast("arith.sitofp", "A:i32", "f8E4M3FN");
  cast("arith.truncf", "B:f64", "f16");
  cast("arith.truncf", "B:f64", "f32");
  cast("arith.bitcast", "B:f32", "i32");
  cast("arith.bitcast", "A:i32", "f32");
  cast("arith.bitcast", "C:f16", "i16");
  cast("arith.bitcast", "A:i16", "f16");
  cast("arith.bitcast", "A:i16", "bf16");
  cast("arith.bitcast", "B:bf16", "i16");
  return b;
}

/// arith.select with one condition for the whole tile (the scalar s).
Batch scalarSelectBatch(int64_t s) {
  Batch b{"select s=" + std::to_string(s), {}, {}};
  b.inputs['A'] = {"f32", sweep({}, 0.5)};
  b.inputs['B'] = {"f32", sweep({}, -0.25)};
  b.inputs['I'] = {"i32", sweep({}, 3)};
  b.inputs['J'] = {"i32", sweep({}, -5)};
  b.ops.push_back({"arith.select", {"s:i1", "A:f32", "B:f32"}, "f32"});
  b.ops.push_back({"arith.select", {"s:i1", "I:i8", "J:i8"}, "i8"});
  b.s = s;
  return b;
}

std::vector<Batch> floatBatches() {
  const std::vector<double> f32 = {
      0,     -0.0,  1,     -1,   0.5,  -2.5,  3.75, 1e-40,
      -7e30, 65504, 65520, 3e38, kInf, -kInf, kNaN, 1 + std::ldexp(1.0, -23)};
  // The smallest f16 subnormal; h * 1024 is the smallest normal.
  const double h = std::ldexp(1.0, -24);
  const std::vector<double> f16 = {0,     -0.0, 1,        -1,    0.5,    -2.5,
                                   3.75,  h,    h * 1024, 65504, -65504, kInf,
                                   -kInf, kNaN, 0.1,      1000};
  return {floatBatch("f32", f32), floatBatch("f16", f16),
          floatBatch("bf16", f32), floatBatch("f64", f32)};
}

std::vector<Batch> intBatches() {
  const std::vector<double> i32 = {
      0,  1,  -1,  2,    -2,      7,       8,          31,
      32, 33, 255, -128, kI32Min, kI32Max, -123456789, 1 << 20};
  const std::vector<double> i32Div = {
      1,  -1,  2,    3,       -7,      8,          31,      32,
      33, 255, -128, kI32Min, kI32Max, -123456789, 1 << 20, 65536};
  const std::vector<double> i16 = {0,      1,    -1,    2,    -2,   7,
                                   15,     16,   17,    255,  -128, 32767,
                                   -32768, 1000, -1000, 65535};
  const std::vector<double> i16Div = {1,    -1,    2,     3,    -7,    15,
                                      16,   17,    255,   -128, 32767, -32768,
                                      1000, -1000, 12345, 65535};
  const std::vector<double> i8 = {0, 1,   -1,   2,   -2,   3,  7,   8,
                                  9, 100, -100, 127, -128, 64, -64, 255};
  const std::vector<double> i8Div = {1, -1,  2,    -2,  3,    -3, 7,   8,
                                     9, 100, -100, 127, -128, 64, -64, 5};
  const std::vector<double> i1 = {0, 1, 0, 1, 0, 1, 0, 1,
                                  0, 1, 0, 1, 0, 1, 0, 1};
  const std::vector<double> i1Div(16, 1);
  return {intBatch("i32", i32, i32Div),
          intBatch("i16", i16, i16Div),
          intBatch("i8", i8, i8Div),
          intBatch("i1", i1, i1Div),
          intBatch("i64", i32, i32Div, /*signedOnly=*/true),
          intBatch("index", i32, i32Div, /*signedOnly=*/true)};
}

std::vector<Batch> allBatches() {
  std::vector<Batch> all = intBatches();
  for (Batch &b : floatBatches())
    all.push_back(std::move(b));
  all.push_back(castBatch());
  all.push_back(scalarSelectBatch(0));
  all.push_back(scalarSelectBatch(1));
  return all;
}

//===----------------------------------------------------------------------===//
// Running a batch on both executors
//===----------------------------------------------------------------------===//

npy::DType dtypeOf(const std::string &storage) {
  if (storage == "f16")
    return npy::DType::F16;
  return storage == "f32" ? npy::DType::F32 : npy::DType::I32;
}

class ArithMathParity : public ::testing::Test {
public:
  ArithMathParity() { flash::loadAllDialects(ctx); }

  std::string tmp(const std::string &name) {
    return testing::TempDir() + "flash_parity_" + std::to_string(getpid()) +
           "_" + name + ".npy";
  }

  void write(const std::string &path, npy::DType dtype,
             const std::vector<double> &values) {
    npy::Array a(dtype, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i)
      a.set(i, values[i]);
    std::string err;
    ASSERT_TRUE(npy::writeFile(path, a, err)) << err;
  }

  npy::Array read(const std::string &path) {
    npy::Array a;
    std::string err;
    EXPECT_TRUE(npy::readFile(path, a, err)) << err;
    return a;
  }

  /// Runs the kernel of `batch` on `target`, writing output k to
  /// outputs[k]; returns runKernel's exit code (-1: no kernel parsed) with
  /// its diagnostics in `diag`.
  int run(const Batch &batch, const std::string &target,
          std::vector<std::string> &outputs, std::string &diag) {
    std::string src = KernelBuilder(batch).build();
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(src, ParserConfig(&ctx));
    if (!module) {
      diag = "cannot parse:\n" + src;
      return -1;
    }
    RunRequest req;
    req.target = target;
    for (const auto &[name, in] : batch.inputs) {
      std::string path = tmp(std::string(1, name));
      write(path, dtypeOf(in.storage), in.values);
      req.args.push_back({std::string(1, name), path});
    }
    outputs.clear();
    for (size_t k = 0; k < batch.ops.size(); ++k) {
      std::string name = "O" + std::to_string(k);
      std::string init = tmp(name), out = tmp(name + "_" + target);
      write(init, dtypeOf(storageOf(batch.ops[k].result)),
            std::vector<double>(kElems, 0));
      req.args.push_back({name, init});
      req.outs.push_back({name, out});
      outputs.push_back(out);
    }
    req.args.push_back({"s", std::to_string(batch.s)});
    llvm::raw_string_ostream os(diag);
    return runKernel(*module, req, os);
  }

  /// Runs `batch` on both executors; every output must be bit-identical.
  void expectSameBits(const Batch &batch) {
    SCOPED_TRACE(batch.name);
    std::vector<std::string> interp, emulate;
    std::string diag;
    ASSERT_EQ(run(batch, "interp", interp, diag), 0) << diag;
    ASSERT_EQ(run(batch, "emulate", emulate, diag), 0) << diag;
    for (size_t k = 0; k < batch.ops.size(); ++k) {
      npy::Array a = read(interp[k]), b = read(emulate[k]);
      size_t size = npy::elementSize(a.dtype);
      ASSERT_EQ(a.data.size(), b.data.size());
      for (size_t i = 0; i < a.data.size() / size; ++i)
        if (std::memcmp(&a.data[i * size], &b.data[i * size], size)) {
          ADD_FAILURE() << describe(batch, k, i) << ": interp " << a.get(i)
                        << ", emulate " << b.get(i);
          break;
        }
    }
  }

  /// The op of output k and the inputs of element i, for messages.
  static std::string describe(const Batch &batch, size_t k, size_t i) {
    const OpCase &c = batch.ops[k];
    std::ostringstream os;
    os << c.op << (c.props.empty() ? "" : " ") << c.props << " -> " << c.result
       << ", element " << i << " (inputs:";
    for (const auto &[name, in] : batch.inputs)
      os << " " << name << " = " << in.values[i];
    os << ")";
    return os.str();
  }

  MLIRContext ctx;
};

TEST_F(ArithMathParity, Integers) {
  for (const Batch &b : intBatches())
    expectSameBits(b);
}

TEST_F(ArithMathParity, Floats) {
  for (const Batch &b : floatBatches())
    expectSameBits(b);
}

TEST_F(ArithMathParity, Casts) { expectSameBits(castBatch()); }

TEST_F(ArithMathParity, ScalarConditionSelect) {
  expectSameBits(scalarSelectBatch(0));
  expectSameBits(scalarSelectBatch(1));
}

/// The opcodes and compare predicates of the arith/math ops under `root`.
struct Coverage {
  std::set<int> opcodes, intPredicates, floatPredicates;

  void add(Operation *root) {
    root->walk([&](Operation *op) {
      auto arith = sem::classifyArithMath(op);
      if (!arith)
        return;
      opcodes.insert(static_cast<int>(arith->opcode));
      if (arith->opcode == sem::ArithMathOpcode::CmpI)
        intPredicates.insert(static_cast<int>(arith->intPredicate));
      if (arith->opcode == sem::ArithMathOpcode::CmpF)
        floatPredicates.insert(static_cast<int>(arith->floatPredicate));
    });
  }

  void expectComplete() const {
    for (int i = 0; i <= static_cast<int>(sem::ArithMathOpcode::Bitcast); ++i)
      EXPECT_TRUE(opcodes.count(i)) << "opcode " << i << " is not run";
    EXPECT_EQ(intPredicates.size(), 10u);
    EXPECT_EQ(floatPredicates.size(), 16u);
  }
};

/// The batches run every opcode and every compare predicate on both
/// executors: in the tile IR the interpreter runs and in the SIMT program the
/// emulator runs, after the canonicalizations of the SIMT pipeline.
TEST_F(ArithMathParity, EveryOpcodeRunsOnBoth) {
  Coverage interp, emulate;
  for (const Batch &b : allBatches()) {
    std::string src = KernelBuilder(b).build();
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(src, ParserConfig(&ctx));
    ASSERT_TRUE(module) << src;
    interp.add(*module);
    PassManager pm(&ctx);
    buildSIMTPipeline(pm);
    ASSERT_TRUE(succeeded(pm.run(*module))) << b.name;
    module->walk([&](gpu::GPUFuncOp f) { emulate.add(f); });
  }
  {
    SCOPED_TRACE("interp");
    interp.expectComplete();
  }
  {
    SCOPED_TRACE("emulate");
    emulate.expectComplete();
  }
}

/// A zero divisor is an error on both, not a value.
TEST_F(ArithMathParity, DivisionByZeroFailsOnBoth) {
  Batch b{"divsi by zero", {}, {}};
  b.inputs['A'] = {"i32", std::vector<double>(kElems, 7)};
  b.inputs['B'] = {"i32", sweep({3, 0}, 1)};
  b.ops.push_back(binary("arith.divsi", "i32"));
  for (const char *target : {"interp", "emulate"}) {
    SCOPED_TRACE(target);
    std::vector<std::string> outputs;
    std::string diag;
    EXPECT_EQ(run(b, target, outputs, diag), 1);
    EXPECT_NE(diag.find("integer division by zero"), std::string::npos) << diag;
  }
}

} // namespace

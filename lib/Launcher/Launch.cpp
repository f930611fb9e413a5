//===- Launch.cpp - run a flashc kernel (PTX + sidecar) on a GPU ----------===//

#include "flashc/Launcher/Launch.h"
#include "flashc/Runtime/Float16.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

namespace flash {
namespace launcher {

namespace {
/// A position in a text being parsed and the first error found in it: what
/// the JSON reader and the grid-expression evaluator share.
struct TextCursor {
  explicit TextCursor(const std::string &text) : s(text) {}

  /// Records `msg` unless an earlier error is recorded; always false.
  bool fail(const std::string &msg) {
    if (why.empty())
      why = msg;
    return false;
  }
  void skip() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos])))
      ++pos;
  }

  const std::string &s;
  size_t pos = 0;
  std::string why;
};
} // namespace

//===----------------------------------------------------------------------===//
// A tiny JSON reader (enough for the sidecar: no surrogate pairs needed)
//===----------------------------------------------------------------------===//

namespace {

struct JValue {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  bool integral = false;
  int64_t integer = 0;
  std::string string;
  std::vector<JValue> array;
  std::vector<std::pair<std::string, JValue>> object;

  const JValue *get(const std::string &key) const {
    for (const auto &kv : object)
      if (kv.first == key)
        return &kv.second;
    return nullptr;
  }
};

class JsonReader : TextCursor {
public:
  explicit JsonReader(const std::string &text) : TextCursor(text) {}

  bool parse(JValue &out, std::string &error) {
    bool ok = value(out, 0);
    if (ok) {
      skip();
      if (pos != s.size())
        ok = fail("trailing text");
    }
    if (!ok) {
      error = "malformed sidecar JSON at offset " + std::to_string(pos) +
              ": " + why;
      return false;
    }
    return true;
  }

private:
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (s.compare(pos, n, word) != 0)
      return fail("unexpected character");
    pos += n;
    return true;
  }
  bool value(JValue &v, int depth) {
    if (depth > 64)
      return fail("nesting too deep");
    skip();
    if (pos >= s.size())
      return fail("unexpected end of input");
    char c = s[pos];
    if (c == '{')
      return object(v, depth);
    if (c == '[')
      return array(v, depth);
    if (c == '"') {
      v.kind = JValue::String;
      return string(v.string);
    }
    if (c == 't' || c == 'f') {
      v.kind = JValue::Bool;
      v.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v.kind = JValue::Null;
      return literal("null");
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c)))
      return number(v);
    return fail(std::string("unexpected character '") + c + "'");
  }
  bool number(JValue &v) {
    size_t start = pos;
    if (s[pos] == '-')
      ++pos;
    bool isInt = true;
    while (pos < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[pos])) ||
            std::strchr(".eE+-", s[pos]))) {
      if (!std::isdigit(static_cast<unsigned char>(s[pos])))
        isInt = false;
      ++pos;
    }
    std::string text = s.substr(start, pos - start);
    char *end = nullptr;
    v.kind = JValue::Number;
    v.number = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() ||
        text == "-")
      return fail("bad number '" + text + "'");
    if (isInt) {
      errno = 0;
      long long i = std::strtoll(text.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        v.integral = true;
        v.integer = i;
      }
    }
    return true;
  }
  bool string(std::string &out) {
    ++pos; // "
    while (pos < s.size() && s[pos] != '"') {
      char c = s[pos++];
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= s.size())
        break;
      char e = s[pos++];
      switch (e) {
      case '"': case '\\': case '/': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (pos + 4 > s.size())
          return fail("bad \\u escape");
        unsigned cp = 0;
        for (int k = 0; k < 4; ++k) {
          char h = s[pos++];
          if (!std::isxdigit(static_cast<unsigned char>(h)))
            return fail("bad \\u escape");
          cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h))
                              ? h - '0'
                              : (std::tolower(h) - 'a' + 10));
        }
        if (cp < 0x80) {
          out += char(cp);
        } else if (cp < 0x800) {
          out += char(0xC0 | (cp >> 6));
          out += char(0x80 | (cp & 0x3F));
        } else {
          out += char(0xE0 | (cp >> 12));
          out += char(0x80 | ((cp >> 6) & 0x3F));
          out += char(0x80 | (cp & 0x3F));
        }
        break;
      }
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
    if (pos >= s.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }
  bool array(JValue &v, int depth) {
    v.kind = JValue::Array;
    ++pos;
    skip();
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      v.array.emplace_back();
      if (!value(v.array.back(), depth + 1))
        return false;
      skip();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }
  bool object(JValue &v, int depth) {
    v.kind = JValue::Object;
    ++pos;
    skip();
    if (pos < s.size() && s[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skip();
      if (pos >= s.size() || s[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (!string(key))
        return false;
      skip();
      if (pos >= s.size() || s[pos] != ':')
        return fail("expected ':'");
      ++pos;
      v.object.emplace_back(std::move(key), JValue());
      if (!value(v.object.back().second, depth + 1))
        return false;
      skip();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }
};

bool isInteger(const std::string &s) {
  if (s.empty())
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size())
    return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

} // namespace

bool parseSidecar(const std::string &json, Sidecar &out, std::string &error) {
  JValue root;
  if (!JsonReader(json).parse(root, error))
    return false;
  auto bad = [&](const std::string &what) {
    error = "malformed sidecar: " + what;
    return false;
  };
  if (root.kind != JValue::Object)
    return bad("the top level is not an object");
  auto str = [&](const JValue &obj, const char *key, std::string &dst,
                 const std::string &where) {
    const JValue *v = obj.get(key);
    if (!v || v->kind != JValue::String)
      return bad(where + "'" + key + "' is missing or not a string");
    dst = v->string;
    return true;
  };
  auto integer = [&](const JValue &obj, const char *key, int64_t &dst,
                     const std::string &where) {
    const JValue *v = obj.get(key);
    if (!v || v->kind != JValue::Number || !v->integral)
      return bad(where + "'" + key + "' is missing or not an integer");
    dst = v->integer;
    return true;
  };
  Sidecar sc;
  if (!str(root, "entry", sc.entry, "") || !str(root, "arch", sc.arch, ""))
    return false;
  if (const JValue *v = root.get("ptx_version"))
    if (v->kind == JValue::String)
      sc.ptxVersion = v->string;

  const JValue *params = root.get("params");
  if (!params || params->kind != JValue::Array)
    return bad("'params' is missing or not an array");
  for (size_t i = 0; i < params->array.size(); ++i) {
    const JValue &p = params->array[i];
    std::string where = "params[" + std::to_string(i) + "]: ";
    if (p.kind != JValue::Object)
      return bad(where + "not an object");
    SidecarParam sp;
    std::string kind;
    if (!str(p, "name", sp.name, where) || !str(p, "kind", kind, where) ||
        !str(p, "dtype", sp.dtype, where))
      return false;
    where = "param '" + sp.name + "': ";
    if (kind != "tensor" && kind != "scalar")
      return bad(where + "kind '" + kind + "' is neither tensor nor scalar");
    sp.tensor = kind == "tensor";
    if (sp.tensor) {
      const JValue *dims = p.get("dims");
      if (!dims || dims->kind != JValue::Array)
        return bad(where + "'dims' is missing or not an array");
      for (const JValue &d : dims->array) {
        if (d.kind == JValue::Number && d.integral && d.integer >= 0)
          sp.dims.push_back(std::to_string(d.integer));
        else if (d.kind == JValue::String && !d.string.empty())
          sp.dims.push_back(d.string);
        else
          return bad(where + "a dim is neither a symbol nor a size");
      }
    }
    const JValue *abi = p.get("abi");
    if (!abi || abi->kind != JValue::Array)
      return bad(where + "'abi' is missing or not an array");
    for (const JValue &a : abi->array) {
      if (a.kind != JValue::String)
        return bad(where + "an 'abi' entry is not a string");
      sp.abi.push_back(a.string);
    }
    // The launcher packs exactly this layout; anything else is a new ABI.
    std::vector<std::string> expected;
    if (sp.tensor) {
      expected.push_back("ptr");
      expected.insert(expected.end(), sp.dims.size(), "i32");
    } else {
      expected.push_back(sp.dtype);
    }
    if (sp.abi != expected)
      return bad(where + "unsupported 'abi' (a tensor is [\"ptr\", \"i32\" "
                         "per dim], a scalar is [its dtype])");
    for (const SidecarParam &q : sc.params)
      if (q.name == sp.name)
        return bad("param '" + sp.name + "' appears twice");
    sc.params.push_back(std::move(sp));
  }

  const JValue *grid = root.get("grid");
  if (!grid || grid->kind != JValue::Array || grid->array.size() != 3)
    return bad("'grid' is missing or not an array of three expressions");
  for (int k = 0; k < 3; ++k) {
    const JValue &g = grid->array[k];
    if (g.kind == JValue::String)
      sc.grid[k] = g.string;
    else if (g.kind == JValue::Number && g.integral)
      sc.grid[k] = std::to_string(g.integer);
    else
      return bad("grid[" + std::to_string(k) + "] is not an expression");
  }
  if (!integer(root, "threads_per_cta", sc.threadsPerCTA, ""))
    return false;
  if (sc.threadsPerCTA <= 0 || sc.threadsPerCTA > 1024)
    return bad("'threads_per_cta' is " + std::to_string(sc.threadsPerCTA) +
               " (expected 1..1024)");
  if (const JValue *sm = root.get("shared_memory")) {
    if (sm->kind != JValue::Object)
      return bad("'shared_memory' is not an object");
    if (!integer(*sm, "static_bytes", sc.staticSharedBytes,
                 "shared_memory: ") ||
        !integer(*sm, "dynamic_bytes", sc.dynamicSharedBytes,
                 "shared_memory: "))
      return false;
    if (sc.staticSharedBytes < 0 || sc.dynamicSharedBytes < 0 ||
        sc.dynamicSharedBytes > std::numeric_limits<int32_t>::max())
      return bad("shared_memory sizes out of range");
    if (sc.staticSharedBytes > kMaxStaticSharedBytes)
      return bad("shared_memory: static_bytes = " +
                 std::to_string(sc.staticSharedBytes) + " is above the " +
                 std::to_string(kMaxStaticSharedBytes) +
                 " bytes a kernel may declare statically");
    // Optional (older sidecars lack it); when there it must agree with the
    // sizes, which decide.
    if (const JValue *optIn = sm->get("opt_in")) {
      if (optIn->kind != JValue::Bool)
        return bad("shared_memory: 'opt_in' is not a boolean");
      int64_t total = sc.staticSharedBytes + sc.dynamicSharedBytes;
      if (optIn->boolean != needsSharedOptIn(sc))
        return bad(std::string("shared_memory: 'opt_in' is ") +
                   (optIn->boolean ? "true" : "false") +
                   " but static_bytes + dynamic_bytes = " +
                   std::to_string(total) + " is " +
                   (optIn->boolean ? "not " : "") + "above " +
                   std::to_string(kMaxStaticSharedBytes));
    }
  }
  out = std::move(sc);
  return true;
}

//===----------------------------------------------------------------------===//
// Grid expressions
//===----------------------------------------------------------------------===//

namespace {

class ExprEval : TextCursor {
public:
  ExprEval(const std::string &text,
           const std::map<std::string, int64_t> &symbols)
      : TextCursor(text), symbols(symbols) {}

  bool run(int64_t &value, std::string &error) {
    bool ok = expr(value, 0);
    skip();
    if (ok && pos != s.size())
      ok = fail("unexpected '" + s.substr(pos, 1) + "'");
    if (!ok)
      error = "grid expression '" + s + "': " + why;
    return ok;
  }

private:
  bool eat(char c) {
    skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool overflow() { return fail("int64 overflow"); }
  bool apply(char op, int64_t a, int64_t b, int64_t &r) {
    switch (op) {
    case '+':
      return !__builtin_add_overflow(a, b, &r) || overflow();
    case '-':
      return !__builtin_sub_overflow(a, b, &r) || overflow();
    case '*':
      return !__builtin_mul_overflow(a, b, &r) || overflow();
    case '/':
    case '%':
      if (b == 0)
        return fail("division by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1)
        return overflow();
      r = op == '/' ? a / b : a % b;
      return true;
    }
    return fail("bad operator");
  }
  bool expr(int64_t &v, int depth) {
    if (depth > 100)
      return fail("nesting too deep");
    if (!term(v, depth))
      return false;
    while (true) {
      skip();
      if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-'))
        return true;
      char op = s[pos++];
      int64_t r;
      if (!term(r, depth) || !apply(op, v, r, v))
        return false;
    }
  }
  bool term(int64_t &v, int depth) {
    if (!unary(v, depth))
      return false;
    while (true) {
      skip();
      if (pos >= s.size() || !std::strchr("*/%", s[pos]))
        return true;
      char op = s[pos++];
      int64_t r;
      if (!unary(r, depth) || !apply(op, v, r, v))
        return false;
    }
  }
  bool unary(int64_t &v, int depth) {
    if (eat('-')) {
      if (depth > 100)
        return fail("nesting too deep");
      return unary(v, depth + 1) && apply('-', 0, v, v);
    }
    return primary(v, depth);
  }
  bool primary(int64_t &v, int depth) {
    skip();
    if (pos >= s.size())
      return fail("unexpected end of expression");
    char c = s[pos];
    if (c == '(') {
      ++pos;
      if (!expr(v, depth + 1))
        return false;
      return eat(')') || fail("expected ')'");
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))
        ++pos;
      errno = 0;
      v = std::strtoll(s.substr(start, pos - start).c_str(), nullptr, 10);
      return errno != ERANGE || overflow();
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos;
      while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) ||
                                s[pos] == '_' || s[pos] == '.'))
        ++pos;
      std::string name = s.substr(start, pos - start);
      skip();
      if (pos < s.size() && s[pos] == '(') {
        ++pos;
        int64_t a, b;
        if (!expr(a, depth + 1) || !(eat(',') || fail("expected ','")) ||
            !expr(b, depth + 1) || !(eat(')') || fail("expected ')'")))
          return false;
        return call(name, a, b, v);
      }
      auto it = symbols.find(name);
      if (it == symbols.end())
        return fail("unknown symbol '" + name + "'");
      v = it->second;
      return true;
    }
    return fail(std::string("unexpected '") + c + "'");
  }
  bool call(const std::string &name, int64_t a, int64_t b, int64_t &v) {
    if (name == "min") {
      v = a < b ? a : b;
      return true;
    }
    if (name == "max") {
      v = a > b ? a : b;
      return true;
    }
    if (name == "cdiv" || name == "floordiv") {
      if (b == 0)
        return fail("division by zero in " + name);
      if (a == std::numeric_limits<int64_t>::min() && b == -1)
        return overflow();
      int64_t q = a / b, r = a % b;
      // arith.ceildivsi / floordivsi: round toward +inf / -inf.
      if (r != 0 && ((r < 0) == (b < 0)) && name == "cdiv")
        ++q;
      if (r != 0 && ((r < 0) != (b < 0)) && name == "floordiv")
        --q;
      v = q;
      return true;
    }
    return fail("unknown function '" + name +
                "' (expected cdiv, floordiv, min or max)");
  }

  const std::map<std::string, int64_t> &symbols;
};

std::string shapeText(const std::vector<std::string> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

bool npyDTypeOf(const std::string &dtype, npy::DType &out) {
  if (dtype == "f16")
    out = npy::DType::F16;
  else if (dtype == "f32")
    out = npy::DType::F32;
  else if (dtype == "i32")
    out = npy::DType::I32;
  else
    return false;
  return true;
}

const char *sidecarDType(npy::DType d) {
  switch (d) {
  case npy::DType::F16:
    return "f16";
  case npy::DType::F32:
    return "f32";
  case npy::DType::I32:
    return "i32";
  }
  return "?";
}

bool integerScalarType(const std::string &t, unsigned &bits) {
  if (t == "i1")
    bits = 1;
  else if (t == "i8")
    bits = 8;
  else if (t == "i16")
    bits = 16;
  else if (t == "i32")
    bits = 32;
  else if (t == "i64")
    bits = 64;
  else
    return false;
  return true;
}

template <typename T> std::vector<uint8_t> bytesOf(T v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

} // namespace

bool evalExpr(const std::string &expr,
              const std::map<std::string, int64_t> &symbols, int64_t &value,
              std::string &error) {
  return ExprEval(expr, symbols).run(value, error);
}

std::string archFor(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

//===----------------------------------------------------------------------===//
// Argument checks, grid and parameter packing
//===----------------------------------------------------------------------===//

bool resolve(const Sidecar &sidecar, const std::vector<Arg> &args,
             Resolved &out, std::string &error) {
  Resolved r;
  r.argOf.assign(sidecar.params.size(), nullptr);
  for (const Arg &a : args) {
    size_t i = 0;
    while (i < sidecar.params.size() && sidecar.params[i].name != a.name)
      ++i;
    if (i == sidecar.params.size()) {
      error = "argument '" + a.name + "' matches no kernel parameter";
      return false;
    }
    if (r.argOf[i]) {
      error = "argument '" + a.name + "' is given twice";
      return false;
    }
    r.argOf[i] = &a;
  }
  std::map<std::string, std::string> boundBy;
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const SidecarParam &p = sidecar.params[i];
    const Arg *a = r.argOf[i];
    if (!a) {
      error = "missing argument for kernel parameter '" + p.name + "'";
      return false;
    }
    if (!p.tensor) {
      unsigned bits;
      if (integerScalarType(p.dtype, bits)) {
        double v = a->scalar;
        if (v != std::floor(v) || std::fabs(v) > 9.2e18) {
          error = "argument '" + p.name + "' is " + std::to_string(v) +
                  ", not an integer (" + p.dtype + ")";
          return false;
        }
        r.symbols[p.name] = static_cast<int64_t>(v);
      }
      continue;
    }
    if (!a->tensor) {
      error = "argument '" + p.name + "' is a tensor parameter (" + p.dtype +
              shapeText(p.dims) + ") but got no array";
      return false;
    }
    const npy::Array &arr = *a->tensor;
    npy::DType want;
    if (!npyDTypeOf(p.dtype, want)) {
      error = "parameter '" + p.name + "' has element type " + p.dtype +
              ", which the launcher cannot provide (supported: f16, f32, i32)";
      return false;
    }
    if (arr.dtype != want) {
      error = "argument '" + p.name + "' is " + sidecarDType(arr.dtype) +
              " but the kernel declares " + p.dtype;
      return false;
    }
    if (arr.shape.size() != p.dims.size()) {
      error = "argument '" + p.name + "' has rank " +
              std::to_string(arr.shape.size()) + " (shape " +
              npy::shapeToString(arr.shape) + ") but the kernel declares " +
              p.dtype + shapeText(p.dims);
      return false;
    }
    if (arr.data.size() !=
        static_cast<size_t>(arr.numElements()) * npy::elementSize(arr.dtype)) {
      error = "argument '" + p.name + "' holds " +
              std::to_string(arr.data.size()) + " bytes, not its shape's";
      return false;
    }
    for (size_t d = 0; d < p.dims.size(); ++d) {
      int64_t size = arr.shape[d];
      if (size < 0 || size > std::numeric_limits<int32_t>::max()) {
        error = "dim " + std::to_string(d) + " of argument '" + p.name +
                "' is " + std::to_string(size) + ", which does not fit in i32";
        return false;
      }
      const std::string &dim = p.dims[d];
      if (isInteger(dim)) {
        if (std::to_string(size) != dim) {
          error = "argument '" + p.name + "' has size " +
                  std::to_string(size) + " in dim " + std::to_string(d) +
                  " but the kernel declares " + dim + " (" + p.dtype +
                  shapeText(p.dims) + ")";
          return false;
        }
        continue;
      }
      auto it = r.symbols.find(dim);
      if (it == r.symbols.end()) {
        r.symbols[dim] = size;
        boundBy[dim] = p.name;
      } else if (it->second != size) {
        error = "dim '" + dim + "' is " + std::to_string(it->second) +
                " in " + boundBy[dim] + " but " + std::to_string(size) +
                " in " + p.name;
        return false;
      }
    }
  }
  static const char *axis[3] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k) {
    if (!evalExpr(sidecar.grid[k], r.symbols, r.grid[k], error))
      return false;
    int64_t limit = k == 0 ? std::numeric_limits<int32_t>::max() : 65535;
    if (r.grid[k] < 0 || r.grid[k] > limit) {
      error = std::string("grid.") + axis[k] + " = " + sidecar.grid[k] +
              " = " + std::to_string(r.grid[k]) + " is outside 0.." +
              std::to_string(limit);
      return false;
    }
  }
  r.block = sidecar.threadsPerCTA;
  r.dynamicSharedBytes = sidecar.dynamicSharedBytes;
  out = std::move(r);
  return true;
}

bool packParams(const Sidecar &sidecar, const Resolved &resolved,
                const std::vector<uint64_t> &devicePtrs,
                std::vector<std::vector<uint8_t>> &values,
                std::string &error) {
  values.clear();
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const SidecarParam &p = sidecar.params[i];
    const Arg *a = i < resolved.argOf.size() ? resolved.argOf[i] : nullptr;
    if (!a) {
      error = "missing argument for kernel parameter '" + p.name + "'";
      return false;
    }
    if (p.tensor) {
      if (i >= devicePtrs.size() || !a->tensor) {
        error = "no device buffer for tensor parameter '" + p.name + "'";
        return false;
      }
      values.push_back(bytesOf<uint64_t>(devicePtrs[i]));
      for (int64_t size : a->tensor->shape)
        values.push_back(bytesOf<int32_t>(static_cast<int32_t>(size)));
      continue;
    }
    const std::string &t = p.abi[0];
    double v = a->scalar;
    unsigned bits;
    if (t == "f32") {
      values.push_back(bytesOf<float>(static_cast<float>(v)));
    } else if (t == "f64") {
      values.push_back(bytesOf<double>(v));
    } else if (t == "f16") {
      values.push_back(bytesOf<uint16_t>(doubleToHalfBits(v)));
    } else if (t == "bf16") {
      values.push_back(bytesOf<uint16_t>(doubleToBF16Bits(v)));
    } else if (integerScalarType(t, bits)) {
      double lo = bits == 1 ? 0 : -std::ldexp(1.0, bits - 1);
      double hi = bits == 1 ? 1 : std::ldexp(1.0, bits - 1) - 1;
      if (v != std::floor(v) || v < lo || v > hi) {
        error = "argument '" + p.name + "' is " + std::to_string(v) +
                ", which does not fit in " + t;
        return false;
      }
      int64_t i64 = static_cast<int64_t>(v);
      if (bits <= 8)
        values.push_back(bytesOf<int8_t>(static_cast<int8_t>(i64)));
      else if (bits == 16)
        values.push_back(bytesOf<int16_t>(static_cast<int16_t>(i64)));
      else if (bits == 32)
        values.push_back(bytesOf<int32_t>(static_cast<int32_t>(i64)));
      else
        values.push_back(bytesOf<int64_t>(i64));
    } else {
      error = "scalar parameter '" + p.name + "' has type " + t +
              ", which the launcher cannot pass";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

namespace {

/// Frees what it holds, in reverse order, on every path.
class DeviceResources {
public:
  explicit DeviceResources(cuda::Driver &driver) : driver(driver) {}
  ~DeviceResources() {
    std::string ignored;
    for (auto it = buffers.rbegin(); it != buffers.rend(); ++it)
      driver.free(*it, ignored);
    if (module)
      driver.unloadModule(module, ignored);
  }
  cuda::Driver &driver;
  cuda::CUmodule module = nullptr;
  std::vector<cuda::CUdeviceptr> buffers;
};

} // namespace

bool launch(cuda::Driver &driver, const std::string &ptx,
            const Sidecar &sidecar, const std::vector<Arg> &args,
            std::string &error, LaunchResult *result,
            const LaunchOptions &options) {
  Resolved r;
  if (!resolve(sidecar, args, r, error))
    return false;
  if (options.iterations < 1 || options.warmup < 0) {
    error = "launch options: iterations must be >= 1 and warmup >= 0";
    return false;
  }
  DeviceResources res(driver);
  if (!driver.loadModule(ptx, res.module, error))
    return false;
  cuda::CUfunction fn = nullptr;
  if (!driver.getFunction(res.module, sidecar.entry, fn, error))
    return false;
  if (needsSharedOptIn(sidecar) &&
      !driver.setMaxDynamicShared(fn, static_cast<int>(r.dynamicSharedBytes),
                                  error))
    return false;

  // Device buffers: every tensor is copied in (outputs keep the elements the
  // kernel does not write, as in the interpreter and the emulator).
  std::vector<uint64_t> ptrs(sidecar.params.size(), 0);
  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    if (!sidecar.params[i].tensor)
      continue;
    const npy::Array &arr = *r.argOf[i]->tensor;
    cuda::CUdeviceptr p = 0;
    size_t bytes = arr.data.size();
    if (!driver.alloc(bytes ? bytes : 1, p, error))
      return false;
    res.buffers.push_back(p);
    ptrs[i] = p;
    if (bytes && !driver.copyToDevice(p, arr.data.data(), bytes, error))
      return false;
  }
  std::vector<std::vector<uint8_t>> values;
  if (!packParams(sidecar, r, ptrs, values, error))
    return false;
  std::vector<void *> params;
  for (auto &v : values)
    params.push_back(v.data());

  unsigned grid[3], block[3] = {static_cast<unsigned>(r.block), 1, 1};
  bool empty = false;
  for (int k = 0; k < 3; ++k) {
    grid[k] = static_cast<unsigned>(r.grid[k]);
    empty |= grid[k] == 0;
  }
  double ms = 0;
  if (!empty) {
    for (int w = 0; w < options.warmup; ++w)
      if (!driver.launch(fn, grid, block,
                         static_cast<unsigned>(r.dynamicSharedBytes),
                         params.data(), error) ||
          !driver.synchronize(error))
        return false;
    auto start = std::chrono::steady_clock::now();
    for (int it = 0; it < options.iterations; ++it)
      if (!driver.launch(fn, grid, block,
                         static_cast<unsigned>(r.dynamicSharedBytes),
                         params.data(), error))
        return false;
    if (!driver.synchronize(error))
      return false;
    auto end = std::chrono::steady_clock::now();
    ms = std::chrono::duration<double, std::milli>(end - start).count() /
         options.iterations;
  }

  for (size_t i = 0; i < sidecar.params.size(); ++i) {
    const Arg *a = r.argOf[i];
    if (!sidecar.params[i].tensor || !a->copyBack || a->tensor->data.empty())
      continue;
    if (!driver.copyToHost(a->tensor->data.data(), ptrs[i],
                           a->tensor->data.size(), error))
      return false;
  }
  if (result) {
    result->grid = r.grid;
    result->block = r.block;
    result->dynamicSharedBytes = r.dynamicSharedBytes;
    result->milliseconds = ms;
  }
  return true;
}

} // namespace launcher
} // namespace flash

//===- SidecarJson.cpp - read the launch sidecar (JSON) -------------------===//
//
// A tiny JSON reader (enough for the sidecar: no surrogate pairs needed) and
// the checks that turn its tree into a launcher::Sidecar.
//
//===----------------------------------------------------------------------===//
#include "flashc/Launcher/Launch.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace flash {
namespace launcher {

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

class JsonReader {
public:
  explicit JsonReader(const std::string &text) : s(text) {}

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
      case 'u':
        if (!unicodeEscape(out))
          return false;
        break;
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
    if (pos >= s.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }
  /// The four hex digits of a "\\u" escape, appended as UTF-8.
  bool unicodeEscape(std::string &out) {
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

  const std::string &s;
  size_t pos = 0;
  std::string why;
};

/// Reads the sidecar's fields; the first problem found is the error.
class SidecarReader {
public:
  explicit SidecarReader(std::string &error) : error(error) {}

  bool read(const JValue &root, Sidecar &sc);

private:
  bool bad(const std::string &what) {
    error = "malformed sidecar: " + what;
    return false;
  }
  bool str(const JValue &obj, const char *key, std::string &dst,
           const std::string &where) {
    const JValue *v = obj.get(key);
    if (!v || v->kind != JValue::String)
      return bad(where + "'" + key + "' is missing or not a string");
    dst = v->string;
    return true;
  }
  bool integer(const JValue &obj, const char *key, int64_t &dst,
               const std::string &where) {
    const JValue *v = obj.get(key);
    if (!v || v->kind != JValue::Number || !v->integral)
      return bad(where + "'" + key + "' is missing or not an integer");
    dst = v->integer;
    return true;
  }
  bool params(const JValue &list, Sidecar &sc);
  bool param(const JValue &p, size_t i, SidecarParam &sp);
  bool dims(const JValue &p, const std::string &where, SidecarParam &sp);
  bool abi(const JValue &p, const std::string &where, SidecarParam &sp);
  bool grid(const JValue &root, Sidecar &sc);
  bool tensorMaps(const JValue &list, Sidecar &sc);
  bool sharedMemory(const JValue &sm, Sidecar &sc);

  std::string &error;
};

bool SidecarReader::read(const JValue &root, Sidecar &sc) {
  if (root.kind != JValue::Object)
    return bad("the top level is not an object");
  if (!str(root, "entry", sc.entry, "") || !str(root, "arch", sc.arch, ""))
    return false;
  if (const JValue *v = root.get("ptx_version"))
    if (v->kind == JValue::String)
      sc.ptxVersion = v->string;
  const JValue *list = root.get("params");
  if (!list || list->kind != JValue::Array)
    return bad("'params' is missing or not an array");
  if (!params(*list, sc) || !grid(root, sc))
    return false;
  if (const JValue *maps = root.get("tensor_maps"))
    if (!tensorMaps(*maps, sc))
      return false;
  if (!integer(root, "threads_per_cta", sc.threadsPerCTA, ""))
    return false;
  if (sc.threadsPerCTA <= 0 || sc.threadsPerCTA > 1024)
    return bad("'threads_per_cta' is " + std::to_string(sc.threadsPerCTA) +
               " (expected 1..1024)");
  if (const JValue *sm = root.get("shared_memory"))
    return sharedMemory(*sm, sc);
  return true;
}

bool SidecarReader::params(const JValue &list, Sidecar &sc) {
  for (size_t i = 0; i < list.array.size(); ++i) {
    SidecarParam sp;
    if (!param(list.array[i], i, sp))
      return false;
    for (const SidecarParam &q : sc.params)
      if (q.name == sp.name)
        return bad("param '" + sp.name + "' appears twice");
    sc.params.push_back(std::move(sp));
  }
  return true;
}

bool SidecarReader::param(const JValue &p, size_t i, SidecarParam &sp) {
  std::string where = "params[" + std::to_string(i) + "]: ";
  if (p.kind != JValue::Object)
    return bad(where + "not an object");
  std::string kind;
  if (!str(p, "name", sp.name, where) || !str(p, "kind", kind, where) ||
      !str(p, "dtype", sp.dtype, where))
    return false;
  where = "param '" + sp.name + "': ";
  if (kind != "tensor" && kind != "scalar")
    return bad(where + "kind '" + kind + "' is neither tensor nor scalar");
  sp.tensor = kind == "tensor";
  return (!sp.tensor || dims(p, where, sp)) && abi(p, where, sp);
}

bool SidecarReader::dims(const JValue &p, const std::string &where,
                         SidecarParam &sp) {
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
  return true;
}

bool SidecarReader::abi(const JValue &p, const std::string &where,
                        SidecarParam &sp) {
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
  return true;
}

bool SidecarReader::tensorMaps(const JValue &list, Sidecar &sc) {
  if (list.kind != JValue::Array)
    return bad("'tensor_maps' is not an array");
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JValue &m = list.array[i];
    std::string where = "tensor_maps[" + std::to_string(i) + "]: ";
    if (m.kind != JValue::Object)
      return bad(where + "not an object");
    emu::TensorMapSpec spec;
    std::string swizzle = "none", oob = "zero", abi;
    if (!str(m, "name", spec.name, where) ||
        !str(m, "tensor", spec.tensor, where) || !str(m, "abi", abi, where))
      return false;
    where = "tensor map '" + spec.name + "': ";
    if (const JValue *v = m.get("swizzle"))
      swizzle = v->kind == JValue::String ? v->string : "?";
    if (const JValue *v = m.get("oob"))
      oob = v->kind == JValue::String ? v->string : "?";
    if (!emu::parseTmaSwizzle(swizzle, spec.swizzle))
      return bad(where + "swizzle '" + swizzle +
                 "' is not none, 32B, 64B or 128B");
    if (!emu::parseTmaOobFill(oob, spec.oobFill))
      return bad(where + "oob '" + oob + "' is neither zero nor nan");
    if (abi != "tensormap")
      return bad(where + "unsupported 'abi' (a tensor map is \"tensormap\")");
    const JValue *box = m.get("box");
    if (!box || box->kind != JValue::Array)
      return bad(where + "'box' is missing or not an array");
    for (const JValue &b : box->array) {
      if (b.kind != JValue::Number || !b.integral || b.integer < 1)
        return bad(where + "a box size is not a positive integer");
      spec.box.push_back(b.integer);
    }
    const SidecarParam *tensor = nullptr;
    for (const SidecarParam &p : sc.params)
      if (p.tensor && p.name == spec.tensor)
        tensor = &p;
    if (!tensor)
      return bad(where + "names no tensor parameter ('" + spec.tensor + "')");
    if (tensor->dims.size() != spec.box.size())
      return bad(where + "a box of rank " + std::to_string(spec.box.size()) +
                 " for tensor '" + spec.tensor + "' of rank " +
                 std::to_string(tensor->dims.size()));
    sc.tensorMaps.push_back(std::move(spec));
  }
  return true;
}

bool SidecarReader::grid(const JValue &root, Sidecar &sc) {
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
  return true;
}

bool SidecarReader::sharedMemory(const JValue &sm, Sidecar &sc) {
  if (sm.kind != JValue::Object)
    return bad("'shared_memory' is not an object");
  if (!integer(sm, "static_bytes", sc.staticSharedBytes, "shared_memory: ") ||
      !integer(sm, "dynamic_bytes", sc.dynamicSharedBytes, "shared_memory: "))
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
  const JValue *optIn = sm.get("opt_in");
  if (!optIn)
    return true;
  if (optIn->kind != JValue::Bool)
    return bad("shared_memory: 'opt_in' is not a boolean");
  int64_t total = sc.staticSharedBytes + sc.dynamicSharedBytes;
  if (optIn->boolean != needsSharedOptIn(sc))
    return bad(std::string("shared_memory: 'opt_in' is ") +
               (optIn->boolean ? "true" : "false") +
               " but static_bytes + dynamic_bytes = " + std::to_string(total) +
               " is " + (optIn->boolean ? "not " : "") + "above " +
               std::to_string(kMaxStaticSharedBytes));
  return true;
}

} // namespace

bool parseSidecar(const std::string &json, Sidecar &out, std::string &error) {
  JValue root;
  if (!JsonReader(json).parse(root, error))
    return false;
  Sidecar sc;
  if (!SidecarReader(error).read(root, sc))
    return false;
  out = std::move(sc);
  return true;
}

} // namespace launcher
} // namespace flash

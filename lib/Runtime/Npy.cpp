//===- Npy.cpp - Minimal .npy reader/writer -------------------------------===//

#include "flashc/Runtime/Npy.h"
#include "flashc/Runtime/AtomicFile.h"
#include "flashc/Runtime/Float16.h"
#include "flashc/Runtime/Float8.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include <sys/stat.h>

namespace flash {
namespace npy {

size_t elementSize(DType dtype) {
  switch (dtype) {
  case DType::Bool:
  case DType::F8E4M3:
    return 1;
  case DType::F16:
  case DType::BF16:
  case DType::U16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  }
  return 4;
}

const char *descr(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return "|b1";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<V2";
  case DType::F32:
    return "<f4";
  case DType::I32:
    return "<i4";
  case DType::U16:
    return "<u2";
  case DType::F8E4M3:
    return "<V1";
  }
  return "?";
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return "bool";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::F32:
    return "float32";
  case DType::I32:
    return "int32";
  case DType::U16:
    return "uint16";
  case DType::F8E4M3:
    return "float8_e4m3fn";
  }
  return "?";
}

bool viewAs(Array &array, DType want) {
  if (array.dtype == DType::U16 && want == DType::BF16)
    array.dtype = DType::BF16;
  return array.dtype == want;
}

/// The dtype a descr names; false with a message if none.
static bool dtypeOfDescr(const std::string &d, DType &out, std::string &error) {
  // A 2-byte void is how np.save writes ml_dtypes.bfloat16 ('<V2'; np.load
  // then reports it as '|V2'): the only 2-byte type ml_dtypes has. A 1-byte
  // void is ml_dtypes.float8_e4m3fn, the one 1-byte float flashc has.
  static const struct {
    const char *descr;
    DType dtype;
  } known[] = {{"<f2", DType::F16}, {"<V2", DType::BF16}, {"|V2", DType::BF16},
               {"<f4", DType::F32}, {"<i4", DType::I32},  {"<u2", DType::U16},
               {"|b1", DType::Bool}, {"<V1", DType::F8E4M3},
               {"|V1", DType::F8E4M3}};
  for (const auto &k : known)
    if (d == k.descr) {
      out = k.dtype;
      return true;
    }
  if (!d.empty() && d[0] == '>')
    error = "big-endian data ('" + d + "') is not supported";
  else
    error = "unsupported dtype '" + d +
            "' (supported: <f2 float16, <V2 bfloat16 (ml_dtypes), <f4 "
            "float32, <i4 int32, <u2 uint16 (bfloat16 bits), |b1 bool, <V1 "
            "float8_e4m3fn (ml_dtypes))";
  return false;
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  s += ")";
  return s;
}

static int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Array::Array(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  data.assign(static_cast<size_t>(numElements()) * elementSize(dtype), 0);
}

int64_t Array::numElements() const { return product(shape); }

static uint32_t loadLE(const uint8_t *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}

static void storeLE(uint8_t *p, uint32_t v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

double Array::get(size_t i) const {
  const uint8_t *p = data.data() + i * elementSize(dtype);
  switch (dtype) {
  case DType::Bool:
    return p[0] != 0;
  case DType::F16:
    return halfBitsToDouble(static_cast<uint16_t>(loadLE(p, 2)));
  case DType::BF16:
    return bf16BitsToDouble(static_cast<uint16_t>(loadLE(p, 2)));
  case DType::U16:
    return loadLE(p, 2);
  case DType::F8E4M3:
    return e4m3BitsToDouble(p[0]);
  case DType::F32: {
    uint32_t b = loadLE(p, 4);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case DType::I32:
    return static_cast<int32_t>(loadLE(p, 4));
  }
  return 0;
}

void Array::set(size_t i, double v) {
  uint8_t *p = data.data() + i * elementSize(dtype);
  switch (dtype) {
  case DType::Bool:
    p[0] = v != 0;
    return;
  case DType::F16:
    storeLE(p, doubleToHalfBits(v), 2);
    return;
  case DType::BF16:
    storeLE(p, doubleToBF16Bits(v), 2);
    return;
  case DType::F8E4M3:
    p[0] = doubleToE4M3Bits(v);
    return;
  case DType::F32: {
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    storeLE(p, b, 4);
    return;
  }
  case DType::I32:
  case DType::U16: {
    int64_t x = 0;
    if (std::isfinite(v) && std::fabs(v) < 9.2e18)
      x = static_cast<int64_t>(v);
    storeLE(p, static_cast<uint32_t>(static_cast<uint64_t>(x)),
            elementSize(dtype));
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// Parses the Python dict literal of a .npy header.
class HeaderParser {
public:
  HeaderParser(const std::string &text) : s(text) {}

  bool parse(std::string &descrOut, bool &fortran, std::vector<int64_t> &shape,
             std::string &error) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipWs();
    if (!consume('{'))
      return fail(error, "header is not a dict (expected '{')");
    while (true) {
      skipWs();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail(error, "expected a quoted key in the header dict");
      skipWs();
      if (!consume(':'))
        return fail(error, "expected ':' after key '" + key + "'");
      skipWs();
      if (key == "descr") {
        if (haveDescr)
          return fail(error, "duplicate key 'descr'");
        haveDescr = true;
        if (peek() == '[')
          return fail(error, "structured dtypes are not supported");
        if (!parseString(descrOut))
          return fail(error, "'descr' is not a string");
      } else if (key == "fortran_order") {
        if (haveFortran)
          return fail(error, "duplicate key 'fortran_order'");
        haveFortran = true;
        if (s.compare(pos, 4, "True") == 0) {
          fortran = true;
          pos += 4;
        } else if (s.compare(pos, 5, "False") == 0) {
          fortran = false;
          pos += 5;
        } else {
          return fail(error, "'fortran_order' is not True or False");
        }
      } else if (key == "shape") {
        if (haveShape)
          return fail(error, "duplicate key 'shape'");
        haveShape = true;
        if (!parseShape(shape, error))
          return false;
      } else {
        return fail(error, "unexpected key '" + key + "' in header");
      }
      skipWs();
      if (consume(','))
        continue;
      skipWs();
      if (consume('}'))
        break;
      return fail(error, "expected ',' or '}' in header dict");
    }
    skipWs();
    if (pos != s.size())
      return fail(error, "unexpected text after the header dict");
    if (!haveDescr)
      return fail(error, "header has no 'descr'");
    if (!haveFortran)
      return fail(error, "header has no 'fortran_order'");
    if (!haveShape)
      return fail(error, "header has no 'shape'");
    return true;
  }

private:
  static bool fail(std::string &error, const std::string &msg) {
    error = "malformed header: " + msg;
    return false;
  }
  char peek() const { return pos < s.size() ? s[pos] : '\0'; }
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  void skipWs() {
    while (pos < s.size() &&
           (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool parseString(std::string &out) {
    char q = peek();
    if (q != '\'' && q != '"')
      return false;
    size_t end = s.find(q, pos + 1);
    if (end == std::string::npos)
      return false;
    out = s.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape, std::string &error) {
    if (!consume('('))
      return fail(error, "'shape' is not a tuple");
    shape.clear();
    while (true) {
      skipWs();
      if (consume(')'))
        return true;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return fail(error, "'shape' must hold non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        int digit = s[pos++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail(error, "a dim in 'shape' is too large");
        v = v * 10 + digit;
      }
      if (peek() == 'L') // Python 2 long suffix
        ++pos;
      shape.push_back(v);
      skipWs();
      if (consume(','))
        continue;
      skipWs();
      if (consume(')')) {
        // A one-element tuple needs its trailing comma in Python, but be
        // lenient: "(5)" is only an int in Python, numpy never writes it.
        return true;
      }
      return fail(error, "expected ',' or ')' in 'shape'");
    }
  }

  const std::string &s;
  size_t pos = 0;
};
} // namespace

namespace {
/// What the fixed-size prefix and the header dict of a .npy file declare.
struct Header {
  size_t dataStart = 0; ///< bytes before the data
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t dataBytes = 0;
};

/// The prefix (magic, version, header length) at the start of `bytes`.
bool parsePrefix(const uint8_t *bytes, size_t size, size_t &headerStart,
                 uint64_t &headerLen, std::string &error) {
  static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 6 || std::memcmp(bytes, magic, 6) != 0) {
    error = "not a .npy file (bad magic string)";
    return false;
  }
  if (size < 8) {
    error = "truncated header (file ends after the magic string)";
    return false;
  }
  unsigned major = bytes[6], minor = bytes[7];
  if ((major < 1 || major > 3) || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor);
    return false;
  }
  size_t lenBytes = major == 1 ? 2 : 4;
  if (size < 8 + lenBytes) {
    error = "truncated header (no header length)";
    return false;
  }
  headerLen = loadLE(bytes + 8, lenBytes);
  headerStart = 8 + lenBytes;
  return true;
}

/// The header dict: dtype, shape and the data size they imply.
bool parseHeaderDict(const std::string &text, Header &h, std::string &error) {
  if (text.find('\0') != std::string::npos) {
    error = "malformed header: contains a NUL byte";
    return false;
  }
  std::string descrStr;
  bool fortran = false;
  if (!HeaderParser(text).parse(descrStr, fortran, h.shape, error))
    return false;
  if (!dtypeOfDescr(descrStr, h.dtype, error))
    return false;
  if (fortran) {
    error = "Fortran-ordered arrays (fortran_order: True) are not supported";
    return false;
  }
  const size_t esize = elementSize(h.dtype);
  uint64_t count = 1;
  const uint64_t limit = (uint64_t(1) << 62) / esize;
  for (int64_t d : h.shape) {
    if (d != 0 && count > limit / static_cast<uint64_t>(d)) {
      error = "shape " + shapeToString(h.shape) + " is too large";
      return false;
    }
    count *= static_cast<uint64_t>(d);
  }
  h.dataBytes = count * esize;
  return true;
}

/// The message for data of `have` bytes where the header needs h.dataBytes.
std::string dataSizeError(const Header &h, uint64_t have) {
  if (h.dataBytes > have)
    return "truncated data: shape " + shapeToString(h.shape) + " of " +
           dtypeName(h.dtype) + " needs " + std::to_string(h.dataBytes) +
           " bytes but the file has " + std::to_string(have);
  return "file has " + std::to_string(have - h.dataBytes) +
         " unexpected bytes after the data of shape " + shapeToString(h.shape);
}

/// The message for data above the memory budget.
std::string budgetError(const Header &h, uint64_t maxDataBytes) {
  return "shape " + shapeToString(h.shape) + " of " + dtypeName(h.dtype) +
         " needs " + std::to_string(h.dataBytes) +
         " bytes, more than the memory budget allows (" +
         std::to_string(maxDataBytes) + " bytes left)";
}
} // namespace

bool parse(const uint8_t *bytes, size_t size, Array &out, std::string &error) {
  size_t headerStart;
  uint64_t headerLen;
  if (!parsePrefix(bytes, size, headerStart, headerLen, error))
    return false;
  if (headerLen > size - headerStart) {
    error = "truncated header (header says " + std::to_string(headerLen) +
            " bytes, file has " + std::to_string(size - headerStart) + ")";
    return false;
  }
  Header h;
  std::string text(reinterpret_cast<const char *>(bytes + headerStart),
                   static_cast<size_t>(headerLen));
  if (!parseHeaderDict(text, h, error))
    return false;
  size_t dataStart = headerStart + static_cast<size_t>(headerLen);
  size_t have = size - dataStart;
  if (h.dataBytes != have) {
    error = dataSizeError(h, have);
    return false;
  }
  out.dtype = h.dtype;
  out.shape = std::move(h.shape);
  out.data.assign(bytes + dataStart, bytes + dataStart + h.dataBytes);
  return true;
}

namespace {
/// Reads up to `n` bytes (fewer only at the end of the file).
size_t readSome(FILE *f, uint8_t *into, size_t n) {
  size_t got = 0;
  while (got < n) {
    size_t k = std::fread(into + got, 1, n - got, f);
    if (k == 0)
      break;
    got += k;
  }
  return got;
}

/// The prefix and the header dict of an open file, read up to the data.
bool readHeader(FILE *f, Header &h, std::string &error) {
  uint8_t prefix[12];
  size_t got = readSome(f, prefix, 8);
  if (got == 8 && prefix[6] >= 2 && prefix[6] <= 3)
    got += readSome(f, prefix + 8, 4);
  else if (got == 8)
    got += readSome(f, prefix + 8, 2);
  size_t headerStart;
  uint64_t headerLen;
  if (!parsePrefix(prefix, got, headerStart, headerLen, error))
    return false;
  // NumPy writes headers of a few hundred bytes; a longer one is not worth
  // the memory it claims.
  constexpr uint64_t kMaxHeader = 1 << 20;
  if (headerLen > kMaxHeader) {
    error = "malformed header: it claims " + std::to_string(headerLen) +
            " bytes (at most " + std::to_string(kMaxHeader) + " are read)";
    return false;
  }
  std::string text(static_cast<size_t>(headerLen), '\0');
  size_t have =
      readSome(f, reinterpret_cast<uint8_t *>(text.data()), text.size());
  if (have < headerLen) {
    error = "truncated header (header says " + std::to_string(headerLen) +
            " bytes, file has " + std::to_string(have) + ")";
    return false;
  }
  h.dataStart = headerStart + headerLen;
  return parseHeaderDict(text, h, error);
}

/// The bytes after the header, when the file is a regular one.
std::optional<uint64_t> regularDataBytes(FILE *f, const Header &h) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  uint64_t size = static_cast<uint64_t>(st.st_size);
  return size > h.dataStart ? size - h.dataStart : 0;
}

/// Header, sizes, then exactly the data: nothing is allocated before the
/// declared size is known to match the file and to fit the budget.
bool readOpenFile(FILE *f, Array &out, uint64_t maxDataBytes,
                  std::string &error) {
  Header h;
  if (!readHeader(f, h, error))
    return false;
  std::optional<uint64_t> have = regularDataBytes(f, h);
  if (have && *have != h.dataBytes) {
    error = dataSizeError(h, *have);
    return false;
  }
  if (h.dataBytes > maxDataBytes) {
    error = budgetError(h, maxDataBytes);
    return false;
  }
  out.data.resize(static_cast<size_t>(h.dataBytes));
  uint64_t got = readSome(f, out.data.data(), out.data.size());
  uint8_t extra;
  if (got < h.dataBytes || readSome(f, &extra, 1) != 0) {
    error = got < h.dataBytes ? dataSizeError(h, got)
                              : "file has unexpected bytes after the data "
                                "of shape " +
                                    shapeToString(h.shape);
    return false;
  }
  out.dtype = h.dtype;
  out.shape = std::move(h.shape);
  return true;
}
} // namespace

bool readFile(const std::string &path, Array &out, std::string &error,
              uint64_t maxDataBytes) {
  errno = 0;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = std::string("cannot open file: ") + std::strerror(errno);
    return false;
  }
  bool ok = readOpenFile(f, out, maxDataBytes, error);
  bool bad = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (bad) {
    error = std::string("cannot read file: ") + std::strerror(err);
    return false;
  }
  return ok;
}

bool serialize(const Array &array, std::vector<uint8_t> &out,
               std::string &error) {
  int64_t count = 1;
  for (int64_t d : array.shape) {
    if (d < 0) {
      error = "negative dim in shape " + shapeToString(array.shape);
      return false;
    }
    count *= d;
  }
  if (array.data.size() != static_cast<size_t>(count) * elementSize(array.dtype)) {
    error = "data size does not match shape " + shapeToString(array.shape);
    return false;
  }
  std::string dict = std::string("{'descr': '") + descr(array.dtype) +
                     "', 'fortran_order': False, 'shape': " +
                     shapeToString(array.shape) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary, then '\n'.
  size_t prefix = 10;
  unsigned major = 1;
  if (dict.size() + 1 + prefix > 65535 + prefix) {
    prefix = 12;
    major = 2;
  }
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  out.clear();
  out.reserve(padded + array.data.size());
  const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  out.insert(out.end(), magic, magic + 6);
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return true;
}

bool writeFile(const std::string &path, const Array &array,
               std::string &error) {
  std::vector<uint8_t> bytes;
  if (!serialize(array, bytes, error))
    return false;
  // A failed write keeps the previous file (e.g. the input of a --out).
  return writeFileAtomically(path, bytes.data(), bytes.size(), error);
}

} // namespace npy
} // namespace flash

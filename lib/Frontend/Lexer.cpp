//===- Lexer.cpp ----------------------------------------------------------===//

#include "Lexer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace flash;

const char *flash::tokSpelling(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of input";
  case Tok::Ident: return "identifier";
  case Tok::IntLit: return "integer literal";
  case Tok::FloatLit: return "float literal";
  case Tok::StringLit: return "string literal";
  case Tok::KwKernel: return "'kernel'";
  case Tok::KwLet: return "'let'";
  case Tok::KwVar: return "'var'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::KwNone: return "'None'";
  case Tok::KwInf: return "'inf'";
  case Tok::KwFn: return "'fn'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwImport: return "'import'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Semi: return "';'";
  case Tok::Colon: return "':'";
  case Tok::Assign: return "'='";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::Bang: return "'!'";
  case Tok::AndAnd: return "'&&'";
  case Tok::OrOr: return "'||'";
  case Tok::Less: return "'<'";
  case Tok::LessEq: return "'<='";
  case Tok::Greater: return "'>'";
  case Tok::GreaterEq: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::NotEq: return "'!='";
  case Tok::Arrow: return "'->'";
  }
  return "token";
}

std::string flash::describeToken(const Token &tok) {
  switch (tok.kind) {
  case Tok::Eof:
    return "end of input";
  case Tok::Ident:
    return "identifier '" + tok.text.str() + "'";
  case Tok::IntLit:
  case Tok::FloatLit:
    return "number '" + tok.text.str() + "'";
  case Tok::StringLit:
    return "string literal";
  default:
    return tokSpelling(tok.kind);
  }
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

namespace {
/// Lexes one buffer into `tokens`, one token kind per method.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticPrinter &diags,
        std::vector<Token> &tokens)
      : p(buffer.begin()), end(buffer.end()), diags(diags), tokens(tokens) {}

  bool lexAll();

private:
  void skipTrivia();
  void push(Tok kind, const char *start, const char *stop);
  /// Reports a lexical error at `at` and ends the tokens with Eof there.
  bool fail(const char *at, const llvm::Twine &message);

  void lexIdentifier();
  bool lexNumber();
  bool lexString();
  bool lexPunctuation();

  const char *p;
  const char *end;
  DiagnosticPrinter &diags;
  std::vector<Token> &tokens;
};
} // namespace

void Lexer::push(Tok kind, const char *start, const char *stop) {
  Token t;
  t.kind = kind;
  t.text = llvm::StringRef(start, stop - start);
  t.loc = llvm::SMLoc::getFromPointer(start);
  tokens.push_back(std::move(t));
}

bool Lexer::fail(const char *at, const llvm::Twine &message) {
  diags.error(llvm::SMLoc::getFromPointer(at), message);
  push(Tok::Eof, at, at);
  return false;
}

/// Whitespace and `#` comments.
void Lexer::skipTrivia() {
  while (p < end) {
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
        c == '\v') {
      ++p;
    } else if (c == '#') {
      while (p < end && *p != '\n')
        ++p;
    } else {
      break;
    }
  }
}

bool Lexer::lexAll() {
  while (true) {
    skipTrivia();
    if (p >= end) {
      push(Tok::Eof, end, end);
      return true;
    }
    char c = *p;
    bool ok = true;
    if (isIdentStart(c))
      lexIdentifier();
    else if (isDigit(c) || (c == '.' && p + 1 < end && isDigit(p[1])))
      ok = lexNumber();
    else if (c == '"')
      ok = lexString();
    else
      ok = lexPunctuation();
    if (!ok)
      return false;
  }
}

void Lexer::lexIdentifier() {
  const char *start = p;
  while (p < end && isIdentChar(*p))
    ++p;
  llvm::StringRef word(start, p - start);
  Tok kind = llvm::StringSwitch<Tok>(word)
                 .Case("kernel", Tok::KwKernel)
                 .Case("let", Tok::KwLet)
                 .Case("var", Tok::KwVar)
                 .Case("for", Tok::KwFor)
                 .Case("in", Tok::KwIn)
                 .Case("if", Tok::KwIf)
                 .Case("else", Tok::KwElse)
                 .Case("true", Tok::KwTrue)
                 .Case("false", Tok::KwFalse)
                 .Case("None", Tok::KwNone)
                 .Case("inf", Tok::KwInf)
                 .Case("fn", Tok::KwFn)
                 .Case("return", Tok::KwReturn)
                 .Case("import", Tok::KwImport)
                 .Default(Tok::Ident);
  push(kind, start, p);
}

bool Lexer::lexNumber() {
  const char *start = p;
  bool isFloat = false;
  while (p < end && isDigit(*p))
    ++p;
  if (p < end && *p == '.') {
    isFloat = true;
    ++p;
    while (p < end && isDigit(*p))
      ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    isFloat = true;
    ++p;
    if (p < end && (*p == '+' || *p == '-'))
      ++p;
    if (p >= end || !isDigit(*p))
      return fail(start, "malformed number: expected digits in the exponent");
    while (p < end && isDigit(*p))
      ++p;
  }
  if (p < end && isIdentStart(*p))
    return fail(start, "malformed number '" +
                           llvm::StringRef(start, p + 1 - start) + "'");
  push(isFloat ? Tok::FloatLit : Tok::IntLit, start, p);
  Token &t = tokens.back();
  std::string text = t.text.str();
  if (isFloat) {
    t.floatValue = std::strtod(text.c_str(), nullptr);
    if (std::isinf(t.floatValue))
      return fail(start, "float literal '" + text +
                             "' is out of range of a 64-bit float");
    return true;
  }
  uint64_t v = 0;
  for (char d : text) {
    if (__builtin_mul_overflow(v, (uint64_t)10, &v) ||
        __builtin_add_overflow(v, (uint64_t)(d - '0'), &v) ||
        v > (uint64_t)INT64_MAX)
      return fail(start, "integer literal '" + text +
                             "' is too large (the limit is 2^63 - 1)");
  }
  t.intValue = (int64_t)v;
  return true;
}

bool Lexer::lexString() {
  const char *start = p++;
  std::string value;
  while (true) {
    if (p >= end || *p == '\n')
      return fail(start, "unterminated string literal");
    if (*p == '"') {
      ++p;
      break;
    }
    if (*p != '\\') {
      value += *p++;
      continue;
    }
    if (p + 1 >= end || p[1] == '\n')
      return fail(start, "unterminated string literal");
    switch (p[1]) {
    case 'n': value += '\n'; break;
    case 't': value += '\t'; break;
    case '\\': value += '\\'; break;
    case '"': value += '"'; break;
    default:
      return fail(p, llvm::Twine("unknown escape sequence '\\") +
                         llvm::StringRef(&p[1], 1) +
                         "' (allowed: \\n \\t \\\\ \\\")");
    }
    p += 2;
  }
  push(Tok::StringLit, start, p);
  tokens.back().stringValue = std::move(value);
  return true;
}

bool Lexer::lexPunctuation() {
  const char *start = p;
  char c = *p;
  auto two = [&](char next) { return p + 1 < end && p[1] == next; };
  Tok kind;
  unsigned len = 1;
  switch (c) {
  case '(': kind = Tok::LParen; break;
  case ')': kind = Tok::RParen; break;
  case '[': kind = Tok::LBracket; break;
  case ']': kind = Tok::RBracket; break;
  case '{': kind = Tok::LBrace; break;
  case '}': kind = Tok::RBrace; break;
  case ',': kind = Tok::Comma; break;
  case ';': kind = Tok::Semi; break;
  case ':': kind = Tok::Colon; break;
  case '+': kind = Tok::Plus; break;
  case '-':
    if (two('>')) { kind = Tok::Arrow; len = 2; } else kind = Tok::Minus;
    break;
  case '*': kind = Tok::Star; break;
  case '/': kind = Tok::Slash; break;
  case '%': kind = Tok::Percent; break;
  case '=':
    if (two('=')) { kind = Tok::EqEq; len = 2; } else kind = Tok::Assign;
    break;
  case '!':
    if (two('=')) { kind = Tok::NotEq; len = 2; } else kind = Tok::Bang;
    break;
  case '<':
    if (two('=')) { kind = Tok::LessEq; len = 2; } else kind = Tok::Less;
    break;
  case '>':
    if (two('=')) { kind = Tok::GreaterEq; len = 2; } else kind = Tok::Greater;
    break;
  case '&':
    if (!two('&'))
      return fail(start, "unexpected character '&'; did you mean '&&'?");
    kind = Tok::AndAnd;
    len = 2;
    break;
  case '|':
    if (!two('|'))
      return fail(start, "unexpected character '|'; did you mean '||'?");
    kind = Tok::OrOr;
    len = 2;
    break;
  default: {
    unsigned char uc = (unsigned char)c;
    if (uc >= 0x21 && uc < 0x7f)
      return fail(start, llvm::Twine("unexpected character '") +
                             llvm::StringRef(start, 1) + "'");
    std::string hex;
    llvm::raw_string_ostream os(hex);
    os << llvm::format_hex(uc, 4);
    return fail(start, "unexpected byte " + hex +
                           " (only ASCII source text is allowed)");
  }
  }
  p += len;
  push(kind, start, p);
  return true;
}

bool flash::lexBuffer(llvm::StringRef buffer, DiagnosticPrinter &diags,
                      std::vector<Token> &tokens) {
  return Lexer(buffer, diags, tokens).lexAll();
}

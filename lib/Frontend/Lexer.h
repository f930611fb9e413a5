//===- Lexer.h - Tokens of the tile language ------------------------------===//

#ifndef FLASH_FRONTEND_LEXER_H
#define FLASH_FRONTEND_LEXER_H

#include "flashc/Frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flash {

enum class Tok {
  Eof,
  Ident,
  IntLit,
  FloatLit,
  StringLit,
  // Keywords.
  KwKernel, KwLet, KwVar, KwFor, KwIn, KwIf, KwElse, KwTrue, KwFalse,
  KwNone, KwInf, KwFn, KwReturn, KwImport,
  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Semi, Colon,
  Assign, Plus, Minus, Star, Slash, Percent, Bang, AndAnd, OrOr,
  Less, LessEq, Greater, GreaterEq, EqEq, NotEq, Arrow,
};

/// Human-readable spelling used in "expected X" messages.
const char *tokSpelling(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text; // points into the source buffer
  llvm::SMLoc loc;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue; // decoded string literal
};

/// Lexes a whole buffer. On a lexical error, reports it and returns false;
/// the token vector then ends with Eof at the error position.
bool lexBuffer(llvm::StringRef buffer, DiagnosticPrinter &diags,
               std::vector<Token> &tokens);

/// Describe a token for an "expected X, found Y" message.
std::string describeToken(const Token &tok);

} // namespace flash

#endif // FLASH_FRONTEND_LEXER_H

//===- ParserImpl.h - The recursive-descent parser, shared by its files ---===//
//
// Parser.cpp parses expressions and statements, ParseDecl.cpp the top level:
// imports, functions and the kernel's signature. Only the first error is
// reported; every parse method returns null/false after it.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_PARSERIMPL_H
#define FLASH_FRONTEND_PARSERIMPL_H

#include "AST.h"
#include "Lexer.h"
#include "Parser.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <optional>

namespace flash::parser {

using namespace flash::ast;

class Parser {
public:
  Parser(std::vector<Token> &tokens, DiagnosticPrinter &diags)
      : toks(tokens), diags(diags) {}

  /// The whole buffer: imports, functions and at most one kernel.
  std::unique_ptr<SourceFile> parseFile();

private:
  std::vector<Token> &toks;
  size_t pos = 0;
  DiagnosticPrinter &diags;
  bool failed = false;
  unsigned recursion = 0;
  // Inside `kernel NAME< ... >`, a top-level '>' closes the list.
  bool noGreater = false;
  // The function whose body is being parsed (null in the kernel) and the
  // number of `for` loops around the current statement.
  const FunctionDecl *function = nullptr;
  unsigned loopDepth = 0;

  struct DepthGuard {
    Parser &p;
    bool ok;
    DepthGuard(Parser &p, llvm::SMLoc loc) : p(p) {
      ok = ++p.recursion <= kMaxNestingDepth;
      if (!ok)
        p.error(loc, "nesting is too deep (the limit is " +
                         llvm::Twine(kMaxNestingDepth) + " levels)");
    }
    ~DepthGuard() { --p.recursion; }
  };

  const Token &tok() const { return toks[pos]; }
  const Token &peek(unsigned n = 1) const {
    return toks[std::min(pos + n, toks.size() - 1)];
  }
  bool is(Tok k) const { return tok().kind == k; }
  bool isIdent(llvm::StringRef name) const {
    return tok().kind == Tok::Ident && tok().text == name;
  }
  void consume() {
    if (pos + 1 < toks.size())
      ++pos;
  }
  bool consumeIf(Tok k) {
    if (!is(k))
      return false;
    consume();
    return true;
  }

  std::nullptr_t error(llvm::SMLoc loc, const llvm::Twine &msg) {
    if (!failed)
      diags.error(loc, msg);
    failed = true;
    return nullptr;
  }
  bool expect(Tok k, llvm::StringRef context = "") {
    if (is(k)) {
      consume();
      return true;
    }
    std::string msg = std::string("expected ") + tokSpelling(k);
    if (!context.empty())
      msg += " " + context.str();
    msg += ", found " + describeToken(tok());
    error(tok().loc, msg);
    return false;
  }
  /// Expect a closing token; on EOF also note where the group opened.
  bool expectClose(Tok k, Tok open, llvm::SMLoc openLoc,
                   llvm::StringRef context = "") {
    if (is(k)) {
      consume();
      return true;
    }
    bool wasFailed = failed;
    expect(k, context);
    if (!wasFailed)
      diags.note(openLoc, std::string("to match this ") + tokSpelling(open));
    return false;
  }

  ExprPtr make(ExprKind kind, llvm::SMLoc loc) {
    return std::make_unique<Expr>(kind, loc);
  }
  bool finish(Expr &e) {
    unsigned d = 0;
    if (e.lhs) d = std::max(d, e.lhs->depth);
    if (e.rhs) d = std::max(d, e.rhs->depth);
    for (auto &a : e.args) d = std::max(d, a->depth);
    for (auto &k : e.kwargs) d = std::max(d, k.value->depth);
    for (auto &s : e.entries) {
      if (s.index) d = std::max(d, s.index->depth);
      if (s.lo) d = std::max(d, s.lo->depth);
      if (s.hi) d = std::max(d, s.hi->depth);
    }
    e.depth = d + 1;
    if (e.depth > kMaxNestingDepth) {
      error(e.loc, "expression is nested too deeply (the limit is " +
                       llvm::Twine(kMaxNestingDepth) + " levels)");
      return false;
    }
    return true;
  }

  ExprPtr parseExpr();
  std::optional<std::pair<BinaryOp, int>> binaryOperator(const Token &t) const;
  ExprPtr parseBinary(int minPrecedence);
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseCallArgs(ExprPtr call);
  bool parseSubscriptEntry(SubscriptEntry &entry);

  bool parseBlock(Block &block, llvm::StringRef what);
  StmtPtr parseStmt();
  StmtPtr parseIf();
  StmtPtr parseFor();
  StmtPtr parseBuiltinStmt(StmtKind kind);
  StmtPtr parseReturn();

  // Declarations (ParseDecl.cpp).
  bool parseNameAndColon(const char *what, std::string &name,
                         llvm::SMLoc &loc);
  bool parseConstParam(KernelDecl &k);
  bool parseParam(KernelDecl &k);
  std::unique_ptr<KernelDecl> parseKernel();
  bool parseImport(SourceFile &file);
  std::unique_ptr<FunctionDecl> parseFunction();
  bool parseFnParam(FunctionDecl &f);
  /// `( P, P, ... )` after the name of kernel or function `owner` (`what`:
  /// "kernel" or "function"): `parseOne` reads one P and `count` says how
  /// many there are, at most `limit`.
  bool parseParamList(llvm::StringRef what, llvm::StringRef owner,
                      size_t limit, llvm::function_ref<bool()> parseOne,
                      llvm::function_ref<size_t()> count);
  bool parseTypeAnnot(TypeAnnot &t, const llvm::Twine &what);
  /// After `fn`: `(T, ...) [-> R | -> (R, ...)]`, if a signature follows.
  bool parseFnSignature(TypeAnnot &t, const llvm::Twine &what);
  /// A result type (of a function or a signature): any annotation but fn.
  bool parseResultType(TypeAnnot &t, const llvm::Twine &what);
  bool parseResultTypes(FunctionDecl &f);
};

} // namespace flash::parser

#endif // FLASH_FRONTEND_PARSERIMPL_H

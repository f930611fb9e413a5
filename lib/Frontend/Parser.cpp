//===- Parser.cpp - Expressions and statements ----------------------------===//

#include "ParserImpl.h"

using namespace flash;
using namespace flash::parser;

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this, tok().loc);
  if (!guard.ok)
    return nullptr;
  return parseBinary(0);
}

static ExprPtr makeBinary(BinaryOp op, llvm::SMLoc opLoc, ExprPtr lhs,
                          ExprPtr rhs) {
  auto e = std::make_unique<Expr>(ExprKind::Binary, lhs->loc);
  e->binaryOp = op;
  e->opLoc = opLoc;
  e->lhs = std::move(lhs);
  e->rhs = std::move(rhs);
  return e;
}

/// The binary operator `t` spells and its precedence (higher binds tighter):
/// || < && < comparisons < + - < * / %. Inside a kernel's `<...>` a '>'
/// closes the list instead of comparing.
std::optional<std::pair<BinaryOp, int>>
Parser::binaryOperator(const Token &t) const {
  switch (t.kind) {
  case Tok::OrOr: return {{BinaryOp::Or, 0}};
  case Tok::AndAnd: return {{BinaryOp::And, 1}};
  case Tok::Less: return {{BinaryOp::Lt, 2}};
  case Tok::LessEq: return {{BinaryOp::Le, 2}};
  case Tok::Greater:
    if (noGreater)
      return std::nullopt;
    return {{BinaryOp::Gt, 2}};
  case Tok::GreaterEq:
    if (noGreater)
      return std::nullopt;
    return {{BinaryOp::Ge, 2}};
  case Tok::EqEq: return {{BinaryOp::Eq, 2}};
  case Tok::NotEq: return {{BinaryOp::Ne, 2}};
  case Tok::Plus: return {{BinaryOp::Add, 3}};
  case Tok::Minus: return {{BinaryOp::Sub, 3}};
  case Tok::Star: return {{BinaryOp::Mul, 4}};
  case Tok::Slash: return {{BinaryOp::Div, 4}};
  case Tok::Percent: return {{BinaryOp::Rem, 4}};
  default: return std::nullopt;
  }
}

/// Precedence climbing; every operator is left-associative.
ExprPtr Parser::parseBinary(int minPrecedence) {
  ExprPtr lhs = parseUnary();
  while (lhs) {
    auto op = binaryOperator(tok());
    if (!op || op->second < minPrecedence)
      return lhs;
    llvm::SMLoc opLoc = tok().loc;
    consume();
    ExprPtr rhs = parseBinary(op->second + 1);
    if (!rhs)
      return nullptr;
    lhs = makeBinary(op->first, opLoc, std::move(lhs), std::move(rhs));
    if (!finish(*lhs))
      return nullptr;
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (is(Tok::Minus) || is(Tok::Bang)) {
    DepthGuard guard(*this, tok().loc);
    if (!guard.ok)
      return nullptr;
    auto e = make(ExprKind::Unary, tok().loc);
    e->unaryOp = is(Tok::Minus) ? UnaryOp::Neg : UnaryOp::Not;
    e->opLoc = tok().loc;
    consume();
    e->lhs = parseUnary();
    if (!e->lhs || !finish(*e))
      return nullptr;
    return e;
  }
  return parsePostfix();
}

bool Parser::parseSubscriptEntry(SubscriptEntry &entry) {
  entry.loc = tok().loc;
  if (is(Tok::Colon)) {
    consume();
    entry.kind = SubscriptEntry::Full;
    if (!is(Tok::Comma) && !is(Tok::RBracket)) {
      error(tok().loc, "expected ',' or ']' after ':' (an open slice ': hi' "
                       "is not supported; write 'lo : hi')");
      return false;
    }
    return true;
  }
  if (is(Tok::KwNone)) {
    consume();
    entry.kind = SubscriptEntry::NewAxis;
    return true;
  }
  ExprPtr e = parseExpr();
  if (!e)
    return false;
  if (is(Tok::Colon)) {
    consume();
    if (is(Tok::Comma) || is(Tok::RBracket)) {
      error(tok().loc, "expected the end of the slice after ':' (write "
                       "'start : start + SIZE')");
      return false;
    }
    ExprPtr hi = parseExpr();
    if (!hi)
      return false;
    entry.kind = SubscriptEntry::Slice;
    entry.lo = std::move(e);
    entry.hi = std::move(hi);
    return true;
  }
  entry.kind = SubscriptEntry::Index;
  entry.index = std::move(e);
  return true;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr base = parsePrimary();
  while (base && is(Tok::LBracket)) {
    llvm::SMLoc open = tok().loc;
    consume();
    auto e = make(ExprKind::Subscript, base->loc);
    e->opLoc = open;
    e->lhs = std::move(base);
    bool saved = noGreater;
    noGreater = false;
    if (is(Tok::RBracket)) {
      noGreater = saved;
      return error(tok().loc, "expected a subscript entry, found ']'");
    }
    while (true) {
      SubscriptEntry entry;
      if (!parseSubscriptEntry(entry))
        return nullptr;
      e->entries.push_back(std::move(entry));
      if (e->entries.size() > 64)
        return error(tok().loc, "too many subscript entries");
      if (consumeIf(Tok::Comma))
        continue;
      if (!expectClose(Tok::RBracket, Tok::LBracket, open, "in subscript"))
        return nullptr;
      break;
    }
    noGreater = saved;
    if (!finish(*e))
      return nullptr;
    base = std::move(e);
  }
  return base;
}

ExprPtr Parser::parseCallArgs(ExprPtr call) {
  llvm::SMLoc open = tok().loc;
  consume(); // (
  bool saved = noGreater;
  noGreater = false;
  while (!is(Tok::RParen)) {
    // A message: the call is an assert statement used as an expression.
    if (is(Tok::StringLit) &&
        (call->name == "static_assert" || call->name == "device_assert"))
      return error(call->nameLoc, "'" + call->name +
                                      "(...)' is a statement and cannot be "
                                      "used in an expression");
    if (is(Tok::Ident) && peek().kind == Tok::Assign) {
      KeywordArg kw;
      kw.name = tok().text.str();
      kw.loc = tok().loc;
      for (auto &other : call->kwargs)
        if (other.name == kw.name)
          return error(kw.loc, "keyword argument '" + kw.name +
                                   "' given more than once");
      consume();
      consume();
      kw.value = parseExpr();
      if (!kw.value)
        return nullptr;
      call->kwargs.push_back(std::move(kw));
    } else {
      if (!call->kwargs.empty())
        return error(tok().loc, "positional argument after a keyword "
                                "argument");
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      call->args.push_back(std::move(arg));
    }
    if (call->args.size() + call->kwargs.size() > 64)
      return error(tok().loc, "too many arguments");
    if (consumeIf(Tok::Comma))
      continue;
    if (!is(Tok::RParen)) {
      expectClose(Tok::RParen, Tok::LParen, open, "after argument");
      return nullptr;
    }
  }
  consume(); // )
  noGreater = saved;
  if (!finish(*call))
    return nullptr;
  return call;
}

ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case Tok::IntLit: {
    auto e = make(ExprKind::IntLit, t.loc);
    e->intValue = t.intValue;
    consume();
    return e;
  }
  case Tok::FloatLit: {
    auto e = make(ExprKind::FloatLit, t.loc);
    e->floatValue = t.floatValue;
    consume();
    return e;
  }
  case Tok::KwTrue:
  case Tok::KwFalse: {
    auto e = make(ExprKind::BoolLit, t.loc);
    e->boolValue = t.kind == Tok::KwTrue;
    consume();
    return e;
  }
  case Tok::KwInf: {
    auto e = make(ExprKind::InfLit, t.loc);
    consume();
    return e;
  }
  case Tok::KwNone:
    return error(t.loc, "'None' is only allowed inside a subscript, as in "
                        "'x[:, None]'");
  case Tok::Ident: {
    if (peek().kind == Tok::LParen) {
      auto e = make(ExprKind::Call, t.loc);
      e->name = t.text.str();
      e->nameLoc = t.loc;
      consume();
      DepthGuard guard(*this, t.loc);
      if (!guard.ok)
        return nullptr;
      return parseCallArgs(std::move(e));
    }
    auto e = make(ExprKind::Name, t.loc);
    e->name = t.text.str();
    e->nameLoc = t.loc;
    consume();
    return e;
  }
  case Tok::LParen: {
    llvm::SMLoc open = t.loc;
    consume();
    bool saved = noGreater;
    noGreater = false;
    ExprPtr e = parseExpr();
    noGreater = saved;
    if (!e)
      return nullptr;
    if (!expectClose(Tok::RParen, Tok::LParen, open))
      return nullptr;
    return e;
  }
  case Tok::LBracket: {
    llvm::SMLoc open = t.loc;
    consume();
    auto e = make(ExprKind::List, open);
    bool saved = noGreater;
    noGreater = false;
    while (!is(Tok::RBracket)) {
      ExprPtr item = parseExpr();
      if (!item)
        return nullptr;
      e->args.push_back(std::move(item));
      if (e->args.size() > 64)
        return error(tok().loc, "too many list elements");
      if (consumeIf(Tok::Comma))
        continue;
      if (!expectClose(Tok::RBracket, Tok::LBracket, open, "in list"))
        return nullptr;
      noGreater = saved;
      if (!finish(*e))
        return nullptr;
      return e;
    }
    consume();
    noGreater = saved;
    if (!finish(*e))
      return nullptr;
    return e;
  }
  default:
    return error(t.loc, "expected an expression, found " + describeToken(t));
  }
}

bool Parser::parseBlock(Block &block, llvm::StringRef what) {
  if (!is(Tok::LBrace)) {
    error(tok().loc, "expected '{' to begin " + what + ", found " +
                         describeToken(tok()));
    return false;
  }
  block.lbraceLoc = tok().loc;
  DepthGuard guard(*this, tok().loc);
  if (!guard.ok)
    return false;
  consume();
  const Stmt *ret = nullptr;
  while (!is(Tok::RBrace)) {
    if (is(Tok::Eof)) {
      error(tok().loc, "expected '}' at end of input");
      diags.note(block.lbraceLoc, "to match this '{'");
      return false;
    }
    if (ret) {
      error(tok().loc, "unreachable statement after 'return'");
      diags.note(ret->loc, "the block returns here");
      return false;
    }
    StmtPtr s = parseStmt();
    if (!s)
      return false;
    if (s->kind == StmtKind::Return)
      ret = s.get();
    block.stmts.push_back(std::move(s));
  }
  consume();
  return true;
}

StmtPtr Parser::parseBuiltinStmt(StmtKind kind) {
  auto s = std::make_unique<Stmt>(kind, tok().loc);
  consume(); // name
  llvm::SMLoc open = tok().loc;
  consume(); // (
  while (!is(Tok::RParen)) {
    bool isAssert =
        kind == StmtKind::StaticAssert || kind == StmtKind::DeviceAssert;
    if (isAssert && s->args.size() == 1 && is(Tok::StringLit)) {
      std::string name = kind == StmtKind::StaticAssert ? "static_assert"
                                                        : "device_assert";
      s->message = tok().stringValue;
      s->hasMessage = true;
      s->messageLoc = tok().loc;
      consume();
      if (!expectClose(Tok::RParen, Tok::LParen, open,
                       "after the " + name + " message"))
        return nullptr;
      if (!expect(Tok::Semi, "after " + name + "(...)"))
        return nullptr;
      return s;
    }
    if (is(Tok::Ident) && peek().kind == Tok::Assign)
      return error(tok().loc, "'" + tok().text + "' takes no keyword "
                                                  "arguments");
    ExprPtr arg = parseExpr();
    if (!arg)
      return nullptr;
    s->args.push_back(std::move(arg));
    if (s->args.size() > 16)
      return error(tok().loc, "too many arguments");
    if (consumeIf(Tok::Comma))
      continue;
    if (!is(Tok::RParen)) {
      expectClose(Tok::RParen, Tok::LParen, open, "after argument");
      return nullptr;
    }
  }
  consume();
  if (!expect(Tok::Semi, "after statement"))
    return nullptr;
  return s;
}

StmtPtr Parser::parseFor() {
  auto s = std::make_unique<Stmt>(StmtKind::For, tok().loc);
  consume(); // for
  if (!is(Tok::Ident))
    return error(tok().loc, "expected a loop variable name after 'for', found " +
                                describeToken(tok()));
  s->loopVar = tok().text.str();
  s->loopVarLoc = tok().loc;
  consume();
  if (!expect(Tok::KwIn, "after the loop variable"))
    return nullptr;
  if (!isIdent("range"))
    return error(tok().loc, "expected 'range(lo, hi[, step])' after 'in', "
                            "found " +
                                describeToken(tok()));
  llvm::SMLoc rangeLoc = tok().loc;
  consume();
  if (!is(Tok::LParen))
    return error(tok().loc, "expected '(' after 'range', found " +
                                describeToken(tok()));
  llvm::SMLoc open = tok().loc;
  consume();
  std::vector<ExprPtr> args;
  while (!is(Tok::RParen)) {
    if (is(Tok::Ident) && peek().kind == Tok::Assign) {
      ExprPtr *keyword = tok().text == "stages"         ? &s->stages
                         : tok().text == "split_copies" ? &s->splitCopies
                                                        : nullptr;
      if (!keyword)
        return error(tok().loc, "range() has no keyword argument '" +
                                    tok().text +
                                    "' (expected range(lo, hi[, step][, "
                                    "stages = N][, split_copies = B]))");
      if (*keyword)
        return error(tok().loc, "keyword argument '" + tok().text +
                                    "' given more than once");
      consume();
      consume();
      *keyword = parseExpr();
      if (!*keyword)
        return nullptr;
    } else {
      if (s->stages || s->splitCopies)
        return error(tok().loc, "positional argument after a keyword "
                                "argument");
      ExprPtr e = parseExpr();
      if (!e)
        return nullptr;
      args.push_back(std::move(e));
      if (args.size() > 3)
        return error(args.back()->loc, "range() takes 2 or 3 arguments "
                                       "(lo, hi[, step])");
    }
    if (consumeIf(Tok::Comma))
      continue;
    if (!is(Tok::RParen)) {
      expectClose(Tok::RParen, Tok::LParen, open, "after argument");
      return nullptr;
    }
  }
  consume();
  if (args.size() < 2)
    return error(rangeLoc, "range() takes 2 or 3 arguments (lo, hi[, step]), "
                           "got " +
                               llvm::Twine(args.size()));
  s->lo = std::move(args[0]);
  s->hi = std::move(args[1]);
  if (args.size() == 3)
    s->step = std::move(args[2]);
  ++loopDepth;
  bool ok = parseBlock(s->body, "the loop body");
  --loopDepth;
  if (!ok)
    return nullptr;
  return s;
}

StmtPtr Parser::parseIf() {
  auto s = std::make_unique<Stmt>(StmtKind::If, tok().loc);
  DepthGuard guard(*this, tok().loc);
  if (!guard.ok)
    return nullptr;
  consume(); // if
  s->cond = parseExpr();
  if (!s->cond)
    return nullptr;
  if (!parseBlock(s->body, "the 'if' body"))
    return nullptr;
  if (consumeIf(Tok::KwElse)) {
    s->hasElse = true;
    if (is(Tok::KwIf)) {
      s->elseBody.lbraceLoc = tok().loc;
      StmtPtr nested = parseIf();
      if (!nested)
        return nullptr;
      s->elseBody.stmts.push_back(std::move(nested));
    } else if (!parseBlock(s->elseBody, "the 'else' body")) {
      return nullptr;
    }
  }
  return s;
}

StmtPtr Parser::parseStmt() {
  const Token &t = tok();
  switch (t.kind) {
  case Tok::KwLet:
  case Tok::KwVar: {
    auto s = std::make_unique<Stmt>(StmtKind::Let, t.loc);
    s->isMutable = t.kind == Tok::KwVar;
    const char *kw = s->isMutable ? "var" : "let";
    consume();
    while (true) {
      if (!is(Tok::Ident))
        return error(tok().loc, llvm::Twine("expected a name after '") + kw +
                                    "', found " + describeToken(tok()));
      s->names.push_back(tok().text.str());
      s->nameLocs.push_back(tok().loc);
      consume();
      if (s->names.size() > 16)
        return error(tok().loc, "too many names in one declaration");
      if (!consumeIf(Tok::Comma))
        break;
    }
    if (!expect(Tok::Assign, "in declaration"))
      return nullptr;
    s->value = parseExpr();
    if (!s->value)
      return nullptr;
    if (!expect(Tok::Semi, "after declaration"))
      return nullptr;
    return s;
  }
  case Tok::KwFor:
    return parseFor();
  case Tok::KwReturn:
    return parseReturn();
  case Tok::KwIf:
    return parseIf();
  case Tok::KwElse:
    return error(t.loc, "'else' without a matching 'if'");
  case Tok::LBrace:
    return error(t.loc, "unexpected '{': nested blocks need 'if' or 'for'");
  case Tok::Ident: {
    if (peek().kind == Tok::LParen) {
      bool launchStmt =
          t.text == "grid" || t.text == "warps" || t.text == "mma_layout";
      if (launchStmt && function)
        return error(t.loc, t.text + "() can only be used in the kernel "
                                     "body, not in function '" +
                                function->name + "'");
      if (t.text == "static_assert")
        return parseBuiltinStmt(StmtKind::StaticAssert);
      if (t.text == "device_assert")
        return parseBuiltinStmt(StmtKind::DeviceAssert);
      if (t.text == "grid")
        return parseBuiltinStmt(StmtKind::Grid);
      if (t.text == "warps")
        return parseBuiltinStmt(StmtKind::Warps);
      if (t.text == "mma_layout")
        return parseBuiltinStmt(StmtKind::MmaLayout);
    }
    if (peek().kind == Tok::Assign || peek().kind == Tok::Comma) {
      auto s = std::make_unique<Stmt>(StmtKind::Assign, t.loc);
      while (true) {
        if (!is(Tok::Ident))
          return error(tok().loc, "expected a variable name, found " +
                                      describeToken(tok()));
        s->names.push_back(tok().text.str());
        s->nameLocs.push_back(tok().loc);
        consume();
        if (s->names.size() > 16)
          return error(tok().loc, "too many names in one assignment");
        if (!consumeIf(Tok::Comma))
          break;
      }
      if (!expect(Tok::Assign, "in assignment"))
        return nullptr;
      s->value = parseExpr();
      if (!s->value)
        return nullptr;
      if (!expect(Tok::Semi, "after assignment"))
        return nullptr;
      return s;
    }
    [[fallthrough]];
  }
  default: {
    auto s = std::make_unique<Stmt>(StmtKind::ExprStmt, t.loc);
    s->value = parseExpr();
    if (!s->value)
      return nullptr;
    if (is(Tok::Assign))
      return error(tok().loc, "only a variable name (or a list of names) can "
                              "be assigned to");
    if (!expect(Tok::Semi, "after expression"))
      return nullptr;
    return s;
  }
  }
}

/// `return;`, `return x;` or `return a, b, c;` (a tuple).
StmtPtr Parser::parseReturn() {
  auto s = std::make_unique<Stmt>(StmtKind::Return, tok().loc);
  if (!function)
    return error(s->loc, "'return' can only be used in a function (fn); the "
                         "kernel ends at its closing '}'");
  if (loopDepth)
    return error(s->loc, "'return' inside a 'for' loop is not supported: the "
                         "loop runs at run time; assign the result to a "
                         "'var' and return it after the loop");
  consume(); // return
  if (!is(Tok::Semi)) {
    do {
      ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      s->args.push_back(std::move(value));
      if (s->args.size() > 16)
        return error(tok().loc, "too many returned values");
    } while (consumeIf(Tok::Comma));
  }
  if (!expect(Tok::Semi, "after return"))
    return nullptr;
  return s;
}

//===- ParseDecl.cpp - The top level: imports, functions, the kernel ------===//

#include "ParserImpl.h"

using namespace flash;
using namespace flash::parser;
using llvm::Twine;

/// `NAME :` at the start of a (constant) parameter; `what` names it in errors.
bool Parser::parseNameAndColon(const char *what, std::string &name,
                               llvm::SMLoc &loc) {
  if (!is(Tok::Ident)) {
    error(tok().loc, std::string("expected a ") + what + " name, found " +
                         describeToken(tok()));
    return false;
  }
  name = tok().text.str();
  loc = tok().loc;
  consume();
  return expect(Tok::Colon, std::string("after the ") + what + " name");
}

bool Parser::parseConstParam(KernelDecl &k) {
  ConstParam c;
  if (!parseNameAndColon("constant parameter", c.name, c.loc))
    return false;
  if (!is(Tok::Ident) ||
      (tok().text != "int" && tok().text != "float" && tok().text != "bool" &&
       tok().text != "type")) {
    error(tok().loc, "expected the type of constant parameter '" + c.name +
                         "' (int, float, bool or type), found " +
                         describeToken(tok()));
    return false;
  }
  c.kind = tok().text == "int"     ? ConstParam::Int
           : tok().text == "float" ? ConstParam::Float
           : tok().text == "bool"  ? ConstParam::Bool
                                   : ConstParam::Type;
  consume();
  if (!is(Tok::Assign)) {
    error(tok().loc, "constant parameter '" + c.name +
                         "' needs a default value ('= VALUE'), found " +
                         describeToken(tok()));
    return false;
  }
  consume();
  noGreater = true;
  c.defaultValue = parseExpr();
  noGreater = false;
  if (!c.defaultValue)
    return false;
  k.consts.push_back(std::move(c));
  return true;
}

bool Parser::parseParam(KernelDecl &k) {
  Param p;
  if (!parseNameAndColon("parameter", p.name, p.loc))
    return false;
  if (!is(Tok::Ident)) {
    error(tok().loc, "expected the type of parameter '" + p.name +
                         "', found " + describeToken(tok()));
    return false;
  }
  std::string ty = tok().text.str();
  p.typeLoc = tok().loc;
  consume();
  if (ty == "int")
    ty = "i32";
  else if (ty == "float")
    ty = "f32";
  p.elementType = ty;
  // Another name may be a type constant: the kernel resolves it with the
  // constants (and reports an unknown one).
  if (is(Tok::LBracket)) {
    p.isTensor = true;
    llvm::SMLoc open = tok().loc;
    consume();
    while (true) {
      Param::Dim d;
      d.loc = tok().loc;
      if (is(Tok::Ident)) {
        d.name = tok().text.str();
      } else if (is(Tok::IntLit)) {
        d.literal = tok().intValue;
      } else {
        error(tok().loc, "expected a dimension (a symbol name, a constant "
                         "name or an integer), found " +
                             describeToken(tok()));
        return false;
      }
      consume();
      p.dims.push_back(std::move(d));
      if (p.dims.size() > 8) {
        error(p.dims.back().loc, "tensor parameter '" + p.name +
                                     "' has more than 8 dims");
        return false;
      }
      if (consumeIf(Tok::Comma))
        continue;
      if (!expectClose(Tok::RBracket, Tok::LBracket, open, "in tensor shape"))
        return false;
      break;
    }
  } else if (ty == "f16" || ty == "bf16" || ty == "f8e4m3" || ty == "bool") {
    error(p.typeLoc, "scalar parameter '" + p.name + "' must be f32 or i32, "
                     "not " + ty + " (tensor parameters need a shape, e.g. " +
                     ty + "[N])");
    return false;
  }
  k.params.push_back(std::move(p));
  return true;
}

bool Parser::parseParamList(llvm::StringRef what, llvm::StringRef owner,
                            size_t limit, llvm::function_ref<bool()> parseOne,
                            llvm::function_ref<size_t()> count) {
  if (!is(Tok::LParen)) {
    error(tok().loc, "expected '(' to begin the parameter list of " + what +
                         " '" + owner + "', found " + describeToken(tok()));
    return false;
  }
  llvm::SMLoc open = tok().loc;
  consume();
  while (!is(Tok::RParen)) {
    if (!parseOne())
      return false;
    if (count() > limit) {
      error(tok().loc, "too many parameters (the limit is " +
                           std::to_string(limit) + ")");
      return false;
    }
    if (consumeIf(Tok::Comma))
      continue;
    if (!is(Tok::RParen)) {
      expectClose(Tok::RParen, Tok::LParen, open, "after parameter");
      return false;
    }
  }
  consume(); // )
  return true;
}

std::unique_ptr<KernelDecl> Parser::parseKernel() {
  auto k = std::make_unique<KernelDecl>();
  k->loc = tok().loc;
  consume(); // kernel
  if (!is(Tok::Ident))
    return error(tok().loc, "expected the kernel name after 'kernel', found " +
                                describeToken(tok()));
  k->name = tok().text.str();
  consume();
  if (is(Tok::Less)) {
    llvm::SMLoc open = tok().loc;
    consume();
    while (!is(Tok::Greater)) {
      if (!parseConstParam(*k))
        return nullptr;
      if (k->consts.size() > 256)
        return error(tok().loc, "too many constant parameters");
      if (consumeIf(Tok::Comma))
        continue;
      if (!is(Tok::Greater)) {
        expect(Tok::Greater, "to close the constant parameter list");
        diags.note(open, "to match this '<'");
        return nullptr;
      }
    }
    consume();
  }
  if (!parseParamList(
          "kernel", k->name, 256, [&] { return parseParam(*k); },
          [&] { return k->params.size(); }))
    return nullptr;
  if (!parseBlock(k->body, "the kernel body"))
    return nullptr;
  return k;
}

//===----------------------------------------------------------------------===//
// Imports and functions
//===----------------------------------------------------------------------===//

bool Parser::parseImport(SourceFile &file) {
  consume(); // import
  if (!is(Tok::StringLit)) {
    error(tok().loc, "expected the path of the imported file as a string "
                     "(import \"lib.tile\";), found " +
                         describeToken(tok()));
    return false;
  }
  ImportDecl imp;
  imp.path = tok().stringValue;
  imp.loc = tok().loc;
  if (imp.path.empty() || imp.path.find('\0') != std::string::npos) {
    error(imp.loc, "the import path must be a non-empty file name");
    return false;
  }
  consume();
  if (!expect(Tok::Semi, "after the import"))
    return false;
  if (file.imports.size() >= 256) {
    error(imp.loc, "too many imports in one file (the limit is 256)");
    return false;
  }
  file.imports.push_back(std::move(imp));
  return true;
}

/// The element types a tile annotation may name (`int` and `float` are
/// aliases of i32 and f32, as in tensor parameters).
static std::optional<std::string> tileElement(llvm::StringRef name) {
  if (name == "int")
    return std::string("i32");
  if (name == "float")
    return std::string("f32");
  if (name == "f16" || name == "bf16" || name == "f8e4m3" || name == "f32" ||
      name == "i32" || name == "bool")
    return name.str();
  return std::nullopt;
}

bool Parser::parseFnSignature(TypeAnnot &t, const Twine &what) {
  DepthGuard guard(*this, tok().loc);
  if (!guard.ok)
    return false;
  t.kind = TypeAnnot::Function;
  if (!is(Tok::LParen))
    return true;
  t.hasSignature = true;
  llvm::SMLoc open = tok().loc;
  consume();
  while (!is(Tok::RParen)) {
    t.fnParams.emplace_back();
    if (!parseTypeAnnot(t.fnParams.back(),
                        "argument " + Twine(t.fnParams.size() - 1) + " of " +
                            what))
      return false;
    if (t.fnParams.size() > 64)
      return error(t.fnParams.back().loc, "too many arguments in a function "
                                          "type (the limit is 64)"),
             false;
    if (!consumeIf(Tok::Comma))
      break;
  }
  if (!expectClose(Tok::RParen, Tok::LParen, open, "in function type"))
    return false;
  if (!consumeIf(Tok::Arrow))
    return true;
  if (!is(Tok::LParen)) {
    t.fnResults.emplace_back();
    return parseResultType(t.fnResults.back(), "the result of " + what);
  }
  open = tok().loc;
  consume();
  while (true) {
    t.fnResults.emplace_back();
    if (!parseResultType(t.fnResults.back(), "a result of " + what))
      return false;
    if (t.fnResults.size() > 16)
      return error(tok().loc, "too many results"), false;
    if (consumeIf(Tok::Comma))
      continue;
    return expectClose(Tok::RParen, Tok::LParen, open,
                       "after the result types");
  }
}

bool Parser::parseResultType(TypeAnnot &t, const Twine &what) {
  if (!parseTypeAnnot(t, what))
    return false;
  if (t.kind == TypeAnnot::Function)
    return error(t.loc, "a function cannot return a function: " + what +
                            " cannot have a function type"),
           false;
  return true;
}

bool Parser::parseTypeAnnot(TypeAnnot &t, const Twine &what) {
  t.loc = tok().loc;
  if (consumeIf(Tok::KwFn))
    return parseFnSignature(t, what);
  if (!is(Tok::Ident)) {
    error(tok().loc, "expected the type of " + what + ", found " +
                         describeToken(tok()));
    return false;
  }
  llvm::StringRef word = tok().text;
  bool isConst = word == "const";
  if (isConst) {
    consume();
    if (!is(Tok::Ident) || (tok().text != "int" && tok().text != "float" &&
                            tok().text != "bool")) {
      error(tok().loc, "expected int, float or bool after 'const', found " +
                           describeToken(tok()));
      return false;
    }
    word = tok().text;
  }
  consume();
  if (!isConst && is(Tok::LBracket)) {
    std::optional<std::string> elt = tileElement(word);
    if (!elt) {
      error(t.loc, "unknown tile element type '" + word +
                       "' (expected f16, bf16, f8e4m3, f32, i32 or bool)");
      return false;
    }
    t.kind = TypeAnnot::Shaped;
    t.element = *elt;
    llvm::SMLoc open = tok().loc;
    consume();
    while (true) {
      Param::Dim d;
      d.loc = tok().loc;
      if (is(Tok::Ident))
        d.name = tok().text.str();
      else if (is(Tok::IntLit))
        d.literal = tok().intValue;
      else {
        error(tok().loc, "expected a dim (a name or an integer), found " +
                             describeToken(tok()));
        return false;
      }
      consume();
      t.dims.push_back(std::move(d));
      if (t.dims.size() > 8) {
        error(t.dims.back().loc, "a tile has at most 8 dims");
        return false;
      }
      if (consumeIf(Tok::Comma))
        continue;
      return expectClose(Tok::RBracket, Tok::LBracket, open, "in tile type");
    }
  }
  if (word == "int" || word == "float" || word == "bool") {
    t.kind = isConst ? TypeAnnot::Const : TypeAnnot::Scalar;
    t.element = word.str();
    return true;
  }
  if (word == "tile" || word == "tensor" || word == "type") {
    t.kind = word == "tile"     ? TypeAnnot::Tile
             : word == "tensor" ? TypeAnnot::Tensor
                                : TypeAnnot::Type;
    return true;
  }
  error(t.loc, "unknown type '" + word + "' for " + what +
                   " (expected int, float, bool, const int, tile, tensor, "
                   "type, fn or a tile type such as f32[M, N])");
  return false;
}

bool Parser::parseFnParam(FunctionDecl &f) {
  FnParam p;
  if (!is(Tok::Ident)) {
    error(tok().loc, "expected a parameter name, found " +
                         describeToken(tok()));
    return false;
  }
  p.name = tok().text.str();
  p.loc = tok().loc;
  consume();
  for (const FnParam &other : f.params)
    if (other.name == p.name) {
      error(p.loc, "redefinition of parameter '" + p.name + "'");
      diags.note(other.loc, "previous definition here");
      return false;
    }
  if (consumeIf(Tok::Colon) &&
      !parseTypeAnnot(p.type, "parameter '" + p.name + "'"))
    return false;
  if (consumeIf(Tok::Assign)) {
    p.defaultValue = parseExpr();
    if (!p.defaultValue)
      return false;
  } else if (!f.params.empty() && f.params.back().defaultValue) {
    error(p.loc, "parameter '" + p.name + "' needs a default value: it "
                                          "follows a parameter that has one");
    return false;
  }
  f.params.push_back(std::move(p));
  return true;
}

/// `-> T` or `-> (T, U, ...)`.
bool Parser::parseResultTypes(FunctionDecl &f) {
  if (!consumeIf(Tok::Arrow))
    return true;
  if (!is(Tok::LParen)) {
    f.results.emplace_back();
    return parseResultType(f.results.back(), "the result of '" + f.name + "'");
  }
  llvm::SMLoc open = tok().loc;
  consume();
  while (true) {
    f.results.emplace_back();
    if (!parseResultType(f.results.back(), "a result of '" + f.name + "'"))
      return false;
    if (f.results.size() > 16)
      return error(tok().loc, "too many results"), false;
    if (consumeIf(Tok::Comma))
      continue;
    return expectClose(Tok::RParen, Tok::LParen, open, "after the result "
                                                       "types");
  }
}

std::unique_ptr<FunctionDecl> Parser::parseFunction() {
  consume(); // fn
  auto f = std::make_unique<FunctionDecl>();
  if (!is(Tok::Ident))
    return error(tok().loc, "expected the function name after 'fn', found " +
                                describeToken(tok()));
  f->name = tok().text.str();
  f->loc = tok().loc;
  consume();
  if (!parseParamList(
          "function", f->name, 64, [&] { return parseFnParam(*f); },
          [&] { return f->params.size(); }))
    return nullptr;
  if (!parseResultTypes(*f))
    return nullptr;
  function = f.get();
  bool ok = parseBlock(f->body, "the body of function '" + f->name + "'");
  function = nullptr;
  if (!ok)
    return nullptr;
  return f;
}

std::unique_ptr<SourceFile> Parser::parseFile() {
  auto file = std::make_unique<SourceFile>();
  while (!is(Tok::Eof)) {
    if (is(Tok::KwImport)) {
      if (!parseImport(*file))
        return nullptr;
    } else if (is(Tok::KwFn)) {
      auto f = parseFunction();
      if (!f)
        return nullptr;
      file->functions.push_back(std::move(f));
    } else if (is(Tok::KwKernel)) {
      if (file->kernel) {
        error(tok().loc, "only one kernel per file is allowed");
        diags.note(file->kernel->loc,
                   "kernel '" + file->kernel->name + "' is defined here");
        return nullptr;
      }
      file->kernel = parseKernel();
      if (!file->kernel)
        return nullptr;
    } else {
      return error(tok().loc, "expected 'kernel', 'fn' or 'import' at the "
                              "top level, found " +
                                  describeToken(tok()));
    }
  }
  if (failed)
    return nullptr;
  return file;
}

std::unique_ptr<SourceFile> flash::parseSourceFile(DiagnosticPrinter &diags,
                                                   unsigned bufferId) {
  const llvm::MemoryBuffer *buf =
      diags.getSourceMgr().getMemoryBuffer(bufferId);
  std::vector<Token> tokens;
  if (!lexBuffer(buf->getBuffer(), diags, tokens))
    return nullptr;
  std::unique_ptr<SourceFile> file = Parser(tokens, diags).parseFile();
  if (file)
    file->bufferId = bufferId;
  return file;
}

//===- Parser.h - Recursive-descent parser of the tile language -----------===//

#ifndef FLASH_FRONTEND_PARSER_H
#define FLASH_FRONTEND_PARSER_H

#include "AST.h"
#include "flashc/Frontend/Diagnostics.h"

#include <memory>

namespace flash {

/// Maximum nesting depth of expressions and blocks.
constexpr unsigned kMaxNestingDepth = 256;

/// Lex and parse the main buffer of `diags.getSourceMgr()`. Returns null
/// after reporting the first error.
std::unique_ptr<ast::KernelDecl> parseKernel(DiagnosticPrinter &diags);

} // namespace flash

#endif // FLASH_FRONTEND_PARSER_H

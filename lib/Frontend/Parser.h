//===- Parser.h - Recursive-descent parser of the tile language -----------===//

#ifndef FLASH_FRONTEND_PARSER_H
#define FLASH_FRONTEND_PARSER_H

#include "AST.h"
#include "flashc/Frontend/Diagnostics.h"

#include <memory>

namespace flash {

/// Maximum nesting depth of expressions and blocks.
constexpr unsigned kMaxNestingDepth = 256;

/// Lex and parse buffer `bufferId` of `diags.getSourceMgr()`: its imports
/// (not followed here), functions and kernel. Returns null after reporting
/// the first error.
std::unique_ptr<ast::SourceFile> parseSourceFile(DiagnosticPrinter &diags,
                                                 unsigned bufferId);

} // namespace flash

#endif // FLASH_FRONTEND_PARSER_H

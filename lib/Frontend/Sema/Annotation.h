//===- Annotation.h - The types of function parameters and results --------===//
//
// A function's parameters and results may be annotated (`s: f32[M, N]`,
// `k: const int`, `-> tile`); an argument or returned value is checked
// against its annotation where it is passed or returned. The dims of a tile
// annotation name compile-time integers: a name seen for the first time in
// the parameters is bound to the size (a constant of the function body),
// later uses must agree.
//
//===----------------------------------------------------------------------===//

#ifndef FLASH_FRONTEND_SEMA_ANNOTATION_H
#define FLASH_FRONTEND_SEMA_ANNOTATION_H

#include "Sema/Context.h"
#include "Sema/Scope.h"
#include "Sema/Value.h"

#include "AST.h"

#include <string>

namespace flash::frontend {

/// "const int", "f32[M, N]", ... as written.
std::string spelling(const ast::TypeAnnot &t);

/// Checks `v` (`what`, e.g. "argument 's' of 'score'", at `loc`) against
/// `t`; a `float` annotation turns an integer constant into a float one.
/// With `bindDims`, dim names not yet in `scopes` are declared there as
/// constants; otherwise they must name integer constants already.
bool checkAnnotation(FrontendContext &cx, ScopeStack &scopes,
                     const ast::TypeAnnot &t, Val &v, llvm::SMLoc loc,
                     const std::string &what, bool bindDims);

} // namespace flash::frontend

#endif // FLASH_FRONTEND_SEMA_ANNOTATION_H

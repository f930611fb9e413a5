//===- Context.cpp --------------------------------------------------------===//

#include "Sema/Context.h"

using namespace flash;
using namespace flash::frontend;

FrontendContext::FrontendContext(const ast::Program &program,
                                 mlir::MLIRContext &context,
                                 DiagnosticPrinter &diags)
    : program(program), kernel(*program.kernel), context(context),
      builder(&context), diags(diags) {}

std::nullopt_t FrontendContext::error(llvm::SMLoc loc,
                                      const llvm::Twine &message) {
  if (hasFailed)
    return std::nullopt;
  diags.error(loc, message);
  hasFailed = true;
  for (auto it = calls.rbegin(); it != calls.rend(); ++it)
    diags.note(it->loc, "in call to '" + it->fn->name + "' here");
  return std::nullopt;
}

void FrontendContext::note(llvm::SMLoc loc, const llvm::Twine &message) {
  diags.note(loc, message);
}

void FrontendContext::pushCall(const ast::FunctionDecl &fn,
                               llvm::SMLoc callLoc) {
  calls.push_back({&fn, callLoc, loc(callLoc)});
  callees.push_back(&fn);
}

mlir::Location FrontendContext::fileLoc(llvm::SMLoc loc) {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  unsigned buffer = sm.FindBufferContainingLoc(loc);
  if (!buffer)
    return mlir::UnknownLoc::get(&context);
  auto [line, column] = sm.getLineAndColumn(loc, buffer);
  return mlir::FileLineColLoc::get(
      &context, sm.getMemoryBuffer(buffer)->getBufferIdentifier(), line,
      column);
}

mlir::Location FrontendContext::loc(llvm::SMLoc loc) {
  if (!loc.isValid())
    return mlir::UnknownLoc::get(&context);
  mlir::Location here = fileLoc(loc);
  if (calls.empty())
    return here;
  return mlir::CallSiteLoc::get(here, calls.back().irLoc);
}

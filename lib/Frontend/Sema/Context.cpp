//===- Context.cpp --------------------------------------------------------===//

#include "Sema/Context.h"

using namespace flash;
using namespace flash::frontend;

FrontendContext::FrontendContext(const ast::KernelDecl &kernel,
                                 mlir::MLIRContext &context,
                                 DiagnosticPrinter &diags)
    : kernel(kernel), context(context), builder(&context), diags(diags) {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  fileName = builder.getStringAttr(
      sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier());
}

std::nullopt_t FrontendContext::error(llvm::SMLoc loc,
                                      const llvm::Twine &message) {
  if (!hasFailed)
    diags.error(loc, message);
  hasFailed = true;
  return std::nullopt;
}

void FrontendContext::note(llvm::SMLoc loc, const llvm::Twine &message) {
  diags.note(loc, message);
}

mlir::Location FrontendContext::loc(llvm::SMLoc loc) {
  if (!loc.isValid())
    return mlir::UnknownLoc::get(&context);
  auto [line, column] = diags.getSourceMgr().getLineAndColumn(loc);
  return mlir::FileLineColLoc::get(fileName, line, column);
}

//===- ParsedIR.h - LLVM IR from text, for the back-end unit tests --------===//
//
// The LLVM-level transforms of lib/Target (LoopOffsets, LoopExitFences) are
// tested on small modules written as text; these read one and find its
// values by name.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_TEST_UNIT_PARSEDIR_H
#define FLASHC_TEST_UNIT_PARSEDIR_H

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace flash::test {

/// A module parsed from text and its function `kernel` (null when the text
/// does not parse or has none).
struct ParsedIR {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  llvm::Function *function = nullptr;
};

inline std::unique_ptr<ParsedIR> parseIR(const char *text) {
  auto parsed = std::make_unique<ParsedIR>();
  llvm::SMDiagnostic error;
  parsed->module = llvm::parseAssemblyString(text, error, parsed->context);
  if (parsed->module)
    parsed->function = parsed->module->getFunction("kernel");
  return parsed;
}

/// The instruction of `function` named `name`, or null.
inline llvm::Instruction *named(llvm::Function &function,
                                llvm::StringRef name) {
  for (llvm::Instruction &inst : llvm::instructions(function))
    if (inst.getName() == name)
      return &inst;
  return nullptr;
}

} // namespace flash::test

#endif // FLASHC_TEST_UNIT_PARSEDIR_H

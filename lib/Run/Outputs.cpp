//===- Outputs.cpp - the .npy files --out asks for ------------------------===//
#include "Outputs.h"
#include "Diagnostics.h"

#include "flashc/Support/TemporaryFiles.h"

namespace flash::run {

int writeOutputs(const RunRequest &request, ParamList &params,
                 llvm::function_ref<npy::Array(Param &)> contents,
                 Diagnostics &diag) {
  int rc = 0;
  std::string why;
  // An interrupted write leaves the previous output and no temporary.
  if (!request.results)
    removeTemporariesOnSignal();
  for (const auto &[name, file] : request.outs) {
    if (request.results) {
      request.results->outputs[name] = contents(*params.find(name));
      continue;
    }
    if (!npy::writeFile(file, contents(*params.find(name)), why)) {
      diag.os() << "error: cannot write output '" << name << "' to '" << file
                << "': " << why << "\n";
      rc = 1;
    }
  }
  return rc;
}

} // namespace flash::run

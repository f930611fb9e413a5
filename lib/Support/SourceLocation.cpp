//===- SourceLocation.cpp - locations as users read them ------------------===//
#include "flashc/Support/SourceLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string flash::formatSourceLocation(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().getValue() + ":" + llvm::Twine(f.getLine()) + ":" +
            llvm::Twine(f.getColumn()))
        .str();
  if (auto n = dyn_cast<NameLoc>(loc))
    return formatSourceLocation(n.getChildLoc());
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return formatSourceLocation(c.getCallee());
  if (auto fu = dyn_cast<FusedLoc>(loc)) {
    for (Location sub : fu.getLocations())
      if (!isa<UnknownLoc>(sub))
        return formatSourceLocation(sub);
  }
  if (isa<UnknownLoc>(loc))
    return "<unknown location>";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

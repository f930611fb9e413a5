//===- Scope.cpp ----------------------------------------------------------===//

#include "Sema/Scope.h"

#include <algorithm>

using namespace flash;
using namespace flash::frontend;

Binding *ScopeStack::lookup(llvm::StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = (*it)->names.find(name.str());
    if (found != (*it)->names.end())
      return &found->second;
  }
  return nullptr;
}

std::string ScopeStack::suggest(llvm::StringRef name) const {
  std::string best;
  unsigned bestDist = ~0u;
  unsigned maxDist =
      name.size() <= 3 ? 1 : std::max<unsigned>(2, name.size() / 3);
  for (auto &scope : scopes) {
    for (auto &candidate : scope->order) {
      if (candidate == name)
        continue;
      unsigned d = name.edit_distance(candidate, true, maxDist + 1);
      if (d <= maxDist && d < bestDist) {
        bestDist = d;
        best = candidate;
      }
    }
  }
  return best;
}

bool ScopeStack::declare(llvm::StringRef name, llvm::SMLoc loc,
                         Binding binding) {
  if (Binding *prev = lookup(name)) {
    cx.error(loc, "redefinition of '" + name + "'");
    cx.note(prev->loc, "previous definition here");
    return false;
  }
  binding.loc = loc;
  scopes.back()->names[name.str()] = std::move(binding);
  scopes.back()->order.push_back(name.str());
  return true;
}

//===- Scope.cpp ----------------------------------------------------------===//

#include "Sema/Scope.h"
#include "Sema/Predefined.h"

#include <algorithm>

using namespace flash;
using namespace flash::frontend;

Binding *ScopeStack::lookupLocal(llvm::StringRef name) {
  for (size_t i = scopes.size(); i > frameBase; --i) {
    auto found = scopes[i - 1]->names.find(name.str());
    if (found != scopes[i - 1]->names.end())
      return &found->second;
  }
  return nullptr;
}

Binding *ScopeStack::lookup(llvm::StringRef name) {
  if (Binding *b = lookupLocal(name))
    return b;
  for (size_t i = std::min(sharedScopes, frameBase); i > 0; --i) {
    auto found = scopes[i - 1]->names.find(name.str());
    if (found != scopes[i - 1]->names.end())
      return &found->second;
  }
  return nullptr;
}

Binding *ScopeStack::lookupHidden(llvm::StringRef name) {
  for (size_t i = frameBase; i > std::min(sharedScopes, frameBase); --i) {
    auto found = scopes[i - 1]->names.find(name.str());
    if (found != scopes[i - 1]->names.end())
      return &found->second;
  }
  return nullptr;
}

std::string ScopeStack::suggest(llvm::StringRef name) const {
  std::string best;
  unsigned bestDist = ~0u;
  unsigned maxDist =
      name.size() <= 3 ? 1 : std::max<unsigned>(2, name.size() / 3);
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (i < frameBase && i >= sharedScopes)
      continue;
    for (auto &candidate : scopes[i]->order) {
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
  if (Binding *prev = frameBase ? lookupLocal(name) : lookup(name)) {
    if (prev->predefined) {
      cx.error(loc, "'" + name + "' is a predefined constant (" +
                        predefinedMeaning(name) +
                        ") and cannot be redefined");
      return false;
    }
    cx.error(loc, "redefinition of '" + name + "'");
    cx.note(prev->loc, "previous definition here");
    return false;
  }
  binding.loc = loc;
  scopes.back()->names[name.str()] = std::move(binding);
  scopes.back()->order.push_back(name.str());
  return true;
}

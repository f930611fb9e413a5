//===- MemoryBudget.cpp - how much memory a run may take for tensors ------===//
#include "flashc/Runtime/MemoryBudget.h"

#include <cctype>
#include <cstdlib>

namespace flash {

bool parseByteSize(const std::string &text, uint64_t &bytes) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t digit = text[i++] - '0';
    if (v > (UINT64_MAX - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  if (i == 0 || v == 0)
    return false;
  unsigned shift = 0;
  if (i + 1 == text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      return false;
    }
  } else if (i != text.size()) {
    return false;
  }
  if (shift && v > (UINT64_MAX >> shift))
    return false;
  bytes = v << shift;
  return true;
}

bool memoryBudget(const std::string &option, uint64_t &bytes,
                  std::string &error) {
  if (!option.empty()) {
    if (parseByteSize(option, bytes))
      return true;
    error = "--memory-limit expects a positive byte count (optionally with "
            "K, M, G or T), got '" +
            option + "'";
    return false;
  }
  const char *env = std::getenv(kMemoryBudgetEnv);
  if (!env || !*env) {
    bytes = kDefaultMemoryBudget;
    return true;
  }
  if (parseByteSize(env, bytes))
    return true;
  error = std::string(kMemoryBudgetEnv) +
          " expects a positive byte count "
          "(optionally with K, M, G or T), got '" +
          env + "'";
  return false;
}

} // namespace flash

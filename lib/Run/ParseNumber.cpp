//===- ParseNumber.cpp - whole-string numbers of --arg values -------------===//
#include "ParseNumber.h"

#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstdlib>

namespace flash::run {

bool parseNumber(const std::string &s, double &out, bool &overflow) {
  overflow = false;
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return false;
  // strtod returns HUGE_VAL with ERANGE for a finite literal it cannot hold
  // ("inf" itself sets no error).
  overflow = errno == ERANGE && std::isinf(out);
  return true;
}

bool parseNumber(const std::string &s, double &out) {
  bool overflow;
  return parseNumber(s, out, overflow);
}

bool parseInteger(const std::string &s, long long &out, bool &overflow) {
  overflow = false;
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size())
    return false;
  overflow = errno == ERANGE;
  return true;
}

} // namespace flash::run

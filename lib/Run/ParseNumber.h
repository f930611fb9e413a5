//===- ParseNumber.h - whole-string numbers of --arg values -----*- C++ -*-===//
#ifndef FLASH_LIB_RUN_PARSENUMBER_H
#define FLASH_LIB_RUN_PARSENUMBER_H

#include <string>

namespace flash::run {

/// Parses all of `s` as a floating-point number (no leading space).
bool parseNumber(const std::string &s, double &out);

/// Same; `overflow` when `s` is a finite number beyond the range of double
/// ("1e309"), which `out` then holds as infinity.
bool parseNumber(const std::string &s, double &out, bool &overflow);

/// Parses all of `s` as a base-10 integer; `overflow` when it does not fit.
bool parseInteger(const std::string &s, long long &out, bool &overflow);

} // namespace flash::run

#endif // FLASH_LIB_RUN_PARSENUMBER_H

//===- MemoryBudget.h - the memory a run may take for tensors -*- C++ -*-===//
//
// `flashc run` (and flash-emulate) check every tensor's declared size against
// a budget before allocating it, so that a .npy header claiming terabytes,
// or /dev/zero passed as an argument, is a one-line error instead of an
// out-of-memory abort. No MLIR, so the launcher can use it too.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_RUNTIME_MEMORYBUDGET_H
#define FLASHC_RUNTIME_MEMORYBUDGET_H

#include <cstdint>
#include <string>

namespace flash {

/// The default budget for the tensors of one run: 8 GiB.
inline constexpr uint64_t kDefaultMemoryBudget = uint64_t(8) << 30;

/// The environment variable that overrides the default budget.
inline constexpr const char *kMemoryBudgetEnv = "FLASHC_MEMORY_LIMIT";

/// Parses a byte count: digits with an optional K, M, G or T suffix (powers
/// of 1024). False on anything else, zero, or overflow.
bool parseByteSize(const std::string &text, uint64_t &bytes);

/// The budget: `option` when not empty, else $FLASHC_MEMORY_LIMIT when set,
/// else kDefaultMemoryBudget. False (with a one-line `error`) when the one
/// used does not parse.
bool memoryBudget(const std::string &option, uint64_t &bytes,
                  std::string &error);

} // namespace flash

#endif // FLASHC_RUNTIME_MEMORYBUDGET_H

//===- AtomicFile.h - Replace a file only once its new bytes are on disk --===//
//
// Plain C++17 and POSIX (the launcher builds without LLVM): the bytes go to a
// temporary file in the target's directory, which is renamed over the target
// only after every byte was written and the file closed. A failure leaves the
// previous file as it was and no temporary behind. A symbolic link keeps
// pointing at the replaced file; a device (/dev/null) or a pipe is written
// through instead.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_RUNTIME_ATOMICFILE_H
#define FLASHC_RUNTIME_ATOMICFILE_H

#include <cstddef>
#include <string>

namespace flash {

/// Writes `size` bytes at `data` to `path` atomically. On failure returns
/// false and sets `error` to a message naming the cause (not the path).
bool writeFileAtomically(const std::string &path, const void *data,
                         size_t size, std::string &error);

/// Whether `path` exists and is, or links to, neither a regular file nor a
/// directory: a device such as /dev/null, or a pipe.
bool isDeviceOrPipe(const std::string &path);

/// Told the path of each temporary once it exists (`exists`) and once it is
/// gone (renamed over its target or removed), so that a tool can remove it
/// when a signal ends the process mid-write (flash::removeTemporariesOnSignal
/// in flashc/Support/TemporaryFiles.h). One for the whole process.
using TemporaryFileObserver = void (*)(const std::string &path, bool exists);
void setTemporaryFileObserver(TemporaryFileObserver observer);
TemporaryFileObserver temporaryFileObserver();

} // namespace flash

#endif // FLASHC_RUNTIME_ATOMICFILE_H

//===- AtomicFile.cpp - Replace a file only once its new bytes are on disk ===//
#include "flashc/Runtime/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace flash {

static TemporaryFileObserver observer = nullptr;

void setTemporaryFileObserver(TemporaryFileObserver o) { observer = o; }
TemporaryFileObserver temporaryFileObserver() { return observer; }

static void observe(const std::string &tmp, bool exists) {
  if (observer)
    observer(tmp, exists);
}

/// Removes the temporary `tmp` after a failure.
static void discard(const std::string &tmp) {
  ::unlink(tmp.c_str());
  observe(tmp, false);
}

static bool fail(std::string &error, const char *what, int err) {
  error = std::string(what) + ": " + std::strerror(err);
  return false;
}

/// Writes all `size` bytes to `fd`; returns 0 or the errno of the failure.
static int writeAll(int fd, const void *data, size_t size) {
  const char *bytes = static_cast<const char *>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

bool isDeviceOrPipe(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) &&
         !S_ISDIR(info.st_mode);
}

/// A device (/dev/null) or a pipe is written through, not replaced:
/// renaming over /dev/null would turn it into a plain file for every program
/// on the machine.
static bool writeInPlace(const std::string &path, const void *data,
                         size_t size, std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0)
    return fail(error, "cannot open file for writing", errno);
  int err = writeAll(fd, data, size);
  if (::close(fd) != 0 && err == 0)
    err = errno;
  return err == 0 || fail(error, "cannot write file", err);
}

bool writeFileAtomically(const std::string &path, const void *data,
                         size_t size, std::string &error) {
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    // Replace what the link names and keep the link; a dangling link gets
    // its target created.
    char *resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved)
      return writeInPlace(path, data, size, error);
    std::string target(resolved);
    std::free(resolved);
    return writeFileAtomically(target, data, size, error);
  }
  if (isDeviceOrPipe(path))
    return writeInPlace(path, data, size, error);
  // mkstemp in the target's directory, so that rename() stays on one file
  // system and is atomic.
  std::string pattern = path + ".tmp-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    return fail(error, "cannot open file for writing", errno);
  std::string tmp(name.data());
  observe(tmp, true);
  if (int err = writeAll(fd, data, size)) {
    ::close(fd);
    discard(tmp);
    return fail(error, "cannot write file", err);
  }
  // mkstemp creates the file 0600; give it what a plain open would (0666
  // less the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    int err = errno;
    discard(tmp);
    return fail(error, "cannot write file", err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    discard(tmp);
    return fail(error, "cannot replace file", err);
  }
  observe(tmp, false);
  return true;
}

} // namespace flash

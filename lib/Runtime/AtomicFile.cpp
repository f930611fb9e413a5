//===- AtomicFile.cpp - Replace a file only once its new bytes are on disk ===//
#include "flashc/Runtime/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace flash {

static bool fail(std::string &error, const char *what, int err) {
  error = std::string(what) + ": " + std::strerror(err);
  return false;
}

bool writeFileAtomically(const std::string &path, const void *data,
                         size_t size, std::string &error) {
  // mkstemp in the target's directory, so that rename() stays on one file
  // system and is atomic.
  std::string pattern = path + ".tmp-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    return fail(error, "cannot open file for writing", errno);
  std::string tmp(name.data());
  const char *bytes = static_cast<const char *>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(error, "cannot write file", err);
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates the file 0600; give it what a plain open would (0666
  // less the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail(error, "cannot write file", err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail(error, "cannot replace file", err);
  }
  return true;
}

} // namespace flash

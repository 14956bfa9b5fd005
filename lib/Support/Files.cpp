//===- Files.cpp - Reading and writing the tools' files safely ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::attn::files;

namespace {

Error failure(const std::string &action, const std::string &path,
              int error = errno) {
  return "cannot " + action + " " + path + ": " + std::strerror(error);
}

const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

Error checkStatus(const std::string &path, const struct stat &status,
                  uint64_t maxBytes) {
  if (!S_ISREG(status.st_mode))
    return "cannot read " + path + ": it is " + kindOf(status.st_mode) +
           ", not a regular file";
  if (static_cast<uint64_t>(status.st_size) > maxBytes)
    return "cannot read " + path + ": it has " +
           std::to_string(status.st_size) + " bytes, more than the " +
           std::to_string(maxBytes) + " this input may have";
  return {};
}

/// Writes every chunk to `fd`, retrying short writes.
bool writeAll(int fd, const std::vector<std::string_view> &chunks) {
  for (std::string_view chunk : chunks) {
    const char *data = chunk.data();
    size_t left = chunk.size();
    while (left > 0) {
      ssize_t written = ::write(fd, data, left);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        return false;
      data += written;
      left -= static_cast<size_t>(written);
    }
  }
  return true;
}

/// A path that exists and is not a regular file: written in place.
Error writeInPlace(const std::string &path,
                   const std::vector<std::string_view> &chunks) {
  // Non-blocking, so that a FIFO no process reads is an error (ENXIO), not a
  // wait forever; the writes themselves block as usual.
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENXIO)
    return "cannot write " + path + ": it is a FIFO that no process reads";
  if (fd < 0)
    return failure("write", path);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  bool written = writeAll(fd, chunks);
  int error = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  return written ? Error() : failure("write", path, error);
}

} // namespace

Error mlir::attn::files::checkInput(const std::string &path,
                                    uint64_t maxBytes) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return failure("read", path);
  return checkStatus(path, status, maxBytes);
}

Error mlir::attn::files::readFile(const std::string &path, uint64_t maxBytes,
                                  std::string &contents) {
  // Checked on the open descriptor, so the file read is the file checked.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return failure("read", path);
  struct stat status;
  Error error = ::fstat(fd, &status) != 0 ? failure("read", path)
                                          : checkStatus(path, status, maxBytes);
  if (error.empty()) {
    contents.resize(static_cast<size_t>(status.st_size));
    size_t done = 0;
    while (done < contents.size()) {
      ssize_t got = ::read(fd, &contents[done], contents.size() - done);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0) {
        error = failure("read", path);
        break;
      }
      if (got == 0) {
        error = "cannot read " + path + ": it shrank while being read";
        break;
      }
      done += static_cast<size_t>(got);
    }
  }
  ::close(fd);
  return error;
}

Error mlir::attn::files::writeFile(
    const std::string &path, const std::vector<std::string_view> &chunks) {
  struct stat existing;
  bool exists = ::stat(path.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode))
    return "cannot write " + path + ": it is a directory";
  if (exists && !S_ISREG(existing.st_mode))
    return writeInPlace(path, chunks);

  // The temporary file sits next to the final one, so that the rename is
  // atomic (same file system).
  std::string temporary = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(&temporary[0]);
  if (fd < 0)
    return failure("write", path);
  // mkstemp creates the file 0600: give it the old file's mode, or the mode a
  // new file gets under the umask.
  mode_t mode = existing.st_mode & 07777;
  if (!exists) {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  bool ok = ::fchmod(fd, mode) == 0 && writeAll(fd, chunks) && ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && ::rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(temporary.c_str());
    return failure("write", path, error);
  }
  return {};
}

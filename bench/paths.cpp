// SPDX-License-Identifier: MIT
#include "paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "usage_error.hpp"

namespace reclaim_bench {
namespace {

std::string_view file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The last byte of the regular file `path` of `size` bytes (> 0); -1 with errno set if it cannot
// be read.
int last_byte(const std::string& path, off_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  unsigned char byte = 0;
  const ssize_t n = ::pread(fd, &byte, 1, size - 1);
  const int error = n < 0 ? errno : EIO;  // 0 bytes: the file shrank meanwhile
  ::close(fd);
  errno = error;
  return n == 1 ? byte : -1;
}

}  // namespace

void check_output_path(std::string_view flag, const std::string& path, output_use use,
                       bool directories_made) {
  const bool append = use == output_use::append;
  const auto cannot = [&](int error) {
    return usage_error(fmt::format("{}: cannot {} '{}': {}", flag, append ? "open" : "create", path,
                                   std::strerror(error)));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      throw usage_error(fmt::format("{}: '{}' is {}, not a regular file (the lab {} a file)", flag,
                                    path, file_type(st.st_mode),
                                    append ? "appends JSON lines to" : "replaces"));
    if (append) {
      if (::access(path.c_str(), W_OK) != 0) throw cannot(errno);
      if (st.st_size > 0) {
        const int last = last_byte(path, st.st_size);
        if (last < 0) throw cannot(errno);
        if (last != '\n')
          throw usage_error(fmt::format(
              "{}: the last line of '{}' is incomplete (no newline at its end: a run cut short?); "
              "remove it (sed -i '$d' '{}') or append to another file",
              flag, path, path));
      }
      return;
    }
  } else if (errno != ENOENT) {
    throw cannot(errno);
  }

  // A new file, or the temporary file that replaces it, is made in the file's directory.
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat dir_st {};
  while (::stat(dir.c_str(), &dir_st) != 0) {
    const int error = errno;
    fs::path parent = dir.parent_path();
    if (parent.empty()) parent = ".";
    if (error != ENOENT || !directories_made || parent == dir) throw cannot(error);
    dir = parent;
  }
  if (!S_ISDIR(dir_st.st_mode)) throw cannot(ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw cannot(errno);
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;  // both exist: device and inode
  const auto resolved = [](const std::string& p) {
    std::error_code error;
    const fs::path absolute = fs::absolute(p, error);
    fs::path r = fs::weakly_canonical(absolute, error);
    return error ? absolute.lexically_normal() : r;
  };
  return resolved(a) == resolved(b);
}

}  // namespace reclaim_bench

#include "io/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace pebench {

namespace {

using FileId = std::pair<dev_t, ino_t>;

std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}
std::map<FileId, std::string>& inputs() {
  static std::map<FileId, std::string> m;
  return m;
}

void remember(const struct stat& st, const std::string& path) {
  std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().emplace(FileId{st.st_dev, st.st_ino}, path);
}

// Reads fd to its end, failing past max_bytes.
std::string read_all(int fd, const std::string& path, size_t max_bytes, const std::string& what) {
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputFileError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    }
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      throw InputFileError(fmt::format("{}: larger than {} bytes, not a {}", path, max_bytes, what));
    }
    text.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

std::string file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

std::string read_input_file(const std::string& path, size_t max_bytes, const std::string& what) {
  if (path == "-") return read_all(STDIN_FILENO, "stdin", max_bytes, what);
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputFileError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputFileError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) {
    throw InputFileError(fmt::format("{}: is {}, not a {} file", path, file_type_name(st.st_mode), what));
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    throw InputFileError(fmt::format("{}: larger than {} bytes, not a {}", path, max_bytes, what));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  remember(st, path);
  return read_all(fd, path, max_bytes, what);
}

void declare_input(const std::string& path) {
  struct stat st {};
  if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0) return;
  remember(st, path);
}

std::string input_named_by(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
  std::lock_guard<std::mutex> lock(inputs_mutex());
  auto it = inputs().find(FileId{st.st_dev, st.st_ino});
  return it == inputs().end() ? "" : it->second;
}

}  // namespace pebench

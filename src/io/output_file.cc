#include "io/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <utility>

#include "io/input_file.h"

namespace pebench {

namespace {

std::mutex& claims_mutex() {
  static std::mutex m;
  return m;
}
// The identities (device, inode) of this run's claimed outputs that exist,
// and their paths as given.
std::set<std::string>& claimed_paths() {
  static std::set<std::string> s;
  return s;
}

std::string normal_path(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : p.string();
}

// The permission bits the new file gets: those of the file it replaces, else
// 0644. rename() replaces a read-only file as readily as any other (and the
// new one would come back writable), so a read-only target is refused.
mode_t replaceable_mode(const std::string& path, const std::string& option) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0644;
  // No write bit for anyone, or none for us: root has access() to everything.
  if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0) {
    throw OutputPathError(fmt::format("{} is read-only; not replacing it ({})", path, option));
  }
  return st.st_mode & 07777;
}

void write_all(int fd, const std::string& content, const std::string& tmp) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) throw OutputPathError(fmt::format("{}: empty path", option));
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    throw OutputPathError(fmt::format("{} {}: is {}, not a regular file; pebench writes only regular files", option,
                                      path, file_type_name(st.st_mode)));
  }
  const std::string input = input_named_by(path);
  if (!input.empty()) {
    throw OutputPathError(fmt::format("{} {}: the same file as {}, an input of this run; it would be overwritten",
                                      option, path, input));
  }
  replaceable_mode(path, option);
}

void check_output_dir(const std::string& dir, const std::string& option) {
  if (dir.empty()) throw OutputPathError(fmt::format("{}: empty path", option));
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    throw OutputPathError(fmt::format("{} {}: is {}, not a directory", option, dir, file_type_name(st.st_mode)));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputPathError(fmt::format("{} {}: cannot create the directory: {}", option, dir, ec.message()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw OutputPathError(fmt::format("{} {}: cannot write in the directory: {}", option, dir, std::strerror(errno)));
  }
}

OutputClaim::OutputClaim(const std::string& path, const std::string& option) : path_(path) {
  check_output_path(path, option);
  const std::string key = normal_path(path);
  {
    std::lock_guard<std::mutex> lock(claims_mutex());
    if (!claimed_paths().insert(key).second) {
      throw OutputPathError(fmt::format("{} {}: another output of this run writes the same file", option, path));
    }
  }
  std::error_code ec;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  lock_path_ = path + ".lock";
  // Lock a file beside the output; the output itself is replaced by rename
  // and so cannot hold a lock. After locking, the lock file must still be
  // the one at lock_path_ (its last holder removes it on release).
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      const int err = errno;
      release();
      throw std::runtime_error(fmt::format("{} {}: cannot create the lock file {}: {}", option, path, lock_path_,
                                           std::strerror(err)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {};
      const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
      ::close(fd);
      std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      lock_path_.clear();
      release();
      throw OutputPathError(fmt::format("{} {}: another pebench{} is writing it ({} is locked); wait for it or "
                                        "choose another path",
                                        option, path, holder.empty() ? "" : " (pid " + holder + ")",
                                        path + ".lock"));
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
      lock_fd_ = fd;
      return;
    }
    ::close(fd);  // removed by its holder meanwhile: lock the new one
  }
  lock_path_.clear();
  release();
  throw OutputPathError(fmt::format("{} {}: could not lock {}.lock", option, path, path));
}

OutputClaim::~OutputClaim() { release(); }

OutputClaim::OutputClaim(OutputClaim&& other) noexcept
    : path_(std::move(other.path_)), lock_path_(std::move(other.lock_path_)), lock_fd_(other.lock_fd_) {
  other.path_.clear();
  other.lock_path_.clear();
  other.lock_fd_ = -1;
}

OutputClaim& OutputClaim::operator=(OutputClaim&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    lock_path_ = std::move(other.lock_path_);
    lock_fd_ = other.lock_fd_;
    other.path_.clear();
    other.lock_path_.clear();
    other.lock_fd_ = -1;
  }
  return *this;
}

void OutputClaim::release() {
  if (lock_fd_ >= 0) {
    ::unlink(lock_path_.c_str());  // while still holding it: see the constructor
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  if (!path_.empty()) {
    std::lock_guard<std::mutex> lock(claims_mutex());
    claimed_paths().erase(normal_path(path_));
  }
  path_.clear();
  lock_path_.clear();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  check_output_path(path, "output");
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create directory {}: {}", target.parent_path().string(), ec.message()));
  }
  const mode_t mode = replaceable_mode(path, "output");
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  ::fchmod(fd, mode);  // best effort: a failure leaves 0644, as for a new file
  write_all(fd, content, tmp);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot replace {}: {}", path, std::strerror(err)));
  }
}

bool stdout_ok(std::string& error) {
  std::cout.flush();
  const bool cxx_ok = !std::cout.fail();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && cxx_ok && !std::ferror(stdout)) return true;
  error = fmt::format("cannot write stdout: {}", err ? std::strerror(err) : "a write failed (a full disk or a closed pipe)");
  return false;
}

}  // namespace pebench

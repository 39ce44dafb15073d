// The one place that decides whether pebench may write a path, and writes
// it. A path pebench writes must be a regular file, a symbolic link (the
// link is replaced, never followed) or not exist yet: a device, FIFO or
// directory is refused, so `--out /dev/null` can never replace the system's.
// It must not be a file this run reads (input_file.h) nor another output of
// the same run. The new content goes to a temporary file beside it, every
// write, fsync and close checked, and is renamed over the old one only when
// complete: a full disk, a file size limit or a signal leaves the old file
// as it was. An advisory lock (PATH.lock, flock) keeps two runs from
// writing one path: the second is refused with the holder's pid.
#pragma once

#include <stdexcept>
#include <string>

namespace pebench {

// A path this run must not write, or a second run writing it: bad input
// (exit 2). One line that names the path and the option.
class OutputPathError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws OutputPathError when `path` may not be written: not a regular file
// (or link, or absent), read-only, an input of this run. `option` names it
// in the message ("--out").
void check_output_path(const std::string& path, const std::string& option);

// Throws OutputPathError unless `dir` is a directory this run can write
// files in, creating it (and its parents) when missing: `--dump` onto a file
// or a read-only folder is refused before anything runs.
void check_output_dir(const std::string& dir, const std::string& option);

// An output the whole run writes (--out, --benchmark_out, report -o):
// check_output_path, not the same file as another claim, and the advisory
// lock held until destruction (the lock file is then removed).
class OutputClaim {
 public:
  OutputClaim() = default;
  OutputClaim(const std::string& path, const std::string& option);
  ~OutputClaim();
  OutputClaim(OutputClaim&& other) noexcept;
  OutputClaim& operator=(OutputClaim&& other) noexcept;
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;
  const std::string& path() const { return path_; }

 private:
  void release();
  std::string path_, lock_path_;
  int lock_fd_ = -1;
};

// Writes `content` to `path` through a temporary file in the same directory,
// fsync and rename: readers see the old file or the new one, never a torn
// one. Checks the path first (check_output_path, with "output" as the
// option). Creates missing parent directories. Throws OutputPathError when
// the path may not be written (it is left as it is), else
// std::runtime_error naming the path and the OS error ("No space left on
// device", "File too large"); the temporary file is removed. A replaced file
// keeps its permission bits.
void write_file_atomic(const std::string& path, const std::string& content);

// Flushes stdout (C and C++ streams) and says whether every write to it
// succeeded; false on a full disk or a closed pipe, with `error` set.
bool stdout_ok(std::string& error);

}  // namespace pebench

// The one way pebench reads a file named on its command line (reports,
// device profiles, tuning reports): a regular file, or "-" for stdin, read
// up to a size cap. A FIFO, a device or a directory is refused at once
// (opened without blocking), so `--emulate /dev/zero` or a FIFO never reads
// without end or hangs. Every file read is remembered as an input of this
// run, so that no output of the run may replace it (output_file.h).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace pebench {

// Why a file could not be read: one line that starts with the path.
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole of `path` (or stdin for "-"), at most `max_bytes`. `what` names
// the kind of file in messages ("report", "profile"). Throws InputFileError:
// "PATH: a FIFO, not a regular file", "PATH: larger than N bytes, not a
// report", "PATH: cannot read: ...".
std::string read_input_file(const std::string& path, size_t max_bytes, const std::string& what);

// Records `path` as an input of this run without reading it (an existing
// file only; a missing one cannot be overwritten by accident).
void declare_input(const std::string& path);

// The input `path` is (same file: device and inode), or "" when it is none.
std::string input_named_by(const std::string& path);

// "a FIFO", "a character device", "a directory", ... for st_mode's file type.
std::string file_type_name(unsigned mode);

}  // namespace pebench

// NPY format version 1.0 (numpy.lib.format): little-endian, C order.
#pragma once

#include <string>
#include <vector>

#include "harness/contract/tensor.h"

namespace pebench {

// The complete .npy file for `t` (header and data).
std::string npy_bytes(const HostTensor& t);
void write_npy(const std::string& path, const HostTensor& t);

// Reads a .npy file written by write_npy (or numpy.save of <f4, <f2, <i4,
// C order). Throws std::runtime_error naming the path on anything else.
HostTensor read_npy(const std::string& path, const std::string& name = "");

}  // namespace pebench

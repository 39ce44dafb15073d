#include "harness/output/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

#include "harness/output/report.h"

namespace pebench {

std::string npy_bytes(const HostTensor& t) {
  // Python tuple syntax: "(2, 3)", "(5,)", "()".
  std::string shape;
  for (int64_t d : t.desc().shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  if (t.desc().shape.size() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   npy_descr(t.desc().dtype), shape);
  // Magic (6) + version (2) + header length (2) + header + '\n', padded with
  // spaces so the data starts on a 64-byte boundary.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += header;
  out.append(static_cast<const char*>(t.data()), t.bytes());
  return out;
}

void write_npy(const std::string& path, const HostTensor& t) { write_file_atomic(path, npy_bytes(t)); }

HostTensor read_npy(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not an NPY file");
  if (data[6] != 1) throw std::runtime_error(path + ": only NPY version 1.0 is supported");
  const size_t hlen = static_cast<uint8_t>(data[8]) | (static_cast<size_t>(static_cast<uint8_t>(data[9])) << 8);
  if (10 + hlen > data.size()) throw std::runtime_error(path + ": truncated header");
  const std::string header = data.substr(10, hlen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'"))) throw std::runtime_error(path + ": no descr");
  const std::string descr = m[1];
  if (!std::regex_search(header, m, std::regex("'fortran_order':\\s*(True|False)")) || m[1] != "False") {
    throw std::runtime_error(path + ": not C order");
  }
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) throw std::runtime_error(path + ": no shape");
  TensorDesc desc;
  desc.name = name;
  desc.role = TensorRole::kInput;
  const std::string dims = m[1];
  const std::regex number("\\d+");
  std::sregex_iterator it(dims.begin(), dims.end(), number), end;
  for (; it != end; ++it) desc.shape.push_back(std::stoll(it->str()));
  if (descr == "<f4") {
    desc.dtype = DType::kF32;
  } else if (descr == "<f2") {
    desc.dtype = DType::kF16;
  } else if (descr == "<i4") {
    desc.dtype = DType::kI32;
  } else {
    throw std::runtime_error(path + ": unsupported dtype " + descr);
  }
  HostTensor t(desc);
  if (data.size() != 10 + hlen + t.bytes()) {
    throw std::runtime_error(fmt::format("{}: {} data bytes, the header says {}", path, data.size() - 10 - hlen, t.bytes()));
  }
  std::memcpy(t.data(), data.data() + 10 + hlen, t.bytes());
  return t;
}

}  // namespace pebench

#include "npy.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "vkcnn/error.h"

namespace vkcnn::cli {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Error(ErrorCode::invalidModel, path + ": not a float32 .npy file I can read (" + why + ")");
}

std::string headerValue(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return {};
  size_t v = header.find(':', k);
  if (v == std::string::npos) return {};
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  if (header[v] == '(') return header.substr(v, header.find(')', v) - v + 1);
  const size_t end = header.find_first_of(",}", v);
  return header.substr(v, end - v);
}

}  // namespace

namespace {

// Reads the header; `in` is left at the data.
Array readHeader(const std::string& path, std::ifstream& in, bool& f4, uint64_t& count,
                 uint64_t& fileSize) {
  fileSize = uint64_t(in.tellg());
  in.seekg(0);
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad(path, "no NUMPY magic");
  uint32_t headerLength = 0;
  if (magic[6] == 1) {
    uint16_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 2);
    headerLength = n;
  } else if (magic[6] == 2 || magic[6] == 3) {
    in.read(reinterpret_cast<char*>(&headerLength), 4);
  } else {
    bad(path, "unknown version " + std::to_string(int(magic[6])));
  }
  if (headerLength > 65536 || headerLength > fileSize) bad(path, "header too long");
  std::string header(headerLength, '\0');
  if (!in.read(header.data(), headerLength)) bad(path, "truncated header");
  const std::string descr = headerValue(header, "descr");
  f4 = descr.find("<f4") != std::string::npos;
  const bool f8 = descr.find("<f8") != std::string::npos;
  if (!f4 && !f8) bad(path, "dtype " + descr + "; float32 or float64 expected");
  if (headerValue(header, "fortran_order").find("False") == std::string::npos)
    bad(path, "Fortran order");
  Array a;
  std::string dims = headerValue(header, "shape");
  std::stringstream s(dims.size() > 2 ? dims.substr(1, dims.size() - 2) : "");
  count = 1;
  for (std::string item; std::getline(s, item, ',');) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    while (*end == ' ') ++end;
    if (*end || d < 0 || d > (1ll << 31)) bad(path, "dimension " + item);
    a.shape.push_back(d);
    count *= uint64_t(d);
    if (count > (uint64_t(1) << 31)) bad(path, "more than 2^31 elements");
  }
  const uint64_t bytes = count * (f4 ? 4 : 8);
  const uint64_t dataStart = uint64_t(in.tellg());
  if (dataStart + bytes != fileSize)
    bad(path, std::to_string(fileSize - dataStart) + " data bytes for " + std::to_string(bytes) +
                  " expected");
  return a;
}

}  // namespace

Array readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorCode::io, path + ": cannot open");
  bool f4 = false;
  uint64_t count = 0, fileSize = 0;
  Array a = readHeader(path, in, f4, count, fileSize);
  const uint64_t bytes = count * (f4 ? 4 : 8);
  a.data.resize(count);
  if (f4) {
    in.read(reinterpret_cast<char*>(a.data.data()), std::streamsize(bytes));
  } else {
    std::vector<double> d(count);
    in.read(reinterpret_cast<char*>(d.data()), std::streamsize(bytes));
    for (size_t i = 0; i < count; ++i) a.data[i] = float(d[i]);
  }
  return a;
}

std::vector<int64_t> readNpyShape(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorCode::io, path + ": cannot open");
  bool f4 = false;
  uint64_t count = 0, fileSize = 0;
  return readHeader(path, in, f4, count, fileSize).shape;
}

void writeNpy(const std::string& path, const Array& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape +=
        std::to_string(a.shape[i]) + (a.shape.size() == 1 || i + 1 < a.shape.size() ? "," : "");
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t length = uint16_t(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&length), 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(a.data.data()), std::streamsize(a.data.size() * 4));
  out.close();
  if (!out) throw Error(ErrorCode::io, path + ": cannot write (" + std::strerror(errno) + ")");
}

std::vector<float> readRawFloats(const std::string& path, size_t expected) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorCode::io, path + ": cannot open");
  const uint64_t size = uint64_t(in.tellg());
  if (size % 4 || (expected && size != expected * 4))
    throw Error(ErrorCode::io, path + ": " + std::to_string(size) + " bytes; " +
                                   (expected ? std::to_string(expected * 4) + " expected"
                                             : std::string("not a multiple of 4")));
  std::vector<float> data(size / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(data.data()), std::streamsize(size));
  return data;
}

void writeRawFloats(const std::string& path, const std::vector<float>& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * 4));
  out.close();
  if (!out) throw Error(ErrorCode::io, path + ": cannot write (" + std::strerror(errno) + ")");
}

}  // namespace vkcnn::cli

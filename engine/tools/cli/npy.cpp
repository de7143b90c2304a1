#include "npy.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>

#include "platform/platform.h"
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

// The header of the .npy file `bytes`; the data follows it at `dataStart`.
Array readHeader(const std::string& path, std::span<const uint8_t> bytes, bool& f4, uint64_t& count,
                 uint64_t& dataStart) {
  const uint64_t fileSize = bytes.size();
  const char* text = reinterpret_cast<const char*>(bytes.data());
  if (fileSize < 10 || std::memcmp(text, "\x93NUMPY", 6) != 0) bad(path, "no NUMPY magic");
  uint32_t headerLength = 0;
  uint64_t at = 8;
  if (text[6] == 1) {
    uint16_t n = 0;
    std::memcpy(&n, text + at, 2);
    headerLength = n;
    at += 2;
  } else if (text[6] == 2 || text[6] == 3) {
    if (fileSize < 12) bad(path, "truncated header");
    std::memcpy(&headerLength, text + at, 4);
    at += 4;
  } else {
    bad(path, "unknown version " + std::to_string(int(text[6])));
  }
  if (headerLength > 65536 || headerLength > fileSize) bad(path, "header too long");
  if (at + headerLength > fileSize) bad(path, "truncated header");
  const std::string header(text + at, headerLength);
  dataStart = at + headerLength;
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
  const uint64_t dataBytes = count * (f4 ? 4 : 8);
  if (dataStart + dataBytes != fileSize)
    bad(path, std::to_string(fileSize - dataStart) + " data bytes for " +
                  std::to_string(dataBytes) + " expected");
  return a;
}

}  // namespace

// Files are mapped, never opened as streams: only a regular file is read (a FIFO would block).
Array readNpy(const std::string& path) {
  const platform::MappedFile file(path, path);
  bool f4 = false;
  uint64_t count = 0, dataStart = 0;
  Array a = readHeader(path, file.bytes(), f4, count, dataStart);
  const uint8_t* data = file.bytes().data() + dataStart;
  a.data.resize(count);
  if (f4) {
    if (count) std::memcpy(a.data.data(), data, count * 4);
  } else {
    for (size_t i = 0; i < count; ++i) {
      double d;
      std::memcpy(&d, data + i * 8, 8);
      a.data[i] = float(d);
    }
  }
  return a;
}

std::vector<int64_t> readNpyShape(const std::string& path) {
  const platform::MappedFile file(path, path);
  bool f4 = false;
  uint64_t count = 0, dataStart = 0;
  return readHeader(path, file.bytes(), f4, count, dataStart).shape;
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
  const platform::MappedFile file(path, path);
  const uint64_t size = file.size();
  if (size % 4 || (expected && size != expected * 4))
    throw Error(ErrorCode::io, path + ": " + std::to_string(size) + " bytes; " +
                                   (expected ? std::to_string(expected * 4) + " expected"
                                             : std::string("not a multiple of 4")));
  std::vector<float> data(size / 4);
  if (size) std::memcpy(data.data(), file.bytes().data(), size);
  return data;
}

void writeRawFloats(const std::string& path, const std::vector<float>& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * 4));
  out.close();
  if (!out) throw Error(ErrorCode::io, path + ": cannot write (" + std::strerror(errno) + ")");
}

}  // namespace vkcnn::cli

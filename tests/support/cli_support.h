// What the tests of the vkcnn tool share (test_cli.cpp, test_cli_compile.cpp): a folder of their
// own, running the tool through the shell as a user does (exit status, standard output and error;
// messages must name command-line options and nothing may crash), and .npy files in and out.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx_model_builder.h"
#include "test_support.h"

namespace vkcnn::test {

namespace fs = std::filesystem;

inline const fs::path& directory() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("vkcnn-test-cli-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string file(const std::string& name) {
  return (directory() / name).string();
}

struct Result {
  int status = -1;
  std::string out;     // stdout alone: where `--json -` writes (progress lines go to stderr)
  std::string output;  // stdout, then stderr
  bool has(const std::string& part) const {
    const bool found = output.find(part) != std::string::npos;
    if (!found) MESSAGE("'" << part << "' is not in the output:\n" << output);
    return found;
  }
};

// Runs `vkcnn ARGUMENTS` through the shell, with `environment` (NAME=VALUE ...) in front.
inline Result cli(const std::string& arguments, const std::string& environment = {},
                  const std::string& program = VKCNN_CLI) {
  // stderr apart: a slow run prints progress there, which must not land inside stdout's JSON.
  const std::string errors = file("stderr.txt");
  const std::string command = environment + " " + program + " " + arguments + " 2>'" + errors + "'";
  Result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream errorStream(errors, std::ios::binary);
  r.output = r.out + std::string(std::istreambuf_iterator<char>(errorStream), {});
  INFO("vkcnn " << arguments << "\n" << r.output);
  // Messages name command-line options, never the library's C++ names, and nothing crashes.
  CHECK(r.output.find("Options::") == std::string::npos);
  CHECK(r.output.find("terminate called") == std::string::npos);
  CHECK(r.output.find("std::") == std::string::npos);
  return r;
}

inline std::string save(const std::string& name, const OnnxModelBuilder& b) {
  const std::vector<uint8_t> bytes = b.bytes();
  std::ofstream out(file(name), std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return file(name);
}

inline void writeNpy(const std::string& path, const std::vector<int64_t>& shape,
                     const std::vector<float>& values) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t length = uint16_t(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&length), 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
}

inline std::vector<float> readNpyData(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 10);
  uint16_t length = 0;
  std::memcpy(&length, bytes.data() + 8, 2);
  std::vector<float> v((bytes.size() - 10 - length) / 4);
  std::memcpy(v.data(), bytes.data() + 10 + length, v.size() * 4);
  return v;
}

}  // namespace vkcnn::test

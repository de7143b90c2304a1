// The operating system behind one small interface: opening shared libraries (the Vulkan loader),
// files mapped read-only, what a path is before anything opens it, the per-user cache directory,
// the process id, environment changes and threads' names. posix.cpp (Linux, Android, macOS) and
// windows.cpp implement it; nothing else in engine/ includes an operating-system header, so a new
// platform is one new file here.
//
// common.cpp holds what every system shares (messages, readFile). Built into each binary that uses
// it (the vkcnn_platform interface target in engine/CMakeLists.txt adds the source to its
// consumers): the libraries keep it hidden, and the CLI and the tests get a copy of their own
// rather than a second exported API.
//
// Paths are UTF-8 strings everywhere (the Windows implementation converts them to UTF-16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace vkcnn::platform {

// ---- shared libraries ---------------------------------------------------------------------------

using LibraryFunction = void (*)();

// Opens a shared library by file name (searched as the system does) with a reference of its own;
// nullptr when it cannot be opened.
void* openLibrary(const char* name);
// The function `name` exported by `library`, or nullptr.
LibraryFunction findFunction(void* library, const char* name);
// Drops the reference openLibrary took (nullptr is ignored).
void closeLibrary(void* library);
// Loads `name` for the rest of the process, if it can be found (nothing happens otherwise).
void keepLibraryLoaded(const char* name);
// Every library the process has loaded now stays loaded until it exits (see pinLoadedLibraries'
// caller in vulkan/context.cpp for why).
void pinLoadedLibraries();

// The system's Vulkan loader (libvulkan.so.1, vulkan-1.dll, libvulkan.dylib): opened into
// *library, its vkGetInstanceProcAddr returned. Throws Error(unsupported) naming the loader this
// system uses and how to get one.
LibraryFunction openVulkanLoader(void** library);

// ---- files --------------------------------------------------------------------------------------

// What a path names, found without opening it (symbolic links followed).
enum class FileType {
  missing,
  regular,
  directory,
  fifo,
  characterDevice,
  blockDevice,
  socket,
  other
};
FileType fileType(const std::string& path);
// "a FIFO", "a directory", ... for messages.
const char* describe(FileType type);

// A file mapped read-only: models, weights and inputs are read through it, never copied on the
// way in. Only a regular file is opened, and it is opened without blocking, so a FIFO or a device
// given as a model or an input is refused at once rather than waited on forever.
class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path`. Failures are Error(io) naming the file as `name` (e.g. "ONNX model 'a.onnx'"),
  // followed by `note` in parentheses where one is given:
  //   "cannot open NAME: no such file", "NAME is a directory, not a regular file",
  //   "NAME is not a regular file (a FIFO)", "cannot open NAME: <reason>", "cannot map NAME: ...".
  // `sequential`: the file is about to be read front to back once (the pages are asked for ahead).
  MappedFile(const std::string& path, const std::string& name, const std::string& note = {},
             bool sequential = false);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(data_), size_}; }
  size_t size() const { return size_; }

 private:
  void release();
  void* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
};

// The whole of `path` as a string, with MappedFile's checks and messages (for small files whose
// readers want their own copy).
std::string readFile(const std::string& path, const std::string& name,
                     const std::string& note = {});

// Empty when this process may read (or, with `write`, write) `path`; otherwise the system's reason.
std::string accessProblem(const std::string& path, bool write);

// ---- the process
// ---------------------------------------------------------------------------------

// The directory for per-user caches ($XDG_CACHE_HOME or ~/.cache; %LOCALAPPDATA% on Windows;
// ~/Library/Caches on macOS), or an empty string where the environment names none. vkcnn keeps its
// files in a "vkcnn" folder inside it.
std::string userCacheDirectory();
uint64_t processId();
// Whether `stream` (stdout, stderr) is a terminal that takes ANSI escapes ("\r\033[K").
bool isTerminal(std::FILE* stream);
// Sets (or, with nullptr, removes) an environment variable of this process.
void setEnvironment(const char* name, const char* value);
// Names the calling thread for debuggers and profilers (cut to what the system keeps: 15 bytes
// on Linux). Failures are ignored: a name is a courtesy.
void setThreadName(const char* name);

// ---- for the implementations (common.cpp) -------------------------------------------------------

// Throws MappedFile's Error(io) for a path that is not a regular file, or could not be opened or
// mapped (`reason`: the system's words, empty for `type` alone).
[[noreturn]] void throwFileError(FileType type, const std::string& name, const std::string& note,
                                 const std::string& action, const std::string& reason);

}  // namespace vkcnn::platform

// platform.h on Windows (built by CI with mingw-w64 and run under Wine: scripts/test-windows.sh).
// Written for MSVC as much as for MinGW: Win32 calls only, no POSIX layer of the C runtime.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// After windows.h: K32EnumProcessModules lives in kernel32 (no psapi.lib needed).
#ifndef PSAPI_VERSION
#define PSAPI_VERSION 2
#endif
#include <psapi.h>

#include <io.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "vkcnn/error.h"

namespace vkcnn::platform {

namespace {

constexpr const char* kVulkanLoader = "vulkan-1.dll";

std::wstring widen(const std::string& text) {
  if (text.empty()) return {};
  const int length = MultiByteToWideChar(CP_UTF8, 0, text.data(), int(text.size()), nullptr, 0);
  std::wstring wide(size_t(length > 0 ? length : 0), L'\0');
  if (length > 0)
    MultiByteToWideChar(CP_UTF8, 0, text.data(), int(text.size()), wide.data(), length);
  return wide;
}

std::string narrow(const wchar_t* text) {
  const int length = WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
  if (length <= 1) return {};
  std::string utf8(size_t(length), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8.data(), length, nullptr, nullptr);
  utf8.resize(size_t(length - 1));  // the terminating zero
  return utf8;
}

// The system's words for `error` (GetLastError), without the trailing line break.
std::string systemMessage(DWORD error) {
  char* buffer = nullptr;
  const DWORD length = FormatMessageA(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, error, 0, reinterpret_cast<char*>(&buffer), 0, nullptr);
  std::string message = length && buffer ? std::string(buffer, length) : std::string();
  if (buffer) LocalFree(buffer);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == ' ' || message.back() == '.'))
    message.pop_back();
  return message.empty() ? "error " + std::to_string(error) : message;
}

bool isMissing(DWORD error) {
  return error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND ||
         error == ERROR_INVALID_NAME || error == ERROR_BAD_NETPATH;
}

// Closes the handle on every path; a view outlives it.
struct Handle {
  HANDLE h = INVALID_HANDLE_VALUE;
  ~Handle() {
    if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
  }
};

}  // namespace

// ---- shared libraries ---------------------------------------------------------------------------

void* openLibrary(const char* name) {
  return static_cast<void*>(LoadLibraryW(widen(name).c_str()));
}

LibraryFunction findFunction(void* library, const char* name) {
  if (!library) return nullptr;
  // FARPROC to the generic function pointer type: the cast that -Wcast-function-type allows.
  return reinterpret_cast<LibraryFunction>(
      reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name)));
}

void closeLibrary(void* library) {
  if (library) FreeLibrary(static_cast<HMODULE>(library));
}

void keepLibraryLoaded(const char* name) {
  const std::wstring wide = widen(name);
  HMODULE module = nullptr;
  if (LoadLibraryW(wide.c_str()))
    GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN, wide.c_str(), &module);
}

// The hazard pinLoadedLibraries guards against was seen with Linux's glvnd; Windows pins too, so
// that drivers live as long on every system.
void pinLoadedLibraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<HMODULE> modules(256);
    DWORD needed = 0;
    for (;;) {
      if (!K32EnumProcessModules(GetCurrentProcess(), modules.data(),
                                 DWORD(modules.size() * sizeof(HMODULE)), &needed))
        return;
      if (needed <= modules.size() * sizeof(HMODULE)) break;
      modules.resize(needed / sizeof(HMODULE));
    }
    modules.resize(needed / sizeof(HMODULE));
    for (HMODULE m : modules) {
      HMODULE pinned = nullptr;
      GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                         reinterpret_cast<LPCWSTR>(m), &pinned);
    }
  });
}

LibraryFunction openVulkanLoader(void** library) {
  *library = openLibrary(kVulkanLoader);
  if (!*library)
    throw Error(ErrorCode::unsupported,
                std::string("Vulkan loader ") + kVulkanLoader +
                    " not found: install a GPU driver (drivers ship the loader) or the Vulkan "
                    "runtime");
  LibraryFunction gipa = findFunction(*library, "vkGetInstanceProcAddr");
  if (!gipa)
    throw Error(ErrorCode::unsupported,
                std::string(kVulkanLoader) + " has no vkGetInstanceProcAddr");
  return gipa;
}

// ---- files --------------------------------------------------------------------------------------

FileType fileType(const std::string& path) {
  WIN32_FILE_ATTRIBUTE_DATA data{};
  if (!GetFileAttributesExW(widen(path).c_str(), GetFileExInfoStandard, &data))
    return isMissing(GetLastError()) ? FileType::missing : FileType::other;
  if (data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) return FileType::directory;
  if (data.dwFileAttributes & FILE_ATTRIBUTE_DEVICE) return FileType::characterDevice;
  return FileType::regular;
}

MappedFile::MappedFile(const std::string& path, const std::string& name, const std::string& note,
                       bool sequential) {
  const std::wstring wide = widen(path);
  const FileType type = fileType(path);
  if (type != FileType::regular && type != FileType::other)
    throwFileError(type, name, note, {}, {});
  // Opening a pipe's client end never waits (a busy pipe fails at once); what was opened is
  // checked again: only a disk file is mapped.
  Handle file;
  file.h = CreateFileW(
      wide.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr, OPEN_EXISTING,
      FILE_ATTRIBUTE_NORMAL | (sequential ? FILE_FLAG_SEQUENTIAL_SCAN : 0), nullptr);
  if (file.h == INVALID_HANDLE_VALUE) {
    const DWORD error = GetLastError();
    if (isMissing(error)) throwFileError(FileType::missing, name, note, {}, {});
    throwFileError(FileType::regular, name, note, "open", systemMessage(error));
  }
  switch (GetFileType(file.h)) {
    case FILE_TYPE_DISK:
      break;
    case FILE_TYPE_PIPE:
      throwFileError(FileType::fifo, name, note, {}, {});
    case FILE_TYPE_CHAR:
      throwFileError(FileType::characterDevice, name, note, {}, {});
    default:
      throwFileError(FileType::other, name, note, {}, {});
  }
  LARGE_INTEGER size{};
  if (!GetFileSizeEx(file.h, &size))
    throwFileError(FileType::regular, name, note, "read the size of",
                   systemMessage(GetLastError()));
  if (size.QuadPart <= 0) return;
  if (uint64_t(size.QuadPart) > std::numeric_limits<size_t>::max())
    throwFileError(FileType::regular, name, note, "map", "larger than the address space");
  Handle mapping;
  mapping.h = CreateFileMappingW(file.h, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (!mapping.h)
    throwFileError(FileType::regular, name, note, "map", systemMessage(GetLastError()));
  void* data = MapViewOfFile(mapping.h, FILE_MAP_READ, 0, 0, 0);
  if (!data) throwFileError(FileType::regular, name, note, "map", systemMessage(GetLastError()));
  data_ = data;
  size_ = size_t(size.QuadPart);
}

void MappedFile::release() {
  if (data_) UnmapViewOfFile(data_);
  data_ = nullptr;
  size_ = 0;
}

std::string accessProblem(const std::string& path, bool write) {
  if (_waccess(widen(path).c_str(), write ? 2 : 4) == 0) return {};
  char reason[128];
  strerror_s(reason, sizeof reason, errno);
  return reason;
}

// ---- the process
// ---------------------------------------------------------------------------------

std::string userCacheDirectory() {
  const wchar_t* local = _wgetenv(L"LOCALAPPDATA");
  return local && *local ? narrow(local) : std::string();
}

uint64_t processId() {
  return uint64_t(GetCurrentProcessId());
}

bool isTerminal(std::FILE* stream) {
  if (!_isatty(_fileno(stream))) return false;
  // A console takes the escapes once asked to (Windows 10 on); an older one gets plain lines.
  HANDLE console = GetStdHandle(stream == stdout ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);
  DWORD mode = 0;
  return GetConsoleMode(console, &mode) &&
         SetConsoleMode(console, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
}

void setEnvironment(const char* name, const char* value) {
  // The C runtime's copy (what getenv reads) and the process's (what child processes inherit);
  // an empty value removes the variable.
  _putenv_s(name, value ? value : "");
  SetEnvironmentVariableA(name, value);
}

void setThreadName(const char* name) {
  // SetThreadDescription exists from Windows 10 1607 on: looked up, not linked.
  using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
  static const auto set = reinterpret_cast<SetDescription>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "SetThreadDescription")));
  if (set) set(GetCurrentThread(), widen(name).c_str());
}

}  // namespace vkcnn::platform

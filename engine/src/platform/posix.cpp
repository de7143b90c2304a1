// platform.h on POSIX systems: Linux (what CI runs), and what Android and macOS would need (never
// built here: the __APPLE__ and __ANDROID__ branches are written from their manuals).
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#else
#include <link.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "vkcnn/error.h"

namespace vkcnn::platform {

namespace {

#if defined(__APPLE__)
// MoltenVK's loader as the LunarG SDK installs it, then MoltenVK alone (an ICD that is its own
// loader, as apps bundle it).
constexpr std::initializer_list<const char*> kVulkanLoaders = {
    "libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib"};
constexpr const char* kVulkanLoaderHint =
    "install the Vulkan SDK (its loader and MoltenVK) or bundle libvulkan.1.dylib with the "
    "application";
#elif defined(__ANDROID__)
constexpr std::initializer_list<const char*> kVulkanLoaders = {"libvulkan.so"};
constexpr const char* kVulkanLoaderHint = "Vulkan needs Android 7.0 (API level 24) or newer";
#else
constexpr std::initializer_list<const char*> kVulkanLoaders = {"libvulkan.so.1", "libvulkan.so"};
constexpr const char* kVulkanLoaderHint = "install libvulkan1 (Debian) or a GPU driver";
#endif

}  // namespace

// ---- shared libraries ---------------------------------------------------------------------------

void* openLibrary(const char* name) {
  return ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

LibraryFunction findFunction(void* library, const char* name) {
  return library ? reinterpret_cast<LibraryFunction>(::dlsym(library, name)) : nullptr;
}

void closeLibrary(void* library) {
  if (library) ::dlclose(library);
}

void keepLibraryLoaded(const char* name) {
  ::dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}

void pinLoadedLibraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names;
#if defined(__APPLE__)
    for (uint32_t i = 0, n = _dyld_image_count(); i < n; ++i)
      if (const char* name = _dyld_get_image_name(i); name && name[0]) names.push_back(name);
#else
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* list) {
          if (info->dlpi_name && info->dlpi_name[0])
            static_cast<std::vector<std::string>*>(list)->push_back(info->dlpi_name);
          return 0;
        },
        &names);
#endif
    for (const std::string& name : names) ::dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  });
}

LibraryFunction openVulkanLoader(void** library) {
  const char* opened = nullptr;
  for (const char* name : kVulkanLoaders) {
    *library = openLibrary(name);
    if (*library) {
      opened = name;
      break;
    }
  }
  if (!*library)
    throw Error(ErrorCode::unsupported, std::string("Vulkan loader ") + *kVulkanLoaders.begin() +
                                            " not found: " + kVulkanLoaderHint);
  LibraryFunction gipa = findFunction(*library, "vkGetInstanceProcAddr");
  if (!gipa)
    throw Error(ErrorCode::unsupported, std::string(opened) + " has no vkGetInstanceProcAddr");
  return gipa;
}

// ---- files --------------------------------------------------------------------------------------

namespace {

FileType typeOf(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return FileType::regular;
  if (S_ISDIR(st.st_mode)) return FileType::directory;
  if (S_ISFIFO(st.st_mode)) return FileType::fifo;
  if (S_ISCHR(st.st_mode)) return FileType::characterDevice;
  if (S_ISBLK(st.st_mode)) return FileType::blockDevice;
  if (S_ISSOCK(st.st_mode)) return FileType::socket;
  return FileType::other;
}

// Closes the descriptor on every path; a mapping outlives it.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileType fileType(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT || errno == ENOTDIR ? FileType::missing : FileType::other;
  return typeOf(st);
}

MappedFile::MappedFile(const std::string& path, const std::string& name, const std::string& note,
                       bool sequential) {
  // Checked before opening, so that a device is never opened at all; and again on the descriptor,
  // which O_NONBLOCK keeps from waiting for a FIFO's writer, in case the path changed in between.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throwFileError(FileType::missing, name, note, {}, {});
    throwFileError(FileType::regular, name, note, "open", std::strerror(errno));
  }
  if (typeOf(st) != FileType::regular) throwFileError(typeOf(st), name, note, {}, {});
  Descriptor d;
  d.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (d.fd < 0) throwFileError(FileType::regular, name, note, "open", std::strerror(errno));
  if (::fstat(d.fd, &st) != 0)
    throwFileError(FileType::regular, name, note, "read the size of", std::strerror(errno));
  if (typeOf(st) != FileType::regular) throwFileError(typeOf(st), name, note, {}, {});
  if (st.st_size <= 0) return;
  if (uint64_t(st.st_size) > std::numeric_limits<size_t>::max())
    throwFileError(FileType::regular, name, note, "map", "larger than the address space");
  size_ = size_t(st.st_size);
  int flags = MAP_PRIVATE;
#if defined(MAP_POPULATE)
  // The page tables filled in one go rather than a fault per page as the file is decoded.
  if (sequential) flags |= MAP_POPULATE;
#endif
  void* data = ::mmap(nullptr, size_, PROT_READ, flags, d.fd, 0);
  if (data == MAP_FAILED) {
    size_ = 0;
    throwFileError(FileType::regular, name, note, "map",
                   std::strerror(errno) + (" (" + std::to_string(st.st_size) + " bytes)"));
  }
  data_ = data;
  if (sequential) ::madvise(data_, size_, MADV_WILLNEED);
}

void MappedFile::release() {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

std::string accessProblem(const std::string& path, bool write) {
  return ::access(path.c_str(), write ? W_OK : R_OK) == 0 ? std::string() : std::strerror(errno);
}

// ---- the process
// ---------------------------------------------------------------------------------

std::string userCacheDirectory() {
#if !defined(__APPLE__)
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return x;
#endif
  const char* home = std::getenv("HOME");
  if (!home || !*home) return {};
#if defined(__APPLE__)
  return std::string(home) + "/Library/Caches";
#else
  return std::string(home) + "/.cache";
#endif
}

uint64_t processId() {
  return uint64_t(::getpid());
}

bool isTerminal(std::FILE* stream) {
  return ::isatty(::fileno(stream)) != 0;
}

void setEnvironment(const char* name, const char* value) {
  if (value)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
}

void setThreadName(const char* name) {
#if defined(__APPLE__)
  pthread_setname_np(name);
#else
  char cut[16];
  std::strncpy(cut, name, sizeof cut - 1);
  cut[sizeof cut - 1] = 0;
  pthread_setname_np(pthread_self(), cut);
#endif
}

}  // namespace vkcnn::platform

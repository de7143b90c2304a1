// What every platform shares (platform.h): the words for what a path is, MappedFile's messages,
// and readFile on top of MappedFile.
#include "platform/platform.h"

#include "vkcnn/error.h"

namespace vkcnn::platform {

const char* describe(FileType type) {
  switch (type) {
    case FileType::missing:
      return "no such file";
    case FileType::regular:
      return "a regular file";
    case FileType::directory:
      return "a directory";
    case FileType::fifo:
      return "a FIFO";
    case FileType::characterDevice:
      return "a character device";
    case FileType::blockDevice:
      return "a block device";
    case FileType::socket:
      return "a socket";
    case FileType::other:
      break;
  }
  return "neither a file nor a directory";
}

void throwFileError(FileType type, const std::string& name, const std::string& note,
                    const std::string& action, const std::string& reason) {
  const std::string named = note.empty() ? name : name + " (" + note + ")";
  switch (type) {
    case FileType::missing:
      throw Error(ErrorCode::io, "cannot open " + named + ": no such file");
    case FileType::directory:
      throw Error(ErrorCode::io, named + " is a directory, not a regular file");
    case FileType::regular:
      throw Error(ErrorCode::io, "cannot " + action + " " + named + ": " + reason);
    default:
      throw Error(ErrorCode::io, named + " is not a regular file (" + describe(type) + ")");
  }
}

std::string readFile(const std::string& path, const std::string& name, const std::string& note) {
  const MappedFile file(path, name, note, true);
  if (!file.size()) return {};
  return std::string(reinterpret_cast<const char*>(file.bytes().data()), file.size());
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  release();
}

}  // namespace vkcnn::platform

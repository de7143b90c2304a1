// The library's version, as built (the headers an application compiled against may differ).
#include "vkcnn/version.h"

extern "C" uint32_t vkcnn_version(void) {
  return VKCNN_VERSION;
}
extern "C" const char* vkcnn_version_string(void) {
  return VKCNN_VERSION_STRING;
}

namespace vkcnn {

Version version() {
  return {VKCNN_VERSION_MAJOR, VKCNN_VERSION_MINOR, VKCNN_VERSION_PATCH};
}
const char* versionString() {
  return VKCNN_VERSION_STRING;
}

}  // namespace vkcnn

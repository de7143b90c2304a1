/* volk compiled into vkcnn with hidden visibility. vkcnn never calls volkInitialize or touches
 * volk's global function pointers: it loads per-device VolkDeviceTables through the loader
 * callback below, so the host application's own volk (or loader) use is never disturbed. */
#include <volk.c>

#include "vulkan/volk_table.h"

struct VkcnnDeviceLoader {
  PFN_vkGetDeviceProcAddr getDeviceProcAddr;
  VkDevice device;
};

static PFN_vkVoidFunction vkcnnLoadDeviceFunction(void* context, const char* name) {
  struct VkcnnDeviceLoader* loader = (struct VkcnnDeviceLoader*)context;
  return loader->getDeviceProcAddr(loader->device, name);
}

void vkcnnLoadDeviceTable(struct VolkDeviceTable* table, VkDevice device,
                          PFN_vkGetDeviceProcAddr getDeviceProcAddr) {
  struct VkcnnDeviceLoader loader = {getDeviceProcAddr, device};
  volkGenLoadDeviceTable(table, &loader, vkcnnLoadDeviceFunction);
}

#pragma once

#include <volk.h>

#ifdef __cplusplus
extern "C" {
#endif

// Fills `table` with `device`'s functions using volk's generated loader and no global state.
void vkcnnLoadDeviceTable(struct VolkDeviceTable* table, VkDevice device,
                          PFN_vkGetDeviceProcAddr getDeviceProcAddr);

#ifdef __cplusplus
}
#endif

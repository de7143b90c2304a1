// What the engine's choices need to know of a device, filled once when a Context starts
// (ContextImpl::queryCapabilities) and never changed: the subgroup size, the multiprocessors (with
// the one fallback where the device does not say), the cooperative-matrix extensions and the
// shapes they offer, shared memory, float16 arithmetic and the limits. Private: the public view is
// DeviceCapabilities (vkcnn/context.h). A plain struct of no Vulkan types, so that the
// convolution's choice (kernels/convolution_choice.h) is a host function of it, tested with
// synthetic facts (an H200-like device, lavapipe) without a GPU. `vkcnn info` prints it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn::detail {

struct ShaderModuleInfo;

// The cooperative-matrix extension a matrix shape comes from, or the matrix units run on.
enum class MatrixExtension { none, nv, khr };
VKCNN_API const char* toString(MatrixExtension extension);

// The component types vkcnn's shaders use; anything else is `other`.
enum class MatrixComponent { float16, float32, other };

// One shape a cooperative-matrix extension offers (VkCooperativeMatrixPropertiesNV today;
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR's on the KHR path), M x N x K with A (M x K),
// B (K x N), C and the result (M x N).
struct CooperativeMatrixShape {
  MatrixExtension extension = MatrixExtension::nv;
  uint32_t m = 0, n = 0, k = 0;
  MatrixComponent a = MatrixComponent::other, b = MatrixComponent::other,
                  c = MatrixComponent::other, result = MatrixComponent::other;
  bool subgroupScope = false;

  bool operator==(const CooperativeMatrixShape&) const = default;
};

struct DeviceFacts {
  // Where the device does not report its multiprocessors (VK_NV_shader_sm_builtins is NVIDIA's),
  // the choice's waves assume the H200's 132: the device its cost models were fitted on.
  static constexpr uint32_t kAssumedMultiprocessors = 132;

  std::string deviceName;
  // The profile every limit below is clamped to (vulkan/device_profile.h).
  DeviceProfile profile = DeviceProfile::native;
  uint32_t vendorId = 0;
  bool cpu = false;  // a CPU device (lavapipe)
  uint32_t subgroupSize = 0;
  // VK_NV_shader_sm_builtins' shaderSMCount; 0: not reported.
  uint32_t multiprocessorsReported = 0;
  // The extensions the device exposes, whether or not vkcnn enables them.
  bool cooperativeMatrixNV = false, cooperativeMatrixKHR = false;
  // The shapes of the exposed extensions vkcnn asked for (today VK_NV_cooperative_matrix's).
  std::vector<CooperativeMatrixShape> matrixShapes;
  // The extension vkcnn's matrix-unit kernels run on (enabled, with their shape, float16
  // arithmetic, 16-bit storage, the memory model and VKCNN_MATRIX_SHARED_MEMORY); none: the
  // portable kernels only (DeviceCapabilities::matrixUnits).
  MatrixExtension matrixUnits = MatrixExtension::none;
  uint32_t sharedMemoryBytes = 0;  // maxComputeSharedMemorySize (VKCNN_MAX_SHARED_MEMORY caps it)
  bool float16Arithmetic = false;  // shaderFloat16 enabled
  bool storage16Bit = false;       // storageBuffer16BitAccess enabled
  // Sampled and storage image arrays indexed per row (a batch's pieces in one dispatch).
  bool imageArrayNonUniformIndexing = false;
  uint32_t maxImageArrayLayers = 0;
  uint32_t maxImageDimension2D = 0;
  // Desktop values unless set (synthetic facts in tests); a Context fills them.
  uint32_t maxComputeWorkGroupInvocations = 1024;
  uint32_t maxStorageImages = 1u << 20;  // maxPerStageDescriptorStorageImages
  uint64_t maxStorageBufferRange = 1ull << 32;

  // The multiprocessors the choice sizes its waves by: the reported count, else the fallback.
  uint32_t multiprocessors() const {
    return multiprocessorsReported ? multiprocessorsReported : kAssumedMultiprocessors;
  }
  // The matrix-unit kernels' tiles count warps of 32 invocations (convolution_tiled.glsl,
  // winograd_matrix_gemm.comp, fully_connected_matrix.comp): they run where the subgroup is 32.
  bool warpsOf32() const { return subgroupSize == 32; }
  // Whether the matrix units run those tiled kernels here.
  bool matrixTiles() const { return matrixUnits != MatrixExtension::none && warpsOf32(); }
  // Whether `shape` is among matrixShapes.
  VKCNN_API bool hasMatrixShape(const CooperativeMatrixShape& shape) const;
};

// Whether `module` (its default specialization) fits the device: its shared memory, workgroup
// invocations and storage images within the limits. The choices ask it before they offer a
// shader; the pipeline registry refuses one that does not fit (PipelineRegistry::checkLimits).
VKCNN_API bool fitsDevice(const DeviceFacts& facts, const ShaderModuleInfo& module);

// The shape the matrix-unit kernels use: 16x16x16, float16 operands, float32 accumulators, of a
// subgroup.
VKCNN_API CooperativeMatrixShape convolutionMatrixShape(MatrixExtension extension);

// A Context's facts (its device started).
VKCNN_API const DeviceFacts& deviceFacts(const Context& context);
// The facts as "name: value" lines, for vkcnn info.
VKCNN_API std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& facts);

}  // namespace vkcnn::detail

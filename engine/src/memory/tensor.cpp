// Tensor and TemporaryTensor: shapes and views on the host, storage buffers on the device, host
// transfers through the Context's staging pool.
#include "vkcnn/error.h"
#include "vkcnn/tensor.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "memory/device_buffer.h"
#include "memory/half.h"
#include "memory/temporary_rules.h"
#include "memory/tensor_storage.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_profile.h"

namespace vkcnn {
namespace detail {

namespace {

constexpr VkBufferUsageFlags kTensorUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string shapeString(const std::vector<uint32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

TensorStorage::TensorStorage(std::shared_ptr<ContextImpl> ctx, uint64_t count, TensorDataType type,
                             std::string name, bool isTemporary)
    : context(std::move(ctx)),
      contextHandle(context),
      elements(count),
      dataType(type),
      label(std::move(name)),
      temporary(isTemporary) {
  if (label.empty()) label = context->uniqueName(temporary ? "temporary tensor" : "tensor");
  context->throwIfLost();
  if (dataType == TensorDataType::float16 && !context->capabilities().storage16Bit)
    throw Error(ErrorCode::unsupported,
                describe() +
                    ": float16 tensors need storageBuffer16BitAccess, which this device "
                    "lacks (use float32)");
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  // Whole 4-byte words, so a float16 tensor of odd length can still be filled and copied.
  info.size = alignUp(bytes(), 4);
  info.usage = kTensorUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  context->check(context->vk().vkCreateBuffer(context->device(), &info, nullptr, &buffer),
                 "vkCreateBuffer (tensor)");
  context->setName(VK_OBJECT_TYPE_BUFFER, buffer, label);
  if (temporary) return;  // memory from the pool when a kernel first writes it
  try {
    VkMemoryRequirements req;
    context->vk().vkGetBufferMemoryRequirements(context->device(), buffer, &req);
    allocation = context->allocator().allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                                               describe().c_str());
    context->check(context->vk().vkBindBufferMemory(context->device(), buffer, allocation.memory,
                                                    allocation.offset),
                   "vkBindBufferMemory (tensor)");
    // Zero-filled, as images are, so no kernel reads undefined memory.
    context->submitAndWait(
        [&](VkCommandBuffer cb) {
          transferPrologue(*context, cb);
          context->vk().vkCmdFillBuffer(cb, buffer, 0, VK_WHOLE_SIZE, 0);
          transferEpilogue(*context, cb);
        },
        "tensor initialisation");
  } catch (...) {
    // The destructor does not run for a constructor that throws.
    context->settleAfterLoss();
    context->vk().vkDestroyBuffer(context->device(), buffer, nullptr);
    context->allocator().free(allocation);
    throw;
  }
}

TensorStorage::~TensorStorage() {
  context->settleAfterLoss();
  if (temporary && bound && !released) {
    if (auto cb = owner.lock()) cb->temporaries.release(slot);
  }
  if (buffer) context->vk().vkDestroyBuffer(context->device(), buffer, nullptr);
  context->allocator().free(allocation);
}

std::string TensorStorage::describe() const {
  return (temporary ? "temporary tensor '" : "tensor '") + label + "' (" + toString(dataType) +
         ", " + std::to_string(elements) + " elements)";
}

bool TensorStorage::bindTemporary(CommandBufferImpl& cb) {
  if (bound) return false;
  ContextImpl& ctx = *cb.context;
  VkMemoryRequirements req;
  ctx.vk().vkGetBufferMemoryRequirements(ctx.device(), buffer, &req);
  // The pool holds images too: a buffer must not share a bufferImageGranularity page with one.
  VkPhysicalDeviceProperties properties;
  ctx.vki().vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &properties);
  const VkDeviceSize granularity =
      std::max<VkDeviceSize>(properties.limits.bufferImageGranularity, 1);
  req.alignment = std::max(req.alignment, granularity);
  req.size = alignUp(req.size, granularity);
  TemporaryPool::Slot s = cb.temporaries.allocate(req);
  VkResult result =
      ctx.vk().vkBindBufferMemory(ctx.device(), buffer, cb.temporaries.memory(s), s.offset);
  if (result != VK_SUCCESS) cb.temporaries.release(s);
  ctx.check(result, "vkBindBufferMemory (temporary tensor)");
  slot = s;
  bound = true;
  return slot.reused;
}

}  // namespace detail

using detail::TensorStorage;

const char* toString(TensorDataType type) {
  switch (type) {
    case TensorDataType::float16:
      return "float16";
    case TensorDataType::float32:
      return "float32";
  }
  return "unknown";
}

uint32_t bytesPerElement(TensorDataType type) {
  return type == TensorDataType::float16 ? 2 : 4;
}

namespace {

// Checks a descriptor's shape and returns its element count.
uint64_t checkedElementCount(const detail::ContextImpl& context, const TensorDescriptor& d,
                             const std::string& what) {
  if (d.dataType != TensorDataType::float16 && d.dataType != TensorDataType::float32)
    throw Error(ErrorCode::invalidArgument,
                what + ": data type " + std::to_string(int(d.dataType)) + " does not exist");
  if (d.shape.empty() || d.shape.size() > kMaxTensorRank)
    throw Error(ErrorCode::invalidArgument, what + ": rank " + std::to_string(d.shape.size()) +
                                                " is outside 1.." + std::to_string(kMaxTensorRank));
  uint64_t count = 1;
  for (size_t i = 0; i < d.shape.size(); ++i) {
    if (!d.shape[i])
      throw Error(ErrorCode::invalidArgument, what + ": axis " + std::to_string(i) + " of shape " +
                                                  detail::shapeString(d.shape) +
                                                  " is 0; every extent must be at least 1");
    count *= d.shape[i];  // at most 8 factors below 2^32 each step is checked below
    if (count > uint64_t(INT32_MAX))
      throw Error(ErrorCode::limitExceeded,
                  what + ": shape " + detail::shapeString(d.shape) +
                      " has more than 2^31 - 1 elements, more than the shaders address");
  }
  const DeviceCapabilities& caps = context.capabilities();
  const uint64_t bytes = count * bytesPerElement(d.dataType);
  if (bytes > caps.maxStorageBufferRange)
    throw Error(ErrorCode::limitExceeded,
                what + ": " + std::to_string(bytes) + " bytes exceed this device's " +
                    "maxStorageBufferRange of " + std::to_string(caps.maxStorageBufferRange) +
                    detail::profileNote(caps));
  return count;
}

std::vector<int64_t> rowMajorStrides(const std::vector<uint32_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

const TensorStorage& checked(const std::shared_ptr<TensorStorage>& s, const char* what) {
  if (!s) throw Error(ErrorCode::invalidArgument, std::string(what) + " on an empty Tensor handle");
  return *s;
}

}  // namespace

Tensor::Tensor(const Context& context, const TensorDescriptor& descriptor) {
  const std::string what = "tensor '" + descriptor.label + "'";
  const uint64_t count = checkedElementCount(*context.impl(), descriptor, what);
  storage_ = std::make_shared<TensorStorage>(context.impl(), count, descriptor.dataType,
                                             descriptor.label, false);
  shape_ = descriptor.shape;
  strides_ = rowMajorStrides(shape_);
}

Tensor::Tensor(std::shared_ptr<TensorStorage> storage, std::vector<uint32_t> shape,
               std::vector<int64_t> strides, uint64_t offset)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {}

uint32_t Tensor::dimension(int32_t axis) const {
  const int64_t r = rank();
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw Error(ErrorCode::invalidArgument,
                "dimension of " + checked(storage_, "dimension").describe() + ": axis " +
                    std::to_string(axis) + " is outside a rank-" + std::to_string(r) + " tensor");
  return shape_[size_t(a)];
}

uint64_t Tensor::elementCount() const {
  uint64_t n = 1;
  for (uint32_t d : shape_) n *= d;
  return shape_.empty() ? 0 : n;
}

TensorDataType Tensor::dataType() const {
  return checked(storage_, "dataType").dataType;
}

bool Tensor::isContiguous() const {
  return strides_ == rowMajorStrides(shape_);
}

const std::string& Tensor::label() const {
  return checked(storage_, "label").label;
}

void Tensor::setLabel(const std::string& label) {
  checked(storage_, "setLabel");
  storage_->label = label;
  storage_->context->setName(VK_OBJECT_TYPE_BUFFER, storage_->buffer, label);
}

bool Tensor::isTemporary() const {
  return storage_ && storage_->temporary;
}

size_t Tensor::resourceSize() const {
  const TensorStorage& s = checked(storage_, "resourceSize");
  return s.temporary ? size_t(s.slot ? s.slot.size : 0) : size_t(s.allocation.size);
}

const Context& Tensor::context() const {
  return checked(storage_, "context").contextHandle;
}

VkBuffer Tensor::vkBuffer() const {
  return checked(storage_, "vkBuffer").buffer;
}

Tensor Tensor::reshape(const std::vector<int64_t>& shape) const {
  const TensorStorage& s = checked(storage_, "reshape");
  const std::string what = "reshape of " + s.describe() + " " + detail::shapeString(shape_);
  if (!isContiguous())
    throw Error(
        ErrorCode::invalidArgument,
        what + ": the view is not contiguous; copy it into a new tensor first (TensorCopy)");
  if (shape.empty() || shape.size() > kMaxTensorRank)
    throw Error(ErrorCode::invalidArgument, what + ": rank " + std::to_string(shape.size()) +
                                                " is outside 1.." + std::to_string(kMaxTensorRank));
  const uint64_t count = elementCount();
  uint64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && inferred < 0) {
      inferred = int(i);
      continue;
    }
    if (shape[i] <= 0 || uint64_t(shape[i]) > count)
      throw Error(ErrorCode::invalidArgument,
                  what + ": extent " + std::to_string(shape[i]) + " of axis " + std::to_string(i) +
                      " is not positive, a second -1, or larger than the " + std::to_string(count) +
                      " elements");
    known *= uint64_t(shape[i]);
    if (known > count) break;
  }
  std::vector<uint32_t> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = shape[i] > 0 ? uint32_t(shape[i]) : 0;
  if (inferred >= 0 && known && count % known == 0) out[size_t(inferred)] = uint32_t(count / known);
  uint64_t total = 1;
  for (uint32_t d : out) total *= d;
  if (total != count)
    throw Error(ErrorCode::invalidArgument, what + ": the new shape holds " +
                                                std::to_string(total) + " elements, the tensor " +
                                                std::to_string(count));
  return Tensor(storage_, out, rowMajorStrides(out), offset_);
}

Tensor Tensor::permute(const std::vector<uint32_t>& perm) const {
  const TensorStorage& s = checked(storage_, "permute");
  std::vector<bool> seen(rank(), false);
  bool ok = perm.size() == rank();
  for (uint32_t p : perm) {
    ok = ok && p < rank() && !seen[p];
    if (p < rank()) seen[p] = true;
  }
  if (!ok) {
    std::string list;
    for (size_t i = 0; i < perm.size(); ++i) list += (i ? ", " : "") + std::to_string(perm[i]);
    throw Error(ErrorCode::invalidArgument, "permute of " + s.describe() + ": [" + list +
                                                "] is not a permutation of the " +
                                                std::to_string(rank()) + " axes");
  }
  std::vector<uint32_t> shape(rank());
  std::vector<int64_t> strides(rank());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = shape_[perm[i]];
    strides[i] = strides_[perm[i]];
  }
  return Tensor(storage_, shape, strides, offset_);
}

Tensor Tensor::slice(int32_t axis, int64_t start, int64_t end, int64_t step) const {
  const TensorStorage& s = checked(storage_, "slice");
  const int64_t r = rank();
  const int64_t a = axis < 0 ? axis + r : axis;
  const std::string what = "slice of " + s.describe() + " " + detail::shapeString(shape_);
  if (a < 0 || a >= r)
    throw Error(ErrorCode::invalidArgument,
                what + ": axis " + std::to_string(axis) + " is outside the tensor");
  if (step == 0) throw Error(ErrorCode::invalidArgument, what + ": step is 0");
  // ONNX Slice: negative indices count from the end; then clamp to [0, dim] (forwards) or
  // [-1, dim-1] (backwards).
  const int64_t dim = shape_[size_t(a)];
  auto resolve = [&](int64_t v) {
    if (v < 0) v = v < -dim ? (step > 0 ? 0 : -1) : v + dim;
    if (step > 0) return std::clamp<int64_t>(v, 0, dim);
    return std::clamp<int64_t>(v, -1, dim - 1);
  };
  const int64_t first = resolve(start), last = resolve(end);
  const int64_t count = step > 0 ? (last > first ? (last - first + step - 1) / step : 0)
                                 : (first > last ? (first - last - step - 1) / -step : 0);
  if (count <= 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": start " + std::to_string(start) + ", end " + std::to_string(end) +
                    ", step " + std::to_string(step) + " on axis " + std::to_string(axis) +
                    " select no element (empty tensors do not exist)");
  std::vector<uint32_t> shape = shape_;
  std::vector<int64_t> strides = strides_;
  shape[size_t(a)] = uint32_t(count);
  strides[size_t(a)] = strides_[size_t(a)] * step;
  const int64_t offset = int64_t(offset_) + first * strides_[size_t(a)];
  return Tensor(storage_, shape, strides, uint64_t(offset));
}

Tensor Tensor::broadcast(const std::vector<uint32_t>& shape) const {
  const TensorStorage& s = checked(storage_, "broadcast");
  const std::string what = "broadcast of " + s.describe() + " " + detail::shapeString(shape_) +
                           " to " + detail::shapeString(shape);
  if (shape.size() < rank() || shape.size() > kMaxTensorRank)
    throw Error(ErrorCode::invalidArgument, what + ": the rank must be from " +
                                                std::to_string(rank()) + " to " +
                                                std::to_string(kMaxTensorRank));
  const size_t lead = shape.size() - rank();
  std::vector<int64_t> strides(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i])
      throw Error(ErrorCode::invalidArgument, what + ": axis " + std::to_string(i) + " is 0");
    if (i < lead) continue;
    const uint32_t own = shape_[i - lead];
    if (own != shape[i] && own != 1)
      throw Error(ErrorCode::invalidArgument, what + ": axis " + std::to_string(i) + " of extent " +
                                                  std::to_string(own) + " cannot stretch to " +
                                                  std::to_string(shape[i]));
    strides[i] = own == 1 ? 0 : strides_[i - lead];
  }
  return Tensor(storage_, shape, strides, offset_);
}

bool Tensor::hasOverlap() const {
  // Views come from reshape, permute, slice and broadcast: only a zero stride makes elements
  // share storage.
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] > 1 && strides_[i] == 0) return true;
  return false;
}

namespace {

// Storage element index of every element of the view, in row-major order.
std::vector<uint64_t> storageIndices(const std::vector<uint32_t>& shape,
                                     const std::vector<int64_t>& strides, uint64_t offset) {
  uint64_t count = 1;
  for (uint32_t d : shape) count *= d;
  std::vector<uint64_t> out(count);
  std::vector<uint32_t> coord(shape.size(), 0);
  int64_t at = int64_t(offset);
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = uint64_t(at);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++coord[k] < shape[k]) {
        at += strides[k];
        break;
      }
      at -= strides[k] * int64_t(shape[k] - 1);
      coord[k] = 0;
    }
  }
  return out;
}

// Copies byteCount bytes of s's buffer from byteStart to the start of staging, for the host.
void downloadSpan(detail::ContextImpl& ctx, const TensorStorage& s, VkDeviceSize byteStart,
                  VkDeviceSize byteCount, detail::StagingBuffer& staging) {
  ctx.submitAndWait(
      [&](VkCommandBuffer cb) {
        detail::transferPrologue(ctx, cb);
        VkBufferCopy region{byteStart, 0, byteCount};
        ctx.vk().vkCmdCopyBuffer(cb, s.buffer, staging.buffer(), 1, &region);
        detail::transferEpilogue(ctx, cb);
      },
      "tensor download");
  staging.invalidate();
}

void checkHostAccess(const TensorStorage& s, const char* what) {
  if (s.temporary)
    throw Error(ErrorCode::misuse, std::string(what) + " " + s.describe() +
                                       ": the host cannot read or write a temporary tensor");
}

}  // namespace

void Tensor::writeFloats(std::span<const float> data) {
  const TensorStorage& s = checked(storage_, "writeFloats");
  checkHostAccess(s, "writeFloats to");
  if (hasOverlap())
    throw Error(ErrorCode::invalidArgument, "writeFloats to " + s.describe() +
                                                ": the view is a broadcast (elements share "
                                                "storage); write the tensor it came from");
  if (data.size() != elementCount())
    throw Error(ErrorCode::invalidArgument, "writeFloats to " + s.describe() + " " +
                                                detail::shapeString(shape_) + ": " +
                                                std::to_string(data.size()) + " floats given for " +
                                                std::to_string(elementCount()) + " elements");
  const std::vector<uint64_t> index = storageIndices(shape_, strides_, offset_);
  const auto [lo, hi] = std::minmax_element(index.begin(), index.end());
  const uint64_t first = *lo, span = *hi - *lo + 1;
  const uint32_t esize = bytesPerElement(s.dataType);
  // The bytes the view spans, whole 4-byte words (vkCmdCopyBuffer needs no alignment, but a
  // float16 neighbour in the same word must keep its value: read the span first if gaps exist).
  const VkDeviceSize byteStart = first * esize, byteCount = span * esize;
  std::vector<uint8_t> bytes(byteCount);
  detail::ContextImpl& ctx = *s.context;
  if (span != index.size()) {
    detail::StagingPool::Lease staging = ctx.staging().acquire(byteCount, s.label.c_str());
    downloadSpan(ctx, s, byteStart, byteCount, *staging);
    std::memcpy(bytes.data(), staging->data(), byteCount);
  }
  for (size_t i = 0; i < index.size(); ++i) {
    uint8_t* at = bytes.data() + (index[i] - first) * esize;
    if (s.dataType == TensorDataType::float16) {
      const uint16_t h = detail::floatToHalf(data[i]);
      std::memcpy(at, &h, 2);
    } else {
      std::memcpy(at, &data[i], 4);
    }
  }
  detail::StagingPool::Lease staging = ctx.staging().acquire(byteCount, s.label.c_str());
  std::memcpy(staging->data(), bytes.data(), byteCount);
  staging->flush();
  ctx.submitAndWait(
      [&](VkCommandBuffer cb) {
        detail::transferPrologue(ctx, cb);
        VkBufferCopy region{0, byteStart, byteCount};
        ctx.vk().vkCmdCopyBuffer(cb, staging->buffer(), s.buffer, 1, &region);
        detail::transferEpilogue(ctx, cb);
      },
      "tensor upload");
}

std::vector<float> Tensor::readFloats() const {
  const TensorStorage& s = checked(storage_, "readFloats");
  checkHostAccess(s, "readFloats from");
  const std::vector<uint64_t> index = storageIndices(shape_, strides_, offset_);
  const auto [lo, hi] = std::minmax_element(index.begin(), index.end());
  const uint64_t first = *lo, span = *hi - *lo + 1;
  const uint32_t esize = bytesPerElement(s.dataType);
  const VkDeviceSize byteStart = first * esize, byteCount = span * esize;
  detail::ContextImpl& ctx = *s.context;
  detail::StagingPool::Lease staging = ctx.staging().acquire(byteCount, s.label.c_str());
  downloadSpan(ctx, s, byteStart, byteCount, *staging);
  const uint8_t* bytes = static_cast<const uint8_t*>(staging->data());
  std::vector<float> out(index.size());
  for (size_t i = 0; i < index.size(); ++i) {
    const uint8_t* at = bytes + (index[i] - first) * esize;
    if (s.dataType == TensorDataType::float16) {
      uint16_t h;
      std::memcpy(&h, at, 2);
      out[i] = detail::halfToFloat(h);
    } else {
      std::memcpy(&out[i], at, 4);
    }
  }
  return out;
}

// ---- TemporaryTensor --------------------------------------------------------------------------

TemporaryTensor::TemporaryTensor(const CommandBuffer& commandBuffer, const TensorDescriptor& d) {
  auto cb = commandBuffer.impl();
  const std::string what = "temporary tensor '" + d.label + "'";
  cb->requireEncoding("creating " + what);
  const uint64_t count = checkedElementCount(*cb->context, d, what);
  storage_ = std::make_shared<TensorStorage>(cb->context, count, d.dataType, d.label, true);
  storage_->owner = cb;
  shape_ = d.shape;
  strides_ = rowMajorStrides(shape_);
  cb->keepAlive(storage_);
}

TemporaryTensor::TemporaryTensor(const Tensor& tensor) : Tensor(tensor) {
  if (!tensor.isTemporary())
    throw Error(ErrorCode::invalidArgument,
                "TemporaryTensor(Tensor): '" +
                    (tensor.valid() ? tensor.label() : std::string("empty")) +
                    "' is not a temporary tensor");
}

uint32_t TemporaryTensor::readCount() const {
  return detail::temporaryReadCount(*storage_);
}

void TemporaryTensor::setReadCount(uint32_t readCount) {
  detail::setTemporaryReadCount(*storage_, readCount);
}

void TemporaryTensor::decrementReadCount() {
  detail::decrementTemporaryReadCount(*storage_);
}

}  // namespace vkcnn

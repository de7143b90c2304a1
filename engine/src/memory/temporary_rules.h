// The rules of a temporary's storage (ImageStorage, TensorStorage), one for TemporaryImage and
// TemporaryTensor: at readCount zero the memory goes back to its command buffer's pool at once, so
// the next temporary can alias it, and any later change of the count is misuse; a kernel may use
// a temporary only in the command buffer that made it, while its readCount is above zero, and read
// it only after something wrote it.
#pragma once

#include <cstdint>
#include <string>

#include "vkcnn/error.h"
#include "vulkan/command_buffer_impl.h"

namespace vkcnn::detail {

template <class Storage>
uint32_t temporaryReadCount(const Storage& storage) {
  return storage.released ? 0 : storage.readCount;
}

template <class Storage>
void setTemporaryReadCount(Storage& storage, uint32_t readCount) {
  if (storage.released)
    throw Error(ErrorCode::misuse, storage.describe() +
                                       ": setReadCount after readCount reached 0 and its memory "
                                       "went back to the pool");
  storage.readCount = readCount;
  if (readCount == 0) {
    storage.released = true;
    if (auto cb = storage.owner.lock()) cb->temporaries.release(storage.slot);
  }
}

template <class Storage>
void decrementTemporaryReadCount(Storage& storage) {
  if (storage.released)
    throw Error(ErrorCode::misuse, storage.describe() + ": readCount is already 0");
  setTemporaryReadCount(storage, storage.readCount - 1);
}

// For kernels encoding `storage` into `cb`; `what` names the kernel and operand in the error.
template <class Storage>
void requireUsableTemporary(const Storage& storage, const CommandBufferImpl& cb,
                            const std::string& what, bool write) {
  if (!storage.temporary) return;
  auto owner = storage.owner.lock();
  if (owner.get() != &cb)
    throw Error(ErrorCode::misuse, what + ": " + storage.describe() +
                                       " belongs to another command buffer than '" + cb.label +
                                       "' (temporaries are valid only in the one that made them)");
  if (storage.released)
    throw Error(ErrorCode::misuse, what + ": " + storage.describe() +
                                       " has readCount 0; its memory already went back to the "
                                       "pool (raise readCount to read it more often)");
  if (!write && !storage.written)
    throw Error(ErrorCode::misuse,
                what + ": " + storage.describe() + " is read before any kernel wrote it");
}

}  // namespace vkcnn::detail

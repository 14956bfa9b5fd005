//===- attnrt.hpp - A thin C++ layer over libattnrt -------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Owning handles and a status with its message over the C API of attnrt.h.
// Header-only: it adds nothing to the library's ABI.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_ATTNRT_HPP
#define ATTN_RUNTIME_ATTNRT_HPP

#include "attn/Runtime/attnrt.h"

#include <initializer_list>
#include <string>
#include <utility>

namespace attnrt {

/// The outcome of a call: a status code and, on failure, its message.
struct Status {
  attnrtStatus code = ATTNRT_SUCCESS;
  std::string message;

  bool ok() const { return code == ATTNRT_SUCCESS; }

  /// The status of a C call that just returned CODE on this thread.
  static Status of(attnrtStatus code) {
    return code == ATTNRT_SUCCESS
               ? Status()
               : Status{code, attnrtLastErrorMessage()};
  }
  static Status failure(attnrtStatus code, std::string message) {
    return Status{code, std::move(message)};
  }
};

/// Owns a handle of the C API and destroys it with DESTROY.
template <typename Handle, void (*Destroy)(Handle)> class Owned {
public:
  Owned() = default;
  explicit Owned(Handle handle) : handle(handle) {}
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  Owned(Owned &&other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  Owned &operator=(Owned &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  ~Owned() {
    if (handle)
      Destroy(handle);
  }
  Handle get() const { return handle; }
  Handle *out() { return &handle; }

private:
  Handle handle = nullptr;
};

using Context = Owned<attnrtContext, attnrtContextDestroy>;
using Bundle = Owned<attnrtBundle, attnrtBundleDestroy>;
using Timer = Owned<attnrtTimer, attnrtTimerDestroy>;

/// Device memory owned for its lifetime.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : context(other.context), pointer(std::exchange(other.pointer, 0)),
        bytes(other.bytes) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(context, other.context);
    std::swap(pointer, other.pointer);
    std::swap(bytes, other.bytes);
    return *this;
  }
  ~DeviceBuffer() {
    if (pointer)
      attnrtFree(context, pointer);
  }

  Status allocate(attnrtContext owner, size_t size) {
    *this = DeviceBuffer();
    context = owner;
    bytes = size;
    return Status::of(attnrtMalloc(owner, size, &pointer));
  }
  attnrtDevicePtr data() const { return pointer; }
  size_t size() const { return bytes; }

private:
  attnrtContext context = nullptr;
  attnrtDevicePtr pointer = 0;
  size_t bytes = 0;
};

/// A row-major tensor of SIZES[0..RANK) at DATA.
inline attnrtTensor contiguousTensor(attnrtDevicePtr data, attnrtDType dtype,
                                     const int64_t *sizes, int32_t rank) {
  attnrtTensor tensor = {};
  tensor.data = data;
  tensor.dtype = dtype;
  tensor.rank = rank;
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    tensor.sizes[d] = sizes[d];
    tensor.strides[d] = stride;
    stride *= sizes[d];
  }
  return tensor;
}

inline attnrtTensor contiguousTensor(attnrtDevicePtr data, attnrtDType dtype,
                                     std::initializer_list<int64_t> sizes) {
  return contiguousTensor(data, dtype, sizes.begin(),
                          static_cast<int32_t>(sizes.size()));
}

} // namespace attnrt

#endif // ATTN_RUNTIME_ATTNRT_HPP

//===- SizeLimits.h - Checked sizes of user-given tensors -------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Every element count and byte size computed from user input (static dims,
// tool options, .npy headers, manifests) goes through these checked products
// before anything is allocated or compiled, so that an overflow or a size no
// machine can hold is an error naming the value, not a crash or a wrapped
// size. Header-only and free of LLVM, for libattnrt too.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_SIZELIMITS_H
#define ATTN_SUPPORT_SIZELIMITS_H

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// The most bytes one tensor may hold: 2^48 (256 TiB). No machine addresses
/// more: x86-64 gives a process 2^47 bytes (2^56 with five-level paging, on
/// no machine with that much memory), NVIDIA GPUs 2^49 of virtual addresses
/// for all allocations together.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// The most of anything counted across a machine or an attribute: SMs,
/// splits, CTAs, ranks, bytes of shared memory, registers, the sides of a
/// block mask's blocks. CUDA's grid dimension and an MPI communicator's size
/// are ints, and every product the schedules form from two such counts stays
/// far from overflowing int64.
constexpr int64_t kMaxCount = INT32_MAX;

/// x * y, or std::nullopt when it overflows int64.
inline std::optional<int64_t> checkedMul(int64_t x, int64_t y) {
  int64_t product;
  if (__builtin_mul_overflow(x, y, &product))
    return std::nullopt;
  return product;
}

/// x + y, or std::nullopt when it overflows int64.
inline std::optional<int64_t> checkedAdd(int64_t x, int64_t y) {
  int64_t sum;
  if (__builtin_add_overflow(x, y, &sum))
    return std::nullopt;
  return sum;
}

/// The product of non-negative `sizes` (any range of integers), or
/// std::nullopt when it overflows int64.
template <typename Range>
std::optional<int64_t> checkedProduct(const Range &sizes) {
  std::optional<int64_t> product = 1;
  for (auto size : sizes)
    if (!(product = checkedMul(*product, static_cast<int64_t>(size))))
      return std::nullopt;
  return product;
}

/// The bytes of a tensor of `sizes` with `elementBytes`-byte elements, or
/// std::nullopt when that is more than kMaxTensorBytes (or overflows).
template <typename Range>
std::optional<int64_t> checkedTensorBytes(const Range &sizes,
                                          int64_t elementBytes) {
  std::optional<int64_t> elements = checkedProduct(sizes);
  std::optional<int64_t> bytes =
      elements ? checkedMul(*elements, elementBytes) : std::nullopt;
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

/// The bytes a strided tensor reaches from its first element, 1 + the sum of
/// (size - 1) x stride elements of `elementBytes`, or std::nullopt when that
/// is more than kMaxTensorBytes (or overflows), or when a size is: a
/// broadcast dimension (stride 0) reaches no bytes but is still iterated
/// over. A negative size or stride (one known only at run time) adds
/// nothing.
inline std::optional<int64_t> checkedStridedBytes(const int64_t *sizes,
                                                  const int64_t *strides,
                                                  int rank,
                                                  int64_t elementBytes) {
  std::optional<int64_t> span = 1;
  for (int i = 0; i < rank && span; ++i) {
    if (sizes[i] > kMaxTensorBytes)
      return std::nullopt;
    if (sizes[i] < 0 || strides[i] < 0)
      continue;
    std::optional<int64_t> reach = checkedMul(sizes[i] - 1, strides[i]);
    span = reach ? checkedAdd(*span, *reach) : std::nullopt;
  }
  std::optional<int64_t> bytes =
      span ? checkedMul(*span, elementBytes) : std::nullopt;
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

} // namespace mlir::attn

#endif // ATTN_SUPPORT_SIZELIMITS_H

//===- HostReference.h - The GPU check's reference on the host --*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// ReferenceRow.h compiled for the host: the kernel check's seeded inputs and
// reference attention where running the GPU reference kernels costs more
// than computing them here (the PTX emulator; CheckOptions::reference).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_GPUCHECK_HOSTREFERENCE_H
#define ATTN_LIB_GPUCHECK_HOSTREFERENCE_H

#include "ReferenceRow.h"

namespace attn::gpucheck {

/// COUNT elements of format DTYPE (f16, bf16 or f32) into OUT: the values
/// attn_fill_normal_<t> writes for SEED, to rounding of the functions it
/// calls.
void fillNormalOnHost(int32_t dtype, void *out, uint64_t count,
                      uint64_t seed);

/// Every query row of attn_reference_<t>'s attention of P into OUT
/// ([rows, valueDim]) and LSE ([rows]); the operands as the kernel takes
/// them.
void referenceOnHost(int32_t dtype, const void *query, const void *key,
                     const void *value, const int32_t *keyLengths,
                     const void *mask, const uint8_t *blockMask,
                     const reference::Problem &p, float *out, float *lse);

} // namespace attn::gpucheck

#endif // ATTN_LIB_GPUCHECK_HOSTREFERENCE_H

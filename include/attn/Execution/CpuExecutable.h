//===- CpuExecutable.h - Compile and run one attention on the CPU -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Wraps one attn.attention in a C-callable entry function over memrefs,
// lowers it with attn-to-cpu, JIT-compiles it with MLIR's ExecutionEngine and
// runs it on host buffers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_CPUEXECUTABLE_H
#define ATTN_EXECUTION_CPUEXECUTABLE_H

#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace attn {

/// A dense, row-major host buffer for one operand of the entry function.
struct HostBuffer {
  std::vector<int64_t> shape;
  /// Bytes per element as the compiled code stores it (i1 takes one byte).
  int64_t elementBytes = 4;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
};

/// A caller's dense, row-major buffer for one operand, used in place.
struct BufferView {
  llvm::ArrayRef<int64_t> shape;
  /// Bytes per element as the compiled code stores it (i1 takes one byte).
  int64_t elementBytes = 4;
  void *data = nullptr;
};

class CpuExecutable {
public:
  ~CpuExecutable();

  /// Compiles `op`, an attn.attention or attn.attention_grad (which is not
  /// modified), down to machine code. Its operands become the entry
  /// function's arguments in order: for an attention Q, K, V, [mask], O,
  /// [LSE]; for a distributed attention (#attn.attention2d, #attn.ring) the
  /// entry is one rank's program and takes that rank's shards of them (see
  /// attn-distribute).
  static llvm::Expected<std::unique_ptr<CpuExecutable>>
  compile(Operation *op, const AttnToCPUOptions &options);

  /// Runs the compiled attention. `buffers` follow the operand order of the
  /// op; O and LSE are written in place. Shapes and element sizes must match
  /// the op's types (any size where a type's is dynamic: the caller keeps
  /// the run-time sizes of all operands consistent).
  llvm::Error run(std::vector<HostBuffer *> buffers);

  /// The same on buffers the caller owns, which must hold their shapes
  /// (nothing is copied).
  llvm::Error run(llvm::ArrayRef<BufferView> buffers);

  /// The types of the entry function's arguments, in order (shards for a
  /// distributed attention).
  ArrayRef<RankedTensorType> getArgumentTypes() const { return argumentTypes; }

private:
  CpuExecutable() = default;

  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> engine;
  /// The entry function's packed interface: one pointer per argument.
  void (*entry)(void **) = nullptr;
  std::vector<RankedTensorType> argumentTypes;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_CPUEXECUTABLE_H

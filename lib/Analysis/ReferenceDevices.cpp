//===- ReferenceDevices.cpp - The GPU a chip stands for -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/ReferenceDevices.h"
#include "attn/Analysis/Fa2Resources.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

struct TableRow {
  int64_t computeCapability;
  ReferenceDevice device;
};

// The CUDA C++ Programming Guide's limits per compute capability (shared
// memory per SM; a block may opt in to all of it but the 1 KiB the hardware
// reserves per CTA) and each device's SM count; the data-centre part where
// a chip has one.
constexpr int64_t kKiB = 1024;
constexpr ReferenceDevice device(llvm::StringRef name, int64_t sms,
                                 int64_t smemPerSmKiB) {
  return {name, sms, smemPerSmKiB * kKiB - kReservedSharedBytesPerCta,
          smemPerSmKiB * kKiB};
}
const TableRow kTable[] = {
    {80, device("A100 SXM", 108, 164)},       {86, device("A10", 72, 100)},
    {87, device("Jetson AGX Orin", 16, 164)}, {89, device("L40S", 142, 100)},
    {90, device("H100 SXM", 132, 228)},       {100, device("B200", 148, 228)},
    {120, device("RTX 5090", 170, 100)},
};

} // namespace

std::optional<ReferenceDevice>
mlir::attn::referenceDeviceOf(llvm::StringRef chip) {
  int64_t capability = computeCapabilityOf(chip);
  const TableRow *row = llvm::find_if(kTable, [&](const TableRow &row) {
    return row.computeCapability == capability;
  });
  if (row == std::end(kTable))
    return std::nullopt;
  return row->device;
}

TargetAttr mlir::attn::referenceTargetOf(MLIRContext *context,
                                         llvm::StringRef chip) {
  std::optional<ReferenceDevice> device = referenceDeviceOf(chip);
  if (!device)
    return {};
  return TargetAttr::get(context, chip, device->sms, device->smemPerBlock,
                         device->smemPerSm, kRegistersPerSm,
                         kMaxRegistersPerThread);
}

std::string mlir::attn::referenceDeviceList() {
  std::string list;
  for (const TableRow &row : kTable) {
    if (!list.empty())
      list += ", ";
    list += "sm_" + std::to_string(row.computeCapability) + " (" +
            row.device.name.str() + ")";
  }
  return list;
}

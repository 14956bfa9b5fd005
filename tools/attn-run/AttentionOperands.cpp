//===- AttentionOperands.cpp - Host data for one attention ----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "AttentionOperands.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/GpuCheck/GpuCheck.h"
#include "attn/Support/HalfFloat.h"
#include "attn/Support/Npy.h"
#include "attn/Support/SizeLimits.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Checks, before anything is allocated, that the host memory attn-run needs
/// for `op` fits in this machine: every operand in its own format, plus the
/// float64 copy of each that generating inputs and the reference check work
/// on. The verifier already bounds each operand (2^48 bytes); this bounds
/// the run by what the machine has, so a huge but valid size is an error
/// naming the sizes instead of an out-of-memory abort.
llvm::Error checkHostMemory(AttentionOp op) {
  std::optional<int64_t> total = 0;
  for (Value operand : op->getOperands()) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t elementBytes =
        llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
    std::optional<int64_t> bytes =
        checkedTensorBytes(type.getShape(), elementBytes + sizeof(double));
    total = bytes && total ? checkedAdd(*total, *bytes) : std::nullopt;
  }
  uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                      static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  if (total && static_cast<uint64_t>(*total) <= physical)
    return llvm::Error::success();
  std::string need =
      total ? llvm::formatv("{0:F1} GiB", *total / 1073741824.0).str()
            : std::string("more than 2^48 bytes");
  return llvm::createStringError(llvm::formatv(
      "the operands and their float64 copies for the check need {0}; this "
      "machine has {1:F1} GiB of memory",
      need, physical / 1073741824.0));
}

FailureOr<ElementFormat> formatOf(Type type) {
  if (type.isF16())
    return ElementFormat::F16;
  if (type.isBF16())
    return ElementFormat::BF16;
  if (type.isF32())
    return ElementFormat::F32;
  if (type.isInteger(1))
    return ElementFormat::I1;
  if (type.isInteger(8))
    return ElementFormat::I8;
  if (type.isInteger(32))
    return ElementFormat::I32;
  return failure();
}

int64_t bytesOf(ElementFormat format) {
  switch (format) {
  case ElementFormat::F16:
  case ElementFormat::BF16:
    return 2;
  case ElementFormat::F32:
  case ElementFormat::I32:
    return 4;
  case ElementFormat::I1:
  case ElementFormat::I8:
    return 1;
  }
  llvm_unreachable("unknown ElementFormat");
}

NpyElementType npyTypeOf(ElementFormat format) {
  switch (format) {
  case ElementFormat::F16:
    return NpyElementType::F16;
  case ElementFormat::BF16:
    return NpyElementType::BF16;
  case ElementFormat::F32:
    return NpyElementType::F32;
  case ElementFormat::I1:
    return NpyElementType::Bool;
  case ElementFormat::I8:
    return NpyElementType::I8;
  case ElementFormat::I32:
    return NpyElementType::I32;
  }
  llvm_unreachable("unknown ElementFormat");
}

HalfFormat halfFormatOf(ElementFormat format) {
  return format == ElementFormat::F16 ? HalfFormat::F16 : HalfFormat::BF16;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  return text + "]";
}

/// Stores `value` as element `index` of `buffer` and returns what it reads
/// back as.
double store(HostBuffer &buffer, ElementFormat format, int64_t index,
             double value) {
  uint8_t *p = buffer.bytes.data() + index * buffer.elementBytes;
  using namespace llvm::support::endian;
  switch (format) {
  case ElementFormat::F16:
  case ElementFormat::BF16: {
    uint16_t bits =
        floatToHalfBits(static_cast<float>(value), halfFormatOf(format));
    write16le(p, bits);
    return halfBitsToFloat(bits, halfFormatOf(format));
  }
  case ElementFormat::F32: {
    float single = static_cast<float>(value);
    write32le(p, llvm::bit_cast<uint32_t>(single));
    return single;
  }
  case ElementFormat::I1:
    *p = value != 0;
    return *p;
  case ElementFormat::I8:
    *p = static_cast<uint8_t>(static_cast<int8_t>(value));
    return static_cast<int8_t>(*p);
  case ElementFormat::I32:
    write32le(p, static_cast<uint32_t>(static_cast<int32_t>(value)));
    return static_cast<int32_t>(read32le(p));
  }
  llvm_unreachable("unknown ElementFormat");
}

double load(const HostBuffer &buffer, ElementFormat format, int64_t index) {
  const uint8_t *p = buffer.bytes.data() + index * buffer.elementBytes;
  using namespace llvm::support::endian;
  switch (format) {
  case ElementFormat::F16:
  case ElementFormat::BF16:
    return halfBitsToFloat(read16le(p), halfFormatOf(format));
  case ElementFormat::F32:
    return llvm::bit_cast<float>(read32le(p));
  case ElementFormat::I1:
    return *p;
  case ElementFormat::I8:
    return static_cast<int8_t>(*p);
  case ElementFormat::I32:
    return static_cast<int32_t>(read32le(p));
  }
  llvm_unreachable("unknown ElementFormat");
}

/// Standard normal values: every element nonzero in practice, of both signs.
std::vector<double> normalValues(int64_t count, std::mt19937_64 &rng) {
  std::normal_distribution<double> normal;
  std::vector<double> values(count);
  for (double &value : values)
    value = normal(rng);
  return values;
}

/// A mask that keeps most keys and hides every key of one query row in the
/// middle (when there is more than one row), so that the fully masked path
/// runs in every masked check without emptying decode-sized problems.
std::vector<double> maskValues(ArrayRef<int64_t> shape, bool boolean,
                               std::mt19937_64 &rng) {
  std::bernoulli_distribution hidden(boolean ? 0.2 : 0.1);
  std::normal_distribution<double> normal;
  constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
  int64_t rows = shape[2], keys = shape[3];
  std::vector<double> values(shape[0] * shape[1] * rows * keys);
  for (int64_t index = 0, e = values.size(); index < e; ++index) {
    bool hide = hidden(rng) || (rows > 1 && (index / keys) % rows == rows / 2);
    if (boolean)
      values[index] = hide ? 0.0 : 1.0;
    else
      values[index] = hide ? kMinusInf : normal(rng);
  }
  return values;
}

/// An operand of `shape` and `format`, its elements zero.
Operand allocate(std::string name, ElementFormat format,
                 ArrayRef<int64_t> shape) {
  Operand operand;
  operand.name = std::move(name);
  operand.format = format;
  operand.buffer.shape.assign(shape.begin(), shape.end());
  operand.buffer.elementBytes = bytesOf(format);
  operand.buffer.bytes.resize(operand.buffer.numElements() *
                              operand.buffer.elementBytes);
  return operand;
}

} // namespace

llvm::Expected<Operand> Operand::ofType(std::string name,
                                        RankedTensorType type) {
  FailureOr<ElementFormat> format = formatOf(type.getElementType());
  if (!type.hasStaticShape() || failed(format))
    return llvm::createStringError(
        llvm::formatv("{0} has a dynamic shape or an unsupported element "
                      "type: {1}",
                      name, type)
            .str());
  return allocate(std::move(name), *format, type.getShape());
}

void Operand::randomize(uint64_t seed) {
  std::mt19937_64 rng(seed);
  assign(normalValues(buffer.numElements(), rng));
}

void Operand::poison() {
  for (int64_t index = 0, e = buffer.numElements(); index < e; ++index)
    store(buffer, format, index, std::numeric_limits<double>::quiet_NaN());
}

std::vector<double> Operand::decode() const {
  std::vector<double> decoded(buffer.numElements());
  for (int64_t index = 0, e = decoded.size(); index < e; ++index)
    decoded[index] = load(buffer, format, index);
  return decoded;
}

void Operand::assign(std::vector<double> newValues) {
  assert(static_cast<int64_t>(newValues.size()) == buffer.numElements() &&
         "values do not match the operand");
  for (int64_t index = 0, e = newValues.size(); index < e; ++index)
    newValues[index] = store(buffer, format, index, newValues[index]);
  values = std::move(newValues);
}

llvm::Expected<AttentionOperands> AttentionOperands::create(AttentionOp op,
                                                            uint64_t seed) {
  AttentionOperands result;
  result.hasMask = static_cast<bool>(op.getMask());
  result.hasBlockMask = static_cast<bool>(op.getBlockMask());
  result.constantBlockMask =
      result.hasBlockMask && matchPattern(op.getBlockMask(), m_Constant());
  result.hasKeyLengths = op.hasKeyLengths();
  result.hasLse = static_cast<bool>(op.getInitLse());
  SmallVector<std::string> names{"Q", "K", "V"};
  if (result.hasMask)
    names.push_back("mask");
  if (result.hasBlockMask)
    names.push_back("block mask");
  if (result.hasKeyLengths)
    names.push_back("key lengths");
  names.push_back("O");
  if (result.hasLse)
    names.push_back("LSE");

  // (A dynamic shape is reported below, operand by operand.)
  if (llvm::all_of(op->getOperandTypes(), [](Type type) {
        return cast<RankedTensorType>(type).hasStaticShape();
      }))
    if (llvm::Error err = checkHostMemory(op))
      return std::move(err);

  std::mt19937_64 rng(seed);
  unsigned numInputs = op->getNumOperands() - op.getOutputs().size();
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (!type.hasStaticShape())
      return llvm::createStringError(
          llvm::formatv("{0} has a dynamic shape; attn-run needs static sizes",
                        names[index])
              .str());
    FailureOr<ElementFormat> format = formatOf(type.getElementType());
    if (failed(format))
      return llvm::createStringError(names[index] +
                                     " has an unsupported element type");
    Operand &entry = result.operands.emplace_back(
        allocate(names[index], *format, type.getShape()));
    if (index >= numInputs)
      continue;
    // A constant of the module keeps its values (the GPU kernel bakes a
    // constant block mask in, the CPU lowering reads it as it is).
    DenseElementsAttr constant;
    if (matchPattern(operand, m_Constant(&constant))) {
      std::vector<double> values;
      if (isa<FloatType>(constant.getElementType())) {
        for (const APFloat &v : constant.getValues<APFloat>())
          values.push_back(v.convertToDouble());
      } else {
        bool boolean = constant.getElementType().isInteger(1);
        for (const APInt &v : constant.getValues<APInt>())
          values.push_back(boolean ? v.getBoolValue() : v.getSExtValue());
      }
      entry.assign(std::move(values));
    } else if (entry.name == "mask")
      entry.assign(maskValues(type.getShape(), *format == ElementFormat::I1,
                              rng));
    else if (entry.name == "block mask") {
      std::vector<uint8_t> blocks =
          ::attn::gpucheck::sampleBlockMask(type.getShape().data(), rng);
      entry.assign(std::vector<double>(blocks.begin(), blocks.end()));
    } else if (entry.name == "key lengths") {
      std::vector<int32_t> lengths = ::attn::gpucheck::sampleKeyLengths(
          type.getDimSize(0), op.getKey().getType().getDimSize(2), rng);
      entry.assign(std::vector<double>(lengths.begin(), lengths.end()));
    } else
      entry.assign(normalValues(entry.buffer.numElements(), rng));
  }
  result.poisonOutputs();
  return result;
}

llvm::Error AttentionOperands::load(Operand &operand, llvm::StringRef path) {
  NpyArray array;
  if (NpyError error = readNpy(path.str(), array, npyTypeOf(operand.format));
      !error.empty())
    return llvm::createStringError(error);
  if (array.shape != operand.buffer.shape)
    return llvm::createStringError(
        llvm::formatv("{0}: shape {1} does not match {2}'s {3}", path,
                      shapeString(array.shape), operand.name,
                      shapeString(operand.buffer.shape))
            .str());
  operand.assign(npyToDoubles(array));
  return llvm::Error::success();
}

llvm::Error AttentionOperands::save(const Operand &operand,
                                    llvm::StringRef path) const {
  if (NpyError error = writeNpy(path.str(), operand.toNpy()); !error.empty())
    return llvm::createStringError(error);
  return llvm::Error::success();
}

NpyArray Operand::toNpy() const {
  // The buffer holds the elements as .npy does: little-endian, i1 a byte.
  assert(buffer.elementBytes == npyElementBytes(npyTypeOf(format)) &&
         "an element takes as many bytes in the buffer as in .npy");
  return NpyArray{npyTypeOf(format), buffer.shape, buffer.bytes};
}

void AttentionOperands::poisonOutputs() {
  unsigned numOutputs = hasLse ? 2 : 1;
  for (Operand &operand :
       MutableArrayRef<Operand>(operands).take_back(numOutputs))
    operand.poison();
}

std::vector<HostBuffer *> AttentionOperands::buffers() {
  std::vector<HostBuffer *> pointers;
  for (Operand &operand : operands)
    pointers.push_back(&operand.buffer);
  return pointers;
}

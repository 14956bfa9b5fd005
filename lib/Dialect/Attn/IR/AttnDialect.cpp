//===- AttnDialect.cpp - The attn dialect
//----------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
}

/// Whether `launch` is the dictionary getLaunchAttrName() describes.
static LogicalResult verifyLaunch(Operation *op, Attribute launch) {
  auto dict = dyn_cast<DictionaryAttr>(launch);
  auto threeSizes = [&](StringRef key, bool dynamicAllowed) {
    auto sizes = dict ? dict.getAs<DenseI64ArrayAttr>(key) : nullptr;
    return sizes && sizes.size() == 3 &&
           llvm::all_of(sizes.asArrayRef(), [&](int64_t s) {
             return s > 0 || (dynamicAllowed && ShapedType::isDynamic(s));
           });
  };
  // The views of the kernel's tensor parameters, and which of its
  // parameters carry their dynamic sizes and strides.
  auto params = dict ? dict.getAs<ArrayAttr>("params") : nullptr;
  bool paramsValid = params && llvm::all_of(params, [](Attribute entry) {
                       auto type = dyn_cast<TypeAttr>(entry);
                       return type && isa<MemRefType>(type.getValue());
                     });
  // The manifest's name of each tensor parameter.
  auto names = dict ? dict.getAs<ArrayAttr>("param_names") : nullptr;
  bool namesValid = paramsValid && names && names.size() == params.size() &&
                    llvm::all_of(names, llvm::IsaPred<StringAttr>);
  auto scalars = dict ? dict.getAs<ArrayAttr>("scalars") : nullptr;
  bool scalarsValid =
      paramsValid && scalars && llvm::all_of(scalars, [&](Attribute entry) {
        auto s = dyn_cast<DictionaryAttr>(entry);
        auto param = s ? s.getAs<IntegerAttr>("param") : nullptr;
        if (!param || s.size() != 2 || param.getInt() < 0 ||
            param.getInt() >= static_cast<int64_t>(params.size()))
          return false;
        auto view =
            cast<MemRefType>(cast<TypeAttr>(params[param.getInt()]).getValue());
        auto dim = s.getAs<IntegerAttr>(s.contains("size") ? "size" : "stride");
        return dim && dim.getInt() >= 0 && dim.getInt() < view.getRank();
      });
  auto bytes =
      dict ? dict.getAs<IntegerAttr>("dynamic_shared_memory") : nullptr;
  // Optional: `persistent` and `gradient` (units) and `workspaces`, each
  // {name, bytes > 0, zero_init} and optionally the units per_cta and
  // kernel_resets.
  size_t optional = 0;
  bool optionalValid = true;
  for (StringRef unit : {"persistent", "gradient"})
    if (dict && dict.contains(unit)) {
      ++optional;
      optionalValid &= isa<UnitAttr>(dict.get(unit));
    }
  if (dict && dict.contains("workspaces")) {
    ++optional;
    auto workspaces = dict.getAs<ArrayAttr>("workspaces");
    optionalValid &=
        workspaces && llvm::all_of(workspaces, [](Attribute entry) {
          auto w = dyn_cast<DictionaryAttr>(entry);
          auto size = w ? w.getAs<IntegerAttr>("bytes") : nullptr;
          size_t units = 0;
          bool unitsValid = true;
          for (StringRef unit : {"per_cta", "kernel_resets"})
            if (w && w.contains(unit)) {
              ++units;
              unitsValid &= isa<UnitAttr>(w.get(unit));
            }
          return w && w.getAs<StringAttr>("name") && size &&
                 size.getInt() > 0 && w.getAs<BoolAttr>("zero_init") &&
                 unitsValid && w.size() == 3 + units;
        });
  }
  // Optional: `tensor_maps`, each {name, param (a tensor parameter), box
  // (a size per dimension of its view, 1 to 256), swizzle (0, 32, 64 or
  // 128)}.
  if (dict && dict.contains("tensor_maps")) {
    ++optional;
    auto maps = dict.getAs<ArrayAttr>("tensor_maps");
    optionalValid &=
        paramsValid && maps && llvm::all_of(maps, [&](Attribute entry) {
          auto m = dyn_cast<DictionaryAttr>(entry);
          auto param = m ? m.getAs<IntegerAttr>("param") : nullptr;
          auto box = m ? m.getAs<DenseI64ArrayAttr>("box") : nullptr;
          auto swizzle = m ? m.getAs<IntegerAttr>("swizzle") : nullptr;
          if (!param || !box || !swizzle || !m.getAs<StringAttr>("name") ||
              m.size() != 4 || param.getInt() < 0 ||
              param.getInt() >= static_cast<int64_t>(params.size()))
            return false;
          auto view = cast<MemRefType>(
              cast<TypeAttr>(params[param.getInt()]).getValue());
          return box.size() == view.getRank() &&
                 llvm::all_of(
                     box.asArrayRef(),
                     [](int64_t size) { return size >= 1 && size <= 256; }) &&
                 llvm::is_contained({0, 32, 64, 128}, swizzle.getInt());
        });
  }
  // Optional: `producer_warps`, the warps after the tiles' that only issue
  // copies (a positive multiple of 4: a warpgroup).
  if (dict && dict.contains("producer_warps")) {
    ++optional;
    auto warps = dict.getAs<IntegerAttr>("producer_warps");
    optionalValid &= warps && warps.getInt() > 0 && warps.getInt() % 4 == 0;
  }
  // Optional: `kernel`, the plan the kernel was built from (#attn.kernel).
  if (dict && dict.contains("kernel")) {
    ++optional;
    optionalValid &= static_cast<bool>(dict.getAs<KernelAttr>("kernel"));
  }
  if (!dict || !threeSizes("grid", /*dynamicAllowed=*/true) ||
      !threeSizes("block", /*dynamicAllowed=*/false) || !bytes ||
      bytes.getInt() < 0 || !dict.getAs<Fa2TilesAttr>("tiles") ||
      !dict.getAs<DictionaryAttr>("attention") || !paramsValid || !namesValid ||
      !scalarsValid || !optionalValid || dict.size() != 8 + optional)
    return op->emitError()
           << "'" << AttnDialect::getLaunchAttrName()
           << "' must be {grid = array<i64: x, y, z>, block = array<i64: x, "
              "y, z>, dynamic_shared_memory = bytes : i64, tiles = "
              "#attn.fa2<...>, attention = {...}, params = [memref types], "
              "param_names = [a string per param], scalars = [{param = i, size "
              "= d} or {param = i, stride = "
              "d}]} with positive sizes (a grid size may be dynamic), and "
              "optionally persistent, gradient, workspaces = [{name, bytes, "
              "zero_init, optionally per_cta and kernel_resets}] and "
              "tensor_maps = [{name, param = i, box = array<i64: ...> (a size "
              "1 to 256 per dimension), swizzle = 0, 32, 64 or 128}] and "
              "producer_warps = a positive multiple of 4 and kernel = "
              "#attn.kernel<...>, got "
           << launch;
  return success();
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == getLaunchAttrName())
    return verifyLaunch(op, attr.getValue());
  StringRef expected;
  if (attr.getName() == getTargetAttrName())
    expected = "#attn.target";
  else if (attr.getName() == getClusterAttrName())
    expected = "#attn.cluster";
  else
    return op->emitError() << "unknown attn dialect attribute '"
                           << attr.getName().getValue() << "'; known: '"
                           << getTargetAttrName() << "', '"
                           << getClusterAttrName() << "', '"
                           << getLaunchAttrName() << "'";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' may only be placed on a builtin.module";
  if (!isa<TargetAttr, ClusterAttr>(attr.getValue()) ||
      (attr.getName() == getTargetAttrName()) !=
          isa<TargetAttr>(attr.getValue()))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be an " << expected << ", got "
                           << attr.getValue();
  return success();
}

ClusterAttr mlir::attn::getEnclosingCluster(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (auto cluster = parent->getAttrOfType<ClusterAttr>(
            AttnDialect::getClusterAttrName()))
      return cluster;
  return {};
}

TargetAttr mlir::attn::getEnclosingTarget(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (auto target =
            parent->getAttrOfType<TargetAttr>(AttnDialect::getTargetAttrName()))
      return target;
  return {};
}

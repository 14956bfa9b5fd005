//===- KernelBundle.cpp - Compile attentions to a kernel bundle -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/KernelBundle.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Manifest version: 2 gives grid formulas, strides and alignments; 3 adds
/// the scalar parameters of run-time sizes and strides; 4 workspaces sized
/// per CTA of the grid and zeroed once (bytes_per_cta, kernel_resets); 5
/// grid formulas that multiply a size first (times: GQA packing's p Sq); 6
/// the i32 key_lengths parameter; 7 the mask parameter (i1, f16, bf16 or
/// f32, alignment its element's bytes); 8 the i8 block_mask parameter and
/// the attention's block_mask_blocks; 9 tensor maps (tensor_maps), written
/// only by bundles with a kernel that has them; 10 backward kernels
/// (gradient), written only by bundles that hold one; 11 warp-specialised
/// kernels (producer_warps: the block has them beyond the tiles' warps),
/// written only by bundles that hold one.
constexpr int kManifestVersion = 8;
constexpr int kTensorMapManifestVersion = 9;
constexpr int kGradientManifestVersion = 10;
constexpr int kProducerWarpsManifestVersion = 11;

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// The manifest's `plan` of a kernel: its #attn.kernel, field by field (the
/// registers and CTAs an SM where they are set), for whoever reads the
/// bundle; libattnrt launches without it.
llvm::json::Object describePlan(KernelAttr plan) {
  llvm::json::Object entry{{"unit", stringifyMatrixUnit(plan.getUnit())},
                           {"kv", stringifyTileCopy(plan.getKv())},
                           {"q", stringifyTileCopy(plan.getQ())},
                           {"roles", stringifyWarpRoles(plan.getRoles())},
                           {"loop", stringifyKernelLoop(plan.getLoop())},
                           {"o", stringifyOutputStore(plan.getO())}};
  if (plan.reallocatesRegisters()) {
    entry["producer_registers"] = plan.getProducerRegisters();
    entry["consumer_registers"] = plan.getConsumerRegisters();
    entry["entry_registers"] = plan.getEntryRegisters();
  }
  if (plan.getMinCtasPerSm())
    entry["min_ctas_per_sm"] = plan.getMinCtasPerSm();
  return entry;
}

/// The manifest entry of one kernel, read off its gpu.func before PTX.
FailureOr<llvm::json::Object> describeKernel(gpu::GPUFuncOp func,
                                             StringRef target) {
  auto launch =
      func->getAttrOfType<DictionaryAttr>(AttnDialect::getLaunchAttrName());
  auto sizes = [&](StringRef key) {
    return launch.getAs<DenseI64ArrayAttr>(key).asArrayRef();
  };
  // The kernel's tensor parameters, in order: Q, K, V, O and, if present,
  // LSE, mask, block_mask and key_lengths, as the kernel views them; then the
  // workspaces the runtime owns, then the scalars. Q, K, V and O move in
  // 16-byte vectors; the others element by element.
  SmallVector<StringRef> names = llvm::map_to_vector(
      launch.getAs<ArrayAttr>("param_names").getAsRange<StringAttr>(),
      [](StringAttr name) { return name.getValue(); });
  auto workspaces = launch.getAs<ArrayAttr>("workspaces");
  // The backward kernel (attn.attention_grad's): Q, K, V, O, LSE, dO, dQ,
  // dK and dV, rows of 16-bit tensors moved in 16-byte chunks.
  bool gradient = launch.contains("gradient");
  llvm::json::Array params;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (auto [index, entry] :
       llvm::enumerate(launch.getAs<ArrayAttr>("params"))) {
    auto memref = cast<MemRefType>(cast<TypeAttr>(entry).getValue());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (index >= names.size() ||
        failed(memref.getStridesAndOffset(strides, offset)) || offset != 0)
      return func.emitError("kernel parameter ")
             << index << " (" << memref
             << ") has no place in a bundle manifest";
    shapes.push_back(memref.getShape());
    auto extents = [](ArrayRef<int64_t> values) {
      llvm::json::Array array;
      for (int64_t value : values) {
        if (ShapedType::isDynamic(value))
          array.push_back(nullptr);
        else
          array.push_back(value);
      }
      return array;
    };
    params.push_back(llvm::json::Object{
        {"name", names[index]},
        {"type", typeName(memref.getElementType())},
        {"shape", extents(memref.getShape())},
        {"strides", extents(strides)},
        {"alignment",
         index < 4 || (gradient && index < 9 && names[index] != "LSE")
             ? 16
             : std::max<int64_t>(1, memref.getElementTypeBitWidth() / 8)},
    });
  }
  auto tiles = launch.getAs<Fa2TilesAttr>("tiles");
  ArrayRef<int64_t> grid = sizes("grid");
  ArrayRef<int64_t> q = shapes[0];
  int64_t blockM = tiles.getBlockM(), packed = tiles.getPackedHeads();
  bool persistent = launch.contains("persistent");
  llvm::json::Array gridFormula;
  if (gradient) {
    // The backward kernel's grid: a CTA per key/value block of each
    // key/value head and per query block of each query head, for static
    // sizes.
    if (grid.size() != 3 || llvm::any_of(grid, ShapedType::isDynamic) ||
        grid[1] != q[0] || grid[2] != 1)
      return func.emitError("a backward kernel's grid is not (CTAs, B, 1)");
    gridFormula = llvm::json::Array{grid[0], grid[1], 1};
  } else if (persistent) {
    // A fixed set of CTAs, whatever the sizes.
    if (grid.size() != 3 || grid[1] != 1 || grid[2] != 1)
      return func.emitError("a persistent kernel's grid is not (G, 1, 1)");
    gridFormula = llvm::json::Array{grid[0], 1, 1};
  } else {
    // Grid (ceil(p Sq / Bm), B, Hq / p x S), p GQA packing's heads per
    // tiled head, S split-KV's splits, each 1 when unused: the formula must
    // give the kernel's grid (a dynamic size where a length is). Hq is
    // static.
    auto ceilDiv = [](int64_t size, int64_t times, int64_t by) {
      return ShapedType::isDynamic(size)
                 ? size
                 : llvm::divideCeilSigned(size * times, by);
    };
    if (grid.size() != 3 || grid[0] != ceilDiv(q[2], packed, blockM) ||
        grid[1] != q[0] || grid[2] % (q[1] / packed) != 0)
      return func.emitError("the kernel's grid is not (ceil(")
             << packed << " Sq / " << blockM << "), B, Hq / " << packed
             << " x splits)";
    llvm::json::Value headsTimesSplits =
        grid[2] == q[1]
            ? llvm::json::Value(llvm::json::Object{{"param", "Q"}, {"dim", 1}})
            : llvm::json::Value(grid[2]);
    llvm::json::Object queryBlocks{
        {"param", "Q"}, {"dim", 2}, {"ceil_div", blockM}};
    if (packed != 1)
      queryBlocks["times"] = packed;
    gridFormula = llvm::json::Array{
        std::move(queryBlocks), llvm::json::Object{{"param", "Q"}, {"dim", 0}},
        std::move(headsTimesSplits)};
  }
  llvm::json::Array block;
  for (int64_t size : sizes("block"))
    block.push_back(size);
  auto attention = launch.getAs<DictionaryAttr>("attention");
  llvm::json::Object semantics{
      {"scale",
       attention.getAs<FloatAttr>("scale").getValue().convertToDouble()},
      {"causal", attention.getAs<BoolAttr>("causal").getValue()},
  };
  if (auto window = attention.getAs<DenseI64ArrayAttr>("window"))
    semantics["window"] = llvm::json::Array{window[0], window[1]};
  if (auto softcap = attention.getAs<FloatAttr>("softcap"))
    semantics["softcap"] = softcap.getValue().convertToDouble();
  if (attention.get("score_region"))
    semantics["score_region"] = true;
  if (attention.get("block_mask"))
    semantics["block_mask"] = true;
  if (auto blocks = attention.getAs<DenseI64ArrayAttr>("block_mask_blocks"))
    semantics["block_mask_blocks"] = llvm::json::Array{blocks[0], blocks[1]};
  llvm::json::Object kernel{
      {"name", func.getName()},
      {"target", target},
      {"params", std::move(params)},
      {"grid", std::move(gridFormula)},
      {"block", std::move(block)},
      {"dynamic_shared_memory",
       launch.getAs<IntegerAttr>("dynamic_shared_memory").getInt()},
      {"tiles", llvm::json::Object{{"block_m", tiles.getBlockM()},
                                   {"block_n", tiles.getBlockN()},
                                   {"warps", tiles.getWarps()},
                                   {"stages", tiles.getStages()},
                                   {"packed_heads", packed}}},
      {"attention", std::move(semantics)},
  };
  // One i64 after the pointers and workspaces per dynamic size or stride of
  // a tensor parameter.
  llvm::json::Array scalars;
  for (auto entry :
       launch.getAs<ArrayAttr>("scalars").getAsRange<DictionaryAttr>()) {
    int64_t param = entry.getAs<IntegerAttr>("param").getInt();
    StringRef kind = entry.contains("size") ? "size" : "stride";
    scalars.push_back(
        llvm::json::Object{{"param", names[param]},
                           {kind, entry.getAs<IntegerAttr>(kind).getInt()}});
  }
  if (!scalars.empty())
    kernel["scalars"] = std::move(scalars);
  if (persistent)
    kernel["persistent"] = true;
  if (gradient)
    kernel["gradient"] = true;
  if (workspaces) {
    llvm::json::Array entries;
    for (auto entry : workspaces.getAsRange<DictionaryAttr>()) {
      llvm::json::Object workspace{
          {"name", entry.getAs<StringAttr>("name").getValue()},
          {entry.contains("per_cta") ? "bytes_per_cta" : "bytes",
           entry.getAs<IntegerAttr>("bytes").getInt()},
          {"zero_init", entry.getAs<BoolAttr>("zero_init").getValue()}};
      if (entry.contains("kernel_resets"))
        workspace["kernel_resets"] = true;
      entries.push_back(std::move(workspace));
    }
    kernel["workspaces"] = std::move(entries);
  }
  if (auto maps = launch.getAs<ArrayAttr>("tensor_maps")) {
    llvm::json::Array entries;
    for (auto entry : maps.getAsRange<DictionaryAttr>())
      entries.push_back(llvm::json::Object{
          {"name", entry.getAs<StringAttr>("name").getValue()},
          {"param", names[entry.getAs<IntegerAttr>("param").getInt()]},
          {"box", llvm::json::Array(
                      entry.getAs<DenseI64ArrayAttr>("box").asArrayRef())},
          {"swizzle", entry.getAs<IntegerAttr>("swizzle").getInt()}});
    kernel["tensor_maps"] = std::move(entries);
  }
  if (auto warps = launch.getAs<IntegerAttr>("producer_warps"))
    kernel["producer_warps"] = warps.getInt();
  if (auto plan = launch.getAs<KernelAttr>("kernel"))
    kernel["plan"] = describePlan(plan);
  return kernel;
}

} // namespace

LogicalResult mlir::attn::compileKernelBundle(ModuleOp module,
                                              const AttnToPTXOptions &options,
                                              KernelBundle &bundle) {
  if (std::string error = options.validate(); !error.empty())
    return module.emitError(error);
  PassManager toKernels(module.getContext());
  buildAttnToKernelsPipeline(toKernels, options);
  if (failed(toKernels.run(module)))
    return failure();
  llvm::json::Array kernels;
  WalkResult walk = module.walk([&](gpu::GPUFuncOp func) {
    if (!func->hasAttr(AttnDialect::getLaunchAttrName()))
      return WalkResult::advance();
    FailureOr<llvm::json::Object> kernel = describeKernel(func, options.chip);
    if (failed(kernel))
      return WalkResult::interrupt();
    kernels.push_back(std::move(*kernel));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (kernels.empty())
    return module.emitError("no attn.attention to compile");

  PassManager toPTX(module.getContext());
  buildKernelsToPTXPipeline(toPTX, options);
  if (failed(toPTX.run(module)))
    return failure();
  bundle.ptx.clear();
  module.walk([&](gpu::BinaryOp binaryOp) {
    for (Attribute object : binaryOp.getObjects())
      bundle.ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });
  bundle.kernelCount = kernels.size();
  auto anyKernelHas = [&](StringRef key) {
    return llvm::any_of(kernels, [&](const llvm::json::Value &kernel) {
      return kernel.getAsObject()->get(key) != nullptr;
    });
  };
  int version = anyKernelHas("producer_warps") ? kProducerWarpsManifestVersion
                : anyKernelHas("gradient")     ? kGradientManifestVersion
                : anyKernelHas("tensor_maps")  ? kTensorMapManifestVersion
                                               : kManifestVersion;
  llvm::json::Object manifest{{"format", "attn-kernel-bundle"},
                              {"version", version},
                              {"ptx", "kernels.ptx"},
                              {"kernels", std::move(kernels)}};
  bundle.manifestJson =
      llvm::formatv("{0:2}\n", llvm::json::Value(std::move(manifest)));
  return success();
}

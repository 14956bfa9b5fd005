//===- Manifest.cpp - Kernel bundle manifests -----------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "attn/Support/SizeLimits.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace attn::runtime;
using mlir::attn::kMaxCount;
using mlir::attn::kMaxTensorBytes;
using Value = nlohmann::json;

namespace {

/// Reads the fields of one JSON object, recording the first problem with
/// the path of the field.
/// The JSON types a manifest field may be required to have.
enum class Kind { Bool, Number, String, Array, Object };

bool hasKind(const Value &value, Kind kind) {
  switch (kind) {
  case Kind::Bool:
    return value.is_boolean();
  case Kind::Number:
    return value.is_number();
  case Kind::String:
    return value.is_string();
  case Kind::Array:
    return value.is_array();
  case Kind::Object:
    return value.is_object();
  }
  return false;
}

class Reader {
public:
  explicit Reader(std::string &error) : error(error) {}

  bool failed() const { return !error.empty(); }

  bool fail(const std::string &path, const std::string &why) {
    if (error.empty())
      error = "manifest: " + path + ": " + why;
    return false;
  }

  const Value *member(const Value &object, const std::string &path,
                      const std::string &key, Kind kind,
                      bool optional = false) {
    auto found = object.find(key);
    if (found == object.end() || found->is_null()) {
      if (!optional)
        fail(path, "missing \"" + key + "\"");
      return nullptr;
    }
    if (!hasKind(*found, kind)) {
      fail(path + "." + key, "has the wrong type");
      return nullptr;
    }
    return &*found;
  }

  /// An integer in [MIN, MAX]: every count and size a manifest gives is
  /// bounded here, before anything adds or multiplies it.
  bool integer(const Value &value, const std::string &path, int64_t min,
               int64_t &out,
               int64_t max = std::numeric_limits<int64_t>::max()) {
    if (!value.is_number_integer())
      return fail(path, "is not an integer");
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(path, "is larger than 2^63 - 1");
    out = value.get<int64_t>();
    if (out < min)
      return fail(path, "must be at least " + std::to_string(min));
    if (out > max)
      return fail(path, "must be at most " + std::to_string(max));
    return true;
  }

  bool integerMember(const Value &object, const std::string &path,
                     const std::string &key, int64_t min, int64_t &out,
                     int64_t max = std::numeric_limits<int64_t>::max()) {
    const Value *value = member(object, path, key, Kind::Number);
    return value && integer(*value, path + "." + key, min, out, max);
  }

  std::string string(const Value &object, const std::string &path,
                     const std::string &key) {
    const Value *value = member(object, path, key, Kind::String);
    return value ? value->get<std::string>() : std::string();
  }

private:
  std::string &error;
};

bool parseDType(const std::string &name, attnrtDType &dtype) {
  for (attnrtDType candidate : {ATTNRT_F16, ATTNRT_BF16, ATTNRT_F32, ATTNRT_I32,
                                ATTNRT_I1, ATTNRT_I8}) {
    if (name == attnrtDTypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  }
  return false;
}

/// A list of RANK sizes or strides, each an integer in [MIN, MAX] or null
/// (dynamic, stored as -1).
bool readExtents(Reader &reader, const Value &list, const std::string &path,
                 int64_t min, int32_t rank, int64_t *out,
                 int64_t max = std::numeric_limits<int64_t>::max()) {
  if (static_cast<int32_t>(list.size()) != rank)
    return reader.fail(path, "has " + std::to_string(list.size()) +
                                 " entries, expected " + std::to_string(rank));
  for (int32_t i = 0; i < rank; ++i) {
    const Value &entry = list[i];
    std::string where = path + "[" + std::to_string(i) + "]";
    if (entry.is_null())
      out[i] = -1;
    else if (!reader.integer(entry, where, min, out[i], max))
      return false;
  }
  return true;
}

bool readParam(Reader &reader, const Value &entry, const std::string &path,
               ParamSpec &param) {
  if (!entry.is_object())
    return reader.fail(path, "is not an object");
  param.name = reader.string(entry, path, "name");
  std::string type = reader.string(entry, path, "type");
  if (reader.failed())
    return false;
  if (!parseDType(type, param.dtype))
    return reader.fail(path + ".type",
                       "\"" + type + "\" is not one of f16, bf16, f32, i32");
  const Value *shape = reader.member(entry, path, "shape", Kind::Array);
  const Value *strides = reader.member(entry, path, "strides", Kind::Array);
  if (!shape || !strides)
    return false;
  if (shape->empty() || shape->size() > ATTNRT_MAX_RANK)
    return reader.fail(path + ".shape", "rank must be 1 to " +
                                            std::to_string(ATTNRT_MAX_RANK));
  param.rank = static_cast<int32_t>(shape->size());
  if (!readExtents(reader, *shape, path + ".shape", 1, param.rank,
                   param.sizes) ||
      !readExtents(reader, *strides, path + ".strides", 0, param.rank,
                   param.strides))
    return false;
  if (!reader.integerMember(entry, path, "alignment", 1, param.alignment))
    return false;
  if (param.alignment & (param.alignment - 1))
    return reader.fail(path + ".alignment", "is not a power of two");
  // The bytes the static sizes and strides reach, checked, so that the
  // runtime's size computations cannot overflow.
  if (!mlir::attn::checkedStridedBytes(
          param.sizes, param.strides, param.rank,
          static_cast<int64_t>(attnrtDTypeSize(param.dtype))))
    return reader.fail(path + ".shape",
                       "with its strides spans more than 2^48 bytes (256 "
                       "TiB), more than any machine addresses");
  return true;
}

bool readGrid(Reader &reader, const Value &grid, const std::string &path,
              KernelSpec &kernel) {
  if (grid.size() != 3)
    return reader.fail(path, "must have 3 entries");
  for (int axis = 0; axis < 3; ++axis) {
    const Value &entry = grid[axis];
    std::string where = path + "[" + std::to_string(axis) + "]";
    GridTerm &term = kernel.grid[axis];
    if (entry.is_number()) {
      if (!reader.integer(entry, where, 1, term.constant, kMaxCount))
        return false;
      continue;
    }
    if (!entry.is_object())
      return reader.fail(where, "is neither an integer nor a formula");
    std::string name = reader.string(entry, where, "param");
    int64_t dim = 0;
    if (reader.failed() || !reader.integerMember(entry, where, "dim", 0, dim))
      return false;
    if (entry.contains("ceil_div") &&
        !reader.integerMember(entry, where, "ceil_div", 1, term.ceilDiv))
      return false;
    if (entry.contains("times") &&
        !reader.integerMember(entry, where, "times", 1, term.times))
      return false;
    // A size (at most 2^48) times it, plus ceil_div, cannot overflow.
    if (term.times > 4096 || term.ceilDiv > 4096)
      return reader.fail(where, "times and ceil_div must be at most 4096");
    term.param = kernel.paramIndex(name);
    if (term.param < 0)
      return reader.fail(where + ".param", "no parameter \"" + name + "\"");
    if (dim >= kernel.params[term.param].rank)
      return reader.fail(where + ".dim", "parameter \"" + name + "\" has rank " +
                                             std::to_string(kernel.params[term.param].rank));
    term.dim = static_cast<int32_t>(dim);
  }
  return true;
}

/// One scalar parameter: {"param": NAME, "size": DIM} or {"param": NAME,
/// "stride": DIM}, naming a size or stride the manifest leaves dynamic.
bool readScalar(Reader &reader, const Value &entry, const std::string &path,
                KernelSpec &kernel) {
  if (!entry.is_object())
    return reader.fail(path, "is not an object");
  std::string name = reader.string(entry, path, "param");
  if (reader.failed())
    return false;
  ScalarSpec &scalar = kernel.scalars.emplace_back();
  scalar.param = kernel.paramIndex(name);
  if (scalar.param < 0)
    return reader.fail(path + ".param", "no parameter \"" + name + "\"");
  scalar.stride = entry.contains("stride");
  if (scalar.stride == entry.contains("size") || entry.size() != 2)
    return reader.fail(path, "must have \"param\" and one of \"size\" or "
                             "\"stride\"");
  const char *kind = scalar.stride ? "stride" : "size";
  const ParamSpec &param = kernel.params[scalar.param];
  int64_t dim = 0;
  if (!reader.integerMember(entry, path, kind, 0, dim))
    return false;
  if (dim >= param.rank)
    return reader.fail(path + "." + kind, "parameter \"" + name +
                                              "\" has rank " +
                                              std::to_string(param.rank));
  scalar.dim = static_cast<int32_t>(dim);
  if ((scalar.stride ? param.strides : param.sizes)[dim] >= 0)
    return reader.fail(path, std::string("the ") + kind + " is static in " +
                                 "parameter \"" + name + "\"");
  return true;
}

/// One tensor map: {"name": NAME, "param": TENSOR, "box": [...],
/// "swizzle": BYTES}, the box innermost dimension first.
bool readTensorMap(Reader &reader, const Value &entry, const std::string &path,
                   KernelSpec &kernel) {
  if (!entry.is_object())
    return reader.fail(path, "is not an object");
  TensorMapSpec &map = kernel.tensorMaps.emplace_back();
  map.name = reader.string(entry, path, "name");
  std::string name = reader.string(entry, path, "param");
  if (reader.failed() ||
      !reader.integerMember(entry, path, "swizzle", 0, map.swizzleBytes))
    return false;
  map.param = kernel.paramIndex(name);
  if (map.param < 0)
    return reader.fail(path + ".param", "no parameter \"" + name + "\"");
  const ParamSpec &param = kernel.params[map.param];
  if (param.dtype != ATTNRT_F16 && param.dtype != ATTNRT_BF16 &&
      param.dtype != ATTNRT_F32)
    return reader.fail(path + ".param", "\"" + name +
                                            "\" is not an f16, bf16 or f32 "
                                            "tensor");
  const Value *box = reader.member(entry, path, "box", Kind::Array);
  if (!box || !readExtents(reader, *box, path + ".box", 1, param.rank, map.box))
    return false;
  for (int32_t i = 0; i < param.rank; ++i)
    if (map.box[i] < 1 || map.box[i] > 256)
      return reader.fail(path + ".box", "sizes must be 1 to 256");
  if (map.swizzleBytes != 0 && map.swizzleBytes != 32 &&
      map.swizzleBytes != 64 && map.swizzleBytes != 128)
    return reader.fail(path + ".swizzle", "must be 0, 32, 64 or 128");
  int64_t inner =
      map.box[0] * static_cast<int64_t>(attnrtDTypeSize(param.dtype));
  if (inner % 16 != 0 || (map.swizzleBytes && inner > map.swizzleBytes))
    return reader.fail(
        path + ".box",
        "the inner box is " + std::to_string(inner) +
            " bytes: it must be a multiple of 16" +
            (map.swizzleBytes ? " no wider than the swizzle" : std::string()));
  return true;
}

bool readKernel(Reader &reader, const Value &entry, const std::string &path,
                KernelSpec &kernel) {
  if (!entry.is_object())
    return reader.fail(path, "is not an object");
  kernel.name = reader.string(entry, path, "name");
  kernel.target = reader.string(entry, path, "target");
  if (reader.failed())
    return false;
  if (targetComputeCapability(kernel.target) < 0)
    return reader.fail(path + ".target",
                       "\"" + kernel.target + "\" is not an sm_XY target");
  const Value *params = reader.member(entry, path, "params", Kind::Array);
  if (!params)
    return false;
  for (size_t i = 0; i < params->size(); ++i) {
    kernel.params.emplace_back();
    if (!readParam(reader, (*params)[i],
                   path + ".params[" + std::to_string(i) + "]",
                   kernel.params.back()))
      return false;
  }
  const Value *grid = reader.member(entry, path, "grid", Kind::Array);
  if (!grid || !readGrid(reader, *grid, path + ".grid", kernel))
    return false;
  const Value *block = reader.member(entry, path, "block", Kind::Array);
  if (!block)
    return false;
  if (block->size() != 3)
    return reader.fail(path + ".block", "must have 3 entries");
  std::optional<int64_t> threads = 1;
  for (int axis = 0; axis < 3; ++axis) {
    int64_t size = 0;
    if (!reader.integer((*block)[axis],
                        path + ".block[" + std::to_string(axis) + "]", 1, size))
      return false;
    // A checked product: [128, 1, 10^18] must be refused, not wrapped
    // around to a count under 1024 or stored as its low 32 bits.
    threads = mlir::attn::checkedMul(*threads, size);
    if (!threads || *threads > 1024)
      return reader.fail(path + ".block", "has more than 1024 threads");
    kernel.block[axis] = static_cast<unsigned>(size);
  }
  // Every kernel attn-compile writes stages its tiles in dynamic shared
  // memory: 0 is a broken manifest, not a kernel that needs none.
  // (Bounded by the bundle check, which names the most any GPU gives.)
  if (!reader.integerMember(entry, path, "dynamic_shared_memory", 1,
                            kernel.dynamicSharedBytes))
    return false;
  // The schedule: what the kernel's block, shared memory, grid and
  // workspaces follow from (checked against them with the PTX,
  // BundleCheck.h). packed_heads is version 5's.
  const Value *tiles = reader.member(entry, path, "tiles", Kind::Object);
  if (!tiles)
    return false;
  std::string tilesPath = path + ".tiles";
  // A block holds at most 32 warps; the other counts are bounded as every
  // count is, so that products of them with sizes (at most 2^48) stay far
  // from overflowing.
  if (!reader.integerMember(*tiles, tilesPath, "block_m", 1,
                            kernel.tiles.blockM, kMaxCount) ||
      !reader.integerMember(*tiles, tilesPath, "block_n", 1,
                            kernel.tiles.blockN, kMaxCount) ||
      !reader.integerMember(*tiles, tilesPath, "warps", 1, kernel.tiles.warps,
                            32) ||
      !reader.integerMember(*tiles, tilesPath, "stages", 1,
                            kernel.tiles.stages, kMaxCount))
    return false;
  if (tiles->contains("packed_heads") &&
      !reader.integerMember(*tiles, tilesPath, "packed_heads", 1,
                            kernel.tiles.packedHeads, kMaxCount))
    return false;
  if (const Value *persistent =
          reader.member(entry, path, "persistent", Kind::Bool, true))
    kernel.persistent = persistent->get<bool>();
  if (const Value *gradient =
          reader.member(entry, path, "gradient", Kind::Bool, true))
    kernel.gradient = gradient->get<bool>();
  if (entry.contains("producer_warps")) {
    if (!reader.integerMember(entry, path, "producer_warps", 1,
                              kernel.producerWarps))
      return false;
    // setmaxnreg and wgmma work on whole warpgroups.
    if (kernel.producerWarps % 4 != 0)
      return reader.fail(path + ".producer_warps",
                         "is " + std::to_string(kernel.producerWarps) +
                             ", not a whole number of warpgroups (a multiple "
                             "of 4)");
    // A block holds at most 1024 threads: 32 warps.
    if (kernel.producerWarps > 32)
      return reader.fail(path + ".producer_warps",
                         "is " + std::to_string(kernel.producerWarps) +
                             ", more warps than a block holds (32)");
  }
  if (const Value *workspaces =
          reader.member(entry, path, "workspaces", Kind::Array, true)) {
    for (size_t i = 0; i < workspaces->size(); ++i) {
      const Value &w = (*workspaces)[i];
      std::string where = path + ".workspaces[" + std::to_string(i) + "]";
      if (!w.is_object())
        return reader.fail(where, "is not an object");
      WorkspaceSpec &workspace = kernel.workspaces.emplace_back();
      workspace.name = reader.string(w, where, "name");
      // Exactly one of "bytes" and "bytes_per_cta".
      workspace.perCta = w.contains("bytes_per_cta");
      if (workspace.perCta && w.contains("bytes"))
        return reader.fail(where, "has both \"bytes\" and \"bytes_per_cta\"");
      if (reader.failed() ||
          !reader.integerMember(w, where,
                                workspace.perCta ? "bytes_per_cta" : "bytes", 1,
                                workspace.bytes, kMaxTensorBytes))
        return false;
      if (const Value *zero =
              reader.member(w, where, "zero_init", Kind::Bool, true))
        workspace.zeroInit = zero->get<bool>();
      if (const Value *resets =
              reader.member(w, where, "kernel_resets", Kind::Bool, true))
        workspace.kernelResets = resets->get<bool>();
      if (reader.failed())
        return false;
      if (workspace.kernelResets && !workspace.zeroInit)
        return reader.fail(where, "has kernel_resets without zero_init: only "
                                  "a zero-filled workspace can be left zero");
    }
  }
  if (reader.failed())
    return false;
  if (const Value *scalars =
          reader.member(entry, path, "scalars", Kind::Array, true))
    for (size_t i = 0; i < scalars->size(); ++i)
      if (!readScalar(reader, (*scalars)[i],
                      path + ".scalars[" + std::to_string(i) + "]", kernel))
        return false;
  if (const Value *maps =
          reader.member(entry, path, "tensor_maps", Kind::Array, true)) {
    if (!maps->empty() && targetComputeCapability(kernel.target) < 90)
      return reader.fail(path + ".tensor_maps",
                         "tensor maps need sm_90 or later, not " +
                             kernel.target);
    for (size_t i = 0; i < maps->size(); ++i)
      if (!readTensorMap(reader, (*maps)[i],
                         path + ".tensor_maps[" + std::to_string(i) + "]",
                         kernel))
        return false;
  }
  const Value *attention =
      reader.member(entry, path, "attention", Kind::Object);
  if (!attention)
    return false;
  std::string where = path + ".attention";
  const Value *scale = reader.member(*attention, where, "scale", Kind::Number);
  const Value *causal = reader.member(*attention, where, "causal", Kind::Bool);
  if (!scale || !causal)
    return false;
  kernel.attention.scale = scale->get<double>();
  kernel.attention.causal = causal->get<bool>();
  if (const Value *window =
          reader.member(*attention, where, "window", Kind::Array, true)) {
    int64_t bounds[2];
    if (!readExtents(reader, *window, where + ".window", 0, 2, bounds))
      return false;
    if (bounds[0] < 0 || bounds[1] < 0)
      return reader.fail(where + ".window", "must be two integers");
    kernel.attention.hasWindow = 1;
    kernel.attention.windowLeft = bounds[0];
    kernel.attention.windowRight = bounds[1];
  }
  if (const Value *softcap =
          reader.member(*attention, where, "softcap", Kind::Number, true)) {
    double cap = softcap->get<double>();
    if (!(cap > 0) || !std::isfinite(cap))
      return reader.fail(where + ".softcap", "must be a positive number");
    kernel.attention.softcap = cap;
  }
  if (const Value *region =
          reader.member(*attention, where, "score_region", Kind::Bool, true))
    kernel.attention.scoreRegion = region->get<bool>();
  if (const Value *blocks =
          reader.member(*attention, where, "block_mask", Kind::Bool, true))
    kernel.attention.blockMask = blocks->get<bool>();
  if (const Value *blocks = reader.member(
          *attention, where, "block_mask_blocks", Kind::Array, true)) {
    int64_t sides[2];
    if (!readExtents(reader, *blocks, where + ".block_mask_blocks", 1, 2,
                     sides, kMaxCount))
      return false;
    if (sides[0] < 1 || sides[1] < 1)
      return reader.fail(where + ".block_mask_blocks",
                         "must be two positive integers");
    kernel.attention.blockMaskRows = sides[0];
    kernel.attention.blockMaskKeys = sides[1];
  }
  if (kernel.paramIndex("block_mask") >= 0 && !kernel.attention.blockMaskRows)
    return reader.fail(where, "has no block_mask_blocks, which the "
                              "block_mask parameter needs");
  return !reader.failed();
}

} // namespace

int attn::runtime::targetComputeCapability(const std::string &target) {
  if (target.size() < 5 || target.compare(0, 3, "sm_") != 0)
    return -1;
  char *end = nullptr;
  long capability = std::strtol(target.c_str() + 3, &end, 10);
  if (end == target.c_str() + 3 || capability <= 0 ||
      (*end != '\0' && !(end[0] == 'a' && end[1] == '\0')))
    return -1;
  return static_cast<int>(capability);
}

bool attn::runtime::parseManifest(const std::string &text, Manifest &manifest,
                                  std::string &error) {
  // nlohmann-json (Debian's nlohmann-json3-dev, header-only: libattnrt
  // still links nothing but the C++ runtime).
  Value root = Value::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    try {
      (void)Value::parse(text);
    } catch (const Value::exception &exception) {
      // "[json.exception.parse_error.101] parse error at line L, column C:
      // ..." without the library's tag.
      std::string what = exception.what();
      size_t tagEnd = what.find("] ");
      error = "manifest: invalid JSON: " +
              (tagEnd == std::string::npos ? what : what.substr(tagEnd + 2));
      return false;
    }
    error = "manifest: not valid JSON";
    return false;
  }
  Reader reader(error);
  if (!root.is_object())
    return reader.fail("(root)", "is not an object");
  std::string format = reader.string(root, "(root)", "format");
  int64_t version = 0;
  if (reader.failed() ||
      !reader.integerMember(root, "(root)", "version", 1, version))
    return false;
  if (format != "attn-kernel-bundle")
    return reader.fail("format", "\"" + format +
                                     "\" is not \"attn-kernel-bundle\"");
  if (version < 2 || version > 11)
    return reader.fail("version",
                       "this runtime reads versions 2 to 11, not " +
                           std::to_string(version) +
                           " (recompile the bundle with attn-compile)");
  manifest.ptx = reader.string(root, "(root)", "ptx");
  const Value *kernels = reader.member(root, "(root)", "kernels", Kind::Array);
  if (!kernels)
    return false;
  if (kernels->empty())
    return reader.fail("kernels", "is empty");
  for (size_t i = 0; i < kernels->size(); ++i) {
    manifest.kernels.emplace_back();
    if (!readKernel(reader, (*kernels)[i], "kernels[" + std::to_string(i) + "]",
                    manifest.kernels.back()))
      return false;
  }
  return true;
}

//===- ReferenceCase.cpp - Kernel inputs and reference outputs ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/GpuCheck/ReferenceCase.h"

#include "attn/Support/Files.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

using namespace attn::gpucheck;
using mlir::attn::NpyArray;
using mlir::attn::NpyElementType;
using mlir::attn::NpyError;
namespace files = mlir::attn::files;

namespace {

/// The version of the layout in ReferenceCase.h.
constexpr int kFormat = 1;
/// reference.json is a few hundred bytes.
constexpr uint64_t kMaxDescriptionBytes = uint64_t(1) << 20;

const char *kDescription = "reference.json";

/// The arrays of a case and their files, in reference.json's order.
struct ArrayFile {
  const char *file;
  const char *name;
};
constexpr ArrayFile kQuery{"q.npy", "Q"}, kKey{"k.npy", "K"},
    kValue{"v.npy", "V"}, kMask{"mask.npy", "mask"},
    kBlockMask{"block_mask.npy", "block mask"},
    kKeyLengths{"key_lengths.npy", "key lengths"}, kOut{"o.npy", "O"},
    kLse{"lse.npy", "LSE"}, kGradOut{"do.npy", "dO"},
    kGradQuery{"dq.npy", "dQ"}, kGradKey{"dk.npy", "dK"},
    kGradValue{"dv.npy", "dV"};

std::string pathIn(const std::string &dir, const char *file) {
  return dir + "/" + file;
}

bool exists(const std::string &path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0;
}

/// Makes `dir` if it is not there; an error unless it is a directory then.
std::string makeCaseDir(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    return "cannot create " + dir + ": " + std::strerror(errno);
  struct stat status;
  if (::stat(dir.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    return "cannot write a reference case into " + dir + ": not a directory";
  return {};
}

/// The JSON object of the case in `dir`'s reference.json, or an error.
std::string readDescription(const std::string &dir,
                            nlohmann::json &description) {
  std::string path = pathIn(dir, kDescription), text;
  if (std::string error = files::readFile(path, kMaxDescriptionBytes, text);
      !error.empty())
    return error;
  description =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (description.is_discarded() || !description.is_object())
    return path + ": not a JSON object";
  if (!description.contains("format") ||
      description["format"] != nlohmann::json(kFormat))
    return path + ": format " +
           (description.contains("format") ? description["format"].dump()
                                           : std::string("missing")) +
           "; this attn-launch reads format " + std::to_string(kFormat) +
           " (write the case again with the same release's attn-run)";
  if (!description.contains("kernel") || !description["kernel"].is_string() ||
      description["kernel"].get<std::string>().empty())
    return path + ": \"kernel\" must name the kernel the case checks";
  return {};
}

bool isGradientDescription(const nlohmann::json &description) {
  return description.contains("gradient") &&
         description["gradient"] == nlohmann::json(true);
}

nlohmann::json describeOutput(const ReferenceOutput &output) {
  return {{"tolerance", output.tolerance},
          {"tolerance_origin", output.toleranceOrigin}};
}

/// Reads an output's tolerance from `json` (reference.json's "outputs"
/// entry `name`).
std::string readTolerance(const nlohmann::json &outputs, const char *name,
                          const std::string &path, ReferenceOutput &output) {
  const nlohmann::json *entry = nullptr;
  if (outputs.is_object() && outputs.contains(name))
    entry = &outputs.at(name);
  if (!entry || !entry->is_object() || !entry->contains("tolerance") ||
      !(*entry)["tolerance"].is_number() ||
      !entry->contains("tolerance_origin") ||
      !(*entry)["tolerance_origin"].is_string())
    return path + ": outputs." + name +
           " needs a number \"tolerance\" and a string \"tolerance_origin\"";
  output.tolerance = (*entry)["tolerance"].get<double>();
  output.toleranceOrigin = (*entry)["tolerance_origin"].get<std::string>();
  if (!(output.tolerance > 0) || !std::isfinite(output.tolerance))
    return path + ": outputs." + name +
           ".tolerance must be positive and "
           "finite, not " +
           std::to_string(output.tolerance);
  return {};
}

/// Reads array `file` of the case in `dir`: as `type`, or without one in
/// whatever type it holds ('<V2' as bf16).
std::string readArray(const std::string &dir, ArrayFile file, NpyArray &array,
                      std::optional<NpyElementType> type) {
  std::string arrayPath = pathIn(dir, file.file);
  return type ? mlir::attn::readNpy(arrayPath, array, *type)
              : mlir::attn::readTensorNpy(arrayPath, array);
}

/// readArray of an array a case may not have: `array` stays empty when its
/// file is not there.
std::string readOptionalArray(const std::string &dir, ArrayFile file,
                              std::optional<NpyArray> &array,
                              std::optional<NpyElementType> type) {
  if (!exists(pathIn(dir, file.file)))
    return std::string();
  return readArray(dir, file, array.emplace(), type);
}

} // namespace

std::string attn::gpucheck::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::optional<attnrtDType> attn::gpucheck::attnrtTypeOf(NpyElementType type) {
  switch (type) {
  case NpyElementType::F16:
    return ATTNRT_F16;
  case NpyElementType::BF16:
    return ATTNRT_BF16;
  case NpyElementType::F32:
    return ATTNRT_F32;
  case NpyElementType::Bool:
    return ATTNRT_I1;
  case NpyElementType::I8:
    return ATTNRT_I8;
  case NpyElementType::I32:
    return ATTNRT_I32;
  case NpyElementType::F64:
    return std::nullopt;
  }
  return std::nullopt;
}

bool attn::gpucheck::isReferenceCase(const std::string &dir) {
  return exists(pathIn(dir, kDescription));
}

std::string
attn::gpucheck::bundleReferenceCaseDir(const std::string &bundleDir) {
  return pathIn(bundleDir, "reference");
}

namespace {

/// Writes each array to its file in `dir`; a file whose array is null is
/// removed (a file of an earlier case would be taken for this one's).
template <size_t N>
std::string
writeArrays(const std::string &dir,
            const std::pair<ArrayFile, const NpyArray *> (&arrays)[N]) {
  for (auto [file, array] : arrays) {
    std::string path = pathIn(dir, file.file);
    if (array) {
      if (NpyError error = mlir::attn::writeNpy(path, *array); !error.empty())
        return error;
    } else if (exists(path) && ::unlink(path.c_str()) != 0) {
      return "cannot remove " + path + ": " + std::strerror(errno);
    }
  }
  return {};
}

} // namespace

std::string attn::gpucheck::writeReferenceCase(const std::string &dir,
                                               const ReferenceCase &reference) {
  if (std::string error = makeCaseDir(dir); !error.empty())
    return error;
  std::pair<ArrayFile, const NpyArray *> arrays[] = {
      {kQuery, &reference.query},
      {kKey, &reference.key},
      {kValue, &reference.value},
      {kMask, reference.mask ? &*reference.mask : nullptr},
      {kBlockMask, reference.blockMask ? &*reference.blockMask : nullptr},
      {kKeyLengths, reference.keyLengths ? &*reference.keyLengths : nullptr},
      {kOut, &reference.out.values},
      {kLse, reference.lse ? &reference.lse->values : nullptr}};
  if (std::string error = writeArrays(dir, arrays); !error.empty())
    return error;
  nlohmann::json outputs = {{"O", describeOutput(reference.out)}};
  if (reference.lse)
    outputs["LSE"] = describeOutput(*reference.lse);
  nlohmann::json description = {
      {"format", kFormat}, {"kernel", reference.kernel}, {"outputs", outputs}};
  std::string text = description.dump(2) + "\n";
  return files::writeFile(pathIn(dir, kDescription), {text});
}

std::string attn::gpucheck::readReferenceCase(const std::string &dir,
                                              ReferenceCase &reference) {
  std::string path = pathIn(dir, kDescription);
  nlohmann::json description;
  if (std::string error = readDescription(dir, description); !error.empty())
    return error;
  if (isGradientDescription(description))
    return path + ": a backward kernel's case (attn-run --backward "
                  "--write-reference), not a forward one";
  reference.kernel = description["kernel"].get<std::string>();
  nlohmann::json outputs = description.contains("outputs")
                               ? description["outputs"]
                               : nlohmann::json();
  if (std::string error = readTolerance(outputs, "O", path, reference.out);
      !error.empty())
    return error;
  bool hasLse = outputs.is_object() && outputs.contains("LSE");
  if (hasLse) {
    reference.lse.emplace();
    if (std::string error = readTolerance(outputs, "LSE", path, *reference.lse);
        !error.empty())
      return error;
  }

  // The inputs in whatever type they hold ('<V2' as bf16), the rest as the
  // kernel reads them.
  std::string error;
  if ((error = readArray(dir, kQuery, reference.query, std::nullopt)).empty() &&
      (error = readArray(dir, kKey, reference.key, std::nullopt)).empty() &&
      (error = readArray(dir, kValue, reference.value, std::nullopt)).empty() &&
      (error = readOptionalArray(dir, kMask, reference.mask, std::nullopt))
          .empty() &&
      (error = readOptionalArray(dir, kBlockMask, reference.blockMask,
                                 NpyElementType::I8))
          .empty() &&
      (error = readOptionalArray(dir, kKeyLengths, reference.keyLengths,
                                 NpyElementType::I32))
          .empty() &&
      (error = readArray(dir, kOut, reference.out.values, NpyElementType::F32))
          .empty() &&
      hasLse)
    error = readArray(dir, kLse, reference.lse->values, NpyElementType::F32);
  if (!error.empty())
    return error;
  if (!hasLse && exists(pathIn(dir, kLse.file)))
    return path + ": lse.npy is there, but outputs.LSE is not";

  // The shapes must make one attention.
  auto inconsistent = [&](const std::string &what) {
    return dir + ": not one attention: " + what;
  };
  for (auto [file, array] :
       {std::pair{kQuery, &reference.query}, std::pair{kKey, &reference.key},
        std::pair{kValue, &reference.value}}) {
    if (array->shape.size() != 4)
      return inconsistent(std::string(file.name) + " has shape " +
                          shapeText(array->shape) + ", not [B, H, S, D]");
    if (array->elementType != reference.query.elementType)
      return inconsistent("Q, K and V differ in element type");
  }
  const std::vector<int64_t> &q = reference.query.shape,
                             &k = reference.key.shape,
                             &v = reference.value.shape;
  if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] ||
      k[3] != q[3])
    return inconsistent("Q " + shapeText(q) + ", K " + shapeText(k) + ", V " +
                        shapeText(v));
  std::vector<int64_t> out = {q[0], q[1], q[2], v[3]};
  if (reference.out.values.shape != out)
    return inconsistent("O has shape " + shapeText(reference.out.values.shape) +
                        ", expected " + shapeText(out));
  if (reference.lse &&
      reference.lse->values.shape != std::vector<int64_t>{q[0], q[1], q[2]})
    return inconsistent("LSE has shape " +
                        shapeText(reference.lse->values.shape) + ", expected " +
                        shapeText({q[0], q[1], q[2]}));
  if (reference.keyLengths &&
      reference.keyLengths->shape != std::vector<int64_t>{q[0]})
    return inconsistent("the key lengths have shape " +
                        shapeText(reference.keyLengths->shape) + ", expected " +
                        shapeText({q[0]}));
  return {};
}

std::string attn::gpucheck::writeGradientCase(const std::string &dir,
                                              const GradientCase &reference) {
  if (std::string error = makeCaseDir(dir); !error.empty())
    return error;
  std::pair<ArrayFile, const NpyArray *> arrays[] = {
      {kQuery, &reference.query},
      {kKey, &reference.key},
      {kValue, &reference.value},
      {kOut, &reference.out},
      {kLse, &reference.lse},
      {kGradOut, &reference.gradOut},
      {kGradQuery, &reference.gradQuery.values},
      {kGradKey, &reference.gradKey.values},
      {kGradValue, &reference.gradValue.values},
      {kMask, reference.mask ? &*reference.mask : nullptr},
      {kBlockMask, reference.blockMask ? &*reference.blockMask : nullptr},
      {kKeyLengths, reference.keyLengths ? &*reference.keyLengths : nullptr}};
  if (std::string error = writeArrays(dir, arrays); !error.empty())
    return error;
  nlohmann::json outputs = {{"dQ", describeOutput(reference.gradQuery)},
                            {"dK", describeOutput(reference.gradKey)},
                            {"dV", describeOutput(reference.gradValue)}};
  nlohmann::json description = {{"format", kFormat},
                                {"kernel", reference.kernel},
                                {"gradient", true},
                                {"outputs", outputs}};
  return files::writeFile(pathIn(dir, kDescription),
                          {description.dump(2) + "\n"});
}

bool attn::gpucheck::isGradientCase(const std::string &dir) {
  nlohmann::json description;
  return readDescription(dir, description).empty() &&
         isGradientDescription(description);
}

std::string attn::gpucheck::readGradientCase(const std::string &dir,
                                             GradientCase &reference) {
  std::string path = pathIn(dir, kDescription);
  nlohmann::json description;
  if (std::string error = readDescription(dir, description); !error.empty())
    return error;
  if (!isGradientDescription(description))
    return path + ": a forward kernel's case, not a backward one";
  reference.kernel = description["kernel"].get<std::string>();
  nlohmann::json outputs = description.contains("outputs")
                               ? description["outputs"]
                               : nlohmann::json();
  std::string error;
  for (auto [name, output] : {std::pair{"dQ", &reference.gradQuery},
                              std::pair{"dK", &reference.gradKey},
                              std::pair{"dV", &reference.gradValue}})
    if (!(error = readTolerance(outputs, name, path, *output)).empty())
      return error;
  // The inputs as the kernel reads them ('<V2' as bf16), the gradients in
  // f32.
  for (auto [file, array] :
       {std::pair{kQuery, &reference.query}, std::pair{kKey, &reference.key},
        std::pair{kValue, &reference.value}, std::pair{kOut, &reference.out},
        std::pair{kGradOut, &reference.gradOut}})
    if (!(error = mlir::attn::readTensorNpy(pathIn(dir, file.file), *array))
             .empty())
      return error;
  for (auto [file, array] :
       {std::pair{kLse, &reference.lse},
        std::pair{kGradQuery, &reference.gradQuery.values},
        std::pair{kGradKey, &reference.gradKey.values},
        std::pair{kGradValue, &reference.gradValue.values}})
    if (!(error = mlir::attn::readNpy(pathIn(dir, file.file), *array,
                                      NpyElementType::F32))
             .empty())
      return error;
  for (auto [file, array, type] :
       {std::tuple{kMask, &reference.mask, std::optional<NpyElementType>()},
        std::tuple{kBlockMask, &reference.blockMask,
                   std::optional(NpyElementType::I8)},
        std::tuple{kKeyLengths, &reference.keyLengths,
                   std::optional(NpyElementType::I32)}})
    if (!(error = readOptionalArray(dir, file, *array, type)).empty())
      return error;
  // The shapes must make one attention's gradient.
  const std::vector<int64_t> &q = reference.query.shape,
                             &k = reference.key.shape,
                             &v = reference.value.shape;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4 || k[0] != q[0] ||
      v[0] != q[0] || v[1] != k[1] || v[2] != k[2] || k[3] != q[3])
    return dir + ": not one attention: Q " + shapeText(q) + ", K " +
           shapeText(k) + ", V " + shapeText(v);
  std::vector<int64_t> out = {q[0], q[1], q[2], v[3]};
  std::pair<const NpyArray *, std::vector<int64_t>> shapes[] = {
      {&reference.out, out},          {&reference.lse, {q[0], q[1], q[2]}},
      {&reference.gradOut, out},      {&reference.gradQuery.values, q},
      {&reference.gradKey.values, k}, {&reference.gradValue.values, v}};
  for (auto [array, shape] : shapes)
    if (array->shape != shape)
      return dir + ": not one attention's gradient: an array has shape " +
             shapeText(array->shape) + ", expected " + shapeText(shape);
  if (reference.mask) {
    const std::vector<int64_t> &mask = reference.mask->shape;
    if (mask.size() != 4 || (mask[0] != 1 && mask[0] != q[0]) ||
        (mask[1] != 1 && mask[1] != q[1]) || mask[2] != q[2] || mask[3] != k[2])
      return dir + ": the mask has shape " + shapeText(mask) +
             ", expected [B, Hq, Sq, Sk] = " +
             shapeText({q[0], q[1], q[2], k[2]}) +
             " (its batch and head dimensions may be 1)";
  }
  if (reference.blockMask) {
    // Its blocks are the kernel's to know: rank 4, leading sizes B or 1 and
    // Hq or 1.
    const std::vector<int64_t> &blocks = reference.blockMask->shape;
    if (blocks.size() != 4 || (blocks[0] != 1 && blocks[0] != q[0]) ||
        (blocks[1] != 1 && blocks[1] != q[1]))
      return dir + ": the block mask has shape " + shapeText(blocks) +
             ", expected [B, Hq, Nq, Nk] with B = " + std::to_string(q[0]) +
             " and Hq = " + std::to_string(q[1]) + " (or 1)";
  }
  if (reference.keyLengths &&
      reference.keyLengths->shape != std::vector<int64_t>{q[0]})
    return dir + ": the key lengths have shape " +
           shapeText(reference.keyLengths->shape) + ", expected " +
           shapeText({q[0]});
  return {};
}

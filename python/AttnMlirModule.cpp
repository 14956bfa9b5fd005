//===- AttnMlirModule.cpp - Python bindings over the C API ----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn_mlir._attn_mlir: the C API (include/attn-c/Attn.h) for Python, with
// NumPy arrays in and out, and kernel bundles for a GPU as text.
// attn_mlir/__init__.py builds the user-facing calls on it.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace py = pybind11;

namespace {

/// The C API's error message as a Python exception (CompilerError, set up
/// by the package).
[[noreturn]] void raise(char *error) {
  std::string message = error ? error : "unknown error";
  attnStringFree(error);
  throw std::runtime_error(message);
}

using Pair = std::optional<std::pair<int64_t, int64_t>>;

/// `text` for a C string argument `name`: a NUL inside would cut it short
/// without a word.
const std::string &checkNoNul(const std::string &text, const char *name) {
  if (text.find('\0') != std::string::npos)
    throw py::value_error(std::string(name) + " holds a NUL character");
  return text;
}

/// An attention as the package describes it (shapes of Q and K, Dv, the
/// element type's name, the options, and the masks' element type, leading
/// sizes and blocks), in the C API's terms.
class Spec {
public:
  Spec(const std::vector<int64_t> &query, const std::vector<int64_t> &key,
       int64_t valueDim, std::string dtype, bool causal, Pair window,
       std::optional<float> scale, std::optional<float> softcap, bool withLse,
       bool keyLengths, std::optional<std::string> maskDtype, Pair maskShape,
       Pair blockSize, Pair blockMaskShape, bool runTimeLengths)
      : dtype(checkNoNul(dtype, "dtype")), maskDtype(std::move(maskDtype)) {
    if (this->maskDtype)
      checkNoNul(*this->maskDtype, "mask_dtype");
    if (query.size() != 4 || key.size() != 4)
      throw std::invalid_argument("Q and K must be [B, H, S, D]");
    spec.batch = query[0];
    spec.query_heads = query[1];
    spec.query_len = query[2];
    spec.head_dim = query[3];
    spec.kv_heads = key[1];
    spec.key_len = key[2];
    spec.value_dim = valueDim;
    spec.causal = causal;
    spec.has_window = window.has_value();
    if (window) {
      spec.window_left = window->first;
      spec.window_right = window->second;
    }
    spec.has_scale = scale.has_value();
    spec.scale = scale.value_or(0);
    spec.has_softcap = softcap.has_value();
    spec.softcap = softcap.value_or(0);
    spec.with_lse = withLse;
    spec.key_lengths = keyLengths;
    spec.run_time_lengths = runTimeLengths;
    if (this->maskDtype.has_value() != maskShape.has_value() ||
        blockSize.has_value() != blockMaskShape.has_value())
      throw std::invalid_argument("a mask needs its dtype and shape, a block "
                                  "mask its block size and shape");
    if (maskShape)
      std::tie(spec.mask_batch, spec.mask_heads) = *maskShape;
    if (blockSize) {
      std::tie(spec.block_rows, spec.block_keys) = *blockSize;
      std::tie(spec.block_mask_batch, spec.block_mask_heads) = *blockMaskShape;
    }
  }

  /// The C spec, pointing into this object.
  const AttnAttentionSpec *get() {
    spec.dtype = dtype.c_str();
    spec.out_dtype = dtype.c_str();
    spec.mask_dtype = maskDtype ? maskDtype->c_str() : nullptr;
    return &spec;
  }
  bool withLse() const { return spec.with_lse; }
  int64_t heads() const { return spec.query_heads; }
  int64_t valueDim() const { return spec.value_dim; }

private:
  std::string dtype;
  std::optional<std::string> maskDtype;
  AttnAttentionSpec spec{};
};

/// A compiled attention for one shape, element type and set of options.
class CpuAttention {
public:
  explicit CpuAttention(Spec spec)
      : withLse(spec.withLse()), heads(spec.heads()),
        valueDim(spec.valueDim()) {
    char *error = nullptr;
    handle = attnCpuAttentionCompile(spec.get(), &error);
    if (!handle)
      raise(error);
  }
  ~CpuAttention() { attnCpuAttentionDestroy(handle); }
  CpuAttention(const CpuAttention &) = delete;
  CpuAttention &operator=(const CpuAttention &) = delete;

  /// O (and LSE) of contiguous arrays of the compiled types and the shapes
  /// that `lengths` (B, Sq, Sk) give them, with the mask, the block mask
  /// (int8) and key lengths ([B] int32) when it was compiled with them (the
  /// C API refuses a mismatch; the package checks the shapes).
  py::object run(std::tuple<int64_t, int64_t, int64_t> lengths, py::array q,
                 py::array k, py::array v, std::optional<py::array> mask,
                 std::optional<py::array_t<int8_t>> blockMask,
                 std::optional<py::array_t<int32_t>> keyLengths) {
    AttnAttentionLengths run;
    std::tie(run.batch, run.query_len, run.key_len) = lengths;
    py::array out(q.dtype(), std::vector<int64_t>{run.batch, heads,
                                                  run.query_len, valueDim});
    py::array_t<float> lse(
        std::vector<int64_t>{run.batch, heads, run.query_len});
    char *error = nullptr;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = attnCpuAttentionRun(
          handle, &run, q.data(), k.data(), v.data(),
          mask ? mask->data() : nullptr,
          blockMask ? blockMask->data() : nullptr,
          keyLengths ? keyLengths->data() : nullptr, out.mutable_data(),
          withLse ? lse.mutable_data() : nullptr, &error);
    }
    if (!ok)
      raise(error);
    if (withLse)
      return py::make_tuple(out, lse);
    return out;
  }

private:
  bool withLse;
  int64_t heads, valueDim;
  AttnCpuAttentionRef handle = nullptr;
};

/// The compiled gradient of an attention for one shape, element type and
/// set of options.
class CpuAttentionGrad {
public:
  CpuAttentionGrad(Spec spec, bool maskGrad, bool deterministic)
      : maskGrad(maskGrad) {
    char *error = nullptr;
    handle = attnCpuAttentionGradCompile(spec.get(), maskGrad, deterministic,
                                         &error);
    if (!handle)
      raise(error);
  }
  ~CpuAttentionGrad() { attnCpuAttentionGradDestroy(handle); }
  CpuAttentionGrad(const CpuAttentionGrad &) = delete;
  CpuAttentionGrad &operator=(const CpuAttentionGrad &) = delete;

  /// (dQ, dK, dV[, dMask]) of contiguous arrays: Q, K, V, the masks and
  /// lengths as CpuAttention::run takes them, O and dO of O's shape and
  /// type, LSE f32; dMask (with mask_grad) has the mask's shape and type.
  py::tuple run(std::tuple<int64_t, int64_t, int64_t> lengths, py::array q,
                py::array k, py::array v, py::array o,
                py::array_t<float> lse, py::array gradOut,
                std::optional<py::array> mask,
                std::optional<py::array_t<int8_t>> blockMask,
                std::optional<py::array_t<int32_t>> keyLengths) {
    AttnAttentionLengths run;
    std::tie(run.batch, run.query_len, run.key_len) = lengths;
    auto like = [](const py::array &x) {
      return py::array(x.dtype(),
                       std::vector<int64_t>(x.shape(), x.shape() + x.ndim()));
    };
    py::array dq = like(q), dk = like(k), dv = like(v);
    std::optional<py::array> dmask;
    if (maskGrad) {
      if (!mask)
        throw py::value_error("the gradient of the mask needs the mask");
      dmask = like(*mask);
    }
    char *error = nullptr;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = attnCpuAttentionGradRun(
          handle, &run, q.data(), k.data(), v.data(), o.data(), lse.data(),
          gradOut.data(), mask ? mask->data() : nullptr,
          blockMask ? blockMask->data() : nullptr,
          keyLengths ? keyLengths->data() : nullptr, dq.mutable_data(),
          dk.mutable_data(), dv.mutable_data(),
          dmask ? dmask->mutable_data() : nullptr, &error);
    }
    if (!ok)
      raise(error);
    if (dmask)
      return py::make_tuple(dq, dk, dv, *dmask);
    return py::make_tuple(dq, dk, dv);
  }

private:
  bool maskGrad;
  AttnCpuAttentionGradRef handle = nullptr;
};

/// The kernel bundle (manifest JSON, PTX) of `spec` for a GPU, or with
/// `gradient` that of its gradient.
std::pair<std::string, std::string>
compileGpu(Spec spec, const std::string &chip, int64_t sms,
           int64_t smemPerBlock, bool gradient) {
  AttnGpuTarget target{checkNoNul(chip, "chip").c_str(), sms, smemPerBlock};
  char *manifest = nullptr, *ptx = nullptr, *error = nullptr;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = (gradient ? attnGpuAttentionGradCompile : attnGpuAttentionCompile)(
        spec.get(), &target, &manifest, &ptx, &error);
  }
  if (!ok)
    raise(error);
  std::pair<std::string, std::string> bundle(manifest, ptx);
  attnStringFree(manifest);
  attnStringFree(ptx);
  return bundle;
}

std::string runPipeline(const std::string &module,
                        const std::string &pipeline) {
  char *error = nullptr;
  checkNoNul(module, "module");
  checkNoNul(pipeline, "pipeline");
  char *result;
  {
    py::gil_scoped_release release;
    result = attnRunPipeline(module.c_str(), pipeline.c_str(), &error);
  }
  if (!result)
    raise(error);
  std::string text(result);
  attnStringFree(result);
  return text;
}

} // namespace

PYBIND11_MODULE(_attn_mlir, m) {
  m.doc() = "attn-mlir's C API for Python (use the attn_mlir package)";
  py::class_<Spec>(m, "Spec").def(
      py::init<std::vector<int64_t>, std::vector<int64_t>, int64_t, std::string,
               bool, Pair, std::optional<float>, std::optional<float>, bool,
               bool, std::optional<std::string>, Pair, Pair, Pair, bool>(),
      py::arg("query_shape"), py::arg("key_shape"), py::arg("value_dim"),
      py::arg("dtype"), py::arg("causal"), py::arg("window"), py::arg("scale"),
      py::arg("softcap"), py::arg("with_lse"), py::arg("key_lengths"),
      py::arg("mask_dtype"), py::arg("mask_shape"), py::arg("block_size"),
      py::arg("block_mask_shape"), py::arg("run_time_lengths"));
  py::class_<CpuAttention>(m, "CpuAttention")
      .def(py::init<Spec>(), py::arg("spec"))
      .def("run", &CpuAttention::run, py::arg("lengths"), py::arg("q"),
           py::arg("k"), py::arg("v"),
           py::arg("mask") = py::none(), py::arg("block_mask") = py::none(),
           py::arg("key_lengths") = py::none());
  py::class_<CpuAttentionGrad>(m, "CpuAttentionGrad")
      .def(py::init<Spec, bool, bool>(), py::arg("spec"), py::arg("mask_grad"),
           py::arg("deterministic"))
      .def("run", &CpuAttentionGrad::run, py::arg("lengths"), py::arg("q"),
           py::arg("k"), py::arg("v"), py::arg("o"), py::arg("lse"),
           py::arg("grad_out"), py::arg("mask") = py::none(),
           py::arg("block_mask") = py::none(),
           py::arg("key_lengths") = py::none());
  m.def("compile_gpu", &compileGpu, py::arg("spec"), py::arg("chip"),
        py::arg("sms"), py::arg("smem_per_block"), py::arg("gradient") = false,
        "The kernel bundle of `spec` for a GPU, or with `gradient` of its "
        "gradient: (manifest JSON, PTX text)");
  m.def("run_pipeline", &runPipeline, py::arg("module"), py::arg("pipeline"),
        "Parse `module` (MLIR text), run the textual pass pipeline, return "
        "the result as text");
}

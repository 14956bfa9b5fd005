//===- AttnMlirModule.cpp - Python bindings over the C API ----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn_mlir._attn_mlir: the C API (include/attn-c/Attn.h) for Python, with
// NumPy arrays in and out. attn_mlir/__init__.py builds the user-facing
// calls on it.
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

namespace py = pybind11;

namespace {

/// The C API's error message as a Python exception (CompilerError, set up
/// by the package).
[[noreturn]] void raise(char *error) {
  std::string message = error ? error : "unknown error";
  attnStringFree(error);
  throw std::runtime_error(message);
}

/// A compiled attention for one shape, element type and set of options.
class CpuAttention {
public:
  CpuAttention(std::vector<int64_t> query, std::vector<int64_t> key,
               int64_t valueDim, std::string dtype, bool causal,
               std::optional<std::pair<int64_t, int64_t>> window,
               std::optional<float> scale, std::optional<float> softcap,
               bool withLse)
      : dtype(std::move(dtype)), withLse(withLse) {
    if (query.size() != 4 || key.size() != 4)
      throw std::invalid_argument("Q and K must be [B, H, S, D]");
    AttnAttentionSpec spec{};
    spec.batch = query[0];
    spec.heads = query[1];
    spec.seq_q = query[2];
    spec.head_dim = query[3];
    spec.kv_heads = key[1];
    spec.seq_k = key[2];
    spec.value_dim = valueDim;
    spec.dtype = this->dtype.c_str();
    spec.out_dtype = this->dtype.c_str();
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
    outShape = {query[0], query[1], query[2], valueDim};
    char *error = nullptr;
    handle = attnCpuAttentionCompile(&spec, &error);
    if (!handle)
      raise(error);
  }
  ~CpuAttention() { attnCpuAttentionDestroy(handle); }
  CpuAttention(const CpuAttention &) = delete;
  CpuAttention &operator=(const CpuAttention &) = delete;

  /// O (and LSE) of contiguous arrays of the compiled shapes and type.
  py::object run(py::array q, py::array k, py::array v) {
    py::array out(q.dtype(), outShape);
    py::array_t<float> lse(
        std::vector<int64_t>(outShape.begin(), outShape.end() - 1));
    char *error = nullptr;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = attnCpuAttentionRun(handle, q.data(), k.data(), v.data(),
                               out.mutable_data(),
                               withLse ? lse.mutable_data() : nullptr, &error);
    }
    if (!ok)
      raise(error);
    if (withLse)
      return py::make_tuple(out, lse);
    return out;
  }

private:
  std::string dtype;
  bool withLse;
  std::vector<py::ssize_t> outShape;
  AttnCpuAttentionRef handle = nullptr;
};

std::string runPipeline(const std::string &module,
                        const std::string &pipeline) {
  char *error = nullptr;
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
  py::class_<CpuAttention>(m, "CpuAttention")
      .def(py::init<std::vector<int64_t>, std::vector<int64_t>, int64_t,
                    std::string, bool,
                    std::optional<std::pair<int64_t, int64_t>>,
                    std::optional<float>, std::optional<float>, bool>(),
           py::arg("query_shape"), py::arg("key_shape"), py::arg("value_dim"),
           py::arg("dtype"), py::arg("causal"), py::arg("window"),
           py::arg("scale"), py::arg("softcap"), py::arg("with_lse"))
      .def("run", &CpuAttention::run);
  m.def("run_pipeline", &runPipeline, py::arg("module"), py::arg("pipeline"),
        "Parse `module` (MLIR text), run the textual pass pipeline, return "
        "the result as text");
}

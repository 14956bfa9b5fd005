"""attn-mlir from Python: exact attention compiled by attn-mlir.

    import numpy as np, attn_mlir
    o = attn_mlir.attention(q, k, v, causal=True)          # NumPy in, NumPy out
    o, lse = attn_mlir.attention(q, k, v, return_lse=True)
    text = attn_mlir.run_pipeline(module_text, "builtin.module(attn-to-cpu)")

`attention` is shaped like PyTorch's scaled_dot_product_attention: Q is
[B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv]; it compiles once per
shape, dtype and options (cached) and runs on the CPU. Compiler errors raise
CompilerError with the diagnostics.
"""

import numpy as _np

from . import _attn_mlir

__all__ = ["attention", "run_pipeline", "CompilerError"]


class CompilerError(RuntimeError):
    """attn-mlir rejected the input or failed; the message holds the diagnostics."""


_DTYPES = {_np.dtype(_np.float32): "f32", _np.dtype(_np.float16): "f16"}
_cache = {}


def _contiguous(name, array, dtype):
    array = _np.asarray(array)
    if array.ndim != 4:
        raise ValueError(f"{name} must be [B, H, S, D], got shape {array.shape}")
    if array.dtype != dtype:
        raise ValueError(f"{name} is {array.dtype}, Q is {dtype}: give Q, K and V one dtype")
    return _np.ascontiguousarray(array)


def attention(query, key, value, *, causal=False, scale=None, window=None,
              softcap=None, enable_gqa=False, return_lse=False):
    """softmax(scale * Q K^T) V, as torch.nn.functional.scaled_dot_product_attention.

    causal: bottom-right aligned (the last query sees every key); scale:
    default 1/sqrt(D); window: (left, right) sliding window; softcap:
    softcap * tanh(s / softcap); enable_gqa: allow Hq a multiple of Hkv;
    return_lse: also return the natural log-sum-exp [B, Hq, Sq] (float32).
    float32 and float16 arrays (NumPy has no bfloat16).
    """
    q = _np.asarray(query)
    if q.dtype not in _DTYPES:
        raise ValueError(f"Q is {q.dtype}: attn_mlir takes float32 or float16 arrays")
    q = _contiguous("Q", q, q.dtype)
    k = _contiguous("K", key, q.dtype)
    v = _contiguous("V", value, q.dtype)
    if k.shape[1] != q.shape[1] and not enable_gqa:
        raise ValueError(f"Q has {q.shape[1]} heads and K {k.shape[1]}: pass enable_gqa=True for grouped-query attention")
    if window is not None:
        window = (int(window[0]), int(window[1]))
    key_ = (q.shape, k.shape, v.shape[3], q.dtype.str, bool(causal), window,
            None if scale is None else float(scale),
            None if softcap is None else float(softcap), bool(return_lse))
    compiled = _cache.get(key_)
    if compiled is None:
        try:
            compiled = _attn_mlir.CpuAttention(
                list(q.shape), list(k.shape), v.shape[3], _DTYPES[q.dtype],
                bool(causal), window, None if scale is None else float(scale),
                None if softcap is None else float(softcap), bool(return_lse))
        except RuntimeError as error:
            raise CompilerError(str(error)) from None
        _cache[key_] = compiled
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(f"V {v.shape} does not match K {k.shape}")
    try:
        return compiled.run(q, k, v)
    except RuntimeError as error:
        raise CompilerError(str(error)) from None


def run_pipeline(module, pipeline):
    """Run a textual pass pipeline (e.g. "builtin.module(attn-to-cpu)") on MLIR text."""
    try:
        return _attn_mlir.run_pipeline(module, pipeline)
    except RuntimeError as error:
        raise CompilerError(str(error)) from None

"""attn-mlir from Python: exact attention compiled by attn-mlir.

    import numpy as np, attn_mlir
    o = attn_mlir.attention(q, k, v, causal=True)          # NumPy in, NumPy out
    o, lse = attn_mlir.attention(q, k, v, return_lse=True)
    o = attn_mlir.attention(tq, tk, tv)                    # torch in, torch out
    text = attn_mlir.run_pipeline(module_text, "builtin.module(attn-to-cpu)")

`attention` is shaped like PyTorch's scaled_dot_product_attention: Q is
[B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv]. NumPy arrays and torch
CPU tensors run on the CPU; torch CUDA tensors run on their GPU through a
kernel bundle and libattnrt. Each attention compiles once per shape, dtype,
options (and GPU), cached in the process; save_bundles / load_bundles carry
the GPU's bundles to a machine without the compiler. Compiler errors raise
CompilerError with the diagnostics, GPU runtime errors GpuError.
"""

import threading

import numpy as _np

from . import _gpu
from ._errors import CompilerError, GpuError
from ._spec import compiler as _compiler, make_spec as _make_spec, padded_shape as _padded_shape

__all__ = ["attention", "run_pipeline", "precompile", "save_bundles",
           "load_bundles", "CompilerError", "GpuError"]

# Spec -> the compiled CPU attention.
_cache = {}
_lock = threading.Lock()


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _check_one_dtype(q, k, v):
    for name, x in (("K", k), ("V", v)):
        if x.dtype != q.dtype:
            raise ValueError(f"{name} is {x.dtype}, Q is {q.dtype}: give Q, K and V one dtype")


def attention(query, key, value, attn_mask=None, *, causal=False, scale=None,
              window=None, softcap=None, enable_gqa=False, return_lse=False,
              key_lengths=None, block_mask=None, block_size=None):
    """softmax(scale * Q K^T + mask) V, as torch.nn.functional.scaled_dot_product_attention.

    attn_mask: broadcastable to [B, Hq, Sq, Sk], bool (True keeps the score)
    or float32, float16 or bfloat16 added to the score (of any of these
    dtypes, whatever Q's; NumPy float64 is taken as float32); causal:
    bottom-right aligned (the last query sees every key); scale: default
    1/sqrt(D); window: (left, right) sliding window; softcap:
    softcap * tanh(s / softcap); enable_gqa: allow Hq a multiple of Hkv;
    return_lse: also return the natural log-sum-exp [B, Hq, Sq] (float32);
    key_lengths: [B] integers, sequence b attending to its first
    key_lengths[b] keys (clamped to [0, Sk]) with its causal and window masks
    aligned to that length, as FlashAttention's cache_seqlens; block_mask
    with block_size=(rows, keys): block sparsity (FlexAttention's
    BlockMask), integers [B or 1, Hq or 1, ceil(Sq / rows), ceil(Sk / keys)],
    0 an empty block (its scores hidden and never computed), 2 a full one
    (attn_mask not applied there), any other value (and True) a partial one.
    A row that sees no key gives O = 0 and LSE = -inf (SDPA gives NaN).

    NumPy float32 or float16 arrays, or torch float32, float16 or bfloat16
    tensors (all three of one kind and dtype), give the same kind and dtype
    back. Torch tensors on a CUDA device run there (contiguous, 16-byte
    aligned tensors are read in place; others are copied on the device).
    """
    options = dict(causal=causal, scale=scale, window=window, softcap=softcap,
                   enable_gqa=enable_gqa, return_lse=return_lse,
                   block_size=block_size)
    operands = dict(key_lengths=key_lengths, attn_mask=attn_mask, block_mask=block_mask)
    if _is_torch(query):
        return _torch_attention(query, key, value, operands, options)
    q, k, v = (_np.asarray(x) for x in (query, key, value))
    lengths, mask, blocks = (None if x is None else _np.asarray(x)
                             for x in (key_lengths, attn_mask, block_mask))
    if lengths is not None and lengths.dtype.kind not in "iu":
        raise ValueError(f"key_lengths must be integers, got {lengths.dtype}")
    if mask is not None and mask.dtype == _np.float64:
        mask = mask.astype(_np.float32)
    if blocks is not None and blocks.dtype.kind not in "biu":
        raise ValueError(f"block_mask must hold integers or booleans, got {blocks.dtype}")
    spec = _make_spec(q.shape, k.shape, v.shape, q.dtype.name,
                      key_lengths=None if lengths is None else lengths.shape,
                      attn_mask=None if mask is None else (mask.shape, mask.dtype.name),
                      block_mask=None if blocks is None else blocks.shape, **options)
    if spec.dtype == "bf16":
        raise ValueError("NumPy has no bfloat16: pass torch tensors")
    _check_one_dtype(q, k, v)
    if mask is not None:
        mask = _np.broadcast_to(mask.reshape(_padded_shape(mask.shape)), spec.mask_full_shape())
    if blocks is not None:
        blocks = _np.clip(blocks.reshape(spec.block_mask_full_shape()).astype(_np.int64),
                          -128, 127).astype(_np.int8)
    return _cpu_run(spec, q, k, v, lengths, mask, blocks)


def _int32_lengths(lengths, seq_k):
    """Key lengths as the kernels' int32, clamped to [0, Sk] as the kernels
    do (so that no value wraps)."""
    return _np.ascontiguousarray(_np.clip(lengths, 0, seq_k).astype(_np.int32))


def _cpu_run(spec, q, k, v, lengths=None, mask=None, blocks=None):
    """Runs `spec` on the CPU on NumPy arrays (bfloat16 as 16-bit patterns)."""
    with _lock:
        compiled = _cache.get(spec)
    if compiled is None:
        native = _compiler()
        try:
            compiled = native.CpuAttention(spec.native())
        except RuntimeError as error:
            raise CompilerError(str(error)) from None
        with _lock:
            _cache[spec] = compiled
    q, k, v, mask, blocks = (None if x is None else _np.ascontiguousarray(x)
                             for x in (q, k, v, mask, blocks))
    try:
        return compiled.run(q, k, v, mask, blocks,
                            None if lengths is None else _int32_lengths(lengths, spec.key_shape[2]))
    except RuntimeError as error:
        raise CompilerError(str(error)) from None


def _torch_operands(query, operands):
    """Checks the optional tensors of a call on torch tensors: torch, on Q's
    device, of the kinds each takes."""
    import torch
    def integral(x):
        return not (x.dtype.is_floating_point or x.dtype.is_complex)
    accepts = {"key_lengths": ("integers", integral),
               "attn_mask": ("bool or floating point values",
                             lambda x: x.dtype == torch.bool or x.dtype.is_floating_point),
               "block_mask": ("integers or booleans", integral)}
    for name, x in operands.items():
        if x is None:
            continue
        kind, accepted = accepts[name]
        if not _is_torch(x) or not accepted(x):
            raise ValueError(f"{name} must be a torch tensor of {kind} when Q is a torch tensor")
        if x.device != query.device:
            raise ValueError(f"{name} is on {x.device}, Q on {query.device}")


def _torch_attention(query, key, value, operands, options):
    import torch
    for name, x in (("K", key), ("V", value)):
        if not _is_torch(x):
            raise ValueError(f"Q is a torch tensor and {name} is {type(x).__name__}: give three of one kind")
    _check_one_dtype(query, key, value)
    _torch_operands(query, operands)
    lengths, mask, blocks = (operands[name] for name in ("key_lengths", "attn_mask", "block_mask"))
    if mask is not None and mask.dtype == torch.float64:
        mask = mask.float()
    spec = _make_spec(query.shape, key.shape, value.shape,
                      str(query.dtype).replace("torch.", ""),
                      key_lengths=None if lengths is None else lengths.shape,
                      attn_mask=None if mask is None else (
                          mask.shape, str(mask.dtype).replace("torch.", "")),
                      block_mask=None if blocks is None else blocks.shape, **options)
    if lengths is not None:
        # Clamped to [0, Sk] as the kernels do, so that no value wraps.
        lengths = lengths.to(torch.int64).clamp(0, spec.key_shape[2]).to(torch.int32)
    if mask is not None:
        mask = mask.reshape(_padded_shape(mask.shape)).expand(spec.mask_full_shape())
    if blocks is not None:
        blocks = blocks.reshape(spec.block_mask_full_shape()).to(torch.int64).clamp(-128, 127).to(torch.int8)
    if query.device.type == "cuda":
        return _gpu.attention(spec, query, key, value, lengths, mask, blocks)
    if query.device.type != "cpu":
        raise ValueError(f"attn_mlir runs on the CPU and on CUDA devices, not {query.device}")
    # bfloat16 crosses as its 16-bit patterns.
    def host(x):
        if x is None:
            return None
        x = x.detach().contiguous()
        return (x.view(torch.int16) if x.dtype == torch.bfloat16 else x).numpy()
    def back(x, dtype):
        t = torch.from_numpy(x)
        return t.view(dtype) if t.dtype != dtype else t
    result = _cpu_run(spec, *(host(x) for x in (query, key, value, lengths, mask, blocks)))
    if spec.with_lse:
        return back(result[0], query.dtype), torch.from_numpy(result[1])
    return back(result, query.dtype)


def precompile(query_shape, key_shape, value_shape, dtype, *, chip, sms,
               smem_per_block, causal=False, scale=None, window=None,
               softcap=None, enable_gqa=False, return_lse=False,
               key_lengths=False, attn_mask=None, block_mask=None,
               block_size=None):
    """Compiles the GPU kernel that attention() would run for tensors of these
    shapes and dtype ("float16", "bfloat16", "float32"), with key lengths
    when key_lengths is true, with a mask of attn_mask = (shape, dtype)
    ("bool", "float32", ...) and a block mask of shape block_mask and blocks
    block_size when given, on a GPU of this chip ("sm_90"), SM count and
    opt-in shared memory per block, without that GPU; save_bundles then
    writes it. Returns the manifest (JSON text).
    """
    spec = _make_spec(query_shape, key_shape, value_shape, dtype,
                      causal=causal, scale=scale, window=window,
                      softcap=softcap, enable_gqa=enable_gqa,
                      return_lse=return_lse,
                      key_lengths=query_shape[:1] if key_lengths else None,
                      attn_mask=attn_mask, block_mask=block_mask,
                      block_size=block_size)
    return _gpu.compile_bundle(spec, _gpu.Target(chip, int(sms), int(smem_per_block)))[0]


def save_bundles(directory):
    """Writes the GPU bundles compiled in this process under DIRECTORY
    (one folder each); returns how many."""
    return _gpu.save_bundles(directory)


def load_bundles(directory):
    """Reads bundles save_bundles wrote: their attentions then run without
    the compiler (e.g. on a GPU machine without LLVM/MLIR); returns how many."""
    return _gpu.load_bundles(directory)


def run_pipeline(module, pipeline):
    """Run a textual pass pipeline (e.g. "builtin.module(attn-to-cpu)") on MLIR text."""
    try:
        return _compiler().run_pipeline(module, pipeline)
    except RuntimeError as error:
        if isinstance(error, CompilerError):
            raise
        raise CompilerError(str(error)) from None

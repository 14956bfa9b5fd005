"""attn-mlir from Python: exact attention compiled by attn-mlir.

    import numpy as np, attn_mlir
    o = attn_mlir.attention(q, k, v, causal=True)          # NumPy in, NumPy out
    o, lse = attn_mlir.attention(q, k, v, return_lse=True)
    o = attn_mlir.attention(tq, tk, tv)                    # torch in, torch out
    text = attn_mlir.run_pipeline(module_text, "builtin.module(attn-to-cpu)")

`attention` is shaped like PyTorch's scaled_dot_product_attention: Q is
[B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv] (or [B, S, D], one
head). NumPy arrays and torch CPU tensors run on the CPU, compiled once per
head counts, head dimensions, dtype and options (any batch and lengths);
torch CUDA tensors run on their GPU through a kernel bundle and libattnrt,
compiled once per shape. Compiled attentions are cached in the process (the
CPU's least recently used beyond CACHE_SIZE are dropped; cache_info,
clear_cache); save_bundles / load_bundles carry the GPU's bundles to a
machine without the compiler. Bad arguments raise ValueError naming the
argument, compiler errors CompilerError with the diagnostics, GPU runtime
errors GpuError.
"""

import collections
import math
import os
import threading

import numpy as _np

from . import _gpu
from ._errors import CompilerError, GpuError
from ._spec import compiler as _compiler, make_spec as _make_spec, padded_shape as _padded_shape
from ._spec import text as _text

__all__ = ["attention", "run_pipeline", "precompile", "save_bundles",
           "load_bundles", "cache_info", "clear_cache", "CACHE_SIZE",
           "CompilerError", "GpuError"]

# How many compiled CPU attentions are kept (each holds its machine code and
# an MLIR context, a few MB).
CACHE_SIZE = 64
# Spec.without_lengths() -> the compiled CPU attention, least recently used
# first.
_cache = collections.OrderedDict()
_lock = threading.Lock()
_counts = {"hits": 0, "misses": 0}
CacheInfo = collections.namedtuple("CacheInfo", "hits misses size max_size gpu_bundles")


def cache_info():
    """CPU compilations reused (hits) and made (misses), how many are kept
    (size, at most max_size), and the GPU bundles held."""
    with _lock:
        return CacheInfo(_counts["hits"], _counts["misses"], len(_cache), CACHE_SIZE,
                         _gpu.bundle_count())


def clear_cache():
    """Drops every compiled attention: the CPU's, and the GPU bundles
    compiled or loaded in this process with their loaded kernels."""
    with _lock:
        _cache.clear()
        _counts.update(hits=0, misses=0)
    _gpu.clear()


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _check_one_dtype(q, k, v):
    for name, x in (("K", k), ("V", v)):
        if x.dtype != q.dtype:
            raise ValueError(f"{name} is {x.dtype}, Q is {q.dtype}: give Q, K and V one dtype")


def _rank(x):
    """The number of dimensions of an array, tensor or nested list."""
    return len(x.shape) if hasattr(x, "shape") else _np.ndim(x)


def attention(query, key, value, attn_mask=None, *, causal=False, scale=None,
              window=None, softcap=None, enable_gqa=False, return_lse=False,
              key_lengths=None, block_mask=None, block_size=None,
              deterministic=False):
    """softmax(scale * Q K^T + mask) V, as torch.nn.functional.scaled_dot_product_attention.

    query [B, Hq, Sq, D], key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv], or
    all three [B, S, D] (one head; masks then [B, Sq, Sk] and block masks
    [B, rows, keys], outputs without the head dimension). Sk may be 0 (an
    empty cache: O = 0, LSE = -inf).
    attn_mask: broadcastable to [B, Hq, Sq, Sk], bool (True keeps the score)
    or float32, float16 or bfloat16 added to the score (of any of these
    dtypes, whatever Q's; NumPy float64 is taken as float32); causal:
    bottom-right aligned (the last query sees every key); scale: default
    1/sqrt(D); window: (left, right) sliding window, -1 an unbounded side
    (FlashAttention's window_size); softcap: softcap * tanh(s / softcap), 0
    or None none; enable_gqa: allow Hq a multiple of Hkv;
    return_lse: also return the natural log-sum-exp [B, Hq, Sq] (float32);
    key_lengths: [B] integers, sequence b attending to its first
    key_lengths[b] keys (clamped to [0, Sk]) with its causal and window masks
    aligned to that length, as FlashAttention's cache_seqlens; block_mask
    with block_size=(rows, keys): block sparsity (FlexAttention's
    BlockMask), integers [B or 1, Hq or 1, ceil(Sq / rows), ceil(Sk / keys)],
    0 an empty block (its scores hidden and never computed), 2 a full one
    (attn_mask not applied there), any other value (and True) a partial one.
    A row that sees no key gives O = 0 and LSE = -inf (SDPA gives NaN).

    NumPy float32 or float16 arrays (either byte order; the result is in
    the machine's), or torch float32, float16 or bfloat16 tensors (all
    three of one kind and dtype), give the same kind and dtype back. Torch
    tensors on a CUDA device run there (contiguous, 16-byte aligned tensors
    are read in place; others are copied on the device).

    Autograd: on CPU torch tensors, the result is differentiable with
    respect to query, key, value and a float attn_mask (attn.attention_grad,
    FlashAttention-2's backward: the forward keeps O and LSE, the backward
    recomputes P; a mask's gradient is summed over the dimensions it was
    broadcast along); deterministic=True asks for gradients that are the
    same bytes run to run (the CPU's always are). On CUDA tensors, with
    respect to query, key and value, through the GPU's backward kernel
    (float16 and bfloat16, key_lengths, attn_mask, block_mask with blocks of
    multiples of 64; no gradient of attn_mask: what it does not take raises
    CompilerError at the call), whose
    gradients are always the same bytes run to run. The returned LSE is not
    differentiable.
    """
    if not isinstance(deterministic, bool):
        raise ValueError(f"deterministic must be True or False, got {deterministic!r}")
    options = dict(causal=causal, scale=scale, window=window, softcap=softcap,
                   enable_gqa=enable_gqa, return_lse=return_lse,
                   block_size=block_size)
    operands = dict(key_lengths=key_lengths, attn_mask=attn_mask, block_mask=block_mask)
    ranks = [_rank(x) for x in (query, key, value)]
    if ranks == [3, 3, 3]:
        return _one_head(query, key, value, operands, options, deterministic)
    if _is_torch(query):
        return _torch_attention(query, key, value, operands, options, deterministic)
    for name, x in (("K", key), ("V", value)):
        if _is_torch(x):
            raise ValueError(f"Q is {type(query).__name__} and {name} a torch tensor: "
                             "give three of one kind")
    q, k, v = (_native(_np.asarray(x)) for x in (query, key, value))
    lengths, mask, blocks = (None if x is None else _native(_np.asarray(x))
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
    if spec.key_shape[2] == 0:
        return _empty_keys(spec, lambda shape: _np.zeros(shape, q.dtype),
                           lambda shape: _np.full(shape, -_np.inf, _np.float32))
    _check_memory(spec, q.itemsize)
    if mask is not None:
        mask = _np.broadcast_to(mask.reshape(_padded_shape(mask.shape)), spec.mask_full_shape())
    if blocks is not None:
        blocks = _np.clip(blocks.reshape(spec.block_mask_full_shape()).astype(_np.int64),
                          -128, 127).astype(_np.int8)
    return _cpu_run(spec, q, k, v, lengths, mask, blocks)


def _check_memory(spec, item_size):
    """Refuses a CPU attention whose operands (made contiguous) and outputs
    cannot fit in this machine's memory, before anything is allocated (as
    attn-run does): ValueError rather than MemoryError midway."""
    sizes = {"Q": (spec.query_shape, item_size), "K": (spec.key_shape, item_size),
             "V": (spec.key_shape[:3] + (spec.value_dim,), item_size),
             "O": (spec.out_shape(), item_size), "LSE": (spec.lse_shape(), 4)}
    if spec.mask_dtype is not None:
        sizes["attn_mask"] = (spec.mask_full_shape(), 1 if spec.mask_dtype == "i1" else 4)
    total = sum(math.prod(shape) * size for shape, size in sizes.values())
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return
    if total > memory:
        shapes = ", ".join(f"{name} {list(shape)}" for name, (shape, _) in sizes.items())
        raise ValueError(f"{shapes} need {total / 2**30:.1f} GiB; this machine has "
                         f"{memory / 2**30:.1f} GiB")


def _native(array):
    """`array` in the machine's byte order (a big-endian array converted,
    never read as little-endian)."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def _one_head(query, key, value, operands, options, deterministic):
    """attention() on [B, S, D] inputs: one head ([B, 1, S, D]); masks of
    [B, Sq, Sk] (block masks [B, rows, keys]) get their head dimension."""
    def head(x, axis=1):
        if _is_torch(x):
            return x.unsqueeze(axis)
        return _np.expand_dims(_np.asarray(x), axis)
    def mask_head(x, name):
        if x is None:
            return None
        rank = _rank(x)
        if not 2 <= rank <= 3:
            raise ValueError(f"{name} of a [B, S, D] attention must have 2 or 3 dimensions, "
                             f"got {rank}")
        return head(x, rank - 2)
    operands = dict(operands, attn_mask=mask_head(operands["attn_mask"], "attn_mask"),
                    block_mask=mask_head(operands["block_mask"], "block_mask"))
    result = attention(head(query), head(key), head(value), operands["attn_mask"],
                       key_lengths=operands["key_lengths"], block_mask=operands["block_mask"],
                       deterministic=deterministic, **options)
    if isinstance(result, tuple):
        return tuple(x[:, 0] for x in result)
    return result[:, 0]


def _empty_keys(spec, zeros, minus_infinity):
    """O = 0 (and LSE = -inf) of an attention over no keys."""
    o = zeros(spec.out_shape())
    return (o, minus_infinity(spec.lse_shape())) if spec.with_lse else o


def _int32_lengths(lengths, seq_k):
    """Key lengths as the kernels' int32, clamped to [0, Sk] as the kernels
    do (so that no value wraps)."""
    return _np.ascontiguousarray(_np.clip(lengths, 0, seq_k).astype(_np.int32))


def _cached(key, compile):
    """The compiled object under `key` in the CPU cache, made by compile()
    on a miss (CompilerError when compiling fails)."""
    with _lock:
        compiled = _cache.get(key)
        if compiled is not None:
            _cache.move_to_end(key)
            _counts["hits"] += 1
            return compiled
    try:
        compiled = compile()
    except RuntimeError as error:
        raise CompilerError(str(error)) from None
    with _lock:
        _counts["misses"] += 1
        _cache[key] = compiled
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def _compiled(spec):
    """The CPU attention serving `spec`'s head counts, head dimensions,
    dtype and options at any batch and lengths, compiled once."""
    return _cached(spec.without_lengths(), lambda: _compiler().CpuAttention(
        spec.native(run_time_lengths=True)))


def _compiled_grad(spec, mask_grad, deterministic):
    """The CPU gradient serving `spec` at any batch and lengths (with the
    mask's when mask_grad), compiled once (in the same cache as the
    attentions)."""
    return _cached(("grad", spec.without_lengths(), mask_grad, deterministic),
                   lambda: _compiler().CpuAttentionGrad(
                       spec.native(run_time_lengths=True), mask_grad, deterministic))


def _cpu_run(spec, q, k, v, lengths=None, mask=None, blocks=None):
    """Runs `spec` on the CPU on NumPy arrays (bfloat16 as 16-bit patterns)."""
    compiled = _compiled(spec)
    q, k, v, mask, blocks = (None if x is None else _np.ascontiguousarray(x)
                             for x in (q, k, v, mask, blocks))
    try:
        return compiled.run(spec.lengths(), q, k, v, mask, blocks,
                            None if lengths is None else _int32_lengths(lengths, spec.key_shape[2]))
    except RuntimeError as error:
        raise CompilerError(str(error)) from None


def _torch_operands(query, operands):
    """Checks the optional tensors of a call on torch tensors: torch, on Q's
    device, of the kinds each takes; key lengths given as a list or an
    array become a tensor on Q's device."""
    import torch
    def integral(x):
        return not (x.dtype.is_floating_point or x.dtype.is_complex)
    lengths = operands["key_lengths"]
    if lengths is not None and not _is_torch(lengths):
        lengths = _np.asarray(lengths)
        if lengths.dtype.kind not in "iu":
            raise ValueError(f"key_lengths must be integers, got {lengths.dtype}")
        # Clamped below 2^62 first, so that no unsigned value wraps.
        operands = dict(operands, key_lengths=torch.as_tensor(
            _np.minimum(_native(lengths), 2 ** 62).astype(_np.int64), device=query.device))
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
    return operands


def _torch_attention(query, key, value, operands, options, deterministic):
    import torch
    for name, x in (("K", key), ("V", value)):
        if not _is_torch(x):
            raise ValueError(f"Q is a torch tensor and {name} is {type(x).__name__}: give three of one kind")
    _check_one_dtype(query, key, value)
    operands = _torch_operands(query, operands)
    lengths, mask, blocks = (operands[name] for name in ("key_lengths", "attn_mask", "block_mask"))
    differentiable = torch.is_grad_enabled() and any(
        x is not None and x.requires_grad for x in (query, key, value, mask))
    if mask is not None and mask.dtype == torch.float64:
        mask = mask.float()
    spec = _make_spec(query.shape, key.shape, value.shape,
                      str(query.dtype).replace("torch.", ""),
                      key_lengths=None if lengths is None else lengths.shape,
                      attn_mask=None if mask is None else (
                          mask.shape, str(mask.dtype).replace("torch.", "")),
                      block_mask=None if blocks is None else blocks.shape, **options)
    if query.device.type not in ("cpu", "cuda"):
        raise ValueError(f"attn_mlir runs on the CPU and on CUDA devices, not {query.device}")
    if spec.key_shape[2] == 0:
        return _empty_keys(
            spec, lambda shape: torch.zeros(shape, dtype=query.dtype, device=query.device),
            lambda shape: torch.full(shape, -float("inf"), device=query.device))
    if query.device.type == "cpu":
        _check_memory(spec, query.element_size())
    if lengths is not None:
        # Clamped to [0, Sk] as the kernels do, so that no value wraps.
        lengths = lengths.to(torch.int64).clamp(0, spec.key_shape[2]).to(torch.int32)
    if mask is not None:
        mask = mask.reshape(_padded_shape(mask.shape)).expand(spec.mask_full_shape())
    if blocks is not None:
        blocks = blocks.reshape(spec.block_mask_full_shape()).to(torch.int64).clamp(-128, 127).to(torch.int8)
    if differentiable and query.device.type == "cuda":
        _check_gpu_gradient(spec, query, mask)
    if differentiable:
        o, lse = _differentiable_attention()(
            query, key, value, spec, lengths, mask, blocks, deterministic)
        return (o, lse) if spec.with_lse else o
    if query.device.type == "cuda":
        return _gpu.attention(spec, query, key, value, lengths, mask, blocks)
    result = _cpu_run(spec, *(_host(x) for x in (query, key, value, lengths, mask, blocks)))
    if spec.with_lse:
        return _from_host(result[0], query.dtype), torch.from_numpy(result[1])
    return _from_host(result, query.dtype)


def _check_gpu_gradient(spec, query, mask):
    """Loads the backward kernel of `spec` on Q's device before the forward
    runs, so that an attention the GPU's backward pass does not take is
    refused at the call (a result cut off from autograd would lose the
    gradient without a word)."""
    if mask is not None and mask.requires_grad:
        raise CompilerError(
            f"attn_mask requires grad on {query.device}, and the GPU's backward pass computes "
            "no mask gradient: run it on CPU tensors, or pass attn_mask.detach()")
    try:
        _gpu.load_gradient(spec, query)
    except CompilerError as error:
        raise CompilerError(
            f"query, key, value or attn_mask requires grad on {query.device}, and the GPU's "
            f"backward pass does not take this attention ({error}); run it on CPU tensors, "
            "or under torch.no_grad()") from None


def _host(x):
    """A torch CPU tensor as a contiguous NumPy array (bfloat16 as its 16-bit
    patterns), or None."""
    import torch
    if x is None:
        return None
    x = x.detach().contiguous()
    return (x.view(torch.int16) if x.dtype == torch.bfloat16 else x).numpy()


def _from_host(x, dtype):
    """A NumPy result as a torch tensor of `dtype` (bfloat16 from its 16-bit
    patterns)."""
    import torch
    t = torch.from_numpy(x)
    return t.view(dtype) if t.dtype != dtype else t


_autograd_function = None


def _differentiable_attention():
    """attention() on CPU torch tensors as a torch.autograd.Function: the
    forward keeps O and LSE, the backward runs attn.attention_grad on them.
    Made on first use, so that importing attn_mlir does not import torch."""
    global _autograd_function
    if _autograd_function is None:
        _autograd_function = _make_autograd_function()
    return _autograd_function.apply


def _make_autograd_function():
    import torch

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, query, key, value, spec, lengths, mask, blocks, deterministic):
            if query.device.type == "cuda":
                # The GPU's backward kernel gives no mask gradient
                # (_check_gpu_gradient); the key lengths (clamped), the mask
                # (expanded) and the block mask are kept on the device.
                o, lse = _gpu.attention(spec._replace(with_lse=True), query, key, value,
                                        lengths, mask, blocks)
                ctx.operands, fixed = (lengths, mask, blocks), None
            else:
                # The masks and lengths are the call's own copies
                # (expanded, clamped), kept as they went in.
                fixed = [_host(x) for x in (lengths, mask, blocks)]
                o, lse = _cpu_run(spec._replace(with_lse=True),
                                  *(_host(x) for x in (query, key, value)), *fixed)
                o, lse = _from_host(o, query.dtype), torch.from_numpy(lse)
            ctx.spec, ctx.deterministic, ctx.fixed = spec, deterministic, fixed
            ctx.mask_dtype = None if mask is None else mask.dtype
            ctx.save_for_backward(query, key, value, o, lse)
            ctx.mark_non_differentiable(lse)
            return o, lse

        @staticmethod
        def backward(ctx, grad_out, _grad_lse):
            if ctx.fixed is None:
                q, k, v, o, lse = ctx.saved_tensors
                # Deterministic whatever was asked: no CTA accumulates
                # into what another writes.
                dq, dk, dv = _gpu.attention_grad(ctx.spec, q, k, v, o, lse, grad_out.to(q.dtype),
                                                 *ctx.operands)
                return dq, dk, dv, None, None, None, None, None
            q, k, v, o, lse = (_host(x) for x in ctx.saved_tensors)
            lengths, mask, blocks = ctx.fixed
            dtype = ctx.saved_tensors[0].dtype
            mask_grad = ctx.needs_input_grad[5]
            compiled = _compiled_grad(ctx.spec, mask_grad, ctx.deterministic)
            try:
                grads = compiled.run(ctx.spec.lengths(), q, k, v, o, lse,
                                     _host(grad_out.to(dtype)), mask, blocks, lengths)
            except RuntimeError as error:
                raise CompilerError(str(error)) from None
            dq, dk, dv = (_from_host(x, dtype) for x in grads[:3])
            dmask = _from_host(grads[3], ctx.mask_dtype) if mask_grad else None
            return dq, dk, dv, None, None, dmask, None, None

    return Attention


def precompile(query_shape, key_shape, value_shape, dtype, *, chip, sms,
               smem_per_block, causal=False, scale=None, window=None,
               softcap=None, enable_gqa=False, return_lse=False,
               key_lengths=False, attn_mask=None, block_mask=None,
               block_size=None, backward=False):
    """Compiles the GPU kernel that attention() would run for tensors of these
    shapes and dtype ("float16", "bfloat16", "float32"), with key lengths
    when key_lengths is true, with a mask of attn_mask = (shape, dtype)
    ("bool", "float32", ...) and a block mask of shape block_mask and blocks
    block_size when given, on a GPU of this chip ("sm_90"), SM count and
    opt-in shared memory per block, without that GPU; save_bundles then
    writes it. Returns the manifest (JSON text).

    backward=True compiles what a call whose inputs require grad runs: the
    forward kernel with the LSE its backward pass reads, and the backward
    kernel; it returns the backward kernel's manifest.
    """
    spec = _make_spec(query_shape, key_shape, value_shape, dtype,
                      causal=causal, scale=scale, window=window,
                      softcap=softcap, enable_gqa=enable_gqa,
                      return_lse=return_lse,
                      key_lengths=bool(key_lengths),
                      attn_mask=attn_mask, block_mask=block_mask,
                      block_size=block_size)
    if spec.key_shape[2] == 0:
        raise ValueError("Sk = 0 needs no kernel: attention() returns O = 0 without one")
    if not isinstance(backward, bool):
        raise ValueError(f"backward must be True or False, got {backward!r}")
    target = _gpu.Target.checked(chip, sms, smem_per_block)
    if not backward:
        return _gpu.compile_bundle(spec, target)[0]
    _gpu.compile_bundle(spec._replace(with_lse=True), target)
    return _gpu.compile_bundle(spec, target, gradient=True)[0]


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
    module, pipeline = _text("module", module), _text("pipeline", pipeline)
    try:
        return _compiler().run_pipeline(module, pipeline)
    except RuntimeError as error:
        if isinstance(error, CompilerError):
            raise
        raise CompilerError(str(error)) from None

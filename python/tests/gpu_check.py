"""attn_mlir.attention on a CUDA GPU: the Python step of the one-call GPU
check (scripts/gpu-check.sh).

    gpu_check.py prepare DIR   # here, with the compiler: each case's kernel
                               # bundle for an H100/H200 (sm_90a, 132 SMs,
                               # 227 KiB per block), saved in DIR
    gpu_check.py run DIR       # on the GPU machine, without the compiler:
                               # loads DIR and runs every case on torch CUDA
                               # tensors, and the gradients of
                               # GRADIENT_CASES through torch autograd
    gpu_check.py prepare-emulated DIR
                               # the same cases' bundles at the PTX
                               # emulator's sizes, which
                               # scripts/emulator-check.sh runs with
                               # attn-launch (masks and key lengths sampled
                               # there)

Each case is checked against PyTorch in float64 on the GPU with the CPU
backend's rule (docs/attn-run.md): the relative L2 error of O (and of the
log-sum-exp) at most twice that of a naive attention computed in the same
16-bit format (PyTorch's matmuls: products rounded to it, sums in f32), and
at least 1e-5. The gradient cases' dQ, dK and dV are held to the same rule
against torch autograd of the same two attentions (FlashAttention's
backward test), and a second backward pass must give the same bytes.
"""
import math
import os
import sys

import attn_mlir

# The GPU the bundles are prepared for, as the package names it: an H100
# SXM or an H200 (compute capability 9.0: sm_90a).
TARGET = dict(chip="sm_90a", sms=132, smem_per_block=232448)

# name: (B, Hq, Hkv, Sq, Sk, D, Dv, dtype, options). Split-KV with packed
# GQA heads for the decode shapes (the cost model's choice for 132 SMs).
CASES = {
    "prefill_causal": (2, 8, 8, 512, 512, 128, 128, "bfloat16", dict(causal=True)),
    "prefill_gqa_lse": (1, 16, 4, 1000, 1000, 64, 64, "float16",
                        dict(causal=True, enable_gqa=True, return_lse=True)),
    "window_softcap": (1, 4, 4, 300, 700, 64, 64, "bfloat16",
                       dict(window=(128, 0), softcap=30.0, scale=0.1)),
    "mla_dims": (1, 8, 8, 256, 256, 192, 128, "bfloat16", dict(causal=True)),
    "decode_gqa": (4, 32, 8, 1, 8192, 128, 128, "bfloat16",
                   dict(enable_gqa=True, return_lse=True)),
    "spec_decode": (2, 16, 2, 4, 3000, 128, 128, "float16",
                    dict(causal=True, enable_gqa=True)),
    # Per-sequence cache lengths (one empty, one past Sk).
    "decode_key_lengths": (4, 32, 8, 1, 8192, 128, 128, "bfloat16",
                           dict(enable_gqa=True, return_lse=True,
                                key_lengths=[8192, 1000, 0, 9000])),
    # Masks as (shape, dtype), made at random on the GPU: a bool one per
    # sequence under a block mask (empty, full and partial blocks, random),
    # and a bfloat16 bias shared by every sequence and head.
    "bool_mask_blocks": (2, 8, 2, 500, 1000, 96, 96, "bfloat16",
                         dict(enable_gqa=True, return_lse=True,
                              attn_mask=((2, 1, 500, 1000), "bool"),
                              block_mask=(2, 8, 4, 8), block_size=(128, 128))),
    "additive_mask": (1, 4, 4, 256, 700, 64, 64, "float16",
                      dict(causal=True, attn_mask=((256, 700), "bfloat16"))),
    # Blocks smaller than the table's tiles: 16 x 48 tiles of one warp.
    "small_blocks": (2, 4, 4, 300, 500, 64, 64, "float16",
                     dict(causal=True, block_mask=(1, 4, 7, 11), block_size=(48, 48))),
}


# Training shapes for the GPU's backward kernel (attention() on inputs that
# require grad: the forward with LSE, then the backward kernel).
GRADIENT_CASES = {
    "grad_gqa_causal": (2, 16, 4, 1024, 1024, 128, 128, "bfloat16",
                        dict(causal=True, enable_gqa=True)),
    "grad_window_softcap": (1, 8, 8, 500, 700, 64, 64, "float16",
                            dict(window=(128, 0), softcap=30.0)),
    # Per-sequence key lengths (one empty), causal, aligned to each.
    "grad_key_lengths": (3, 8, 2, 512, 1024, 128, 128, "bfloat16",
                         dict(causal=True, enable_gqa=True, key_lengths=[1024, 0, 700])),
    # Masks (made at random on the GPU, as CASES'): a bool one per sequence
    # under a block mask per query head, and a float32 bias per query head
    # under a causal mask.
    "grad_bool_mask_blocks": (2, 8, 2, 500, 800, 64, 64, "bfloat16",
                              dict(enable_gqa=True, attn_mask=((2, 1, 500, 800), "bool"),
                                   block_mask=(2, 8, 4, 7), block_size=(128, 128))),
    "grad_additive_mask": (1, 4, 4, 384, 640, 128, 128, "float16",
                           dict(causal=True, attn_mask=((1, 4, 384, 640), "float32"))),
}


def emulated(case):
    """CASE at the PTX emulator's sizes (benchmarks/gpu/sweep.py's rule:
    one or two sequences, at most two key/value heads with the GQA ratio
    kept, shorter lengths), its masks' shapes following."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "benchmarks", "gpu"))
    import sweep
    b, hq, hkv, sq, sk, d, dv, dtype, options = case
    small_b = b if "key_lengths" in options else min(b, 2)
    small_hkv = min(hkv, 2)
    small_hq = small_hkv * (hq // hkv)
    small_sq = sweep.emulated_length(sq)
    small_sk = sweep.emulated_length(sk, 512 if sq <= 8 else 128)
    options = dict(options)
    follow = lambda n, full, small: small if n == full else n
    if "attn_mask" in options:
        shape, mask_type = options["attn_mask"]
        lead = [follow(shape[0], b, small_b), follow(shape[1], hq, small_hq)] if len(shape) == 4 else []
        options["attn_mask"] = (tuple(lead + [small_sq, small_sk]), mask_type)
    if "block_mask" in options:
        rows, keys = options["block_size"]
        blocks = options["block_mask"]
        options["block_mask"] = (follow(blocks[0], b, small_b), follow(blocks[1], hq, small_hq),
                                 -(-small_sq // rows), -(-small_sk // keys))
    return small_b, small_hq, small_hkv, small_sq, small_sk, d, dv, dtype, options


def prepare(directory, cases=None, gradient_cases=()):
    for backward, group in ((False, cases or CASES.values()), (True, gradient_cases)):
        for b, hq, hkv, sq, sk, d, dv, dtype, options in group:
            options = dict(options, key_lengths="key_lengths" in options)
            attn_mlir.precompile((b, hq, sq, d), (b, hkv, sk, d), (b, hkv, sk, dv),
                                 dtype, **TARGET, **options, backward=backward)
    print(f"{attn_mlir.save_bundles(directory)} bundles for {TARGET} in {directory}")


def reference(torch, q, k, v, dtype, causal=False, window=None, softcap=None,
              scale=None, enable_gqa=False, return_lse=False, key_lengths=None,
              attn_mask=None, block_mask=None, block_size=None):
    """O and LSE in DTYPE's arithmetic (float64, or the naive 16-bit one);
    with key lengths, each sequence over its first keys (an empty one: O = 0,
    LSE = -inf); a bool mask keeps scores, another is added; a block mask's
    0 hides its block and its 2 drops the mask there."""
    scale = scale or 1 / math.sqrt(q.shape[3])
    if key_lengths is not None:
        parts = [reference(torch, q[b:b + 1], k[b:b + 1, :, :n], v[b:b + 1, :, :n], dtype,
                           causal, window, softcap, scale)
                 for b, n in enumerate(max(0, min(n, k.shape[2])) for n in key_lengths)]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    if k.shape[2] == 0:
        return (torch.zeros(*q.shape[:3], v.shape[3], dtype=torch.float64, device=q.device),
                torch.full(q.shape[:3], float("-inf"), dtype=torch.float64, device=q.device))
    q, k, v = (x.to(dtype) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    sq, sk = q.shape[2], k.shape[2]
    s = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    rows = torch.arange(sq, device=q.device)[:, None] + sk - sq
    keys = torch.arange(sk, device=q.device)[None, :]
    visible = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if causal:
        visible &= keys <= rows
    if window:
        visible &= (keys >= rows - window[0]) & (keys <= rows + window[1])
    full = torch.zeros_like(visible)
    if block_mask is not None:
        blocks = block_mask.repeat_interleave(block_size[0], 2).repeat_interleave(block_size[1], 3)
        blocks = blocks[:, :, :sq, :sk]
        visible, full = visible & (blocks != 0), blocks == 2
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        visible = visible & (attn_mask | full)
    elif attn_mask is not None:
        s = s + attn_mask.to(s.dtype).masked_fill(full, 0)
    s = s.masked_fill(~visible, float("-inf"))
    # The softmax in f32 for the 16-bit formats, as PyTorch's own kernels.
    p = torch.softmax(s if dtype == torch.float64 else s.float(), -1)
    # A row that sees no key: O = 0 (the softmax gives NaN).
    p = p.masked_fill(~visible.any(-1, keepdim=True), 0).to(dtype)
    return (p @ v).double(), torch.logsumexp(s.double(), -1)


def relative_error(x, ref):
    """Relative L2 error over the finite entries of REF (an empty
    sequence's LSE is -inf), which must be where X's are."""
    finite = ref.isfinite()
    if not (x.isfinite() == finite).all():
        return math.inf
    x, ref = x.double()[finite], ref[finite]
    return ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def call_options(torch, generator, options):
    """A case's options as attention() takes them: key lengths a tensor,
    masks given as (shape, dtype) made at random on the GPU (a bool mask
    keeps about 80% of the scores, a float one is normal), a block mask's
    shape filled with 0, 1 and 2."""
    call = dict(options)
    if "key_lengths" in call:
        call["key_lengths"] = torch.tensor(call["key_lengths"], device="cuda")
    if "attn_mask" in call:
        shape, mask_type = call["attn_mask"]
        if mask_type == "bool":
            call["attn_mask"] = torch.rand(*shape, generator=generator, device="cuda") < 0.8
        else:
            call["attn_mask"] = torch.randn(*shape, generator=generator,
                                            device="cuda").to(getattr(torch, mask_type))
    if "block_mask" in call:
        call["block_mask"] = torch.randint(0, 3, call["block_mask"], generator=generator,
                                           device="cuda", dtype=torch.int8)
    return call


def run(directory):
    import torch
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    print(f"{attn_mlir.load_bundles(directory)} bundles loaded from {directory}; "
          f"device: {torch.cuda.get_device_name()}")
    generator = torch.Generator(device="cuda").manual_seed(0)
    failed = 0
    for name, (b, hq, hkv, sq, sk, d, dv, dtype, options) in CASES.items():
        dt = getattr(torch, dtype)
        def normal(*shape):
            return torch.randn(*shape, generator=generator, device="cuda").to(dt)
        q, k, v = normal(b, hq, sq, d), normal(b, hkv, sk, d), normal(b, hkv, sk, dv)
        # One case reads Q through a non-contiguous view (copied on the
        # device) and runs on a side stream.
        if name == "window_softcap":
            q = normal(b, sq, hq, d).transpose(1, 2)
        stream = torch.cuda.Stream() if name == "window_softcap" else torch.cuda.current_stream()
        call = call_options(torch, generator, options)
        with torch.cuda.stream(stream):
            out = attn_mlir.attention(q, k, v, **call)
        stream.synchronize()
        o, lse = out if options.get("return_lse") else (out, None)
        masks = {name: call[name] for name in ("attn_mask", "block_mask") if name in call}
        ref_o, ref_lse = reference(torch, q, k, v, torch.float64, **dict(options, **masks))
        naive_o, naive_lse = reference(torch, q, k, v, dt, **dict(options, **masks))
        bound = 2 * max(relative_error(naive_o, ref_o), 5e-6)
        errors = [("O", relative_error(o, ref_o), bound)]
        if lse is not None:
            errors.append(("LSE", relative_error(lse, ref_lse),
                           2 * max(relative_error(naive_lse, ref_lse), 5e-6)))
        ok = o.dtype == dt and o.shape == (b, hq, sq, dv) and all(e <= t for _, e, t in errors)
        failed += not ok
        print(f"{name}: {'PASS' if ok else 'FAIL'} " +
              " ".join(f"{what} rel L2 {e:.2e} (bound {t:.2e})" for what, e, t in errors))
    for name, case in GRADIENT_CASES.items():
        failed += not check_gradient(torch, generator, name, case)
    total = len(CASES) + len(GRADIENT_CASES)
    print(f"{total - failed} of {total} passed")
    return 1 if failed else 0


def check_gradient(torch, generator, name, case):
    """dQ, dK and dV of attention() through torch autograd on the GPU
    against autograd of the float64 attention, within twice the error of
    the naive one in the same format; a second backward pass the same
    bytes."""
    b, hq, hkv, sq, sk, d, dv, dtype, options = case
    dt = getattr(torch, dtype)
    q, k, v, grad_out = (torch.randn(*shape, generator=generator, device="cuda").to(dt)
                         for shape in ((b, hq, sq, d), (b, hkv, sk, d), (b, hkv, sk, dv),
                                       (b, hq, sq, dv)))

    def gradients(attend, dtype):
        leaves = [x.detach().to(dtype).requires_grad_() for x in (q, k, v)]
        attend(*leaves).backward(grad_out.to(dtype))
        return [x.grad for x in leaves]

    call = call_options(torch, generator, options)
    masks = {name: call[name] for name in ("attn_mask", "block_mask") if name in call}
    naive = lambda precision: lambda *x: reference(torch, *x, precision,  # noqa: E731
                                                   **dict(options, **masks))[0]
    ours = lambda *x: attn_mlir.attention(*x, **call)  # noqa: E731
    got, again = gradients(ours, dt), gradients(ours, dt)
    exact, same_format = gradients(naive(torch.float64), torch.float64), gradients(naive(dt), dt)
    errors = [(f"d{what}", relative_error(x, ref), 2 * max(relative_error(y, ref), 5e-6))
              for what, x, y, ref in zip("QKV", got, same_format, exact)]
    repeat = all(torch.equal(x.view(torch.int16), y.view(torch.int16)) for x, y in zip(got, again))
    ok = repeat and all(e <= t for _, e, t in errors)
    print(f"{name}: {'PASS' if ok else 'FAIL'} " +
          " ".join(f"{what} rel L2 {e:.2e} (bound {t:.2e})" for what, e, t in errors) +
          f" repeat {'bitwise' if repeat else 'DIFFERS'}")
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("prepare", "prepare-emulated", "run"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], gradient_cases=GRADIENT_CASES.values())
    elif sys.argv[1] == "prepare-emulated":
        prepare(sys.argv[2], [emulated(case) for case in CASES.values()])
    else:
        sys.exit(run(sys.argv[2]))

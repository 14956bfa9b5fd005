"""The GPU's backward pass from the package without a GPU: the gradient's
kernel bundle compiled by the C API, saved and read back, and run with the
forward (with LSE) on the PTX emulator under libattnrt, against torch
autograd of a float64 attention. The torch-CUDA calling path (the autograd
function on CUDA tensors) runs in the GPU check (gpu_check.py's
GRADIENT_CASES)."""
import json

import pytest

import attn_mlir
from attn_mlir import _gpu

H100 = dict(chip="sm_90", sms=132, smem_per_block=232448)
SHAPES = ((1, 4, 100, 64), (1, 2, 150, 64), (1, 2, 150, 64))


def test_precompile_backward_compiles_both_kernels():
    """backward=True compiles the forward with LSE and the backward kernel
    of the nine tensors, and returns the backward kernel's manifest."""
    _gpu.clear()
    manifest = json.loads(attn_mlir.precompile(*SHAPES, "bfloat16", causal=True,
                                               enable_gqa=True, backward=True, **H100))
    (kernel,) = manifest["kernels"]
    assert kernel["gradient"] is True
    assert [(p["name"], p["type"], p["shape"]) for p in kernel["params"]] == [
        ("Q", "bf16", [1, 4, 100, 64]), ("K", "bf16", [1, 2, 150, 64]),
        ("V", "bf16", [1, 2, 150, 64]), ("O", "bf16", [1, 4, 100, 64]),
        ("LSE", "f32", [1, 4, 100]), ("dO", "bf16", [1, 4, 100, 64]),
        ("dQ", "bf16", [1, 4, 100, 64]), ("dK", "bf16", [1, 2, 150, 64]),
        ("dV", "bf16", [1, 2, 150, 64])]
    # A key/value CTA per 64 keys of each key/value head, a query CTA per 64
    # rows of each query head.
    assert kernel["grid"] == [2 * 3 + 4 * 2, 1, 1]
    forward = [bundle for (spec, _, gradient), bundle in _gpu._bundles.items() if not gradient]
    assert len(forward) == 1 and '"LSE"' in forward[0][0]


def test_precompile_backward_with_a_mask():
    """A mask is the backward kernel's parameter after dV, in the forward's
    shape and type, as the forward's is after O."""
    _gpu.clear()
    manifest = json.loads(attn_mlir.precompile(*SHAPES, "float16", enable_gqa=True,
                                               attn_mask=((1, 1, 100, 150), "bool"),
                                               key_lengths=True, backward=True, **H100))
    (kernel,) = manifest["kernels"]
    assert [(p["name"], p["type"], p["shape"]) for p in kernel["params"]][8:] == [
        ("dV", "f16", [1, 2, 150, 64]), ("mask", "i1", [1, 1, 100, 150]),
        ("key_lengths", "i32", [1])]


def test_mask_requiring_grad_is_refused_for_the_gpu():
    """The GPU's backward kernel computes no mask gradient: a mask that
    requires grad is refused before anything runs, not left without one."""
    import torch
    spec = attn_mlir._spec.make_spec(*SHAPES, "float16", causal=False, scale=None, window=None,
                                     softcap=None, enable_gqa=True, return_lse=False,
                                     attn_mask=((1, 1, 100, 150), "float32"))
    mask = torch.zeros(1, 1, 100, 150, requires_grad=True)
    with pytest.raises(attn_mlir.CompilerError, match="attn_mask requires grad on cpu, and the "
                                                      "GPU's backward pass computes no mask "
                                                      "gradient"):
        attn_mlir._check_gpu_gradient(spec, torch.zeros(SHAPES[0]), mask)


@pytest.mark.parametrize("options, refusal", [
    (dict(block_mask=(4, 3), block_size=(32, 64)),
     "needs block-mask blocks whose rows and keys are multiples of 64"),
])
def test_precompile_backward_refuses_what_the_kernel_does_not_take(options, refusal):
    with pytest.raises(attn_mlir.CompilerError, match=refusal):
        attn_mlir.precompile(*SHAPES, "float16", enable_gqa=True, backward=True, **H100,
                             **options)
    with pytest.raises(ValueError, match="backward must be True or False"):
        attn_mlir.precompile(*SHAPES, "float16", enable_gqa=True, backward=1, **H100)


def test_gradient_bundle_reads_back_and_is_labelled(tmp_path):
    """A saved gradient bundle reads back as a gradient; one labelled as a
    forward bundle is refused."""
    _gpu.clear()
    attn_mlir.precompile(*SHAPES, "float16", softcap=20.0, enable_gqa=True, backward=True,
                         **H100)
    assert attn_mlir.save_bundles(tmp_path) == 2
    _gpu.clear()
    assert attn_mlir.load_bundles(tmp_path) == 2
    assert sorted(gradient for _, _, gradient in _gpu._bundles) == [False, True]
    (folder,) = [f for f in tmp_path.iterdir()
                 if json.loads((f / "attention.json").read_text())["gradient"]]
    described = json.loads((folder / "attention.json").read_text())
    (folder / "attention.json").write_text(json.dumps(dict(described, gradient=False)))
    with pytest.raises(ValueError, match="attention.json says gradient False, the manifest's "
                                         "kernel True"):
        attn_mlir.load_bundles(tmp_path)
    (folder / "attention.json").write_text(json.dumps(dict(described, gradient="yes")))
    with pytest.raises(ValueError, match="gradient must be true or false"):
        attn_mlir.load_bundles(tmp_path)


# On the emulator (ATTNRT_LIBCUDA=emulator, an H100 to the package): the
# package compiles the forward with LSE and the backward kernel for the
# emulated device, the test puts torch CPU tensors into the emulator's
# device memory, and launches both kernels as attn_mlir's autograd does on
# CUDA tensors (GPU memory stands in for torch's CUDA tensors).
EMULATED = """
import ctypes, math, os, sys
import torch
import attn_mlir
from attn_mlir import _gpu, _runtime
from attn_mlir._spec import make_spec

device = _runtime.device(0)
emulator = ctypes.CDLL(os.path.join(os.path.dirname(_runtime._load()._name), "libattnemu.so"))
dtypes = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", torch.int32: "i32",
          torch.bool: "i1", torch.int8: "i8"}

def on_device(x):
    x = x.contiguous()
    pointer = ctypes.c_uint64()
    assert emulator.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(x.numel() * x.element_size())) == 0
    assert emulator.cuMemcpyHtoD_v2(pointer, ctypes.c_void_p(x.data_ptr()),
                                    ctypes.c_size_t(x.numel() * x.element_size())) == 0
    return x, _runtime.Tensor.of(pointer.value, dtypes[x.dtype], list(x.shape), list(x.stride()))

def from_device(tensor, like):
    out = torch.empty_like(like)
    assert emulator.cuMemcpyDtoH_v2(ctypes.c_void_p(out.data_ptr()), ctypes.c_uint64(tensor.data),
                                    ctypes.c_size_t(out.numel() * out.element_size())) == 0
    return out

CASE
lengths, mask, blocks = options.get("key_lengths"), options.get("mask"), options.get("blocks")
spec = make_spec(q.shape, k.shape, v.shape, str(q.dtype)[6:], causal=options.get("causal", False),
                 scale=None, window=options.get("window"), softcap=options.get("softcap"),
                 enable_gqa=True, return_lse=True, key_lengths=lengths is not None,
                 attn_mask=None if mask is None else (mask.shape, str(mask.dtype)[6:]),
                 block_mask=None if blocks is None else blocks.shape,
                 block_size=options.get("block_size"))
inputs = dict(Q=q, K=k, V=v, dO=grad_out)
if lengths is not None:
    inputs["key_lengths"] = torch.tensor(lengths, dtype=torch.int32)
if mask is not None:
    inputs["mask"] = mask
if blocks is not None:
    inputs["block_mask"] = blocks
args = {name: on_device(x) for name, x in inputs.items()}
o_like = torch.empty(spec.out_shape(), dtype=q.dtype)
for name, like in (("O", o_like), ("LSE", torch.empty(spec.lse_shape())), ("dQ", q), ("dK", k),
                   ("dV", v)):
    args[name] = on_device(torch.full_like(like, float("nan")))
tensors = {name: arg for name, (_, arg) in args.items()}
forward = _gpu._kernel(spec, device)
forward.launch({n: tensors[n] for n in forward.param_names}, 0)
backward = _gpu._kernel(spec, device, gradient=True)
print("backward kernel", backward.param_names)
grads = []
for _ in range(2):
    backward.launch(tensors, 0)
    grads.append([from_device(tensors[n], like) for n, like in (("dQ", q), ("dK", k), ("dV", v))])

def attend(q, k, v):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if options.get("softcap"):
        s = options["softcap"] * torch.tanh(s / options["softcap"])
    b, _, sq, sk = s.shape
    # Each sequence's keys: its key length's first ones, its masks aligned
    # to that length.
    n = torch.tensor(lengths if lengths is not None else [sk] * b).view(b, 1, 1, 1)
    rows = torch.arange(sq)[:, None] + n - sq
    keys = torch.arange(sk)[None, :]
    hidden = keys >= n
    # A block mask's 0 hides its block, its 2 drops the mask there.
    full = torch.zeros_like(hidden)
    if blocks is not None:
        rows_in, keys_in = options["block_size"]
        status = blocks.repeat_interleave(rows_in, 2).repeat_interleave(keys_in, 3)[:, :, :sq, :sk]
        hidden, full = hidden | (status == 0), status == 2
    # A boolean mask's False hides a key, an additive mask's -inf does.
    if mask is not None and mask.dtype == torch.bool:
        hidden = hidden | (~mask & ~full)
    elif mask is not None:
        hidden = hidden | ((mask == -math.inf) & ~full)
        s = s + mask.masked_fill((mask == -math.inf) | full, 0).to(s.dtype)
    if options.get("causal"):
        hidden = hidden | (keys > rows)
    if options.get("window"):
        left, right = options["window"]
        hidden = hidden | (keys < rows - left) | (keys > rows + right)
    # A row that sees no key gives 0 (its scores kept finite, so that its
    # gradient is 0 rather than NaN).
    empty = hidden.all(-1, keepdim=True)
    s = s.masked_fill(hidden & ~empty, -math.inf)
    p = torch.softmax(s if s.dtype == torch.float64 else s.float(), -1).masked_fill(hidden, 0.0)
    return p.to(s.dtype) @ v

def gradients(dtype):
    leaves = [x.to(dtype).requires_grad_() for x in (q, k, v)]
    attend(*leaves).backward(grad_out.to(dtype))
    return [x.grad.double() for x in leaves]

exact, naive = gradients(torch.float64), gradients(torch.bfloat16)
rel = lambda x, ref: ((x.double() - ref).norm() / ref.norm()).item()
for name, x, y, ref in zip("QKV", grads[0], naive, exact):
    print(f"d{name} {rel(x, ref):.2e} bound {2 * rel(y, ref):.2e}",
          "PASS" if rel(x, ref) <= 2 * rel(y, ref) else "FAIL")
print("repeat", "bitwise" if all(torch.equal(a.view(torch.int16), b.view(torch.int16))
                                 for a, b in zip(*grads)) else "DIFFERS")
"""

CASES = {
    # GQA 2:1, causal, Sq != Sk, a key block cut short.
    "gqa_causal": """
g = torch.Generator().manual_seed(0)
q, k, v = torch.randn(1, 4, 100, 64, generator=g), torch.randn(1, 2, 150, 64, generator=g), \\
    torch.randn(1, 2, 150, 64, generator=g)
grad_out = torch.randn(1, 4, 100, 64, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
options = dict(causal=True)
""",
    # A sliding window with softcap, D = 32, Dv = 48.
    "window_softcap": """
g = torch.Generator().manual_seed(1)
q, k, v = torch.randn(2, 2, 70, 32, generator=g), torch.randn(2, 2, 90, 32, generator=g), \\
    torch.randn(2, 2, 90, 48, generator=g)
grad_out = torch.randn(2, 2, 70, 48, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
options = dict(window=(24, 8), softcap=15.0)
""",
    # Per-sequence key lengths, causal, aligned to each: a full sequence,
    # an empty one, one cut inside a key block.
    "key_lengths": """
g = torch.Generator().manual_seed(2)
q, k, v = torch.randn(3, 4, 50, 64, generator=g), torch.randn(3, 2, 160, 64, generator=g), \\
    torch.randn(3, 2, 160, 64, generator=g)
grad_out = torch.randn(3, 4, 50, 64, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
options = dict(causal=True, key_lengths=[160, 0, 100])
""",
    # A boolean mask broadcast over the batch and the heads (about a
    # quarter of the keys hidden), GQA 2:1, a sliding window.
    "bool_mask": """
g = torch.Generator().manual_seed(3)
q, k, v = torch.randn(2, 4, 80, 64, generator=g), torch.randn(2, 2, 120, 64, generator=g), \\
    torch.randn(2, 2, 120, 64, generator=g)
grad_out = torch.randn(2, 4, 80, 64, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
mask = torch.rand(1, 1, 80, 120, generator=g) > 0.25
options = dict(window=(50, 10), mask=mask)
""",
    # An additive bfloat16 mask, one per query head, with -inf entries and
    # a row it hides entirely (no key: P = 0, no gradient), causal.
    "additive_mask": """
g = torch.Generator().manual_seed(4)
q, k, v = torch.randn(1, 4, 60, 64, generator=g), torch.randn(1, 2, 130, 64, generator=g), \\
    torch.randn(1, 2, 130, 64, generator=g)
grad_out = torch.randn(1, 4, 60, 64, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
mask = torch.randn(1, 4, 60, 130, generator=g)
mask = mask.masked_fill(torch.rand(1, 4, 60, 130, generator=g) < 0.1, -math.inf)
mask[:, 1, 7] = -math.inf
mask = mask.bfloat16()
options = dict(causal=True, mask=mask)
""",
    # A block mask per query head (empty, partial and full blocks of 64 x
    # 128) over a float32 bias broadcast over the heads, GQA 2:1.
    "block_mask": """
g = torch.Generator().manual_seed(5)
q, k, v = torch.randn(1, 4, 100, 64, generator=g), torch.randn(1, 2, 200, 64, generator=g), \\
    torch.randn(1, 2, 200, 64, generator=g)
grad_out = torch.randn(1, 4, 100, 64, generator=g)
q, k, v, grad_out = (x.bfloat16() for x in (q, k, v, grad_out))
mask = torch.randn(1, 1, 100, 200, generator=g)
blocks = torch.randint(0, 3, (1, 4, 2, 2), generator=g, dtype=torch.int8)
blocks[0, 0] = torch.tensor([[0, 1], [2, 1]])
options = dict(mask=mask, blocks=blocks, block_size=(64, 128))
""",
}


@pytest.mark.parametrize("case", CASES)
def test_backward_kernel_runs_on_the_emulator(case, run_python):
    run = run_python(EMULATED.replace("CASE", CASES[case]), ATTNRT_LIBCUDA="emulator")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    lengths = {"key_lengths": ", 'key_lengths'", "bool_mask": ", 'mask'",
               "additive_mask": ", 'mask'", "block_mask": ", 'mask', 'block_mask'"}.get(case, "")
    assert lines[0] == f"backward kernel ['Q', 'K', 'V', 'O', 'LSE', 'dO', 'dQ', 'dK', 'dV'{lengths}]"
    assert [line.split()[0] for line in lines[1:4]] == ["dQ", "dK", "dV"]
    assert all(line.endswith("PASS") for line in lines[1:4]), run.stdout
    assert lines[4] == "repeat bitwise"

# Autograd through attn_mlir.attention on CPU torch tensors: the gradients
# against torch autograd of a naive float64 attention, FlashAttention's rule
# for 16-bit inputs, determinism, and a short training run that tracks the
# same run with a naive attention step by step.
import math

import pytest

torch = pytest.importorskip("torch")

import attn_mlir


def naive(q, k, v, causal=False, scale=None, window=None, softcap=None, mask=None,
          key_lengths=None):
    """softmax(scale Q K^T [softcap, masks]) V in q's dtype with autograd,
    the attention attn_mlir computes (rows that see nothing give 0)."""
    hq, hkv = q.shape[1], k.shape[1]
    k = k.repeat_interleave(hq // hkv, 1)
    v = v.repeat_interleave(hq // hkv, 1)
    s = (q @ k.transpose(-1, -2)) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    b, _, sq, sk = s.shape
    i = torch.arange(sq)[:, None]
    j = torch.arange(sk)[None, :]
    keys = torch.full((b, 1, 1, 1), sk) if key_lengths is None else \
        key_lengths.clamp(0, sk).view(b, 1, 1, 1)
    d = i + keys - sq
    visible = j < keys
    if causal:
        visible = visible & (j <= d)
    if window is not None:
        visible = visible & (j >= d - window[0]) & (j <= d + window[1])
    if mask is not None:
        if mask.dtype == torch.bool:
            visible = visible & mask
        else:
            s = s + mask.to(s.dtype)
    s = s.masked_fill(~visible, -float("inf"))
    p = torch.softmax(s.float() if s.dtype != torch.float64 else s, -1).to(s.dtype)
    return p.nan_to_num(0.0) @ v


def gradients(fn, inputs, grad_out):
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    fn(*leaves).backward(grad_out)
    return [x.grad for x in leaves]


def rel(x, ref):
    return ((x.double() - ref).norm() / ref.norm()).item()


CASES = [
    dict(shape=(2, 4, 4, 37, 45, 32, 32)),
    dict(shape=(2, 4, 2, 45, 37, 32, 24), causal=True),
    dict(shape=(1, 8, 1, 1, 239, 64, 64), softcap=30.0),
    dict(shape=(2, 2, 2, 64, 80, 40, 40), window=(16, 4)),
    dict(shape=(1, 2, 2, 113, 203, 64, 64), causal=True, scale=0.3),
    dict(shape=(3, 2, 2, 9, 40, 16, 16), causal=True, key_lengths=[0, 17, 40]),
    dict(shape=(2, 2, 2, 20, 30, 16, 16), mask="bool"),
    dict(shape=(2, 2, 2, 20, 30, 16, 16), mask="float"),
]


def case_inputs(shape, dtype, seed=0):
    b, hq, hkv, sq, sk, d, dv = shape
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, hq, sq, d, generator=g)
    k = torch.randn(b, hkv, sk, d, generator=g)
    v = torch.randn(b, hkv, sk, dv, generator=g)
    grad_out = torch.randn(b, hq, sq, dv, generator=g)
    return [x.to(dtype) for x in (q, k, v)], grad_out.to(dtype)


def case_options(case):
    options = {name: value for name, value in case.items() if name != "shape"}
    b, _, _, sq, sk = case["shape"][:5]
    g = torch.Generator().manual_seed(1)
    if options.get("key_lengths") is not None:
        options["key_lengths"] = torch.tensor(options["key_lengths"])
    if options.get("mask") == "bool":
        options["mask"] = torch.rand(b, 1, sq, sk, generator=g) > 0.3
        options["mask"][:, :, 3] = False  # a row that sees no key
    elif options.get("mask") == "float":
        options["mask"] = torch.randn(b, 1, sq, sk, generator=g)
    return options


def ours(options):
    def run(q, k, v):
        rest = {n: x for n, x in options.items() if n != "mask"}
        return attn_mlir.attention(q, k, v, options.get("mask"), enable_gqa=True, **rest)
    return run


@pytest.mark.parametrize("case", CASES, ids=lambda case: str(case))
def test_float32_gradients_match_float64_autograd(case):
    (q, k, v), grad_out = case_inputs(case["shape"], torch.float32)
    options = case_options(case)
    exact = gradients(lambda *x: naive(*x, **options), [x.double() for x in (q, k, v)],
                      grad_out.double())
    got = gradients(ours(options), [q, k, v], grad_out)
    for name, x, ref in zip("QKV", got, exact):
        assert x.dtype == torch.float32
        assert rel(x, ref) < 1e-5, f"d{name}: {rel(x, ref)}"


# Debian's PyTorch has no float16 matrix product on the CPU, so the naive
# yardstick runs in bfloat16 only (attn-run's backward.mlir checks float16
# against its own naive float16 backward).
@pytest.mark.parametrize("dtype", [torch.bfloat16])
@pytest.mark.parametrize("case", CASES[:5], ids=lambda case: str(case))
def test_16_bit_gradients_within_twice_naive_error(case, dtype):
    """FlashAttention's rule: at most twice the error of a naive attention
    computed (and differentiated) in the same precision."""
    (q, k, v), grad_out = case_inputs(case["shape"], dtype)
    options = case_options(case)
    exact = gradients(lambda *x: naive(*x, **options), [x.double() for x in (q, k, v)],
                      grad_out.double())
    same_precision = gradients(lambda *x: naive(*x, **options), [q, k, v], grad_out)
    got = gradients(ours(options), [q, k, v], grad_out)
    for name, x, naive_x, ref in zip("QKV", got, same_precision, exact):
        assert x.dtype == dtype
        assert rel(x, ref) <= 2 * rel(naive_x, ref) + 1e-5, \
            f"d{name}: {rel(x, ref)} against naive {rel(naive_x, ref)}"


def test_one_head_inputs_and_lse_are_supported():
    (q, k, v), grad_out = case_inputs((2, 1, 1, 10, 12, 8, 8), torch.float32)
    q3, k3, v3 = (x[:, 0].clone().requires_grad_() for x in (q, k, v))
    o, lse = attn_mlir.attention(q3, k3, v3, causal=True, return_lse=True)
    assert o.requires_grad and not lse.requires_grad
    o.backward(grad_out[:, 0])
    exact = gradients(lambda *x: naive(*x, causal=True), [x.double() for x in (q, k, v)],
                      grad_out.double())
    for x, ref in zip((q3, k3, v3), exact):
        assert rel(x.grad, ref[:, 0]) < 1e-5


@pytest.mark.parametrize("deterministic", [False, True])
def test_gradients_are_the_same_bytes_run_to_run(deterministic):
    (q, k, v), grad_out = case_inputs((2, 8, 2, 100, 130, 64, 64), torch.bfloat16)
    run = lambda: gradients(  # noqa: E731
        lambda *x: attn_mlir.attention(*x, causal=True, enable_gqa=True,
                                       deterministic=deterministic),
        [q, k, v], grad_out)
    first, second = run(), run()
    for a, b in zip(first, second):
        assert torch.equal(a.view(torch.int16), b.view(torch.int16))


def test_no_gradient_without_autograd():
    (q, k, v), _ = case_inputs((1, 2, 2, 5, 5, 8, 8), torch.float32)
    q.requires_grad_()
    with torch.no_grad():
        o = attn_mlir.attention(q, k, v)
    assert not o.requires_grad


class Block(torch.nn.Module):
    """One pre-norm transformer block whose attention is `attend`."""

    def __init__(self, width, heads, attend):
        super().__init__()
        self.heads, self.attend = heads, attend
        self.norm1, self.norm2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, w // self.heads) \
            .permute(2, 0, 3, 1, 4)
        o = self.attend(q, k, v).transpose(1, 2).reshape(b, s, w)
        x = x + self.proj(o)
        return x + self.mlp(self.norm2(x))


def train(attend, steps=12):
    torch.manual_seed(0)
    vocab, width, heads, length = 50, 32, 4, 24
    embed = torch.nn.Embedding(vocab, width)
    blocks = torch.nn.Sequential(*(Block(width, heads, attend) for _ in range(2)))
    head = torch.nn.Linear(width, vocab)
    parameters = [*embed.parameters(), *blocks.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(parameters, lr=3e-3)
    data = torch.randint(0, vocab, (8, length + 1), generator=torch.Generator().manual_seed(1))
    losses = []
    for _ in range(steps):
        logits = head(blocks(embed(data[:, :-1])))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_training_tracks_a_naive_attention():
    """A small causal language model trained with attn_mlir's attention
    follows the same run with a naive attention, step by step."""
    ours_losses = train(lambda q, k, v: attn_mlir.attention(q, k, v, causal=True))
    naive_losses = train(lambda q, k, v: naive(q, k, v, causal=True))
    assert ours_losses[-1] < ours_losses[0] - 0.5  # it learns
    for step, (a, b) in enumerate(zip(ours_losses, naive_losses)):
        assert abs(a - b) <= 1e-4 * abs(b), f"step {step}: {a} against {b}"


@pytest.mark.parametrize("shape", [(2, 4, 20, 30), (1, 1, 20, 30), (20, 30), (2, 1, 1, 30)])
def test_additive_mask_gradient(shape):
    """A float mask that requires grad gets dS, summed over the dimensions
    it was broadcast along (torch's rule for broadcasting)."""
    (q, k, v), grad_out = case_inputs((2, 4, 2, 20, 30, 16, 16), torch.float32)
    mask = torch.randn(shape, generator=torch.Generator().manual_seed(3))
    run = lambda q, k, v, m: attn_mlir.attention(q, k, v, m, causal=True,  # noqa: E731
                                                  enable_gqa=True)
    got = gradients(run, [q, k, v, mask], grad_out)
    exact = gradients(lambda q, k, v, m: naive(q, k, v, causal=True, mask=m),
                      [x.double() for x in (q, k, v, mask)], grad_out.double())
    assert got[3].shape == mask.shape
    for name, x, ref in zip(("Q", "K", "V", "mask"), got, exact):
        assert rel(x, ref) < 1e-5, f"d{name}: {rel(x, ref)}"

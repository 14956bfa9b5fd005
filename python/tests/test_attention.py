"""attn_mlir.attention on the CPU (NumPy arrays, torch CPU tensors) against a
NumPy float64 reference and PyTorch's SDPA."""
import numpy as np
import pytest

import attn_mlir


def reference(q, k, v, causal=False, scale=None, window=None, softcap=None, key_lengths=None,
              mask=None, block_mask=None, block_size=None):
    """float64 attention with attn.attention's semantics (causal and window
    bottom-right aligned, to each sequence's key length when given; a bool
    mask keeps scores, a float one is added; a block mask's 0 hides its
    block, its 2 drops the mask there); returns O and the natural
    log-sum-exp."""
    if key_lengths is not None:
        assert mask is None and block_mask is None, "not sliced per sequence here"
        parts = [reference(q[b:b + 1], k[b:b + 1, :, :max(0, min(int(n), k.shape[2]))],
                           v[b:b + 1, :, :max(0, min(int(n), k.shape[2]))],
                           causal, scale or 1 / np.sqrt(q.shape[3]), window, softcap)
                 for b, n in enumerate(key_lengths)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    if k.shape[2] == 0:
        return np.zeros(q.shape[:3] + v.shape[3:]), np.full(q.shape[:3], -np.inf)
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    sq, sk = q.shape[2], k.shape[2]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * (scale if scale else 1 / np.sqrt(q.shape[3]))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    rows = np.arange(sq)[:, None] + sk - sq
    keys = np.arange(sk)[None, :]
    visible = np.ones(s.shape, bool)
    if causal:
        visible &= keys <= rows
    if window:
        visible &= (keys >= rows - window[0]) & (keys <= rows + window[1])
    blocks = np.ones(s.shape)  # partial everywhere without a block mask
    if block_mask is not None:
        rows_per_block, keys_per_block = block_size
        blocks = np.asarray(block_mask).reshape((1,) * (4 - np.ndim(block_mask)) + np.shape(block_mask))
        blocks = np.repeat(np.repeat(blocks, rows_per_block, 2), keys_per_block, 3)[:, :, :sq, :sk]
        visible &= blocks != 0
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == bool:
            visible &= mask | (blocks == 2)
        else:
            s = s + np.where(blocks == 2, 0, mask.astype(np.float64))
    s = np.where(visible, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    o = np.where(total > 0, (e @ v) / np.where(total > 0, total, 1), 0)
    lse = np.where(total[..., 0] > 0, np.log(np.where(total[..., 0] > 0, total[..., 0], 1)) + m[..., 0], -np.inf)
    return o, lse


def inputs(b, hq, hkv, sq, sk, d, dv, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((b, hq, sq, d)).astype(dtype),
            rng.standard_normal((b, hkv, sk, d)).astype(dtype),
            rng.standard_normal((b, hkv, sk, dv)).astype(dtype))


def rel_l2(x, ref):
    return np.linalg.norm(x.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize("options", [
    {},
    {"causal": True},
    {"causal": True, "scale": 0.3},
    {"window": (5, 2)},
    {"softcap": 2.0, "causal": True},
])
def test_matches_float64_reference(options):
    q, k, v = inputs(2, 4, 2, 24, 40, 16, 8)
    o, lse = attn_mlir.attention(q, k, v, enable_gqa=True, return_lse=True, **options)
    ref_o, ref_lse = reference(q, k, v, **options)
    assert o.shape == (2, 4, 24, 8) and o.dtype == np.float32
    assert rel_l2(o, ref_o) < 1e-5
    finite = np.isfinite(ref_lse)
    assert np.array_equal(np.isfinite(lse), finite)
    assert rel_l2(lse[finite], ref_lse[finite]) < 1e-5


def test_float16():
    q, k, v = inputs(1, 2, 2, 32, 32, 32, 32, dtype=np.float16)
    o = attn_mlir.attention(q, k, v, causal=True)
    assert o.dtype == np.float16
    ref_o, _ = reference(q, k, v, causal=True)
    assert rel_l2(o, ref_o) < 2e-3


def test_compiles_once_per_shape():
    q, k, v = inputs(1, 2, 2, 8, 8, 8, 8)
    attn_mlir.attention(q, k, v)
    before = len(attn_mlir._cache)
    attn_mlir.attention(q + 1, k, v)
    assert len(attn_mlir._cache) == before


def torch_attention(torch, q, k, v, causal):
    """PyTorch's scaled_dot_product_attention (PyTorch 2), else the same
    computed with PyTorch's softmax (Debian 12 ships PyTorch 1.13)."""
    q, k, v = (torch.from_numpy(x) for x in (q, k, v))
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=causal).numpy()
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v).numpy()


def test_matches_torch():
    torch = pytest.importorskip("torch")
    q, k, v = inputs(2, 4, 4, 33, 33, 16, 16)
    for causal in (False, True):
        o = attn_mlir.attention(q, k, v, causal=causal)
        expected = torch_attention(torch, q, k, v, causal)
        assert rel_l2(o, expected.astype(np.float64)) < 1e-5


def test_bad_input_raises():
    q, k, v = inputs(1, 4, 2, 8, 8, 8, 8)
    with pytest.raises(ValueError, match="enable_gqa"):
        attn_mlir.attention(q, k, v)
    with pytest.raises(ValueError, match="one dtype"):
        attn_mlir.attention(q, k.astype(np.float16), v, enable_gqa=True)
    with pytest.raises(ValueError, match="float32, float16 or bfloat16"):
        attn_mlir.attention(q.astype(np.float64), k, v, enable_gqa=True)
    with pytest.raises(ValueError, match=r"V \(1, 2, 4, 8\) does not match K \(1, 2, 8, 8\)"):
        attn_mlir.attention(q, k, v[:, :, :4], enable_gqa=True)
    q3, k3, v3 = inputs(1, 2, 3, 8, 8, 8, 8)
    with pytest.raises(ValueError, match="Q has 2 heads, not a multiple of K's 3"):
        attn_mlir.attention(q3, k3, v3, enable_gqa=True)


MODULE = """
func.func @f(%q: tensor<1x2x64x32xf32>, %o: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>)
      outs(%o : tensor<1x2x64x32xf32>) {causal} -> tensor<1x2x64x32xf32>
  return %r : tensor<1x2x64x32xf32>
}
"""


def test_run_pipeline():
    lowered = attn_mlir.run_pipeline(MODULE, "builtin.module(attn-to-cpu)")
    assert "llvm.func @f" in lowered and "attn.attention" not in lowered
    with pytest.raises(attn_mlir.CompilerError, match="cannot parse"):
        attn_mlir.run_pipeline("func.func @f(", "builtin.module(attn-to-cpu)")
    with pytest.raises(attn_mlir.CompilerError, match="bad pass pipeline"):
        attn_mlir.run_pipeline(MODULE, "builtin.module(no-such-pass)")


@pytest.mark.parametrize("dtype,tolerance", [("float32", 1e-5), ("float16", 2e-3), ("bfloat16", 2e-2)])
def test_torch_cpu_tensors(dtype, tolerance):
    """torch CPU tensors in, torch tensors of the same dtype out."""
    torch = pytest.importorskip("torch")
    q, k, v = inputs(1, 4, 2, 17, 29, 16, 16)
    tq, tk, tv = (torch.from_numpy(x).to(getattr(torch, dtype)) for x in (q, k, v))
    o, lse = attn_mlir.attention(tq, tk, tv, causal=True, enable_gqa=True, return_lse=True)
    assert isinstance(o, torch.Tensor) and o.dtype == tq.dtype and o.shape == (1, 4, 17, 16)
    assert lse.dtype == torch.float32 and lse.shape == (1, 4, 17)
    rounded = [x.float().numpy() for x in (tq, tk, tv)]
    ref_o, ref_lse = reference(*rounded, causal=True)
    assert rel_l2(o.float().numpy(), ref_o) < tolerance
    assert rel_l2(lse.numpy(), ref_lse) < 1e-5


def test_torch_bad_input_raises():
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 2, 8, 8)
    with pytest.raises(ValueError, match="one dtype"):
        attn_mlir.attention(q, q.half(), q)
    with pytest.raises(ValueError, match="three of one kind"):
        attn_mlir.attention(q, q.numpy(), q)


def test_key_lengths():
    """Per-sequence key lengths (FlashAttention's cache_seqlens): each
    sequence sees its first keys, causal aligned to its length; 0 gives
    O = 0 and LSE = -inf; lengths past Sk are clamped."""
    q, k, v = inputs(4, 4, 2, 3, 50, 16, 16)
    lengths = np.array([50, 17, 0, 2**40])  # the last past Sk and int32
    o, lse = attn_mlir.attention(q, k, v, causal=True, enable_gqa=True, return_lse=True,
                                 key_lengths=lengths)
    ref_o, ref_lse = reference(q, k, v, causal=True, key_lengths=lengths)
    assert rel_l2(o, ref_o) < 1e-5
    assert np.all(o[2] == 0) and np.all(np.isneginf(lse[2]))
    finite = np.isfinite(ref_lse)
    assert np.array_equal(np.isfinite(lse), finite)
    assert rel_l2(lse[finite], ref_lse[finite]) < 1e-5
    # The lengths are run-time data: one compiled attention serves others.
    before = len(attn_mlir._cache)
    o2 = attn_mlir.attention(q, k, v, causal=True, enable_gqa=True, key_lengths=[5, 5, 5, 5])
    assert rel_l2(o2, reference(q, k, v, causal=True, key_lengths=[5] * 4)[0]) < 1e-5
    assert len(attn_mlir._cache) == before + 1  # no LSE: another spec
    torch = pytest.importorskip("torch")
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    to = attn_mlir.attention(tq, tk, tv, causal=True, enable_gqa=True,
                             key_lengths=torch.tensor([50, 17, 0, 2**40]))
    assert rel_l2(to.numpy(), ref_o) < 1e-5


def test_key_lengths_bad_input_raises():
    q, k, v = inputs(2, 2, 2, 3, 8, 8, 8)
    with pytest.raises(ValueError, match=r"key_lengths must be \[B\] = \[2\], got shape \(3,\)"):
        attn_mlir.attention(q, k, v, key_lengths=[1, 2, 3])
    with pytest.raises(ValueError, match="key_lengths must be integers"):
        attn_mlir.attention(q, k, v, key_lengths=[1.5, 2.0])
    torch = pytest.importorskip("torch")
    tq = torch.from_numpy(q)
    with pytest.raises(ValueError, match="key_lengths must be integers"):
        attn_mlir.attention(tq, tq, tq, key_lengths=[1.5, 2.0])
    with pytest.raises(ValueError, match="key_lengths must be a torch tensor of integers"):
        attn_mlir.attention(tq, tq, tq, key_lengths=torch.tensor([1.5, 2.0]))
    # A list (as FlashAttention users pass cache_seqlens) is a tensor on Q's device.
    assert torch.equal(attn_mlir.attention(tq, tq, tq, key_lengths=[1, 2]),
                       attn_mlir.attention(tq, tq, tq, key_lengths=torch.tensor([1, 2])))


def assert_matches(o, lse, ref_o, ref_lse, tolerance=1e-5):
    assert rel_l2(o, ref_o) < tolerance
    finite = np.isfinite(ref_lse)
    assert np.array_equal(np.isfinite(lse), finite)
    assert rel_l2(lse[finite], ref_lse[finite]) < 1e-5


def mask_of(kind, shape, seed=1):
    """A bool mask keeping about 70% of the scores, or an additive one."""
    rng = np.random.default_rng(seed)
    if kind == "bool":
        return rng.random(shape) < 0.7
    return (rng.standard_normal(shape) * 2).astype(kind)


@pytest.mark.parametrize("kind,shape,options", [
    ("bool", (2, 1, 24, 40), {}),
    ("bool", (2, 4, 24, 40), {"causal": True}),
    ("float32", (24, 40), {"softcap": 3.0}),
    ("float16", (1, 4, 24, 40), {"window": (9, 3)}),
    ("bool", (2, 1, 1, 40), {}),  # a key padding mask, broadcast over rows
    ("float64", (2, 1, 24, 1), {}),  # taken as float32; one bias per row
])
def test_attn_mask(kind, shape, options):
    """SDPA's attn_mask: bool keeps scores, floats are added; broadcast over
    batch, heads, rows or keys."""
    q, k, v = inputs(2, 4, 2, 24, 40, 16, 8)
    mask = mask_of(kind, shape)
    o, lse = attn_mlir.attention(q, k, v, mask, enable_gqa=True, return_lse=True, **options)
    ref_o, ref_lse = reference(q, k, v, mask=np.broadcast_to(mask, (2, 4, 24, 40)), **options)
    assert_matches(o, lse, ref_o, ref_lse)


def test_attn_mask_hiding_a_whole_row():
    """A row that sees no key gives O = 0 and LSE = -inf (SDPA: NaN)."""
    q, k, v = inputs(1, 2, 2, 8, 16, 16, 16)
    mask = np.ones((1, 1, 8, 16), bool)
    mask[0, 0, 3] = False
    o, lse = attn_mlir.attention(q, k, v, mask, return_lse=True)
    assert np.all(o[:, :, 3] == 0) and np.all(np.isneginf(lse[:, :, 3]))
    assert_matches(o, lse, *reference(q, k, v, mask=mask))


@pytest.mark.parametrize("blocks", [
    [[1, 0, 2], [2, 1, 0]],  # [Nq, Nk], broadcast over batch and heads
    [[[[0, 1, 2], [2, 2, 1]]], [[[1, 1, 0], [0, 0, 0]]]],  # [B, 1, Nq, Nk]: a sequence with empty rows
])
def test_block_mask(blocks):
    """Empty blocks hide their scores, full ones drop the mask, partial ones
    change nothing (FlexAttention's BlockMask)."""
    q, k, v = inputs(2, 4, 2, 24, 40, 16, 8)
    mask = mask_of("bool", (2, 1, 24, 40))
    o, lse = attn_mlir.attention(q, k, v, mask, enable_gqa=True, return_lse=True,
                                 block_mask=np.array(blocks), block_size=(16, 16))
    ref_o, ref_lse = reference(q, k, v, mask=mask, block_mask=np.array(blocks), block_size=(16, 16))
    assert_matches(o, lse, ref_o, ref_lse)
    # Out-of-range values are partial blocks, not wrapped into empty or full ones.
    wide = np.array(blocks) * 0 + 258
    o = attn_mlir.attention(q, k, v, mask, enable_gqa=True, block_mask=wide, block_size=(16, 16))
    assert rel_l2(o, reference(q, k, v, mask=mask)[0]) < 1e-5


def test_masks_on_torch_cpu_tensors():
    """bfloat16 Q, K, V with a bfloat16 additive mask, and a bool one with a
    bool block mask, as torch tensors."""
    torch = pytest.importorskip("torch")
    q, k, v = inputs(1, 4, 2, 17, 29, 16, 16)
    tq, tk, tv = (torch.from_numpy(x).bfloat16() for x in (q, k, v))
    rounded = [x.float().numpy() for x in (tq, tk, tv)]
    bias = torch.from_numpy(mask_of("float32", (17, 29))).bfloat16()
    o = attn_mlir.attention(tq, tk, tv, bias, enable_gqa=True)
    assert o.dtype == torch.bfloat16
    assert rel_l2(o.float().numpy(), reference(*rounded, mask=bias.float().numpy())[0]) < 2e-2
    keep = torch.from_numpy(mask_of("bool", (1, 1, 17, 29)))
    blocks = torch.tensor([[True, False], [True, True]])
    o = attn_mlir.attention(tq, tk, tv, keep, enable_gqa=True, block_mask=blocks, block_size=(16, 16))
    ref_o, _ = reference(*rounded, mask=keep.numpy(), block_mask=blocks.numpy(), block_size=(16, 16))
    assert rel_l2(o.float().numpy(), ref_o) < 2e-2


def test_masks_bad_input_raises():
    q, k, v = inputs(2, 4, 2, 8, 20, 8, 8)
    with pytest.raises(ValueError, match=r"attn_mask of shape \(3, 1, 8, 20\) must be broadcastable "
                                         r"to \[B, Hq, Sq, Sk\] = \[2, 4, 8, 20\]"):
        attn_mlir.attention(q, k, v, np.ones((3, 1, 8, 20), bool), enable_gqa=True)
    with pytest.raises(ValueError, match="must be broadcastable"):
        attn_mlir.attention(q, k, v, np.ones((20,), bool), enable_gqa=True)
    with pytest.raises(ValueError, match="attn_mask is int64: attn_mlir takes a bool mask"):
        attn_mlir.attention(q, k, v, np.ones((8, 20), np.int64), enable_gqa=True)
    with pytest.raises(ValueError, match="needs both block_mask and block_size"):
        attn_mlir.attention(q, k, v, enable_gqa=True, block_mask=np.ones((1, 2), np.int8))
    with pytest.raises(ValueError, match=r"block_mask of shape \(2, 2\) must be \[B or 1, Hq or 1, "
                                         r"ceil\(Sq / 8\), ceil\(Sk / 16\)\] = \[2 or 1, 4 or 1, 1, 2\]"):
        attn_mlir.attention(q, k, v, enable_gqa=True, block_mask=np.ones((2, 2), np.int8),
                            block_size=(8, 16))
    with pytest.raises(ValueError, match="block_size must be two positive sizes"):
        attn_mlir.attention(q, k, v, enable_gqa=True, block_mask=np.ones((1, 1), np.int8),
                            block_size=(0, 16))
    with pytest.raises(ValueError, match="block_mask must hold integers or booleans"):
        attn_mlir.attention(q, k, v, enable_gqa=True, block_mask=np.ones((1, 2)), block_size=(8, 16))
    torch = pytest.importorskip("torch")
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    with pytest.raises(ValueError, match="attn_mask must be a torch tensor of bool or floating point"):
        attn_mlir.attention(tq, tk, tv, np.ones((8, 20), bool), enable_gqa=True)
    with pytest.raises(ValueError, match="attn_mask must be a torch tensor of bool or floating point"):
        attn_mlir.attention(tq, tk, tv, torch.ones(8, 20, dtype=torch.int32), enable_gqa=True)
    with pytest.raises(ValueError, match="block_mask must be a torch tensor of integers or booleans"):
        attn_mlir.attention(tq, tk, tv, enable_gqa=True, block_mask=torch.ones(1, 2),
                            block_size=(8, 16))

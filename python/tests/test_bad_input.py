"""Bad input to the package ends in a clear error naming the argument (or in
a correct result), within seconds: never a wrong answer, a crash or a hang.
Each case is a reproducer from the package's hardening (docs/reliability.md,
"The Python package and the C API"); test_gpu_bundles.py holds the bundle
files' cases."""
import os

import numpy as np
import pytest

import attn_mlir
from test_attention import inputs, reference, rel_l2

torch = pytest.importorskip("torch")


def ones(*shape):
    return np.ones(shape, np.float32)


# Sizes that must agree: each was accepted and gave garbage, NaN or a crash.
@pytest.mark.parametrize("q, k, message", [
    ((2, 1, 4, 8), (1, 1, 4, 8), r"K has batch 1 and Q 2"),
    ((1, 1, 4, 8), (2, 1, 4, 8), r"K has batch 2 and Q 1"),
    ((64, 1, 4, 64), (1, 1, 4096, 64), r"K has batch 1 and Q 64"),
    ((1, 2, 5, 8), (1, 2, 7, 16), r"K has head dimension 16 and Q 8"),
    ((1, 2, 5, 8), (1, 2, 7, 4), r"K has head dimension 4 and Q 8"),
    ((1, 1, 2, 256), (1, 1, 3, 1), r"K has head dimension 1 and Q 256"),
])
def test_sizes_that_must_agree(q, k, message):
    for make in (ones, lambda *s: torch.ones(s)):
        with pytest.raises(ValueError, match=message):
            attn_mlir.attention(make(*q), make(*k), make(*k))


@pytest.mark.parametrize("dtype", [">f4", ">f2"])
def test_big_endian_arrays_are_converted(dtype):
    q, k, v = inputs(1, 2, 2, 5, 7, 8, 8)
    expected = attn_mlir.attention(q.astype(dtype[1:]), k.astype(dtype[1:]), v.astype(dtype[1:]))
    o = attn_mlir.attention(q.astype(dtype), k.astype(dtype), v.astype(dtype))
    assert o.dtype == np.dtype(dtype).newbyteorder("=")
    assert np.array_equal(o, expected)
    bias = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    assert np.array_equal(
        attn_mlir.attention(q, k, v, bias.astype(">f4")), attn_mlir.attention(q, k, v, bias))
    blocks = np.array([[1, 0]])
    assert np.array_equal(
        attn_mlir.attention(q, k, v, block_mask=blocks.astype(">i4"), block_size=(8, 4)),
        attn_mlir.attention(q, k, v, block_mask=blocks, block_size=(8, 4)))
    lengths = np.array([3])
    assert np.array_equal(attn_mlir.attention(q, k, v, key_lengths=lengths.astype(">i8")),
                          attn_mlir.attention(q, k, v, key_lengths=lengths))


# Arguments of the wrong type or out of range: ValueError naming them, not
# TypeError, IndexError, OverflowError or a binding's type dump.
@pytest.mark.parametrize("options, message", [
    (dict(window=(2 ** 63, 0)), r"window's left side must be from 0 to 2\^63 - 1"),
    (dict(window=(0, -2)), r"window's right side must be from 0"),
    (dict(window=5), r"window must be \(left, right\)"),
    (dict(window=(1,)), r"window must be \(left, right\)"),
    (dict(window=(1.5, 2)), r"window's left side must be an integer"),
    (dict(scale="a"), r"scale must be a positive finite number"),
    (dict(scale=float("nan")), r"scale must be a positive finite number"),
    (dict(softcap=-1.0), r"softcap \(0 or None: none\) must be a positive finite number"),
    (dict(softcap=float("inf")), r"softcap \(0 or None: none\) must be a positive finite number"),
    (dict(block_mask=np.ones((1, 1), np.int8), block_size=(2 ** 63, 1)), r"block_size must be two positive sizes"),
    (dict(block_mask=np.ones((1, 1), np.int8), block_size=(8,)), r"block_size must be two positive sizes"),
    (dict(block_mask=np.ones((1, 1), np.int8), block_size=None), r"needs both block_mask and block_size"),
    (dict(key_lengths=np.array([1.5])), r"key_lengths must be integers"),
])
def test_bad_options(options, message):
    q, k, v = inputs(1, 1, 1, 4, 4, 8, 8)
    with pytest.raises(ValueError, match=message):
        attn_mlir.attention(q, k, v, **options)


def test_bad_shapes_name_the_argument():
    with pytest.raises(ValueError, match=r"Q's size 0 must be from 1 to 2\^62, got 18446744073709551616"):
        attn_mlir.precompile((2 ** 64, 1, 1, 8), (1, 1, 1, 8), (1, 1, 1, 8), "float16",
                             chip="sm_90", sms=132, smem_per_block=232448)
    with pytest.raises(ValueError, match=r"K's size 3 must be an integer, got 8.0"):
        attn_mlir.precompile((1, 1, 1, 8), (1, 1, 1, 8.0), (1, 1, 1, 8), "float16",
                             chip="sm_90", sms=132, smem_per_block=232448)
    with pytest.raises(ValueError, match=r"Q must be a shape"):
        attn_mlir.precompile(None, (1, 1, 1, 8), (1, 1, 1, 8), "float16",
                             chip="sm_90", sms=132, smem_per_block=232448)
    with pytest.raises(ValueError, match=r"Q is None: attn_mlir takes float32"):
        attn_mlir.precompile((1, 1, 1, 8), (1, 1, 1, 8), (1, 1, 1, 8), None,
                             chip="sm_90", sms=132, smem_per_block=232448)


@pytest.mark.parametrize("target, message", [
    (dict(chip=None), r"chip must be a str such as 'sm_90', got None"),
    (dict(sms=2 ** 64), r"sms must be from 1 to 2147483647, got 18446744073709551616"),
    (dict(sms=2 ** 62), r"sms must be from 1 to 2147483647, got 4611686018427387904"),
    (dict(sms="132"), r"sms must be an integer, got '132'"),
    (dict(smem_per_block=-1), r"smem_per_block must be from 1 to 2147483647, got -1"),
    (dict(chip="sm_9\0"), r"chip holds a NUL character"),
])
def test_bad_targets(target, message):
    target = dict(dict(chip="sm_90", sms=132, smem_per_block=232448), **target)
    with pytest.raises(ValueError, match=message):
        attn_mlir.precompile((1, 1, 16, 64), (1, 1, 16, 64), (1, 1, 16, 64), "float16", **target)


def test_unknown_chip_is_a_compiler_error():
    """Once a crash in LLVM's instruction selection (an abort of the
    interpreter)."""
    with pytest.raises(attn_mlir.CompilerError, match="sm_999"):
        attn_mlir.precompile((1, 1, 16, 64), (1, 1, 16, 64), (1, 1, 16, 64), "float16",
                             chip="sm_999", sms=132, smem_per_block=232448)


MODULE = """
func.func @f(%q: tensor<1x2x64x32xf32>, %o: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>)
      outs(%o : tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>
  return %r : tensor<1x2x64x32xf32>
}
"""


def test_run_pipeline_bad_input():
    with pytest.raises(ValueError, match="module must be a str, got NoneType"):
        attn_mlir.run_pipeline(None, "builtin.module(attn-to-cpu)")
    with pytest.raises(ValueError, match="pipeline must be a str, got int"):
        attn_mlir.run_pipeline(MODULE, 3)
    with pytest.raises(ValueError, match="pipeline holds a NUL character"):
        attn_mlir.run_pipeline(MODULE, "builtin.module(attn-to-cpu)\0garbage")
    # Once a segfault (MLIR's parser recursing per level) and a minute-long
    # parse: the tools' bounds apply.
    with pytest.raises(attn_mlir.CompilerError, match="nested more than 1000 levels"):
        attn_mlir.run_pipeline("module attributes {a = " + "[" * 10000 + "]" * 10000 + "} {}",
                               "builtin.module(canonicalize)")
    with pytest.raises(attn_mlir.CompilerError, match="more than 4096 digits"):
        attn_mlir.run_pipeline("module attributes {a = " + "9" * 50000 + " : i64} {}",
                               "builtin.module(canonicalize)")
    # Once an abort in LLVM's instruction selection: a PTX version too old.
    with pytest.raises(attn_mlir.CompilerError, match="ptx60"):
        attn_mlir.run_pipeline(MODULE, "builtin.module(attn-to-ptx{features=+ptx60})")


def test_decode_loop_compiles_once():
    """A cache growing by one key a step, and then a new batch size: one
    compilation serves every length (they are run-time sizes)."""
    attn_mlir.clear_cache()
    q, k, v = inputs(2, 4, 2, 1, 40, 16, 16)
    for length in range(1, 41, 3):
        o = attn_mlir.attention(q, k[:, :, :length], v[:, :, :length], enable_gqa=True)
        assert rel_l2(o, reference(q, k[:, :, :length], v[:, :, :length])[0]) < 1e-5
    o = attn_mlir.attention(q[:1], k[:1], v[:1], enable_gqa=True)
    assert rel_l2(o, reference(q[:1], k[:1], v[:1])[0]) < 1e-5
    info = attn_mlir.cache_info()
    assert (info.misses, info.hits, info.size) == (1, 14, 1)


def test_cache_is_bounded_and_clears(monkeypatch):
    attn_mlir.clear_cache()
    monkeypatch.setattr(attn_mlir, "CACHE_SIZE", 2)
    for d in (8, 16, 24):
        q, k, v = inputs(1, 1, 1, 2, 2, d, d)
        attn_mlir.attention(q, k, v)
    assert attn_mlir.cache_info()[:4] == (0, 3, 2, 2)
    attn_mlir.clear_cache()
    assert attn_mlir.cache_info()[:3] == (0, 0, 0)


def test_flash_attention_window_convention():
    """-1 is an unbounded side, as in FlashAttention's window_size."""
    q, k, v = inputs(1, 2, 2, 9, 9, 8, 8)
    causal = attn_mlir.attention(q, k, v, causal=True)
    assert np.array_equal(attn_mlir.attention(q, k, v, window=(-1, 0)), causal)
    assert np.array_equal(attn_mlir.attention(q, k, v, window=(-1, -1)), attn_mlir.attention(q, k, v))
    o = attn_mlir.attention(q, k, v, window=(2, -1))
    assert rel_l2(o, reference(q, k, v, window=(2, 100))[0]) < 1e-5


def test_three_dimensional_inputs():
    """[B, S, D], as SDPA takes them: one head."""
    q, k, v = inputs(2, 1, 1, 5, 7, 8, 4)
    mask = np.random.default_rng(1).random((2, 5, 7)) < 0.7
    o, lse = attn_mlir.attention(q[:, 0], k[:, 0], v[:, 0], mask, return_lse=True)
    o4, lse4 = attn_mlir.attention(q, k, v, mask[:, None], return_lse=True)
    assert o.shape == (2, 5, 4) and lse.shape == (2, 5)
    assert np.array_equal(o, o4[:, 0]) and np.array_equal(lse, lse4[:, 0])
    t = attn_mlir.attention(*(torch.from_numpy(x[:, 0]) for x in (q, k, v)))
    assert t.shape == (2, 5, 4)
    with pytest.raises(ValueError, match="attn_mask of a \\[B, S, D\\] attention must have 2 or 3"):
        attn_mlir.attention(q[:, 0], k[:, 0], v[:, 0], mask[:, None])


def test_empty_key_value_cache():
    """Sk = 0 (an empty cache) gives O = 0 and LSE = -inf, as key_lengths = 0
    does."""
    q, k, v = inputs(2, 4, 2, 3, 0, 8, 6)
    o, lse = attn_mlir.attention(q, k, v, enable_gqa=True, return_lse=True)
    assert o.shape == (2, 4, 3, 6) and not o.any() and np.all(lse == -np.inf)
    o = attn_mlir.attention(*(torch.from_numpy(x) for x in (q, k, v)), enable_gqa=True)
    assert o.shape == (2, 4, 3, 6) and not o.any()
    with pytest.raises(ValueError, match="K has a zero size"):
        attn_mlir.attention(q, k[..., :0], v, enable_gqa=True)


# Found by scripts/python-robustness-sweep.py.
def test_huge_valid_sizes_are_refused_before_allocating():
    q = np.lib.stride_tricks.as_strided(np.float32(0.5), (2, 2, 2 ** 31, 8), (0, 0, 0, 0))
    k = np.ones((2, 2, 7, 8), np.float32)
    with pytest.raises(ValueError, match=r"Q \[2, 2, 2147483648, 8\], K \[2, 2, 7, 8\], .* need [0-9.]+ GiB; this machine has"):
        attn_mlir.attention(q, k, k)


def test_numpy_query_with_torch_keys():
    q = np.ones((1, 1, 2, 8), np.float32)
    k = torch.ones((1, 1, 2, 8), dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="Q is ndarray and K a torch tensor: give three of one kind"):
        attn_mlir.attention(q, k, q)


def test_deterministic_must_be_a_bool():
    q, k, v = (torch.from_numpy(x) for x in inputs(1, 1, 1, 3, 5, 8, 8))
    with pytest.raises(ValueError, match="deterministic must be True or False, got 1"):
        attn_mlir.attention(q, k, v, deterministic=1)


def test_unsigned_key_lengths_do_not_wrap():
    q, k, v = (torch.from_numpy(x) for x in inputs(2, 1, 1, 2, 5, 8, 8))
    lengths = np.array([2 ** 64 - 1, 3], np.uint64)
    assert torch.equal(attn_mlir.attention(q, k, v, key_lengths=lengths),
                       attn_mlir.attention(q, k, v, key_lengths=[5, 3]))


@pytest.mark.parametrize("call, message", [
    (lambda: attn_mlir.run_pipeline(MODULE + "// \udcff\n", "builtin.module(cse)"),
     "module is not valid Unicode text"),
    (lambda: attn_mlir.run_pipeline(MODULE, "builtin.module(cse)\udcff"),
     "pipeline is not valid Unicode text"),
    (lambda: attn_mlir.precompile((1, 1, 16, 64), (1, 1, 16, 64), (1, 1, 16, 64), "float16",
                                  chip="sm_80\udcff", sms=108, smem_per_block=166912),
     "chip is not valid Unicode text"),
    (lambda: attn_mlir.precompile((1, 1, 16, 64), (1, 1, 16, 64), (1, 1, 16, 64), "float16",
                                  chip="sm_80", sms=108, smem_per_block=166912, attn_mask="bool"),
     r"attn_mask must be \(shape, dtype\), got 'bool'"),
    (lambda: attn_mlir.save_bundles("s\0b"), r"directory 's\\x00b' holds a NUL character"),
    (lambda: attn_mlir.load_bundles("a\0b"), r"directory 'a\\x00b' holds a NUL character"),
    (lambda: attn_mlir.attention(*inputs(1, 1, 1, 2, 2, 8, 8), scale=-1.0),
     r"scale must be a positive finite number \(in float32\), got -1.0"),
    (lambda: attn_mlir.attention(*inputs(1, 1, 1, 2, 2, 8, 8), scale=1e300),
     r"scale must be a positive finite number \(in float32\)"),
    (lambda: attn_mlir.attention(*inputs(1, 1, 1, 2, 2, 8, 8), softcap=1e-300),
     r"softcap \(0 or None: none\) must be a positive finite number"),
])
def test_bad_arguments_found_by_the_sweep(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bytes_paths(tmp_path):
    assert attn_mlir.load_bundles(os.fsencode(tmp_path)) == 0


def test_three_dimensional_mask_as_a_list():
    q, k, v = inputs(1, 1, 1, 2, 3, 8, 8)
    mask = [[[True, False, True], [True, True, False]]]
    assert np.array_equal(attn_mlir.attention(q[:, 0], k[:, 0], v[:, 0], mask),
                          attn_mlir.attention(q, k, v, np.array(mask)[:, None])[:, 0])

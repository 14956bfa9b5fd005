"""The attention a call describes: checked once, hashable (each compiles
once) and written as JSON next to a saved kernel bundle."""

from typing import NamedTuple, Optional, Tuple

from ._errors import CompilerError

# Element type names of the compiler (attn.attention's f32, f16, bf16), by
# the names NumPy and PyTorch give them.
DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
# A mask's: boolean (i1, a byte per element) or added to the score
# (float64 taken as float32, as attention() converts it).
MASK_DTYPE_NAMES = {"bool": "i1", "float64": "f32", **DTYPE_NAMES}


class Spec(NamedTuple):
    query_shape: Tuple[int, int, int, int]
    key_shape: Tuple[int, int, int, int]
    value_dim: int
    dtype: str
    causal: bool
    window: Optional[Tuple[int, int]]
    scale: Optional[float]
    softcap: Optional[float]
    with_lse: bool
    key_lengths: bool
    # The mask operand's element type (i1, f16, bf16, f32) and leading
    # sizes (B or 1, Hq or 1), when there is one.
    mask_dtype: Optional[str] = None
    mask_shape: Optional[Tuple[int, int]] = None
    # The block mask's blocks (rows, keys) and leading sizes, when there is one.
    block_size: Optional[Tuple[int, int]] = None
    block_mask_shape: Optional[Tuple[int, int]] = None

    def out_shape(self):
        return self.query_shape[:3] + (self.value_dim,)

    def lse_shape(self):
        return self.query_shape[:3]

    def mask_full_shape(self):
        """[B or 1, Hq or 1, Sq, Sk]."""
        return self.mask_shape + (self.query_shape[2], self.key_shape[2])

    def block_mask_full_shape(self):
        """[B or 1, Hq or 1, ceil(Sq / rows), ceil(Sk / keys)]."""
        return self.block_mask_shape + _block_counts(
            self.query_shape[2], self.key_shape[2], self.block_size)

    def native(self):
        """The compiler's description of it (needs the compiler)."""
        return compiler().Spec(list(self.query_shape), list(self.key_shape),
                               self.value_dim, self.dtype, self.causal,
                               self.window, self.scale, self.softcap,
                               self.with_lse, self.key_lengths,
                               self.mask_dtype, self.mask_shape,
                               self.block_size, self.block_mask_shape)

    @classmethod
    def from_json(cls, fields):
        """The inverse of _asdict() through JSON (lists back to tuples)."""
        fields = dict(fields)
        for name in ("query_shape", "key_shape", "window", "mask_shape",
                     "block_size", "block_mask_shape"):
            if fields.get(name) is not None:
                fields[name] = tuple(fields[name])
        return cls(**fields)


def _block_counts(seq_q, seq_k, block_size):
    rows, keys = block_size
    return (-(-seq_q // rows), -(-seq_k // keys))


def padded_shape(shape):
    """A mask's shape with its left-out leading dimensions (size 1)."""
    return (1,) * (4 - len(shape)) + tuple(int(x) for x in shape)


def _leading_sizes(name, shape, batch, heads, trailing, description):
    """The (batch, heads) sizes of a mask operand of `shape`: 2 to 4
    dimensions, left-out leading ones 1; its batch B or 1, heads Hq or 1 and
    last two sizes in `trailing`'s two tuples of allowed sizes."""
    shape = tuple(int(x) for x in shape)
    padded = padded_shape(shape)
    fits = (2 <= len(shape) <= 4 and padded[0] in (batch, 1) and padded[1] in (heads, 1)
            and all(size in allowed for size, allowed in zip(padded[2:], trailing)))
    if not fits:
        raise ValueError(f"{name} of shape {shape} must be {description}")
    return padded[:2]


def make_spec(query_shape, key_shape, value_shape, dtype, *, causal, scale,
              window, softcap, enable_gqa, return_lse, key_lengths=None,
              attn_mask=None, block_mask=None, block_size=None):
    """The Spec of attention(q, k, v, ...) on tensors of these shapes and
    element type name (float32, float16, bfloat16), key_lengths the shape
    of the key lengths, attn_mask the (shape, element type name) of the
    mask, block_mask the shape of the block mask of blocks block_size, each
    or None; ValueError says what is wrong with the arguments (the compiler
    checks the rest)."""
    if dtype not in DTYPE_NAMES:
        raise ValueError(f"Q is {dtype}: attn_mlir takes float32, float16 or bfloat16")
    shapes = {"Q": tuple(query_shape), "K": tuple(key_shape), "V": tuple(value_shape)}
    for name, shape in shapes.items():
        if len(shape) != 4:
            raise ValueError(f"{name} must be [B, H, S, D], got shape {shape}")
    q, k, v = shapes["Q"], shapes["K"], shapes["V"]
    if k[1] != q[1] and not enable_gqa:
        raise ValueError(f"Q has {q[1]} heads and K {k[1]}: pass enable_gqa=True for grouped-query attention")
    if v[:3] != k[:3]:
        raise ValueError(f"V {v} does not match K {k}")
    if key_lengths is not None and tuple(key_lengths) != q[:1]:
        raise ValueError(f"key_lengths must be [B] = [{q[0]}], got shape {tuple(key_lengths)}")
    if window is not None:
        window = (int(window[0]), int(window[1]))
    mask_dtype = mask_shape = None
    if attn_mask is not None:
        shape, mask_type = attn_mask
        if mask_type not in MASK_DTYPE_NAMES:
            raise ValueError(f"attn_mask is {mask_type}: attn_mlir takes a bool mask (True keeps "
                             "the score) or a float32, float16 or bfloat16 one (added to it)")
        mask_dtype = MASK_DTYPE_NAMES[mask_type]
        mask_shape = _leading_sizes(
            "attn_mask", shape, q[0], q[1], ((q[2], 1), (k[2], 1)),
            f"broadcastable to [B, Hq, Sq, Sk] = [{q[0]}, {q[1]}, {q[2]}, {k[2]}]")
    if (block_mask is None) != (block_size is None):
        raise ValueError("a block mask needs both block_mask and block_size=(rows, keys)")
    block_mask_shape = None
    if block_mask is not None:
        if len(block_size) != 2 or min(block_size) < 1:
            raise ValueError(f"block_size must be two positive sizes (rows, keys), got {block_size}")
        block_size = (int(block_size[0]), int(block_size[1]))
        counts = _block_counts(q[2], k[2], block_size)
        block_mask_shape = _leading_sizes(
            "block_mask", block_mask, q[0], q[1], ((counts[0],), (counts[1],)),
            f"[B or 1, Hq or 1, ceil(Sq / {block_size[0]}), ceil(Sk / {block_size[1]})]"
            f" = [{q[0]} or 1, {q[1]} or 1, {counts[0]}, {counts[1]}]")
    return Spec(tuple(int(x) for x in q), tuple(int(x) for x in k), int(v[3]),
                DTYPE_NAMES[dtype], bool(causal), window,
                None if scale is None else float(scale),
                None if softcap is None else float(softcap), bool(return_lse),
                key_lengths is not None, mask_dtype, mask_shape, block_size,
                block_mask_shape)


def compiler():
    """The compiler's bindings (they need LLVM and MLIR's libraries)."""
    try:
        from . import _attn_mlir
    except ImportError as error:
        raise CompilerError(
            f"the compiler of attn_mlir cannot be loaded ({error}); on a machine "
            "without it, load kernel bundles compiled elsewhere with "
            "attn_mlir.load_bundles") from None
    return _attn_mlir

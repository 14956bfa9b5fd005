"""The attention a call describes: checked once, hashable (each compiles
once) and written as JSON next to a saved kernel bundle."""

import math
import numbers
from typing import NamedTuple, Optional, Tuple

import numpy as np

from ._errors import CompilerError

# The largest size the compiler takes (the C API's bound; its verifier then
# bounds every operand to 2^48 bytes), and the largest count of a GPU
# target (CUDA's grid dimension).
MAX_SIZE = 2 ** 62
MAX_COUNT = 2 ** 31 - 1
# FlashAttention's window side for "unbounded", and the compiler's.
_FA_UNBOUNDED = -1
UNBOUNDED = 2 ** 63 - 1

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

    def lengths(self):
        """(B, Sq, Sk): what a compiled attention of run-time lengths takes
        at each call."""
        return (self.query_shape[0], self.query_shape[2], self.key_shape[2])

    def without_lengths(self):
        """The spec with B, Sq and Sk left out (None), and a mask's leading
        sizes as whether each is a slice per sequence or head (1) or
        broadcasts (0): what one CPU compilation of run-time lengths serves
        (the C API's rule: size 1 broadcasts)."""
        def per(shape):
            return None if shape is None else tuple(int(size != 1) for size in shape)
        return self._replace(query_shape=(None, self.query_shape[1], None, self.query_shape[3]),
                             key_shape=(None, self.key_shape[1], None, self.key_shape[3]),
                             mask_shape=per(self.mask_shape),
                             block_mask_shape=per(self.block_mask_shape))

    def native(self, run_time_lengths=False):
        """The compiler's description of it (needs the compiler); with
        run_time_lengths, B, Sq and Sk are given at each run."""
        return compiler().Spec(list(self.query_shape), list(self.key_shape),
                               self.value_dim, self.dtype, self.causal,
                               self.window, self.scale, self.softcap,
                               self.with_lse, self.key_lengths,
                               self.mask_dtype, self.mask_shape,
                               self.block_size, self.block_mask_shape,
                               run_time_lengths)

    @classmethod
    def from_json(cls, fields):
        """The inverse of _asdict() through JSON, checked as make_spec checks
        a call: ValueError names the field that is wrong."""
        if not isinstance(fields, dict):
            raise ValueError(f"the spec must be a JSON object, got {type(fields).__name__}")
        unknown = set(fields) - set(cls._fields)
        if unknown:
            raise ValueError(f"unknown spec fields {sorted(unknown)}")
        required = set(cls._fields) - set(cls._field_defaults)
        if required - set(fields):
            raise ValueError(f"spec fields {sorted(required - set(fields))} are missing")
        f = {**cls._field_defaults, **fields}
        def shape(name, rank, allow_none=False):
            value = f[name]
            if value is None and allow_none:
                return None
            if not isinstance(value, (list, tuple)) or len(value) != rank:
                raise ValueError(f"{name} must be a list of {rank} sizes, got {value!r}")
            return tuple(_integer(f"{name}[{i}]", x, 1, MAX_SIZE) for i, x in enumerate(value))
        def flag(name):
            if not isinstance(f[name], bool):
                raise ValueError(f"{name} must be true or false, got {f[name]!r}")
            return f[name]
        def number(name, check):
            value = f[name]
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            return check(value)
        dtype = f["dtype"]
        if dtype not in DTYPE_NAMES.values():
            raise ValueError(f"dtype must be one of {sorted(DTYPE_NAMES.values())}, got {dtype!r}")
        mask_dtype = f["mask_dtype"]
        if mask_dtype is not None and mask_dtype not in MASK_DTYPE_NAMES.values():
            raise ValueError(f"mask_dtype must be one of {sorted(set(MASK_DTYPE_NAMES.values()))}, "
                             f"got {mask_dtype!r}")
        window = f["window"]
        if window is not None:
            if not isinstance(window, (list, tuple)) or len(window) != 2:
                raise ValueError(f"window must be a list of two sides, got {window!r}")
            window = tuple(_integer(f"window[{i}]", x, 0, UNBOUNDED) for i, x in enumerate(window))
        spec = cls(shape("query_shape", 4), shape("key_shape", 4),
                   _integer("value_dim", f["value_dim"], 1, MAX_SIZE), dtype,
                   flag("causal"), window, number("scale", lambda x: _positive_float32("scale", x)),
                   number("softcap", lambda x: _positive_float32("softcap", x)),
                   flag("with_lse"), flag("key_lengths"), mask_dtype,
                   shape("mask_shape", 2, True), shape("block_size", 2, True),
                   shape("block_mask_shape", 2, True))
        if (spec.mask_dtype is None) != (spec.mask_shape is None) or \
                (spec.block_size is None) != (spec.block_mask_shape is None):
            raise ValueError("a mask needs mask_dtype and mask_shape, a block mask "
                             "block_size and block_mask_shape")
        return spec


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


def _integer(name, value, low, high):
    """`value` as an int from low to high, or ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if not low <= value <= high:
        bound = "2^62" if high == MAX_SIZE else "2^63 - 1" if high == UNBOUNDED else high
        raise ValueError(f"{name} must be from {low} to {bound}, got {value}")
    return value


def _shape(name, shape, low=1):
    """A tuple of sizes (each from `low` to 2^62), or ValueError."""
    try:
        sizes = tuple(shape)
    except TypeError:
        raise ValueError(f"{name} must be a shape (a sequence of sizes), got {shape!r}") from None
    return tuple(_integer(f"{name}'s size {i}", x, low, MAX_SIZE) for i, x in enumerate(sizes))


def _positive_float32(name, value):
    """`value` as a float that float32 holds as a positive finite number
    (the compiler's scale and softcap), or ValueError."""
    if not isinstance(value, bool) and isinstance(value, numbers.Real):
        try:
            with np.errstate(over="ignore"):
                single = float(np.float32(float(value)))
        except OverflowError:
            single = math.inf
        if math.isfinite(single) and single > 0:
            return float(value)
    raise ValueError(f"{name} must be a positive finite number (in float32), got {value!r}")


def text(name, value):
    """`value` as a str the compiler can take (UTF-8, no NUL), or ValueError."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a str, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{name} is not valid Unicode text: {error.reason} at {error.start}") from None
    if "\0" in value:
        raise ValueError(f"{name} holds a NUL character")
    return value


def _window(window):
    """(left, right) with FlashAttention's -1 for an unbounded side; None or
    (-1, -1): no window."""
    try:
        left, right = window
    except (TypeError, ValueError):
        raise ValueError(f"window must be (left, right), got {window!r}") from None
    sides = tuple(UNBOUNDED if isinstance(x, numbers.Integral) and not isinstance(x, bool)
                  and x == _FA_UNBOUNDED else _integer(f"window's {name} side", x, 0, UNBOUNDED)
                  for name, x in (("left", left), ("right", right)))
    return None if sides == (UNBOUNDED, UNBOUNDED) else sides


def make_spec(query_shape, key_shape, value_shape, dtype, *, causal, scale,
              window, softcap, enable_gqa, return_lse, key_lengths=None,
              attn_mask=None, block_mask=None, block_size=None):
    """The Spec of attention(q, k, v, ...) on tensors of these shapes and
    element type name (float32, float16, bfloat16), key_lengths the shape
    of the key lengths, attn_mask the (shape, element type name) of the
    mask, block_mask the shape of the block mask of blocks block_size, each
    or None (key_lengths True: of shape [B]). Every pair of sizes that must agree is compared here, once for
    the CPU and the GPU; ValueError names the argument and both sizes. Sk
    may be 0 (an empty cache: the caller returns O = 0, LSE = -inf)."""
    if not isinstance(dtype, str) or dtype not in DTYPE_NAMES:
        raise ValueError(f"Q is {dtype}: attn_mlir takes float32, float16 or bfloat16")
    shapes = {}
    for name, shape, low in (("Q", query_shape, 1), ("K", key_shape, 0), ("V", value_shape, 0)):
        shape = _shape(name, shape, low)
        if len(shape) != 4:
            raise ValueError(f"{name} must be [B, H, S, D] (or Q, K and V all [B, S, D]), "
                             f"got shape {shape}")
        shapes[name] = shape
    q, k, v = shapes["Q"], shapes["K"], shapes["V"]
    for name, shape in (("K", k), ("V", v)):
        for i in (1, 3):
            if shape[i] < 1:
                raise ValueError(f"{name} has a zero size in shape {shape}: only Sk may be 0")
    if k[0] != q[0]:
        raise ValueError(f"K has batch {k[0]} and Q {q[0]}: give one batch size")
    if k[3] != q[3]:
        raise ValueError(f"K has head dimension {k[3]} and Q {q[3]}: they must agree")
    if v[:3] != k[:3]:
        raise ValueError(f"V {v} does not match K {k} in [B, Hkv, Sk]")
    if k[1] != q[1] and not enable_gqa:
        raise ValueError(f"Q has {q[1]} heads and K {k[1]}: pass enable_gqa=True for grouped-query attention")
    if q[1] % k[1]:
        raise ValueError(f"Q has {q[1]} heads, not a multiple of K's {k[1]}")
    if key_lengths is False:
        key_lengths = None
    elif key_lengths is True:
        key_lengths = q[:1]
    if key_lengths is not None and _shape("key_lengths", key_lengths, 0) != q[:1]:
        raise ValueError(f"key_lengths must be [B] = [{q[0]}], got shape {tuple(key_lengths)}")
    if window is not None:
        window = _window(window)
    if scale is not None:
        scale = _positive_float32("scale", scale)
    if softcap is not None and not (isinstance(softcap, numbers.Real) and softcap == 0):
        softcap = _positive_float32("softcap (0 or None: none)", softcap)
    else:
        softcap = None
    mask_dtype = mask_shape = None
    if attn_mask is not None:
        try:
            shape, mask_type = attn_mask
        except (TypeError, ValueError):
            raise ValueError(f"attn_mask must be (shape, dtype), got {attn_mask!r}") from None
        if not isinstance(mask_type, str) or mask_type not in MASK_DTYPE_NAMES:
            raise ValueError(f"attn_mask is {mask_type}: attn_mlir takes a bool mask (True keeps "
                             "the score) or a float32, float16 or bfloat16 one (added to it)")
        mask_dtype = MASK_DTYPE_NAMES[mask_type]
        mask_shape = _leading_sizes(
            "attn_mask", _shape("attn_mask", shape, 0), q[0], q[1], ((q[2], 1), (k[2], 1)),
            f"broadcastable to [B, Hq, Sq, Sk] = [{q[0]}, {q[1]}, {q[2]}, {k[2]}]")
    if (block_mask is None) != (block_size is None):
        raise ValueError("a block mask needs both block_mask and block_size=(rows, keys)")
    block_mask_shape = None
    if block_mask is not None:
        try:
            block_size = _shape("block_size", block_size)
            if len(block_size) != 2:
                raise ValueError
        except ValueError:
            raise ValueError(f"block_size must be two positive sizes (rows, keys) of at most "
                             f"2^62, got {block_size!r}") from None
        counts = _block_counts(q[2], k[2], block_size)
        block_mask_shape = _leading_sizes(
            "block_mask", _shape("block_mask", block_mask, 0), q[0], q[1],
            ((counts[0],), (counts[1],)),
            f"[B or 1, Hq or 1, ceil(Sq / {block_size[0]}), ceil(Sk / {block_size[1]})]"
            f" = [{q[0]} or 1, {q[1]} or 1, {counts[0]}, {counts[1]}]")
    return Spec(q, k, v[3], DTYPE_NAMES[dtype], bool(causal), window, scale, softcap,
                bool(return_lse), key_lengths is not None, mask_dtype, mask_shape,
                block_size, block_mask_shape)


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

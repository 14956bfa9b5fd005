"""The attention a call describes: checked once, hashable (each compiles
once) and written as JSON next to a saved kernel bundle."""

from typing import NamedTuple, Optional, Tuple

from ._errors import CompilerError

# Element type names of the compiler (attn.attention's f32, f16, bf16), by
# the names NumPy and PyTorch give them.
DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


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

    def out_shape(self):
        return self.query_shape[:3] + (self.value_dim,)

    def lse_shape(self):
        return self.query_shape[:3]

    def native(self):
        """The compiler's description of it (needs the compiler)."""
        return compiler().Spec(list(self.query_shape), list(self.key_shape),
                               self.value_dim, self.dtype, self.causal,
                               self.window, self.scale, self.softcap,
                               self.with_lse, self.key_lengths)

    @classmethod
    def from_json(cls, fields):
        """The inverse of _asdict() through JSON (lists back to tuples)."""
        fields = dict(fields)
        for name in ("query_shape", "key_shape", "window"):
            if fields[name] is not None:
                fields[name] = tuple(fields[name])
        return cls(**fields)


def make_spec(query_shape, key_shape, value_shape, dtype, *, causal, scale,
              window, softcap, enable_gqa, return_lse, key_lengths=None):
    """The Spec of attention(q, k, v, ...) on tensors of these shapes and
    element type name (float32, float16, bfloat16), key_lengths the shape
    of the key lengths or None; ValueError says what is wrong with the
    arguments (the compiler checks the rest)."""
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
    return Spec(tuple(int(x) for x in q), tuple(int(x) for x in k), int(v[3]),
                DTYPE_NAMES[dtype], bool(causal), window,
                None if scale is None else float(scale),
                None if softcap is None else float(softcap), bool(return_lse),
                key_lengths is not None)


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

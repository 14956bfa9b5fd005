#!/usr/bin/env python3
"""Runs families of bad input against the attn_mlir Python package and tabulates what each gets.

The Python counterpart of scripts/robustness-sweep.py (the command-line
tools). Every input is a few lines of Python run once in its own interpreter
(/usr/bin/python3 -c CODE, PYTHONPATH=<build>/python) under a time limit and
an 8 GiB address-space limit, and its outcome is classified:
  error     the call raised ValueError, attn_mlir.CompilerError,
            attn_mlir.GpuError or OSError with a message (a ValueError or
            OSError naming the argument or file; the goal)
  accepted  the call returned, and the result is right: attention() against
            a NumPy float64 reference of its semantics (relative L2 below
            1e-4 in float32, 5e-3 in float16, 2e-2 in bfloat16; the kind,
            dtype, byte order and shape of O and LSE); run_pipeline,
            precompile, save_bundles and load_bundles: returned what they
            return
  wrong     the call returned a wrong result (kind, shape, dtype, byte
            order, values), or loaded a bundle whose attention.json or
            manifest mislabels its kernel
  crash     killed by a signal, or an LLVM stack dump / "LLVM ERROR"
  hang      still running at the time limit
  unclear   anything else: TypeError, IndexError, OverflowError, KeyError,
            RecursionError, AttributeError, MemoryError (or any other
            exception) escaping; a ValueError / CompilerError holding a
            pybind11 "incompatible function arguments" dump, or not naming
            the argument; a non-zero exit without a Python exception
The table (markdown) comes first, then the inputs that crash, hang, end
unclearly or give a wrong result, each with its reproducer; then, for
information, documented-valid inputs that were refused. The exit status is
1 when there is any such bad case.

Inputs are seeded (random.Random(N)): a run is reproducible. The
reproducers use helpers of the prelude every input runs after
(`_arr(shape, dtype, seed)`: a standard normal array, or a zero-stride view
of 0.5 for more than 2^20 elements; `_t(shape, dtype, seed)`: the same as a
torch CPU tensor; GOOD and HASH: the folder of a real saved bundle and the
name of its bundle folder; `--show-prelude` prints it).

Usage: scripts/python-robustness-sweep.py [--build build] [--timeout 60]
           [--jobs 2] [--family NAME ...] [--match TEXT] [--report FILE]
           [--verbose] [--list] [--show-prelude]
(families: shapes, dtypes, options, pipelines, precompiles, bundles). A run
of all of them, about 1,400 inputs, takes 5 to 12 minutes on two cores.
An input whose interpreter cannot import the package (someone rebuilding
it) is retried every 30 s.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

from json_mutations import mutations

INT64_MAX = 2**63 - 1
MEMORY_LIMIT = 8 << 30
PYTHON = "/usr/bin/python3"
# Sizes tried for every dimension (source text).
SIZES = ["0", "1", "3", "2**31", "2**62", "2**63", "2**64", "-1"]
# Values tried for every option of attention() (source text).
OPTION_VALUES = ["None", "0", "-1", "-2", "1.5", "float('nan')", "float('inf')",
                 "-float('inf')", "2**31", "2**62", "2**63", "2**64", "'a'", "()",
                 "(1,)", "(1, 2, 3)", "[[1]]", "True", "1e300", "1e-300",
                 "np.ones((3, 3))", "np.float32(0.5)", "np.int64(3)"]
# Exceptions that must not escape the package.
UNCLEAR_TYPES = {"TypeError", "IndexError", "OverflowError", "KeyError",
                 "RecursionError", "AttributeError", "MemoryError"}
OUTCOMES = ["error", "accepted", "wrong", "crash", "hang", "unclear"]
BAD = ("crash", "hang", "unclear", "wrong")
# What a GPU target looks like to precompile (an A100).
A100 = 'chip="sm_80", sms=108, smem_per_block=166912'
# The bundle every bundle case starts from (test_gpu_bundles.py's).
GOOD_SPEC = ('(2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16", '
             'causal=True, enable_gqa=True, ' + A100)

# What every input runs first. {good} and {hash} are filled in.
PRELUDE = r'''
import json, math, os, shutil, sys
import numpy as np
import attn_mlir
try:
    from attn_mlir import _attn_mlir
except ImportError as _error:
    print("@@IMPORT", _error, flush=True)
    sys.exit(97)
from numpy.lib.stride_tricks import as_strided
GOOD, HASH = {good!r}, {hash!r}
print("@@START", flush=True)


def _emit(outcome, **fields):
    print("@@OUTCOME " + json.dumps(dict(outcome=outcome, **fields)), flush=True)


def _raised(error):
    try:
        message = str(error)
    except BaseException as e:
        message = "<str() raised " + type(e).__name__ + ">"
    _emit("raised", type=type(error).__name__,
          mro=[c.__name__ for c in type(error).__mro__], message=message[:3000])


def _arr(shape, dtype="float32", seed=0):
    """A standard normal array (a zero-stride view of 0.5 beyond 2^20
    elements) of `dtype`: integers as 4x rounded, bool as > 0."""
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    if math.prod(shape) > 1 << 20:
        return as_strided(np.full(1, 0.5, dtype), shape, (0,) * len(shape))
    x = np.random.default_rng(seed).standard_normal(shape)
    if dtype.kind == "b":
        return x > 0
    if dtype.kind == "u":
        return np.abs(x * 4).astype(dtype)
    if dtype.kind == "i":
        return (x * 4).astype(dtype)
    return x.astype(dtype)


def _t(shape, dtype="float32", seed=0):
    """_arr as a torch CPU tensor of torch's `dtype`."""
    import torch
    kind = "bool" if dtype == "bool" else "int64" if "int" in dtype else "float32"
    return torch.from_numpy(np.ascontiguousarray(_arr(shape, kind, seed))).to(getattr(torch, dtype))


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _host(x):
    """x as a NumPy array (torch floats as float64)."""
    if _is_torch(x):
        x = x.detach()
        return (x.double() if x.dtype.is_floating_point else x).numpy()
    return np.asarray(x)


def _side(x):
    x = int(x)
    return 1 << 40 if x == -1 else min(x, 1 << 40)


def _reference(q, k, v, attn_mask=None, causal=False, scale=None, window=None, softcap=None,
               enable_gqa=False, return_lse=False, key_lengths=None, block_mask=None,
               block_size=None):
    """float64 O and LSE with attention()'s documented semantics."""
    q, k, v = (_host(x).astype(np.float64) for x in (q, k, v))
    mask = None if attn_mask is None else _host(attn_mask)
    blocks = None if block_mask is None else _host(block_mask)
    if q.ndim == 3:
        q, k, v = q[:, None], k[:, None], v[:, None]
        if mask is not None:
            mask = np.expand_dims(mask, mask.ndim - 2)
        if blocks is not None:
            blocks = np.expand_dims(blocks, blocks.ndim - 2)
    b, hq, sq, d = q.shape
    hkv, sk, dv = k.shape[1], k.shape[2], v.shape[3]
    if sk == 0:
        return np.zeros((b, hq, sq, dv)), np.full((b, hq, sq), -np.inf)
    k, v = np.repeat(k, hq // hkv, 1), np.repeat(v, hq // hkv, 1)
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * (1 / math.sqrt(d) if scale is None else float(scale))
    if softcap:
        s = float(softcap) * np.tanh(s / float(softcap))
    if key_lengths is None:
        lengths = np.full(b, sk)
    else:
        lengths = np.array([min(max(int(x), 0), sk) for x in _host(key_lengths).reshape(-1)])
    length = lengths[:, None, None]
    rows = np.arange(sq)[None, :, None] + length - sq
    keys = np.arange(sk)[None, None, :]
    visible = keys < length
    if causal:
        visible = visible & (keys <= rows)
    if window is not None:
        left, right = (_side(x) for x in window)
        visible = visible & (keys >= rows - left) & (keys <= rows + right)
    visible = np.broadcast_to(visible[:, None], s.shape)
    full = np.zeros(s.shape, bool)
    if blocks is not None:
        blocks = np.asarray(blocks)
        blocks = (np.minimum(blocks, 127) if blocks.dtype.kind == "u" else blocks).astype(np.int64)
        blocks = np.clip(blocks, -128, 127)
        blocks = blocks.reshape((1,) * (4 - blocks.ndim) + blocks.shape)
        rows_per, keys_per = (int(x) for x in block_size)
        blocks = np.repeat(np.repeat(blocks, min(rows_per, sq), 2), min(keys_per, sk), 3)
        blocks = np.broadcast_to(blocks[:, :, :sq, :sk], s.shape)
        full = blocks == 2
        visible = visible & (blocks != 0)
    if mask is not None:
        mask = np.broadcast_to(mask.reshape((1,) * (4 - mask.ndim) + mask.shape), s.shape)
        if mask.dtype == bool:
            visible = visible & (mask | full)
        else:
            s = s + np.where(full, 0, mask.astype(np.float32).astype(np.float64))
    s = np.where(visible, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    o = np.where(total > 0, (e @ v) / np.where(total > 0, total, 1), 0)
    t = total[..., 0]
    lse = np.where(t > 0, np.log(np.where(t > 0, t, 1)) + m[..., 0], -np.inf)
    return o, lse


def _rel_l2(x, ref):
    return float(np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-30))


def _compare(what, got, ref, tolerance):
    """None, or why `got` (float64) is not `ref`."""
    if not np.array_equal(np.isnan(got), np.isnan(ref)):
        return f"{what}: NaN at {int(np.isnan(got).sum())} places, the reference at {int(np.isnan(ref).sum())}"
    if not np.array_equal(np.isinf(got) & (got < 0), np.isinf(ref) & (ref < 0)):
        return f"{what}: -inf at {int(np.isneginf(got).sum())} places, the reference at {int(np.isneginf(ref).sum())}"
    finite = np.isfinite(ref)
    if not np.all(np.isfinite(got[finite])):
        return f"{what}: {int((~np.isfinite(got[finite])).sum())} non-finite values where the reference is finite"
    error = _rel_l2(got[finite], ref[finite])
    if not error <= tolerance:
        return f"{what}: relative L2 error {error:.3g} > {tolerance}"
    return None


def _expected_dtype(q):
    if _is_torch(q):
        return str(q.dtype).replace("torch.", "")
    dtype = np.asarray(q).dtype
    return dtype.newbyteorder("=").name if dtype.kind == "f" else dtype.name


def _check_attention(result, q, k, v, attn_mask=None, **opts):
    """Emits accepted or wrong for attention(q, k, v, attn_mask, **opts) = result."""
    torch_in = _is_torch(q)
    dtype = _expected_dtype(q)
    tolerance = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 2e-2}.get(dtype)
    if tolerance is None:
        return _emit("wrong", reason=f"took Q of dtype {dtype} and returned")
    if opts.get("return_lse"):
        if not isinstance(result, tuple) or len(result) != 2:
            return _emit("wrong", reason=f"return_lse: got {type(result).__name__}, not (O, LSE)")
        o, lse = result
    else:
        if isinstance(result, tuple):
            return _emit("wrong", reason="a tuple without return_lse")
        o, lse = result, None
    shape_q, shape_v = tuple(_host_shape(q)), tuple(_host_shape(v))
    want = {"O": (o, shape_q[:-1] + shape_v[-1:], dtype)}
    if lse is not None:
        want["LSE"] = (lse, shape_q[:-1], "float32")
    for name, (x, shape, kind) in want.items():
        if torch_in != _is_torch(x) or not (torch_in or isinstance(x, np.ndarray)):
            return _emit("wrong", reason=f"{name} is a {type(x).__module__}.{type(x).__name__} "
                                         f"for {'torch' if torch_in else 'NumPy'} input")
        got = str(x.dtype).replace("torch.", "") if torch_in else x.dtype.name
        if got != kind:
            return _emit("wrong", reason=f"{name} is {got}, not {kind}")
        if not torch_in and not x.dtype.isnative:
            return _emit("wrong", reason=f"{name} is in non-native byte order ({x.dtype.str})")
        if tuple(x.shape) != shape:
            return _emit("wrong", reason=f"{name} has shape {tuple(x.shape)}, not {shape}")
    sk = _host_shape(k)[-2]
    if math.prod(shape_q[:-1]) * max(sk, 1) * max(shape_q[-1], shape_v[-1]) > 5e7:
        return _emit("ok", note="too large for the reference: kind, dtype and shape checked")
    for x in (q, k, v):
        h = _host(x)
        if h.dtype.kind in "fc" and not np.isfinite(h).all():
            return _emit("ok", note="non-finite input: kind, dtype and shape checked")
    if attn_mask is not None and _host(attn_mask).dtype.kind == "f":
        h = _host(attn_mask).astype(np.float32)
        if np.isnan(h).any() or np.isposinf(h).any():
            return _emit("ok", note="NaN or +inf in the mask (as float32): kind, dtype and shape checked")
    ref_o, ref_lse = _reference(q, k, v, attn_mask, **opts)
    if len(shape_q) == 3:
        ref_o, ref_lse = ref_o[:, 0], ref_lse[:, 0]
    why = _compare("O", _host(o).astype(np.float64), ref_o, tolerance)
    if why is None and lse is not None:
        why = _compare("LSE", _host(lse).astype(np.float64), ref_lse, tolerance)
    if why:
        return _emit("wrong", reason=why)
    _emit("ok")


def _host_shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _check_returned(result, kind):
    """run_pipeline (a str), precompile (a manifest: JSON text), save /
    load_bundles (a count)."""
    if kind == "str" and not isinstance(result, str):
        return _emit("wrong", reason=f"returned {type(result).__name__}, not str")
    if kind == "json":
        try:
            manifest = json.loads(result)
            assert isinstance(manifest, dict) and len(manifest["kernels"]) == 1
        except Exception as error:
            return _emit("wrong", reason=f"returned {result!r:.200}, not a manifest ({error!r})")
    if kind == "count" and (not isinstance(result, int) or result < 0):
        return _emit("wrong", reason=f"returned {result!r}, not a count")
    _emit("ok", note=f"{result!r:.60}")


def _check_saved(result, directory):
    """save_bundles(directory) returned: one bundle folder of three regular
    files, its attention.json JSON."""
    folder = os.path.join(os.fsdecode(directory), HASH)
    if result != 1:
        return _emit("wrong", reason=f"returned {result!r}, not 1")
    for name in ("manifest.json", "kernels.ptx", "attention.json"):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) == 0:
            return _emit("wrong", reason=f"{path} is not a regular non-empty file")
    with open(os.path.join(folder, "attention.json")) as f:
        json.load(f)
    leftovers = [n for n in os.listdir(folder) if n.startswith(".")]
    if leftovers:
        return _emit("wrong", reason=f"temporary files left: {leftovers}")
    _emit("ok")


def _check_refused(result, why):
    """A call that must have been refused returned."""
    _emit("wrong", reason=f"returned {result!r:.60}: {why}")


def _bundle(case):
    """A copy of GOOD (a folder holding one bundle folder, HASH) for this
    case: returns (the folder, its bundle folder)."""
    directory = os.path.abspath(case)
    shutil.copytree(GOOD, directory, symlinks=True)
    return directory, os.path.join(directory, HASH)


def _replace(path, make):
    """Removes `path` (a file or folder) and calls make(path)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)
    make(path)


def _write(path, data):
    def make(p):
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    _replace(path, make)


def _edit_json(path, edit):
    with open(path) as f:
        value = json.load(f)
    value = edit(value) or value
    with open(path, "w") as f:
        json.dump(value, f)


def _set(path, keys, value):
    """Sets (value "delete": deletes) the field at `keys` of the JSON file."""
    def edit(root):
        parent = root
        for key in keys[:-1]:
            parent = parent[key]
        if isinstance(value, str) and value == "delete":
            del parent[keys[-1]]
        else:
            parent[keys[-1]] = value
    _edit_json(path, edit)
'''


class Case:
    """One input: `setup` (statements), `call` (an expression whose value
    is `_result`) and `check` (statements run when the call returned; they
    emit the outcome). A ValueError / OSError must name one of `names`
    (none: any message). `valid`: documented as valid input (a refusal is
    listed as a note)."""

    def __init__(self, family, description, setup, call, check, names=(), valid=False):
        self.family = family
        self.description = description
        self.setup = textwrap.dedent(setup).strip()
        self.call = call
        self.check = textwrap.dedent(check).strip()
        self.names = tuple(names)
        self.valid = valid

    def reproducer(self):
        lines = [self.setup] if self.setup else []
        return "\n".join(lines + [self.call])


def _names_in(names, message):
    for name in names:
        if re.fullmatch(r"[A-Z]", name):
            if re.search(r"(?<![A-Za-z_])" + name + r"(?![A-Za-z_])", message):
                return True
        elif name.lower() in message.lower():
            return True
    return False


def _tuple(values):
    return "(" + ", ".join(values) + ("," if len(values) == 1 else "") + ")"


def _representable(shapes, itemsize):
    """Whether NumPy can hold views of these shapes."""
    try:
        sizes = [[int(eval(s)) for s in shape] for shape in shapes]
    except Exception:
        return False
    return all(all(x >= 0 for x in shape) and math.prod(shape) * itemsize < 2**63
               for shape in sizes)


class Sweep:
    def __init__(self, build, timeout, work):
        self.python_dir = os.path.join(build, "python")
        self.timeout = timeout
        self.work = work
        self.cases = []
        self.good = os.path.join(work, "good")
        self.hash = ""
        self.retries = 0
        self.retry_lock = threading.Lock()

    def add(self, family, description, setup, call, check, names=(), valid=False):
        self.cases.append(Case(family, description, setup, call, check, names, valid))

    def attention(self, family, description, setup, call_args="q, k, v, **opts", names=(),
                  valid=False):
        """attention(...) checked against the reference."""
        self.add(family, description, setup, f"attn_mlir.attention({call_args})",
                 f"_check_attention(_result, {call_args})", names, valid)

    def precompile(self, family, description, shapes, dtype='"float16"',
                   options="", target=A100, names=("Q", "K", "V", "Sk", "shape"), valid=False):
        args = ", ".join(list(shapes) + [dtype] + ([options] if options else []) + [target])
        self.add(family, description, "", f"attn_mlir.precompile({args})",
                 '_check_returned(_result, "json")', names, valid)

    # --- the families -----------------------------------------------------
    def shapes(self):
        family = "attention shapes"
        base = {"Q": ["2", "2", "5", "8"], "K": ["2", "2", "7", "8"], "V": ["2", "2", "7", "6"]}
        seeds = {"Q": 1, "K": 2, "V": 3}
        dims = ["B", "H", "S", "D"]

        def case(description, shapes, dtype="float32", options="", names=("Q", "K", "V"),
                 valid=False):
            """attention on arrays of these shapes where NumPy can hold
            them (zero-stride views beyond 2^20 elements), else precompile
            of the same shapes."""
            itemsize = 2 if dtype == "float16" else 4
            if _representable(shapes.values(), itemsize):
                setup = "\n".join(f"{n.lower()} = _arr({_tuple(s)}, {dtype!r}, {seeds[n]})"
                                  for n, s in shapes.items())
                setup += f"\nopts = dict({options})"
                self.attention(family, description, setup, names=names, valid=valid)
            else:
                self.precompile(family, description + " (precompile)",
                                [_tuple(shapes[n]) for n in "QKV"], f'"{dtype}"', options,
                                names=names, valid=valid)

        # Each size of each operand.
        for name in "QKV":
            for i, dim in enumerate(dims):
                for size in SIZES:
                    shapes = {n: list(s) for n, s in base.items()}
                    shapes[name][i] = size
                    case(f"{name} {dim}={size}", shapes)
        # Each size of each dimension, consistently.
        where = {"B": [("Q", 0), ("K", 0), ("V", 0)], "H": [("Q", 1), ("K", 1), ("V", 1)],
                 "Sq": [("Q", 2)], "Sk": [("K", 2), ("V", 2)], "D": [("Q", 3), ("K", 3)],
                 "Dv": [("V", 3)]}
        for dim, places in where.items():
            for size in SIZES:
                shapes = {n: list(s) for n, s in base.items()}
                for name, i in places:
                    shapes[name][i] = size
                case(f"all {dim}={size}", shapes)
        # Ranks 2 to 5 of each operand.
        rng = random.Random(1)
        ranks = [(a, b, c) for a in range(2, 6) for b in range(2, 6) for c in range(2, 6)]
        for rank in ranks:
            shapes = {}
            for name, r in zip("QKV", rank):
                shape = base[name]
                shapes[name] = shape[-r:] if r <= 4 else ["1"] * (r - 4) + shape
            dtype = rng.choice(["float32", "float16"])
            case(f"ranks {rank} {dtype}", shapes, dtype, valid=rank in ((3, 3, 3), (4, 4, 4)))
        # Sizes that must agree, each pair.
        for first, second in [("Q", "K"), ("Q", "V"), ("K", "V")]:
            for i, dim in enumerate(dims):
                for delta in (1, -1):
                    shapes = {n: list(s) for n, s in base.items()}
                    shapes[second][i] = str(int(shapes[second][i]) + delta)
                    case(f"{second} {dim} {'+' if delta > 0 else '-'}1 against {first}",
                         shapes, valid=(second, i) == ("V", 3))
        # GQA ratios.
        for hq, hkv in [(1, 1), (2, 1), (4, 1), (4, 2), (3, 2), (6, 4), (8, 2), (1, 2),
                        (2, 4), (6, 3), (5, 5), (7, 1), (3, 0)]:
            for gqa in (True, False):
                shapes = {"Q": ["2", str(hq), "5", "8"], "K": ["2", str(hkv), "7", "8"],
                          "V": ["2", str(hkv), "7", "6"]}
                case(f"GQA Hq={hq} Hkv={hkv} enable_gqa={gqa}", shapes,
                     rng.choice(["float32", "float16"]),
                     f"enable_gqa={gqa}, return_lse=True",
                     valid=hq == hkv or (gqa and hkv and hq % hkv == 0))
        case("V heads 1, K heads 2, Q heads 4", {"Q": ["2", "4", "5", "8"],
                                                 "K": ["2", "2", "7", "8"],
                                                 "V": ["2", "1", "7", "6"]}, options="enable_gqa=True")
        # [B, S, D] inputs.
        three = [
            ("3-D", "", True),
            ("3-D return_lse", "return_lse=True", True),
            ("3-D causal window", "causal=True, window=(2, 1)", True),
            ("3-D 3-D mask", "attn_mask=_arr((2, 5, 7), 'bool', 4)", True),
            ("3-D 2-D float mask", "attn_mask=_arr((5, 7), 'float32', 4)", True),
            ("3-D 4-D mask", "attn_mask=_arr((2, 1, 5, 7), 'bool', 4)", False),
            ("3-D 1-D mask", "attn_mask=_arr((7,), 'bool', 4)", False),
            ("3-D list mask", "attn_mask=(_arr((5, 7), 'float32', 4) > 0).tolist()", True),
            ("3-D block mask 3-D", "block_mask=np.array([[[2, 1]], [[0, 1]]]), block_size=(8, 4)", True),
            ("3-D block mask 2-D", "block_mask=np.array([[2, 1]]), block_size=(8, 4)", True),
            ("3-D block mask 4-D", "block_mask=np.array([[[[2, 1]]]]), block_size=(8, 4)", False),
            ("3-D key_lengths", "key_lengths=np.array([3, 9])", True),
            ("3-D enable_gqa", "enable_gqa=True", True),
        ]
        for description, options, valid in three:
            case(description, {"Q": ["2", "5", "8"], "K": ["2", "7", "8"], "V": ["2", "7", "6"]},
                 options=options, names=("Q", "K", "V", "attn_mask", "block_mask"), valid=valid)
        for description, shapes in [
                ("3-D Q, 4-D K and V", {"Q": ["2", "5", "8"], "K": ["2", "1", "7", "8"],
                                        "V": ["2", "1", "7", "6"]}),
                ("3-D batch mismatch", {"Q": ["2", "5", "8"], "K": ["3", "7", "8"],
                                        "V": ["3", "7", "6"]}),
                ("3-D Sk=0", {"Q": ["2", "5", "8"], "K": ["2", "0", "8"], "V": ["2", "0", "6"]}),
                ("3-D D mismatch", {"Q": ["2", "5", "8"], "K": ["2", "7", "4"],
                                    "V": ["2", "7", "6"]}),
                ("3-D V Sk mismatch", {"Q": ["2", "5", "8"], "K": ["2", "7", "8"],
                                       "V": ["2", "6", "6"]})]:
            case(description, shapes, valid="Sk=0" in description)
        setup = ("import torch\nq, k, v = _t((2, 5, 8), 'float32', 1), _t((2, 7, 8), 'float32', 2), "
                 "_t((2, 7, 6), 'float32', 3)\nopts = dict(return_lse=True, "
                 "attn_mask=_t((2, 5, 7), 'bool', 4))")
        self.attention(family, "3-D torch with a mask", setup, valid=True)
        # An empty key/value cache.
        for description, options in [
                ("Sk=0", ""), ("Sk=0 return_lse", "return_lse=True"),
                ("Sk=0 key_lengths", "key_lengths=np.array([0, 3]), return_lse=True"),
                ("Sk=0 mask", "attn_mask=np.ones((5, 0), bool)"),
                ("Sk=0 causal window softcap", "causal=True, window=(1, 1), softcap=2.0"),
                ("Sk=0 block mask", "block_mask=np.ones((1, 1, 1, 0), np.int8), block_size=(8, 8)")]:
            case(description, {"Q": ["2", "4", "5", "8"], "K": ["2", "2", "0", "8"],
                               "V": ["2", "2", "0", "6"]},
                 options="enable_gqa=True" + (", " + options if options else ""),
                 names=("Q", "K", "V", "attn_mask", "block_mask", "key_lengths"), valid=True)
        setup = ("import torch\nq, k, v = _t((2, 4, 5, 8), 'float16', 1), _t((2, 2, 0, 8), "
                 "'float16', 2), _t((2, 2, 0, 6), 'float16', 3)\nopts = dict(enable_gqa=True, "
                 "return_lse=True)")
        self.attention(family, "Sk=0 torch float16", setup, valid=True)

    def dtypes(self):
        family = "attention dtypes and kinds"
        shapes = {"q": "(2, 2, 5, 8)", "k": "(2, 2, 7, 8)", "v": "(2, 2, 7, 8)"}
        seeds = {"q": 1, "k": 2, "v": 3}
        all_dtypes = ["float32", "float16", "float64", "int32", "int64", "uint8", "bool",
                      "complex64", "object", ">f4", ">f2", "<f4", "longdouble", "U1", "int8"]

        def arrays(dtypes):
            return "\n".join(f"{n} = _arr({shapes[n]}, {dtypes[n]!r}, {seeds[n]})" for n in "qkv")

        for dtype in all_dtypes:
            self.attention(family, f"Q, K, V {dtype}",
                           arrays(dict(q=dtype, k=dtype, v=dtype)) + "\nopts = dict()",
                           names=("Q", "K", "V"), valid=dtype in ("float32", "float16", ">f4",
                                                                  ">f2", "<f4"))
        for base in ("float32", "float16"):
            for name in "qkv":
                for dtype in all_dtypes:
                    if dtype == base or (base == "float16" and dtype not in
                                         (">f2", "float32", ">f4", "float64")):
                        continue
                    dtypes = dict(q=base, k=base, v=base)
                    dtypes[name] = dtype
                    same = dtype.lstrip("<>") in (("f4",) if base == "float32" else ("f2",))
                    self.attention(family, f"{name.upper()} {dtype}, others {base}",
                                   arrays(dtypes) + "\nopts = dict()", names=("Q", "K", "V"),
                                   valid=same)
        # Masks, block masks and key lengths of every dtype.
        for base in ("float32", "float16", ">f2"):
            for dtype in ["bool", "float32", "float16", "float64", ">f4", ">f2", ">f8",
                          "int32", "uint8", "int8", "complex64", "object", "U1"]:
                if base != "float32" and dtype not in ("bool", "float32", ">f4", ">f2", "int8"):
                    continue
                self.attention(family, f"attn_mask {dtype} on {base}",
                               arrays(dict(q=base, k=base, v=base)) +
                               f"\nopts = dict(attn_mask=_arr((2, 1, 5, 7), {dtype!r}, 4))",
                               names=("attn_mask",),
                               valid=dtype.lstrip("<>") in ("bool", "float32", "float16",
                                                            "float64", "f4", "f2", "f8"))
        for dtype in ["int8", "int32", "int64", ">i4", ">i8", "uint8", "uint64", ">u8", "bool",
                      "float32", "object", "complex64", "int16"]:
            values = "np.array([[2, 1], [0, 1]])" if dtype != "bool" else \
                "np.array([[True, False], [True, True]])"
            self.attention(family, f"block_mask {dtype}",
                           arrays(dict(q="float32", k="float32", v="float32")) +
                           f"\nopts = dict(block_mask={values}.astype({dtype!r}), "
                           "block_size=(4, 4))", names=("block_mask",),
                           valid=dtype not in ("float32", "object", "complex64"))
        for dtype in ["int32", "int64", ">i4", ">i8", "uint32", "uint64", ">u8", "int8",
                      "float32", "bool", "object", "complex64"]:
            self.attention(family, f"key_lengths {dtype}",
                           arrays(dict(q="float32", k="float32", v="float32")) +
                           f"\nopts = dict(key_lengths=np.array([3, 7]).astype({dtype!r}))",
                           names=("key_lengths",),
                           valid=dtype not in ("float32", "bool", "object", "complex64"))
        # NumPy and torch mixed.
        np_qkv = arrays(dict(q="float32", k="float32", v="float32"))
        t_qkv = ("import torch\nq, k, v = _t((2, 2, 5, 8), 'float32', 1), "
                 "_t((2, 2, 7, 8), 'float32', 2), _t((2, 2, 7, 8), 'float32', 3)")
        mixed = [
            ("Q NumPy, K torch", np_qkv + "\nimport torch\nk = torch.from_numpy(k)\nopts = dict()", False),
            ("Q NumPy, V torch", np_qkv + "\nimport torch\nv = torch.from_numpy(v)\nopts = dict()", False),
            ("Q torch, K NumPy", t_qkv + "\nk = k.numpy()\nopts = dict()", False),
            ("Q torch, V NumPy", t_qkv + "\nv = v.numpy()\nopts = dict()", False),
            ("Q NumPy, K torch bfloat16", np_qkv + "\nk = _t((2, 2, 7, 8), 'bfloat16', 2)\nopts = dict()", False),
            ("Q NumPy, K torch requires_grad", np_qkv + "\nk = _t((2, 2, 7, 8), 'float32', 2).requires_grad_()\nopts = dict()", False),
            ("Q NumPy, torch bool mask", np_qkv + "\nopts = dict(attn_mask=_t((5, 7), 'bool', 4))", False),
            ("Q NumPy, torch key_lengths", np_qkv + "\nopts = dict(key_lengths=_t((2,), 'int64', 4).abs())", False),
            ("Q NumPy, torch block_mask", np_qkv + "\nopts = dict(block_mask=_t((2, 2), 'int64', 4).abs(), block_size=(4, 4))", False),
            ("Q torch, NumPy bool mask", t_qkv + "\nopts = dict(attn_mask=_arr((5, 7), 'bool', 4))", False),
            ("Q torch, NumPy key_lengths", t_qkv + "\nopts = dict(key_lengths=np.array([3, 7]))", True),
            ("Q torch, list key_lengths", t_qkv + "\nopts = dict(key_lengths=[3, 7])", True),
            ("Q torch, uint64 key_lengths 2^64-1", t_qkv + "\nopts = dict(key_lengths=np.array([2**64 - 1, 3], np.uint64))", True),
            ("Q torch, NumPy block_mask", t_qkv + "\nopts = dict(block_mask=np.ones((2, 2), np.int8), block_size=(4, 4))", False),
            ("Q torch, float key_lengths tensor", t_qkv + "\nopts = dict(key_lengths=_t((2,), 'float32', 4))", False),
            ("Q torch, float block_mask tensor", t_qkv + "\nopts = dict(block_mask=_t((2, 2), 'float32', 4), block_size=(4, 4))", False),
            ("Q torch, int mask tensor", t_qkv + "\nopts = dict(attn_mask=_t((5, 7), 'int32', 4))", False),
        ]
        for description, setup, valid in mixed:
            self.attention(family, description, setup,
                           names=("Q", "K", "V", "attn_mask", "key_lengths", "block_mask"),
                           valid=valid)
        # torch on the CPU.
        for dtype in ["float32", "float16", "bfloat16"]:
            t3 = (f"import torch\nq, k, v = _t((2, 4, 5, 8), {dtype!r}, 1), "
                  f"_t((2, 2, 7, 8), {dtype!r}, 2), _t((2, 2, 7, 6), {dtype!r}, 3)")
            for description, options in [
                    ("", "enable_gqa=True"),
                    (" return_lse causal", "enable_gqa=True, return_lse=True, causal=True"),
                    (" bool mask", "enable_gqa=True, attn_mask=_t((2, 1, 5, 7), 'bool', 4)"),
                    (" bfloat16 bias", "enable_gqa=True, attn_mask=_t((5, 7), 'bfloat16', 4)"),
                    (" float64 bias", "enable_gqa=True, attn_mask=_t((5, 7), 'float64', 4)"),
                    (" key_lengths window", "enable_gqa=True, window=(2, 0), "
                                            "key_lengths=torch.tensor([4, 9])"),
                    (" block mask", "enable_gqa=True, block_mask=torch.tensor([[2, 1], [0, 1]]), "
                                    "block_size=(4, 4)")]:
                self.attention(family, f"torch {dtype}{description}", t3 + f"\nopts = dict({options})",
                               valid=True)
        for dtype in ["float64", "int32", "bool", "complex64", "int8", "uint8"]:
            self.attention(family, f"torch {dtype}",
                           f"import torch\nq, k, v = (_t((2, 2, 5, 8), {dtype!r}, i) for i in (1, 2, 3))"
                           "\nopts = dict()", names=("Q", "K", "V"))
        for description, setup, valid in [
                ("torch Q float16, K bfloat16", "import torch\nq, v = _t((2, 2, 5, 8), 'float16', 1), _t((2, 2, 7, 8), 'float16', 3)\nk = _t((2, 2, 7, 8), 'bfloat16', 2)", False),
                ("torch transposed (non-contiguous)", "import torch\nq, k, v = (_t((2, 8, 5, 2), 'float32', i).transpose(1, 3) for i in (1, 2, 3))", True),
                ("torch expanded K (stride 0)", "import torch\nq, v = _t((2, 2, 5, 8), 'float32', 1), _t((2, 2, 5, 8), 'float32', 3)\nk = _t((1, 1, 5, 8), 'float32', 2).expand(2, 2, 5, 8)", True),
                ("torch requires_grad", "import torch\nq, k, v = (_t((2, 2, 5, 8), 'float32', i).requires_grad_() for i in (1, 2, 3))", True),
                ("torch bfloat16 sliced", "import torch\nq, k, v = (_t((2, 2, 9, 8), 'bfloat16', i)[:, :, 1::2] for i in (1, 2, 3))", True),
                ("torch 0-dim", "import torch\nq = k = v = torch.tensor(1.0)", False),
                ("torch meta device", "import torch\nq, k, v = (torch.empty((2, 2, 5, 8), device='meta') for i in (1, 2, 3))", False)]:
            self.attention(family, description, setup + "\nopts = dict()",
                           names=("Q", "K", "V", "meta"), valid=valid)
        # Lists, scalars, other objects.
        for description, setup, valid in [
                ("Q, K, V nested lists", "q, k, v = (_arr(s, 'float32', i).tolist() for s, i in (((2, 2, 5, 8), 1), ((2, 2, 7, 8), 2), ((2, 2, 7, 8), 3)))", False),
                ("Q, K, V 3-D nested lists", "q, k, v = (_arr(s, 'float32', i).tolist() for s, i in (((2, 5, 8), 1), ((2, 7, 8), 2), ((2, 7, 8), 3)))", False),
                ("Q tuple of arrays", np_qkv + "\nq = tuple(q)", False),
                ("Q None", np_qkv + "\nq = None", False),
                ("Q a float", np_qkv + "\nq = 1.0", False),
                ("Q a str", np_qkv + "\nq = 'abc'", False),
                ("Q a dict", np_qkv + "\nq = {'shape': (2, 2, 5, 8)}", False),
                ("Q with a fake shape", np_qkv + "\nclass Fake:\n    shape = (2, 5, 8)\nq = Fake()", False),
                ("Q a memoryview", np_qkv + "\nq = memoryview(q)", True),
                ("Q, K, V NumPy float32 scalars", "q = k = v = np.float32(1.0)", False),
                ("mask a list of bools", np_qkv + "\nopts = dict(attn_mask=(_arr((5, 7), 'float32', 4) > 0).tolist())", True),
                ("block_mask a list", np_qkv + "\nopts = dict(block_mask=[[2, 0], [1, 1]], block_size=(4, 4))", True),
                ("key_lengths a list", np_qkv + "\nopts = dict(key_lengths=[3, 7])", True),
                ("key_lengths a tuple of NumPy ints", np_qkv + "\nopts = dict(key_lengths=(np.int64(3), np.uint8(7)))", True),
                ("Fortran-order arrays", np_qkv + "\nq, k, v = (np.asfortranarray(x) for x in (q, k, v))", True),
                ("negative strides", np_qkv + "\nq, k, v = (x[:, :, ::-1] for x in (q, k, v))", True),
                ("transposed views", np_qkv + "\nq, k, v = (np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2) for x in (q, k, v))", True),
                ("unaligned float32", np_qkv + "\nbuf = np.zeros(q.nbytes + 1, np.uint8)\nu = buf[1:].view(np.float32).reshape(q.shape)\nu[...] = q\nq = u", True),
                ("read-only arrays", np_qkv + "\nfor x in (q, k, v):\n    x.flags.writeable = False", True),
                ("broadcast K (stride 0)", np_qkv + "\nk = np.broadcast_to(k[:1, :1], k.shape)", True),
                ("masked array", np_qkv + "\nq = np.ma.masked_greater(q, 1.0)", True),
                ("np.matrix-like subclass", np_qkv + "\nclass Sub(np.ndarray):\n    pass\nq = q.view(Sub)", True),
                ("structured dtype", np_qkv + "\nq = np.zeros((2, 2, 5, 8), [('a', np.float32)])", False),
                ("big-endian all, big-endian mask, block mask, lengths", "q, k, v = (_arr(s, '>f4', i) for s, i in (((2, 2, 5, 8), 1), ((2, 2, 7, 8), 2), ((2, 2, 7, 8), 3)))\nopts = dict(attn_mask=_arr((2, 1, 5, 7), '>f4', 4), block_mask=np.array([[2, 1], [1, 0]], '>i8'), block_size=(4, 4), return_lse=True)", True),
                ("big-endian float16, key_lengths >i4", "q, k, v = (_arr(s, '>f2', i) for s, i in (((2, 2, 5, 8), 1), ((2, 2, 7, 8), 2), ((2, 2, 7, 8), 3)))\nopts = dict(key_lengths=np.array([3, 6], '>i4'), causal=True, return_lse=True)", True)]:
            if "opts = dict(" not in setup:
                setup += "\nopts = dict()"
            self.attention(family, description, setup,
                           names=("Q", "K", "V", "attn_mask", "block_mask", "key_lengths"),
                           valid=valid)

    def options(self):
        family = "attention options"
        base = ("q, k, v = _arr((2, 2, 5, 8), 'float32', 1), _arr((2, 2, 7, 8), 'float32', 2), "
                "_arr((2, 2, 7, 8), 'float32', 3)")
        t_base = ("import torch\nq, k, v = _t((2, 2, 5, 8), 'float32', 1), "
                  "_t((2, 2, 7, 8), 'float32', 2), _t((2, 2, 7, 8), 'float32', 3)")
        seen = set()
        for value in OPTION_VALUES:
            for name, options in [
                    ("window", f"window={value}"),
                    ("window", f"window=({value}, 0)"),
                    ("window", f"window=(0, {value})"),
                    ("scale", f"scale={value}"),
                    ("softcap", f"softcap={value}"),
                    ("block_size", f"block_mask=np.ones((1, 1, 1, 1), np.int8), block_size={value}"),
                    ("block_size", f"block_mask=np.ones((1, 1, 1, 1), np.int8), block_size=({value}, 8)"),
                    ("key_lengths", f"key_lengths={value}"),
                    ("attn_mask", f"attn_mask={value}"),
                    ("block_mask", f"block_mask={value}, block_size=(4, 4)")]:
                if options in seen:
                    continue
                seen.add(options)
                self.attention(family, options, base + f"\nopts = dict({options})",
                               names=(name, "block_mask") if name == "block_size" else (name,))
        for value in ["1e300", "-1e300", "3.5e38", "1e-300", "5e-324", "-0.5", "0.0", "-0.0"]:
            for name in ("scale", "softcap"):
                self.attention(family, f"{name}={value}", base + f"\nopts = dict({name}={value})",
                               names=(name,))
        # FlashAttention's window: -1 an unbounded side.
        for window, causal in [("(-1, -1)", False), ("(-1, 0)", False), ("(2, -1)", False),
                               ("(-1, 2)", False), ("(-1, -1)", True), ("(0, -1)", True),
                               ("(0, 0)", False), ("(2**63 - 1, 0)", False),
                               ("(2**62, 2**62)", True), ("[1, 1]", False),
                               ("np.array([1, 2])", False), ("(np.int32(-1), np.uint64(3))", False),
                               ("(-1, -2)", False), ("(True, 1)", False)]:
            self.attention(family, f"window={window} causal={causal}",
                           base + f"\nopts = dict(window={window}, causal={causal}, return_lse=True)",
                           names=("window",), valid="-2" not in window and "True" not in window)
        # Key lengths: clamped to [0, Sk], the masks aligned to them.
        for values in ["[0, 7]", "[7, 0]", "[-5, 3]", "[8, 100]", "[2**31, 1]",
                       "[2**62, -2**62]", "np.array([2**63 - 1, -2**63])",
                       "np.array([2**64 - 1, 2**63], np.uint64)",
                       "np.array([2**31 - 1, -2**31], np.int32)", "np.array([3, 5], '>i8')"]:
            for options in ["", ", causal=True, window=(1, 0), return_lse=True"]:
                self.attention(family, f"key_lengths={values}{options}",
                               base + f"\nopts = dict(key_lengths={values}{options})",
                               names=("key_lengths",), valid=True)
            lengths = values if values.startswith("np.") else f"torch.tensor({values})"
            self.attention(family, f"torch key_lengths={lengths}",
                           t_base + f"\nopts = dict(key_lengths={lengths}, return_lse=True)",
                           names=("key_lengths",), valid=True)
        # Block mask values: 0 empty, 2 full, others partial, clipped to int8.
        rng = random.Random(3)
        for values in [[0, 1, 2], [-1, 3, 127], [128, 255, 256], [-129, -128, 2**40],
                       [0, 2, 2**62], [-2**63, 2, 1]]:
            for mask in ["None", "_arr((2, 2, 5, 7), 'bool', 4)", "_arr((5, 7), 'float32', 4)"]:
                grid = [[rng.choice(values) for _ in range(3)] for _ in range(3)]
                self.attention(family, f"block_mask values {values} mask {mask}",
                               base + f"\nopts = dict(block_mask=np.array({grid}), block_size=(2, 3), "
                                      f"attn_mask={mask}, return_lse=True)",
                               names=("block_mask",), valid=True)
        for dtype in ["uint8", "uint64", "bool"]:
            grid = [[255, 2, 0], [1, 0, 2], [2, 2, 255]] if dtype != "uint64" else \
                [[2**64 - 1, 2, 0], [1, 2**63, 2], [2, 0, 1]]
            self.attention(family, f"block_mask {dtype} values",
                           base + f"\nopts = dict(block_mask=np.array({grid}, np.uint64).astype({dtype!r}), "
                                  "block_size=(2, 3), return_lse=True)",
                           names=("block_mask",), valid=True)
        self.attention(family, "torch block_mask values clipped",
                       t_base + "\nopts = dict(block_mask=torch.tensor([[256, 2, 0], [-129, 1, 2], "
                                "[2**40, 0, 1]]), block_size=(2, 3), return_lse=True)",
                       names=("block_mask",), valid=True)
        # Mask values.
        for description, mask in [
                ("a row of -inf", "np.where(np.arange(5)[:, None] == 2, -np.inf, np.zeros((5, 7))).astype(np.float32)"),
                ("all -inf", "np.full((5, 7), -np.inf, np.float32)"),
                ("NaN entries", "np.where(np.eye(5, 7) > 0, np.nan, 0).astype(np.float32)"),
                ("+inf entries", "np.where(np.eye(5, 7) > 0, np.inf, 0).astype(np.float32)"),
                ("1e30", "np.full((5, 7), 1e30, np.float32)"),
                ("-1e30 mostly", "np.where(np.eye(5, 7) > 0, 0, -1e30).astype(np.float32)"),
                ("float16 -inf and 65504", "np.where(np.eye(5, 7) > 0, 65504, -np.inf).astype(np.float16)"),
                ("float64 1e300", "np.full((5, 7), 1e300)"),
                ("float64 -1e300 mostly", "np.where(np.eye(5, 7) > 0, 0, -1e300)"),
                ("bool all False", "np.zeros((2, 2, 5, 7), bool)"),
                ("bool size-1 rows", "_arr((2, 1, 1, 7), 'bool', 4)"),
                ("bool size-1 keys", "_arr((1, 2, 5, 1), 'bool', 4)")]:
            self.attention(family, f"attn_mask {description}",
                           base + f"\nopts = dict(attn_mask={mask}, return_lse=True)",
                           names=("attn_mask",), valid=True)
        self.attention(family, "attn_mask all False under a full block mask",
                       base + "\nopts = dict(attn_mask=np.zeros((5, 7), bool), "
                              "block_mask=np.full((1, 1, 1, 1), 2), block_size=(8, 8), return_lse=True)",
                       names=("attn_mask",), valid=True)
        self.attention(family, "everything at once",
                       base + "\nopts = dict(attn_mask=_arr((2, 1, 5, 7), 'float16', 4), causal=True, "
                              "window=(3, -1), softcap=5.0, scale=0.4, key_lengths=np.array([6, 4]), "
                              "block_mask=np.array([[[[1, 2], [0, 1]]]]), block_size=(4, 4), "
                              "return_lse=True)", valid=True)

    def pipelines(self):
        family = "run_pipeline"
        module = ('"""func.func @f(%q: tensor<1x2x64x32xf32>, %o: tensor<1x2x64x32xf32>) -> '
                  'tensor<1x2x64x32xf32> {\\n  %r = attn.attention ins(%q, %q, %q : '
                  'tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) '
                  'outs(%o : tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>\\n  return %r : '
                  'tensor<1x2x64x32xf32>\\n}\\n"""')
        setup = f"M = {module}\nM16 = M.replace('f32', 'f16')"
        cpu = '"builtin.module(attn-to-cpu)"'
        names = ("module", "pipeline")

        def run(description, module_src, pipeline_src, extra=""):
            self.add(family, description, setup + ("\n" + extra if extra else ""),
                     f"attn_mlir.run_pipeline({module_src}, {pipeline_src})",
                     '_check_returned(_result, "str")', names)

        for description, m, p in [
                ("module None", "None", cpu), ("module bytes", "M.encode()", cpu),
                ("module int", "3", cpu), ("module list", "[M]", cpu),
                ("pipeline None", "M", "None"), ("pipeline bytes", "M", cpu + ".encode()"),
                ("pipeline int", "M", "0"), ("module str subclass", "type('S', (str,), {})(M)", cpu),
                ("NUL at the module's start", '"\\0" + M', cpu),
                ("NUL inside the module", 'M[:40] + "\\0" + M[40:]', cpu),
                ("NUL at the module's end", 'M + "\\0"', cpu),
                ("NUL inside the pipeline", "M", '"builtin.module(attn-to-cpu)\\0garbage"'),
                ("NUL pipeline", "M", '"\\0"'),
                ("lone surrogate in the module", 'M + "// \\udcff\\n"', cpu),
                ("lone surrogate in the pipeline", "M", '"builtin.module(attn-to-cpu\\udcff)"'),
                ("empty module", '""', cpu), ("empty pipeline", "M", '""'),
                ("valid attn-to-cpu", "M", cpu),
                ("valid attn-print-plan", "M", '"builtin.module(attn-print-plan)"'),
                ("valid attn-select-schedule", "M", '"builtin.module(attn-select-schedule)"'),
                ("valid attn-to-ptx", "M16", '"builtin.module(attn-to-ptx)"'),
                ("attn-to-ptx on float32", "M", '"builtin.module(attn-to-ptx)"'),
                ("attn-to-cpu twice", "M", '"builtin.module(attn-to-cpu, attn-to-cpu)"'),
                ("unknown pass", "M", '"builtin.module(no-such-pass)"'),
                ("bare unknown pass", "M", '"no-such-pass"'),
                ("builtin.module()", "M", '"builtin.module()"'),
                ("unbalanced pipeline", "M", '"builtin.module(attn-to-cpu"'),
                ("closing parentheses", "M", '"))"'),
                ("unknown option", "M", '"builtin.module(attn-to-cpu{no-such-option=1})"'),
                ("block-m 2^62", "M", '"builtin.module(attn-to-cpu{block-m=4611686018427387904})"'),
                ("block-m 2^64", "M", '"builtin.module(attn-to-cpu{block-m=18446744073709551616})"'),
                ("block-m -1", "M", '"builtin.module(attn-to-cpu{block-m=-1})"'),
                ("func.func(attn-to-cpu)", "M", '"builtin.module(func.func(attn-to-cpu))"'),
                ("func.func(attn-to-ptx)", "M16", '"builtin.module(func.func(attn-to-ptx))"'),
                ("any(attn-to-cpu)", "M", '"any(attn-to-cpu)"'),
                ("func.func at the top", "M", '"func.func(attn-to-cpu)"'),
                ("canonicalize max-iterations -1", "M", '"builtin.module(canonicalize{max-iterations=-1})"'),
                ("module of a 2^62 size", 'M.replace("1x2x64x32", "1x2x4611686018427387904x32")', cpu),
                ("module of a zero size", 'M.replace("1x2x64x32", "1x2x0x32")', cpu),
                ("10 MB comment", '"// " + "x" * 10_000_000 + "\\n" + M', cpu),
                ("a 4096-digit literal", '"module attributes {x.a = " + "9" * 4096 + " : i64} {}"', '"builtin.module(canonicalize)"'),
                ("a 4097-digit literal", '"module attributes {x.a = " + "9" * 4097 + " : i64} {}"', '"builtin.module(canonicalize)"'),
                ("nesting 999 deep", '"module attributes {x.a = " + "[" * 999 + "]" * 999 + "} {}"', '"builtin.module(canonicalize)"'),
                ("nesting 1001 deep", '"module attributes {x.a = " + "[" * 1001 + "]" * 1001 + "} {}"', '"builtin.module(canonicalize)"')]:
            run(description, m, p)
        deep = 10000
        for description, m in [
                ("nested arrays", f'"module attributes {{x.a = " + "[" * {deep} + "]" * {deep} + "}} {{}}"'),
                ("nested dictionaries", f'"module attributes {{x.a = " + "{{a = " * {deep} + "1" + "}}" * {deep} + "}} {{}}"'),
                ("nested modules", f'"module {{" * {deep} + "}}" * {deep}'),
                ("nested generic regions", f'\'"builtin.module"() ({{\' * {deep} + \'}}) : () -> ()\' * {deep}'),
                ("nested scf.execute_region", f'"func.func @f() {{ " + "scf.execute_region {{ " * {deep} + "scf.yield }} " * {deep} + "return }}"'),
                ("nested tuple types", f'"func.func private @f(" + "tuple<" * {deep} + "i32" + ">" * {deep} + ")"'),
                ("nested affine parentheses", f'"#m = affine_map<(d0) -> (" + "(" * {deep} + "d0" + ")" * {deep} + ")>\\nmodule {{}}"'),
                ("unclosed nesting", f'"module attributes {{x.a = " + "[" * {deep}'),
                ("brackets inside a string", f'"module attributes {{x.a = \\"" + "[" * {deep} + "\\"}} {{}}"'),
                ("brackets inside a comment", f'"// " + "[" * {deep} + "\\n" + M')]:
            run(f"{description} {deep} deep", m, '"builtin.module(canonicalize)"')
        run(f"pipeline nested {deep} deep", "M",
            f'"builtin.module(" * {deep} + "canonicalize" + ")" * {deep}')
        run(f"pipeline nested {deep} deep func.func", "M",
            f'"builtin.module(" + "func.func(" * {deep} + "canonicalize" + ")" * {deep} + ")"')
        digits = 50000
        for description, m in [
                ("integer", f'"module attributes {{x.a = " + "9" * {digits} + " : i64}} {{}}"'),
                ("negative integer", f'"module attributes {{x.a = -" + "9" * {digits} + " : i64}} {{}}"'),
                ("float", f'"module attributes {{x.a = 1." + "0" * {digits} + " : f32}} {{}}"'),
                ("float exponent", f'"module attributes {{x.a = 1.0e" + "9" * {digits} + " : f32}} {{}}"'),
                ("hex", f'"module attributes {{x.a = 0x" + "F" * {digits} + " : i64}} {{}}"'),
                ("tensor size", f'"func.func private @f(tensor<" + "9" * {digits} + "xf32>)"'),
                ("dense", f'"module attributes {{x.a = dense<" + "9" * {digits} + "> : tensor<i64>}} {{}}"'),
                ("array<i64>", f'"module attributes {{x.a = array<i64: " + "9" * {digits} + ">}} {{}}"'),
                ("in the attention", f'M.replace("1x2x64x32", "1x2x" + "6" * {digits} + "x32")'),
                ("in a string", f'"module attributes {{x.a = \\"" + "9" * {digits} + "\\"}} {{}}"'),
                ("in a comment", f'"// " + "9" * {digits} + "\\n" + M'),
                ("block-m option", "M")]:
            pipeline = '"builtin.module(canonicalize)"'
            if description == "block-m option":
                pipeline = f'"builtin.module(attn-to-cpu{{block-m=" + "9" * {digits} + "}})"'
            elif description in ("in the attention", "in a comment"):
                pipeline = cpu
            run(f"{digits}-digit {description}", m, pipeline)
        # attn-to-ptx's chips and PTX features.
        for chip in ["sm_999", "sm_1000", "sm_75", "sm_90a", "", "sm_80\\0x", "sm_80",
                     "sm_100a", "sm_120", "gfx90a", "sm_80}", "'sm_80'", "SM_80", "sm_",
                     "sm_" + "9" * 30, "sm_80 features=+ptx60", "sm_80 chip=sm_999",
                     "x" * 5000]:
            run(f"attn-to-ptx chip={chip[:40]!r}", "M16",
                f'"builtin.module(attn-to-ptx{{chip={chip}}})"')
        for chip, features in [("sm_80", "+ptx60"), ("sm_90a", "+ptx78"), ("sm_100a", "+ptx80"),
                               ("sm_80", "+ptx99"), ("sm_80", "garbage"), ("sm_80", "+ptx"),
                               ("sm_80", "-ptx80"), ("sm_80", "+ptx80,+ptx60"),
                               ("sm_80", "+ptx" + "9" * 40), ("sm_80", ","),
                               ("sm_80", "+sm_90"), ("sm_90a", "+ptx80"), ("sm_100a", "+ptx86"),
                               ("sm_80", "+ptx70"), ("sm_80", "+ptx80\\0"), ("sm_75", "+ptx80"),
                               ("sm_1000", "+ptx80"), ("sm_80", "+ptx-1"),
                               ("sm_80", "+ptx18446744073709551616")]:
            run(f"attn-to-ptx chip={chip} features={features[:40]}", "M16",
                f'"builtin.module(attn-to-ptx{{chip={chip} features={features}}})"')

    def precompiles(self):
        family = "precompile"
        shapes = ["(1, 2, 64, 64)"] * 3
        for chip in ["None", "0", "90", "1.5", "b'sm_80'", "''", "'sm_999'", "'sm_1000'",
                     "'sm_75'", "'sm_90a'", "'sm_80\\0x'", "'SM_80'", "' sm_80'", "'sm_80 '",
                     "'gfx90a'", "'sm_'", "'sm_x'", "'sm_' + '9' * 50", "'x' * 100000",
                     "'sm_80}'", "'sm_80 features=+ptx60'", "'sm_80\\udcff'", "'sm_100a'",
                     "'sm_120'", "'sm_90'"]:
            self.precompile(family, f"chip={chip[:30]}", shapes,
                            target=f"chip={chip}, sms=108, smem_per_block=166912",
                            names=("chip",))
        counts = ["0", "-1", "2**31", "2**31 - 1", "2**62", "2**64", "2**63", "1.5", "'132'",
                  "None", "True", "1", "np.int64(108)", "float('nan')"]
        for value in counts:
            self.precompile(family, f"sms={value}", shapes,
                            target=f'chip="sm_80", sms={value}, smem_per_block=166912',
                            names=("sms",))
        for value in counts + ["1024", "48 * 1024", "65536", "232448"]:
            self.precompile(family, f"smem_per_block={value}", shapes,
                            target=f'chip="sm_80", sms=108, smem_per_block={value}',
                            names=("smem_per_block",))
        for dtype in ["None", "'float64'", "'f16'", "'bfloat16'", "'float32'", "np.float16",
                      "'torch.float16'", "''", "1", "'float16\\0'"]:
            self.precompile(family, f"dtype={dtype}", shapes, dtype=dtype, names=("dtype", "Q"))
        base = [["2", "8", "100", "64"], ["2", "2", "300", "64"], ["2", "2", "300", "64"]]
        where = {"B": [(0, 0), (1, 0), (2, 0)], "H": [(0, 1), (1, 1), (2, 1)],
                 "Sq": [(0, 2)], "Sk": [(1, 2), (2, 2)], "D": [(0, 3), (1, 3)], "Dv": [(2, 3)]}
        for dim, places in where.items():
            for size in SIZES:
                s = [list(x) for x in base]
                for operand, i in places:
                    s[operand][i] = size
                self.precompile(family, f"all {dim}={size}", [_tuple(x) for x in s],
                                options="enable_gqa=True")
        rng = random.Random(5)
        for _ in range(40):
            s = [list(x) for x in base]
            operand, i, size = rng.randrange(3), rng.randrange(4), rng.choice(SIZES)
            s[operand][i] = size
            self.precompile(family, f"{'QKV'[operand]}[{i}]={size}", [_tuple(x) for x in s],
                            options="enable_gqa=True")
        for description, q in [("3-D Q", "(1, 64, 64)"), ("5-D Q", "(1, 1, 2, 64, 64)"),
                               ("Q None", "None"), ("Q 'abc'", "'abc'"), ("Q a dict", "{0: 1}"),
                               ("Q a generator", "(x for x in (1, 2, 64, 64))"),
                               ("Q an array", "np.array([1, 2, 64, 64])"),
                               ("Q nested", "[[1], 2, 64, 64]"), ("Q float sizes", "(1.0, 2, 64, 64)"),
                               ("Q numpy sizes", "tuple(np.array([1, 2, 64, 64], np.uint64))")]:
            self.precompile(family, description, [q] + shapes[1:])
        for description, options, names in [
                ("key_lengths True", "key_lengths=True", ()),
                ("key_lengths 1", "key_lengths=1", ("key_lengths",)),
                ("key_lengths 'yes'", "key_lengths='yes'", ("key_lengths",)),
                ("key_lengths np.bool_", "key_lengths=np.bool_(True)", ("key_lengths",)),
                ("attn_mask bool", "attn_mask=((1, 2, 64, 64), 'bool')", ()),
                ("attn_mask float32 2-D", "attn_mask=((64, 64), 'float32')", ()),
                ("attn_mask float64", "attn_mask=((64, 64), 'float64')", ()),
                ("attn_mask int8", "attn_mask=((64, 64), 'int8')", ("attn_mask",)),
                ("attn_mask 1-D", "attn_mask=((64,), 'bool')", ("attn_mask",)),
                ("attn_mask a str", "attn_mask='bool'", ("attn_mask",)),
                ("attn_mask shape only", "attn_mask=((64, 64),)", ("attn_mask",)),
                ("attn_mask 2^62 rows", "attn_mask=((2**62, 64), 'bool')", ("attn_mask",)),
                ("attn_mask three items", "attn_mask=((64, 64), 'bool', 'x')", ("attn_mask",)),
                ("attn_mask shape None", "attn_mask=(None, 'bool')", ("attn_mask",)),
                ("attn_mask dtype np.bool_", "attn_mask=((64, 64), np.bool_)", ("attn_mask",)),
                ("attn_mask an array", "attn_mask=np.ones((64, 64), bool)", ("attn_mask",)),
                ("block mask 64x64", "block_mask=(1, 1, 1, 1), block_size=(64, 64)", ()),
                ("block mask 16x16", "block_mask=(1, 1, 4, 4), block_size=(16, 16)", ()),
                ("block mask 8x8", "block_mask=(1, 1, 8, 8), block_size=(8, 8)", ("block",)),
                ("block mask 17x64", "block_mask=(1, 1, 4, 1), block_size=(17, 64)", ("block",)),
                ("block mask 48x64", "block_mask=(1, 1, 2, 1), block_size=(48, 64)", ("block",)),
                ("block mask without block_size", "block_mask=(1, 1, 1, 1)", ("block",)),
                ("block_size without block mask", "block_size=(64, 64)", ("block",)),
                ("block_size 0", "block_mask=(1, 1, 1, 1), block_size=(0, 64)", ("block",)),
                ("block_size 2^62", "block_mask=(1, 1, 1, 1), block_size=(2**62, 64)", ("block",)),
                ("block mask an array", "block_mask=np.ones((1, 1, 1, 1)), block_size=(64, 64)", ("block",)),
                ("window (-1, -1)", "window=(-1, -1)", ()),
                ("window (2^63, 0)", "window=(2**63, 0)", ("window",)),
                ("softcap inf", "softcap=float('inf')", ("softcap",)),
                ("scale 1e300", "scale=1e300", ("scale",)),
                ("softcap 1e300", "softcap=1e300", ("softcap",)),
                ("softcap 1e-300", "softcap=1e-300", ("softcap",)),
                ("Sk=0", "", ())]:
            s = shapes if description != "Sk=0" else ["(1, 2, 64, 64)", "(1, 2, 0, 64)",
                                                      "(1, 2, 0, 64)"]
            self.precompile(family, description, s, options=options, names=names or ("Q", "K", "Sk"))

    def bundles(self):
        family = "bundles"
        counter = iter(range(1, 10**6))
        new = lambda: f"case{next(counter)}"  # noqa: E731

        def load(description, mutation, expect_refusal=None, valid=False):
            name = new()
            setup = f"d, b = _bundle({name!r})\n{mutation}".strip()
            check = (f"_check_refused(_result, {expect_refusal!r})" if expect_refusal
                     else '_check_returned(_result, "count")')
            self.add(family, description, setup, "attn_mlir.load_bundles(d)", check,
                     (name,), valid)

        # The directory argument.
        for description, setup, call, named, valid in [
                ("load None", "", "None", "", False), ("load 0", "", "0", "", False),
                ("load 1.5", "", "1.5", "", False),
                ("load a missing folder", "", "'missing'", "missing", False),
                ("load a regular file", "open('file', 'w').close()", "'file'", "file", False),
                ("load ''", "", "''", "", False),
                ("load /dev/null", "", "'/dev/null'", "/dev/null", False),
                ("load a FIFO", "os.mkfifo('fifo')", "'fifo'", "fifo", False),
                ("load a NUL in the path", "", "'a\\0b'", "a\0b", False),
                ("load a path of 5000 characters", "", "'x' * 5000", "x" * 100, False),
                ("load an empty folder", "os.mkdir('empty')", "'empty'", "empty", True),
                ("load bytes", "d, b = _bundle('bytes')", "os.fsencode(d)", "bytes", True),
                ("load pathlib.Path", "import pathlib\nd, b = _bundle('path')", "pathlib.Path(d)",
                 "path", True),
                ("load a folder of odd entries", "os.mkdir('odd')\nos.mkfifo('odd/fifo')\n"
                 "os.symlink('/dev/zero', 'odd/zero')\nopen('odd/file', 'w').close()\n"
                 "os.symlink('odd', 'odd/loop')", "'odd'", "odd", True),
                ("load a symlink loop", "os.symlink('loop', 'loop')", "'loop'", "loop", False)]:
            self.add(family, description, setup, f"attn_mlir.load_bundles({call})",
                     '_check_returned(_result, "count")', ("directory",) + ((named,) if named else ()),
                     valid)
        compile_ = f"attn_mlir.precompile({GOOD_SPEC})"
        for description, setup, call, named, valid in [
                ("save None", "", "None", "", False), ("save 0", "", "0", "", False),
                ("save a missing nested folder", "", "'new/a/b'", "new/a/b", True),
                ("save a regular file", "open('sfile', 'w').close()", "'sfile'", "sfile", False),
                ("save ''", "os.mkdir('cwd')\nos.chdir('cwd')", "''", "", True),
                ("save /dev/null", "", "'/dev/null'", "/dev/null", False),
                ("save /proc/self", "", "'/proc/self'", "/proc/self", False),
                ("save a FIFO", "os.mkfifo('sfifo')", "'sfifo'", "sfifo", False),
                ("save a NUL in the path", "", "'s\\0b'", "s\0b", False),
                ("save a path of 5000 characters", "", "'y' * 5000", "y" * 100, False),
                ("save bytes", "", "b'sbytes'", "sbytes", True),
                ("save pathlib.Path", "import pathlib", "pathlib.Path('spath')", "spath", True),
                ("save a symlink to /dev/zero", "os.symlink('/dev/zero', 'szero')", "'szero'",
                 "szero", False)]:
            check = (f"_check_saved(_result, {call})" if valid
                     else '_check_returned(_result, "count")')
            self.add(family, description, (setup + "\n" + compile_).strip(),
                     f"attn_mlir.save_bundles({call})", check,
                     ("directory",) + ((named,) if named else ()), valid)
        self.add(family, "save with nothing compiled", "", "attn_mlir.save_bundles('nothing')",
                 '_check_returned(_result, "count")', ("directory",), True)
        # Save over bundle files that exist as a FIFO, a device link, a folder.
        for target in ["manifest.json", "kernels.ptx", "attention.json"]:
            for description, make in [
                    ("a FIFO", "os.mkfifo"), ("a symlink to /dev/null", "lambda p: os.symlink('/dev/null', p)"),
                    ("a folder", "os.mkdir"), ("a symlink to a missing file", "lambda p: os.symlink('/missing/x', p)")]:
                name = new()
                setup = (f"os.makedirs(os.path.join({name!r}, HASH))\n"
                         f"({make})(os.path.join({name!r}, HASH, {target!r}))\n{compile_}")
                self.add(family, f"save over {target} that is {description}", setup,
                         f"attn_mlir.save_bundles({name!r})", f"_check_saved(_result, {name!r})",
                         (name, target), valid=description != "a folder")
        for description, make in [("a file", "lambda p: open(p, 'w').close()"),
                                  ("a FIFO", "os.mkfifo")]:
            name = new()
            self.add(family, f"save where the bundle folder is {description}",
                     f"os.mkdir({name!r})\n({make})(os.path.join({name!r}, HASH))\n{compile_}",
                     f"attn_mlir.save_bundles({name!r})", f"_check_saved(_result, {name!r})",
                     (name,))
        # Bundle files of every kind.
        deep = "'[' * 10000 + ']' * 10000"
        for file in ["manifest.json", "kernels.ptx", "attention.json"]:
            p = f"os.path.join(b, {file!r})"
            for description, mutation in [
                    ("a FIFO", f"_replace({p}, os.mkfifo)"),
                    ("a symlink to /dev/zero", f"_replace({p}, lambda p: os.symlink('/dev/zero', p))"),
                    ("a symlink to /dev/urandom", f"_replace({p}, lambda p: os.symlink('/dev/urandom', p))"),
                    ("a directory", f"_replace({p}, os.mkdir)"),
                    ("missing", f"os.unlink({p})"),
                    ("a dangling symlink", f"_replace({p}, lambda p: os.symlink('/missing/x', p))"),
                    ("empty", f"_write({p}, b'')"),
                    ("truncated", f"data = open({p}, 'rb').read()\n_write({p}, data[:len(data) // 2])"),
                    ("non-UTF-8", f"data = open({p}, 'rb').read()\n_write({p}, b'\\xff\\xfe' + data)"),
                    ("10,000-deep nested JSON", f"_write({p}, {deep})"),
                    ("holding a NUL", f"data = open({p}, 'rb').read()\n_write({p}, data[:-2] + b'\\0' + data[-2:])"),
                    ("over its size bound (sparse)", f"_write({p}, b'')\nos.truncate({p}, "
                     f"{ {'manifest.json': 64 << 20, 'kernels.ptx': 1 << 30, 'attention.json': 1 << 20}[file] + 1})"),
                    ("a JSON number", f"_write({p}, '1')"),
                    ("JSON null", f"_write({p}, 'null')")]:
                if file == "kernels.ptx" and "JSON" in description:
                    continue
                load(f"{file} {description}", mutation,
                     valid=file == "attention.json" and description == "missing")
        # attention.json: each field deleted or changed.
        spec_fields = ["block_mask_shape", "block_size", "causal", "dtype", "key_lengths",
                       "key_shape", "mask_dtype", "mask_shape", "query_shape", "scale",
                       "softcap", "value_dim", "window", "with_lse"]
        a = "os.path.join(b, 'attention.json')"
        for field in spec_fields:
            optional = field.startswith(("mask", "block"))
            load(f"attention.json spec.{field} deleted", f"_set({a}, ['spec', {field!r}], 'delete')",
                 valid=optional)
        for keys in [["target", "chip"], ["target", "sms"], ["target", "smem_per_block"],
                     ["spec"], ["target"]]:
            load(f"attention.json {'.'.join(keys)} deleted", f"_set({a}, {keys!r}, 'delete')")
        mislabels = [
            ("causal", False), ("scale", 0.5), ("scale", 0.13), ("window", [1, 2]),
            ("window", [0, INT64_MAX]), ("window", [INT64_MAX, INT64_MAX]), ("dtype", "f32"),
            ("dtype", "bf16"), ("query_shape", [2, 8, 101, 64]), ("query_shape", [1, 8, 100, 64]),
            ("query_shape", [2, 4, 100, 64]), ("query_shape", [2, 8, 100, 32]),
            ("key_shape", [2, 2, 301, 64]), ("key_shape", [2, 1, 300, 64]),
            ("key_shape", [2, 8, 300, 64]), ("value_dim", 32), ("with_lse", True),
            ("key_lengths", True), ("softcap", 30.0)]
        for field, value in mislabels:
            load(f"attention.json spec.{field} = {value!r} (mislabelled)",
                 f"_set({a}, ['spec', {field!r}], {value!r})",
                 expect_refusal=f"spec.{field} = {value!r} does not describe the kernel")
        for description, edit, why in [
                ("spec.mask_dtype = 'i1', mask_shape = [1, 1]",
                 "_set(A, ['spec', 'mask_dtype'], 'i1')\n_set(A, ['spec', 'mask_shape'], [1, 1])",
                 "a mask the kernel does not take"),
                ("spec.block_size = [64, 64], block_mask_shape = [1, 1]",
                 "_set(A, ['spec', 'block_size'], [64, 64])\n_set(A, ['spec', 'block_mask_shape'], [1, 1])",
                 "a block mask the kernel does not take"),
                ("target.chip = 'sm_90'", "_set(A, ['target', 'chip'], 'sm_90')",
                 "chip sm_90 for an sm_80 kernel"),
                ("target.chip = 'sm_80a'", "_set(A, ['target', 'chip'], 'sm_80a')",
                 "chip sm_80a for an sm_80 kernel"),
                ("spec.causal = false and the manifest's attention.causal = false",
                 "_set(A, ['spec', 'causal'], False)\n"
                 "_set(os.path.join(b, 'manifest.json'), ['kernels', 0, 'attention', 'causal'], False)",
                 "causal false in both labels of a causal kernel's PTX")]:
            load(f"attention.json {description} (mislabelled)", edit.replace("A", a),
                 expect_refusal=why)
        for field, value, description in [("scale", 0.125, "the default, explicit"),
                                          ("scale", 0.125 * (1 + 1e-9), "within 1e-6 of the default")]:
            load(f"attention.json spec.{field} = {value!r} ({description})",
                 f"_set({a}, ['spec', {field!r}], {value!r})", valid=True)
        for keys, value in [(["target", "sms"], 132), (["target", "smem_per_block"], 232448),
                            (["target", "smem_per_block"], 1), (["extra"], 1)]:
            load(f"attention.json {'.'.join(keys)} = {value!r}", f"_set({a}, {keys!r}, {value!r})",
                 valid=True)
        wrong_types = [
            (["spec", "causal"], "'true'"), (["spec", "causal"], "1"), (["spec", "causal"], "None"),
            (["spec", "scale"], "'0.5'"), (["spec", "scale"], "float('nan')"),
            (["spec", "scale"], "float('inf')"), (["spec", "scale"], "True"),
            (["spec", "scale"], "1e300"), (["spec", "softcap"], "0"), (["spec", "softcap"], "-1.0"),
            (["spec", "window"], "[-1, 0]"), (["spec", "window"], "[1]"), (["spec", "window"], "'x'"),
            (["spec", "window"], "[1.5, 2]"), (["spec", "window"], "[True, 0]"),
            (["spec", "window"], "[2**63, 0]"), (["spec", "dtype"], "'float16'"),
            (["spec", "dtype"], "None"), (["spec", "dtype"], "'f64'"), (["spec", "dtype"], "['f16']"),
            (["spec", "query_shape"], "[2, 8, 100]"), (["spec", "query_shape"], "[2, 8, 100, 64, 1]"),
            (["spec", "query_shape"], "[2, 8, 100, '64']"), (["spec", "query_shape"], "[2, 8, 100, 2**62]"),
            (["spec", "query_shape"], "[2, 8, 100, 2**63]"), (["spec", "query_shape"], "[0, 8, 100, 64]"),
            (["spec", "query_shape"], "[-1, 8, 100, 64]"), (["spec", "query_shape"], "[2, 8, 100, 64.0]"),
            (["spec", "query_shape"], "{'a': 1}"), (["spec", "key_shape"], "None"),
            (["spec", "value_dim"], "0"), (["spec", "value_dim"], "-1"), (["spec", "value_dim"], "2**63"),
            (["spec", "value_dim"], "64.0"), (["spec", "value_dim"], "'64'"),
            (["spec", "with_lse"], "0"), (["spec", "key_lengths"], "'no'"),
            (["spec", "mask_dtype"], "'i1'"), (["spec", "mask_dtype"], "'f64'"),
            (["spec", "mask_shape"], "[1, 1]"), (["spec", "block_size"], "[0, 64]"),
            (["spec", "extra"], "1"), (["spec"], "[]"), (["spec"], "'x'"), (["spec"], "None"),
            (["target"], "[]"), (["target"], "None"), (["target", "chip"], "5"),
            (["target", "chip"], "None"), (["target", "chip"], "''"), (["target", "chip"], "'sm_80\\0'"),
            (["target", "sms"], "0"), (["target", "sms"], "-1"), (["target", "sms"], "2**31"),
            (["target", "sms"], "'108'"), (["target", "sms"], "1.5"), (["target", "sms"], "True"),
            (["target", "extra"], "1")]
        for keys, value in wrong_types:
            load(f"attention.json {'.'.join(keys)} = {value}", f"_set({a}, {keys!r}, {value})")
        load("attention.json a list", f"_write({a}, '[]')")
        load("attention.json spec.value_dim 100,000 digits", f"_write({a}, open({a}).read().replace('\"value_dim\": 64', '\"value_dim\": ' + '6' * 100000))")
        # Seeded mutations of the manifest.
        with open(os.path.join(self.good, self.hash, "manifest.json")) as f:
            manifest = json.load(f)

        def original(path):
            value = manifest
            for key in path:
                value = value[key]
            return value

        replacements = [0, -1, 2**53 + 1, INT64_MAX, "x", None, []]
        cases = [(p, r) for p, r in mutations(manifest, replacements) if p and
                 (r == "delete" or original(p) != r or type(original(p)) is not type(r))]
        random.Random(1).shuffle(cases)
        m = "os.path.join(b, 'manifest.json')"
        for path, replacement in cases[:110]:
            where = ".".join(str(p) for p in path)
            semantic = (len(path) >= 3 and path[:2] == ["kernels", 0] and
                        (path[2] in ("attention", "target") or
                         (path[2] == "params" and (len(path) < 5 or path[4] in ("name", "type", "shape")))))
            load(f"manifest {where} = {replacement!r}", f"_set({m}, {path!r}, {replacement!r})",
                 expect_refusal=f"the manifest's {where} changed: mislabelled" if semantic else None)
        # Broken PTX.
        ptx = "os.path.join(b, 'kernels.ptx')"
        for description, mutation in [
                ("empty", f"_write({ptx}, '')"), ("garbage", f"_write({ptx}, 'garbage\\n')"),
                ("truncated at 100 bytes", f"_write({ptx}, open({ptx}).read()[:100])"),
                ("truncated at 90%", f"t = open({ptx}).read()\n_write({ptx}, t[:len(t) * 9 // 10])"),
                ("another kernel's name", f"_write({ptx}, open({ptx}).read().replace('.entry attention_', '.entry other_'))"),
                ("version 99.0", f"_write({ptx}, open({ptx}).read().replace('.version 7.0', '.version 99.0'))"),
                ("target sm_90 in the PTX", f"_write({ptx}, open({ptx}).read().replace('.target sm_80', '.target sm_90'))"),
                ("only the header", f"_write({ptx}, open({ptx}).read().split('.visible')[0])"),
                ("the entry twice", f"t = open({ptx}).read()\n_write({ptx}, t + t[t.index('.visible'):])"),
                ("random bytes", f"_write({ptx}, bytes(range(256)) * 100)")]:
            load(f"kernels.ptx {description}", mutation)

    # --- running ------------------------------------------------------------
    def prelude(self):
        return PRELUDE.replace("{good!r}", repr(self.good)).replace("{hash!r}", repr(self.hash))

    def program(self, case):
        def indent(text):
            return textwrap.indent(text or "pass", "    ")
        return "\n".join([
            self.prelude(),
            "try:", indent(case.setup),
            "except BaseException as _error:",
            "    _emit('setup', message=type(_error).__name__ + ': ' + str(_error)[:500])",
            "    sys.exit(0)",
            "try:", f"    _result = {case.call}",
            "except BaseException as _error:",
            "    _raised(_error)",
            "else:",
            "    try:", textwrap.indent(case.check, "        "),
            "    except BaseException as _error:",
            "        import traceback",
            "        _emit('checkfail', message=traceback.format_exc()[-1500:])",
            ""])

    def execute(self, code, cwd):
        def limits():
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        env = dict(os.environ, PYTHONPATH=self.python_dir, PYTHONDONTWRITEBYTECODE="1",
                   OMP_NUM_THREADS="1")
        return subprocess.run([PYTHON, "-c", code], capture_output=True, timeout=self.timeout,
                              preexec_fn=limits, cwd=cwd, stdin=subprocess.DEVNULL, env=env)

    def make_good_bundle(self):
        code = (f"import attn_mlir, sys\nattn_mlir.precompile({GOOD_SPEC})\n"
                f"print(attn_mlir.save_bundles({self.good!r}))")
        for attempt in range(10):
            result = self.execute(code, self.work)
            if result.returncode == 0 and result.stdout.decode().strip() == "1":
                (self.hash,) = os.listdir(self.good)
                return
            sys.stderr.write("the bundle to mutate could not be made (is the package being "
                             "rebuilt?), retrying in 60 s:\n" +
                             result.stderr.decode(errors="replace")[-1000:] + "\n")
            time.sleep(60)
        raise SystemExit("cannot make the bundle every bundle case starts from")

    def run_one(self, case):
        code = self.program(case)
        for attempt in range(20):
            try:
                result = self.execute(code, self.work)
            except subprocess.TimeoutExpired:
                return case, "hang", f"still running at {self.timeout:g} s", ""
            out = result.stdout.decode(errors="replace")
            err = result.stderr.decode(errors="replace")
            started = "@@START" in out
            broken = result.returncode == 97 or (not started and re.search(
                r"ImportError|ModuleNotFoundError|undefined symbol|cannot open shared object", err))
            if not broken:
                break
            # Someone is rebuilding the package: wait and retry.
            with self.retry_lock:
                self.retries += 1
            time.sleep(30)
        else:
            return case, "unclear", "the package could not be imported (20 tries)", err[-500:]
        return (case,) + self.classify(case, result.returncode, out, err)

    def classify(self, case, returncode, out, err):
        tail = err[-600:]
        if returncode < 0 or "Stack dump" in err or "LLVM ERROR" in err or \
                "PLEASE submit" in err or "Fatal Python error" in err:
            signal = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
            return "crash", signal, tail
        outcomes = [json.loads(line[len("@@OUTCOME "):]) for line in out.splitlines()
                    if line.startswith("@@OUTCOME ")]
        if not outcomes:
            return "unclear", f"exit {returncode} without an outcome", tail
        if returncode != 0:
            return "unclear", f"exit {returncode} after the call", tail
        outcome = outcomes[-1]
        kind = outcome["outcome"]
        if kind == "ok":
            return "accepted", outcome.get("note", ""), ""
        if kind == "wrong":
            return "wrong", outcome["reason"], ""
        if kind in ("setup", "checkfail"):
            return "unclear", f"sweep {kind} failed: {outcome['message']}", ""
        mro, message, name = set(outcome["mro"]), outcome["message"], outcome["type"]
        short = message if len(message) < 300 else message[:300] + "..."
        if mro & UNCLEAR_TYPES:
            return "unclear", f"{name} escaped: {short}", ""
        if "incompatible function arguments" in message:
            return "unclear", f"{name} holding pybind11's argument dump: {short}", ""
        if not message.strip():
            return "unclear", f"{name} without a message", ""
        if "CompilerError" in mro or "GpuError" in mro:
            return "error", f"{name}: {short}", ""
        if "ValueError" in mro or "OSError" in mro:
            if case.names and not _names_in(case.names, message):
                return "unclear", f"{name} not naming {' / '.join(case.names)}: {short}", ""
            return "error", f"{name}: {short}", ""
        return "unclear", f"{name}: {short}", ""


def table(results):
    families = []
    for case, _, _, _ in results:
        if case.family not in families:
            families.append(case.family)
    lines = ["| family | inputs | " + " | ".join(OUTCOMES) + " |",
             "|---" * (len(OUTCOMES) + 2) + "|"]
    totals = {o: 0 for o in OUTCOMES}
    for family in families:
        rows = [r for r in results if r[0].family == family]
        counts = {o: sum(1 for r in rows if r[1] == o) for o in OUTCOMES}
        for o in OUTCOMES:
            totals[o] += counts[o]
        lines.append(f"| {family} | {len(rows)} | " +
                     " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    lines.append(f"| all | {len(results)} | " +
                 " | ".join(str(totals[o]) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--family", action="append",
                        help="run only these families (shapes, dtypes, options, pipelines, "
                             "precompiles, bundles); repeatable")
    parser.add_argument("--match", help="run only inputs whose description holds this text")
    parser.add_argument("--report", help="also write the table and the bad cases, with their "
                                         "reproducers, to this markdown file")
    parser.add_argument("--list", action="store_true", help="list the inputs, run nothing")
    parser.add_argument("--verbose", action="store_true", help="print every input's outcome")
    parser.add_argument("--show-prelude", action="store_true",
                        help="print the code every input runs first")
    args = parser.parse_args()
    if args.show_prelude:
        print(PRELUDE)
        return 0
    start = time.time()
    families = ["shapes", "dtypes", "options", "pipelines", "precompiles", "bundles"]
    chosen = args.family or families
    with tempfile.TemporaryDirectory(prefix="attn-python-sweep-") as work:
        sweep = Sweep(os.path.abspath(args.build), args.timeout, work)
        if not args.list and "bundles" in chosen:
            sweep.make_good_bundle()
        elif "bundles" in chosen:
            sweep.hash = "HASH"
            os.makedirs(os.path.join(sweep.good, "HASH"))
            with open(os.path.join(sweep.good, "HASH", "manifest.json"), "w") as f:
                json.dump({"kernels": [{"attention": {"causal": True}}]}, f)
        for family in chosen:
            getattr(sweep, family)()
        cases = [c for c in sweep.cases if not args.match or args.match in c.description]
        if args.list:
            for case in cases:
                print(f"{case.family}: {case.description}")
            print(f"{len(cases)} inputs")
            return 0
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(sweep.run_one, cases))
    wall = time.time() - start

    if args.verbose:
        for case, outcome, detail, _ in results:
            print(f"{outcome:8} {case.family}: {case.description}: {detail[:200]}")
    summary = table(results)
    print(summary)
    bad = [r for r in results if r[1] in BAD]
    refused = [r for r in results if r[0].valid and r[1] == "error"]
    for case, outcome, detail, tail in bad:
        print(f"\n{outcome}: {case.family}: {case.description}\n  {detail}")
        if tail:
            print(textwrap.indent(tail.rstrip(), "  | "))
    if refused:
        print("\nDocumented-valid inputs refused (not counted as bad):")
        for case, _, detail, _ in refused:
            print(f"  {case.family}: {case.description}: {detail}")
    note = (f"{len(results)} inputs in {wall:.0f} s with --jobs {args.jobs}"
            + (f"; {sweep.retries} retries while the package could not be imported"
               if sweep.retries else ""))
    print(f"\n{note}")
    if args.report:
        write_report(args.report, summary, bad, refused, note)
    return 1 if bad else 0


def write_report(path, summary, bad, refused, note):
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    lines = [f"# attn_mlir Python robustness sweep ({now})", "",
             f"`{PYTHON} {' '.join(sys.argv)}`: {note}.", "", summary, "",
             "Reproducers run after the prelude (`scripts/python-robustness-sweep.py "
             "--show-prelude`): `_arr(shape, dtype, seed)` is a standard normal array "
             "(a zero-stride view of 0.5 beyond 2^20 elements), `_t` the same as a torch CPU "
             "tensor, `GOOD` a folder holding one bundle folder `HASH` saved by "
             f"`attn_mlir.precompile({GOOD_SPEC}); attn_mlir.save_bundles(GOOD)`, `_bundle(name)` "
             "a copy of it, `_set(file, keys, value)` edits a JSON field (`'delete'` deletes).", ""]
    lines.append(f"## Bad cases ({len(bad)})")
    for case, outcome, detail, tail in bad:
        lines += ["", f"### {outcome}: {case.family}: {case.description}", "", detail, "",
                  "```python", case.reproducer(), "```"]
        if tail:
            lines += ["", "stderr (end):", "", "```", tail.rstrip(), "```"]
    lines += ["", f"## Documented-valid inputs refused ({len(refused)}; not counted as bad)", ""]
    for case, _, detail, _ in refused:
        lines.append(f"- {case.family}: {case.description}: {detail}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

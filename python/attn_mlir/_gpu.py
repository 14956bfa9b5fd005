"""Attention on a CUDA GPU: one kernel bundle per attention and GPU, and
one per gradient of an attention (attn-to-ptx through the compiler, or
loaded from a directory that save_bundles wrote), launched by libattnrt on
torch tensors, on their device's current stream, without copies through
the host."""

import hashlib
import json
import math
import os
import stat
import tempfile
import threading
from typing import NamedTuple

from . import _runtime
from ._errors import CompilerError
from ._spec import MAX_COUNT, Spec, _integer, compiler, text

# The most bytes load_bundles reads of each file of a bundle: the tools'
# bounds for a manifest and PTX (docs/reliability.md), and a spec's JSON.
_FILE_LIMITS = {"attention.json": 1 << 20, "manifest.json": 64 << 20,
                "kernels.ptx": 1 << 30}

_lock = threading.Lock()
# (Spec, Target, gradient) -> (manifest JSON, PTX).
_bundles = {}
# (Spec, Target, gradient, device index) -> _runtime.Kernel.
_kernels = {}


class Target(NamedTuple):
    """What the compiler needs of a GPU (the module's #attn.target)."""
    chip: str
    sms: int
    smem_per_block: int

    @classmethod
    def checked(cls, chip, sms, smem_per_block):
        """A Target from a caller's values, or ValueError naming the one
        that is wrong (the compiler checks the chip's name)."""
        if not isinstance(chip, str):
            raise ValueError(f"chip must be a str such as 'sm_90', got {chip!r}")
        return cls(text("chip", chip), _integer("sms", sms, 1, MAX_COUNT),
                   _integer("smem_per_block", smem_per_block, 1, MAX_COUNT))


def target_of(device):
    """The target of `device`: compute capability 9.0 is sm_90a, whose
    architecture-specific instructions (wgmma, setmaxnreg) the Hopper
    kernels use; its PTX loads on sm_90 devices only, which this one is."""
    major, minor = device.compute_capability
    chip = f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
    return Target(chip, device.multiprocessors, device.shared_memory_per_block)


def _key(spec, gradient):
    """The bundle's key for `spec`: a gradient reads the forward's LSE
    whether or not the call returns it, so its spec always has it."""
    return (spec._replace(with_lse=True) if gradient else spec), gradient


def compile_bundle(spec, target, gradient=False):
    """The bundle of `spec` (or with `gradient` of its gradient) for
    `target`, compiled once per process."""
    spec, gradient = _key(spec, gradient)
    with _lock:
        bundle = _bundles.get((spec, target, gradient))
    if bundle is None:
        try:
            bundle = compiler().compile_gpu(spec.native(), *target, gradient=gradient)
        except RuntimeError as error:
            raise CompilerError(str(error)) from None
        with _lock:
            _bundles[(spec, target, gradient)] = bundle
    return bundle


def bundle_count():
    with _lock:
        return len(_bundles)


def clear():
    """Drops the bundles and loaded kernels of this process."""
    with _lock:
        _bundles.clear()
        _kernels.clear()


def _kernel(spec, device, gradient=False):
    target = target_of(device)
    spec, gradient = _key(spec, gradient)
    key = (spec, target, gradient, device.index)
    with _lock:
        kernel = _kernels.get(key)
    if kernel is None:
        manifest, ptx = compile_bundle(spec, target, gradient)
        kernel = _runtime.Kernel(device, manifest, ptx)
        with _lock:
            _kernels[key] = kernel
    return kernel


def _directory_name(spec, target, gradient):
    key = json.dumps([spec._asdict(), target._asdict(), gradient], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _path(directory):
    try:
        path = os.fsdecode(os.fspath(directory))
    except TypeError:
        raise ValueError(f"directory must be a path, got {directory!r}") from None
    if "\0" in path:
        raise ValueError(f"directory {path!r} holds a NUL character")
    return path


def _write(path, text):
    """Writes `text` to `path` whole or not at all: a temporary file next
    to it, flushed to disk and renamed over it (so an existing FIFO or
    device is replaced, never written into). OSError names the path."""
    directory, name = os.path.split(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    except OSError as error:
        raise OSError(error.errno, f"cannot write {path}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise OSError(error.errno, f"cannot write {path}: {error.strerror}") from None


def _digest(manifest, ptx):
    """SHA-256 of a bundle's manifest and PTX, kept in attention.json: a
    manifest or PTX edited or copied in from another bundle is refused even
    when its labels agree with each other."""
    return hashlib.sha256(manifest.encode() + b"\0" + ptx.encode()).hexdigest()


def save_bundles(directory):
    """Writes every bundle compiled in this process to DIRECTORY/<hash>/
    (manifest.json, kernels.ptx, attention.json); returns how many."""
    directory = _path(directory)
    with _lock:
        bundles = dict(_bundles)
    for (spec, target, gradient), (manifest, ptx) in bundles.items():
        path = os.path.join(directory, _directory_name(spec, target, gradient))
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as error:
            raise OSError(error.errno, f"cannot make {path}: {error.strerror}") from None
        described = json.dumps({"spec": spec._asdict(), "target": target._asdict(),
                                "gradient": gradient, "digest": _digest(manifest, ptx)},
                               indent=1, sort_keys=True)
        for name, text in (("manifest.json", manifest), ("kernels.ptx", ptx),
                           ("attention.json", described)):
            _write(os.path.join(path, name), text)
    return len(bundles)


def _kind(mode):
    for test, kind in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return kind
    return "special file"


def _read(path):
    """A bundle file's text: a regular file (never a FIFO or a device,
    which would block or never end) within its size bound, UTF-8."""
    limit = _FILE_LIMITS[os.path.basename(path)]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"cannot read {path}: it is a {_kind(mode)}, not a regular file")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} holds more than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text: {error}") from None


def _json(path, text):
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{path} nests too deeply") from None
    except ValueError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None


def _expected_params(spec, gradient):
    """The kernel parameters (name -> (type, shape)) an attention of `spec`
    (or with `gradient` its gradient) takes, as attn-to-ptx writes them in
    the manifest."""
    value_shape = spec.key_shape[:3] + (spec.value_dim,)
    params = {"Q": (spec.dtype, spec.query_shape), "K": (spec.dtype, spec.key_shape),
              "V": (spec.dtype, value_shape), "O": (spec.dtype, spec.out_shape())}
    if spec.with_lse or gradient:
        params["LSE"] = ("f32", spec.lse_shape())
    if gradient:
        params.update({"dO": params["O"], "dQ": params["Q"], "dK": params["K"],
                       "dV": params["V"]})
    if spec.mask_dtype is not None:
        params["mask"] = (spec.mask_dtype, spec.mask_full_shape())
    if spec.block_size is not None:
        params["block_mask"] = ("i8", spec.block_mask_full_shape())
    if spec.key_lengths:
        params["key_lengths"] = ("i32", spec.query_shape[:1])
    return params


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=0)


def _check_labels(path, spec, target, gradient, manifest):
    """That the manifest's kernel is the attention (or the gradient)
    attention.json says it is (a mislabelled bundle would serve a call the
    wrong attention)."""
    kernels = manifest.get("kernels") if isinstance(manifest, dict) else None
    if not isinstance(kernels, list) or len(kernels) != 1 or not isinstance(kernels[0], dict):
        raise ValueError(f"{path}: the manifest must hold one kernel")
    kernel = kernels[0]
    def mismatch(what, labelled, compiled):
        raise ValueError(f"{path}: attention.json says {what} {labelled!r}, the manifest's "
                         f"kernel {compiled!r}")
    if kernel.get("target") != target.chip:
        mismatch("chip", target.chip, kernel.get("target"))
    if kernel.get("gradient", False) is not gradient:
        mismatch("gradient", gradient, kernel.get("gradient", False))
    params = kernel.get("params")
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        raise ValueError(f"{path}: the manifest's kernel has no parameter list")
    found = {p.get("name"): (p.get("type"), tuple(p.get("shape") or ())) for p in params}
    expected = {name: (dtype, tuple(shape))
                for name, (dtype, shape) in _expected_params(spec, gradient).items()}
    if found != expected:
        mismatch("parameters", expected, found)
    semantics = kernel.get("attention")
    if not isinstance(semantics, dict):
        raise ValueError(f"{path}: the manifest's kernel does not say which attention it is")
    scale = spec.scale if spec.scale is not None else 1 / math.sqrt(spec.query_shape[3])
    compiled_scale = semantics.get("scale")
    if not isinstance(compiled_scale, (int, float)) or not _close(scale, compiled_scale):
        mismatch("scale", scale, compiled_scale)
    if semantics.get("causal") is not spec.causal:
        mismatch("causal", spec.causal, semantics.get("causal"))
    window = semantics.get("window")
    if (None if window is None else tuple(window)) != spec.window:
        mismatch("window", spec.window, window)
    softcap = semantics.get("softcap")
    if (softcap is None) != (spec.softcap is None) or (
            softcap is not None and not (isinstance(softcap, (int, float))
                                         and _close(softcap, spec.softcap))):
        mismatch("softcap", spec.softcap, softcap)
    blocks = semantics.get("block_mask_blocks")
    if (None if blocks is None else tuple(blocks)) != spec.block_size:
        mismatch("block_size", spec.block_size, blocks)


def load_bundles(directory):
    """Reads the bundles save_bundles wrote, so that the attentions they
    were compiled for run without compiling; returns how many. Each must be
    what it says: its files regular and within bounds, attention.json the
    attention its manifest's kernel computes, and the manifest one libattnrt
    accepts for its PTX."""
    directory = _path(directory)
    try:
        names = sorted(os.listdir(directory))
    except OSError as error:
        raise ValueError(f"cannot read {directory}: {error.strerror}") from None
    loaded = {}
    for name in names:
        path = os.path.join(directory, name)
        described = os.path.join(path, "attention.json")
        if not os.path.isdir(path) or not os.path.lexists(described):
            continue
        fields = _json(described, _read(described))
        try:
            spec = Spec.from_json(fields["spec"])
            target = Target.checked(**fields["target"])
            gradient = fields.get("gradient", False)
            if not isinstance(gradient, bool):
                raise ValueError(f"gradient must be true or false, got {gradient!r}")
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path} is not a bundle save_bundles wrote: {error}") from None
        manifest = _read(os.path.join(path, "manifest.json"))
        ptx = _read(os.path.join(path, "kernels.ptx"))
        if fields.get("digest") != _digest(manifest, ptx):
            raise ValueError(f"{path}: manifest.json and kernels.ptx are not the files "
                             "save_bundles wrote (their digest differs from attention.json's)")
        # libattnrt's checks first: the labels are then compared with a
        # well-formed manifest.
        _runtime.validate_bundle(path, manifest, ptx)
        _check_labels(path, spec, target, gradient,
                      _json(os.path.join(path, "manifest.json"), manifest))
        spec, gradient = _key(spec, gradient)
        loaded[(spec, target, gradient)] = (manifest, ptx)
    with _lock:
        _bundles.update(loaded)
    return len(loaded)


def _view(tensor, dtype):
    """The tensor libattnrt reads: contiguous and 16-byte aligned (the
    kernels' layout), copied on the device when it is not."""
    import torch
    if not tensor.is_contiguous() or tensor.data_ptr() % 16:
        tensor = tensor.clone(memory_format=torch.contiguous_format)
    return tensor, _runtime.Tensor.of(tensor.data_ptr(), dtype, list(tensor.shape),
                                      list(tensor.stride()))


def _device_of(tensor):
    import torch
    return _runtime.device(tensor.device.index if tensor.device.index is not None
                           else torch.cuda.current_device())


def attention(spec, q, k, v, key_lengths=None, mask=None, block_mask=None):
    """O (and LSE) of `spec` on CUDA tensors q, k, v (and int32 key
    lengths, the mask of spec.mask_full_shape(), the int8 block mask) of one
    device."""
    import torch
    if k.device != q.device or v.device != q.device:
        raise ValueError(f"Q, K and V must be on one device, got {q.device}, {k.device}, {v.device}")
    kernel = _kernel(spec, _device_of(q))
    q, q_arg = _view(q.detach(), spec.dtype)
    k, k_arg = _view(k.detach(), spec.dtype)
    v, v_arg = _view(v.detach(), spec.dtype)
    o = torch.empty(spec.out_shape(), dtype=q.dtype, device=q.device)
    args = {"Q": q_arg, "K": k_arg, "V": v_arg,
            "O": _view(o, spec.dtype)[1]}
    if spec.with_lse:
        lse = torch.empty(spec.lse_shape(), dtype=torch.float32, device=q.device)
        args["LSE"] = _view(lse, "f32")[1]
    # Held until the launch is enqueued (a view may be a copy, made on the
    # launch's stream, so the caching allocator keeps it until the kernel).
    views = []
    for name, tensor, dtype in (("key_lengths", key_lengths, "i32"),
                                ("mask", mask, spec.mask_dtype),
                                ("block_mask", block_mask, "i8")):
        if tensor is not None:
            tensor, args[name] = _view(tensor, dtype)
            views.append(tensor)
    kernel.launch(args, torch.cuda.current_stream(q.device).cuda_stream)
    return (o, lse) if spec.with_lse else o


def load_gradient(spec, q):
    """Compiles (or finds) and loads the backward kernel of `spec` on Q's
    device; CompilerError says what it does not take."""
    _kernel(spec, _device_of(q), gradient=True)


def attention_grad(spec, q, k, v, o, lse, grad_out, key_lengths=None, mask=None,
                   block_mask=None):
    """(dQ, dK, dV) of `spec`'s attention on CUDA tensors of Q's device: Q,
    K, V, the forward's O and LSE, dO, and the int32 key lengths, the mask
    (of spec.mask_full_shape()) and the int8 block mask the forward took;
    the backward kernel computes no mask gradient. The same bytes run to
    run."""
    import torch
    kernel = _kernel(spec, _device_of(q), gradient=True)
    inputs = {"Q": q, "K": k, "V": v, "O": o, "dO": grad_out}
    # Held until the launch is enqueued, as attention()'s views.
    views, args = [], {}
    for name, tensor in inputs.items():
        tensor, args[name] = _view(tensor.detach(), spec.dtype)
        views.append(tensor)
    lse, args["LSE"] = _view(lse.detach(), "f32")
    for name, tensor, dtype in (("key_lengths", key_lengths, "i32"),
                                ("mask", mask, spec.mask_dtype),
                                ("block_mask", block_mask, "i8")):
        if tensor is not None:
            tensor, args[name] = _view(tensor.detach(), dtype)
            views.append(tensor)
    grads = [torch.empty(inputs[name].shape, dtype=q.dtype, device=q.device)
             for name in ("Q", "K", "V")]
    for name, grad in zip(("dQ", "dK", "dV"), grads):
        args[name] = _view(grad, spec.dtype)[1]
    kernel.launch(args, torch.cuda.current_stream(q.device).cuda_stream)
    return tuple(grads)

"""Attention on a CUDA GPU: one kernel bundle per attention and GPU
(attn-to-ptx through the compiler, or loaded from a directory that
save_bundles wrote), launched by libattnrt on torch tensors, on their
device's current stream, without copies through the host."""

import hashlib
import json
import os
import threading
from typing import NamedTuple

from . import _runtime
from ._errors import CompilerError
from ._spec import Spec, compiler

_lock = threading.Lock()
# (Spec, Target) -> (manifest JSON, PTX).
_bundles = {}
# (Spec, Target, device index) -> _runtime.Kernel.
_kernels = {}


class Target(NamedTuple):
    """What the compiler needs of a GPU (the module's #attn.target)."""
    chip: str
    sms: int
    smem_per_block: int


def target_of(device):
    major, minor = device.compute_capability
    return Target(f"sm_{major}{minor}", device.multiprocessors,
                  device.shared_memory_per_block)


def compile_bundle(spec, target):
    """The bundle of `spec` for `target`, compiled once per process."""
    with _lock:
        bundle = _bundles.get((spec, target))
    if bundle is None:
        try:
            bundle = compiler().compile_gpu(spec.native(), *target)
        except RuntimeError as error:
            raise CompilerError(str(error)) from None
        with _lock:
            _bundles[(spec, target)] = bundle
    return bundle


def _kernel(spec, device):
    target = target_of(device)
    key = (spec, target, device.index)
    with _lock:
        kernel = _kernels.get(key)
    if kernel is None:
        manifest, ptx = compile_bundle(spec, target)
        kernel = _runtime.Kernel(device, manifest, ptx)
        with _lock:
            _kernels[key] = kernel
    return kernel


def _directory_name(spec, target):
    key = json.dumps([spec._asdict(), target._asdict()], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def save_bundles(directory):
    """Writes every bundle compiled in this process to DIRECTORY/<hash>/
    (manifest.json, kernels.ptx, attention.json); returns how many."""
    with _lock:
        bundles = dict(_bundles)
    for (spec, target), (manifest, ptx) in bundles.items():
        path = os.path.join(directory, _directory_name(spec, target))
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "manifest.json"), "w") as f:
            f.write(manifest)
        with open(os.path.join(path, "kernels.ptx"), "w") as f:
            f.write(ptx)
        with open(os.path.join(path, "attention.json"), "w") as f:
            json.dump({"spec": spec._asdict(), "target": target._asdict()}, f,
                      indent=1, sort_keys=True)
    return len(bundles)


def load_bundles(directory):
    """Reads the bundles save_bundles wrote, so that the attentions they
    were compiled for run without compiling; returns how many."""
    loaded = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        described = os.path.join(path, "attention.json")
        if not os.path.isfile(described):
            continue
        try:
            with open(described) as f:
                fields = json.load(f)
            spec = Spec.from_json(fields["spec"])
            target = Target(**fields["target"])
            with open(os.path.join(path, "manifest.json")) as f:
                manifest = f.read()
            with open(os.path.join(path, "kernels.ptx")) as f:
                ptx = f.read()
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path} is not a bundle save_bundles wrote: {error}") from None
        loaded[(spec, target)] = (manifest, ptx)
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


def attention(spec, q, k, v, key_lengths=None, mask=None, block_mask=None):
    """O (and LSE) of `spec` on CUDA tensors q, k, v (and int32 key
    lengths, the mask of spec.mask_full_shape(), the int8 block mask) of one
    device."""
    import torch
    if k.device != q.device or v.device != q.device:
        raise ValueError(f"Q, K and V must be on one device, got {q.device}, {k.device}, {v.device}")
    device = _runtime.device(q.device.index if q.device.index is not None
                             else torch.cuda.current_device())
    kernel = _kernel(spec, device)
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

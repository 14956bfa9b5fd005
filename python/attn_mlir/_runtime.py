"""libattnrt through ctypes: the runtime of kernel bundles
(include/attn/Runtime/attnrt.h). It needs neither LLVM nor MLIR, only the
CUDA driver, which it opens itself; so bundles compiled on one machine run on
another that has no compiler.

The library is the one beside the package (<build>/lib/libattnrt.so.0 for
<build>/python/attn_mlir in the build tree, <prefix>/lib/libattnrt.so.0 for
<prefix>/lib/python3.X/site-packages/attn_mlir installed), or the file named
by ATTN_MLIR_LIBATTNRT. Contexts (a device's primary context,
the one PyTorch uses) live until the process ends."""

import ctypes
import os
import threading

from ._errors import GpuError

_MAX_RANK = 4
# attnrtDType.
DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "i32": 3, "i1": 4, "i8": 5}


class Tensor(ctypes.Structure):
    """attnrtTensor: a strided view of device memory (strides in elements)."""
    _fields_ = [("data", ctypes.c_uint64), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * _MAX_RANK),
                ("strides", ctypes.c_int64 * _MAX_RANK)]

    @classmethod
    def of(cls, pointer, dtype, sizes, strides):
        tensor = cls(pointer, DTYPES[dtype], len(sizes))
        tensor.sizes[:len(sizes)] = sizes
        tensor.strides[:len(strides)] = strides
        return tensor


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("computeMajor", ctypes.c_int32),
                ("computeMinor", ctypes.c_int32),
                ("multiprocessors", ctypes.c_int32),
                ("sharedMemoryPerBlockOptin", ctypes.c_int64),
                ("l2CacheBytes", ctypes.c_int64),
                ("totalMemoryBytes", ctypes.c_int64)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * _MAX_RANK),
                ("strides", ctypes.c_int64 * _MAX_RANK),
                ("alignment", ctypes.c_int64)]


_handle = ctypes.c_void_p
_lock = threading.Lock()
_library = None
_devices = {}


def _load():
    global _library
    if _library is not None:
        return _library
    here = os.path.dirname(os.path.abspath(__file__))
    # <build>/lib from <build>/python/attn_mlir; <prefix>/lib from
    # <prefix>/lib/python3.X/site-packages/attn_mlir (and dist-packages).
    candidates = [os.path.join(here, os.pardir, os.pardir, "lib", "libattnrt.so.0"),
                  os.path.join(here, os.pardir, os.pardir, os.pardir, "libattnrt.so.0")]
    path = os.environ.get("ATTN_MLIR_LIBATTNRT") or next(
        (c for c in candidates if os.path.exists(c)), candidates[0])
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise GpuError(f"cannot load libattnrt ({error}); set ATTN_MLIR_LIBATTNRT "
                       "to its path") from None
    signatures = {
        "attnrtStatusName": (ctypes.c_char_p, [ctypes.c_int]),
        "attnrtLastErrorMessage": (ctypes.c_char_p, []),
        "attnrtContextCreate": (ctypes.c_int, [ctypes.c_int32, ctypes.POINTER(_handle)]),
        "attnrtContextGetDeviceInfo": (ctypes.c_int, [_handle, ctypes.POINTER(_DeviceInfo)]),
        "attnrtBundleLoadFromMemory": (ctypes.c_int, [_handle, ctypes.c_char_p, ctypes.c_char_p,
                                                      ctypes.POINTER(_handle)]),
        "attnrtBundleValidateFromMemory": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p,
                                                          ctypes.POINTER(ctypes.c_int32)]),
        "attnrtBundleDestroy": (None, [_handle]),
        "attnrtBundleKernelCount": (ctypes.c_int32, [_handle]),
        "attnrtBundleGetKernel": (ctypes.c_int, [_handle, ctypes.c_int32, ctypes.POINTER(_handle)]),
        "attnrtKernelParamCount": (ctypes.c_int32, [_handle]),
        "attnrtKernelGetParam": (ctypes.c_int, [_handle, ctypes.c_int32,
                                                ctypes.POINTER(_ParamInfo)]),
        "attnrtLaunch": (ctypes.c_int, [_handle, ctypes.POINTER(Tensor), ctypes.c_int32,
                                        ctypes.c_void_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    _library = lib
    return lib


def _check(status):
    if status != 0:
        lib = _load()
        raise GpuError(f"{lib.attnrtStatusName(status).decode()}: "
                       f"{lib.attnrtLastErrorMessage().decode()}")


def validate_bundle(path, manifest, ptx):
    """libattnrt's checks of a bundle (the manifest against its PTX), without
    a driver: ValueError naming `path` when it would not load."""
    lib = _load()
    count = ctypes.c_int32()
    if "\0" in manifest or "\0" in ptx:
        raise ValueError(f"{path}: a bundle file holds a NUL character")
    status = lib.attnrtBundleValidateFromMemory(manifest.encode(), ptx.encode(),
                                                ctypes.byref(count))
    if status != 0:
        raise ValueError(f"{path} is not a valid bundle: "
                         f"{lib.attnrtLastErrorMessage().decode()}")


class Device:
    """A CUDA device's primary context and what the driver says of it."""

    def __init__(self, index):
        lib = _load()
        self.context = _handle()
        _check(lib.attnrtContextCreate(index, ctypes.byref(self.context)))
        info = _DeviceInfo()
        _check(lib.attnrtContextGetDeviceInfo(self.context, ctypes.byref(info)))
        self.index = index
        self.name = info.name.decode()
        self.compute_capability = (info.computeMajor, info.computeMinor)
        self.multiprocessors = info.multiprocessors
        self.shared_memory_per_block = info.sharedMemoryPerBlockOptin


def device(index):
    """The Device of a CUDA device index, opened once."""
    with _lock:
        if index not in _devices:
            _devices[index] = Device(index)
        return _devices[index]


class Kernel:
    """The one kernel of a bundle, loaded (JIT-compiled by the driver) on a
    device."""

    def __init__(self, device_, manifest, ptx):
        lib = _load()
        self._bundle = _handle()
        _check(lib.attnrtBundleLoadFromMemory(device_.context, manifest.encode(),
                                              ptx.encode(), ctypes.byref(self._bundle)))
        count = lib.attnrtBundleKernelCount(self._bundle)
        if count != 1:
            raise GpuError(f"a bundle of {count} kernels; attn_mlir runs bundles of one")
        self._kernel = _handle()
        _check(lib.attnrtBundleGetKernel(self._bundle, 0, ctypes.byref(self._kernel)))
        self.param_names = []
        for i in range(lib.attnrtKernelParamCount(self._kernel)):
            info = _ParamInfo()
            _check(lib.attnrtKernelGetParam(self._kernel, i, ctypes.byref(info)))
            self.param_names.append(info.name.decode())

    def launch(self, tensors, stream):
        """Launches the kernel on `stream` (a CUstream as an integer, 0 the
        default stream) with `tensors`, a Tensor for each parameter name;
        libattnrt checks them against the manifest."""
        missing = [name for name in self.param_names if name not in tensors]
        if missing:
            raise GpuError(f"no tensor for the kernel's parameters {missing}")
        args = (Tensor * len(self.param_names))(*(tensors[n] for n in self.param_names))
        with _lock:
            _check(_load().attnrtLaunch(self._kernel, args, len(self.param_names),
                                        ctypes.c_void_p(stream or None)))

    def __del__(self):
        bundle = getattr(self, "_bundle", None)
        if bundle:
            _load().attnrtBundleDestroy(bundle)

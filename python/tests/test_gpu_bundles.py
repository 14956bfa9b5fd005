"""The GPU path without a GPU: kernel bundles compiled for a chip, saved and
loaded without the compiler, and launched through libattnrt against the
fake CUDA driver of the runtime's tests (it runs no kernel but checks what a
driver checks), or with no driver at all."""
import json
import os

import pytest

import attn_mlir
from attn_mlir._spec import Spec, make_spec

H100 = dict(chip="sm_90", sms=132, smem_per_block=232448)


def test_precompile_decode_takes_split_kv():
    """A decode shape gets split-KV over the target's SMs, GQA-packed."""
    manifest = json.loads(attn_mlir.precompile(
        (4, 32, 1, 128), (4, 8, 8192, 128), (4, 8, 8192, 128), "bfloat16",
        enable_gqa=True, return_lse=True, **H100))
    (kernel,) = manifest["kernels"]
    assert [p["name"] for p in kernel["params"]] == ["Q", "K", "V", "O", "LSE"]
    assert kernel["target"] == "sm_90"
    assert kernel["tiles"]["packed_heads"] == 4
    assert {w["name"] for w in kernel["workspaces"]} == {"partial_o", "partial_lse", "counters"}


def test_precompile_with_key_lengths():
    """Key lengths are the kernel's last parameter, [B] int32."""
    manifest = json.loads(attn_mlir.precompile(
        (4, 32, 1, 128), (4, 8, 8192, 128), (4, 8, 8192, 128), "bfloat16",
        enable_gqa=True, key_lengths=True, **H100))
    (kernel,) = manifest["kernels"]
    params = kernel["params"]
    assert [p["name"] for p in params] == ["Q", "K", "V", "O", "key_lengths"]
    assert params[-1]["type"] == "i32" and params[-1]["shape"] == [4]


def test_precompile_with_masks():
    """The mask and the block mask are parameters of their types and
    shapes (size-1 dimensions broadcast), and a saved bundle's description
    of them reads back as the same attention."""
    manifest = json.loads(attn_mlir.precompile(
        (2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16", enable_gqa=True,
        attn_mask=((2, 1, 100, 300), "bool"), block_mask=(2, 3), block_size=(64, 128), **H100))
    params = {p["name"]: p for p in manifest["kernels"][0]["params"]}
    assert (params["mask"]["type"], params["mask"]["shape"]) == ("i1", [2, 1, 100, 300])
    assert (params["block_mask"]["type"], params["block_mask"]["shape"]) == ("i8", [1, 1, 2, 3])
    manifest = json.loads(attn_mlir.precompile(
        (2, 8, 100, 64), (2, 8, 300, 64), (2, 8, 300, 64), "bfloat16",
        attn_mask=((100, 300), "float32"), **H100))
    params = {p["name"]: p for p in manifest["kernels"][0]["params"]}
    assert (params["mask"]["type"], params["mask"]["shape"]) == ("f32", [1, 1, 100, 300])
    spec = make_spec((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16", causal=False,
                     scale=None, window=None, softcap=None, enable_gqa=True, return_lse=False,
                     attn_mask=((8, 100, 300), "float16"), block_mask=(2, 1, 2, 3),
                     block_size=(64, 128))
    assert Spec.from_json(json.loads(json.dumps(spec._asdict()))) == spec
    # A bundle saved before masks existed has no mask fields.
    fields = {name: value for name, value in spec._asdict().items()
              if not name.startswith(("mask", "block"))}
    assert Spec.from_json(fields).mask_dtype is None


def test_precompile_errors():
    with pytest.raises(attn_mlir.CompilerError, match="sm_75 is too old"):
        attn_mlir.precompile((1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 64, 64), "float16",
                             chip="sm_75", sms=40, smem_per_block=65536)
    with pytest.raises(ValueError, match="sms must be from 1 to 2147483647, got 0"):
        attn_mlir.precompile((1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 64, 64), "float16",
                             chip="sm_80", sms=0, smem_per_block=65536)


SAVE = """
import attn_mlir, sys
attn_mlir.precompile((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16",
                     causal=True, enable_gqa=True, chip="sm_80", sms=108, smem_per_block=166912)
print(attn_mlir.save_bundles(sys.argv[1] if len(sys.argv) > 1 else "{dir}"))
"""

# Without the compiler (its module made unimportable, as on a GPU machine
# without LLVM/MLIR): the saved bundle is launched on the fake device (an
# sm_80 with 108 SMs), with host arrays standing for device memory.
LAUNCH = """
import sys
sys.modules["attn_mlir._attn_mlir"] = None
import numpy as np, attn_mlir
from attn_mlir import _gpu, _runtime
from attn_mlir._spec import make_spec
print(attn_mlir.load_bundles("{dir}"))
device = _runtime.device(0)
spec = make_spec((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16", causal=True,
                 scale=None, window=None, softcap=None, enable_gqa=True, return_lse=False)
kernel = _gpu._kernel(spec, device)
arrays = dict(Q=np.zeros((2, 8, 100, 64), np.float16), K=np.zeros((2, 2, 300, 64), np.float16),
              V=np.zeros((2, 2, 300, 64), np.float16), O=np.zeros((2, 8, 100, 64), np.float16))
def tensor(a, sizes=None):
    return _runtime.Tensor.of(a.ctypes.data, "f16", list(sizes or a.shape), [s // 2 for s in a.strides])
args = {{name: tensor(a) for name, a in arrays.items()}}
kernel.launch(args, 0)
print("launched", kernel.param_names)
args["V"] = tensor(arrays["V"], (2, 2, 299, 64))
try:
    kernel.launch(args, 0)
except attn_mlir.GpuError as error:
    print(error)
other = make_spec((1, 1, 8, 64), (1, 1, 8, 64), (1, 1, 8, 64), "float16", causal=False,
                  scale=None, window=None, softcap=None, enable_gqa=False, return_lse=False)
try:
    _gpu._kernel(other, device)
except attn_mlir.CompilerError as error:
    print(error)
"""


def test_saved_bundle_launches_without_compiler(tmp_path, run_python):
    fake = os.environ.get("ATTN_FAKE_CUDA_DRIVER")
    if not fake:
        pytest.skip("ATTN_FAKE_CUDA_DRIVER not set (ctest sets it)")
    saved = run_python(SAVE.format(dir=tmp_path))
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.strip() == "1"
    (folder,) = os.listdir(tmp_path)
    assert sorted(os.listdir(tmp_path / folder)) == ["attention.json", "kernels.ptx", "manifest.json"]
    run = run_python(LAUNCH.format(dir=tmp_path), ATTNRT_LIBCUDA=fake)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "1"
    assert lines[1] == "launched ['Q', 'K', 'V', 'O']"
    assert lines[2].startswith("ATTNRT_ERROR_INVALID_ARGUMENT: ") and "parameter V: shape [2, 2, 299, 64]" in lines[2]
    assert lines[3].startswith("the compiler of attn_mlir cannot be loaded")


def test_no_driver_is_a_clear_error(run_python):
    run = run_python("""
import attn_mlir
from attn_mlir import _runtime
try:
    _runtime.device(0)
except attn_mlir.GpuError as error:
    print(error)
""", ATTNRT_LIBCUDA="/no/such/libcuda.so")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ATTNRT_ERROR_NO_DRIVER: ")


def test_load_bundles_rejects_a_broken_folder(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "attention.json").write_text("{}")
    with pytest.raises(ValueError, match="not a bundle save_bundles wrote"):
        attn_mlir.load_bundles(str(tmp_path))


@pytest.fixture
def saved(tmp_path):
    """A saved bundle's folder (the causal GQA attention of SAVE)."""
    attn_mlir.clear_cache()
    attn_mlir.precompile((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16",
                         causal=True, enable_gqa=True, chip="sm_80", sms=108,
                         smem_per_block=166912)
    assert attn_mlir.save_bundles(tmp_path / "bundles") == 1
    attn_mlir.clear_cache()
    (folder,) = (tmp_path / "bundles").iterdir()
    return folder


def relabel(folder, **changes):
    described = json.loads((folder / "attention.json").read_text())
    described["spec"].update(changes)
    (folder / "attention.json").write_text(json.dumps(described))


@pytest.mark.parametrize("changes, message", [
    (dict(causal=False), r"attention.json says causal False, the manifest's kernel True"),
    (dict(scale=0.5), r"attention.json says scale 0.5, the manifest's kernel 0.125"),
    (dict(window=[4, 0]), r"attention.json says window \(4, 0\)"),
    (dict(with_lse=True), r"attention.json says parameters"),
    (dict(query_shape=[2, 8, 99, 64]), r"attention.json says parameters"),
])
def test_load_bundles_refuses_a_mislabelled_bundle(saved, changes, message):
    """Once served to calls of another attention (exit 0, wrong numbers)."""
    relabel(saved, **changes)
    with pytest.raises(ValueError, match=message):
        attn_mlir.load_bundles(saved.parent)
    assert attn_mlir.cache_info().gpu_bundles == 0


def test_load_bundles_reads_a_good_bundle(saved):
    assert attn_mlir.load_bundles(saved.parent) == 1
    assert attn_mlir.cache_info().gpu_bundles == 1


@pytest.mark.parametrize("name", ["manifest.json", "kernels.ptx", "attention.json"])
@pytest.mark.parametrize("kind", ["FIFO", "/dev/zero", "/dev/urandom", "directory"])
def test_load_bundles_reads_regular_files_only(saved, name, kind):
    """Once a hang (a FIFO), a read past 60 s (/dev/urandom) or 16 GB read
    before MemoryError (/dev/zero)."""
    path = saved / name
    path.unlink()
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(kind)
    expected = {"FIFO": "FIFO", "directory": "directory"}.get(kind, "character device")
    with pytest.raises(ValueError, match=f"cannot read {path}: it is a {expected}, not a regular file"):
        attn_mlir.load_bundles(saved.parent)


def test_load_bundles_refuses_broken_files(saved):
    (saved / "attention.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="attention.json nests too deeply"):
        attn_mlir.load_bundles(saved.parent)
    (saved / "attention.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="attention.json is not UTF-8 text"):
        attn_mlir.load_bundles(saved.parent)


def test_load_bundles_checks_the_manifest_against_its_ptx(saved, monkeypatch):
    ptx = (saved / "kernels.ptx").read_text()
    (saved / "kernels.ptx").write_text(ptx[:len(ptx) // 2])
    with pytest.raises(ValueError, match="their digest differs from attention.json's"):
        attn_mlir.load_bundles(saved.parent)
    # libattnrt's check, behind the digest.
    from attn_mlir import _gpu
    monkeypatch.setattr(_gpu, "_digest", lambda manifest, ptx: "same")
    described = json.loads((saved / "attention.json").read_text())
    (saved / "attention.json").write_text(json.dumps(dict(described, digest="same")))
    with pytest.raises(ValueError, match="is not a valid bundle: .*ends inside the body"):
        attn_mlir.load_bundles(saved.parent)


def test_load_bundles_refuses_consistently_relabelled_files(saved):
    """attention.json and the manifest both edited to say non-causal, over
    the causal kernel's PTX: the digest save_bundles kept differs."""
    relabel(saved, causal=False)
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["kernels"][0]["attention"]["causal"] = False
    (saved / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="their digest differs"):
        attn_mlir.load_bundles(saved.parent)


def test_save_bundles_replaces_a_fifo(saved):
    """Once blocked forever opening the FIFO for writing."""
    (saved / "manifest.json").unlink()
    os.mkfifo(saved / "manifest.json")
    attn_mlir.precompile((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "float16",
                         causal=True, enable_gqa=True, chip="sm_80", sms=108,
                         smem_per_block=166912)
    assert attn_mlir.save_bundles(saved.parent) == 1
    assert (saved / "manifest.json").is_file()
    assert attn_mlir.load_bundles(saved.parent) == 1


def test_save_bundles_names_the_file_it_cannot_write(saved, monkeypatch):
    """A full disk (ENOSPC) once gave a message naming no file."""
    import errno
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    attn_mlir.precompile((1, 1, 16, 64), (1, 1, 16, 64), (1, 1, 16, 64), "float16",
                         chip="sm_80", sms=108, smem_per_block=166912)
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match=r"cannot write .*/manifest.json: No space left on device"):
        attn_mlir.save_bundles(saved.parent)
    assert not [p for p in saved.parent.rglob(".*")], "a temporary file was left"

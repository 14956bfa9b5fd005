"""Describes the reference case in argv[1] (each array's type and shape,
the kernel and O's tolerance) and compares the CPU kernel's O (argv[2])
with the case's O within that tolerance."""
import json
import os
import sys

import numpy as np

case, cpu_out = sys.argv[1], sys.argv[2]
for name in ("q", "k", "v", "block_mask", "o", "lse"):
    array = np.load(os.path.join(case, name + ".npy"))
    # bf16 has no NumPy type: two opaque bytes.
    kind = "bfloat16-as-V2" if array.dtype == np.dtype("V2") else str(array.dtype)
    print(name, kind, array.shape)
with open(os.path.join(case, "reference.json")) as f:
    description = json.load(f)
out = description["outputs"]["O"]
print("kernel %s, O tolerance %s" % (description["kernel"], out["tolerance_origin"]))

expected = np.load(os.path.join(case, "o.npy")).astype(np.float64)
# The CPU kernel's O is bf16 ('<V2'): the high half of an f32.
raw = np.load(cpu_out).view(np.uint16).astype(np.uint32) << 16
actual = raw.view(np.float32).astype(np.float64)
error = np.linalg.norm(actual - expected) / np.linalg.norm(expected)
assert np.isfinite(expected).all(), "the reference O has non-finite values"
assert error <= out["tolerance"], (error, out["tolerance"])
print("the CPU kernel's O is within the O tolerance of o.npy")

"""Writes the 1x1x3x3 int8 block mask of block-sparse.mlir to argv[1]: the
diagonal blocks partial, the last query block's first key block full, the
rest empty."""
import sys

import numpy as np

blocks = np.array([[1, 0, 0], [0, 1, 0], [2, 0, 1]], dtype=np.int8)
np.save(sys.argv[1], blocks.reshape(1, 1, 3, 3))

"""Fixtures shared by the package's tests."""

import os
import subprocess
import sys

import pytest


@pytest.fixture
def run_python():
    """Runs code in a fresh interpreter with extra environment variables
    (the runtime reads ATTNRT_LIBCUDA once per process)."""
    def run(code, **env):
        return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                              capture_output=True, text=True)
    return run

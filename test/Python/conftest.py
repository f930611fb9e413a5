"""pytest setup for the flashc package's tests (run by CTest: python-flashc).

flashc is imported from the build tree (build/python, on PYTHONPATH from
CTest) so that the tests check the current build; each test gets an empty
kernel cache of its own.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "Kernels"))


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "flashc-cache"
    monkeypatch.setenv("FLASHC_CACHE_DIR", str(path))
    return path


@pytest.fixture
def kernels():
    return os.path.join(ROOT, "kernels")


@pytest.fixture
def stub_libcuda():
    """The fake driver the launcher's lit tests use (test/Launcher), which
    CTest names in $FLASHC_STUB_LIBCUDA."""
    path = os.environ.get("FLASHC_STUB_LIBCUDA", "")
    if not os.path.exists(path):
        pytest.skip("no stub libcuda in this build")
    return path


def attention_inputs(b=1, h=2, nq=70, nk=90, d=64, dtype=np.float16, seed=0):
    """Q, K, V of the kernel layout [B, H, N, D], and O poisoned with NaN so
    that an element the kernel never writes fails the check."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(dtype)
    k = rng.standard_normal((b, h, nk, d)).astype(dtype)
    v = rng.standard_normal((b, h, nk, d)).astype(dtype)
    o = np.full((b, h, nq, d), np.nan, dtype)
    return q, k, v, o


def relative_error(out, expected):
    out = np.asarray(out, np.float64)
    return np.linalg.norm(out - expected) / np.linalg.norm(expected)


PTXAS = "/usr/local/cuda/bin/ptxas"


def assert_assembles_without_spills(kernel, arch, tmp_path):
    """ptxas -v on a compiled kernel's PTX: it assembles, and every function
    spills 0 bytes."""
    ptx = tmp_path / "kernel.ptx"
    ptx.write_text(kernel.ptx)
    result = subprocess.run([PTXAS, "-v", f"-arch={arch}", str(ptx), "-o",
                             str(tmp_path / "kernel.cubin")], capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills, log
    assert all(stores == "0" and loads == "0" for stores, loads in spills), log

"""A short run of the Python-package fuzzer (scripts/fuzz-python.py; fuzz.sh
runs it for minutes with fresh seeds): fixed seed, so the same cases each
time, which must all behave."""
import os
import subprocess
import sys

from conftest import ROOT


def test_fuzz_python_short(tmp_path):
    script = os.path.join(ROOT, "scripts", "fuzz-python.py")
    result = subprocess.run(
        [sys.executable, script, "--count", "60", "--seed", "7", "--targets", "interp",
         "--findings", str(tmp_path / "findings")],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "python fuzzer: seed 7, 60 cases" in result.stdout

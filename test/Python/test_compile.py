"""flashc.compile: PTX, launch metadata, every IR level, errors."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import flashc


def test_fa2_ptx_and_metadata(kernels):
    k = flashc.compile(f"{kernels}/fa2.tile", HEAD_DIM=64)
    assert k.ptx.lstrip().startswith("//")
    assert ".entry fa2(" in k.ptx and "mma.sync" in k.ptx
    assert k.metadata["entry"] == "fa2" and k.metadata["arch"] == "sm_80"
    assert k.grid == ["cdiv(Nq, 128)", "B * H", "1"]
    assert k.threads == 128
    # 128 x 128 on sm_80 (kernels/fa2.tile): Q's 16 KiB re-read from shared
    # memory beside 2 stages of 32 KiB of K and V.
    assert k.shared_bytes == 81920
    assert [p["name"] for p in k.params] == ["Q", "K", "V", "O", "sm_scale"]
    assert k.params[0]["dims"] == ["B", "H", "Nq", 64]


def test_constants_and_arch_change_the_kernel(kernels):
    k = flashc.compile(f"{kernels}/fa2.tile", arch="sm_90", HEAD_DIM=128, CAUSAL=True)
    assert k.metadata["arch"] == "sm_90" and ".target sm_90" in k.ptx
    assert k.metadata["constants"]["HEAD_DIM"] == 128
    assert k.metadata["constants"]["CAUSAL"] is True
    # HEAD_DIM 128 defaults to 128 x 64 on sm_90 (with the row sum on the
    # tensor cores) and sm_80, and 64 x 64 on sm_86 (kernels/fa2.tile).
    assert k.grid[0] == "cdiv(Nq, 128)" and k.metadata["constants"]["BLOCK_N"] == 64
    assert k.metadata["constants"]["SUM_BY_MMA"] is True
    k80 = flashc.compile(f"{kernels}/fa2.tile", arch="sm_80", HEAD_DIM=128, CAUSAL=True)
    assert k80.grid[0] == "cdiv(Nq, 128)" and k80.metadata["constants"]["BLOCK_N"] == 64
    assert k80.metadata["constants"]["SUM_BY_MMA"] is False
    k86 = flashc.compile(f"{kernels}/fa2.tile", arch="sm_86", HEAD_DIM=128, CAUSAL=True)
    assert k86.grid[0] == "cdiv(Nq, 64)" and k86.metadata["constants"]["BLOCK_N"] == 64


def test_same_ptx_as_the_driver(kernels, tmp_path):
    flashc_bin = os.environ.get("FLASHC_BIN") or shutil.which("flashc")
    if not flashc_bin:
        pytest.skip("no flashc driver (CTest names it in $FLASHC_BIN)")
    out = tmp_path / "fa2.ptx"
    subprocess.run([flashc_bin, f"{kernels}/fa2.tile", "-D", "HEAD_DIM=64", "-o", str(out)],
                   check=True)
    k = flashc.compile(f"{kernels}/fa2.tile", HEAD_DIM=64)
    assert k.ptx == out.read_text()
    assert k.metadata == json.loads((tmp_path / "fa2.ptx.json").read_text())


@pytest.mark.parametrize("level,marker", [
    ("tile", "tile."),
    ("layout", "#tile."),
    ("simt", "gpu.module"),
    ("llvm", "llvm.func"),
    ("ptx", ".entry fa2"),
])
def test_every_level(kernels, level, marker):
    text = flashc.compile(f"{kernels}/fa2.tile").ir(level)
    assert marker in text


def test_levels_differ(kernels):
    k = flashc.compile(f"{kernels}/fa2.tile")
    assert "gpu.module" not in k.ir("tile") and "gpu.module" not in k.ir("layout")
    assert "#tile." not in k.ir("tile")


def test_cubin(kernels):
    if not shutil.which("ptxas") and not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("no ptxas")
    cubin = flashc.compile(f"{kernels}/fa2.tile").ir("cubin")
    assert isinstance(cubin, bytes) and cubin[:4] == b"\x7fELF"


def test_unknown_level(kernels):
    with pytest.raises(ValueError, match="unknown level 'sass'"):
        flashc.compile(f"{kernels}/fa2.tile").ir("sass")


def test_source_text():
    k = flashc.compile("kernel copy(X: f32[N], Y: f32[N]) {\n"
                       "  grid(cdiv(N, 64));\n"
                       "  let i = program_id(0) * 64;\n"
                       "  store(Y[i : i + 64], load(X[i : i + 64]));\n"
                       "}\n")
    assert k.grid == ["cdiv(N, 64)", "1", "1"]
    assert "func.func" in k.ir("tile")


def test_syntax_error_has_location_and_caret(tmp_path):
    bad = tmp_path / "bad.tile"
    bad.write_text("kernel k(X: f32[N]) {\n  grid(1);\n  let x = load(X[0 : 64];\n}\n")
    with pytest.raises(flashc.CompileError) as error:
        flashc.compile(str(bad))
    message = str(error.value)
    assert f"{bad}:3:" in message and "error:" in message
    lines = message.splitlines()
    at = next(i for i, line in enumerate(lines) if "error:" in line)
    assert lines[at + 1] == "  let x = load(X[0 : 64];"
    assert lines[at + 2].strip() == "^"
    column = int(lines[at].split(":")[2])
    assert lines[at + 2].index("^") == column - 1


def test_error_in_source_text():
    with pytest.raises(flashc.CompileError, match=r"<string>:1:\d+: error: "):
        flashc.compile("kernel k(X: f32[N]) { grid(1) }\n")


def test_bad_constant_and_arch(kernels):
    with pytest.raises(flashc.CompileError, match="NO_SUCH"):
        flashc.compile(f"{kernels}/fa2.tile", NO_SUCH=1)
    # The front end needs the arch (ARCH), so compile refuses it already.
    with pytest.raises(flashc.CompileError, match="unsupported arch 'sm_70'"):
        flashc.compile(f"{kernels}/fa2.tile", arch="sm_70")


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        flashc.compile("no/such/kernel.tile")


def test_a_directory_is_no_kernel(tmp_path):
    with pytest.raises(IsADirectoryError):
        flashc.compile(str(tmp_path))
    with pytest.raises(IsADirectoryError):
        flashc.compile(tmp_path)


def test_only_regular_files_are_read():
    # As flashc: /dev/zero is refused before a byte is read.
    with pytest.raises(flashc.CompileError,
                       match="cannot open '/dev/zero': it is not a regular file"):
        flashc.compile("/dev/zero")


def test_a_byte_that_is_not_ascii_is_located(tmp_path):
    bad = tmp_path / "latin1.tile"
    bad.write_bytes(b"kernel k(X: f32[N]) {\xff\n}\n")
    with pytest.raises(flashc.CompileError) as error:
        flashc.compile(bad)
    lines = str(error.value).splitlines()
    assert lines[0] == f"{bad}:1:22: error: unexpected byte 0xff (only ASCII source text is allowed)"
    assert lines[1] == "kernel k(X: f32[N]) {\ufffd"
    # What flashc prints (with the byte), as text.
    flashc_bin = os.environ.get("FLASHC_BIN") or shutil.which("flashc")
    if flashc_bin:
        driver = subprocess.run([flashc_bin, str(bad)], capture_output=True)
        assert str(error.value) == driver.stderr.decode(errors="replace")


def test_any_byte_in_a_comment(tmp_path):
    # flashc compiles it; so does the package, and caches it.
    src = tmp_path / "comment.tile"
    src.write_bytes(b"# caf\xe9\nkernel k(X: f32[N]) {\n  grid(1);\n"
                    b"  store(X[0 : 16], full([16], 1.0, f32));\n}\n")
    assert flashc.compile(src).ptx == flashc.compile(str(src)).ptx


def test_errors_are_one_family():
    assert issubclass(flashc.CompileError, flashc.Error)
    assert issubclass(flashc.SanitizerError, flashc.RunError)
    assert issubclass(flashc.RunError, flashc.Error)


ARCH_KERNEL = """\
kernel k<BLOCK: int = where(ARCH >= 90, 128, 64)>(O: i32[N]) {
  grid(1);
  store(O[0 : 2], full([2], ARCH * 1000 + BLOCK, i32));
}
"""


@pytest.mark.parametrize("arch, block", [("sm_80", 64), ("sm_86", 64), ("sm_90", 128)])
def test_arch_constant_follows_arch(arch, block):
    k = flashc.compile(ARCH_KERNEL, arch=arch)
    assert k.metadata["constants"]["BLOCK"] == block
    for target in ("interp", "emulate"):
        out = np.zeros(2, np.int32)
        k(O=out, target=target)
        assert list(out) == [flashc_arch_number(arch) * 1000 + block] * 2


def flashc_arch_number(arch):
    return int(arch[len("sm_"):])


def test_arch_constant_is_read_only():
    with pytest.raises(flashc.CompileError, match="'ARCH' is predefined"):
        flashc.compile(ARCH_KERNEL, ARCH=90)


def _row_limits(ir):
    """Lines of `ir` that take a per-row minimum of tiles (the merged limit)."""
    return sum("arith.minsi" in line and "tensor<" in line for line in ir.splitlines())


def _masking_selects(ptx):
    """Scores masked with -inf in `ptx` (selp.f32 with 0fFF800000)."""
    return ptx.count(", 0fFF800000, %p") + ptx.count("0fFF800000, %r")


def test_mask_options_reach_every_level(kernels):
    # fa2 causal, HEAD_DIM 64 (128 x 128: 128 scores per thread): the masked
    # loop selects each score twice as written, once with the bounds merged
    # (the default), and with
    # lean_masks its comparisons move to the per-row limit (tile IR unchanged
    # by the shift, which is layout level: one arith.minsi per mask either way).
    src = f"{kernels}/fa2.tile"
    written = flashc.compile(src, HEAD_DIM=64, CAUSAL=True, merge_mask_bounds=False)
    merged = flashc.compile(src, HEAD_DIM=64, CAUSAL=True)
    lean = flashc.compile(src, HEAD_DIM=64, CAUSAL=True, lean_masks=True)
    assert merged.options == {"merge_mask_bounds": True, "lean_masks": False}
    assert "lean_masks=True" in repr(lean)
    assert _row_limits(written.ir("tile")) == 0 and _row_limits(merged.ir("tile")) == 1
    assert _masking_selects(written.ptx) == 256
    assert _masking_selects(merged.ptx) == 128 and _masking_selects(lean.ptx) == 128
    assert merged.ptx != lean.ptx and _row_limits(lean.ir("layout")) == 1


def test_mask_options_in_runs(kernels):
    # fa2 causal (bottom-right aligned, Nq < Nk, a key tail): the emulator
    # lowers with the kernel's options (its op count differs per option);
    # each agrees with float64.
    rng = np.random.default_rng(0)
    nq, nk, d = 40, 75, 16
    q, k, v = (rng.standard_normal((1, 1, n, d)).astype(np.float16) for n in (nq, nk, nk))
    s = q[0, 0].astype(np.float64) @ k[0, 0].astype(np.float64).T / np.sqrt(d)
    s[np.arange(nk)[None, :] > np.arange(nq)[:, None] + nk - nq] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ v[0, 0].astype(np.float64)
    ops = set()
    for options in ({}, {"merge_mask_bounds": False}, {"lean_masks": True}):
        kernel = flashc.compile(f"{kernels}/fa2.tile", HEAD_DIM=d, CAUSAL=True, **options)
        for target in ("interp", "emulate"):
            out = np.zeros((1, 1, nq, d), np.float16)
            stats = kernel(Q=q, K=k, V=v, O=out, sm_scale=1 / np.sqrt(d), target=target)
            assert np.abs(out[0, 0] - want).max() < 2e-2, (options, target)
        ops.add(stats["ops"])
    assert len(ops) == 3

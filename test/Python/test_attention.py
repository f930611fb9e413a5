"""flashc.attention: flash_attn_func's interface, [B, N, H, D] tensors,
against the float64 reference of the attention variants' tests."""
import numpy as np
import pytest

import flashc
from check_variant import reference
from conftest import relative_error

TOLERANCE = 3e-3


def inputs(b=1, h=4, h_kv=2, nq=37, nk=53, d=64, dtype=np.float16, seed=1, dv=None):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, nq, h, d)).astype(dtype)
    k = rng.standard_normal((b, nk, h_kv, d)).astype(dtype)
    v = rng.standard_normal((b, nk, h_kv, dv or d)).astype(dtype)
    return q, k, v


def expected(q, k, v, scale, causal=False, window=(-1, -1), softcap=0.0, slopes=None):
    """float64 (out [B, Nq, H, D], lse [B, H, Nq])."""
    x = {n: a.transpose(0, 2, 1, 3) for n, a in (("Q", q), ("K", k), ("V", v))}
    x["sm_scale"] = scale
    if slopes is not None:
        x["Slopes"] = slopes
    sizes = {"B": q.shape[0], "H": q.shape[2], "H_KV": k.shape[2], "Nq": q.shape[1], "Nk": k.shape[1]}
    opts = {"causal": causal, "left": window[0], "right": window[1], "softcap": softcap}
    out, lse = reference(x, opts, sizes)
    return out.transpose(0, 2, 1, 3), lse


@pytest.mark.parametrize("options", [
    {},
    {"causal": True},
    {"window_size": (8, 4)},
    {"softcap": 5.0, "causal": True},
])
def test_options(options):
    q, k, v = inputs()
    out = flashc.attention(q, k, v, **options)
    assert out.shape == q.shape and out.dtype == q.dtype
    want, _ = expected(q, k, v, 0.125, options.get("causal", False),
                       options.get("window_size", (-1, -1)), options.get("softcap", 0.0))
    assert relative_error(out, want) < TOLERANCE


def test_alibi_and_scale():
    q, k, v = inputs()
    slopes = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    out = flashc.attention(q, k, v, softmax_scale=0.2, alibi_slopes=slopes)
    want, _ = expected(q, k, v, 0.2, slopes=slopes)
    assert relative_error(out, want) < TOLERANCE


@pytest.mark.parametrize("batch_slopes", [False, True])
@pytest.mark.parametrize("options", [
    {"causal": True},
    {"window_size": (8, 4)},
])
def test_alibi_with_lse(batch_slopes, options):
    # flash_attn_func's alibi_slopes, [H] or [B, H], with return_lse (the
    # log-sum-exp of the biased scores) and a mask.
    q, k, v = inputs(b=2, nq=30, nk=41)
    rng = np.random.default_rng(11)
    shape = (2, 4) if batch_slopes else (4,)
    slopes = (rng.random(shape) * 0.5 + 0.05).astype(np.float32)
    out, lse = flashc.attention(q, k, v, alibi_slopes=slopes, return_lse=True, **options)
    want, want_lse = expected(q, k, v, 0.125, options.get("causal", False),
                              options.get("window_size", (-1, -1)), slopes=slopes)
    assert relative_error(out, want) < TOLERANCE
    assert np.allclose(lse, want_lse, rtol=1e-3, atol=1e-3)
    if batch_slopes:  # the second batch's slopes matter
        alone = flashc.attention(q, k, v, alibi_slopes=slopes[0])
        assert relative_error(alone[1], want[1]) > 10 * TOLERANCE


def test_alibi_slopes_rows_are_checked_by_the_kernel(kernels):
    # Slopes [SB, H] must have SB = 1 or B: the kernel's device_assert.
    alibi = flashc.compile(f"{kernels}/flash_attn_alibi_lse.tile")
    q, k, v = (x.transpose(0, 2, 1, 3).copy() for x in inputs(b=2, nq=8, nk=8))
    o = np.zeros_like(q)
    lse = np.zeros(q.shape[:3], np.float32)
    with pytest.raises(RuntimeError, match="Slopes must be"):
        alibi(Q=q, K=k, V=v, Slopes=np.ones((3, 4), np.float32), O=o, LSE=lse,
              sm_scale=0.125)


def test_lse_on_emulate():
    q, k, v = inputs(h=2, h_kv=1, nq=20, nk=30)
    out, lse = flashc.attention(q, k, v, causal=True, return_lse=True, target="emulate")
    want, want_lse = expected(q, k, v, 0.125, causal=True)
    assert lse.dtype == np.float32 and lse.shape == (1, 2, 20)
    assert relative_error(out, want) < TOLERANCE
    assert np.allclose(lse, want_lse, rtol=1e-3, atol=1e-3)


def test_v_head_dim_of_its_own():
    q, k, v = inputs(h=2, h_kv=1, nq=20, nk=30, d=64, dv=32)
    out, lse = flashc.attention(q, k, v, causal=True, return_lse=True)
    want, want_lse = expected(q, k, v, 0.125, causal=True)
    assert out.shape == (1, 20, 2, 32)
    assert relative_error(out, want) < TOLERANCE
    assert np.allclose(lse, want_lse, rtol=1e-3, atol=1e-3)



def test_arch_picks_fa2_tiles():
    """attention(arch=...) compiles for that arch: fa2's tiles on sm_80 and
    sm_90 where they are spill-free (docs/kernels.md, "fa2's tiles by
    target"), the old ones on sm_86 and sm_89."""
    from flashc.attention import kernel, mask_constants

    def tile(name, arch, d, causal):
        c = kernel(name, arch, mask_constants(d, causal, (-1, -1))).metadata["constants"]
        return c["BLOCK_M"], c["BLOCK_N"]

    assert tile("flash_attn", "sm_80", 64, True) == (128, 128)
    assert tile("flash_attn", "sm_80", 64, False) == (128, 128)
    assert tile("flash_attn", "sm_86", 64, True) == (128, 32)
    assert tile("flash_attn_lse", "sm_90", 128, False) == (128, 64)
    assert tile("flash_attn", "sm_89", 128, False) == (64, 64)
    q, k, v = inputs(h=2, h_kv=1, nq=40, nk=70, d=128)
    out = flashc.attention(q, k, v, target="emulate", arch="sm_90")
    assert relative_error(out, expected(q, k, v, 128 ** -0.5)[0]) < TOLERANCE

def test_bf16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    q, k, v = inputs(dtype=ml_dtypes.bfloat16)
    out = flashc.attention(q, k, v)
    assert out.dtype == ml_dtypes.bfloat16
    want, _ = expected(q, k, v, 0.125)
    assert relative_error(out.astype(np.float32), want) < 2e-2


def test_type_constant_follows_dtype():
    # One kernel file serves both: T comes from the operands' dtype, the
    # compile (and its cache) is keyed on it, the entry keeps its name.
    from flashc.attention import kernel, mask_constants

    mask = mask_constants(64, False, (-1, -1))
    f16 = kernel("flash_attn", "sm_80", mask, "float16")
    bf16 = kernel("flash_attn", "sm_80", mask, "bfloat16")
    assert f16.metadata["constants"]["T"] == "f16"
    assert bf16.metadata["constants"]["T"] == "bf16"
    assert f16.metadata["entry"] == bf16.metadata["entry"] == "flash_attn"
    assert ".bf16" in bf16.ptx and ".bf16" not in f16.ptx
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        kernel("flash_attn", "sm_80", mask, "float32")


def test_what_has_no_kernel():
    q, k, v = inputs(b=2)
    with pytest.raises(ValueError, match=r"alibi_slopes must be \[H\] \(4,\) or \[B, H\] "
                                         r"\(2, 4\), not \(1, 4\)"):
        flashc.attention(q, k, v, alibi_slopes=np.ones((1, 4), np.float32))
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        flashc.attention(q.astype(np.float32), k, v)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    q, k, v = (torch.from_numpy(x) for x in inputs())
    with torch.no_grad():
        out = flashc.attention(q, k, v, causal=True)
    want, _ = expected(q.numpy(), k.numpy(), v.numpy(), 0.125, causal=True)
    assert isinstance(out, torch.Tensor) and relative_error(out.numpy(), want) < TOLERANCE


@pytest.mark.parametrize("d", [40, 59, 111])
def test_head_dims_padded(d):
    # flash_attn takes any head dim up to 256: q, k, v are padded to the
    # kernels' next multiple of 16, the scale stays 1 / sqrt(d) and the
    # output is cut back to d columns.
    q, k, v = inputs(h=2, h_kv=1, nq=20, nk=30, d=d)
    out, lse = flashc.attention(q, k, v, causal=True, return_lse=True)
    want, want_lse = expected(q, k, v, d ** -0.5, causal=True)
    assert out.shape == q.shape and out.dtype == q.dtype
    assert relative_error(out, want) < TOLERANCE
    assert np.allclose(lse, want_lse, rtol=1e-3, atol=1e-3)


def test_head_dim_beyond_256():
    q, k, v = inputs(h=2, h_kv=1, nq=4, nk=4, d=264)
    with pytest.raises(ValueError, match="head dim 264 is not supported"):
        flashc.attention(q, k, v)

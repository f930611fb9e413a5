"""Kernels called on NumPy arrays: interp and emulate against float64."""
import numpy as np
import pytest

import flashc
from conftest import ROOT, attention_inputs, relative_error
from kernel_specs import SPECS, attention_reference

FA2_TOLERANCE = SPECS["fa2"].tolerance[0]

RACY = """\
kernel racy(X: f32[N], Y: f32[N]) {
  grid(2);
  store(Y[0 : 64], load(X[0 : 64]));
}
"""


@pytest.fixture(scope="module")
def fa2():
    return flashc.compile(f"{ROOT}/kernels/fa2.tile", HEAD_DIM=64)


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_fa2_matches_float64(fa2, target):
    q, k, v, o = attention_inputs(nq=70, nk=90)
    fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125, target=target)
    expected = attention_reference(q, k, v, 0.125, False)
    assert not np.isnan(o).any()
    assert relative_error(o, expected) < FA2_TOLERANCE


def test_causal_fa2_on_emulate_matches_interp(kernels):
    causal = flashc.compile(f"{kernels}/fa2.tile", CAUSAL=True)
    q, k, v, o = attention_inputs(nq=40, nk=72, h=1)
    o_interp = o.copy()
    causal(Q=q, K=k, V=v, O=o_interp, sm_scale=0.125)
    causal(Q=q, K=k, V=v, O=o, sm_scale=0.125, target="emulate")
    expected = attention_reference(q, k, v, 0.125, True)
    assert relative_error(o_interp, expected) < FA2_TOLERANCE
    assert relative_error(o, expected) < FA2_TOLERANCE


def test_bf16_through_ml_dtypes(kernels):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k16 = flashc.compile(f"{kernels}/flash_attn_bf16.tile")
    q, k, v, o = attention_inputs(nq=33, nk=50, h=1, dtype=ml_dtypes.bfloat16)
    k16(Q=q, K=k, V=v, O=o, sm_scale=0.125)
    expected = attention_reference(q, k, v, 0.125, False)
    assert o.dtype == ml_dtypes.bfloat16
    assert relative_error(o.astype(np.float32), expected) < SPECS["fa2"].bf16_tolerance[0]


def test_inputs_are_left_alone(fa2):
    q, k, v, o = attention_inputs(nq=16, nk=16, h=1)
    q0 = q.copy()
    fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125)
    assert (q == q0).all()


def test_non_contiguous_arrays_are_bound_by_value(fa2):
    q, k, v, o = attention_inputs(nq=16, nk=24, h=1)
    k_strided = np.ascontiguousarray(k.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    fa2(Q=q, K=k_strided, V=v, O=o, sm_scale=0.125)
    assert relative_error(o, attention_reference(q, k, v, 0.125, False)) < FA2_TOLERANCE


def test_stats(fa2):
    q, k, v, o = attention_inputs(nq=70, nk=90, h=2)
    stats = fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125, target="emulate")
    assert stats["grid"] == (1, 2, 1)  # cdiv(70, 128), B * H
    assert stats["ctas"] == 2 and stats["threads_per_cta"] == 128
    assert stats["shared_bytes_per_cta"] == 81920  # 128 x 128: Q and 2 stages of K, V
    assert stats["mma"] > 0 and stats["ldmatrix"] > 0 and stats["cp_async"] > 0
    assert stats["global_bytes_written"] == o.nbytes
    assert fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125, target="interp") is None


def test_shape_symbols_must_agree(fa2):
    q, k, v, o = attention_inputs(nq=16, nk=16, h=1)
    with pytest.raises(flashc.RunError, match="dim 'Nk' is 16 in K but 8 in V"):
        fa2(Q=q, K=k, V=v[:, :, :8], O=o, sm_scale=0.125)


def test_argument_errors(fa2):
    q, k, v, o = attention_inputs(nq=16, nk=16, h=1)
    with pytest.raises(flashc.RunError, match="missing argument.*sm_scale"):
        fa2(Q=q, K=k, V=v, O=o)
    with pytest.raises(flashc.RunError, match="unknown argument 'P'"):
        fa2(Q=q, K=k, V=v, O=o, P=o, sm_scale=0.125)
    with pytest.raises(flashc.RunError, match="argument 'Q' is float32 but the kernel declares f16"):
        fa2(Q=q.astype(np.float32), K=k, V=v, O=o, sm_scale=0.125)
    with pytest.raises(flashc.RunError, match="dtype float64 cannot be passed"):
        fa2(Q=q.astype(np.float64), K=k, V=v, O=o, sm_scale=0.125)
    with pytest.raises(flashc.RunError, match="'sm_scale' is a scalar f32 parameter and needs a number, not 'an array'"):
        fa2(Q=q, K=k, V=v, O=o, sm_scale=np.float32([0.125]))
    with pytest.raises(TypeError, match="argument 'sm_scale' must be an array or a number"):
        fa2(Q=q, K=k, V=v, O=o, sm_scale="0.125")
    with pytest.raises(ValueError, match="unknown target 'gpu'"):
        fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125, target="gpu")


def test_sanitizer_error():
    racy = flashc.compile(RACY)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    racy(X=x, Y=y)  # the interpreter runs programs one after the other
    assert (y == x).all()
    with pytest.raises(flashc.SanitizerError, match="global-memory race") as error:
        racy(X=x, Y=np.zeros(64, np.float32), target="emulate")
    assert "<string>:3:" in str(error.value)
    # Without the race check the emulator runs it.
    racy(X=x, Y=y, target="emulate", check_races=False)


def test_runtime_error_is_not_a_sanitizer_error_on_interp(kernels):
    divzero = flashc.compile(f"{kernels}/../test/Emulator/Inputs/divzero.tile")
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(flashc.RunError, match="division by zero") as error:
        divzero(X=x, Y=x.copy(), d=0)
    assert not isinstance(error.value, flashc.SanitizerError)

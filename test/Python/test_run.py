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

DOUBLE = """\
kernel double(X: f16[N], Y: f16[N], s: f32) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  store(Y[i : i + 64], load(X[i : i + 64]) * cast(s, f16));
}
"""

TWO_OUTPUTS = """\
kernel two(X: f32[N], Y: f32[N], Z: f32[N]) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  let x = load(X[i : i + 64]);
  store(Y[i : i + 64], x + 1.0);
  store(Z[i : i + 64], x + 2.0);
}
"""


@pytest.fixture(scope="module")
def double():
    return flashc.compile(DOUBLE)


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
    k16 = flashc.compile(f"{kernels}/flash_attn.tile", T=ml_dtypes.bfloat16)
    assert k16.constants["T"] == "bf16" and k16.metadata["constants"]["T"] == "bf16"
    q, k, v, o = attention_inputs(nq=33, nk=50, h=1, dtype=ml_dtypes.bfloat16)
    k16(Q=q, K=k, V=v, O=o, sm_scale=0.125)
    expected = attention_reference(q, k, v, 0.125, False)
    assert o.dtype == ml_dtypes.bfloat16
    assert relative_error(o.astype(np.float32), expected) < SPECS["fa2"].bf16_tolerance[0]


F8_SCALE = """\
kernel f8_scale(X: f8e4m3[N], Y: f32[N], Z: f8e4m3[N], s: f32) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  let y = cast(load(X[i : i + 64]), f32) * s;
  store(Y[i : i + 64], y);
  store(Z[i : i + 64], cast(y, f8e4m3));
}
"""


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_f8e4m3_through_ml_dtypes(target):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    e4m3 = ml_dtypes.float8_e4m3fn
    x = np.arange(256, dtype=np.uint8).view(e4m3)  # every code, NaNs too
    y = np.zeros(256, np.float32)
    z = np.zeros(256, e4m3)
    flashc.compile(F8_SCALE)(X=x, Y=y, Z=z, s=3.0, target=target)
    want = x.astype(np.float32) * np.float32(3.0)
    assert np.array_equal(y, want, equal_nan=True)
    # Saturating: 3 * 448 is 448, where ml_dtypes' own cast gives NaN.
    want_z = np.clip(want, -448, 448).astype(e4m3)
    assert z.dtype == e4m3
    assert np.array_equal(z.view(np.uint8), want_z.view(np.uint8))


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


CHECKED = """\
kernel checked(X: i32[N], Y: i32[N], limit: i32) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  let x = load(X[i : i + 64]);
  device_assert(limit > 0, "limit must be positive");
  device_assert(x < limit, "X out of range");
  store(Y[i : i + 64], x);
}
"""


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_device_assert(target):
    checked = flashc.compile(CHECKED)
    x = np.arange(100, dtype=np.int32)
    y = np.zeros(100, np.int32)
    checked(X=x, Y=y, limit=100, target=target)
    assert (y == x).all()
    error_type = flashc.SanitizerError if target == "emulate" else flashc.RunError
    with pytest.raises(RuntimeError, match="device assertion failed: X out of range") as error:
        checked(X=x, Y=np.zeros(100, np.int32), limit=70, target=target)
    assert isinstance(error.value, error_type)
    assert "<string>:6:" in str(error.value)
    with pytest.raises(RuntimeError, match="limit must be positive") as error:
        checked(X=x, Y=np.zeros(100, np.int32), limit=0, target=target)
    assert "<string>:5:" in str(error.value)


@pytest.mark.parametrize("target", ["interp", "emulate"])
@pytest.mark.parametrize("x_order,y_order", [(">", ">"), (">", "<"), ("<", ">")])
def test_byte_orders(double, target, x_order, y_order):
    # The kernel reads and writes little-endian: big-endian arrays get the
    # values, in their own byte order, and an input keeps its bytes.
    x = np.arange(64).astype(x_order + "f2")
    y = np.zeros(64, y_order + "f2")
    x_bytes = x.tobytes()
    double(X=x, Y=y, s=2.0, target=target)
    assert y.dtype == np.dtype(y_order + "f2")
    assert (y == 2 * np.arange(64)).all()
    assert x.tobytes() == x_bytes


@pytest.mark.parametrize("keywords", [("X", "Y"), ("Y", "X")])
def test_one_array_as_input_and_output(double, keywords):
    # Whichever keyword comes first, the array gets what the kernel wrote.
    x = np.arange(64).astype(np.float16)
    double(**{keywords[0]: x, keywords[1]: x}, s=3.0)
    assert (x == 3 * np.arange(64)).all()


def test_strided_output(double):
    x = np.arange(64).astype(np.float16)
    base = np.full(128, -1, np.float16)
    double(X=x, Y=base[::2], s=2.0)
    assert (base[::2] == 2 * x).all() and (base[1::2] == -1).all()


def test_read_only_arrays(double):
    x = np.arange(64).astype(np.float16)
    x.flags.writeable = False
    y = np.zeros(64, np.float16)
    double(X=x, Y=y, s=2.0)  # an input may be read-only
    assert (y == 2 * x).all()
    y.flags.writeable = False
    with pytest.raises(flashc.RunError, match="writes argument 'Y', whose array is read-only"):
        double(X=x, Y=y, s=3.0)
    assert (y == 2 * x).all()


def test_written_arrays_that_share_memory():
    two = flashc.compile(TWO_OUTPUTS)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(flashc.RunError, match="writes arguments 'Y' and 'Z', whose arrays share memory"):
        two(X=x, Y=y, Z=y)
    assert (y == 0).all()
    z = np.zeros(64, np.float32)
    two(X=x, Y=y, Z=z)
    assert (y == x + 1).all() and (z == x + 2).all()


@pytest.mark.parametrize("scale", [10**400, -10**400, 1e39])
def test_a_scalar_beyond_its_type(double, scale):
    x = np.arange(64).astype(np.float16)
    y = np.zeros(64, np.float16)
    with pytest.raises(flashc.RunError, match="does not fit in f32 \\(it would round to infinity\\)"):
        double(X=x, Y=y, s=scale)
    assert (y == 0).all()


def test_persistent_launches_at_most_a_wave():
    # 2001 tiles, 108 SMs x 16 CTAs of 128 threads on sm_80: 1728 CTAs, of
    # which 273 run a second tile.
    k = flashc.compile(DOUBLE, persistent=True)
    assert k.options["persistent"]
    assert k.metadata["grid"] == ["min(cdiv(N, 64), 1728)", "1", "1"]
    assert k.metadata["persistent"] == "static"
    x = np.random.default_rng(0).random(64 * 2000 + 5).astype(np.float16)
    y = np.full_like(x, np.nan)
    k(X=x, Y=y, s=2.0, target="emulate")
    assert np.array_equal(y, x * np.float16(2))

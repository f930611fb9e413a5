"""flashc.flex.flex_attention_backward: the gradients through traced
score_mod and mask_mod against a float64 NumPy reference whose modifier
derivative is a central difference of the Python modifier itself (not the
traced one), on the interpreter and the emulator; the traced derivatives;
the modifiers whose derivative has no tile form; the backward kernels
assembled for sm_80 and sm_90a without spills."""
import os
import re

import numpy as np
import pytest

import flashc
from flashc import flex
from conftest import PTXAS, assert_assembles_without_spills, relative_error
from test_flex import reference

TOLERANCE = 5e-3
SMALL = {"BLOCK_M": 32, "BLOCK_N": 16}


def reference_grads(q, k, v, dout, score_mod=None, mask_mod=None, scale=None, chain=True):
    """float64 (dq, dk, dv): ds = p * (dp - delta) times d score_mod / d
    score (by central difference; 1 unless `chain`); dk, dv summed over each
    KV head's group."""
    q, k, v, dout = (x.astype(np.float64) for x in (q, k, v, dout))
    groups = q.shape[1] // k.shape[1]
    ke, ve = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    x = np.einsum("bhqd,bhkd->bhqk", q, ke) * scale
    B, H, Nq, Nk = x.shape
    index = (np.arange(B).reshape(B, 1, 1, 1), np.arange(H).reshape(1, H, 1, 1),
             np.arange(Nq).reshape(1, 1, Nq, 1), np.arange(Nk).reshape(1, 1, 1, Nk))
    s, slope = x, np.ones_like(x)
    if score_mod is not None and chain:
        def modified(y):
            return np.broadcast_to(score_mod(y, *index), x.shape).astype(np.float64)
        step = 1e-5
        slope = (modified(x + step) - modified(x - step)) / (2 * step)
    if score_mod is not None:
        s = np.broadcast_to(score_mod(x, *index), x.shape).astype(np.float64)
    if mask_mod is not None:
        s = np.where(np.broadcast_to(mask_mod(*index), x.shape), s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    p = np.exp(s - top)
    total = p.sum(-1, keepdims=True)
    p = p / np.where(total > 0, total, 1.0)
    dp = np.einsum("bhqd,bhkd->bhqk", dout, ve)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True)) * slope
    dq = np.einsum("bhqk,bhkd->bhqd", ds, ke) * scale
    dk = np.einsum("bhqk,bhqd->bhkd", ds, q) * scale
    dv = np.einsum("bhqk,bhqd->bhkd", p, dout)
    fold = lambda g: g.reshape(B, k.shape[1], groups, *g.shape[2:]).sum(2)  # noqa: E731
    return dq, fold(dk), fold(dv)


def inputs(b=1, h=2, h_kv=2, nq=40, nk=56, d=32, seed=5):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(np.float16)
    k = rng.standard_normal((b, h_kv, nk, d)).astype(np.float16)
    v = rng.standard_normal((b, h_kv, nk, d)).astype(np.float16)
    dout = rng.standard_normal((b, h, nq, d)).astype(np.float16)
    return q, k, v, dout


def softcap(score, b, h, q_idx, kv_idx):
    return 2.0 * np.tanh(score / 2.0)


def alibi(score, b, h, q_idx, kv_idx):
    return score - flex.exp2(-(h + 1) * 0.5) * abs(q_idx - kv_idx)


BIAS = np.random.default_rng(11).standard_normal(56).astype(np.float32)
bias_table = flex.Captured(BIAS)


def key_bias(score, b, h, q_idx, kv_idx):
    return score * 1.5 + bias_table[kv_idx]


def relative_position(score, b, h, q_idx, kv_idx):
    return score + 0.05 * (kv_idx - q_idx)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


DOCS = np.repeat(np.arange(4), [9, 20, 15, 12]).astype(np.int32)
doc = flex.Captured(DOCS)


def document(b, h, q_idx, kv_idx):
    return doc[q_idx] == doc[kv_idx]


def scaled_sigmoid(score, b, h, q_idx, kv_idx):
    # Products, quotients, exp, sqrt and clamp of the score together.
    y = flex.clamp(score, -3.0, 3.0)
    return flex.sigmoid(y) * 4.0 + np.exp(y / 4.0) / flex.sqrt(2.0 + y * y)


T5 = flex.Captured(np.random.default_rng(12).standard_normal((2, 32)).astype(np.float32))


def t5_bias(score, b, h, q_idx, kv_idx):
    # docs/variants.md's t5_bias: a lookup by a computed bucket.
    rel = kv_idx - q_idx
    n = abs(rel)
    large = 8 + (np.log(flex.maximum(n, 1) / 8) / np.log(16) * 8).astype(np.int32)
    bucket = flex.where(rel > 0, 16, 0) + flex.where(n < 8, n, flex.minimum(large, 15))
    return score + T5[h, bucket]


CASES = {
    "softcap": (softcap, None, {}),
    "alibi_gqa": (alibi, None, {"h": 4, "h_kv": 2}),
    "key_bias": (key_bias, None, {}),
    "relative_position": (relative_position, None, {}),
    "softcap_causal": (softcap, causal, {}),
    "document": (None, document, {"nq": 56}),
    "scaled_sigmoid_causal": (scaled_sigmoid, causal, {}),
    "t5_bias": (t5_bias, None, {}),
}


def run_case(name, target):
    score_mod, mask_mod, shape = CASES[name]
    q, k, v, dout = inputs(**shape)
    out, lse = flashc.flex_attention(q, k, v, score_mod, mask_mod, return_lse=True,
                                     enable_gqa=True, target=target, kernel_options=SMALL)
    got = flashc.flex_attention_backward(dout, q, k, v, out, lse, score_mod, mask_mod,
                                       target=target, kernel_options=SMALL)
    want = reference_grads(q, k, v, dout, score_mod, mask_mod)
    for grad, g, w, x in zip(("dq", "dk", "dv"), got, want, (q, k, v)):
        assert g.shape == x.shape and g.dtype == x.dtype, grad
        assert relative_error(g, w) < TOLERANCE, (grad, relative_error(g, w))
    return got, want


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_on_the_interpreter(name):
    run_case(name, "interp")


@pytest.mark.parametrize("name", ["softcap_causal", "key_bias", "document"])
def test_gradients_on_the_emulator(name):
    run_case(name, "emulate")


def test_reference_sees_the_derivative():
    """The modifier's derivative matters: without it (as if score_mod added a
    constant) dq differs by far more than the tolerance."""
    q, k, v, dout = inputs()
    want = reference_grads(q, k, v, dout, softcap)
    unchained = reference_grads(q, k, v, dout, softcap, chain=False)
    assert relative_error(unchained[0], want[0]) > 10 * TOLERANCE


def test_traced_derivatives():
    source = flex.backward_kernel_source(softcap, causal)
    assert "(1.0 - v" in source and "-> (f32[N, M], f32[N, M])" in source
    assert "rows[None, :] >= cols[:, None]" in source
    # An additive bias has derivative 1; a bias table is read keys first.
    source = flex.backward_kernel_source(key_bias)
    assert "load(ModTensor[cols])[:, None]" in source and "ModTensor: f32[MT0]" in source


def test_modifiers_without_a_derivative():
    def relu(score, b, h, q_idx, kv_idx):
        return flex.where(score > 0, score, 0.0)

    def rounded(score, b, h, q_idx, kv_idx):
        return score.int().float()

    q, k, v, dout = inputs(nq=16, nk=16, d=16)
    out, lse = flashc.flex_attention(q, k, v, relu, return_lse=True)
    with pytest.raises(flex.TraceError, match="score_mod 'test_modifiers_without_a_derivative"
                                              "..locals..relu'.*has no derivative"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, relu)
    with pytest.raises(flex.TraceError, match="rounded.*cast of a value computed from the "
                                              "score"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, rounded)
    with pytest.raises(NotImplementedError, match="tile source has no backward"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, "fn score_mod() {}")


def test_autograd_with_torch():
    """flex_attention on torch tensors that require grad: FlexAttentionFunc
    (skipped without torch)."""
    torch = pytest.importorskip("torch")
    q, k, v, dout = inputs()
    tensors = [torch.from_numpy(x).requires_grad_() for x in (q, k, v)]
    out = flashc.flex_attention(*tensors, softcap, causal, kernel_options=SMALL)
    out.backward(torch.from_numpy(dout))
    want = reference_grads(q, k, v, dout, softcap, causal)
    for t, w in zip(tensors, want):
        assert relative_error(t.grad.numpy(), w) < TOLERANCE
    with pytest.raises(flex.TraceError, match="has no derivative"):
        flashc.flex_attention(*tensors, lambda s, b, h, i, j: flex.where(s > 0, s, 0.0))


@pytest.mark.skipif(not os.path.exists(PTXAS), reason=f"no {PTXAS}")
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", ["scaled_sigmoid_causal", "t5_bias"])
def test_backward_assembles_without_spills(name, arch, head_dim, tmp_path):
    """The heaviest derivative (with a mask) and a lookup with ModTensor: 0
    bytes spilled at the default blocks."""
    score_mod, mask_mod, _ = CASES[name]
    kernel = flashc.compile(flex.backward_kernel_source(score_mod, mask_mod), arch=arch,
                            import_dirs=(flex._attention.kernels_dir(),), T="f16",
                            HEAD_DIM=head_dim)
    assert_assembles_without_spills(kernel, arch, tmp_path)

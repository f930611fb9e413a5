"""flashc.flex_attention: FlexAttention's variants, traced from Python and
given as tile source, on the interpreter and the emulator against a float64
NumPy reference that evaluates the same Python modifiers; and the errors of
modifiers that have no tile form. test_variants.py runs docs/variants.md's
catalogue."""
import numpy as np
import pytest

import flashc
from flashc import flex
from conftest import relative_error

TOLERANCE = 3e-3
SMALL = {"BLOCK_M": 32, "BLOCK_N": 16}


def inputs(b=1, h=2, h_kv=2, nq=45, nk=70, d=32, dv=None, seed=3):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(np.float16)
    k = rng.standard_normal((b, h_kv, nk, d)).astype(np.float16)
    v = rng.standard_normal((b, h_kv, nk, dv or d)).astype(np.float16)
    return q, k, v


def reference(q, k, v, score_mod=None, mask_mod=None, scale=None):
    """float64 (out [B, H, Nq, DV], lse [B, H, Nq]): the modifiers evaluated
    on NumPy index arrays, as FlexAttention defines them; a row that sees no
    key gives 0 and lse -inf."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    groups = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    B, H, Nq, Nk = s.shape
    b = np.arange(B).reshape(B, 1, 1, 1)
    h = np.arange(H).reshape(1, H, 1, 1)
    qi = np.arange(Nq).reshape(1, 1, Nq, 1)
    ki = np.arange(Nk).reshape(1, 1, 1, Nk)
    if score_mod is not None:
        s = np.broadcast_to(score_mod(s, b, h, qi, ki), s.shape).astype(np.float64)
    if mask_mod is not None:
        s = np.where(np.broadcast_to(mask_mod(b, h, qi, ki), s.shape), s, -np.inf)
    top = s.max(-1, keepdims=True)
    seen = np.isfinite(top)
    p = np.where(seen, np.exp(s - np.where(seen, top, 0.0)), 0.0)
    total = p.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bhkd->bhqd", p, v) / np.where(total > 0, total, 1.0)
    lse = np.where(seen, top + np.log(np.where(total > 0, total, 1.0)), -np.inf)[..., 0]
    return out, lse


# FlexAttention's standard variants (docs/variants.md).
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


WINDOW = 20


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


PREFIX = 12


def prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (kv_idx < PREFIX)


def alibi(score, b, h, q_idx, kv_idx):
    slope = flex.exp2(-(h + 1) * 0.5)      # 2^(-(h+1)/2): one slope per head
    return score - slope * abs(q_idx - kv_idx)


def softcap(score, b, h, q_idx, kv_idx):
    return 20.0 * np.tanh(score / 20.0)


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + flex.where(q_idx >= kv_idx, 0.25, -0.25) * (b + 1)


CASES = {
    "causal": (None, causal),
    "sliding_window": (None, sliding_window),
    "prefix_lm": (None, prefix_lm),
    "alibi": (alibi, None),
    "softcap_causal": (softcap, causal),
    "relative_bias_window": (relative_bias, sliding_window),
}


@pytest.mark.parametrize("target", ["interp", "emulate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_traced_variants(case, target):
    score_mod, mask_mod = CASES[case]
    q, k, v = inputs(b=2 if case == "relative_bias_window" else 1)
    out = flashc.flex_attention(q, k, v, score_mod, mask_mod, target=target,
                                kernel_options=SMALL)
    assert out.shape == q.shape and out.dtype == q.dtype
    want, _ = reference(q, k, v, score_mod, mask_mod)
    assert relative_error(out, want) < TOLERANCE


def test_modifier_changes_the_result():
    """The reference is not blind to the modifiers: each case differs from
    plain attention by far more than the tolerance."""
    q, k, v = inputs()
    plain, _ = reference(q, k, v)
    for score_mod, mask_mod in CASES.values():
        want, _ = reference(q, k, v, score_mod, mask_mod)
        assert relative_error(plain, want) > 10 * TOLERANCE


# Masks whose hidden blocks are skipped however they are written
# (docs/variants.md, "Catalogue"): Python's `//` of the key index, a
# length read from a captured array, a union (sinks beside a window).
CHUNK = 8


def chunked_local(b, h, q_idx, kv_idx):
    return (kv_idx // CHUNK >= q_idx // CHUNK - 3) & (q_idx >= kv_idx)


def chunked_local_multiplied(b, h, q_idx, kv_idx):
    return (kv_idx >= (q_idx // CHUNK - 3) * CHUNK) & (q_idx >= kv_idx)


SINKS = 4


def sinks_window(b, h, q_idx, kv_idx):
    return ((kv_idx < SINKS) | (q_idx - kv_idx <= WINDOW)) & (q_idx >= kv_idx)


key_lengths = flex.Captured(np.array([150, 37], np.int32))


def key_length_causal(b, h, q_idx, kv_idx):
    return (kv_idx < key_lengths[b]) & (q_idx >= kv_idx)


def blocks_intersected(mask_mod, batches, heads, nq, nk, bm, bn):
    """(b, h, query block, key block) with some element the mask keeps,
    over each query block's bm rows."""
    count = 0
    for b in range(batches):
        for h in range(heads):
            for m0 in range(0, nq, bm):
                rows = np.arange(m0, m0 + bm)[:, None]
                for n0 in range(0, nk, bn):
                    cols = np.arange(n0, min(n0 + bn, nk))[None, :]
                    count += bool(np.any(mask_mod(b, h, rows, cols)))
    return count


@pytest.mark.parametrize("mask_mod", [chunked_local, chunked_local_multiplied, sinks_window,
                                      key_length_causal], ids=lambda f: f.__name__)
def test_block_skipping_whatever_the_spelling(mask_mod, monkeypatch):
    """The emulator's mma.sync is exactly the key blocks the mask intersects
    (counted here from the Python mask) times one block's, taken from a run
    without a mask; the output matches float64 on both targets."""
    batches, heads, nq, nk = 2, 1, 128, 150
    q, k, v = inputs(b=batches, h=heads, h_kv=heads, nq=nq, nk=nk)
    stats = {}
    run = flex._attention.run

    def counting_run(*args, **kwargs):
        stats["last"] = run(*args, **kwargs)
        return stats["last"]

    monkeypatch.setattr(flex._attention, "run", counting_run)
    flashc.flex_attention(q, k, v, target="emulate", kernel_options=SMALL)
    every_block = batches * heads * (nq // SMALL["BLOCK_M"]) * -(-nk // SMALL["BLOCK_N"])
    assert stats["last"]["mma"] % every_block == 0
    per_block = stats["last"]["mma"] // every_block
    want, _ = reference(q, k, v, None, mask_mod)
    out = flashc.flex_attention(q, k, v, mask_mod=mask_mod, target="emulate",
                                kernel_options=SMALL)
    seen = blocks_intersected(mask_mod, batches, heads, nq, nk, SMALL["BLOCK_M"],
                              SMALL["BLOCK_N"])
    assert stats["last"]["mma"] == seen * per_block
    assert seen < every_block * 2 // 3
    assert relative_error(out, want) < TOLERANCE
    out = flashc.flex_attention(q, k, v, mask_mod=mask_mod, target="interp",
                                kernel_options=SMALL)
    assert relative_error(out, want) < TOLERANCE


CAUSAL_SOURCE = """
fn mask_mod(b: int, h: int, q_idx: i32[M], kv_idx: i32[N]) -> bool[M, N] {
  return q_idx[:, None] >= kv_idx[None, :];
}
"""

ALIBI_SOURCE = """
fn score_mod(score: f32[M, N], b: int, h: int, q_idx: i32[M], kv_idx: i32[N]) -> f32[M, N] {
  let slope = exp2(-0.5 * cast(h + 1, f32));
  return score - slope * cast(abs(q_idx[:, None] - kv_idx[None, :]), f32);
}
"""


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_source_modifiers(target):
    q, k, v = inputs(h=4, h_kv=2, nq=50, nk=50)
    out, lse = flashc.flex_attention(q, k, v, ALIBI_SOURCE, CAUSAL_SOURCE, enable_gqa=True,
                                     return_lse=True, scale=0.3, target=target,
                                     kernel_options=SMALL)
    want, want_lse = reference(q, k, v, alibi, causal, scale=0.3)
    assert relative_error(out, want) < TOLERANCE
    np.testing.assert_allclose(lse, want_lse, rtol=2e-3, atol=2e-3)


def test_default_blocks_head_dim_and_lse_of_masked_rows():
    """Default blocks, head dims padded to 16 (48 -> 48, V 24 -> 32), and
    rows that see no key: output 0, lse -inf, as FlexAttention's."""
    q, k, v = inputs(nq=70, nk=80, d=48, dv=24)

    def late_keys(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx >= 5)

    out, lse = flashc.flex_attention(q, k, v, mask_mod=late_keys, return_lse=True)
    want, want_lse = reference(q, k, v, mask_mod=late_keys)
    assert out.shape == (1, 2, 70, 24)
    assert relative_error(out, want) < TOLERANCE
    assert np.all(out[:, :, :5] == 0) and np.all(lse[:, :, :5] == -np.inf)
    np.testing.assert_allclose(lse[:, :, 5:], want_lse[:, :, 5:], rtol=2e-3, atol=2e-3)


def test_no_modifiers_is_attention():
    q, k, v = inputs()
    out = flashc.flex_attention(q, k, v, kernel_options=SMALL)
    want, _ = reference(q, k, v)
    assert relative_error(out, want) < TOLERANCE


def test_compiled_once_per_source_and_constants():
    q, k, v = inputs(nq=16, nk=16)
    flex._kernel.cache_clear()
    for _ in range(2):
        flashc.flex_attention(q, k, v, mask_mod=causal, kernel_options=SMALL)
    assert flex._kernel.cache_info().misses == 1
    # Another function with the same body traces to the same source.
    flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: i >= j, kernel_options=SMALL)
    assert flex._kernel.cache_info().misses == 1
    # A captured number is part of the source: another value, another kernel.
    for window in (3, 5):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: i - j <= window,
                              kernel_options=SMALL)
    assert flex._kernel.cache_info().misses == 3


def test_traced_source():
    text = flex.trace_mask_mod(sliding_window)
    assert "rows[:, None] >= cols[None, :]" in text and "<= 20" in text and "&&" in text
    text = flex.trace_score_mod(softcap)
    assert "tanh(" in text and "score / 20.0" in text
    # Python floors integer division; the traced form does too.
    text = flex.trace_mask_mod(lambda b, h, i, j: (i - j) // 4 == -1)
    assert "where(" in text


def test_document_mask_and_table_from_captured_arrays():
    """Captured arrays read by index: a document id per token (FlexAttention's
    document masking, with the causal mask) and a bias per (batch, head)
    read by a score_mod: gathers of the kernel's ModTensor."""
    q, k, v = inputs(b=2, nq=70, nk=70)
    doc_ids = np.repeat(np.arange(5), [10, 25, 5, 21, 9])
    doc = flex.Captured(doc_ids)

    def document_causal(b, h, q_idx, kv_idx):
        return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)

    for target in ("interp", "emulate"):
        out = flashc.flex_attention(q, k, v, mask_mod=document_causal, target=target,
                                    kernel_options=SMALL)
        want, _ = reference(q, k, v, mask_mod=document_causal)
        assert relative_error(out, want) < TOLERANCE
    plain, _ = reference(q, k, v, mask_mod=causal)
    assert relative_error(plain, want) > 10 * TOLERANCE

    table = flex.Captured(np.array([[0.5, -1.0], [2.0, 0.25]]))

    def head_bias(score, b, h, q_idx, kv_idx):
        return score * table[b, h] - 0.1 * abs(q_idx - kv_idx)

    out = flashc.flex_attention(q, k, v, head_bias, causal, kernel_options=SMALL)
    want, _ = reference(q, k, v, head_bias, causal)
    assert relative_error(out, want) < TOLERANCE
    assert "load(ModTensor[b, h])" in flex.trace_score_mod(head_bias)


def test_floor_division_and_modulo_match_python():
    def blocks(b, h, q_idx, kv_idx):
        return ((kv_idx - q_idx) // 8 == 0) | ((q_idx - kv_idx) % 5 == 0)

    q, k, v = inputs()
    out = flashc.flex_attention(q, k, v, mask_mod=blocks, kernel_options=SMALL)
    want, _ = reference(q, k, v, mask_mod=blocks)
    assert relative_error(out, want) < TOLERANCE


def test_lookup_by_computed_index():
    """A captured array read at values computed from the indices (a chain of
    selects over its entries; 0 or false outside it), with floor and astype,
    on both targets."""
    ids = flex.Captured(np.repeat(np.arange(5), 8).astype(np.int32))      # 40 entries
    keep = flex.Captured(np.array([1, 1, 0, 1, 0, 0, 1, 1], bool))

    def halves(b, h, q_idx, kv_idx):
        return ids[q_idx // 2] == ids[kv_idx // 2]

    def floored(score, b, h, q_idx, kv_idx):
        bias = ids[(q_idx + kv_idx) % 40].astype(np.float32) * 0.2
        return score + flex.floor((q_idx - kv_idx) * 0.3) * 0.05 + bias

    def periodic(b, h, q_idx, kv_idx):
        return keep[(q_idx - kv_idx) % 8]

    q, k, v = inputs()
    for score_mod, mask_mod in ((floored, halves), (None, periodic)):
        for target in ("interp", "emulate"):
            out = flashc.flex_attention(q, k, v, score_mod, mask_mod, target=target,
                                        kernel_options=SMALL)
            want, _ = reference(q, k, v, score_mod, mask_mod)
            assert relative_error(out, want) < TOLERANCE


def test_untraceable_modifiers():
    q, k, v = inputs(nq=16, nk=16)
    doc = np.repeat(np.arange(4), 4)
    pair = flex.Captured(np.zeros((16, 16), np.int32))

    def document(b, h, q_idx, kv_idx):
        return doc[q_idx] == doc[kv_idx]

    with pytest.raises(flex.TraceError, match=r"mask_mod 'test_untraceable_modifiers."
                       r"<locals>.document' \(.*test_flex.py:\d+\): indexing a captured array"
                       r".*flashc.flex.Captured"):
        flashc.flex_attention(q, k, v, mask_mod=document)
    ids = flex.Captured(doc)
    with pytest.raises(flex.TraceError, match="by one value computed from"):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: pair[i // 2, j // 2] == 0)
    with pytest.raises(flex.TraceError, match="computed value and by q_idx or kv_idx"):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: pair[i // 2, j] == 0)
    with pytest.raises(flex.TraceError, match="both q_idx and kv_idx"):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: pair[i, j] == 0)
    with pytest.raises(flex.TraceError, match="indexed by 1 entries"):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: pair[i] == 0)
    other = flex.Captured(doc.copy())
    with pytest.raises(flex.TraceError, match="two captured tensors"):
        flashc.flex_attention(q, k, v, lambda s, b, h, i, j: s + other[j],
                              lambda b, h, i, j: ids[i] == ids[j])

    def branchy(score, b, h, q_idx, kv_idx):
        return score if q_idx > kv_idx else -score

    with pytest.raises(flex.TraceError, match="score_mod .*branchy.*no Python truth value"):
        flashc.flex_attention(q, k, v, branchy)
    with pytest.raises(flex.TraceError, match="captured ndarray of shape"):
        flashc.flex_attention(q, k, v, lambda s, b, h, i, j: s + np.ones(16))
    with pytest.raises(flex.TraceError, match="returns a mask, not a score"):
        flashc.flex_attention(q, k, v, lambda s, b, h, i, j: i >= j)
    with pytest.raises(flex.TraceError, match="not a mask"):
        flashc.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: i - j)
    with pytest.raises(flex.TraceError, match="numpy.sin cannot be traced"):
        flashc.flex_attention(q, k, v, lambda s, b, h, i, j: np.sin(s))
    with pytest.raises(ValueError, match="must define 'fn mask_mod"):
        flashc.flex_attention(q, k, v, mask_mod="fn other(b, h, r, c) { return true; }")
    with pytest.raises(flashc.CompileError, match="undefined_thing"):
        flashc.flex_attention(q, k, v, mask_mod="fn mask_mod(b, h, r, c) "
                              "{ return undefined_thing; }")


def test_shapes_and_gqa_are_checked():
    q, k, v = inputs(h=4, h_kv=2)
    with pytest.raises(ValueError, match="enable_gqa"):
        flashc.flex_attention(q, k, v)
    with pytest.raises(ValueError, match="do not agree"):
        flashc.flex_attention(q, k[:, :, :10], v)


def test_bf16_and_another_captured_array_reuses_the_kernel():
    """bf16 operands (T = bf16); a second array of the same rank and dtype
    runs on the same kernel with its own values."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    q, k, v = (x.astype(ml_dtypes.bfloat16) for x in inputs(nq=40, nk=40))
    flex._kernel.cache_clear()
    for runs in ([8, 12, 20], [30, 5, 5]):
        doc = flex.Captured(np.repeat(np.arange(3), runs))

        def document(b, h, q_idx, kv_idx):
            return doc[q_idx] == doc[kv_idx]

        out = flashc.flex_attention(q, k, v, mask_mod=document, kernel_options=SMALL)
        assert out.dtype == q.dtype
        want, _ = reference(q.astype(np.float32), k.astype(np.float32),
                            v.astype(np.float32), mask_mod=document)
        assert relative_error(out.astype(np.float32), want) < 1e-2
    assert flex._kernel.cache_info().misses == 1


def test_many_traced_operations():
    """NumPy's functions on traced values: each maps to its tile builtin."""
    def busy(score, b, h, q_idx, kv_idx):
        near = np.abs(q_idx - kv_idx) * 1.0
        bounded = np.clip(score, -1.0, 2.0) + np.maximum(score, 0.0) * 0.5
        smooth = flex.sigmoid(score) + np.sqrt(np.exp(score / 4.0)) - np.log(1.0 + near)
        return np.where(q_idx > kv_idx, bounded, smooth) - 0.01 * near ** 2

    q, k, v = inputs()
    for target in ("interp", "emulate"):
        out = flashc.flex_attention(q, k, v, busy, lambda b, h, i, j: ~(i < j) | (j == 0),
                                    target=target, kernel_options=SMALL)
        want, _ = reference(q, k, v, busy, lambda b, h, i, j: ~(i < j) | (j == 0))
        assert relative_error(out, want) < TOLERANCE

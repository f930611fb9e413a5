"""flashc.flex_attention_backward with a BlockMask: the transposed tables
(per key block, the query blocks of each class) against the BlockMask's
dense classes; dq, dk and dv through a mask built by create_block_mask
(causal, sliding window and documents from a captured array, with a
score_mod and GQA) and through random block-sparse tables of unequal block
sizes, against the float64 reference on the interpreter and the emulator;
the emulator's MMA count of the dK/dV kernel against the blocks the tables
list; autograd through FlexAttentionFunc; the errors that stay; the
kernel assembled for sm_80 and sm_90a without spills."""
import os

import numpy as np
import pytest

import flashc
from flashc import flex
from flashc.block_mask import BlockMask
from conftest import PTXAS, assert_assembles_without_spills, relative_error
from test_flex_backward import (TOLERANCE, inputs, reference_grads, scaled_sigmoid, softcap,
                                t5_bias)
from test_flex_block_mask import tables_of

DOCS = np.repeat(np.arange(4), [21, 70, 40, 29]).astype(np.int32)
doc = flex.Captured(DOCS)


def document_window(b, h, q_idx, kv_idx):
    # Causal within each document, at most 64 keys back.
    return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx) & (q_idx - kv_idx < 64)


def stripes(b, h, q_idx, kv_idx):
    return (q_idx + kv_idx + h) % 3 != 0


def check_grads(got, want, tensors):
    for grad, g, w, x in zip(("dq", "dk", "dv"), got, want, tensors):
        assert g.shape == x.shape and g.dtype == x.dtype, grad
        assert np.isfinite(np.asarray(g, np.float64)).all(), grad
        assert relative_error(g, w) < TOLERANCE, (grad, relative_error(g, w))


def test_transposed_tables():
    # Per (batch, head, key block): the query blocks of class 1 and of class
    # 2, in increasing order, whatever the kv tables hold past their counts.
    rng = np.random.default_rng(3)
    classes = rng.integers(0, 3, (2, 3, 5, 4)).astype(np.int32)
    num, idx, full_num, full_idx = tables_of(classes)
    idx = np.where(np.arange(4) < num[..., None], idx, 3)
    block_mask = BlockMask.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=16)
    assert block_mask.q_num_blocks.shape == (2, 3, 4)
    assert block_mask.q_indices.shape == (2, 3, 4, 5)
    transposed = np.swapaxes(classes, 2, 3)
    want = tables_of(transposed)
    for got, w in zip((block_mask.q_num_blocks, block_mask.q_indices,
                       block_mask.full_q_num_blocks, block_mask.full_q_indices), want):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, w)
    # The tables create_block_mask builds transpose the same way.
    built = flashc.create_block_mask(document_window, 1, 1, 160, 160, BLOCK_SIZE=16)
    dense = np.swapaxes(built.to_dense(), 2, 3)
    for got, w in zip((built.q_num_blocks, built.q_indices, built.full_q_num_blocks,
                       built.full_q_indices), tables_of(dense)):
        np.testing.assert_array_equal(got, w)


def document_case(target):
    q, k, v, dout = inputs(h=4, h_kv=2, nq=160, nk=160, d=32)
    block_mask = flashc.create_block_mask(document_window, None, None, 160, 160,
                                          BLOCK_SIZE=16)
    dense = block_mask.to_dense()
    assert (dense == 0).any() and (dense == 1).any() and (dense == 2).any()
    out, lse = flashc.flex_attention(q, k, v, softcap, block_mask=block_mask,
                                     return_lse=True, enable_gqa=True, target=target)
    got = flashc.flex_attention_backward(dout, q, k, v, out, lse, softcap,
                                         block_mask=block_mask, target=target)
    check_grads(got, reference_grads(q, k, v, dout, softcap, document_window), (q, k, v))


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_document_window_gradients(target):
    document_case(target)


def random_sparse_mask(heads, nq, nk, q_block, kv_block, seed=7):
    """Random classes per (head, query block, key block) as from_kv_blocks
    tables with stripes as the mask, and the per-key mask they stand for."""
    rng = np.random.default_rng(seed)
    qb, kb = -(-nq // q_block), -(-nk // kv_block)
    classes = rng.integers(0, 3, (1, heads, qb, kb)).astype(np.int32)
    classes[0, 0, 0] = 0        # a query block that sees nothing
    num, idx, full_num, full_idx = tables_of(classes)
    idx = np.where(np.arange(kb) < num[..., None], idx, kb - 1)
    block_mask = BlockMask.from_kv_blocks(num, idx, full_num, full_idx,
                                          BLOCK_SIZE=(q_block, kv_block), mask_mod=stripes,
                                          seq_lengths=(nq, nk))
    per_key = np.repeat(np.repeat(classes, q_block, 2), kv_block, 3)[:, :, :nq, :nk]

    def visible(b, h, qi, ki):
        return (per_key == 2) | ((per_key == 1) & ((qi + ki + h) % 3 != 0))

    return block_mask, visible


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_random_block_sparse_gradients(target):
    # Query blocks of 128 over kernel blocks of 32 (four steps per table
    # entry; in the last query block three of them wholly past Nq), key
    # blocks of 32 (BLOCK_N re-tiled to 32); tails on both sides, rows that
    # see no key.
    heads, nq, nk = 2, 150, 140
    block_mask, visible = random_sparse_mask(heads, nq, nk, 128, 32)
    q, k, v, dout = inputs(h=heads, h_kv=heads, nq=nq, nk=nk, d=32)
    out, lse = flashc.flex_attention(q, k, v, block_mask=block_mask, return_lse=True,
                                     target=target)
    assert np.isneginf(lse[0, 0, :128]).all()
    got = flashc.flex_attention_backward(dout, q, k, v, out, lse, block_mask=block_mask,
                                         target=target)
    want = reference_grads(q, k, v, dout, mask_mod=visible)
    check_grads(got, want, (q, k, v))
    if target != "interp":
        return
    # Without the tables' mask_mod the partial blocks are whole: other
    # gradients (the mask is evaluated there).
    bare = BlockMask.from_kv_blocks(block_mask.kv_num_blocks, block_mask.kv_indices,
                                    block_mask.full_kv_num_blocks, block_mask.full_kv_indices,
                                    BLOCK_SIZE=(128, 32), seq_lengths=(nq, nk))
    out, lse = flashc.flex_attention(q, k, v, block_mask=bare, return_lse=True)
    other = flashc.flex_attention_backward(dout, q, k, v, out, lse, block_mask=bare)
    assert relative_error(other[1], want[1]) > 10 * TOLERANCE


def backward_mma(kernel, q, k, v, dout, tables=None):
    """The emulator's mma.sync count of one run of a dK/dV kernel."""
    args = {"Q": q, "K": k, "V": v, "DO": dout,
            "LSE": np.zeros(q.shape[:3], np.float32), "Delta": np.zeros(q.shape[:3], np.float32),
            "DQaccum": np.zeros(q.shape, np.float32), "DK": np.zeros_like(k),
            "DV": np.zeros_like(v)}
    if tables is not None:
        args.update(QNum=tables.q_num_blocks, QIdx=tables.q_indices,
                    FullQNum=tables.full_q_num_blocks, FullQIdx=tables.full_q_indices)
    return kernel(target="emulate", sm_scale=0.125, **args)["mma"]


def test_mma_count_follows_the_tables():
    # The dK/dV kernel multiplies only the (query block, key block) pairs
    # the tables list: per visited pair of BLOCK_M x BLOCK_N, s^T = k q^T,
    # dp^T = v dO^T, dq += ds^T^T k, dk += ds^T q and dv += p^T dO in
    # m16n8k16 atoms. A BlockMask of full blocks only costs what the
    # analysed backward without a mask does.
    heads, n, d = 2, 128, 64
    block_m, block_n = 32, 64
    q, k, v, dout = inputs(h=heads, h_kv=heads, nq=n, nk=n, d=d)
    dirs = (flex._attention.kernels_dir(),)
    constants = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    blocks = flashc.compile(flex.backward_kernel_source(mask_mod=stripes, block_mask=True),
                            import_dirs=dirs, Q_BLOCK=64, KV_BLOCK=64, **constants)
    block_mask, _ = random_sparse_mask(heads, n, n, 64, 64, seed=11)
    visited = int((block_mask.q_num_blocks + block_mask.full_q_num_blocks).sum())
    assert 0 < visited < heads * 2 * 2
    per_pair = (block_n // 16) * (block_m // 8) * (d // 16) * 2 \
        + (block_m // 16) * (d // 8) * (block_n // 16) * 3
    steps = visited * (64 // block_m)
    assert backward_mma(blocks, q, k, v, dout, block_mask) == steps * per_pair
    every = flashc.create_block_mask(lambda b, h, qi, ki: qi >= 0, 1, 1, n, n, BLOCK_SIZE=64)
    assert (every.to_dense() == 2).all()
    dense = flashc.compile(flex.backward_kernel_source(), import_dirs=dirs, **constants)
    assert backward_mma(blocks, q, k, v, dout, every) == backward_mma(dense, q, k, v, dout) \
        == heads * (n // block_m) * (n // block_n) * per_pair


def test_autograd_with_torch():
    torch = pytest.importorskip("torch")
    q, k, v, dout = inputs(h=4, h_kv=2, nq=160, nk=160, d=32)
    block_mask = flashc.create_block_mask(document_window, None, None, 160, 160,
                                          BLOCK_SIZE=16)
    tensors = [torch.from_numpy(x).requires_grad_() for x in (q, k, v)]
    out = flashc.flex_attention(*tensors, softcap, block_mask=block_mask, enable_gqa=True)
    out.backward(torch.from_numpy(dout))
    want = reference_grads(q, k, v, dout, softcap, document_window)
    check_grads([t.grad.numpy() for t in tensors], want, (q, k, v))
    # A learnable bias still has no gradient.
    bias = torch.zeros(160, requires_grad=True)
    table = flex.Captured(bias)

    def key_bias(score, b, h, q_idx, kv_idx):
        return score + table[kv_idx]

    with pytest.raises(NotImplementedError, match="no gradient for a captured tensor"):
        flashc.flex_attention(*tensors, key_bias, block_mask=block_mask, enable_gqa=True)


def test_errors():
    q, k, v, dout = inputs(nq=160, nk=160, d=32)
    block_mask = flashc.create_block_mask(document_window, 1, 1, 160, 160, BLOCK_SIZE=32)
    out, lse = flashc.flex_attention(q, k, v, block_mask=block_mask, return_lse=True)
    # Kernel blocks that do not tile the BlockMask's are refused, as the
    # forward refuses them.
    with pytest.raises(flashc.CompileError, match="multiples of BLOCK_M and BLOCK_N"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, block_mask=block_mask,
                                       kernel_options={"BLOCK_M": 64})
    with pytest.raises(ValueError, match="do not cover"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse,
                                       block_mask=flashc.create_block_mask(
                                           document_window, 1, 1, 64, 160, BLOCK_SIZE=32))
    source = flashc.create_block_mask("""
fn mask_mod(b: int, h: int, rows: i32[M], cols: i32[N]) -> bool[M, N] {
  return rows[:, None] >= cols[None, :];
}
""", 1, 1, 160, 160, BLOCK_SIZE=32)
    with pytest.raises(NotImplementedError, match="tile source has no backward"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, block_mask=source)
    with pytest.raises(TypeError, match="block_mask must be a BlockMask"):
        flashc.flex_attention_backward(dout, q, k, v, out, lse, block_mask=object())
    # A block listed twice in a row would be visited twice.
    with pytest.raises(ValueError, match="more than once"):
        BlockMask.from_kv_blocks(np.full((1, 1, 1), 1), np.zeros((1, 1, 1, 2), np.int32),
                                 np.full((1, 1, 1), 1), np.zeros((1, 1, 1, 2), np.int32))


@pytest.mark.skipif(not os.path.exists(PTXAS), reason=f"no {PTXAS}")
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", ["scaled_sigmoid_document", "t5_bias"])
def test_backward_assembles_without_spills(name, arch, head_dim, tmp_path):
    """The heaviest derivative beside a mask that reads a captured array,
    and a lookup with ModTensor: 0 bytes spilled at the defaults over
    BlockMask blocks of 128."""
    score_mod, mask_mod = {"scaled_sigmoid_document": (scaled_sigmoid, document_window),
                           "t5_bias": (t5_bias, None)}[name]
    kernel = flashc.compile(flex.backward_kernel_source(score_mod, mask_mod, block_mask=True),
                            arch=arch, import_dirs=(flex._attention.kernels_dir(),), T="f16",
                            HEAD_DIM=head_dim)
    assert_assembles_without_spills(kernel, arch, tmp_path)

"""flashc.create_block_mask, BlockMask and flex_attention(block_mask=):
the tables the tile kernels build against a NumPy enumeration of the mask
per block, and attention over them (document masking of packed sequences,
a random block-sparse mask, causal) on the interpreter and the emulator
against a float64 reference; the emulator's MMA count against the count the
tables give (only the listed blocks are multiplied)."""
import numpy as np
import pytest

import flashc
from flashc import flex
from flashc.block_mask import BlockMask
from conftest import relative_error
from test_flex import causal, inputs, reference

TOLERANCE = 3e-3


def enumerate_classes(mask_mod, B, H, q_len, kv_len, q_block, kv_block):
    """[B, H, Q_BLOCKS, KV_BLOCKS]: 0 where no (query, key) of the block is
    visible, 2 where all are, else 1, from the mask on NumPy index arrays."""
    b = np.arange(B).reshape(B, 1, 1, 1)
    h = np.arange(H).reshape(1, H, 1, 1)
    qi = np.arange(q_len).reshape(1, 1, q_len, 1)
    ki = np.arange(kv_len).reshape(1, 1, 1, kv_len)
    dense = np.broadcast_to(mask_mod(b, h, qi, ki), (B, H, q_len, kv_len))
    qb, kb = -(-q_len // q_block), -(-kv_len // kv_block)
    classes = np.zeros((B, H, qb, kb), np.int32)
    for i in range(qb):
        for j in range(kb):
            block = dense[:, :, i * q_block:(i + 1) * q_block, j * kv_block:(j + 1) * kv_block]
            seen = block.any(axis=(2, 3))
            classes[:, :, i, j] = np.where(seen, np.where(block.all(axis=(2, 3)), 2, 1), 0)
    return classes


def tables_of(classes):
    """FlexAttention's tables of block classes: each row's blocks of class 1
    and 2, in increasing order (entries past the counts are 0)."""
    out = []
    for value in (1, 2):
        chosen = classes == value
        num = chosen.sum(-1).astype(np.int32)
        idx = np.zeros(classes.shape, np.int32)
        for where in np.ndindex(*num.shape):
            listed = np.flatnonzero(chosen[where])
            idx[where][:len(listed)] = listed
        out += [num, idx]
    return out


def check_tables(block_mask, expected):
    num, idx, full_num, full_idx = tables_of(expected)
    np.testing.assert_array_equal(block_mask.kv_num_blocks, num)
    np.testing.assert_array_equal(block_mask.full_kv_num_blocks, full_num)
    listed = np.arange(expected.shape[-1]) < num[..., None]
    np.testing.assert_array_equal(np.where(listed, block_mask.kv_indices, 0), idx)
    listed = np.arange(expected.shape[-1]) < full_num[..., None]
    np.testing.assert_array_equal(np.where(listed, block_mask.full_kv_indices, 0), full_idx)
    np.testing.assert_array_equal(block_mask.to_dense(), expected)


def packed_documents(lengths, batches=1, seed=0):
    """A document id per token [batches, sum(lengths)]: each batch the
    lengths in its own order."""
    rng = np.random.default_rng(seed)
    rows = [np.repeat(np.arange(len(lengths)), rng.permutation(lengths))
            for _ in range(batches)]
    return np.stack(rows).astype(np.int32)


def check_output_and_lse(q, k, v, block_mask, reference_mask, target):
    """flex_attention through block_mask against the float64 reference of
    reference_mask, the per-key mask the tables stand for."""
    out, lse = flashc.flex_attention(q, k, v, block_mask=block_mask, return_lse=True,
                                     target=target)
    ref, ref_lse = reference(q, k, v, mask_mod=reference_mask)
    assert relative_error(out, ref) < TOLERANCE
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-4, atol=1e-4)


def expected_mma(block_mask, programs_per_row, batches, heads, block_m, block_n, head_dim,
                 head_dim_v):
    """mma.sync of attention over the tables: per visited key block of
    BLOCK_N keys, S = Q K^T (m16n8k16 atoms: BLOCK_M/16 x BLOCK_N/8 x D/16)
    and O += P V (BLOCK_M/16 x DV/8 x BLOCK_N/16), for every program of
    each table row (the table's batch and head broadcast)."""
    q_block, kv_block = block_mask.BLOCK_SIZE
    per_step = (block_m // 16) * (block_n // 8) * (head_dim // 16) \
        + (block_m // 16) * (head_dim_v // 8) * (block_n // 16)
    visited = block_mask.kv_num_blocks + block_mask.full_kv_num_blocks
    visited = np.broadcast_to(visited, (batches, heads) + visited.shape[2:])
    steps = (visited * np.asarray(programs_per_row)).sum() * (kv_block // block_n)
    return int(steps) * per_step


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_document_mask_tables_and_attention(target):
    # Packed sequences of several lengths, causal within each document; the
    # documents differ per batch (the mask depends on b).
    batches, heads, n = 2, 2, 150
    ids = packed_documents([40, 7, 64, 39], batches)
    doc = flex.Captured(ids)

    def document(b, h, q_idx, kv_idx):
        return (doc[b, q_idx] == doc[b, kv_idx]) & (q_idx >= kv_idx)

    def reference_mask(b, h, q_idx, kv_idx):
        return (ids[b, q_idx] == ids[b, kv_idx]) & (q_idx >= kv_idx)

    block_mask = flashc.create_block_mask(document, batches, None, n, n, BLOCK_SIZE=32,
                                          target=target)
    expected = enumerate_classes(reference_mask, batches, 1, n, n, 32, 32)
    assert (expected == 0).any() and (expected == 1).any() and (expected == 2).any()
    check_tables(block_mask, expected)
    q, k, v = inputs(b=batches, h=heads, nq=n, nk=n, d=32)
    check_output_and_lse(q, k, v, block_mask, reference_mask, target)


def test_document_mask_of_one_sequence_serves_every_batch_and_head():
    # One packed sequence's table (B = H = 1) broadcast over 2 x 3 heads,
    # with GQA and a score_mod: the mask_mod comes from the BlockMask.
    n = 96
    ids = packed_documents([30, 50, 16])[0]
    doc = flex.Captured(ids)

    def document(b, h, q_idx, kv_idx):
        return doc[q_idx] == doc[kv_idx]

    def bias(score, b, h, q_idx, kv_idx):
        return score + 0.1 * (h + 1)

    block_mask = flashc.create_block_mask(document, None, None, n, n, BLOCK_SIZE=16)
    assert block_mask.shape == (1, 1, n, n)
    q, k, v = inputs(b=2, h=3, h_kv=1, nq=n, nk=n, d=32)
    out = flashc.flex_attention(q, k, v, score_mod=bias, block_mask=block_mask,
                                enable_gqa=True)
    ref, _ = reference(q, k, v, score_mod=lambda s, b, h, qi, ki: s + 0.1 * (h + 1),
                       mask_mod=lambda b, h, qi, ki: ids[qi] == ids[ki])
    assert relative_error(out, ref) < TOLERANCE


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_random_block_sparse_mask(target):
    # Random classes per (head, query block, key block): the partial blocks
    # evaluate mask_mod, the full ones do not (every key visible), the others
    # are skipped; tails on both sides (Nq, Nk not multiples of the blocks).
    heads, nq, nk, q_block, kv_block = 2, 100, 140, 32, 32
    rng = np.random.default_rng(7)
    qb, kb = -(-nq // q_block), -(-nk // kv_block)
    classes = rng.integers(0, 3, (1, heads, qb, kb)).astype(np.int32)
    num, idx, full_num, full_idx = tables_of(classes)
    # Unlisted entries hold block ids too (as torch's argsort leaves them).
    idx = np.where(np.arange(kb) < num[..., None], idx, kb - 1)

    def stripes(b, h, q_idx, kv_idx):
        return (q_idx + kv_idx + h) % 3 != 0

    block_mask = BlockMask.from_kv_blocks(num, idx, full_num, full_idx,
                                          BLOCK_SIZE=(q_block, kv_block), mask_mod=stripes,
                                          seq_lengths=(nq, nk))
    np.testing.assert_array_equal(block_mask.to_dense(), classes)

    per_key = np.repeat(np.repeat(classes, q_block, 2), kv_block, 3)[:, :, :nq, :nk]

    def visible(b, h, qi, ki):
        return (per_key == 2) | ((per_key == 1) & ((qi + ki + h) % 3 != 0))

    q, k, v = inputs(b=1, h=heads, nq=nq, nk=nk, d=32)
    check_output_and_lse(q, k, v, block_mask, visible, target)


def test_mma_count_follows_the_tables():
    # The emulator's mma.sync count is the tables' visited blocks times the
    # MMAs of one block: skipped blocks are neither loaded nor multiplied.
    heads, n, d = 2, 128, 64
    rng = np.random.default_rng(11)
    classes = rng.integers(0, 3, (1, heads, 2, 2)).astype(np.int32)
    classes[0, 0, 0] = 0        # a query block that sees nothing
    block_mask = BlockMask.from_kv_blocks(*tables_of(classes), BLOCK_SIZE=64,
                                          mask_mod=causal)
    q, k, v = inputs(b=1, h=heads, nq=n, nk=n, d=d)
    source = flex.kernel_source(mask_mod=causal, block_mask=True)
    kernel = flashc.compile(source, import_dirs=(flex._attention.kernels_dir(),),
                            HEAD_DIM=d, BLOCK_M=64, BLOCK_N=32, Q_BLOCK=64, KV_BLOCK=64)
    o = np.full(q.shape, np.nan, np.float16)
    stats = kernel(target="emulate", Q=q, K=k, V=v, O=o, KvNum=block_mask.kv_num_blocks,
                   KvIdx=block_mask.kv_indices, FullKvNum=block_mask.full_kv_num_blocks,
                   FullKvIdx=block_mask.full_kv_indices, sm_scale=0.125)
    visited = int((block_mask.kv_num_blocks + block_mask.full_kv_num_blocks).sum())
    assert 0 < visited < 2 * heads * 2
    assert stats["mma"] == expected_mma(block_mask, 1, 1, heads, 64, 32, d, d)


def test_causal_block_mask_matches_the_analysed_causal_mask():
    # create_block_mask of the causal mask lists the blocks on the diagonal
    # as partial and those below as full: the same blocks the compiler's
    # analysis of causal leaves, the same MMAs and the same result.
    n, d = 192, 64
    block_mask = flashc.create_block_mask(causal, 1, 1, n, n, BLOCK_SIZE=64)
    expected = np.tril(np.ones((3, 3), np.int32), -1) * 2 + np.eye(3, dtype=np.int32)
    np.testing.assert_array_equal(block_mask.to_dense()[0, 0], expected)
    q, k, v = inputs(b=1, h=2, nq=n, nk=n, d=d)
    counts = {}
    for name, source, extra in (
            ("blocks", flex.kernel_source(mask_mod=causal, block_mask=True),
             {"KvNum": block_mask.kv_num_blocks, "KvIdx": block_mask.kv_indices,
              "FullKvNum": block_mask.full_kv_num_blocks,
              "FullKvIdx": block_mask.full_kv_indices}),
            ("analysed", flex.kernel_source(mask_mod=causal), {})):
        constants = {"HEAD_DIM": d, "BLOCK_M": 64, "BLOCK_N": 64}
        if extra:
            constants.update(Q_BLOCK=64, KV_BLOCK=64)
        kernel = flashc.compile(source, import_dirs=(flex._attention.kernels_dir(),),
                                **constants)
        o = np.full(q.shape, np.nan, np.float16)
        stats = kernel(target="emulate", Q=q, K=k, V=v, O=o, sm_scale=0.125, **extra)
        counts[name] = (stats["mma"], o)
    assert counts["blocks"][0] == counts["analysed"][0] == \
        expected_mma(block_mask, 1, 1, 2, 64, 64, d, d)
    ref, _ = reference(q, k, v, mask_mod=causal, scale=0.125)
    for _, o in counts.values():
        assert relative_error(o, ref) < TOLERANCE
    out = flashc.flex_attention(q, k, v, block_mask=block_mask)
    assert relative_error(out, ref) < TOLERANCE
    # torch's positional order: the BlockMask fifth.
    np.testing.assert_array_equal(flashc.flex_attention(q, k, v, None, block_mask), out)


def test_tile_source_mask_and_default_blocks():
    # A mask given as tile source; the default BLOCK_SIZE 128 over kernel
    # blocks of 64 (two programs per table row, two steps per table block).
    source = """
fn mask_mod(b: int, h: int, rows: i32[M], cols: i32[N]) -> bool[M, N] {
  return rows[:, None] / 100 == cols[None, :] / 100;
}
"""
    n = 300
    block_mask = flashc.create_block_mask(source, 1, 1, n, n)
    assert block_mask.BLOCK_SIZE == (128, 128)
    expected = enumerate_classes(lambda b, h, qi, ki: qi // 100 == ki // 100, 1, 1, n, n,
                                 128, 128)
    check_tables(block_mask, expected)
    q, k, v = inputs(b=1, h=1, h_kv=1, nq=n, nk=n, d=32)
    out = flashc.flex_attention(q, k, v, block_mask=block_mask)
    ref, _ = reference(q, k, v, mask_mod=lambda b, h, qi, ki: qi // 100 == ki // 100)
    assert relative_error(out, ref) < TOLERANCE


def test_block_mask_is_checked():
    q, k, v = inputs(b=2, h=2, nq=64, nk=64, d=32)
    small = flashc.create_block_mask(causal, 1, 1, 32, 64, BLOCK_SIZE=16)
    with pytest.raises(ValueError, match="do not cover"):
        flashc.flex_attention(q, k, v, block_mask=small)
    three = flashc.create_block_mask(causal, 1, 3, 64, 64, BLOCK_SIZE=16)
    with pytest.raises(ValueError, match="1 or as many"):
        flashc.flex_attention(q, k, v, block_mask=three)
    with pytest.raises(ValueError, match="outside"):
        BlockMask.from_kv_blocks(np.ones((1, 1, 2), np.int32), np.full((1, 1, 2, 2), 5))
    with pytest.raises(ValueError, match="BLOCK_SIZE"):
        flashc.create_block_mask(causal, 1, 1, 64, 64, BLOCK_SIZE=0)
    with pytest.raises(flex.TraceError):
        flashc.create_block_mask(lambda b, h, qi, ki: qi * 2, 1, 1, 64, 64)


def test_sm90a_warpgroup_mmas_on_the_emulator():
    # sm_90a at head dim 64: both kernels' MMAs are warpgroup MMAs (wgmma).
    ids = packed_documents([100, 60, 96])[0]
    doc = flex.Captured(ids)

    def document(b, h, q_idx, kv_idx):
        return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)

    block_mask = flashc.create_block_mask(document, None, None, 256, 256, target="emulate",
                                          arch="sm_90a")
    check_tables(block_mask, enumerate_classes(
        lambda b, h, qi, ki: (ids[qi] == ids[ki]) & (qi >= ki), 1, 1, 256, 256, 128, 128))
    q, k, v = inputs(b=1, h=2, nq=256, nk=256, d=64)
    out = flashc.flex_attention(q, k, v, block_mask=block_mask, target="emulate", arch="sm_90a")
    ref, _ = reference(q, k, v, mask_mod=lambda b, h, qi, ki: (ids[qi] == ids[ki]) & (qi >= ki))
    assert relative_error(out, ref) < TOLERANCE

"""flashc.create_block_mask and BlockMask: FlexAttention's block-sparse
tables (torch.nn.attention.flex_attention.BlockMask), built by tile kernels
(kernels/lib/block_mask.tile) and read by flex_attention's block_mask=
(kernels/lib/attention.tile's attention_blocks). docs/python.md,
"create_block_mask and BlockMask".
"""
import math
import re

import numpy as np

from . import flex as _flex
from .kernel import DEFAULT_ARCH

_attention = _flex._attention


def _block_sizes(BLOCK_SIZE):
    """(Q block, KV block) of an int or a pair."""
    sizes = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                  for s in sizes):
        raise ValueError(f"BLOCK_SIZE must be a positive int or a pair of them, not "
                         f"{BLOCK_SIZE!r}")
    return sizes


def _table(array, ndim, what):
    array = np.asarray(array)
    if array.ndim != ndim or array.dtype.kind not in "iu":
        raise ValueError(f"{what} must be an int array of {ndim} dims [B, H, Q_BLOCKS"
                         f"{', KV_BLOCKS' if ndim == 4 else ''}], not {array.dtype} of shape "
                         f"{array.shape}")
    converted = np.ascontiguousarray(array, dtype=np.int32)
    if not np.array_equal(converted, array):
        raise OverflowError(f"{what} does not fit int32")
    return converted


def _transposed(num, idx):
    """(num_t [B, H, KV_BLOCKS], idx_t [B, H, KV_BLOCKS, Q_BLOCKS]) of a
    table pair: for each key block the query blocks whose rows list it, in
    increasing order; entries past the counts are 0. A row lists a block
    once (from_kv_blocks checks it)."""
    batches, heads, q_blocks, kv_blocks = idx.shape
    b, h, qb, j = np.nonzero(np.arange(kv_blocks) < num[..., None])
    kb = idx[b, h, qb, j]
    # Stable: the query blocks stay in increasing order within a key block.
    order = np.lexsort((qb, kb, h, b))
    b, h, qb, kb = b[order], h[order], qb[order], kb[order]
    num_t = np.zeros((batches, heads, kv_blocks), np.int32)
    np.add.at(num_t, (b, h, kb), 1)
    starts = np.cumsum(num_t.ravel()) - num_t.ravel()
    group = (b * heads + h) * kv_blocks + kb
    rank = np.arange(len(group)) - starts[group]
    idx_t = np.zeros((batches, heads, kv_blocks, q_blocks), np.int32)
    idx_t[b, h, kb, rank] = qb
    return num_t, idx_t


class BlockMask:
    """FlexAttention's BlockMask: for each (batch, head, query block) the key
    blocks its mask crosses (kv_num_blocks [B, H, Q_BLOCKS] of them, listed
    in kv_indices [B, H, Q_BLOCKS, KV_BLOCKS]: mask_mod is evaluated there)
    and the blocks every row sees whole (full_kv_num_blocks,
    full_kv_indices: no mask evaluation); the other blocks are skipped. B or
    H of 1 serves every batch or head. Blocks are BLOCK_SIZE = (Q block, KV
    block) tokens; seq_lengths = (Q_LEN, KV_LEN). NumPy int32 tables.
    The same pairs per key block (q_num_blocks [B, H, KV_BLOCKS],
    q_indices [B, H, KV_BLOCKS, Q_BLOCKS], full_q_num_blocks,
    full_q_indices; FlexAttention's transposed tables) serve the backward's
    dK/dV kernel, which holds a key block and walks its query blocks."""

    def __init__(self, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                 BLOCK_SIZE, mask_mod, seq_lengths):
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod
        self.seq_lengths = seq_lengths
        self.q_num_blocks, self.q_indices = _transposed(kv_num_blocks, kv_indices)
        self.full_q_num_blocks, self.full_q_indices = _transposed(full_kv_num_blocks,
                                                                  full_kv_indices)

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=128, mask_mod=None, seq_lengths=None):
        """A BlockMask of given tables (as torch's BlockMask.from_kv_blocks).
        Without full tables every listed block is evaluated with mask_mod;
        seq_lengths defaults to the blocks' extent."""
        sizes = _block_sizes(BLOCK_SIZE)
        num = _table(kv_num_blocks, 3, "kv_num_blocks")
        idx = _table(kv_indices, 4, "kv_indices")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise ValueError("full_kv_num_blocks and full_kv_indices go together")
        if full_kv_num_blocks is None:
            full_num = np.zeros_like(num)
            full_idx = np.zeros_like(idx)
        else:
            full_num = _table(full_kv_num_blocks, 3, "full_kv_num_blocks")
            full_idx = _table(full_kv_indices, 4, "full_kv_indices")
        for n, i, what in ((num, idx, "kv"), (full_num, full_idx, "full_kv")):
            if n.shape != i.shape[:3] or i.shape != idx.shape:
                raise ValueError(f"{what}_num_blocks {n.shape} and {what}_indices {i.shape} "
                                 f"do not agree with kv_indices {idx.shape}")
            if (n < 0).any() or (n > i.shape[3]).any():
                raise ValueError(f"{what}_num_blocks must be in 0 .. {i.shape[3]}")
            listed = np.arange(i.shape[3]) < n[..., None]
            if ((i < 0) | (i >= i.shape[3]))[listed].any():
                raise ValueError(f"{what}_indices lists a block outside 0 .. {i.shape[3] - 1}")
        listings = np.zeros(idx.shape, np.int32)
        for n, i in ((num, idx), (full_num, full_idx)):
            where = np.nonzero(np.arange(i.shape[3]) < n[..., None])
            np.add.at(listings, where[:3] + (i[where],), 1)
        if (listings > 1).any():
            b, h, qb, kb = np.argwhere(listings > 1)[0]
            raise ValueError(f"the tables list key block {kb} more than once for query "
                             f"block {qb} (batch {b}, head {h})")
        if seq_lengths is None:
            seq_lengths = (idx.shape[2] * sizes[0], idx.shape[3] * sizes[1])
        return cls(num, idx, full_num, full_idx, sizes, mask_mod, tuple(seq_lengths))

    @property
    def shape(self):
        """(B, H, Q_LEN, KV_LEN)."""
        return tuple(self.kv_num_blocks.shape[:2]) + tuple(self.seq_lengths)

    def to_dense(self):
        """[B, H, Q_BLOCKS, KV_BLOCKS] int32: 0 skipped, 1 partial, 2 full."""
        dense = np.zeros(self.kv_indices.shape, np.int32)
        for value, num, idx in ((1, self.kv_num_blocks, self.kv_indices),
                                (2, self.full_kv_num_blocks, self.full_kv_indices)):
            for where in np.ndindex(*num.shape):
                dense[where][idx[where][:num[where]]] = value
        return dense

    def sparsity(self):
        """Percent of the blocks (within seq_lengths) that are skipped."""
        q_blocks = math.ceil(self.seq_lengths[0] / self.BLOCK_SIZE[0])
        kv_blocks = math.ceil(self.seq_lengths[1] / self.BLOCK_SIZE[1])
        visited = (self.kv_num_blocks[:, :, :q_blocks].sum()
                   + self.full_kv_num_blocks[:, :, :q_blocks].sum())
        total = self.kv_num_blocks.shape[0] * self.kv_num_blocks.shape[1] * q_blocks * kv_blocks
        return 100.0 * (1.0 - visited / total)

    def __repr__(self):
        return (f"BlockMask(shape={self.shape}, BLOCK_SIZE={self.BLOCK_SIZE}, "
                f"sparsity={self.sparsity():.2f}%)")


def _classes_source(mask_mod):
    """(source, captured tensor or None) of the kernel that classifies the
    blocks of mask_mod (lib/block_mask.tile's block_class)."""
    if isinstance(mask_mod, str):
        if not re.search(r"\bfn\s+mask_mod\s*\(", mask_mod):
            raise ValueError("mask_mod as tile source must define 'fn mask_mod(...)'")
        function, name, tensor = mask_mod, "mask_mod", None
    elif callable(mask_mod):
        tracer, body = _flex._trace(mask_mod, "mask_mod")
        tensor = tracer.tensor
        name = "flex_mask_mod"
        function = _flex._function("mask_mod", name, tracer.lines, body, tensor is not None)
    else:
        raise TypeError(f"mask_mod must be a Python function or tile source, not "
                        f"{type(mask_mod).__name__}")
    params, keywords = "", ""
    if tensor is not None:
        dims = ", ".join(f"MT{i}" for i in range(len(tensor.shape)))
        params = f"ModTensor: {_flex._element(tensor)}[{dims}], "
        keywords = ", mod_tensor = true, ModTensor = ModTensor"
    source = f"""import "lib/block_mask.tile";

{function}
kernel flex_block_mask<Q_BLOCK: int = 128, KV_BLOCK: int = 128, ROWS: int = 32>(
    Class: i32[B, H, QB, KB], {params}Nq: i32, Nk: i32)
{{
  grid(KB, QB, B * H);
  let b = program_id(2) / H;
  let h = program_id(2) % H;
  let kb = program_id(0);
  let c = block_class(b, h, program_id(1), kb, Nq, Nk, Q_BLOCK, KV_BLOCK, ROWS,
                      {name}{keywords});
  store(Class[b, h, program_id(1), kb : kb + 1], c);
}}
"""
    return source, tensor


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128, *,
                      target=None, arch=DEFAULT_ARCH):
    """torch's create_block_mask: the BlockMask of mask_mod(b, h, q_idx,
    kv_idx) (a Python function, traced as flex_attention's, or tile source
    defining `fn mask_mod`) for B batches and H heads (None: 1, the mask
    serves them all) of Q_LEN queries and KV_LEN keys, in blocks of
    BLOCK_SIZE (an int or (Q block, KV block)). A tile kernel evaluates the
    mask per (query block, key block) and another compacts the classes into
    the tables, on `target` (interp, emulate or cuda; default interp).
    `device` is accepted for torch's signature and not used."""
    del device
    q_block, kv_block = _block_sizes(BLOCK_SIZE)
    batches = 1 if B is None else int(B)
    heads = 1 if H is None else int(H)
    if batches < 1 or heads < 1 or Q_LEN < 1 or KV_LEN < 1:
        raise ValueError(f"create_block_mask takes B, H, Q_LEN and KV_LEN >= 1, not "
                         f"{B}, {H}, {Q_LEN}, {KV_LEN}")
    q_blocks, kv_blocks = math.ceil(Q_LEN / q_block), math.ceil(KV_LEN / kv_block)
    source, tensor = _classes_source(mask_mod)
    target = target or "interp"
    classify = _flex._kernel(source, arch, (("KV_BLOCK", kv_block), ("Q_BLOCK", q_block),
                                             ("ROWS", math.gcd(32, q_block))))
    classes = np.zeros((batches, heads, q_blocks, kv_blocks), np.int32)
    args = {"Class": classes}
    if tensor is not None:
        args["ModTensor"] = _flex._tensor_argument(None, _host(tensor))
    classify(target=target, Nq=int(Q_LEN), Nk=int(KV_LEN), **args)
    tables = _attention._kernel("block_mask_tables", arch, ())
    num = np.zeros(classes.shape[:3], np.int32)
    idx = np.zeros(classes.shape, np.int32)
    full_num = np.zeros_like(num)
    full_idx = np.zeros_like(idx)
    tables(target=target, Class=classes, KvNum=num, KvIdx=idx, FullKvNum=full_num,
           FullKvIdx=full_idx)
    return BlockMask(num, idx, full_num, full_idx, (q_block, kv_block), mask_mod,
                     (int(Q_LEN), int(KV_LEN)))


def _host(tensor):
    """A captured tensor as a NumPy array (the tables are built on the host's
    arrays)."""
    if isinstance(tensor, np.ndarray):
        return tensor
    detach = getattr(tensor, "detach", None)
    if detach is not None:
        return detach().cpu().numpy()
    return np.asarray(tensor)

"""The forward kernel of Triton's fused-attention tutorial, for compiling only.

Written for this comparison after the structure of the tutorial
python/tutorials/06-fused-attention.py (Triton 3.x; not shipped in the
wheel): `_attn_fwd` loads the Q block once, runs `_attn_fwd_inner` over the
off-diagonal key blocks (STAGE 1) and, when causal, again over the diagonal
block with the mask (STAGE 2); each iteration is one tl.dot for S, the
row max with the scale folded in, exp2, the row sum, the alpha rescale of
acc and l, and one tl.dot for P.V. Tensor descriptors are made in the kernel
(the tutorial's `_maybe_make_tensor_desc` path when no host descriptor is
passed): Triton lowers them to TMA on sm_90 and to ordinary loads before it.
Forward only, fp16 in and out.
"""

import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr, offs_m, offs_n, N_CTX):
    if STAGE == 1:  # causal, the blocks left of the diagonal
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:  # causal, the diagonal block
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:  # not causal
        lo, hi = 0, N_CTX
    offset_kv = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offset_kv, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_new)
        row_sum = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offset_kv, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        l_i = l_i * alpha + row_sum
        m_i = m_new
        offset_kv += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(sm_scale, M, Z, H, Q, K, V, Out, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              STAGE: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    rows = Z * H * N_CTX
    desc_q = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    desc_k = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_v = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = tl.make_tensor_descriptor(Out, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2)
    q = desc_q.load([qo_offset_y, 0])
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m,
                                        qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE,
                                        offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m,
                                        qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 2,
                                        offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(tl.float16))

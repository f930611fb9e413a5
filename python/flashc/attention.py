"""flashc.attention: flash_attn_func's interface over the kernels of
kernels/ (docs/kernels.md), choosing the kernel and its constants from the
arguments.

The pieces the other entry points share (the kernel of a name and dtype,
its type constant T chosen from the operands' dtype,
NumPy and torch backends, running a kernel on either) live here too:
inference.py (varlen, KV cache), backward.py, autograd.py (torch).
"""
import functools
import math
import os
import sys

import numpy as np

from . import _device
from .kernel import DEFAULT_ARCH
from .kernel import compile as _compile

_PACKAGE_KERNELS = os.path.join(os.path.dirname(__file__), "kernels")


def kernels_dir():
    """The attention kernels: installed with the package (a link to the
    repository's kernels/ in the build tree)."""
    return _PACKAGE_KERNELS


@functools.lru_cache(maxsize=64)
def _kernel(name, arch, constants):
    return _compile(os.path.join(kernels_dir(), name + ".tile"), arch=arch,
                    **dict(constants))


def element_type(dtype_name):
    """The kernels' type constant T (f16 or bf16) for operands of a NumPy or
    torch dtype name."""
    if dtype_name == "bfloat16":
        return "bf16"
    if dtype_name == "float16":
        return "f16"
    raise TypeError(f"attention takes float16 or bfloat16 tensors, not {dtype_name}")


def _kernel_name(alibi, lse, batch_slopes=False):
    if alibi and (lse or batch_slopes):
        return "flash_attn_alibi_lse"
    return "flash_attn_alibi" if alibi else "flash_attn_lse" if lse else "flash_attn"


def check_slopes(alibi_slopes, batch, heads):
    """alibi_slopes is [H] or [B, H], as flash_attn takes it."""
    shape = tuple(alibi_slopes.shape)
    if shape not in ((heads,), (batch, heads)):
        raise ValueError(f"alibi_slopes must be [H] ({heads},) or [B, H] ({batch}, {heads}), "
                         f"not {shape}")
    return len(shape) == 2


def mask_constants(head_dim, causal, window_size, softcap=0.0):
    """HEAD_DIM and the mask constants every attention kernel takes."""
    left, right = window_size
    constants = [("HEAD_DIM", int(head_dim)), ("CAUSAL", bool(causal)),
                 ("WINDOW_LEFT", int(left)), ("WINDOW_RIGHT", int(right))]
    if softcap is not None:
        constants.append(("SOFTCAP", float(softcap)))
    return tuple(constants)


def padded_head_dim(head_dim):
    """The kernels' HEAD_DIM for a head dim of q, k or v: flash_attn takes any
    size up to 256 and pads it; the kernels take multiples of 16 (the MMA's
    K step), so operands are padded with zeros to the next one and results
    cut back. Zero columns add nothing to the scores and give zero output
    columns."""
    d = int(head_dim)
    if d < 1 or d > 256:
        raise ValueError(f"head dim {d} is not supported: it must be 1 .. 256")
    return -(-d // 16) * 16


def default_scale(softmax_scale, head_dim):
    return 1.0 / math.sqrt(head_dim) if softmax_scale is None else float(softmax_scale)


class _Numpy:
    """Layout changes and allocation for NumPy arrays."""

    @staticmethod
    def heads_first(x):  # [B, N, H, D] -> [B, H, N, D]
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    @staticmethod
    def seq_first(x):
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    @staticmethod
    def empty(like, shape, float32=False):
        return np.zeros(shape, np.float32 if float32 else like.dtype)

    @staticmethod
    def empty_bf16(like, shape):
        import ml_dtypes

        return np.zeros(shape, ml_dtypes.bfloat16)

    @staticmethod
    def array(values, like, int32=False):
        return np.ascontiguousarray(values, dtype=np.int32 if int32 else np.float32)

    @staticmethod
    def contiguous(x):
        return np.ascontiguousarray(x)

    @staticmethod
    def dtype_name(x):
        return x.dtype.name

    @staticmethod
    def pad_last(x, size):
        """x with zeros appended along its last dim up to `size`."""
        if x.shape[-1] == size:
            return x
        return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, size - x.shape[-1])])

    @staticmethod
    def take_last(x, size):
        """The first `size` entries of x's last dim."""
        return x if x.shape[-1] == size else np.ascontiguousarray(x[..., :size])


class _Torch:
    """The same for torch tensors (on the CPU or the GPU)."""

    def __init__(self, torch):
        self.torch = torch

    def heads_first(self, x):
        return x.transpose(1, 2).contiguous()

    seq_first = heads_first

    def empty(self, like, shape, float32=False):
        dtype = self.torch.float32 if float32 else like.dtype
        return self.torch.zeros(shape, dtype=dtype, device=like.device)

    def empty_bf16(self, like, shape):
        return self.torch.zeros(shape, dtype=self.torch.bfloat16, device=like.device)

    def array(self, values, like, int32=False):
        dtype = self.torch.int32 if int32 else self.torch.float32
        return self.torch.as_tensor(values, dtype=dtype, device=like.device).contiguous()

    @staticmethod
    def contiguous(x):
        return x.detach().contiguous()

    def dtype_name(self, x):
        return str(x.dtype).replace("torch.", "")

    def pad_last(self, x, size):
        if x.shape[-1] == size:
            return x
        if self.dtype_name(x) == FP8_DTYPE:  # padded as its bytes (e4m3 zero is 0x00)
            bytes_ = self.torch.nn.functional.pad(x.detach().view(self.torch.uint8),
                                                  (0, size - x.shape[-1]))
            return bytes_.view(x.dtype)
        return self.torch.nn.functional.pad(x.detach(), (0, size - x.shape[-1]))

    @staticmethod
    def take_last(x, size):
        return x if x.shape[-1] == size else x[..., :size].contiguous()


def backend(q):
    """_Numpy or _Torch, after q's type."""
    if isinstance(q, np.ndarray):
        return _Numpy()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(q, torch.Tensor):
        return _Torch(torch)
    raise TypeError(f"attention takes NumPy arrays or torch tensors, not {type(q).__name__}")


def _host_view(backend, x):
    """torch CPU tensors run as NumPy arrays sharing their memory (bf16 via
    ml_dtypes); device tensors go to the GPU as they are."""
    if isinstance(backend, _Torch) and x.device.type == "cpu":
        x = x.detach()
        if backend.dtype_name(x) == "bfloat16":
            import ml_dtypes

            return x.view(backend.torch.int16).numpy().view(ml_dtypes.bfloat16)
        if backend.dtype_name(x) == FP8_DTYPE:
            import ml_dtypes

            return x.view(backend.torch.uint8).numpy().view(ml_dtypes.float8_e4m3fn)
        return x.numpy()
    return x


def run(kernel, backend, target, args, **scalars):
    """Runs `kernel` on the arrays or tensors `args` (written in place) and
    the numbers `scalars`; `target` None: cuda for arrays on the GPU."""
    if target is None:
        first = next(iter(args.values()))
        target = "cuda" if _device._is_device_array(first) else "interp"
    host = {n: _host_view(backend, a) for n, a in args.items()}
    return kernel(target=target, **host, **scalars)


def wants_grad(*tensors):
    """True for torch tensors that require grad while autograd records."""
    torch = sys.modules.get("torch")
    return (torch is not None and torch.is_grad_enabled()
            and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors))


FP8_DTYPE = "float8_e4m3fn"


def is_fp8(backend_, x):
    """Whether x holds e4m3 values (ml_dtypes.float8_e4m3fn arrays,
    torch.float8_e4m3fn tensors)."""
    return backend_.dtype_name(x) == FP8_DTYPE


def _descale(value, batch, heads, name):
    """A descale factor as [B, H_KV] float64: a number (default 1) or
    FlashAttention-3's per-(batch, kv head) [B, H_KV] tensor."""
    if value is None:
        value = 1.0
    if isinstance(value, (int, float)):
        return np.full((batch, heads), float(value))
    values = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value,
                        dtype=np.float64)
    if values.size == 1:
        return np.full((batch, heads), float(values.reshape(-1)[0]))
    if values.shape != (batch, heads):
        raise ValueError(f"{name} must be a number or [B, H_KV] ({batch}, {heads}), "
                         f"not {tuple(np.shape(value))}")
    return values


def _fp8_forward(arrays, q, k, v, softmax_scale, causal, window_size, softcap,
                 alibi_slopes, return_lse, descales, target, arch):
    """kernels/fa3_fp8.tile: e4m3 q, k, v with descale factors; out bf16."""
    if (tuple(window_size) != (-1, -1) or softcap or alibi_slopes is not None
            or return_lse):
        raise ValueError("e4m3 attention takes no window, softcap, alibi_slopes or "
                         "softmax_lse (kernels/fa3_fp8.tile)")
    if k.shape[2] != q.shape[2] or v.shape[-1] != q.shape[-1]:
        raise ValueError("e4m3 attention takes K and V with Q's heads and head dim")
    if any(not is_fp8(arrays, x) for x in (k, v)):
        raise TypeError("e4m3 attention takes q, k and v all float8_e4m3fn")
    head_dim = q.shape[-1]
    padded = -(-int(head_dim) // 32) * 32  # wgmma's K step for e4m3
    if padded > 256:
        raise ValueError(f"head dim {head_dim} is not supported: it must be 1 .. 256")
    q, k, v = (arrays.pad_last(x, padded) for x in (q, k, v))
    names = ("q_descale", "k_descale", "v_descale")
    factors = [_descale(d, q.shape[0], k.shape[2], n) for d, n in zip(descales, names)]
    # One factor per tensor: fa3_fp8's scalars; else fa3_fp8_descale's [B, H].
    per_head = any((f != f.flat[0]).any() for f in factors)
    name = "fa3_fp8_descale" if per_head else "fa3_fp8"
    compiled = _kernel(name, arch, (("HEAD_DIM", padded), ("CAUSAL", bool(causal))))
    Q, K, V = (arrays.heads_first(x) for x in (q, k, v))
    O = arrays.empty_bf16(Q, tuple(Q.shape))
    args = {"Q": Q, "K": K, "V": V, "O": O}
    scalars = {}
    for n, f in zip(names, factors):
        if per_head:
            args[n] = arrays.array(f, Q)
        else:
            scalars[n] = float(f.flat[0])
    run(compiled, arrays, target, args, sm_scale=default_scale(softmax_scale, head_dim),
        **scalars)
    return arrays.take_last(arrays.seq_first(O), head_dim)


def kernel(name, arch, constants, dtype_name="float16"):
    """The compiled kernel `name` of kernels/ for operands of `dtype_name`
    (float16 or bfloat16: its type constant T), once per process."""
    return _kernel(name, arch, (("T", element_type(dtype_name)),) + tuple(constants))


def attention(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1),
              softcap=0.0, alibi_slopes=None, return_lse=False, deterministic=False,
              target=None, arch=DEFAULT_ARCH, q_descale=None, k_descale=None,
              v_descale=None):
    """flash_attn_func(q, k, v, ...): q [B, Nq, H, D], k [B, Nk, H_KV, D], v
    [B, Nk, H_KV, DV] (H_KV divides H: GQA/MQA; DV may differ from D), f16 or
    bf16; alibi_slopes f32 [H] or [B, H]. Returns out [B, Nq, H, DV], and with return_lse also softmax_lse f32 [B, H, Nq].

    e4m3 q, k and v (ml_dtypes.float8_e4m3fn arrays, torch.float8_e4m3fn
    tensors; forward only, H_KV = H, DV = D, causal or not) run
    kernels/fa3_fp8.tile with FlashAttention-3's q_descale, k_descale and
    v_descale (numbers or [B, H_KV] tensors; default 1; factors that differ
    between heads run kernels/fa3_fp8_descale.tile): out is
    bf16, softmax(softmax_scale (q_descale q)(k_descale k)^T)(v_descale v).

    `target`: interp, emulate or cuda (default: cuda for arrays on the GPU,
    else interp). torch tensors that require grad go through
    flashc.FlashAttnFunc (the backward kernels; `deterministic` picks the
    backward's dQ kernel without atomics).
    """
    arrays = backend(q)
    if is_fp8(arrays, q):
        return _fp8_forward(arrays, q, k, v, softmax_scale, causal, window_size, softcap,
                            alibi_slopes, return_lse, (q_descale, k_descale, v_descale),
                            target, arch)
    if any(d is not None for d in (q_descale, k_descale, v_descale)):
        raise ValueError("q_descale, k_descale and v_descale apply to e4m3 q, k and v")
    if wants_grad(q, k, v):
        from .autograd import flash_attn_function

        out, lse = flash_attn_function().apply(q, k, v, softmax_scale, causal,
                                               tuple(window_size), deterministic,
                                               target, arch, alibi_slopes, softcap)
        return (out, lse) if return_lse else out
    return forward(q, k, v, softmax_scale, causal, window_size, softcap,
                   alibi_slopes, return_lse, target, arch)


def dropout_seed(q):
    """A fresh 64-bit dropout seed: drawn from torch's default generator
    for torch tensors, from NumPy's global one (np.random.seed) otherwise,
    so that torch.manual_seed / np.random.seed make the masks
    reproducible."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(q, torch.Tensor):
        return int(torch.randint(0, 2**63 - 1, (1,), dtype=torch.int64).item())
    return int(np.random.randint(0, 2**63 - 1, dtype=np.int64))


def _i32(x):
    """The int32 of x's low 32 bits."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


def dropout_state(dropout_p, seed, offset=0):
    """The kernels' Rng tensor (kernels/lib/dropout.tile): int32 [seed_lo,
    seed_hi, offset, threshold], threshold = floor(dropout_p * 2^31)."""
    p = float(dropout_p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {p}")
    seed = int(seed)
    return np.array([_i32(seed), _i32(seed >> 32), _i32(int(offset)),
                     int(math.floor(p * 2**31))], np.int32)


def forward(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1),
            softcap=0.0, alibi_slopes=None, return_lse=False, target=None,
            arch=DEFAULT_ARCH, rng=None):
    """attention() without autograd; with rng (dropout_state's array) the
    dropout kernel, which always returns the log-sum-exp too."""
    if rng is not None:
        return _dropout_forward(q, k, v, softmax_scale, causal, window_size, softcap,
                                alibi_slopes, rng, target, arch)
    arrays = backend(q)
    batch_slopes = (alibi_slopes is not None
                    and check_slopes(alibi_slopes, q.shape[0], q.shape[2]))
    head_dim, head_dim_v = q.shape[-1], v.shape[-1]
    padded, padded_v = padded_head_dim(head_dim), padded_head_dim(head_dim_v)
    q, k = arrays.pad_last(q, padded), arrays.pad_last(k, padded)
    v = arrays.pad_last(v, padded_v)
    name = _kernel_name(alibi_slopes is not None, return_lse, batch_slopes)
    constants = mask_constants(padded, causal, window_size, softcap)
    if padded_v != padded:
        constants += (("HEAD_DIM_V", padded_v),)
    compiled = kernel(name, arch, constants, arrays.dtype_name(q))
    Q, K, V = (arrays.heads_first(x) for x in (q, k, v))
    O = arrays.empty(Q, tuple(Q.shape[:3]) + (V.shape[3],))
    args = {"Q": Q, "K": K, "V": V, "O": O}
    if alibi_slopes is not None:
        slopes = arrays.array(alibi_slopes, Q)
        if name == "flash_attn_alibi_lse":  # Slopes [1 or B, H]
            slopes = slopes.reshape(-1, q.shape[2])
        args["Slopes"] = slopes
    if return_lse or name == "flash_attn_alibi_lse":
        args["LSE"] = arrays.empty(Q, Q.shape[:3], float32=True)
    run(compiled, arrays, target, args, sm_scale=default_scale(softmax_scale, head_dim))
    out = arrays.take_last(arrays.seq_first(O), head_dim_v)
    return (out, args["LSE"]) if return_lse else out


def _slopes_2d(arrays, alibi_slopes, like, batch, heads):
    """Slopes [1 or B, H] for the kernels that always take it (one row of
    zeros, not read, without ALiBi)."""
    if alibi_slopes is None:
        return arrays.empty(like, (1, heads), float32=True)
    check_slopes(alibi_slopes, batch, heads)
    return arrays.array(alibi_slopes, like).reshape(-1, heads)


def _dropout_forward(q, k, v, softmax_scale, causal, window_size, softcap, alibi_slopes,
                     rng, target, arch):
    """flash_attn_dropout: returns (out, softmax_lse)."""
    arrays = backend(q)
    head_dim, head_dim_v = q.shape[-1], v.shape[-1]
    padded, padded_v = padded_head_dim(head_dim), padded_head_dim(head_dim_v)
    q, k = arrays.pad_last(q, padded), arrays.pad_last(k, padded)
    v = arrays.pad_last(v, padded_v)
    constants = mask_constants(padded, causal, window_size, softcap)
    constants += (("ALIBI", alibi_slopes is not None),)
    if padded_v != padded:
        constants += (("HEAD_DIM_V", padded_v),)
    compiled = kernel("flash_attn_dropout", arch, constants, arrays.dtype_name(q))
    Q, K, V = (arrays.heads_first(x) for x in (q, k, v))
    args = {"Q": Q, "K": K, "V": V,
            "Slopes": _slopes_2d(arrays, alibi_slopes, Q, Q.shape[0], Q.shape[1]),
            "Rng": arrays.array(rng, Q, int32=True),
            "O": arrays.empty(Q, tuple(Q.shape[:3]) + (V.shape[3],)),
            "LSE": arrays.empty(Q, Q.shape[:3], float32=True)}
    run(compiled, arrays, target, args, sm_scale=default_scale(softmax_scale, head_dim))
    return arrays.take_last(arrays.seq_first(args["O"]), head_dim_v), args["LSE"]


def dropout_block_size_n(head_dim):
    """The key block of flash_attn_dropout_probs (its maxima are per block
    of this many keys): 32 at every head dim up to 256."""
    padded_head_dim(head_dim)
    return 32


def dropout_probs(q, k, rng, softmax_scale=None, causal=False, window_size=(-1, -1),
                  softcap=0.0, alibi_slopes=None, target=None, arch=DEFAULT_ARCH,
                  rng_row=0, rng_col=0):
    """flash_attn's S_dmask for the dropout forward of state `rng`: [B, H,
    round128(Nq), round128(Nk)] in q's dtype, exp(s - m) with m the running
    row max of the key blocks visited last to first, negated where dropped
    (kernels/flash_attn_dropout_probs.tile). rng_row and rng_col offset the
    generator's rows and keys (one sequence of a packed batch)."""
    arrays = backend(q)
    head_dim = q.shape[-1]
    padded = padded_head_dim(head_dim)
    q, k = arrays.pad_last(q, padded), arrays.pad_last(k, padded)
    constants = mask_constants(padded, causal, window_size, softcap)
    constants += (("ALIBI", alibi_slopes is not None),)
    compiled = kernel("flash_attn_dropout_probs", arch, constants, arrays.dtype_name(q))
    Q, K = arrays.heads_first(q), arrays.heads_first(k)
    rounded = tuple(-(-n // 128) * 128 for n in (Q.shape[2], K.shape[2]))
    args = {"Q": Q, "K": K,
            "Slopes": _slopes_2d(arrays, alibi_slopes, Q, Q.shape[0], Q.shape[1]),
            "Rng": arrays.array(rng, Q, int32=True),
            "S": arrays.empty(Q, tuple(Q.shape[:2]) + rounded)}
    run(compiled, arrays, target, args, rng_row=int(rng_row), rng_col=int(rng_col),
        sm_scale=default_scale(softmax_scale, head_dim))
    return args["S"]

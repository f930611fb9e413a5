"""One spec per kernel of kernels/: what it takes for a problem size, how the
checks fill it, its float64 reference and its tolerance.

Read by the kernel tests (check_kernel.py), the GPU benchmark
(bench/benchlib.py, bench_attention.py) and bench/perf_report.py, so that a
new kernel is one entry here. numpy is imported only where arrays are made:
the benchmark's planning needs shapes and tolerances only, and runs without it.

Tolerances (relative L2 error, max abs error; f16 inputs, f32 accumulation):
  fa2: 2e-3 and 1e-2. The output is rounded to f16 once (relative error <=
       2^-11 ~ 4.9e-4 per element) and P is rounded to f16 before P*V (another
       2^-11 per term, averaging out over the keys); f32 accumulation adds
       ~1e-7. Unit-variance inputs give |out| < 4, so 1e-2 is ~5 f16 ulps of
       the largest outputs.
  fa1: as fa2 but 4e-3 relative: FlashAttention-1 writes O back to global
       memory in f16 after every K/V block, one more f16 rounding per block.
  softmax, online_softmax: f32 in and out, f32 arithmetic: 1e-5 relative.

bf16 tolerances (check_kernel.py --bf16: the kernel with -D T=bf16):
  fa2: 1.6e-2 and 8e-2, fa2's tolerances times 8. bf16 keeps 8 significant
       bits to f16's 11, so each of the same two roundings (O once, P before
       P*V) is 2^3 = 8 times coarser (relative error <= 2^-8 ~ 3.9e-3 per
       element) and f32 accumulation stays negligible; 8e-2 is ~5 bf16 ulps
       (2^-6 on [2, 4)) of the largest outputs, as 1e-2 is ~5 f16 ulps.
       Measured (test/*/fa2-bf16.test): rel 1.8e-3 .. 2.2e-3, max abs
       1.2e-3 .. 7.5e-3, on interp and emulate alike.
"""
import math
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Tensor:
    name: str
    dims: tuple        # the problem sizes it spans, e.g. ("B", "H", "Nq", "D")
    dtype: str         # numpy's name: "float16" (bfloat16 with --bf16), "float32"
    role: str          # "input": random; "output" and "workspace": NaN-poisoned
    scale: float = 1.0  # inputs: standard normal values times this

    def shape(self, sizes):
        return tuple(sizes[d] for d in self.dims)


@dataclass(frozen=True)
class Scalar:
    name: str
    value: object      # sizes -> the value, rounded to f32 (the kernel's type)


@dataclass(frozen=True)
class KernelSpec:
    name: str
    sizes: dict        # problem size -> its default: the axes of the shape grid
    tensors: tuple     # in the kernel's parameter order
    scalars: tuple
    output: str
    tolerance: tuple   # (relative L2 error, max abs error)
    reference: object  # (arrays, scalars, defines) -> float64 output
    # -D NAME the kernel is compiled with for a size (HEAD_DIM: D).
    size_defines: tuple = ()
    # Computes softmax(Q K^T * sm_scale) V: PyTorch's SDPA is its baseline.
    attention: bool = False
    # The tolerance with its f16 tensors in bf16 (None: not checked in bf16).
    bf16_tolerance: tuple = None

    def shapes(self, sizes):
        """{tensor: shape} for a problem size."""
        return {t.name: t.shape(sizes) for t in self.tensors}

    def scalar_values(self, sizes):
        return {s.name: s.value(sizes) for s in self.scalars}

    def inputs(self, rng, sizes, half="float16"):
        """{tensor: array}: inputs standard normal (drawn in parameter order),
        outputs and workspaces NaN, so that an element the kernel never
        writes fails the check. `half`: the numpy dtype of the float16
        tensors (ml_dtypes.bfloat16 for the bf16 variant)."""
        import numpy as np
        arrays = {}
        for t in self.tensors:
            shape = t.shape(sizes)
            dtype = half if t.dtype == "float16" else t.dtype
            if t.role == "input":
                arrays[t.name] = (rng.standard_normal(shape) * t.scale).astype(dtype)
            else:
                arrays[t.name] = np.full(shape, np.nan, dtype)
        return arrays

    def defines_for(self, sizes):
        """The -D NAME=VALUE that sizes fix at compile time."""
        return {name: sizes[size] for name, size in self.size_defines}


def f32(x):
    """x rounded to the nearest float32, as a Python float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def flag(defines, name):
    """A boolean compile-time constant from -D text ('true') or a sidecar."""
    return str(defines.get(name, "false")).lower() == "true"


def attention_reference(q, k, v, sm_scale, causal):
    import numpy as np
    nq, nk = q.shape[-2], k.shape[-2]
    # bottom-right causal: row i sees key j iff j <= i + nk - nq
    visible = (np.arange(nk)[None, :] <= np.arange(nq)[:, None] + nk - nq) if causal else True
    return masked_attention_reference(q, k, v, sm_scale, visible)


def masked_attention_reference(q, k, v, sm_scale, visible):
    """softmax(q kᵀ sm_scale) v in float64 over the last two axes, with the
    scores where `visible` (broadcast to [..., Nq, Nk]) is false left out; a
    row that sees no key is 0."""
    import numpy as np
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.where(visible, q @ np.swapaxes(k, -1, -2) * sm_scale, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    sees_a_key = np.isfinite(row_max)
    p = np.exp(s - np.where(sees_a_key, row_max, 0.0))
    denom = p.sum(axis=-1, keepdims=True)
    out = (p @ v) / np.where(sees_a_key, denom, 1.0)
    return np.where(sees_a_key, out, 0.0)


def softmax_reference(x):
    import numpy as np
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _attention(name, tolerance, workspaces=(), bf16_tolerance=None):
    q, kv = ("B", "H", "Nq", "D"), ("B", "H", "Nk", "D")
    return KernelSpec(
        name=name,
        sizes={"B": 1, "H": 1, "Nq": 64, "Nk": 64, "D": 64},
        tensors=(Tensor("Q", q, "float16", "input"),
                 Tensor("K", kv, "float16", "input"),
                 Tensor("V", kv, "float16", "input"),
                 Tensor("O", q, "float16", "output"))
        + tuple(Tensor(w, ("B", "H", "Nq"), "float32", "workspace") for w in workspaces),
        scalars=(Scalar("sm_scale", lambda sizes: f32(1.0 / math.sqrt(sizes["D"]))),),
        output="O",
        tolerance=tolerance,
        reference=lambda a, s, defines: attention_reference(
            a["Q"], a["K"], a["V"], s["sm_scale"], flag(defines, "CAUSAL")),
        size_defines=(("HEAD_DIM", "D"),),
        attention=True,
        bf16_tolerance=bf16_tolerance,
    )


def _softmax(name):
    return KernelSpec(
        name=name,
        sizes={"rows": 33, "cols": 300},
        tensors=(Tensor("X", ("rows", "cols"), "float32", "input", scale=3.0),
                 Tensor("Y", ("rows", "cols"), "float32", "output")),
        scalars=(),
        output="Y",
        tolerance=(1e-5, 1e-6),
        reference=lambda a, s, defines: softmax_reference(a["X"]),
    )


SPECS = {spec.name: spec for spec in (
    _attention("fa2", (2e-3, 1e-2), bf16_tolerance=(1.6e-2, 8e-2)),
    # fa1's L and M workspaces: their contents on entry do not matter.
    _attention("fa1", (4e-3, 1e-2), workspaces=("L", "M")),
    _softmax("softmax"),
    _softmax("online_softmax"),
)}

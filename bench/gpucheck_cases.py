"""What scripts/gpu-check.sh compiles, launches and checks: one family per
kernel of kernels/, its compile variants and the problem sizes it runs at.
NAME_bf16 names the check of NAME compiled with -D T=bf16.

Pure Python (no torch, numpy or GPU): `--prepare` and `--dry-run` read the
variants and shapes here; bench/gpu_check.py builds the tensors of these
shapes on the GPU and holds the torch references. A kernel of kernels/ with no
family here is compiled but reported as unchecked.
"""

import math

ATTENTION = ("fa2", "fa1", "flash_attn", "flash_attn_lse", "flash_attn_alibi",
             "flash_attn_bias", "flash_attn_key_mask")
BACKWARD = ("flash_attn_bwd_preprocess", "flash_attn_bwd", "flash_attn_bwd_dq_convert",
            "flash_attn_bwd_dq")
PAGE = 16  # the kvcache kernels' PAGE_SIZE default


def base_name(kernel):
    return kernel[:-len("_bf16")] if kernel.endswith("_bf16") else kernel


def family(kernel):
    base = base_name(kernel)
    if base in ATTENTION:
        return "attention"
    if base in BACKWARD:
        return "backward"
    return {"flash_attn_varlen": "varlen", "flash_attn_kvcache": "kvcache",
            "flash_attn_kvcache_split": "kvcache_split",
            "flash_attn_kvcache_combine": "kvcache_combine",
            "kvcache_append": "kvcache_append", "softmax": "softmax",
            "online_softmax": "softmax"}.get(base)


def _grid(head_dims=(64, 128), causal=(False, True), **extra):
    out = []
    for d in head_dims:
        for c in causal:
            v = {"HEAD_DIM": d}
            if c is not None:
                v["CAUSAL"] = c
            v.update(extra)
            out.append(v)
    return out


def variants(kernel):
    """The -D sets a kernel is compiled with (HEAD_DIM 64 and 128; CAUSAL
    where the kernel has it)."""
    fam, base = family(kernel), base_name(kernel)
    if fam == "softmax":
        return [{}]
    if base == "flash_attn_bwd":
        return _grid() + _grid(DETERMINISTIC=True)
    if fam in ("attention", "varlen", "kvcache") or base == "flash_attn_bwd_dq":
        return _grid()
    return _grid(causal=(None,))


def tag(defines):
    """A variant's short name in file names and reports: d64, d128_causal_det."""
    parts = ["d%d" % defines["HEAD_DIM"]] if "HEAD_DIM" in defines else []
    if defines.get("CAUSAL"):
        parts.append("causal")
    if defines.get("DETERMINISTIC"):
        parts.append("det")
    return "_".join(parts) or "default"


def define_args(defines):
    return ["%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
            for k, v in sorted(defines.items())]


def has_kv_heads(kernel):
    return base_name(kernel) not in ("fa2", "fa1")


def sizes(kernel, defines):
    """The problem sizes a check runs at: several per kernel, with tails
    (sizes that are no multiple of the blocks) and Nq != Nk."""
    fam = family(kernel)
    if fam == "softmax":
        return [{"R": 33, "C": 300}, {"R": 128, "C": 1000}]
    if fam == "attention":
        kv = has_kv_heads(kernel)
        return [{"B": 2, "H": 4, "H_KV": 2 if kv else 4, "Nq": 256, "Nk": 256},
                {"B": 1, "H": 2, "H_KV": 1 if kv else 2, "Nq": 173, "Nk": 301},
                {"B": 1, "H": 2, "H_KV": 2, "Nq": 1024, "Nk": 1024}]
    if fam == "backward":
        return [{"B": 1, "H": 4, "H_KV": 2, "Nq": 256, "Nk": 256},
                {"B": 1, "H": 2, "H_KV": 2, "Nq": 200, "Nk": 333}]
    if fam == "varlen":
        return [{"H": 4, "H_KV": 2, "lq": [100, 257, 31], "lk": [130, 257, 64]},
                {"H": 2, "H_KV": 2, "lq": [1, 64], "lk": [300, 64]}]
    if fam in ("kvcache", "kvcache_split"):
        return [{"H": 4, "H_KV": 2, "Nq": 1, "lens": [37, 100], "S": 3},
                {"H": 8, "H_KV": 2, "Nq": 7, "lens": [5, 64, 200], "S": 2}]
    if fam == "kvcache_combine":
        return [{"S": 3, "B": 2, "Nq": 5, "H": 20}, {"S": 1, "B": 1, "Nq": 1, "H": 4}]
    if fam == "kvcache_append":
        return [{"H_KV": 2, "lens": [3, 40], "Nnew": 5}, {"H_KV": 10, "lens": [0, 16], "Nnew": 17}]
    raise KeyError("no sizes for %s" % kernel)


def size_label(size):
    return " ".join("%s=%s" % (k, ",".join(map(str, v)) if isinstance(v, list) else v)
                    for k, v in size.items())


def paged_layout(lens, capacity):
    """Pages per sequence, MaxPages (two spare table entries) and the page
    count (five unused pages) of a paged cache holding `capacity` tokens per
    sequence."""
    used = [math.ceil(n / PAGE) for n in capacity]
    return used, max(used) + 2, sum(used) + 5


def launch_shapes(kernel, defines, size):
    """{tensor: shape} and {integer scalar: value} of one launch of `kernel`
    (the first kernel of a pipeline; the others follow from it)."""
    fam, d = family(kernel), defines.get("HEAD_DIM", 64)
    s = size
    if fam == "softmax":
        return {"X": (s["R"], s["C"]), "Y": (s["R"], s["C"])}, {}
    if fam == "attention":
        q, kv = (s["B"], s["H"], s["Nq"], d), (s["B"], s["H_KV"], s["Nk"], d)
        shapes = {"Q": q, "K": kv, "V": kv, "O": q}
        base = base_name(kernel)
        if base in ("fa1",):
            shapes.update(L=q[:3], M=q[:3])
        if base == "flash_attn_lse":
            shapes["LSE"] = q[:3]
        if base == "flash_attn_alibi":
            shapes["Slopes"] = (s["H"],)
        if base == "flash_attn_bias":
            shapes["Bias"] = (s["B"], s["H"], s["Nq"], s["Nk"])
        if base == "flash_attn_key_mask":
            shapes["KeyMask"] = (s["B"], s["Nk"])
        return shapes, {}
    if fam == "backward":
        q, kv = (s["B"], s["H"], s["Nq"], d), (s["B"], s["H_KV"], s["Nk"], d)
        base = base_name(kernel)
        if base == "flash_attn_bwd_preprocess":
            return {"O": q, "DO": q, "Delta": q[:3], "DQaccum": q}, {}
        if base == "flash_attn_bwd_dq_convert":
            return {"DQaccum": q, "DQ": q}, {}
        shapes = {"Q": q, "K": kv, "V": kv, "DO": q, "LSE": q[:3], "Delta": q[:3]}
        if base == "flash_attn_bwd_dq":
            shapes["DQ"] = q
        else:
            shapes.update(DQaccum=q, DK=kv, DV=kv)
        return shapes, {}
    if fam == "varlen":
        tq, tk = sum(s["lq"]), sum(s["lk"])
        b1 = len(s["lq"]) + 1
        return ({"Q": (tq, s["H"], d), "K": (tk, s["H_KV"], d), "V": (tk, s["H_KV"], d),
                 "cu_seqlens_q": (b1,), "cu_seqlens_k": (b1,), "O": (tq, s["H"], d),
                 "LSE": (s["H"], tq), "Slopes": (1, s["H"]),
                 "K_cache": (1, 1, s["H_KV"], d), "V_cache": (1, 1, s["H_KV"], d),
                 "block_table": (1, 1)}, {"max_seqlen_q": max(s["lq"])})
    if fam in ("kvcache", "kvcache_split", "kvcache_append"):
        lens = s["lens"]
        if fam == "kvcache_append":
            _, max_pages, pages = paged_layout(lens, [n + s["Nnew"] for n in lens])
            new = (len(lens), s["Nnew"], s["H_KV"], d)
            cache = (pages, PAGE, s["H_KV"], d)
            return {"K_new": new, "V_new": new, "K_cache": cache, "V_cache": cache,
                    "block_table": (len(lens), max_pages), "cache_seqlens": (len(lens),)}, {}
        _, max_pages, pages = paged_layout(lens, lens)
        b = len(lens)
        shapes = {"Q": (b, s["Nq"], s["H"], d), "K_cache": (pages, PAGE, s["H_KV"], d),
                  "V_cache": (pages, PAGE, s["H_KV"], d), "block_table": (b, max_pages),
                  "cache_seqlens": (b,), "cache_leftpad": (b,), "Slopes": (1, s["H"])}
        if fam == "kvcache":
            shapes.update(O=(b, s["Nq"], s["H"], d), LSE=(b, s["H"], s["Nq"]))
        else:
            shapes.update(O_part=(s["S"], b, s["Nq"], s["H"], d),
                          LSE_part=(s["S"], b, s["H"], s["Nq"]))
        return shapes, {}
    if fam == "kvcache_combine":
        o = (s["B"], s["Nq"], s["H"], d)
        return {"O_part": (s["S"],) + o, "LSE_part": (s["S"], s["B"], s["H"], s["Nq"]),
                "O": o, "LSE": (s["B"], s["H"], s["Nq"])}, {}
    raise KeyError("no shapes for %s" % kernel)

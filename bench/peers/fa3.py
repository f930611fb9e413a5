"""FlashAttention-3's forward kernel (the hopper/ kernels of flash-attention),
taken as built SASS from wheels on PyPI.

No source distribution on PyPI carries hopper/'s CUDA sources: flash-attn's
sdist has hopper/ as Python only, and the FlashAttention-3 packages publish
wheels only (`pip download --no-binary :all:` finds no version of either).
Their extension modules hold sm_90a cubins, which cuobjdump extracts as is:

  fa3-fwd 0.0.3          FlashAttention-3's hopper/setup.py, forward only,
                         built with CUDA 13.0 (nvcc V13.0.88); fp16 is
                         disabled in it (FLASHATTENTION_DISABLE_FP16), so its
                         16-bit kernels are bf16; fp8 e4m3; head dims 64-256.
  flash-attn3-jax 0.2.3  the same kernels bound to JAX, built with CUDA 12.4;
                         fp16, bf16 and e4m3, head dim 128 only.

Neither names the flash-attention commit it was built from. The kernel is
cutlass::device_kernel<FlashAttnFwdSm90<CollectiveMainloopFwdSm90<Stages,
ClusterShape, TileShape<BLOCK_M, BLOCK_N, D>, DV, Element, float, Sm90,
Is_causal, Is_local, Has_softcap, Varlen, PagedKVNonTMA, AppendKV, HasQv,
MmaPV_is_RS, IntraWGOverlap, PackGQA, Split, V_colmajor>,
CollectiveEpilogueFwd<..., NumEpilogueThreads, ...>, Scheduler>>; the one
picked per configuration is the plain launch for seqlens divisible by the
block (no local window, softcap, varlen, paged KV, append, Qv, PackGQA or
split) on a 1 x 1 x 1 cluster. Its consumers are NumEpilogueThreads / 128
warpgroups (BLOCK_M / 64) and one producer warpgroup loads Q, K and V by TMA.
"""

import os
import re
import subprocess
import zipfile

from sassprof import cache, tools

# name -> (PyPI project, version, wheel, sha256, the extension module in it, nvcc)
WHEELS = {
    "fa3-fwd": ("fa3-fwd", "0.0.3", "fa3_fwd-0.0.3-cp39-abi3-manylinux_2_24_x86_64.whl",
                "44d26c6cfc69dde5a0f9c6bebbccbb96ed20e97bc8b9ddda638b0bf62e91b93d",
                "fa3_fwd/_C.abi3.so", "nvcc 13.0.88"),
    "flash-attn3-jax": ("flash-attn3-jax", "0.2.3",
                        "flash_attn3_jax-0.2.3-cp311-cp311-manylinux_2_28_x86_64.whl",
                        "02c9c6e61a5de8923ee6b049caf886326ebb7c14cef2e8705f6caf98ad42de33",
                        "flash_attn3_jax_lib/flash_api.cpython-311-x86_64-linux-gnu.so",
                        "nvcc 12.4"),
}

# The comparison's variants: which wheel and element type.
VARIANTS = {
    "FlashAttention-3": ("fa3-fwd", "cutlass::bfloat16_t", "bf16"),
    "FlashAttention-3 f16": ("flash-attn3-jax", "cutlass::half_t", "f16"),
    "FlashAttention-3 e4m3": ("fa3-fwd", "cutlass::float_e4m3_t", "e4m3"),
}
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "e4m3": 1}

MAINLOOP_BOOLS = ["Is_causal", "Is_local", "Has_softcap", "Varlen", "PagedKVNonTMA", "AppendKV",
                  "HasQv", "MmaPV_is_RS", "IntraWGOverlap", "PackGQA", "Split", "V_colmajor"]
# What the plain launch has false (Is_causal is the configuration's).
MUST_BE_FALSE = ["Is_local", "Has_softcap", "Varlen", "PagedKVNonTMA", "AppendKV", "HasQv",
                 "PackGQA", "Split"]


class NotInWheel(RuntimeError):
    """The wheel has no kernel for the configuration."""


def template_args(text, start):
    """The top-level template arguments of the `<...>` opening at text[start]."""
    assert text[start] == "<"
    depth, args, current = 0, [], []
    for ch in text[start:]:
        if ch == "<":
            depth += 1
            if depth == 1:
                continue
        elif ch == ">":
            depth -= 1
            if depth == 0:
                args.append("".join(current).strip())
                return args
        elif ch == "," and depth == 1:
            args.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    raise ValueError("unbalanced template arguments in %r" % text[start:start + 200])


def cute_ints(arg):
    """cute::tuple<cute::C<128>, cute::C<176>, ...> -> [128, 176, ...]."""
    return [int(v) for v in re.findall(r"C<(\d+)>", arg)]


def parse_kernel(demangled):
    """The mainloop's and epilogue's parameters of a FlashAttnFwdSm90 kernel,
    or None for any other function."""
    key = "flash::CollectiveMainloopFwdSm90<"
    at = demangled.find(key)
    if "FlashAttnFwdSm90<" not in demangled or at < 0:
        return None
    main = template_args(demangled, at + len(key) - 1)
    epi_at = demangled.find("flash::CollectiveEpilogueFwd<")
    epi = template_args(demangled, epi_at + len("flash::CollectiveEpilogueFwd<") - 1)
    bm, bn, d = cute_ints(main[2])
    out = {"stages": int(main[0]), "cluster": cute_ints(main[1]), "block_m": bm,
           "block_n": bn, "head_dim": d, "head_dim_v": int(main[3]), "element": main[4],
           "epilogue_threads": int(epi[4])}
    out.update({name: main[7 + n] == "true" for n, name in enumerate(MAINLOOP_BOOLS)})
    return out


def wheel_module(name):
    """The wheel's extension module, extracted once into the cache."""
    project, version, wheel, sha256, member, _ = WHEELS[name]
    archive = cache.fetch_sdist(project, wheel, sha256)
    dest = os.path.join(cache.cache_dir(), "build", "fa3", name + "-" + version,
                        os.path.basename(member))
    if not os.path.exists(dest):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with zipfile.ZipFile(archive) as zf, open(dest + ".part", "wb") as out:
            out.write(zf.read(member))
        os.replace(dest + ".part", dest)
    return dest


def cubins(name):
    """The module's sm_90a cubins (cuobjdump -xelf), extracted once."""
    module = wheel_module(name)
    work = os.path.join(os.path.dirname(module), "cubins")
    stamp = os.path.join(work, ".done")
    if not os.path.exists(stamp):
        os.makedirs(work, exist_ok=True)
        subprocess.run([tools.require_tool("cuobjdump"), "-xelf", "all", module], cwd=work,
                       check=True, capture_output=True)
        open(stamp, "w").close()
    return sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".sm_90a.cubin"))


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    if len(out) != len(names):
        raise RuntimeError("c++filt returned %d names for %d" % (len(out), len(names)))
    return out


def kernel_index(name, parse=None):
    """[(cubin, mangled name, parsed parameters)] of every kernel of the
    wheel that `parse` (default parse_kernel: FlashAttnFwdSm90) reads
    (cuobjdump -res-usage lists a cubin's functions)."""
    parse = parse or parse_kernel
    index = []
    for cubin in cubins(name):
        names = list(tools.resource_usage(cubin))
        for mangled, demangled in zip(names, demangle(names)):
            params = parse(demangled)
            if params is not None:
                index.append((cubin, mangled, params))
    return index


def select(index, element, head_dim, causal):
    """The plain launch's kernel for the configuration: exactly one (a
    kernel that two of the wheel's files instantiate counts once)."""
    hits, seen = [], set()
    for cubin, mangled, p in index:
        if (p["element"] == element and p["head_dim"] == head_dim
                and p["head_dim_v"] == head_dim and p["Is_causal"] == causal
                and p["cluster"] == [1, 1, 1] and not any(p[b] for b in MUST_BE_FALSE)
                and mangled not in seen):
            seen.add(mangled)
            hits.append((cubin, mangled, p))
    if not hits:
        raise NotInWheel("no %s d%d %s kernel" % (element, head_dim,
                                                   "causal" if causal else "non-causal"))
    if len(hits) > 1:
        raise RuntimeError("%d kernels match %s d%d causal=%s" % (len(hits), element, head_dim,
                                                                  causal))
    return hits[0]


def smem_bytes(p, elem_bytes):
    """Q, and K and V per stage (fp8 also keeps a transposed copy of V for
    the P.V wgmma): a lower bound of the kernel's shared storage (barriers and
    the epilogue's padding left out), for occupancy, which the registers of a
    3- or 4-warpgroup CTA bind anyway."""
    q = p["block_m"] * p["head_dim"]
    kv = p["stages"] * p["block_n"] * (p["head_dim"] + p["head_dim_v"])
    vt = p["stages"] * p["block_n"] * p["head_dim_v"] if elem_bytes == 1 else 0
    return (q + kv + vt) * elem_bytes


_INDEX = {}


def build(variant, head_dim, causal):
    """(cubin, mangled function name, meta) of the variant's kernel."""
    wheel, element, dtype = VARIANTS[variant]
    if wheel not in _INDEX:
        _INDEX[wheel] = kernel_index(wheel)
    cubin, mangled, p = select(_INDEX[wheel], element, head_dim, causal)
    project, version, _, sha256, member, nvcc = WHEELS[wheel]
    mma_warps = p["epilogue_threads"] // 32
    if p["block_m"] != 16 * mma_warps:
        raise RuntimeError("%s: %d epilogue threads for BLOCK_M %d"
                           % (mangled, p["epilogue_threads"], p["block_m"]))
    meta = {"peer": variant, "version": "%s %s" % (project, version), "dtype": dtype,
            "block_m": p["block_m"], "block_n": p["block_n"], "stages": p["stages"],
            "num_warps": mma_warps + 4, "mma_warps": mma_warps,
            "smem": smem_bytes(p, ELEMENT_BYTES[dtype]),
            "function": mangled, "built_with": nvcc, "wheel_sha256": sha256,
            "command": "cuobjdump -xelf all %s (from %s %s) ; cuobjdump -res-usage ; "
                       "nvdisasm -c %s" % (member, project, version, os.path.basename(cubin))}
    return cubin, mangled, meta


# The backward: cutlass::device_kernel<FlashAttnBwdSm90<CollectiveMainloopBwdSm90<
# Stages, Stages_dO, Stages_dS, ClusterShape, TileShape<BLOCK_M, BLOCK_N, D>,
# Element, ElementAccum, Sm90, Is_causal, Is_local, Has_softcap, Varlen,
# Deterministic, SdP_swapAB, dKV_swapAB, dQ_swapAB, NumMmaWarpGroups,
# AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ, V_in_regs>,
# CollectiveEpilogueBwd<...> (CollectiveEpilogueBwdGQA for grouped heads),
# Scheduler>>: one CTA per key block of BLOCK_N rows walks the query blocks of
# BLOCK_M rows (Q, dO and the row statistics by TMA, Stages_dO deep); its
# NumMmaWarpGroups consumer warpgroups run the five GEMMs and add dQ into an
# f32 accumulator in global memory, one producer warpgroup loads. Only
# flash-attn3-jax has backward kernels (fa3-fwd is forward only): f16 and
# bf16 at head dim 128.
BWD_MAINLOOP_BOOLS = ["Is_causal", "Is_local", "Has_softcap", "Varlen", "Deterministic",
                      "SdP_swapAB", "dKV_swapAB", "dQ_swapAB"]
BWD_MUST_BE_FALSE = ["Is_local", "Has_softcap", "Varlen", "Deterministic"]
BWD_VARIANT = ("flash-attn3-jax", "cutlass::half_t", "f16")


def parse_bwd_kernel(demangled):
    """The mainloop's parameters of a FlashAttnBwdSm90 kernel (and whether
    its epilogue is the grouped-query one), or None for any other function."""
    key = "flash::CollectiveMainloopBwdSm90<"
    at = demangled.find(key)
    if "FlashAttnBwdSm90<" not in demangled or at < 0:
        return None
    main = template_args(demangled, at + len(key) - 1)
    bm, bn, d = cute_ints(main[4])
    out = {"stages": int(main[0]), "stages_do": int(main[1]), "stages_ds": int(main[2]),
           "cluster": cute_ints(main[3]), "block_m": bm, "block_n": bn, "head_dim": d,
           "element": main[5], "mma_warpgroups": int(main[16]),
           "gqa": "flash::CollectiveEpilogueBwdGQA<" in demangled}
    out.update({name: main[8 + n] == "true" for n, name in enumerate(BWD_MAINLOOP_BOOLS)})
    return out


_BWD_INDEX = {}


def select_bwd(index, element, head_dim, causal):
    """The plain backward launch's kernel: exactly one (as select)."""
    hits, seen = [], set()
    for cubin, mangled, p in index:
        if (p["element"] == element and p["head_dim"] == head_dim
                and p["Is_causal"] == causal and p["cluster"] == [1, 1, 1]
                and not p["gqa"] and not any(p[b] for b in BWD_MUST_BE_FALSE)
                and mangled not in seen):
            seen.add(mangled)
            hits.append((cubin, mangled, p))
    if not hits:
        raise NotInWheel("no %s d%d %s backward kernel" % (
            element, head_dim, "causal" if causal else "non-causal"))
    if len(hits) > 1:
        raise RuntimeError("%d backward kernels match %s d%d causal=%s"
                           % (len(hits), element, head_dim, causal))
    return hits[0]


def build_bwd(head_dim, causal):
    """(cubin, mangled function name, meta) of FlashAttention-3's plain
    backward kernel (no window, softcap, varlen, determinism or grouped
    heads, a 1 x 1 x 1 cluster) for the configuration."""
    wheel, element, dtype = BWD_VARIANT
    if wheel not in _BWD_INDEX:
        _BWD_INDEX[wheel] = kernel_index(wheel, parse_bwd_kernel)
    cubin, mangled, p = select_bwd(_BWD_INDEX[wheel], element, head_dim, causal)
    project, version, _, sha256, member, nvcc = WHEELS[wheel]
    mma_warps = 4 * p["mma_warpgroups"]
    eb = ELEMENT_BYTES[dtype]
    # K and V, Q and dO per stage, P and dS per stage: a lower bound of
    # the shared storage (for occupancy, which the registers bind anyway).
    smem = eb * (2 * p["block_n"] * head_dim
                 + p["stages_do"] * 2 * p["block_m"] * head_dim
                 + p["stages_ds"] * 2 * p["block_m"] * p["block_n"])
    meta = {"peer": "FlashAttention-3 bwd", "version": "%s %s" % (project, version),
            "dtype": dtype, "block_m": p["block_m"], "block_n": p["block_n"],
            "stages": p["stages_do"], "num_warps": mma_warps + 4, "mma_warps": mma_warps,
            "smem": smem, "function": mangled, "built_with": nvcc, "wheel_sha256": sha256,
            "pass": "backward",
            # One Q and one dO tile per query block, by TMA.
            "tma_bytes": 2 * p["block_m"] * head_dim * eb,
            "command": "cuobjdump -xelf all %s (from %s %s) ; cuobjdump -res-usage ; "
                       "nvdisasm -c %s" % (member, project, version, os.path.basename(cubin))}
    return cubin, mangled, meta

"""FlashAttention-2's forward kernel (and its backward's dq_dk_dv kernel,
build_bwd below), compiled from the flash-attn sdist.

run_mha_fwd_hdim64 / run_mha_fwd_hdim128 (csrc/flash_attn/src/
flash_fwd_launch_template.h) launch, for fp16 without dropout, alibi, softcap
or a local window and with seqlens divisible by the blocks (Is_even_MN, the
papers' benchmark shapes):

    flash_fwd_kernel<Flash_fwd_kernel_traits<D, BM, BN, 4, false, false, half_t>,
                     /*Is_dropout*/false, Is_causal, /*Is_local*/false,
                     /*Has_alibi*/false, /*Is_even_MN*/true, /*Is_even_K*/true,
                     /*Is_softcap*/false, /*Return_softmax*/false>

with 128 x 128 at D 64 and 128 x 64 at D 128 (on sm_80 and sm_90; the 128 x 32
and 64 x 64 variants are for sm_86/sm_89). Only that kernel is instantiated
(taking its address), not the whole dispatch tree, which keeps one compile to
a few minutes. The three torch headers the sources include are replaced by
stand-ins that declare what the kernel uses.
"""

import os
import shutil
import subprocess

from sassprof import cache

VERSION = "2.8.3.post2"
SDIST = "flash_attn-%s.tar.gz" % VERSION
SDIST_SHA256 = "d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b"

# head dim -> (BLOCK_M, BLOCK_N) that run_mha_fwd_hdimD picks on sm_80 / sm_90.
TILES = {64: (128, 128), 128: (128, 64)}
NUM_WARPS = 4

# flash-attn's setup.py nvcc flags (less --threads and the gencode list).
NVCC_FLAGS = ["-O3", "-std=c++17", "-U__CUDA_NO_HALF_OPERATORS__",
              "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
              "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr",
              "--expt-extended-lambda", "--use_fast_math"]

STANDINS = {
    "c10/cuda/CUDAException.h": """#pragma once
// Stand-in for torch's header: the launch checks are not compiled for a cubin.
#define C10_CUDA_CHECK(expr) (void)(expr)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() do { } while (0)
""",
    "ATen/cuda/CUDAGeneratorImpl.h": """#pragma once
// Stand-in for torch's header: at::PhiloxCudaState with torch's layout.
#include <cstdint>
namespace at {
struct PhiloxCudaState {
  union Payload { uint64_t val; int64_t *ptr; };
  Payload seed_{};
  Payload offset_{};
  uint32_t offset_intragraph_ = 0;
  bool captured_ = false;
};
}  // namespace at
""",
    "ATen/cuda/detail/UnpackRaw.cuh": """#pragma once
// Stand-in for torch's header: at::cuda::philox::unpack as torch defines it.
#include <tuple>
#include <ATen/cuda/CUDAGeneratorImpl.h>
namespace at { namespace cuda { namespace philox {
__host__ __device__ __forceinline__ std::tuple<uint64_t, uint64_t>
unpack(at::PhiloxCudaState arg) {
  if (arg.captured_)
    return std::make_tuple(static_cast<uint64_t>(*arg.seed_.ptr),
                           static_cast<uint64_t>(*(arg.offset_.ptr)) + arg.offset_intragraph_);
  return std::make_tuple(arg.seed_.val, arg.offset_.val);
}
}}}  // namespace at::cuda::philox
""",
}

INSTANTIATION = """// The one forward kernel run_mha_fwd_hdim{d}<half_t, {causal}> launches.
#include "namespace_config.h"
#include "flash_fwd_launch_template.h"

void *flashc_peer_fa2_kernel() {{
  return (void *)&FLASH_NAMESPACE::flash_fwd_kernel<
      Flash_fwd_kernel_traits<{d}, {bm}, {bn}, {warps}, false, false, cutlass::half_t>,
      false, {causal}, false, false, true, true, false, false>;
}}
"""


def source_tree():
    """The unpacked sdist (downloaded into the cache on first use)."""
    archive = cache.fetch_sdist("flash-attn", SDIST, SDIST_SHA256)
    return cache.unpack(archive, os.path.join("csrc", "flash_attn", "src",
                                              "flash_fwd_launch_template.h"))


def write_standins(root):
    for rel, text in STANDINS.items():
        cache.write_if_changed(os.path.join(root, rel), text)


def smem_bytes(head_dim, block_m, block_n):
    """Kernel_traits::kSmemSize (kernel_traits.h) without Share_Q_K_smem: the
    Q tile plus one K and one V tile, fp16 (the launcher passes it as dynamic
    shared memory)."""
    return 2 * head_dim * (block_m + 2 * block_n)


def config_name(head_dim, causal, arch):
    return "fa2peer_d%d_%s.%s" % (head_dim, "causal" if causal else "noncausal", arch)


def build(head_dim, causal, arch, nvcc="nvcc", log=print):
    """Compiles the kernel to a cubin in the cache (reused if present); returns
    (cubin path, meta dict)."""
    bm, bn = TILES[head_dim]
    text = INSTANTIATION.format(d=head_dim, bm=bm, bn=bn, warps=NUM_WARPS,
                                causal="true" if causal else "false")
    meta = {"block_m": bm, "block_n": bn, "num_warps": NUM_WARPS,
            "smem": smem_bytes(head_dim, bm, bn)}
    return compile_cubin(config_name(head_dim, causal, arch), text, arch, meta, nvcc, log)


def compile_cubin(name, text, arch, meta, nvcc, log):
    """nvcc -cubin of one instantiation (TEXT) with the sdist's flags, into
    the cache (reused while the source is unchanged); returns (cubin, meta)."""
    tree = source_tree()
    work = os.path.join(cache.cache_dir(), "build", "fa2")
    standins = os.path.join(work, "torch-standins")
    write_standins(standins)
    src = os.path.join(work, name + ".cu")
    cache.write_if_changed(src, text)
    cubin = os.path.join(work, name + ".cubin")
    cc = arch.split("_")[1]
    cmd = [nvcc, "-cubin", "-gencode", "arch=compute_%s,code=sm_%s" % (cc, cc)] + NVCC_FLAGS + [
        "--threads", "1",
        "-I" + os.path.join(tree, "csrc", "flash_attn"),
        "-I" + os.path.join(tree, "csrc", "flash_attn", "src"),
        "-I" + os.path.join(tree, "csrc", "cutlass", "include"),
        "-I" + standins, src, "-o", cubin]
    meta = dict(meta, peer="FlashAttention-2", version="flash-attn " + VERSION,
                command=" ".join(os.path.basename(c) if c == nvcc else c for c in cmd))
    if os.path.exists(cubin) and os.path.getmtime(cubin) >= os.path.getmtime(src):
        return cubin, meta
    log("fa2 peer: compiling %s (nvcc, one job; minutes)" % name)
    subprocess.run(cmd, check=True)
    return cubin, meta


# The backward: run_mha_bwd_hdimD (flash_bwd_launch_template.h) launches, for
# fp16 without dropout, alibi, softcap or a local window and seqlens divisible
# by the blocks,
#
#     flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<
#         Flash_bwd_kernel_traits<D, BM, BN, 8, AtomMSdP, AtomNdKV, AtomMdQ,
#                                 Is_V_in_regs, No_double_buffer, half_t>,
#         /*Is_dropout*/false, Is_causal, /*Is_local*/false, /*Has_alibi*/false,
#         /*Is_even_MN*/D <= 128, /*Is_even_K*/true, /*Is_softcap*/false>
#
# one CTA per key block of BN rows walking the query blocks of BM rows; each
# iteration runs S = Q K^T, dP = dO V^T, dV += P^T dO, dK += dS^T Q and
# dQ += dS K (atomically added to dQaccum). The traits are the ones picked for
# the opt-in shared memory of the A100 (164 KB) and the H100 (227 KB): only
# d256 differs, without the second Q buffer on the A100.
BWD_NUM_WARPS = 8
# head dim -> (BM, BN, AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ); on
# the H100 hdim192's traits are hdim256's.
BWD_TILES = {64: (128, 128, 4, 4, 4), 128: (64, 128, 2, 4, 2), 192: (64, 64, 4, 2, 2),
             256: (64, 64, 4, 2, 2)}


def bwd_no_double_buffer(head_dim, arch):
    return head_dim == 256 and arch == "sm_80"


def bwd_smem_bytes(head_dim, block_m, block_n, no_double_buffer):
    """Flash_bwd_kernel_traits::kSmemSize1colblock without V in registers:
    Q (two buffers unless No_double_buffer) and dO tiles, K and V, P and dS."""
    q_do = (2 if no_double_buffer else 3) * block_m * head_dim
    return 2 * (q_do + 2 * block_n * head_dim + 2 * block_m * block_n)


BWD_INSTANTIATION = """// The backward kernel run_mha_bwd_hdim{d}<half_t, {causal}> launches.
#include "namespace_config.h"
#include "flash_bwd_launch_template.h"

void *flashc_peer_fa2_bwd_kernel() {{
  return (void *)&FLASH_NAMESPACE::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<
      Flash_bwd_kernel_traits<{d}, {bm}, {bn}, {warps}, {a}, {b}, {c}, false, {ndb},
                              cutlass::half_t>,
      false, {causal}, false, false, {even_mn}, true, false>;
}}
"""


def bwd_config_name(head_dim, causal, arch):
    return "fa2peer_bwd_d%d_%s.%s" % (head_dim, "causal" if causal else "noncausal", arch)


def build_bwd(head_dim, causal, arch, nvcc="nvcc", log=print):
    """The backward kernel's cubin (as build); returns (cubin path, meta)."""
    bm, bn, a, b, c = BWD_TILES[head_dim]
    ndb = bwd_no_double_buffer(head_dim, arch)
    text = BWD_INSTANTIATION.format(d=head_dim, bm=bm, bn=bn, warps=BWD_NUM_WARPS, a=a, b=b,
                                    c=c, ndb="true" if ndb else "false",
                                    causal="true" if causal else "false",
                                    even_mn="true" if head_dim <= 128 else "false")
    meta = {"block_m": bm, "block_n": bn, "num_warps": BWD_NUM_WARPS,
            "smem": bwd_smem_bytes(head_dim, bm, bn, ndb)}
    return compile_cubin(bwd_config_name(head_dim, causal, arch), text, arch, meta, nvcc, log)


def nvcc_path():
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.path.exists(default) else None

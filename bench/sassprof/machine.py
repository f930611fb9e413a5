"""Published per-SM figures of the GPUs the static model bounds a loop on.

Sources (as in shared/reference/perf-anchors.md):
  [WP-A100] NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020):
            108 SMs, 1410 MHz boost, 312 TFLOP/s dense FP16 tensor,
            64 FP32 and 64 INT32 lanes per SM, 4 SM sub-partitions,
            164 KB shared memory per SM (163 KB per CTA), 64K registers.
  [WP-H100] NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022):
            H100 SXM5 132 SMs, 989.4 TFLOP/s dense FP16 tensor (wgmma) at
            1830 MHz, 128 FP32 lanes per SM, 228 KB shared memory per SM
            (227 KB per CTA).
  [PG]      CUDA C++ Programming Guide, "Arithmetic Instructions" throughput
            table (results per clock per SM: 16 for exp2/rcp/... and type
            conversions, 32 for warp shuffle, 64 for 32-bit integer add /
            logic / compare / min-max, 64 (8.0) and 128 (9.0) for FP32
            add/mul/fma) and "Features and Technical Specifications"
            (64 warps and 32 CTAs per SM, 1 KB shared memory reserved per CTA,
            register allocation per warp in units of 256).
  [NCU]     Nsight Compute Profiling Guide, "Hardware Model" / "Pipelines":
            one warp instruction issued per cycle per SM sub-partition; the
            fma / alu / xu (MUFU, conversions) pipes; shared memory 32 banks
            x 4 bytes per cycle per SM.
  [2nd]     mma.sync on H100 reaches about 2/3 of the wgmma peak (second-hand,
            from benchmarks; no NVIDIA figure): ~6 cycles per m16n8k16 per SMSP.

All rates are per SM sub-partition (SMSP), assuming warps spread evenly over
the 4 SMSPs; SM-wide units (shared memory, shuffle) are split four ways.
"""

import collections

Machine = collections.namedtuple("Machine", [
    "name", "arch", "sms", "clock_ghz", "peak_tflops",
    "mma_sync_flop_per_clk",  # per SMSP, mma.sync (HMMA)
    "wgmma_flop_per_clk",  # per SMSP, wgmma (HGMMA); None where absent
    "fma_clk", "alu_clk", "xu_clk",  # cycles per warp instruction per SMSP
    "smem_bytes_per_clk",  # per SMSP (SM figure / 4)
    "regs_per_sm", "max_warps_per_sm", "max_ctas_per_sm",
    "smem_per_sm", "smem_per_cta_max", "smem_reserved_per_cta",
    "sources"])

A100 = Machine(
    name="A100 SXM4", arch="sm_80", sms=108, clock_ghz=1.41, peak_tflops=312.0,
    mma_sync_flop_per_clk=512.0,  # 312e12 / (108 * 4 * 1.41e9): m16n8k16 = 8 clk
    wgmma_flop_per_clk=None,
    fma_clk=2.0,  # 64 FP32 lanes / SM = 16 per SMSP
    alu_clk=2.0,  # 64 INT32 lanes / SM
    xu_clk=8.0,  # 16 results / clk / SM = 4 per SMSP
    smem_bytes_per_clk=32.0,  # 128 B / clk / SM
    regs_per_sm=65536, max_warps_per_sm=64, max_ctas_per_sm=32,
    smem_per_sm=164 * 1024, smem_per_cta_max=163 * 1024, smem_reserved_per_cta=1024,
    sources="[WP-A100] [PG] [NCU]")

H100 = Machine(
    name="H100 SXM5", arch="sm_90", sms=132, clock_ghz=1.83, peak_tflops=989.4,
    mma_sync_flop_per_clk=4096.0 / 6.0,  # [2nd]: ~6 clk per m16n8k16
    wgmma_flop_per_clk=1024.0,  # 989.4e12 / (132 * 4 * 1.83e9)
    fma_clk=1.0,  # 128 FP32 lanes / SM = 32 per SMSP
    alu_clk=2.0,
    xu_clk=8.0,
    smem_bytes_per_clk=32.0,
    regs_per_sm=65536, max_warps_per_sm=64, max_ctas_per_sm=32,
    smem_per_sm=228 * 1024, smem_per_cta_max=227 * 1024, smem_reserved_per_cta=1024,
    sources="[WP-H100] [PG] [NCU] [2nd]")

# sm_90a is sm_90 with the arch-specific instructions (wgmma, setmaxnreg):
# the same chip.
MACHINES = {"sm_80": A100, "sm_90": H100, "sm_90a": H100}


def for_arch(arch):
    try:
        return MACHINES[arch]
    except KeyError:
        raise KeyError("no machine figures for %s (have: %s)" % (arch, ", ".join(MACHINES)))

"""Static cycle bounds of one loop iteration per SM sub-partition.

For one warp's pass through the loop body on its SMSP (machine.py's rates):

  issue   one cycle per instruction;
  tensor  HMMA / HGMMA FLOP / the SMSP's tensor FLOP per cycle;
  fma     FFMA, FMUL, FADD, IMAD... x the FMA pipe's cycles per instruction;
  alu     integer, logic, compare, FMNMX, FSEL, moves x the ALU's;
  xu      MUFU and conversions x 8;
  smem    bytes through the shared-memory data path / 32 B per cycle
          (LDSM, LDS, STS, the shared-memory side of LDGSTS, and SHFL as one
          128-byte wavefront, which is the guide's 32 shuffles / clk / SM;
          HGMMA's operands read from shared memory; the bytes TMA writes).

wgmma (HGMMA; QGMMA for fp8) is issued by each of the 4 warps of a warpgroup, one warp per
SMSP: each warp's instruction carries a quarter of the m64nNkK product and a
quarter of its shared-memory operands. A row of K is 32 bytes for every dense
wgmma type (k16 x 2 B, k8 x 4 B tf32, k32 x 1 B fp8), so an SS wgmma (A and B
through descriptors) reads 32 * (64 + N) bytes and an RS one (A in registers)
32 * N; no reuse between instructions is assumed. QGMMA (e4m3 / e5m2, k32)
runs at twice HGMMA's FLOP per cycle (the H100's dense FP8 peak is twice its
FP16 one). HGMMA runs asynchronously
from its warp until WARPGROUP.DEPBAR: its tensor cycles overlap the warp's
other instructions in the overlapped bound, and are added to them in the
no-overlap one as for mma.sync. WARPGROUP.ARRIVE / DEPBAR and the mbarrier
waits (SYNCS) cost an issue cycle each. A TMA load (UTMALDG) is one
instruction that moves a whole box: the bytes it writes into shared memory
per loop iteration are not in the SASS, so the caller states them
(profile.profile_function's `tma_bytes`, per CTA and iteration, e.g. an
attention loop's K and V tiles; each warp of the CTA gets its share). In a
warp-specialized kernel the producer warps issue the loads in a loop without
MMA and the consumers' MMA loop waits for them: the caller then counts the
bytes in the MMA loops (`tma_fed`), shared by the consumer warps.

overlapped = max of those (every unit busy at once, perfect latency hiding);
no_overlap = one warp issuing the loop in order with nothing hidden by other
             warps (or the overlapped bound where that is higher: smem-bound
             loops): one cycle per instruction, an mma.sync's tensor cycles
             in line; an HGMMA's tensor cycles start at its issue (after the
             HGMMAs before it: one tensor pipe) and stall the warp only at
             the WARPGROUP.DEPBAR.LE gsb0, N that retires its group (all but
             the newest N committed groups; a group's last HGMMA carries
             gsb0). Without wgmma, or with every group waited for right
             after it, that is the tensor cycles plus one issue cycle for
             every other instruction; a loop that issues S = Q K^T, then
             P V, and waits with DEPBAR.LE 1 before the softmax hides P V's
             tensor cycles under the softmax's instructions, as the GPU does
             within one warp (docs/perf.md, "The model's no-overlap bound
             with asynchronous wgmma"). Simulated over three passes of the
             loop (work in flight at the back edge overlaps the next pass);
             the last pass counts.
two_warpgroups = the no-overlap bound of two consumer warpgroups sharing the
             SMSP (a warp of each issues the loop, HGMMA loops only): one
             issue slot, round robin between the warps that can issue, one
             tensor pipe in issue order, each warp's DEPBARs as above. A
             loop with BAR.ARV takes turns (tile-pingpong-warpgroups,
             FlashAttention-3's scheduler barriers): each BAR.SYNC waits
             for the other warp's next BAR.ARV, warp 0 going first; without
             BAR.ARV a BAR.SYNC is an issue cycle. Cycles per warp and pass
             over the last 20 of 40 passes. It shows what taking turns
             buys where the in-order bound cannot: with both warps in the
             softmax at once the tensor pipe idles (docs/perf.md,
             "Ping-pong between consumer warpgroups").
Warps per SMSP cancel out of both (each warp brings its own work), so the
TFLOP/s ceilings do not depend on occupancy; occupancy is reported beside
them as the latency-hiding budget the overlapped bound silently assumes.
Not modelled: latencies and dependences, bank conflicts, global/L2 traffic.
"""

import math
import re

from sassprof import classify

RESOURCES = ["issue", "tensor", "fma", "alu", "xu", "smem"]


def tensor_flop(instr):
    """FLOP one warp's instruction contributes (HGMMA: its quarter of the
    warpgroup's m64nNkK)."""
    if instr.opcode == "HMMA":
        shape = instr.modifiers[0] if instr.modifiers else ""
        dims = {"16816": (16, 8, 16), "1688": (16, 8, 8), "884": (8, 8, 4)}.get(shape)
        if dims is None:
            raise ValueError("unknown HMMA shape in %r" % instr.text)
        m, n, k = dims
        return 2.0 * m * n * k
    if instr.opcode in WGMMA_OPCODES:
        m, n, k = hgmma_shape(instr)
        return 2.0 * m * n * k / 4
    return 0.0


# Bytes of one row of K in a wgmma operand, for every dense type.
WGMMA_K_ROW_BYTES = 32
TMA_OPCODES = ("UTMALDG", "UBLKCP")
# wgmma in SASS: HGMMA (f16, bf16, tf32), QGMMA (fp8 e4m3 / e5m2).
WGMMA_OPCODES = ("HGMMA", "QGMMA")
MMA_OPCODES = ("HMMA",) + WGMMA_OPCODES


def hgmma_shape(instr):
    match = re.match(r"^(\d+)x(\d+)x(\d+)$", instr.modifiers[0] if instr.modifiers else "")
    if not match:
        raise ValueError("unknown %s shape in %r" % (instr.opcode, instr.text))
    return tuple(int(g) for g in match.groups())


def hgmma_a_from_registers(instr):
    """RS form: the first source operand (after the accumulator) is a
    register, `HGMMA.64x64x16.F32 R24, R76, gdesc[UR20].tnspB, R24`; the SS
    form names a descriptor there, `HGMMA.64x32x16.F32 R56, gdesc[UR20], R56`."""
    operands = [o.strip() for o in instr.operands.split(",")]
    if len(operands) < 2:
        raise ValueError("%s without operands in %r" % (instr.opcode, instr.text))
    return not operands[1].startswith("gdesc")


def width_bytes(instr, default):
    for mod in instr.modifiers:
        if mod in ("128", "64", "32"):
            return int(mod) // 8
        if mod in ("U8", "S8", "U16", "S16"):
            return 4  # one bank per lane still moves a wavefront
    return default


def smem_bytes(instr):
    """Bytes one warp's instruction moves through the shared-memory data path."""
    op = instr.opcode
    if op == "LDSM":
        count = int(instr.modifiers[-1]) if instr.modifiers and instr.modifiers[-1] in (
            "1", "2", "4") else 1
        return 128 * count
    if op in ("LDS", "STS", "ATOMS"):
        return 32 * width_bytes(instr, 4)
    if op == "LDGSTS":
        return 32 * width_bytes(instr, 4)
    if op == "SHFL":
        return 128
    if op in WGMMA_OPCODES:  # this warp's quarter of the warpgroup's operand reads
        m, n, _ = hgmma_shape(instr)
        rows = n if hgmma_a_from_registers(instr) else m + n
        return WGMMA_K_ROW_BYTES * rows // 4
    return 0


def iteration_cycles(instrs, machine, tma_bytes=0.0, tma_fed=False):
    """Per-resource cycles of one warp's pass over instrs, and its tensor FLOP.
    `tma_bytes`: this warp's share of the bytes TMA writes into shared memory
    per pass, counted where the loop issues a TMA load, or in every pass when
    `tma_fed` (a consumer loop that a producer's loads feed)."""
    cycles = dict.fromkeys(RESOURCES, 0.0)
    flop = dict.fromkeys(MMA_OPCODES, 0.0)
    issues_tma = any(i.opcode in TMA_OPCODES for i in instrs)
    smem = tma_bytes if tma_fed or issues_tma else 0
    for instr in instrs:
        cycles["issue"] += 1
        if instr.opcode in flop:
            flop[instr.opcode] += tensor_flop(instr)
        pipe = classify.pipe(instr)
        if pipe == "fma":
            cycles["fma"] += machine.fma_clk
        elif pipe == "alu":
            cycles["alu"] += machine.alu_clk
        elif pipe == "xu":
            cycles["xu"] += machine.xu_clk
        smem += smem_bytes(instr)
    cycles["tensor"] = flop["HMMA"] / machine.mma_sync_flop_per_clk
    if flop["HGMMA"] or flop["QGMMA"]:
        if not machine.wgmma_flop_per_clk:
            op = "HGMMA" if flop["HGMMA"] else "QGMMA"
            raise ValueError("%s on %s, which has no wgmma" % (op, machine.arch))
        cycles["tensor"] += flop["HGMMA"] / machine.wgmma_flop_per_clk
        cycles["tensor"] += flop["QGMMA"] / (2 * machine.wgmma_flop_per_clk)
    cycles["smem"] = smem / machine.smem_bytes_per_clk
    return cycles, sum(flop.values()), smem


def occupancy(machine, registers, warps_per_cta, smem_per_cta):
    """CTAs per SM and what limits them (registers, shared memory, warps)."""
    warp_regs = int(math.ceil(registers * 32 / 256.0)) * 256
    limits = {
        "registers": machine.regs_per_sm // (warp_regs * warps_per_cta),
        "warps": machine.max_warps_per_sm // warps_per_cta,
        "ctas": machine.max_ctas_per_sm,
    }
    if smem_per_cta is not None:
        if smem_per_cta > machine.smem_per_cta_max:
            limits["shared memory"] = 0
        else:
            limits["shared memory"] = machine.smem_per_sm // (
                smem_per_cta + machine.smem_reserved_per_cta)
    ctas = min(limits.values())
    binding = [name for name, value in limits.items() if value == ctas]
    return {"ctas_per_sm": ctas, "warps_per_smsp": ctas * warps_per_cta / 4.0,
            "limited_by": binding, "limits": limits}


def attention_flop(block_m, block_n, head_dim, warps):
    """FLOP of one warp's pass over an attention KV block: S = Q K^T and
    P V, each 2 * (block_m / warps) * block_n * head_dim."""
    return 4.0 * block_m / warps * block_n * head_dim


def backward_flop(block_m, block_n, head_dim, warps):
    """FLOP of one warp's pass over a query block of the attention backward
    (block_m query rows against a key block of block_n): five GEMMs, S = Q
    K^T, dP = dO V^T, dV += P^T dO, dK += dS^T Q and dQ += dS K, each 2 *
    block_m * block_n * head_dim, shared by the warps."""
    return 10.0 * block_m * block_n * head_dim / warps


def depbar_groups(instr):
    """N of `WARPGROUP.DEPBAR.LE gsb0, 0xN`, or None for other instructions."""
    if instr.opcode != "WARPGROUP" or "DEPBAR" not in instr.modifiers:
        return None
    operands = [o.strip() for o in instr.operands.split(",")]
    if len(operands) != 2 or operands[0] != "gsb0":
        raise ValueError("unknown WARPGROUP.DEPBAR form in %r" % instr.text)
    return int(operands[1], 0)


def in_order_cycles(instrs, machine, passes=3):
    """One warp's cycles per pass over instrs issued in order, nothing hidden
    by other warps (the module docstring's no_overlap)."""
    t = 0.0
    tensor_free = 0.0
    group_end = None
    committed = []  # finish times of the committed, unretired groups
    start = 0.0
    for _ in range(passes):
        start = t
        for instr in instrs:
            if instr.opcode == "HMMA":
                t += tensor_flop(instr) / machine.mma_sync_flop_per_clk
                continue
            if instr.opcode in WGMMA_OPCODES:
                rate = machine.wgmma_flop_per_clk * (2 if instr.opcode == "QGMMA" else 1)
                begin = max(t, tensor_free)
                tensor_free = begin + tensor_flop(instr) / rate
                group_end = tensor_free
                if "gsb0" in [o.strip() for o in instr.operands.split(",")]:
                    committed.append(group_end)
                    group_end = None
                continue
            keep = depbar_groups(instr)
            if keep is not None and len(committed) > keep:
                t = max(t, committed[len(committed) - keep - 1])
                committed = committed[len(committed) - keep:]
            t += 1
    return t - start


def named_barrier(instr):
    """'sync' or 'arrive' for BAR.SYNC / BAR.ARV, else None."""
    if instr.opcode != "BAR":
        return None
    if "ARV" in instr.modifiers:
        return "arrive"
    if "SYNC" in instr.modifiers:
        return "sync"
    return None


def two_warpgroups_cycles(instrs, machine, passes=40):
    """One warp's cycles per pass when a warp of each of two consumer
    warpgroups issues the loop on the same SMSP (the module docstring's
    two_warpgroups): one issue slot and one tensor pipe between them."""
    pingpong = any(named_barrier(i) == "arrive" for i in instrs)
    n = len(instrs)
    pc = [0, 0]
    done_passes = [0, 0]
    ready = [0.0, 0.0]            # a warp issues no earlier than this
    committed = [[], []]          # finish times of unretired groups
    syncs = [0, 0]                # BAR.SYNCs each warp passed
    arrivals = [[-1.0], []]       # arrivals on each warp's barrier (warp 1 gives warp 0 the first turn)
    finish = [[], []]             # time each pass of each warp ended
    tensor_free = 0.0
    t = 0.0
    last = 1
    while min(done_passes) < passes:
        # Which warp may issue at t: ready and not held by its barrier.
        can = []
        for w in (0, 1):
            if done_passes[w] >= passes or ready[w] > t:
                continue
            instr = instrs[pc[w]]
            if pingpong and named_barrier(instr) == "sync":
                if len(arrivals[w]) <= syncs[w] or arrivals[w][syncs[w]] >= t:
                    continue
            can.append(w)
        if not can:
            # The next time anything changes.
            times = [ready[w] for w in (0, 1)
                     if done_passes[w] < passes and ready[w] > t]
            for w in (0, 1):
                if done_passes[w] < passes and len(arrivals[w]) > syncs[w]:
                    times.append(arrivals[w][syncs[w]] + 1)
            later = [x for x in times if x > t]
            if not later:
                raise ValueError("two_warpgroups_cycles: the warps wait for each other")
            t = math.ceil(min(later))
            continue
        # Round robin between ready warps.
        w = can[0] if len(can) == 1 else 1 - last
        last = w
        instr = instrs[pc[w]]
        issue = t
        # As in in_order_cycles: an HGMMA takes no issue cycle of its own.
        cost = 0 if instr.opcode in WGMMA_OPCODES else 1
        ready[w] = issue + cost
        if instr.opcode == "HMMA":
            ready[w] = issue + tensor_flop(instr) / machine.mma_sync_flop_per_clk
        elif instr.opcode in WGMMA_OPCODES:
            rate = machine.wgmma_flop_per_clk * (2 if instr.opcode == "QGMMA" else 1)
            begin = max(issue, tensor_free)
            tensor_free = begin + tensor_flop(instr) / rate
            if "gsb0" in [o.strip() for o in instr.operands.split(",")]:
                committed[w].append(tensor_free)
        else:
            keep = depbar_groups(instr)
            if keep is not None and len(committed[w]) > keep:
                ready[w] = max(issue, committed[w][len(committed[w]) - keep - 1]) + 1
                committed[w] = committed[w][len(committed[w]) - keep:]
            kind = named_barrier(instr) if pingpong else None
            if kind == "sync":
                syncs[w] += 1
            elif kind == "arrive":
                arrivals[1 - w].append(issue)
        pc[w] += 1
        if pc[w] == n:
            pc[w] = 0
            done_passes[w] += 1
            finish[w].append(ready[w])
        t += cost
    # Steady state: both warps' second half of the passes.
    half = passes // 2
    begin = max(finish[0][half - 1], finish[1][half - 1])
    end = max(finish[0][passes - 1], finish[1][passes - 1])
    return (end - begin) / (2 * (passes - half))


def two_warpgroups_or_none(instrs, machine, cycles):
    """two_warpgroups_cycles of a wgmma loop; None without wgmma, or where its
    named barriers are not the forward's turn-taking pair (FlashAttention-3's
    backward syncs its consumers with the producer on them: the model's two
    warps would wait for each other)."""
    if not cycles["tensor"] or not any(i.opcode in WGMMA_OPCODES for i in instrs):
        return None
    try:
        return two_warpgroups_cycles(instrs, machine)
    except ValueError:
        return None


def bounds(instrs, machine, useful_flop=None, tma_bytes=0.0, tma_fed=False):
    """Cycles per resource, the two bounds and the TFLOP/s ceilings of a loop.
    `useful_flop` (one warp's attention FLOP per iteration) counts the work
    when the loop issues more MMAs than the product needs (flashc's row sums
    on the tensor cores): their tensor cycles count, their FLOP do not.
    `tma_bytes`, `tma_fed`: one warp's share of the loop's TMA bytes, and
    whether a producer's loads feed the loop (iteration_cycles)."""
    cycles, mma_flop, smem = iteration_cycles(instrs, machine, tma_bytes, tma_fed)
    flop = mma_flop if useful_flop is None or useful_flop > mma_flop else useful_flop
    tensor_count = sum(1 for i in instrs if i.opcode in MMA_OPCODES)
    overlapped = max(cycles.values())
    binding = [r for r in RESOURCES if cycles[r] == overlapped]
    # Never below the overlapped bound: a loop bound by shared memory cannot
    # beat its busiest unit by issuing less.
    serial = in_order_cycles(instrs, machine)
    no_overlap = max(serial, overlapped)
    tensor_plus_issue = cycles["tensor"] + (len(instrs) - tensor_count)
    per_smsp_to_tflops = 4 * machine.sms * machine.clock_ghz * 1e9 / 1e12

    def ceiling(clk):
        return flop / clk * per_smsp_to_tflops if clk else 0.0

    return {
        "instructions": len(instrs), "tensor_instructions": tensor_count,
        "flop": flop, "mma_flop": mma_flop, "smem_bytes": smem, "cycles": cycles,
        "overlapped": overlapped, "binding": binding, "no_overlap": no_overlap,
        "tensor_plus_issue": tensor_plus_issue, "in_order": serial,
        "two_warpgroups": two_warpgroups_or_none(instrs, machine, cycles),
        "ceiling_overlapped_tflops": ceiling(overlapped),
        "ceiling_no_overlap_tflops": ceiling(no_overlap),
    }

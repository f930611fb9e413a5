"""One kernel's static profile: its main loops, their instruction mix and bounds."""

import collections

from sassprof import cfg as cfg_mod
from sassprof import classify, machine as machine_mod, model


def tensor_loops(graph):
    """Innermost loops that hold MMA instructions: loops with a tensor
    instruction and no inner loop that has one (an inner wait loop without
    MMA, e.g. an mbarrier poll, stays part of its outer loop)."""
    def has_tensor(loop):
        return any(classify.instruction_class(i) == "tensor" for i in loop.instructions())

    loops = [loop for loop in graph.loops() if has_tensor(loop)]
    return [loop for loop in loops if not any(has_tensor(inner) for inner in loop.inner)]


def loop_profile(loop, machine, useful_flop=None, tma_bytes=0.0, tma_fed=False):
    instrs = loop.instructions()
    start, end = loop.address_range
    conditional = loop.conditional_blocks()
    conditional_instrs = sum(loop.cfg.blocks[b].end - loop.cfg.blocks[b].start
                             for b in conditional)
    result = {
        "range": "%04x-%04x" % (start, end),
        "blocks": len(loop.blocks),
        "conditional_instructions": conditional_instrs,
        "classes": classify.count_classes(instrs),
        "mnemonics": dict(classify.count_mnemonics(instrs).most_common()),
    }
    result.update(model.bounds(instrs, machine, useful_flop, tma_bytes, tma_fed))
    return result


def merged_passes(loops, useful_flop, weights):
    """One entry for a kernel that makes its product in passes over the same
    blocks, one after the other (flashc's backward above head dim 128: dK
    and dQ's share, then dV): the leanest loop of each pass (the passes'
    loops told apart by their MMA count), their cycles added per
    `useful_flop` (one iteration's share of the whole product) -- the work
    both passes redo (S = Q K^T twice) counts once. `weights`: each pass's
    iterations per iteration of `useful_flop`, the pass with the most MMA
    instructions first (a pass over query blocks twice as tall: 0.5). Each
    pass runs alone, so the overlapped bound is the sum of the loops' own.
    None unless the loops are of len(weights) kinds."""
    by_count = collections.OrderedDict()
    for n, loop in sorted(enumerate(loops), key=lambda nl: -nl[1]["tensor_instructions"]):
        by_count.setdefault(loop["tensor_instructions"], []).append(n)
    if len(by_count) != len(weights) or not useful_flop:
        return None
    picks = [min(group, key=lambda n: loops[n]["no_overlap"] / loops[n]["flop"])
             for group in by_count.values()]
    parts = list(zip(weights, [loops[n] for n in picks]))
    # TFLOP/s per (FLOP per cycle), from any loop's own ceiling.
    first = parts[0][1]
    scale = first["ceiling_overlapped_tflops"] * first["overlapped"] / first["flop"]

    def total(key):
        return sum(w * part[key] for w, part in parts)

    def counts(key):
        out = collections.Counter()
        for w, part in parts:
            for name, n in part[key].items():
                out[name] += w * n
        return dict(out)

    overlapped, no_overlap = total("overlapped"), total("no_overlap")
    return {
        "range": "+".join(part["range"] for _, part in parts),
        "passes": picks, "pass_weights": list(weights),
        "blocks": sum(part["blocks"] for _, part in parts),
        "conditional_instructions": total("conditional_instructions"),
        "classes": counts("classes"), "mnemonics": counts("mnemonics"),
        "instructions": total("instructions"), "tensor_instructions": total("tensor_instructions"),
        "flop": useful_flop, "mma_flop": total("mma_flop"), "smem_bytes": total("smem_bytes"),
        "cycles": {r: sum(w * part["cycles"][r] for w, part in parts) for r in first["cycles"]},
        "overlapped": overlapped,
        "binding": sorted({r for _, part in parts for r in part["binding"]}),
        "no_overlap": no_overlap, "tensor_plus_issue": total("tensor_plus_issue"),
        "in_order": total("in_order"), "two_warpgroups": None,
        "ceiling_overlapped_tflops": useful_flop / overlapped * scale,
        "ceiling_no_overlap_tflops": useful_flop / no_overlap * scale,
    }


def profile_function(function, arch, warps_per_cta, smem_per_cta, resources=None,
                     useful_flop=None, tma_bytes=None, mma_warps=None, passes=None):
    """The profile of a parsed function: every MMA loop, the primary one (the
    leanest: fewest no-overlap cycles per FLOP, the steady-state loop where a
    kernel splits masked and unmasked blocks), occupancy and ceilings.
    `useful_flop`: see model.bounds. `tma_bytes`: the bytes the CTA's TMA
    loads write into shared memory per iteration of a loop that issues them
    (UTMALDG moves a box the SASS does not show), shared by its warps.
    `mma_warps`: the warps that run the MMA loops, when fewer than the CTA's
    (a warp-specialized kernel's producer warpgroup runs its own loop, which
    has no MMA and is not profiled: its instructions are not the consumers'
    issue); the CTA's warps count for occupancy only. With fewer MMA warps
    than the CTA's, the TMA bytes count in every MMA loop (the producer's
    loads, one set per consumer iteration), shared by the MMA warps.
    `passes`: for a kernel that makes its product in passes, each pass's
    iterations per iteration of `useful_flop` (merged_passes' `weights`);
    the merged entry is then the primary loop."""
    machine = machine_mod.for_arch(arch)
    graph = cfg_mod.CFG(function)
    mma_warps = mma_warps or warps_per_cta
    per_warp = (tma_bytes or 0.0) / mma_warps
    fed = mma_warps < warps_per_cta
    loops = [loop_profile(loop, machine, useful_flop, per_warp, fed)
             for loop in tensor_loops(graph)]
    if not loops:
        raise ValueError("%s: no loop with MMA instructions" % function.name)
    loops.sort(key=lambda l: l["range"])
    primary = min(range(len(loops)), key=lambda n: loops[n]["no_overlap"] / loops[n]["flop"])
    if passes:
        merged = merged_passes(loops, useful_flop, passes)
        if merged is None:
            raise ValueError("%s: %d passes expected, but the MMA loops are not of %d kinds"
                             % (function.name, len(passes), len(passes)))
        loops.append(merged)
        primary = len(loops) - 1
    registers = (resources or {}).get("registers", function.registers)
    result = collections.OrderedDict([
        ("function", function.name), ("arch", arch), ("machine", machine.name),
        ("registers", registers), ("warps_per_cta", warps_per_cta),
        ("mma_warps", mma_warps),
        ("smem_per_cta", smem_per_cta), ("tma_bytes_per_iteration", tma_bytes),
        ("stack", (resources or {}).get("stack")),
        ("local_instructions", sum(1 for i in function.instructions
                                   if classify.instruction_class(i) == "local")),
        ("occupancy", model.occupancy(machine, registers, warps_per_cta, smem_per_cta)),
        ("primary_loop", primary), ("loops", loops),
    ])
    return result

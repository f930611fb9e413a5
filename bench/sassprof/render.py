"""Text and Markdown renderings of static profiles."""

from sassprof import model

MMA_FLOP = 4096.0  # one m16n8k16: the unit the comparison normalises to


def per_mma(loop, value):
    return value * MMA_FLOP / loop["flop"]


def text_report(prof):
    """A human-readable report of one kernel's profile."""
    occ = prof["occupancy"]
    smem = prof["smem_per_cta"]
    lines = ["kernel %s (%s, %s): %s registers, stack %s B, %d warps/CTA, %s shared/CTA" % (
        prof["function"], prof["arch"], prof["machine"], prof["registers"],
        "?" if prof["stack"] is None else prof["stack"], prof["warps_per_cta"],
        "?" if smem is None else "%d B" % smem),
        "occupancy: %d CTAs/SM (%.1f warps/SMSP), limited by %s" % (
            occ["ctas_per_sm"], occ["warps_per_smsp"], ", ".join(occ["limited_by"]))]
    for n, loop in enumerate(prof["loops"]):
        tag = " (primary)" if n == prof["primary_loop"] else ""
        lines.append("loop %d [%s]%s: %d instructions, %d tensor, %d blocks, %d conditional" % (
            n, loop["range"], tag, loop["instructions"], loop["tensor_instructions"],
            loop["blocks"], loop["conditional_instructions"]))
        lines.append("  classes: " + ", ".join(
            "%s %d" % (name, count) for name, count in loop["classes"].items() if count))
        lines.append("  cycles/SMSP: " + ", ".join(
            "%s %.0f" % (r, loop["cycles"][r]) for r in model.RESOURCES))
        lines.append("  per m16n8k16: " + ", ".join(
            "%s %.2f" % (r, per_mma(loop, loop["cycles"][r])) for r in model.RESOURCES))
        lines.append("  overlapped %.0f clk (%s) -> %.1f TFLOP/s; no-overlap %.0f clk -> %.1f TFLOP/s"
                     % (loop["overlapped"], "/".join(loop["binding"]),
                        loop["ceiling_overlapped_tflops"], loop["no_overlap"],
                        loop["ceiling_no_overlap_tflops"]))
    return "\n".join(lines) + "\n"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)

"""Unit checks of bench/sassprof (run by sassprof-unit.test): the nvdisasm
parser, the control-flow graph and its loops, the instruction classes and
pipes, and the cycle model, on the listings in Inputs/sass/. No CUDA tool."""
import os
import sys

sys.path.insert(0, sys.argv[1])
import checks  # noqa: E402
from checks import check, close, equal  # noqa: E402
from sassprof import cfg, classify, machine, model, profile, sass  # noqa: E402

INPUTS = sys.argv[2]


def load(name):
    with open(os.path.join(INPUTS, name)) as f:
        return sass.find_function(sass.parse(f.read()))


def instr(text):
    """One instruction from its SASS text."""
    return sass.parse_instruction(0, text, text)


# --- parser -----------------------------------------------------------------
ins = instr("@!P4 BRA `(.L_x_0)")
equal((ins.guard, ins.opcode, ins.modifiers, ins.target), ("!P4", "BRA", (), ".L_x_0"), "guarded BRA")
ins = instr("@PT LDSM.16.MT88.4 R16, [R9+UR6+0x5800]")
equal((ins.guard, ins.mnemonic, ins.operands), ("", "LDSM.16.MT88.4", "R16, [R9+UR6+0x5800]"),
      "@PT is no guard")
equal(instr("@UP0 UIADD3 UR4, UR4, 0x1, URZ").guard, "UP0", "uniform predicate guard")
ins = instr("CALL.REL.NOINC `($__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath)")
equal(ins.target, "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath", "call target")
equal(instr("HGMMA.64x128x16.F32 R24, gdesc[UR4], R24").modifiers, ("64x128x16", "F32"),
      "HGMMA shape modifier")

simple = load("loop-simple.sass")
equal((simple.name, simple.registers, len(simple.instructions)), ("simple", 168, 30),
      "simple: name, SHI_REGISTERS, instruction count")
equal((simple.labels[".L_x_1"], simple.labels[".L_x_5"], simple.labels[".L_x_9"]),
      (0x30, 0x80, 0x1c0), "label addresses")
two = sass.parse(open(os.path.join(INPUTS, "loop-noinc.sass")).read())
equal([f.name for f in two], ["twoloops"], "the subroutine stays in its kernel's section")
try:
    sass.find_function(two, "missing")
    check(False, "find_function of a missing name raises")
except KeyError as exc:
    check("twoloops" in str(exc), "the error lists the functions")

# --- classes and pipes ------------------------------------------------------
cases = {
    "HMMA.16816.F32 R16, R8, R12, R16": ("tensor", "tensor"),
    "HGMMA.64x64x16.F32 R24, gdesc[UR4], R24": ("tensor", "tensor"),
    "MUFU.EX2 R24, R16": ("mufu", "xu"),
    "FFMA.FTZ R25, R17, R6, -R7": ("fp32", "fma"),
    "FMUL R16, R16, 0.5": ("fp32", "fma"),
    "FADD R28, R24, R25": ("fp32", "fma"),
    "FMNMX.NAN R1, R2, R3, !PT": ("fp32", "alu"),
    "FSETP.GEU.AND P1, PT, R16, -126, PT": ("fp32", "alu"),
    "FSEL R16, R16, -INF, !P2": ("fp32", "alu"),
    "IADD3 R2, R2, 0x1, RZ": ("int", "alu"),
    "IMAD.WIDE R2, R3, 0x80, R4": ("int", "fma"),
    "IMAD.MOV.U32 R2, RZ, RZ, RZ": ("move_cvt", "fma"),
    "LOP3.LUT R3, R3, 0x2000, RZ, 0x3c, !PT": ("int", "alu"),
    "ISETP.GE.AND P0, PT, R2, R3, PT": ("int", "alu"),
    "LEA.HI.X R5, R2, R3, RZ, 0x1, P0": ("int", "alu"),
    "SEL R19, R23, RZ, P1": ("int", "alu"),
    "UIADD3 UR4, UR4, 0x40, URZ": ("int", "uniform"),
    "MOV R1, c[0x0][0x28]": ("move_cvt", "alu"),
    "CS2R R124, SRZ": ("move_cvt", "alu"),
    "F2FP.PACK_AB R29, R25, R24": ("move_cvt", "alu"),
    "F2I.FTZ.U32.TRUNC.NTZ R3, R2": ("move_cvt", "xu"),
    "LDSM.16.M88.4 R8, [R3]": ("ldsm", "lsu"),
    "LDS.128 R32, [R3]": ("lds_sts", "lsu"),
    "STS [R3], R29": ("lds_sts", "lsu"),
    "LDG.E R2, desc[UR4][R4.64]": ("ldg_stg", "lsu"),
    "STG.E.128 desc[UR4][R4.64], R16": ("ldg_stg", "lsu"),
    "LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64]": ("async_copy", "lsu"),
    "UTMALDG.2D [UR16], [UR6]": ("async_copy", "uniform"),
    "BAR.SYNC.DEFER_BLOCKING 0x0": ("barrier", None),
    "DEPBAR.LE SB0, 0x0": ("barrier", None),
    "LDGDEPBAR": ("barrier", None),
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR8], R3": ("barrier", None),
    "WARPGROUP.ARRIVE": ("barrier", None),
    "SHFL.BFLY PT, R27, R26, 0x1, 0x1f": ("shfl", "lsu"),
    "BRA `(.L_x_1)": ("branch", None),
    "BSSY B2, `(.L_x_4)": ("branch", None),
    "EXIT": ("branch", None),
    "LDL.LU R2, [R1+0x10]": ("local", "lsu"),
    "STL [R1+0x10], R2": ("local", "lsu"),
    "NOP": ("other", None),
}
for text, (cls, pipe) in cases.items():
    equal((classify.instruction_class(instr(text)), classify.pipe(instr(text))), (cls, pipe), text)

# --- model: per-instruction figures -------------------------------------------
for text, want in {"LDSM.16.M88.4 R8, [R3]": 512, "LDSM.16.MT88.2 R8, [R3]": 256,
                   "LDSM.16.M88 R8, [R3]": 128, "LDS.128 R32, [R3]": 512,
                   "LDS.64 R32, [R3]": 256, "LDS R32, [R3]": 128, "LDS.U8 R32, [R3]": 128,
                   "STS [R3], R29": 128, "LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]": 512,
                   "SHFL.BFLY PT, R27, R26, 0x1, 0x1f": 128, "FADD R1, R2, R3": 0,
                   "LDG.E.128 R4, desc[UR4][R2.64]": 0}.items():
    equal(model.smem_bytes(instr(text)), want, "shared bytes of " + text)
for text, want in {"HMMA.16816.F32 R16, R8, R12, R16": 4096, "HMMA.1688.F32 R16, R8, R12, R16": 2048,
                   "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24": 65536, "FFMA R1, R2, R3, R4": 0}.items():
    equal(model.tensor_flop(instr(text)), want, "FLOP of " + text)
try:
    model.tensor_flop(instr("HMMA.999.F32 R16, R8, R12, R16"))
    check(False, "an unknown HMMA shape raises")
except ValueError:
    check(True, "")

a100 = machine.for_arch("sm_80")
occ = model.occupancy(a100, 255, 4, 32768)
equal((occ["ctas_per_sm"], occ["warps_per_smsp"], occ["limited_by"]), (2, 2.0, ["registers"]),
      "occupancy at 255 registers")
occ = model.occupancy(a100, 128, 4, 65536)
equal((occ["ctas_per_sm"], occ["limited_by"]), (2, ["shared memory"]), "occupancy at 64 KiB smem")
occ = model.occupancy(a100, 32, 8, None)
equal((occ["ctas_per_sm"], occ["limited_by"]), (8, ["registers", "warps"]),
      "occupancy at 32 registers, 8 warps, smem unknown")
equal(model.occupancy(a100, 32, 4, 200 * 1024)["ctas_per_sm"], 0, "too much shared memory")
try:
    machine.for_arch("sm_75")
    check(False, "unknown arch raises")
except KeyError:
    check(True, "")

# --- CFG and loops ------------------------------------------------------------
graph = cfg.CFG(simple)
equal([(b.start, b.end) for b in graph.blocks], [(0, 3), (3, 26), (26, 28), (28, 29), (29, 30)],
      "simple: blocks (the unreferenced .L_x_5 starts none)")
equal([[s.index for s in b.succs] for b in graph.blocks], [[1], [1, 2], [], [3], []],
      "simple: successors (guarded BRA: target then fall-through; EXIT: none)")
equal(sorted(graph.reachable), [0, 1, 2], "simple: the trailing self-loop is unreachable")
loops = graph.loops()
equal([(l.header, sorted(l.blocks), l.latches) for l in loops], [(1, [1], [1])], "simple: one loop")
equal(loops[0].address_range, (0x30, 0x190), "simple: loop range")

graph = cfg.CFG(load("loop-noinc.sass"))
equal(len(graph.blocks), 11, "noinc: blocks")
equal([[s.index for s in b.succs] for b in graph.blocks][:8],
      [[3, 1], [3, 2], [1], [4], [6, 5], [4], [7], []],
      "noinc: CALL.REL.NOINC to a local label jumps, to a subroutine falls through")
equal(sorted(graph.reachable), list(range(8)), "noinc: the subroutine is not reached by edges")
equal(sorted((l.header, sorted(l.blocks)) for l in graph.loops()), [(1, [1, 2]), (4, [4, 5])],
      "noinc: two loops, none in the subroutine")
check(graph.dominates(0, 7) and graph.dominates(3, 4) and not graph.dominates(1, 3),
      "noinc: dominators")

nested = load("loop-nested.sass")
graph = cfg.CFG(nested)
loops = graph.loops()
equal([(l.header, len(l.blocks)) for l in loops], [(1, 1), (3, 1), (2, 5)],
      "nested: the two wait loops (innermost first), then the MMA loop")
equal([len(l.inner) for l in loops], [0, 0, 1], "nested: the outer loop holds the inner wait loop")
mma = profile.tensor_loops(graph)
equal([(l.header, len(l.instructions())) for l in mma], [(2, 13)],
      "nested: the MMA loop, inner wait loop counted once")
equal([graph.blocks[b].start for b in mma[0].conditional_blocks()], [10],
      "nested: the TMA block is conditional")

# --- whole profiles -----------------------------------------------------------
prof = profile.profile_function(simple, "sm_80", 4, None)
loop = prof["loops"][0]
equal((loop["instructions"], loop["tensor_instructions"], loop["flop"]), (23, 2, 8192.0),
      "simple: loop size")
equal(dict(loop["classes"]), {"tensor": 2, "mufu": 2, "fp32": 6, "int": 4, "ldsm": 2,
                              "lds_sts": 2, "ldg_stg": 0, "async_copy": 1, "barrier": 1,
                              "shfl": 1, "branch": 1, "move_cvt": 1, "local": 0, "other": 0},
      "simple: classes")
equal(loop["cycles"], {"issue": 23, "tensor": 16.0, "fma": 8.0, "alu": 12.0, "xu": 16.0,
                       "smem": 64.0}, "simple: cycles on A100")
equal((loop["overlapped"], loop["binding"], loop["tensor_plus_issue"], loop["no_overlap"]),
      (64.0, ["smem"], 37.0, 64.0), "simple: bounds (no-overlap never below overlapped)")
per_smsp = 4 * 108 * 1.41e9 / 1e12
close(loop["ceiling_overlapped_tflops"], 8192 / 64.0 * per_smsp, "simple: overlapped ceiling")
close(loop["ceiling_no_overlap_tflops"], 8192 / 64.0 * per_smsp, "simple: no-overlap ceiling")
# Work counted as attention FLOP when the loop issues MMAs beyond the
# product's (flashc's row sums on the tensor cores): tensor cycles stay,
# the FLOP and the ceilings drop; never more than the MMAs' FLOP.
useful = profile.profile_function(simple, "sm_80", 4, None, useful_flop=4096.0)["loops"][0]
equal((useful["flop"], useful["mma_flop"], useful["cycles"]["tensor"], useful["no_overlap"]),
      (4096.0, 8192.0, 16.0, 64.0), "simple: useful FLOP below the MMAs'")
close(useful["ceiling_no_overlap_tflops"], 4096 / 64.0 * per_smsp, "simple: useful ceiling")
more = profile.profile_function(simple, "sm_80", 4, None, useful_flop=1e9)["loops"][0]
equal(more["flop"], 8192.0, "simple: useful FLOP above the MMAs' is ignored")
equal(model.attention_flop(128, 64, 128, 4), 256 * 4096.0,
      "attention FLOP of fa2's 128 x 64 d128 tile: 256 m16n8k16 per warp")
noinc = profile.profile_function(load("loop-noinc.sass"), "sm_80", 4, 49152)["loops"][0]
equal((noinc["overlapped"], noinc["binding"], noinc["no_overlap"]), (16.0, ["tensor"], 21.0),
      "noinc: tensor-bound loop, no-overlap = tensor + 5 other instructions")
equal((prof["registers"], prof["occupancy"]["ctas_per_sm"]), (168, 3), "simple: occupancy")
h100 = profile.profile_function(simple, "sm_90", 4, None)["loops"][0]["cycles"]
equal((h100["tensor"], h100["fma"]), (12.0, 4.0), "simple: H100 mma.sync and FP32 rates")

prof = profile.profile_function(load("loop-noinc.sass"), "sm_80", 4, 49152)
equal([(l["range"], l["instructions"]) for l in prof["loops"]], [("0030-0090", 7), ("00b0-0140", 10)],
      "noinc: both MMA loops, in address order")
equal(prof["primary_loop"], 0, "noinc: the leaner loop is primary")

prof = profile.profile_function(nested, "sm_90", 4, None)
loop = prof["loops"][0]
equal((loop["flop"], loop["cycles"]["tensor"], loop["conditional_instructions"]), (65536.0, 64.0, 2),
      "nested: HGMMA on H100")
try:
    profile.profile_function(nested, "sm_80", 4, None)
    check(False, "HGMMA on sm_80 raises")
except ValueError:
    check(True, "")

# --- wgmma: HGMMA quarters per warp, operand reads, TMA bytes ------------------
# Each of the warpgroup's 4 warps issues the HGMMA (one per SMSP) and carries a
# quarter of the m64nNk16 product and of its shared operands: a K row is 32
# bytes, SS reads A (64 rows) and B (N rows), RS reads B only.
ss = instr("HGMMA.64x32x16.F32 R56, gdesc[UR20], R56, gsb0")
rs = instr("HGMMA.64x64x16.F32 R24, R76, gdesc[UR20].tnspB, R24")
equal((model.hgmma_a_from_registers(ss), model.hgmma_a_from_registers(rs)), (False, True),
      "HGMMA: SS names a descriptor, RS a register after the accumulator")
equal((model.tensor_flop(ss), model.smem_bytes(ss)), (2 * 64 * 32 * 16 / 4, 32 * (64 + 32) // 4),
      "SS HGMMA 64x32x16: a warp's FLOP and operand bytes")
equal((model.tensor_flop(rs), model.smem_bytes(rs)), (2 * 64 * 64 * 16 / 4, 32 * 64 // 4),
      "RS HGMMA 64x64x16: A from registers, B's bytes only")
equal(model.smem_bytes(instr("HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24")), 32 * 320 // 4,
      "SS HGMMA 64x256x16 bf16")
for text in ("WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR.LE gsb0, 0x0",
             "SYNCS.ARRIVE.TRANS64 RZ, [UR26+0x6000], R5"):
    equal((classify.instruction_class(instr(text)), classify.pipe(instr(text)),
           model.smem_bytes(instr(text))), ("barrier", None, 0), text + ": an issue cycle only")
for text in ("UTMALDG.2D [UR20], [UR28]", "UTMACMDFLUSH"):
    equal((classify.instruction_class(instr(text)), model.smem_bytes(instr(text))),
          ("async_copy", 0), text + ": no per-thread bytes")

wg = load("loop-wgmma.sass")
# K and V boxes of 32 x 64 f16 per iteration, written by TMA for the CTA's 4 warps.
tma = 2 * 32 * 64 * 2
prof = profile.profile_function(wg, "sm_90a", 4, 3 * 8192, tma_bytes=tma)
equal((len(prof["loops"]), prof["loops"][0]["conditional_instructions"]), (1, 0),
      "wgmma: one MMA loop (the mbarrier wait loop belongs to it), nothing conditional")
loop = prof["loops"][0]
equal((loop["instructions"], loop["tensor_instructions"], loop["flop"]), (24, 6, 131072.0),
      "wgmma: loop size and a warp's FLOP (4 x 64x32x16 + 2 x 64x64x16, quarters)")
equal((loop["classes"]["tensor"], loop["classes"]["barrier"], loop["classes"]["async_copy"]),
      (6, 6, 2), "wgmma: classes (ARRIVE, DEPBAR, mbarrier wait and arrive are barriers)")
# HGMMA operands 4 x 768 + 2 x 512 bytes, a shuffle's 128, and the warp's
# quarter of the 8 KiB TMA writes.
equal(loop["smem_bytes"], 4 * 768 + 2 * 512 + 128 + tma // 4, "wgmma: shared bytes per warp")
equal(loop["cycles"], {"issue": 24.0, "tensor": 128.0, "fma": 2.0, "alu": 8.0, "xu": 8.0,
                       "smem": 196.0}, "wgmma: cycles on H100 (1024 FLOP/clk/SMSP, 32 B/clk)")
equal((loop["overlapped"], loop["binding"], loop["no_overlap"]), (196.0, ["smem"], 196.0),
      "wgmma: 64 x 32 SS tiles are bound by shared memory")
without = profile.profile_function(wg, "sm_90", 4, None)["loops"][0]
equal((without["cycles"]["smem"], without["cycles"]["tensor"], without["no_overlap"]),
      (132.0, 128.0, 146.0), "wgmma: without TMA bytes: tensor + 18 other instructions")
equal((without["tensor_plus_issue"], without["in_order"]), (146.0, 146.0),
      "wgmma: each group waited for right after it: in order = tensor + issue")
# FlashAttention-3's order: S's four SS HGMMAs (16 cycles each) from cycle 4,
# P V's two RS HGMMAs (32 each) queued behind them on the one tensor pipe
# (68 to 132); DEPBAR.LE 1 waits for S only (68), the softmax's 5
# instructions issue while P V runs, DEPBAR.LE 0 waits for P V (132), 4 more
# instructions: 137 cycles against tensor + issue's 128 + 16.
overlap = profile.profile_function(load("loop-wgmma-overlap.sass"), "sm_90", 4, None)["loops"][0]
equal((overlap["cycles"]["tensor"], overlap["tensor_plus_issue"], overlap["in_order"],
       overlap["no_overlap"]), (128.0, 144.0, 137.0, 137.0),
      "wgmma overlap: P V's tensor cycles under the softmax")
# Two consumer warpgroups on one SMSP (two_warpgroups): a loop of one
# 32-cycle HGMMA group, waited for at once, and 40 FFMAs. One warp in order:
# 1 + 32 + 1 + 40 = 74. Two warps: while one waits for its group the other
# issues, 42 issue cycles per warp bind (tensor: 32). Taking turns
# (BAR.SYNC before the group, BAR.ARV after it) costs the two instructions
# (44); handing over after the FFMAs instead serializes the warps (76, the
# in-order bound with both barriers). Measured over the second half of 40
# passes: within 0.25 of the steady state.
sm90a = machine.for_arch("sm_90a")
group = [instr("WARPGROUP.ARRIVE"), instr("HGMMA.64x64x16.F32 R24, gdesc[UR20], R24, gsb0"),
         instr("WARPGROUP.DEPBAR.LE gsb0, 0x0")]
ffma = [instr("FFMA R1, R2, R3, R4")] * 40
sync, arv = instr("BAR.SYNC.DEFER_BLOCKING R3, R4"), instr("BAR.ARV R5, R4")
equal([model.named_barrier(i) for i in (sync, arv, group[0])], ["sync", "arrive", None],
      "named barriers: BAR.SYNC waits, BAR.ARV arrives")
for body, in_order, two, what in (
        (group + ffma, 74.0, 42.0, "free"),
        ([sync] + group[:2] + [arv] + group[2:] + ffma, 75.0, 44.0, "turns around the group"),
        ([sync] + group + ffma + [arv], 76.0, 76.0, "turns around the whole body")):
    close(model.in_order_cycles(body, sm90a), in_order, "in order, %s" % what)
    got = model.two_warpgroups_cycles(body, sm90a)
    check(abs(got - two) < 0.25, "two warpgroups, %s: got %r, want %r" % (what, got, two))
equal([model.depbar_groups(instr(t)) for t in ("WARPGROUP.DEPBAR.LE gsb0, 0x1",
                                                "WARPGROUP.ARRIVE", "FFMA R1, R2, R3, R4")],
      [1, None, None], "DEPBAR's group count")
equal(profile.profile_function(simple, "sm_90", 4, None, tma_bytes=4096)["loops"][0]["smem_bytes"],
      2048, "TMA bytes count only in loops that issue a TMA load")
# A warp-specialized CTA: the same 4 MMA warps plus a producer warpgroup (8
# warps in all). The TMA bytes are the 4 consumers' to share; the 8 warps
# count for occupancy.
ws = profile.profile_function(wg, "sm_90a", 8, 3 * 8192, tma_bytes=tma, mma_warps=4)
equal((ws["loops"][0]["smem_bytes"], ws["mma_warps"], ws["warps_per_cta"]),
      (loop["smem_bytes"], 4, 8), "warp-specialized: TMA bytes over the MMA warps only")
equal(ws["occupancy"]["warps_per_smsp"], 2.0, "warp-specialized: all 8 warps occupy the SM")

# A consumer loop without TMA in a warp-specialized CTA: the producer's loads
# feed it, so the bytes count there, shared by the MMA warps only.
fed = profile.profile_function(simple, "sm_90", 8, None, tma_bytes=4096, mma_warps=4)
equal(fed["loops"][0]["smem_bytes"], 2048 + 4096 // 4,
      "warp-specialized: a producer's TMA bytes count in the consumers' loop")

# --- fp8 wgmma (QGMMA): k32 of one byte, a K row is still 32 bytes; twice
# HGMMA's FLOP per cycle.
q = instr("QGMMA.64x224x32.F32.E4M3.E4M3 R24, gdesc[UR24], R24")
qrs = instr("QGMMA.64x128x32.F32.E4M3.E4M3 R88, R152, gdesc[UR8], R88")
equal((classify.instruction_class(q), classify.pipe(q)), ("tensor", "tensor"), "QGMMA class")
equal((model.tensor_flop(q), model.smem_bytes(q)), (2 * 64 * 224 * 32 / 4, 32 * (64 + 224) // 4),
      "SS QGMMA 64x224x32: a warp's FLOP and operand bytes")
equal((model.tensor_flop(qrs), model.smem_bytes(qrs)), (2 * 64 * 128 * 32 / 4, 32 * 128 // 4),
      "RS QGMMA 64x128x32: B's bytes only")
h100m = machine.for_arch("sm_90a")
cyc, flop, _ = model.iteration_cycles([q, instr("HGMMA.64x224x16.F32 R24, gdesc[UR4], R24")], h100m)
equal((flop, cyc["tensor"]), (2 * 64 * 224 * 48 / 4, 2 * 64 * 224 * (16 + 32 / 2) / 4 / 1024),
      "QGMMA at twice HGMMA's rate")
b = model.bounds([q, instr("FADD R1, R2, R3")], h100m)
equal((b["tensor_instructions"], b["no_overlap"], b["tensor_plus_issue"]),
      (1, 2 * 64 * 224 * 32 / 4 / 2048, 2 * 64 * 224 * 32 / 4 / 2048 + 1),
      "QGMMA counts as an MMA at twice HGMMA's rate in the in-order bound: the FADD, "
      "waiting for no group, issues under it")
try:
    model.iteration_cycles([q], machine.for_arch("sm_80"))
    check(False, "QGMMA on sm_80 raises")
except ValueError:
    check(True, "")

# The backward's FLOP per warp and query block: five GEMMs of 2 * M * N * D;
# FlashAttention-2's H100 / A100 backward shared memory (kSmemSize1colblock).
equal(model.backward_flop(64, 128, 128, 8), 5 * 2 * 64 * 128 * 128 / 8.0,
      "backward FLOP: S, dP, dV, dK and dQ over the warps")
from peers import fa2  # noqa: E402
equal(fa2.bwd_smem_bytes(128, 64, 128, False), 144 * 1024,
      "FlashAttention-2 backward d128: 2 Q + dO, K and V, P and dS")
equal(fa2.bwd_smem_bytes(256, 64, 64, False), 176 * 1024, "d256 on the H100: Q double-buffered")
equal(fa2.bwd_smem_bytes(256, 64, 64, fa2.bwd_no_double_buffer(256, "sm_80")), 144 * 1024,
      "d256 on the A100: one Q buffer")
# A wgmma loop whose named barriers are not a turn-taking pair (two BAR.SYNCs
# per BAR.ARV: each warp waits for the other) has no two_warpgroups bound;
# one that takes turns keeps it.
deadlock = [sync, sync] + group + [arv]
check(model.two_warpgroups_or_none(deadlock, sm90a, {"tensor": 8.0}) is None,
      "two_warpgroups: None where the warps would wait for each other")
check(model.two_warpgroups_or_none([sync] + group + ffma + [arv], sm90a, {"tensor": 8.0})
      is not None, "two_warpgroups: kept for turns")

# Two passes (flashc's backward at d256: dK and dQ's share, then dV over
# query blocks twice as tall): the leanest loop of each pass (told apart by
# MMA count, most first), cycles added with the passes' weights, per the
# whole product's FLOP; not two kinds of loop, nothing merged.
def fake_loop(rng, mmas, flop, ovl, serial, tflops):
    return {"range": rng, "blocks": 2, "conditional_instructions": 1,
            "classes": {"tensor": mmas, "fma": 3}, "mnemonics": {"HGMMA": mmas},
            "instructions": 10 * mmas, "tensor_instructions": mmas, "flop": flop,
            "mma_flop": flop, "smem_bytes": 100.0,
            "cycles": {"tensor": ovl, "smem": ovl / 2}, "overlapped": ovl,
            "binding": ["tensor"], "no_overlap": serial, "tensor_plus_issue": serial,
            "in_order": serial, "two_warpgroups": None,
            "ceiling_overlapped_tflops": tflops * flop / ovl,
            "ceiling_no_overlap_tflops": tflops * flop / serial}
passes = [fake_loop("0100-0200", 2, 400.0, 4.0, 5.0, 2.0),     # dv, masked
          fake_loop("0300-0400", 9, 400.0, 10.0, 12.0, 2.0),   # dk, masked
          fake_loop("0500-0600", 9, 400.0, 9.0, 11.0, 2.0),    # dk
          fake_loop("0700-0800", 2, 400.0, 3.0, 4.0, 2.0)]     # dv
merged = profile.merged_passes(passes, 500.0, [1.0, 0.5])
equal((merged["passes"], merged["range"]), ([2, 3], "0500-0600+0700-0800"),
      "merged passes: the leanest loop of each kind, the most MMAs first")
equal((merged["flop"], merged["overlapped"], merged["no_overlap"], merged["cycles"]["smem"],
       merged["tensor_instructions"], merged["classes"]["tensor"]),
      (500.0, 10.5, 13.0, 5.25, 10.0, 10.0),
      "merged passes: cycles and counts added with the weights, the product's FLOP")
close(merged["ceiling_overlapped_tflops"], 2.0 * 500.0 / 10.5, "merged passes: ceiling per FLOP")
check(profile.merged_passes(passes[1:3], 500.0, [1.0, 0.5]) is None,
      "one kind of loop: no passes to merge")
equal(fa2.BWD_TILES[192], fa2.BWD_TILES[256], "FlashAttention-2 d192 takes d256's H100 tiles")

print("sassprof: %d checks passed" % checks.count)

"""Instruction classes (what the profile counts) and pipes (what the model bounds).

A class is what an instruction does for the kernel (tensor math, softmax
arithmetic, addressing, data movement...); a pipe is the execution unit that
limits its throughput (see machine.py). The two differ where SASS reuses a
unit: IMAD.MOV is a move on the FMA pipe, FMNMX a float op on the ALU.
"""

import collections
import re

CLASSES = [
    ("tensor", "HMMA / HGMMA / QGMMA (fp8 wgmma)"),
    ("mufu", "MUFU (ex2, rcp, lg2...)"),
    ("fp32", "FFMA / FMUL / FADD / FMNMX / FSETP / FSEL"),
    ("int", "integer / address (IADD3, IMAD, LOP3, SHF, ISETP, LEA, SEL, uniform U*)"),
    ("ldsm", "LDSM"),
    ("lds_sts", "LDS / STS"),
    ("ldg_stg", "LDG / STG"),
    ("async_copy", "LDGSTS (cp.async) / UTMALDG (TMA)"),
    ("barrier", "BAR / mbarrier (SYNCS) / DEPBAR / LDGDEPBAR / warpgroup sync"),
    ("shfl", "SHFL"),
    ("branch", "BRA / CALL / EXIT / BSSY / BSYNC / WARPSYNC"),
    ("move_cvt", "moves / conversions (MOV, IMAD.MOV, CS2R, S2R, F2FP, F2I, I2F...)"),
    ("local", "local memory (LDL / STL): spills"),
    ("other", "anything else (NOP, ...)"),
]
CLASS_NAMES = [name for name, _ in CLASSES]

TENSOR = {"HMMA", "HGMMA", "IMMA", "IGMMA", "DMMA", "BMMA", "QGMMA", "OMMA"}
FP32 = {"FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK", "FSWZADD",
        "HFMA2", "HADD2", "HMUL2", "HMNMX2", "HSETP2", "FRND"}
MOVES = {"MOV", "UMOV", "CS2R", "S2R", "S2UR", "R2UR", "F2FP", "F2I", "I2F", "F2F", "I2I",
         "I2FP", "F2IP", "PRMT", "UPRMT", "P2R", "R2P", "MOVM", "SHF_MOV", "ULDC", "LDC"}
BRANCH = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC",
          "BREAK", "BPT", "KILL", "YIELD"}
BARRIER = {"BAR", "DEPBAR", "LDGDEPBAR", "MEMBAR", "ARRIVES", "SYNCS", "WARPGROUP",
           "ERRBAR", "CCTL", "FENCE"}
ASYNC = {"LDGSTS", "UTMALDG", "UTMASTG", "UBLKCP", "UTMAPF", "UTMACCTL", "UTMACMDFLUSH"}
LDS_STS = {"LDS", "STS", "ATOMS", "LD", "ST"}
LDG_STG = {"LDG", "STG", "RED", "ATOMG", "ATOM"}
LOCAL = {"LDL", "STL"}
# Integer, logic and predicate ops, and their uniform-datapath (U*) forms.
INT_RE = re.compile(r"^U?(I[A-Z0-9]+|LOP3?|SHF|SEL|LEA|POPC|FLO|BMSK|BREV|SGXT|PLOP3|VOTEU?|"
                    r"ELECT|SHL|SHR)$")


def instruction_class(instr):
    op = instr.opcode
    if op in TENSOR:
        return "tensor"
    if op == "MUFU":
        return "mufu"
    if op in FP32:
        return "fp32"
    if op == "LDSM":
        return "ldsm"
    if op in LDS_STS:
        return "lds_sts"
    if op in LDG_STG:
        return "ldg_stg"
    if op in ASYNC:
        return "async_copy"
    if op in BARRIER:
        return "barrier"
    if op == "SHFL":
        return "shfl"
    if op in BRANCH:
        return "branch"
    if op == "IMAD" and "MOV" in instr.modifiers:
        return "move_cvt"
    if op in MOVES:
        return "move_cvt"
    if op in LOCAL:
        return "local"
    if op in ("NOP",):
        return "other"
    if INT_RE.match(op):
        return "int"
    return "other"


def pipe(instr):
    """The pipe that bounds the instruction's throughput (machine.py's keys),
    or None for instructions bounded only by issue (branches, barriers)."""
    op = instr.opcode
    cls = instruction_class(instr)
    if cls == "tensor":
        return "tensor"
    if op == "MUFU" or op in ("F2I", "I2F", "F2F", "I2I", "FRND", "I2FP", "F2IP"):
        return "xu"
    if op in ("FFMA", "FMUL", "FADD", "HFMA2", "HADD2", "HMUL2") or op in (
            "IMAD", "IMUL", "IDP", "IDP4A"):
        return "fma"
    if op.startswith("U"):
        return "uniform"
    if cls in ("ldsm", "lds_sts", "async_copy", "shfl", "ldg_stg", "local"):
        return "lsu"
    if cls in ("fp32", "int", "move_cvt"):
        return "alu"
    return None


def count_classes(instrs):
    counts = collections.OrderedDict((name, 0) for name in CLASS_NAMES)
    for instr in instrs:
        counts[instruction_class(instr)] += 1
    return counts


def count_mnemonics(instrs):
    return collections.Counter(instr.mnemonic for instr in instrs)

"""How a PTX kernel masks its scores: every `selp.f32 d, s, 0fFF800000, %p`
or `selp.f32 d, 0fFF800000, s, %p` (a score or -inf), and the `setp` that
defines each predicate.

Prints one line: the masking selects, how many of their predicates come
from a signed comparison of a register with an immediate, and how many
distinct registers those comparisons read (the per-row limits).
"""
import re
import sys

ptx = open(sys.argv[1]).read()
setp = {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
    r"setp\.\w+\.s32\s+(%p\d+),\s*(%r\d+),\s*(-?\d+|%r\d+);", ptx)}
# -inf on either side (LLVM may invert the comparison and swap the operands).
selects = re.findall(
    r"selp\.f32\s+%r\d+,\s*(?:%r\d+,\s*0fFF800000|0fFF800000,\s*%r\d+),\s*(%p\d+);", ptx)
immediate = [setp[p][0] for p in selects if p in setp and not setp[p][1].startswith("%")]
print("selects %d immediate %d limits %d" % (len(selects), len(immediate), len(set(immediate))))

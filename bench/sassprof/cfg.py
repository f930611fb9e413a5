"""Control-flow graph of a SASS function: basic blocks, dominators, natural loops.

Edges follow the control transfers ptxas emits:
  - BRA / JMP to a label: the target, plus the next instruction when guarded;
  - CALL.REL.NOINC to a local label (`.L_x_*`): ptxas's loop exit, a jump
    that does not come back, handled like BRA;
  - CALL to a subroutine (`$__internal_*`, a division slow path): falls
    through; the callee is not part of the caller's loops;
  - EXIT, RET, BRX/JMX (indirect): end the block; guarded EXIT falls through.
Labels nothing branches to (nvdisasm prints some for attribute tables) do not
start blocks. Only blocks reachable from the entry are analysed.
"""

import collections

JUMPS = {"BRA", "JMP"}
ENDS = {"EXIT", "RET", "BRX", "JMX", "KILL"}


def is_local_label(label):
    return label.startswith(".L")


def transfer(instr):
    """'jump' | 'call' | 'end' | None for an instruction."""
    if instr.opcode in JUMPS and instr.target:
        return "jump"
    if instr.opcode == "CALL":
        if instr.target and is_local_label(instr.target) and "NOINC" in instr.modifiers:
            return "jump"
        return "call"
    if instr.opcode in ENDS or instr.opcode in JUMPS:
        return "end"
    return None


class Block(object):
    def __init__(self, index, start):
        self.index = index
        self.start = start  # index of the first instruction in function.instructions
        self.end = start  # one past the last
        self.succs = []
        self.preds = []

    def __repr__(self):
        return "Block(%d, [%d, %d))" % (self.index, self.start, self.end)


class CFG(object):
    def __init__(self, function):
        self.function = function
        self.blocks = []
        self._build()
        self.reachable = self._reachable()
        self.idom = self._dominators()

    def instructions(self, block):
        return self.function.instructions[block.start:block.end]

    def _build(self):
        instrs = self.function.instructions
        index_of = {ins.address: i for i, ins in enumerate(instrs)}
        target_index = {}
        leaders = {0}
        for i, ins in enumerate(instrs):
            kind = transfer(ins)
            if kind is None:
                continue
            if kind == "jump":
                address = self.function.labels.get(ins.target)
                if address is None or address not in index_of:
                    raise ValueError("branch at /*%04x*/ to unknown label %s"
                                     % (ins.address, ins.target))
                target_index[i] = index_of[address]
                leaders.add(index_of[address])
            if i + 1 < len(instrs):
                leaders.add(i + 1)
        starts = sorted(leaders)
        block_at = {}
        for n, start in enumerate(starts):
            block = Block(n, start)
            block.end = starts[n + 1] if n + 1 < len(starts) else len(instrs)
            self.blocks.append(block)
            block_at[start] = block
        for block in self.blocks:
            last_index = block.end - 1
            last = instrs[last_index]
            kind = transfer(last)
            succs = []
            if kind == "jump":
                succs.append(block_at[target_index[last_index]])
            falls = kind is None or kind == "call" or last.predicated
            if falls and block.end < len(instrs):
                succs.append(block_at[block.end])
            for succ in succs:
                if succ not in block.succs:
                    block.succs.append(succ)
                    succ.preds.append(block)

    def _reachable(self):
        seen = set()
        stack = [self.blocks[0]] if self.blocks else []
        while stack:
            block = stack.pop()
            if block.index in seen:
                continue
            seen.add(block.index)
            stack.extend(block.succs)
        return seen

    def _reverse_postorder(self):
        order, seen = [], set()
        stack = [(self.blocks[0], iter(self.blocks[0].succs))] if self.blocks else []
        seen.add(0)
        while stack:
            block, it = stack[-1]
            advanced = False
            for succ in it:
                if succ.index not in seen:
                    seen.add(succ.index)
                    stack.append((succ, iter(succ.succs)))
                    advanced = True
                    break
            if not advanced:
                order.append(block)
                stack.pop()
        return list(reversed(order))

    def _dominators(self):
        """Immediate dominators (Cooper, Harvey, Kennedy's iterative algorithm)."""
        rpo = self._reverse_postorder()
        number = {b.index: n for n, b in enumerate(rpo)}
        idom = {rpo[0].index: rpo[0].index} if rpo else {}

        def intersect(a, b):
            while a != b:
                while number[a] > number[b]:
                    a = idom[a]
                while number[b] > number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for block in rpo[1:]:
                done = [p.index for p in block.preds if p.index in idom]
                if not done:
                    continue
                new = done[0]
                for other in done[1:]:
                    new = intersect(other, new)
                if idom.get(block.index) != new:
                    idom[block.index] = new
                    changed = True
        return idom

    def dominates(self, a, b):
        """Whether block index a dominates block index b."""
        while True:
            if a == b:
                return True
            parent = self.idom.get(b)
            if parent is None or parent == b:
                return False
            b = parent

    def loops(self):
        """Natural loops, one per header (back edges to a header merged),
        innermost first: Loop(header, blocks, latches)."""
        bodies = collections.OrderedDict()
        for block in self.blocks:
            if block.index not in self.reachable:
                continue
            for succ in block.succs:
                if self.dominates(succ.index, block.index):
                    body, latches = bodies.setdefault(succ.index, (set([succ.index]), []))
                    latches.append(block.index)
                    stack = [block]
                    while stack:
                        node = stack.pop()
                        if node.index in body:
                            continue
                        body.add(node.index)
                        stack.extend(p for p in node.preds if p.index in self.reachable)
        loops = [Loop(self, header, body, latches)
                 for header, (body, latches) in bodies.items()]
        loops.sort(key=lambda loop: len(loop.blocks))
        for loop in loops:
            loop.inner = [other for other in loops
                          if other is not loop and other.blocks < loop.blocks]
        return loops


class Loop(object):
    def __init__(self, cfg, header, blocks, latches):
        self.cfg = cfg
        self.header = header
        self.blocks = frozenset(blocks)
        self.latches = sorted(latches)
        self.inner = []

    def instructions(self):
        """The body's instructions, each once, in address order."""
        out = []
        for index in sorted(self.blocks):
            out.extend(self.cfg.instructions(self.cfg.blocks[index]))
        return out

    def conditional_blocks(self):
        """Body blocks that not every iteration runs: those that do not
        dominate every latch."""
        return sorted(b for b in self.blocks
                      if not all(self.cfg.dominates(b, latch) for latch in self.latches))

    @property
    def address_range(self):
        instrs = self.instructions()
        return instrs[0].address, instrs[-1].address

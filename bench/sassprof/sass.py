"""Parses nvdisasm's SASS listing into functions and instructions.

The input is what `nvdisasm -c FILE.cubin` prints: per kernel a
`.text.NAME` section with `.sectioninfo @"SHI_REGISTERS=N"`, labels
(`.L_x_12:`) and instruction lines

    /*04f0*/   @!P4 BRA `(.L_x_0) ;

(address, optional guard predicate, opcode with dot modifiers, operands;
branch and call targets are written `(LABEL)` between backquotes).
"""

import collections
import re

SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
REGISTERS_RE = re.compile(r'SHI_REGISTERS=(\d+)')
LABEL_RE = re.compile(r"^\s*([.$\w]+):\s*$")
INSTR_RE = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;")
GUARD_RE = re.compile(r"^@(!?)(U?P[0-9T])\s+")
TARGET_RE = re.compile(r"`\(([^)]+)\)")


class Instruction(collections.namedtuple(
        "Instruction", "address guard opcode modifiers operands target text")):
    """One SASS instruction.

    address: byte offset in the function; guard: '' or the predicate that
    guards it ('P4', '!P4', 'UP0'; '@PT' is dropped as always-true); opcode:
    'HMMA'; modifiers: ('16816', 'F32'); operands: the text after the opcode;
    target: the label a branch or call names, else None; text: the line.
    """

    @property
    def mnemonic(self):
        return ".".join((self.opcode,) + self.modifiers)

    @property
    def predicated(self):
        return bool(self.guard)


class Function(object):
    """A kernel's text section: its instructions and label addresses."""

    def __init__(self, name):
        self.name = name
        self.registers = None
        self.instructions = []
        self.labels = {}  # label -> address of the instruction it precedes

    def __repr__(self):
        return "Function(%s, %d instructions)" % (self.name, len(self.instructions))


def parse_instruction(address, body, line):
    guard = ""
    match = GUARD_RE.match(body)
    if match:
        guard = match.group(1) + match.group(2)
        body = body[match.end():]
        if guard == "PT":
            guard = ""
    head, _, operands = body.partition(" ")
    parts = head.split(".")
    target = TARGET_RE.search(operands)
    return Instruction(address, guard, parts[0], tuple(parts[1:]), operands.strip(),
                       target.group(1) if target else None, line.strip())


def parse(text):
    """Returns the functions of an nvdisasm listing, in order."""
    functions = []
    current = None
    pending_labels = []
    for line in text.splitlines():
        section = SECTION_RE.match(line)
        if section:
            current = Function(section.group(1))
            functions.append(current)
            pending_labels = []
            continue
        if current is None:
            continue
        registers = REGISTERS_RE.search(line)
        if registers and current.registers is None:
            current.registers = int(registers.group(1))
            continue
        label = LABEL_RE.match(line)
        if label:
            pending_labels.append(label.group(1))
            continue
        instr = INSTR_RE.match(line)
        if instr:
            address = int(instr.group(1), 16)
            for name in pending_labels:
                current.labels[name] = address
            pending_labels = []
            current.instructions.append(parse_instruction(address, instr.group(2), line))
    return functions


def find_function(functions, name=None):
    """The function called name, or the only/largest one when name is None."""
    if name is not None:
        for function in functions:
            if function.name == name:
                return function
        raise KeyError("no function %r in the listing (have: %s)"
                       % (name, ", ".join(f.name for f in functions)))
    if not functions:
        raise KeyError("the listing has no .text section")
    return max(functions, key=lambda f: len(f.instructions))

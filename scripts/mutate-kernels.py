#!/usr/bin/env python3
"""Mutation fuzzer: mutates the kernels of kernels/ token by token and drives
each mutant through `flashc --emit=ptx` and through `flashc run` on the
interpreter and the emulator on small shapes. A finding is a crash, an
internal error (exit 2), a hang (over --timeout), an error without a
location, or interp and emulate both succeeding with different outputs.
Mutants the compiler rejects with a located error are fine: that is what it
should do with bad input.

  python3 scripts/mutate-kernels.py [--seconds 600 | --count N] [--seed S]
      [--kernels kernels] [--only softmax.tile,...] [--findings DIR]
      [--flashc build/bin/flashc] [--timeout 30] [--python]

With --python, every mutant that ran on the interpreter goes through the
Python package too (in a child process, build/python): flashc.compile must
give flashc's PTX, and a call on the same arrays made hostile (big-endian,
strided, reversed) must give the bytes `flashc run --target=interp` wrote.
scripts/fuzz-python.py fuzzes the package's arguments on its own.

Each finding is saved as DIR/finding-N.tile (the mutant; it imports from
kernels/ with -I) with the command and its output in finding-N.txt. A fixed
finding becomes a regression test (test/Frontend/fuzz-corpus for front-end
inputs, a lit test otherwise). Prints a summary line; exits 1 if anything
was found.
"""
import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+\.\d*(?:e-?\d+)?|\d+|<=|>=|==|!=|&&|\|\||[-+*/%<>()\[\]{},:;=.!]")
INTS = ["0", "1", "2", "3", "7", "15", "16", "17", "64", "100", "4096", "65536", "2147483647"]
OPS = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)


def mutate(text, rng):
    """One random token- or line-level edit of `text`."""
    lines = text.split("\n")
    code = [i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith("#")]
    kind = rng.choice(["int", "int", "op", "ident", "delete", "duplicate", "swap", "bool", "token"])
    if kind in ("delete", "duplicate", "swap") and code:
        i = rng.choice(code)
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        else:
            j = rng.choice(code)
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines), f"{kind} line {i + 1}"
    i = rng.choice(code)
    toks = [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(lines[i])]
    if not toks:
        return text, "none"
    pick = {"int": lambda t: t.isdigit(), "op": lambda t: t in OPS,
            "ident": lambda t: t[0].isalpha() or t[0] == "_",
            "bool": lambda t: t in ("true", "false"), "token": lambda t: True}[kind]
    cands = [t for t in toks if pick(t[2])] or toks
    s, e, tok = rng.choice(cands)
    if kind == "int" or tok.isdigit():
        new = rng.choice(INTS)
    elif kind == "op" or tok in OPS:
        new = rng.choice(OPS)
    elif kind == "bool":
        new = "false" if tok == "true" else "true"
    elif kind == "ident":
        idents = sorted({t for t in TOKEN.findall(text) if t[0].isalpha() or t[0] == "_"})
        new = rng.choice(idents)
    else:
        new = rng.choice(["", "(", ")", "[", "]", ",", ":", "0", "-", "None", "axis = 0"])
    lines[i] = lines[i][:s] + new + lines[i][e:]
    return "\n".join(lines), f"line {i + 1}: '{tok}' -> '{new}'"


def run(cmd, timeout):
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return "timeout", "", time.monotonic() - start


def compile_verdict(rc, err):
    """None when the compiler behaved; else what is wrong."""
    if rc == 0:
        return None
    if rc == 1 and (LOCATED.search(err) or "flashc: error:" in err):
        return None
    return f"exit {rc}"


PARAM = re.compile(r'(?:!tile\.global<\[([^\]]*)\], (\w+)>|(f32|f16|bf16|i32|i1)) \{tile\.name = "(\w+)"\}')
DTYPES = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i1": np.bool_, "bf16": np.uint16}


def make_args(ir, tmp, rng):
    """--arg values for the kernel's parameters, small shapes: B* and H*
    symbols 1, the others one size per mutant."""
    head = next((l for l in ir.split("\n") if "tile.num_warps" in l and "func.func" in l), "")
    size = rng.choice([1, 5, 17, 40])
    args, outs = [], []
    for dims, elem, scalar, name in PARAM.findall(head):
        if scalar:
            value = {"f32": "0.125", "f16": "0.5", "bf16": "0.5", "i32": "3", "i1": "1"}[scalar]
            args.append(f"{name}={value}")
            continue
        shape = [int(d) if d.isdigit() else 1 if d[0] in "BH" else size
                 for d in dims.split(", ") if d]
        data = np.random.default_rng(len(args)).standard_normal(shape)
        arr = (data > 0) if elem == "i1" else (data * 4).astype(np.int32) if elem == "i32" else data
        if elem == "bf16":
            arr = (np.asarray(arr, np.float32).view(np.uint32) >> 16).astype(np.uint16)
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, np.asarray(arr).astype(DTYPES[elem]))
        args.append(f"{name}={path}")
        outs.append(name)
    return args, outs


def load_f64(path):
    """An output as float64; bf16 ('<V2', as flashc writes it) from its bits."""
    arr = np.load(path)
    if arr.dtype.kind == "V":
        arr = (arr.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return arr.astype(np.float64)


def same(a, b):
    x, y = load_f64(a), load_f64(b)
    if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
        return False
    x, y = np.nan_to_num(x, nan=0.0), np.nan_to_num(y, nan=0.0)
    scale = max(1.0, float(np.abs(x[np.isfinite(x)]).max(initial=0)))
    return np.allclose(x, y, rtol=2e-2, atol=2e-2 * scale, equal_nan=True)


PYTHON_CHECK = r"""
import json, re, sys
import numpy as np
import flashc
src, kdir, tmp, spec = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
k = flashc.compile(src, import_dirs=[kdir])
if k.ptx != open(tmp + "/m.ptx").read():
    sys.exit("flashc.compile's PTX differs from flashc's")
rng = np.random.default_rng(spec["seed"])
args = {}
for text in spec["args"]:
    name, value = text.split("=", 1)
    if not value.endswith(".npy"):
        args[name] = int(value) if re.fullmatch(r"-?\d+", value) else float(value)
        continue
    array = np.load(value)
    how = rng.choice(["as is", "big-endian", "strided", "reversed"])
    if how == "big-endian" and array.dtype.kind in "fiu":
        array = array.astype(array.dtype.newbyteorder(">"))
    elif how in ("strided", "reversed") and array.ndim and array.size:
        big = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), array.dtype)
        view = big[..., ::2] if how == "strided" else big[..., ::-2]
        view[...] = array
        array = view
    args[name] = array
k(**args, target="interp")
for name in spec["outs"]:
    want = np.load(f"{tmp}/interp-{name}.npy")
    got = np.ascontiguousarray(args[name], args[name].dtype.newbyteorder("<")
                               if args[name].dtype.byteorder == ">" else args[name].dtype)
    if got.tobytes() != want.tobytes():
        sys.exit(f"output {name} differs from flashc run's")
"""


def check_python(flashc, kdir, src, tmp, args, outs, rng, timeout):
    """None, or how the Python package disagrees with flashc on the mutant."""
    package = os.path.join(os.path.dirname(os.path.dirname(flashc)), "python")
    env = dict(os.environ, PYTHONPATH=package, FLASHC_CACHE_DIR=os.path.join(tmp, "cache"))
    spec = json.dumps({"args": args, "outs": outs, "seed": rng.randrange(1 << 30)})
    cmd = [sys.executable, "-c", PYTHON_CHECK, src, kdir, tmp, spec]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "python: timeout"
    if r.returncode != 0:
        return f"python: exit {r.returncode}\n{r.stderr[-3000:]}"
    return None


def check_mutant(flashc, kdir, src, tmp, rng, timeout, python=False):
    """(finding or None, what ran)."""
    base = [flashc, src, f"-I{kdir}"]
    rc, err, _ = run(base + ["--emit=ptx", "-o", os.path.join(tmp, "m.ptx")], timeout)
    if (bad := compile_verdict(rc, err)):
        return f"--emit=ptx: {bad}\n{err}", "ptx"
    if rc != 0:
        return None, "rejected"
    r = subprocess.run(base + ["--emit=tile"], capture_output=True, text=True, timeout=timeout)
    args, outs = make_args(r.stdout, tmp, rng)
    results = {}
    for target in ("interp", "emulate"):
        cmd = [flashc, "run", src, f"-I{kdir}", "--target=" + target]
        cmd += [a for x in args for a in ("--arg", x)]
        cmd += [a for o in outs for a in ("--out", f"{o}={tmp}/{target}-{o}.npy")]
        rc, err, _ = run(cmd, timeout)
        if (bad := compile_verdict(rc, err)):
            return f"run --target={target}: {bad}\n{' '.join(cmd)}\n{err}", "run"
        results[target] = rc
    if python and results["interp"] == 0:
        if (bad := check_python(flashc, kdir, src, tmp, args, outs, rng, timeout)):
            return bad, "run"
    if results["interp"] == 0 and results["emulate"] == 0:
        for o in outs:
            if not same(f"{tmp}/interp-{o}.npy", f"{tmp}/emulate-{o}.npy"):
                return f"interp and emulate differ in output {o}", "run"
        return None, "ran"
    return None, "run-rejected"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--kernels", default=os.path.join(root, "kernels"))
    ap.add_argument("--only", default="")
    ap.add_argument("--findings", default="fuzz-findings")
    ap.add_argument("--flashc", default=os.path.join(root, "build/bin/flashc"))
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--python", action="store_true",
                    help="also check the mutants that run through the Python package")
    args = ap.parse_args()
    if not args.seconds and not args.count:
        args.count = 20
    rng = random.Random(args.seed)
    only = [o for o in args.only.split(",") if o]
    kernels = [k for k in sorted(glob.glob(os.path.join(args.kernels, "*.tile")))
               if not only or os.path.basename(k) in only]
    stats = {"ptx": 0, "rejected": 0, "ran": 0, "run": 0, "run-rejected": 0}
    findings, n, start = 0, 0, time.monotonic()
    while (args.count and n < args.count) or (args.seconds and time.monotonic() - start < args.seconds):
        kernel = rng.choice(kernels)
        text = open(kernel).read()
        for _ in range(rng.choice([1, 1, 1, 2])):
            text, how = mutate(text, rng)
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, os.path.basename(kernel))
            open(src, "w").write(text)
            finding, what = check_mutant(args.flashc, args.kernels, src, tmp, rng, args.timeout,
                                         args.python)
        stats[what] += 1
        if finding:
            findings += 1
            os.makedirs(args.findings, exist_ok=True)
            path = os.path.join(args.findings, f"finding-{args.seed}-{n}")
            open(path + ".tile", "w").write(text)
            open(path + ".txt", "w").write(f"{os.path.basename(kernel)} ({how}):\n{finding}\n")
            print(f"FINDING {path}.tile: {finding.splitlines()[0]}", flush=True)
    secs = time.monotonic() - start
    print(f"mutation fuzzer: seed {args.seed}, {n} mutants of {len(kernels)} kernels in "
          f"{secs:.0f} s: {stats['rejected']} rejected with a located error, "
          f"{stats['ran'] + stats['run-rejected']} compiled to PTX and run on interp and "
          f"emulate ({stats['ran']} compared equal, {stats['run-rejected']} rejected at run "
          f"time); {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

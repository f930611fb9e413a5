#!/usr/bin/env python3
"""Python-package fuzzer: calls kernels through the flashc package with
hostile arguments and a damaged kernel cache, as a careless or hostile user
would. Each case runs a kernel twice, on clean arguments (C-contiguous,
little-endian, writable, one array per parameter) and on the same values
made hostile: another dtype, big-endian, strided or reversed views, one
array for two parameters, read-only flags, a wrong rank; scalars from huge
integers to inf, nan, numpy scalars, strings. Other cases damage a cache
entry (emptied, truncated, edited, removed files, a folder for a file) or
point the cache at an unwritable place, and compile odd paths (a
directory, a device, bytes that are not text).

A finding is a crash, an exception outside the package's contract
(flashc.Error, TypeError, ValueError, OSError for paths), an error without
"error:" in its message, a hostile call that succeeds where it must fail
(a read-only array the kernel writes, two written parameters on one array,
a wrong dtype or rank) or fails where the clean one succeeded, any array
changed by a call that raised, a result that differs from the clean run's,
an input changed, or a kernel compiled from a damaged cache whose PTX
differs from a fresh compile.

  PYTHONPATH=build/python python3 scripts/fuzz-python.py [--seconds 600 |
      --count N] [--seed S] [--findings DIR] [--targets interp,emulate]

Cases run in a worker process (a crash ends the worker, not the fuzzer:
the case it was running is the finding); each finding is written to
DIR/python-SEED-N.txt with the case. Prints a summary; exits 1 if anything
was found.
"""
import argparse
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCES = {
    "double": """\
kernel double(X: f16[N], Y: f16[N], s: f32) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  store(Y[i : i + 64], load(X[i : i + 64]) * cast(s, f16));
}
""",
    "two": """\
kernel two(X: f32[N], Y: f32[N], Z: f32[N]) {
  grid(cdiv(N, 64));
  let i = program_id(0) * 64;
  let x = load(X[i : i + 64]);
  store(Y[i : i + 64], x + 1.0);
  store(Z[i : i + 64], x * 2.0);
}
""",
    "select": """\
kernel select(M: bool[R, C], X: i32[R, C], Y: i32[R, C], b: i32) {
  grid(cdiv(R, 16));
  let r = program_id(0) * 16;
  let x = load(X[r : r + 16, 0 : 32]);
  store(Y[r : r + 16, 0 : 32], where(load(M[r : r + 16, 0 : 32]), x + b, x - b));
}
""",
    "bf16": """\
kernel halve(X: bf16[N], Y: bf16[N]) {
  grid(cdiv(N, 32));
  let i = program_id(0) * 32;
  store(Y[i : i + 32], load(X[i : i + 32]) * cast(0.5, bf16));
}
""",
}
# name -> [(param, element type, dims (symbols or sizes) or None for a scalar)]
PARAMS = {
    "double": [("X", "f16", ["N"]), ("Y", "f16", ["N"]), ("s", "f32", None)],
    "two": [("X", "f32", ["N"]), ("Y", "f32", ["N"]), ("Z", "f32", ["N"])],
    "select": [("M", "bool", ["R", 32]), ("X", "i32", ["R", 32]), ("Y", "i32", ["R", 32]),
               ("b", "i32", None)],
    "bf16": [("X", "bf16", ["N"]), ("Y", "bf16", ["N"])],
    "fa2": [("Q", "f16", ["B", "H", "Nq", 16]), ("K", "f16", ["B", "H", "Nk", 16]),
            ("V", "f16", ["B", "H", "Nk", 16]), ("O", "f16", ["B", "H", "Nq", 16]),
            ("sm_scale", "f32", None)],
}
SCALARS = {
    "f32": [0.5, 2.0, -3.0, 0.0, -0.0, float("inf"), float("nan"), 1e-45, 3.4e38, 1e39,
            10**400, -10**400, 2**31, True, np.float16(1.5), np.float64(0.25), np.int64(7),
            "2.0", None, 1 + 2j, [1.0]],
    "i32": [0, 1, -5, 2**31 - 1, -2**31, 2**31, -2**31 - 1, 10**400, True, np.int32(3),
            np.uint64(2**63), 2.5, float("nan"), "3", None],
}
OTHER_DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint16", "bool",
                "complex64", "int8", "float128"]


def element_dtype(elem):
    if elem == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"f16": "float16", "f32": "float32", "i32": "int32", "bool": "bool"}[elem])


def random_values(rng, elem, shape):
    """Small integers (exact in every type) with a few special values."""
    data = rng.integers(-8, 9, size=shape)
    if elem == "bool":
        return data > 0
    values = data.astype(element_dtype(elem))
    if elem != "i32" and values.size and rng.random() < 0.3:
        flat = values.reshape(-1)
        flat[rng.integers(0, flat.size)] = rng.choice([np.inf, -np.inf, np.nan, -0.0])
    return values


class Case:
    """One hostile call and what it should do."""

    def __init__(self, rng, name, target):
        self.name, self.target = name, target
        sizes = {s: int(rng.choice([1, 5, 16, 17, 64, 100, 128]))
                 for s in ("N", "R", "Nq", "Nk")}
        sizes.update(B=1, H=int(rng.choice([1, 2])))
        self.clean, self.hostile, self.notes = {}, {}, []
        self.must_fail = []  # why the hostile call must raise
        self.aliases = {}  # param -> the param whose array it shares
        params = PARAMS[name]
        for param, elem, dims in params:
            if dims is None:
                value = SCALARS[elem][rng.integers(len(SCALARS[elem]))]
                self.clean[param] = self.hostile[param] = value
                self.notes.append(f"{param}={value!r}")
                continue
            shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
            self.clean[param] = random_values(rng, elem, shape)
        tensors = [p for p, _, dims in params if dims is not None]
        for param in tensors:
            same = [q for q in tensors if q != param and q not in self.aliases
                    and param not in self.aliases.values()
                    and self.clean[q].dtype == self.clean[param].dtype
                    and self.clean[q].shape == self.clean[param].shape]
            if same and rng.random() < 0.15:
                other = rng.choice(same)
                self.aliases[param] = other
                self.clean[param] = self.clean[other].copy()
                self.notes.append(f"{param} is {other}'s array")
        for param in tensors:
            if param in self.aliases:
                continue
            self.hostile[param] = self.make_hostile(rng, param, self.clean[param])
        for param, other in self.aliases.items():
            self.hostile[param] = self.hostile[other]

    def make_hostile(self, rng, param, clean):
        array = clean.copy()
        roll = rng.random()
        if roll < 0.1:
            # uint16 is bf16's other spelling (its bits), by contract.
            dtype = rng.choice([d for d in OTHER_DTYPES
                                if not (d == "uint16" and clean.dtype.name == "bfloat16")])
            try:
                array = array.astype(dtype)
            except TypeError:
                pass
            if array.dtype.name != clean.dtype.name:
                self.must_fail.append(f"{param} is {array.dtype.name}")
            self.notes.append(f"{param} as {array.dtype.name}")
        elif roll < 0.14 and array.ndim > 1:
            array = array.reshape(-1)
            self.must_fail.append(f"{param} has rank 1")
            self.notes.append(f"{param} flattened")
        if array.dtype.byteorder != "|" and array.dtype.kind in "fiuc" and rng.random() < 0.35:
            try:
                array = array.astype(array.dtype.newbyteorder(">"))
                self.notes.append(f"{param} big-endian")
            except TypeError:
                pass
        layout = rng.choice(["contiguous", "step", "reversed", "fortran", "offset"])
        if array.ndim and array.size and layout != "contiguous":
            if layout == "step":
                big = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), array.dtype)
                view = big[..., ::2]
            elif layout == "reversed":
                view = np.zeros_like(array)[..., ::-1]
            elif layout == "fortran":
                view = np.asfortranarray(np.zeros_like(array))
            else:
                big = np.zeros(array.size + 1, array.dtype)
                view = big[1:].reshape(array.shape)
            view[...] = array
            array = view
            self.notes.append(f"{param} {layout}")
        if rng.random() < 0.15:
            array.flags.writeable = False
            self.notes.append(f"{param} read-only")
        return array

    def describe(self):
        return f"{self.name} on {self.target}: " + ", ".join(self.notes)


ALLOWED = (TypeError, ValueError)


def snapshot(arrays):
    return {k: (v.dtype, v.copy()) for k, v in arrays.items() if isinstance(v, np.ndarray)}


def same_values(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "V" or b.dtype.kind == "V" or "bfloat16" in (a.dtype.name, b.dtype.name):
        a, b = a.astype(np.float32), b.astype(np.float32)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc")


def error_ok(error, flashc):
    if isinstance(error, flashc.Error):
        return "error:" in str(error)
    return isinstance(error, ALLOWED)


def check_call(kernels, case, flashc):
    """None, or what went wrong."""
    kernel = kernels[case.name]
    clean_in = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in case.clean.items()}
    try:
        kernel(**clean_in, target=case.target)
        clean_error = None
    except Exception as error:  # noqa: BLE001 - judged below
        if not error_ok(error, flashc):
            return f"clean call raised {type(error).__name__}: {error}"
        clean_error = error
    # Written: the kernel changed the bytes (writing -0.0 over 0.0 is a
    # write), as the package decides.
    written = {k for k, v in clean_in.items()
               if isinstance(v, np.ndarray) and v.tobytes() != case.clean[k].tobytes()}
    must_fail = list(case.must_fail)
    for param in written:
        if not case.hostile[param].flags.writeable:
            must_fail.append(f"{param} is written and read-only")
    # The parameters that share one array: its final contents are what the
    # one written member got; two written members must fail.
    groups = {}
    for k, v in clean_in.items():
        if isinstance(v, np.ndarray):
            groups.setdefault(case.aliases.get(k, k), []).append(k)
    final = {}
    for members in groups.values():
        writers = [m for m in members if m in written]
        if len(writers) > 1:
            must_fail.append(f"{' and '.join(writers)} are written on one array")
        for m in members:
            final[m] = clean_in[writers[0]] if writers else case.clean[m]
    before = snapshot(case.hostile)
    try:
        kernel(**case.hostile, target=case.target)
        hostile_error = None
    except Exception as error:  # noqa: BLE001 - judged below
        if not error_ok(error, flashc):
            return f"raised {type(error).__name__}: {error}\n{traceback.format_exc()}"
        hostile_error = error
    if hostile_error is not None:
        for k, (dtype, values) in before.items():
            if case.hostile[k].dtype != dtype or case.hostile[k].tobytes() != values.tobytes():
                return f"{k} changed by a call that raised {hostile_error}"
        if clean_error is None and not must_fail:
            return f"raised where the clean call ran: {type(hostile_error).__name__}: {hostile_error}"
        return None
    if must_fail and clean_error is None:
        return f"ran, but must fail: {'; '.join(must_fail)}"
    if clean_error is not None and not must_fail:
        return f"ran, but the clean call raised {clean_error}"
    if clean_error is not None:
        return None
    for k, (dtype, values) in before.items():
        expected = final[k]
        if case.hostile[k].dtype != dtype:
            return f"{k} changed dtype to {case.hostile[k].dtype}"
        if not same_values(case.hostile[k], expected):
            what = "result" if k in written else "input"
            return f"{what} {k} differs from the clean run"
    return None


def damage(rng, entry):
    """One kind of damage to a cache entry folder; its name."""
    files = sorted(os.listdir(entry))
    kind = rng.choice(["empty", "truncate", "flip", "remove", "folder", "entry-file",
                       "garbage-digest"])
    target = os.path.join(entry, rng.choice(files)) if files else entry
    if kind == "entry-file":
        shutil.rmtree(entry)
        open(entry, "w").write("not a folder")
    elif kind == "remove":
        os.remove(target)
    elif kind == "folder":
        os.remove(target)
        os.mkdir(target)
    else:
        data = open(target, "rb").read()
        if kind == "empty":
            data = b""
        elif kind == "truncate":
            data = data[: rng.randrange(len(data) + 1)]
        elif kind == "flip" and data:
            i = rng.randrange(len(data))
            data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
        else:
            data = os.urandom(64)
        open(target, "wb").write(data)
    return f"{kind} {os.path.basename(target)}"


def check_cache(rng, flashc, scratch):
    """Damage an entry, or make the cache unwritable; the PTX must stay."""
    source = SOURCES["two"].replace("x + 1.0", f"x + {rng.randrange(1000)}.0")
    cache_dir = os.path.join(scratch, "cache")
    os.environ["FLASHC_CACHE_DIR"] = cache_dir
    fresh = flashc.compile(source).ptx
    entries = [os.path.join(cache_dir, d, e) for d in os.listdir(cache_dir)
               for e in os.listdir(os.path.join(cache_dir, d)) if not e.startswith(".")]
    blocker = os.path.join(scratch, "blocker")
    if rng.random() < 0.2:
        where = rng.choice(["under-file", "read-only"])
        if where == "under-file":
            open(blocker, "w").write("x")
            os.environ["FLASHC_CACHE_DIR"] = os.path.join(blocker, "cache")
        else:
            os.makedirs(blocker)
            os.chmod(blocker, stat.S_IRUSR | stat.S_IXUSR)
            os.environ["FLASHC_CACHE_DIR"] = blocker
        how = f"cache {where}"
    else:
        how = damage(rng, entries[0])
    try:
        ptx = flashc.compile(source).ptx
        again = flashc.compile(source).ptx
    except Exception as error:  # noqa: BLE001 - judged here
        return f"cache ({how}): {type(error).__name__}: {error}", how
    finally:
        os.environ["FLASHC_CACHE_DIR"] = cache_dir
        if os.path.isdir(blocker):
            os.chmod(blocker, stat.S_IRWXU)
    if ptx != fresh or again != fresh:
        return f"cache ({how}): the PTX differs from a fresh compile", how
    return None, how


def check_path(rng, flashc, scratch):
    """compile() on odd paths and odd bytes: a compiled kernel or an error
    of the contract."""
    kind = rng.choice(["directory", "device", "bytes", "bytes-path", "empty"])
    path = os.path.join(scratch, "odd.tile")
    if kind == "directory":
        arg = scratch
    elif kind == "device":
        arg = rng.choice(["/dev/null", "/dev/zero", "/dev/urandom"])
    else:
        text = SOURCES["double"].encode()
        i = rng.randrange(len(text))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        open(path, "wb").write(b"" if kind == "empty" else text[:i] + junk + text[i:])
        arg = os.fsencode(path) if kind == "bytes-path" else path
    try:
        flashc.compile(arg).ptx
    except (flashc.CompileError, IsADirectoryError) as error:
        if isinstance(error, flashc.CompileError) and "error:" not in str(error):
            return f"compile({kind}): an error without 'error:': {error}", kind
    except Exception as error:  # noqa: BLE001 - judged here
        return f"compile({kind}): {type(error).__name__}: {error}", kind
    return None, kind


def worker(args):
    """Runs cases until told to stop; one JSON line per case on stdout,
    written before the case runs (a crash leaves it as the last line)."""
    import flashc

    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    scratch = tempfile.mkdtemp(prefix="fuzz-python-")
    os.environ["FLASHC_CACHE_DIR"] = os.path.join(scratch, "cache")
    kernels = {name: flashc.compile(src) for name, src in SOURCES.items()}
    kernels["fa2"] = flashc.compile(os.path.join(ROOT, "kernels", "fa2.tile"), HEAD_DIM=16)
    targets = args.targets.split(",")
    deadline = time.monotonic() + args.seconds
    n = 0
    while time.monotonic() < deadline and (not args.count or n < args.count):
        n += 1
        roll = rng.random()
        if roll < 0.08:
            print(json.dumps({"case": "cache"}), flush=True)
            finding, how = check_cache(rng, flashc, tempfile.mkdtemp(dir=scratch))
        elif roll < 0.14:
            print(json.dumps({"case": "path"}), flush=True)
            finding, how = check_path(rng, flashc, tempfile.mkdtemp(dir=scratch))
        else:
            name = rng.choice(list(PARAMS) if rng.random() < 0.1 else list(SOURCES))
            case = Case(nrng, name, rng.choice(targets))
            how = case.describe()
            print(json.dumps({"case": how}), flush=True)
            try:
                finding = check_call(kernels, case, flashc)
            except Exception:  # noqa: BLE001 - the fuzzer's own failure is one too
                finding = "fuzzer: " + traceback.format_exc()
        print(json.dumps({"done": how, "finding": finding}), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--findings", default="fuzz-findings")
    ap.add_argument("--targets", default="interp,emulate")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds one case may take before it counts as a hang")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if not args.seconds and not args.count:
        args.count = 50
    start = time.monotonic()
    seed, cases, findings, crashes = args.seed, 0, 0, 0
    while True:
        left = args.seconds - (time.monotonic() - start) if args.seconds else 1e9
        if left <= 0 or (args.count and cases >= args.count):
            break
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed),
               "--seconds", str(left), "--count", str(args.count - cases if args.count else 0),
               "--targets", args.targets]
        returncode, out, err = run_worker(cmd, args.timeout)
        last = None
        for line in out.splitlines():
            record = json.loads(line)
            if "case" in record:
                last = record["case"]
                continue
            cases += 1
            last = None
            if record["finding"]:
                findings += 1
                report(args, seed, cases, record["done"], record["finding"])
        if returncode != 0:
            cases += 1
            findings += 1
            crashes += 1
            what = "hung" if returncode == "hang" else f"exited with {returncode}"
            report(args, seed, cases, last or "(start-up)", f"worker {what}\n{err[-4000:]}")
        seed += 1
    print(f"python fuzzer: seed {args.seed}, {cases} cases in {time.monotonic() - start:.0f} s "
          f"({crashes} crashes); {findings} findings", flush=True)
    return 1 if findings else 0


def run_worker(cmd, timeout):
    """(exit code or "hang", stdout, stderr): a worker silent for `timeout`
    seconds (one case running that long) is killed."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        size, quiet = 0, 0.0
        while proc.poll() is None:
            time.sleep(0.5)
            now = os.fstat(out.fileno()).st_size
            quiet = 0.0 if now != size else quiet + 0.5
            size = now
            if quiet > timeout:
                proc.kill()
                proc.wait()
                out.seek(0)
                err.seek(0)
                return "hang", out.read(), err.read()
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read()


def report(args, seed, n, case, finding):
    os.makedirs(args.findings, exist_ok=True)
    path = os.path.join(args.findings, f"python-{seed}-{n}.txt")
    with open(path, "w") as f:
        f.write(f"seed {seed}, case {n}: {case}\n{finding}\n")
    print(f"FINDING {path}: {case}: {finding.splitlines()[0] if finding else ''}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

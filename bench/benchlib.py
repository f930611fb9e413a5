"""Pure helpers of the flashc GPU benchmark (no torch, no cupy, no GPU).

Everything here runs on any machine with Python 3 (the plot needs matplotlib,
imported only by `write_plot`): the benchmark grid, the launch-sidecar grid
expressions, the argument packing plan, and the CSV -> Markdown / PNG
rendering. bench_attention.py (GPU), compile_kernels.py and report.py (CPU)
share it; test/Bench tests it without a GPU.
"""

import csv
import json
import os
import re
import sys
from dataclasses import dataclass

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What each kernel takes, its reference and its tolerance: one spec per kernel,
# shared with the kernel tests.
sys.path.insert(0, os.path.join(REPO_ROOT, "test", "Kernels"))
from kernel_specs import SPECS  # noqa: E402


def _supported_archs():
    """flashc's arch table (include/flashc/Runtime/Arch.h, kSupportedArchs):
    what flashc --arch accepts. test/Bench/archs.test checks the reading
    against flashc --help."""
    path = os.path.join(REPO_ROOT, "include", "flashc", "Runtime", "Arch.h")
    with open(path) as f:
        table = re.search(r"kSupportedArchs\[\] = \{(.*?)\};", f.read(), re.S)
    archs = tuple(re.findall(r'\{"(sm_[0-9]+a?)"', table.group(1))) if table else ()
    if not archs:
        raise RuntimeError(f"{path}: no kSupportedArchs table")
    return archs


# --------------------------------------------------------------------------
# The benchmark grid (FlashAttention papers: batch x seqlen = 16k tokens,
# hidden 2048, so D 64 -> 32 heads, D 128 -> 16 heads).
# --------------------------------------------------------------------------

# flashc's attention kernels, which SDPA is the baseline of.
FLASHC_KERNELS = tuple(name for name, spec in SPECS.items() if spec.attention)
SDPA_BACKENDS = ("flash", "cudnn", "efficient")
# What --impls accepts, in table / plot order.
IMPLS = FLASHC_KERNELS + tuple("sdpa-" + b for b in SDPA_BACKENDS)
DEFAULT_SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)
DEFAULT_HEAD_DIMS = (64, 128)
DEFAULT_TOKENS = 16384
DEFAULT_HIDDEN = 2048
ARCHS = _supported_archs()

CSV_COLUMNS = ("kernel", "backend", "seqlen", "batch", "heads", "head_dim",
               "causal", "ms", "tflops", "max_abs_err", "rel_err", "status")


class UsageError(Exception):
    """A bad command line value; the scripts exit with status 2."""


def parse_int_list(text, what):
    """'512,1k,2048' -> [512, 1024, 2048]; positive integers only."""
    values = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        scale = 1
        if item.endswith("k"):
            item, scale = item[:-1], 1024
        if not re.fullmatch(r"[0-9]+", item):
            raise UsageError(f"bad {what} '{item}': expected a positive integer")
        value = int(item) * scale
        if value <= 0:
            raise UsageError(f"bad {what} '{item}': must be positive")
        values.append(value)
    if not values:
        raise UsageError(f"empty {what} list")
    return values


def parse_choices(text, choices, what):
    values = [v.strip() for v in text.split(",") if v.strip()]
    for v in values:
        if v not in choices:
            raise UsageError(f"unknown {what} '{v}' (choose from {', '.join(choices)})")
    if not values:
        raise UsageError(f"empty {what} list")
    return values


def parse_causal(text):
    return {"both": [False, True], "false": [False], "true": [True]}[text]


@dataclass(frozen=True)
class Config:
    seqlen: int
    batch: int
    heads: int
    head_dim: int
    causal: bool

    @property
    def flops(self):
        """Forward FLOPs (two matmuls, 2 flops per MAC); halved for causal."""
        f = 4 * self.seqlen * self.seqlen * self.head_dim * self.batch * self.heads
        return f // 2 if self.causal else f

    def tflops(self, ms):
        return self.flops / (ms * 1e-3) / 1e12


def workload(seqlens, head_dims, causals, tokens=DEFAULT_TOKENS,
             hidden=DEFAULT_HIDDEN):
    """The configurations, in table order (D, causal, seqlen)."""
    for s in seqlens:
        if tokens % s:
            raise UsageError(f"bad seqlen {s}: it must divide --tokens {tokens} "
                             f"(batch = tokens / seqlen)")
    for d in head_dims:
        if d % 16 or d > 256:
            raise UsageError(f"bad head_dim {d}: flashc's kernels need a "
                             f"multiple of 16, at most 256")
        if hidden % d:
            raise UsageError(f"bad head_dim {d}: it must divide --hidden {hidden}")
    return [Config(s, tokens // s, hidden // d, d, c)
            for d in head_dims for c in causals for s in seqlens]


def ptx_basename(kernel, head_dim, causal, arch):
    return f"{kernel}_d{head_dim}_{'causal' if causal else 'noncausal'}.{arch}.ptx"


# --------------------------------------------------------------------------
# Grid expressions: a tiny evaluator for the sidecar's "grid" strings, in the
# language of include/flashc/Runtime/GridExpr.h (which the sidecar writer
# prints and the launcher evaluates; test/Inputs/grid-exprs.txt holds the
# vectors both evaluators are checked against):
#   expr  := term (('+' | '-') term)*
#   term  := unary (('*' | '/' | '%') unary)*
#   unary := '-' unary | atom
#   atom  := INT | NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
# int64 values ('int64 overflow' otherwise). '/' and '%' are C's
# (arith.divsi / remsi: truncate toward zero), cdiv is ceildivsi, floordiv
# floordivsi. Nothing else: no attributes, strings, keywords or calls of
# unknown names; never Python's eval.
# --------------------------------------------------------------------------

class GridExprError(ValueError):
    pass


_TOKEN = re.compile(r"([0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|(.)", re.S)
_MAX_EXPR_LEN = 1000
_MAX_DEPTH = 50
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _cdiv(a, b):
    return -((-a) // b)  # ceil(a / b) for either sign of b


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _trem(a, b):
    return a - b * _tdiv(a, b)


_FUNCS = {
    "cdiv": _cdiv,
    "floordiv": lambda a, b: a // b,
    "min": min,
    "max": max,
}


def _tokenize(text):
    tokens = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos == len(text):
            break
        m = _TOKEN.match(text, pos)
        pos = m.end()
        num, name, other = m.groups()
        if num is not None:
            tokens.append(("int", int(num)))
        elif name is not None:
            tokens.append(("name", name))
        elif other is not None:
            if other not in "+-*/%(),":
                raise GridExprError(f"unexpected character {other!r}")
            tokens.append(("op", other))
    return tokens


def eval_grid_expr(text, env):
    """Evaluates one grid expression with integer dim symbols from env."""
    if not isinstance(text, str):
        raise GridExprError(f"grid expression must be a string, got {type(text).__name__}")
    if len(text) > _MAX_EXPR_LEN:
        raise GridExprError("grid expression too long")
    tokens = _tokenize(text)
    if not tokens:
        raise GridExprError("empty grid expression")
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else ("end", None)

    def take(kind, value=None):
        nonlocal pos
        tok = peek()
        if tok[0] != kind or (value is not None and tok[1] != value):
            want = value if value is not None else kind
            got = tok[1] if tok[0] != "end" else "end of expression"
            raise GridExprError(f"expected {want!r}, found {got!r} in {text!r}")
        pos += 1
        return tok[1]

    def check_divisor(b, op):
        if b == 0:
            raise GridExprError(f"division by zero ({op}) in {text!r}")

    def int64(value):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise GridExprError(f"int64 overflow in {text!r}")
        return value

    def expr(depth):
        if depth > _MAX_DEPTH:
            raise GridExprError("grid expression nested too deeply")
        value = term(depth)
        while peek() in (("op", "+"), ("op", "-")):
            op = take("op")
            rhs = term(depth)
            value = int64(value + rhs if op == "+" else value - rhs)
        return value

    def term(depth):
        value = unary(depth)
        while peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = take("op")
            rhs = unary(depth)
            if op == "*":
                value = int64(value * rhs)
            else:
                check_divisor(rhs, op)
                # As in C, INT64_MIN % -1 overflows like INT64_MIN / -1.
                quotient = int64(_tdiv(value, rhs))
                value = quotient if op == "/" else _trem(value, rhs)
        return value

    def unary(depth):
        if peek() == ("op", "-"):
            take("op", "-")
            return int64(-unary(depth + 1))
        return atom(depth)

    def atom(depth):
        kind, value = peek()
        if kind == "int":
            take("int")
            return int64(value)
        if kind == "name":
            take("name")
            if peek() == ("op", "("):
                if value not in _FUNCS:
                    raise GridExprError(f"unknown function {value!r} in {text!r} "
                                        f"(allowed: {', '.join(sorted(_FUNCS))})")
                take("op", "(")
                a = expr(depth + 1)
                take("op", ",")
                b = expr(depth + 1)
                take("op", ")")
                if value in ("cdiv", "floordiv"):
                    check_divisor(b, value)
                return int64(_FUNCS[value](a, b))
            if value in _FUNCS:
                raise GridExprError(f"function {value!r} used without arguments")
            if value not in env:
                raise GridExprError(f"unknown symbol {value!r} in {text!r} "
                                    f"(bound: {', '.join(sorted(env)) or 'none'})")
            return int(env[value])
        if (kind, value) == ("op", "("):
            take("op", "(")
            v = expr(depth + 1)
            take("op", ")")
            return v
        got = value if kind != "end" else "end of expression"
        raise GridExprError(f"unexpected {got!r} in {text!r}")

    result = expr(0)
    if pos != len(tokens):
        raise GridExprError(f"unexpected {tokens[pos][1]!r} in {text!r}")
    return result


# CUDA's limits on a launch's grid.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)


def eval_grid(sidecar, env):
    """The sidecar's three grid expressions -> (x, y, z), checked against CUDA's limits."""
    exprs = sidecar.get("grid")
    if not isinstance(exprs, list) or len(exprs) != 3:
        raise GridExprError(f"sidecar 'grid' must be three expressions, got {exprs!r}")
    grid = tuple(eval_grid_expr(e, env) for e in exprs)
    for axis, (n, limit) in enumerate(zip(grid, _GRID_LIMITS)):
        if not 1 <= n <= limit:
            raise GridExprError(f"grid dim {'xyz'[axis]} = {n} outside [1, {limit}] "
                                f"({exprs[axis]!r})")
    return grid


# --------------------------------------------------------------------------
# Argument packing plan: which value goes into each kernel parameter slot.
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgSlot:
    param: str     # the sidecar parameter it belongs to
    abi: str       # 'ptr', 'i32' or 'f32'
    what: str      # 'data' (pointer), 'dim0'.., or 'value' (scalar)
    value: object  # the dim's integer, the scalar's float; None for pointers


_DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i8": 1}


def load_sidecar(path):
    with open(path) as f:
        sidecar = json.load(f)
    for key in ("entry", "params", "grid", "threads_per_cta", "shared_memory"):
        if key not in sidecar:
            raise ValueError(f"{path}: sidecar has no '{key}'")
    return sidecar


def bind_dims(sidecar, shapes):
    """Binds the sidecar's dim symbols from tensor shapes {param: shape}.

    Checks rank, static dims and that a symbol has one value everywhere."""
    env = {}
    for p in sidecar["params"]:
        if p["kind"] != "tensor":
            continue
        name = p["name"]
        if name not in shapes:
            raise ValueError(f"no tensor for parameter '{name}'")
        shape = tuple(int(s) for s in shapes[name])
        dims = p["dims"]
        if len(shape) != len(dims):
            raise ValueError(f"'{name}': rank {len(shape)}, the kernel expects "
                             f"{len(dims)} ({dims})")
        for i, (d, n) in enumerate(zip(dims, shape)):
            if isinstance(d, int):
                if d != n:
                    raise ValueError(f"'{name}' dim {i}: {n}, the kernel is "
                                     f"compiled for {d}")
            elif env.setdefault(d, n) != n:
                raise ValueError(f"'{name}' dim {i} ({d}) = {n}, but {d} = "
                                 f"{env[d]} elsewhere")
            if not 0 <= n < 2**31:
                raise ValueError(f"'{name}' dim {i} = {n} does not fit in i32")
    return env


def arg_plan(sidecar, shapes, scalars):
    """The kernel's arguments in ABI order, one ArgSlot per PTX parameter."""
    plan = []
    for p in sidecar["params"]:
        name, abi = p["name"], list(p["abi"])
        if p["kind"] == "tensor":
            if abi != ["ptr"] + ["i32"] * len(p["dims"]):
                raise ValueError(f"'{name}': unsupported tensor ABI {abi}")
            if p["dtype"] not in _DTYPE_BYTES:
                raise ValueError(f"'{name}': unsupported dtype {p['dtype']}")
            plan.append(ArgSlot(name, "ptr", "data", None))
            for i, n in enumerate(shapes[name]):
                plan.append(ArgSlot(name, "i32", f"dim{i}", int(n)))
        elif p["kind"] == "scalar":
            if abi != ["f32"] or p["dtype"] != "f32":
                raise ValueError(f"'{name}': unsupported scalar ABI {abi} ({p['dtype']})")
            if name not in scalars:
                raise ValueError(f"no value for scalar parameter '{name}'")
            plan.append(ArgSlot(name, "f32", "value", float(scalars[name])))
        else:
            raise ValueError(f"'{name}': unknown parameter kind {p['kind']!r}")
    return plan


def kernel_spec(sidecar):
    """The spec of the kernel a sidecar describes (its entry is the kernel's name)."""
    spec = SPECS.get(sidecar["entry"])
    if spec is None or not spec.attention:
        raise ValueError(f"no attention kernel spec for entry '{sidecar['entry']}'")
    return spec


def problem_sizes(cfg):
    """A configuration as the sizes of an attention kernel spec (Nq = Nk)."""
    return {"B": cfg.batch, "H": cfg.heads, "Nq": cfg.seqlen, "Nk": cfg.seqlen,
            "D": cfg.head_dim}


def attention_shapes(sidecar, cfg):
    """Shapes of the kernel's tensors for one configuration, from its spec
    (fa2: Q K V O; fa1 also its L and M workspaces [B, H, Nq])."""
    spec_shapes = kernel_spec(sidecar).shapes(problem_sizes(cfg))
    shapes = {}
    for p in sidecar["params"]:
        if p["kind"] != "tensor":
            continue
        if p["name"] not in spec_shapes:
            raise ValueError(f"unexpected tensor parameter {p['name']} {p['dims']}")
        shapes[p["name"]] = spec_shapes[p["name"]]
    return shapes


def launch_plan(sidecar, cfg):
    """Everything a launch needs but the pointers: grid, block, shared, args."""
    if sidecar.get("constants", {}).get("HEAD_DIM", cfg.head_dim) != cfg.head_dim:
        raise ValueError("sidecar's HEAD_DIM does not match the configuration")
    shapes = attention_shapes(sidecar, cfg)
    env = bind_dims(sidecar, shapes)
    shared = sidecar["shared_memory"]
    return {
        "entry": sidecar["entry"],
        "grid": eval_grid(sidecar, env),
        "block": (int(sidecar["threads_per_cta"]), 1, 1),
        "dynamic_shared_bytes": int(shared.get("dynamic_bytes", 0)),
        "static_shared_bytes": int(shared.get("static_bytes", 0)),
        "shapes": shapes,
        "dims": env,
        "args": arg_plan(sidecar, shapes,
                         kernel_spec(sidecar).scalar_values(problem_sizes(cfg))),
    }


def describe_plan(plan):
    """One line: entry, grid, block, shared memory and the packed arguments,
    a tensor as NAME=ptr,i32[dims], a scalar as NAME=f32(value)."""
    args, i = [], 0
    slots = plan["args"]
    while i < len(slots):
        a = slots[i]
        if a.abi == "ptr":
            dims = []
            i += 1
            while i < len(slots) and slots[i].param == a.param and slots[i].abi == "i32":
                dims.append(str(slots[i].value))
                i += 1
            args.append(f"{a.param}=ptr,i32[{','.join(dims)}]")
        else:
            args.append(f"{a.param}={a.abi}({a.value:g})" if a.abi == "f32"
                        else f"{a.param}={a.abi}({a.value})")
            i += 1
    g, b = plan["grid"], plan["block"]
    return (f"{plan['entry']} grid=({g[0]},{g[1]},{g[2]}) block={b[0]} "
            f"dyn_smem={plan['dynamic_shared_bytes']} args: {' '.join(args)}")


# --------------------------------------------------------------------------
# CSV -> Markdown table / PNG plot
# --------------------------------------------------------------------------

def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in CSV_COLUMNS})


def _num(text):
    try:
        return float(text) if text not in ("", None) else None
    except ValueError:
        return None


def read_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing CSV columns: {', '.join(missing)}")
        rows = []
        for r in reader:
            rows.append({
                "kernel": r["kernel"], "backend": r["backend"],
                "seqlen": int(r["seqlen"]), "batch": int(r["batch"]),
                "heads": int(r["heads"]), "head_dim": int(r["head_dim"]),
                "causal": r["causal"].strip().lower() in ("true", "1", "yes"),
                "ms": _num(r["ms"]), "tflops": _num(r["tflops"]),
                "max_abs_err": _num(r["max_abs_err"]), "rel_err": _num(r["rel_err"]),
                "status": r["status"],
            })
    return rows


def impl_label(row):
    if row["backend"] == "flashc":
        return f"flashc {row['kernel']}"
    return f"SDPA {row['backend']}"


_LABEL_ORDER = [f"flashc {k}" for k in FLASHC_KERNELS] + [f"SDPA {b}" for b in SDPA_BACKENDS]


def _order(label):
    return (_LABEL_ORDER.index(label) if label in _LABEL_ORDER else len(_LABEL_ORDER), label)


def _fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def _ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def render_markdown(rows, title="GPU benchmark", meta=None, source=None):
    """The results as Markdown: throughput per config with ratios, then the
    causal speed-up. Only rows with status 'ok' count; others are listed."""
    ok = {}
    labels = set()
    for r in rows:
        labels.add(impl_label(r))
        if r["status"] == "ok" and r["ms"]:
            ok[(impl_label(r), r["head_dim"], r["causal"], r["seqlen"])] = r
    labels = sorted(labels, key=_order)
    configs = sorted({(r["head_dim"], r["causal"], r["seqlen"], r["batch"], r["heads"])
                      for r in rows})

    out = [f"### {title}", ""]
    meta = meta or {}
    if meta.get("fixture"):
        out += ["**FIXTURE: synthetic numbers for testing the renderer, not measurements.**", ""]
    facts = [f"{k}: {meta[k]}" for k in ("device", "date", "torch", "cupy", "cuda",
                                         "arch", "timing", "reference", "aborted")
             if meta.get(k)]
    if source:
        facts.append(f"source: `{source}`")
    if facts:
        out += ["; ".join(facts) + ".", ""]
    out += ["TFLOP/s = 4·N²·D·B·H / time (halved for causal), fp16 forward, "
            "median of CUDA-event timings. Ratio X/Y = Y's time / X's time "
            "(> 1: X is faster); — where either side has no valid measurement.", ""]

    head = ["D", "causal", "seqlen", "B×H"] + [f"{l} TFLOP/s" for l in labels]
    ratio_cols = [("flashc fa2", "SDPA flash"), ("flashc fa1", "SDPA flash"),
                  ("flashc fa2", "flashc fa1")]
    ratio_cols = [rc for rc in ratio_cols if rc[0] in labels and rc[1] in labels]
    head += [f"{a.split()[-1]}/{b.replace('SDPA ', 'SDPA-').split()[-1]}" for a, b in ratio_cols]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for d, causal, s, b, h in configs:
        cells = [str(d), "yes" if causal else "no", str(s), f"{b}×{h}"]
        for l in labels:
            r = ok.get((l, d, causal, s))
            cells.append(_fmt(r["tflops"]) if r else "—")
        for a, bl in ratio_cols:
            ra, rb = ok.get((a, d, causal, s)), ok.get((bl, d, causal, s))
            cells.append(_fmt(_ratio(rb["ms"] if rb else None, ra["ms"] if ra else None), 2))
        out.append("| " + " | ".join(cells) + " |")

    # Causal speed-up: non-causal ms / causal ms (ideal: 2).
    pairs = sorted({(r["head_dim"], r["seqlen"]) for r in rows})
    if any(r["causal"] for r in rows) and any(not r["causal"] for r in rows):
        out += ["", "Causal speed-up (non-causal ms / causal ms; half the work, so ideally 2):", ""]
        out += ["| D | seqlen | " + " | ".join(labels) + " |", "|" + "---|" * (2 + len(labels))]
        for d, s in pairs:
            cells = [str(d), str(s)]
            for l in labels:
                nc, c = ok.get((l, d, False, s)), ok.get((l, d, True, s))
                cells.append(_fmt(_ratio(nc["ms"] if nc else None, c["ms"] if c else None), 2))
            out.append("| " + " | ".join(cells) + " |")

    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        out += ["", "Not measured or not valid:", ""]
        for r in bad:
            out.append(f"- {impl_label(r)}, D {r['head_dim']}, "
                       f"{'causal' if r['causal'] else 'non-causal'}, seqlen {r['seqlen']}: "
                       f"{r['status']}")
    return "\n".join(out) + "\n"


def write_plot(rows, path, title="flashc vs PyTorch SDPA (fp16 forward)", fixture=False):
    """TFLOP/s vs seqlen, one panel per (D, causal), one line per implementation."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["head_dim"], r["causal"]) for r in rows})
    labels = sorted({impl_label(r) for r in rows}, key=_order)
    cols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 4 * nrows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    seqlens = sorted({r["seqlen"] for r in rows})
    for ax, (d, causal) in zip(axes.flat, panels):
        for l in labels:
            pts = sorted((r["seqlen"], r["tflops"]) for r in rows
                         if impl_label(r) == l and r["head_dim"] == d and
                         r["causal"] == causal and r["status"] == "ok" and r["tflops"])
            if pts:
                style = "-o" if l.startswith("flashc") else "--s"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=l,
                        color=colors[_order(l)[0] % len(colors)])
        ax.set_xscale("log", base=2)
        ax.set_xticks(seqlens)
        ax.set_xticklabels([f"{s // 1024}k" if s % 1024 == 0 else str(s) for s in seqlens])
        ax.set_ylim(bottom=0)
        ax.set_title(f"D = {d}, {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("sequence length")
        ax.set_ylabel("TFLOP/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(("FIXTURE (synthetic numbers) — " if fixture else "") + title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


BEGIN_MARKER = "<!-- BEGIN gpu-bench -->"
END_MARKER = "<!-- END gpu-bench -->"


def replace_marked_section(text, begin, end, name, body, append=True,
                           heading=""):
    """text with what lies between the begin / end markers (a section named
    name) replaced by body. Without the markers: the section is appended
    (after heading) when append, else ValueError; unbalanced markers are a
    ValueError."""
    block = f"{begin}\n{body.rstrip()}\n{end}"
    b, e = text.find(begin), text.find(end)
    if b >= 0 and e > b:
        return text[:b] + block + text[e + len(end):]
    if b >= 0 or e >= 0:
        raise ValueError(f"unbalanced {name} markers")
    if not append:
        raise ValueError(f"no '{begin}' / '{end}' markers")
    return text.rstrip("\n") + "\n\n" + heading + block + "\n"


def update_marked_file(path, begin, end, name, body):
    """replace_marked_section on the file at path (appending when absent)."""
    with open(path) as f:
        text = f.read()
    try:
        text = replace_marked_section(text, begin, end, name, body)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    with open(path, "w") as f:
        f.write(text)


def update_perf_text(text, table, create=False):
    """Replaces what lies between the gpu-bench markers with table. Without the
    markers: appends a new section when create, else raises ValueError."""
    body = ("<!-- generated by bench/report.py; edits here are overwritten -->\n"
            + table.rstrip())
    try:
        return replace_marked_section(
            text, BEGIN_MARKER, END_MARKER, "gpu-bench", body, append=create,
            heading="## GPU benchmark: flashc vs PyTorch SDPA\n\n")
    except ValueError as e:
        if "no '" in str(e):
            raise ValueError(f"{e} (pass --create-section to append them)") from None
        raise


def load_meta(csv_path, meta_path=None):
    path = meta_path or os.path.splitext(csv_path)[0] + ".meta.json"
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}

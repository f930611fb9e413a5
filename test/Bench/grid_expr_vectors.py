"""Checks bench/benchlib.py's grid-expression evaluator against the vectors it
shares with the C++ one (run by grid-expr-vectors.test).

    grid_expr_vectors.py BENCH_DIR VECTORS_FILE
"""
import sys

sys.path.insert(0, sys.argv[1])
from benchlib import GridExprError, eval_grid_expr  # noqa: E402


def vectors(path):
    """(line number, expression, bindings, expected) per vector line."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            expr, bindings, expected = line.rstrip("\n").split("|")
            env = dict((name, int(value)) for name, value in
                       (b.split("=") for b in bindings.split()))
            yield number, expr.strip(" \t"), env, expected.strip()


failures = []
count = 0
for number, expr, env, expected in vectors(sys.argv[2]):
    count += 1
    where = f"line {number}: {expr!r}"
    try:
        got = eval_grid_expr(expr, env)
    except GridExprError as e:
        if not expected.startswith("error"):
            failures.append(f"{where}: error {e}, expected {expected}")
        elif expected[5:].strip() not in str(e):
            failures.append(f"{where}: {e!r} does not say {expected[5:].strip()!r}")
        continue
    if expected.startswith("error") or str(got) != expected:
        failures.append(f"{where}: got {got}, expected {expected}")
for f in failures:
    print(f)
assert count > 50, f"only {count} vectors"
if failures:
    sys.exit(1)
print(f"grid-expr vectors: {count} ok")

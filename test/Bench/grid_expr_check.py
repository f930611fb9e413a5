"""Checks bench/benchlib.py's grid-expression evaluator (run by grid-expr.test)."""
import sys

sys.path.insert(0, sys.argv[1])
from benchlib import GridExprError, eval_grid, eval_grid_expr  # noqa: E402

env = {"B": 4, "H": 32, "Nq": 1000, "Nk": 17}
good = {
    "1": 1, "B * H": 128, "cdiv(Nq, 128)": 8, "cdiv(Nq, 8)": 125, "cdiv(0, 64)": 0,
    "Nq / 128": 7, "Nq % 128": 104, "B + H * 2": 68, "(B + H) * 2": 72,
    "B - H - 1": -29, "B - (H - 1)": -27, "Nq / 10 / 3": 33, "Nq / (10 / 3)": 333,
    "-3 + B": 1, "B * -1": -4, "- -B": 4, "min(B, H)": 4, "max(B, H)": 32,
    "floordiv(Nk, 4)": 4, "floordiv(-Nk, 4)": -5, "cdiv(-Nk, 4)": -4,
    "-Nk / 4": -4, "-Nk % 4": -1, "Nk % -4": 1, "max(cdiv(Nq, 64), min(B * H, 3))": 16,
    "  B*H  ": 128, "cdiv( Nq ,128 )": 8,
}
for text, want in good.items():
    got = eval_grid_expr(text, env)
    assert got == want, f"{text!r}: got {got}, want {want}"

bad = [
    "", "   ", "__import__('os').system('true')", "__import__(1, 2)",
    "B.bit_length()", "eval(B, H)", "open(B, H)", "B ** 2", "B // 2", "B if H else Nq",
    "lambda: 1", "[B]", "B,", "cdiv(Nq)", "cdiv(Nq, 64, 2)", "cdiv", "min(B H)",
    "Nq / 0", "Nq % (B - 4)", "cdiv(Nq, 0)", "floordiv(Nq, 0)", "Unknown * 2", "B H",
    "(B", "B)", "1.5", "0x10", "B\n+ H", "'1'", "B; H", "\u0663", "B" + "+B" * 600,
    "(" * 80 + "B" + ")" * 80, "H.__class__", "Nq@Nk",
]
for text in bad:
    try:
        eval_grid_expr(text, env)
    except GridExprError as e:
        assert str(e), text
    else:
        raise AssertionError(f"{text!r} was accepted")
for not_a_string in (None, 3, ["B"]):
    try:
        eval_grid_expr(not_a_string, env)
    except GridExprError:
        pass
    else:
        raise AssertionError(f"{not_a_string!r} was accepted")

# Whole grids: three expressions, each within CUDA's launch limits.
assert eval_grid({"grid": ["cdiv(Nq, 128)", "B * H", "1"]}, env) == (8, 128, 1)
for grid in (["1", "1"], ["0", "1", "1"], ["1", "65536", "1"], ["B - 5", "1", "1"], "B"):
    try:
        eval_grid({"grid": grid}, env)
    except GridExprError:
        pass
    else:
        raise AssertionError(f"grid {grid!r} was accepted")
print("grid-expr: ok")

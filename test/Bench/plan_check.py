"""Checks the argument packing plan against real sidecars (run by plan.test)."""
import sys

sys.path.insert(0, sys.argv[1])
import benchlib  # noqa: E402
from benchlib import ArgSlot, Config  # noqa: E402

fa2 = benchlib.load_sidecar(sys.argv[2])
fa1 = benchlib.load_sidecar(sys.argv[3])

cfg = Config(seqlen=1024, batch=16, heads=32, head_dim=64, causal=False)
plan = benchlib.launch_plan(fa2, cfg)
assert plan["entry"] == "fa2"
assert plan["grid"] == (8, 512, 1), plan["grid"]
assert plan["block"] == (128, 1, 1)
assert plan["dims"] == {"B": 16, "H": 32, "Nq": 1024, "Nk": 1024}, plan["dims"]
slots = plan["args"]
# The PTX entry takes 4 x (ptr + 4 x i32) + f32 = 21 parameters.
assert len(slots) == 21, len(slots)
assert [s.abi for s in slots] == (["ptr"] + ["i32"] * 4) * 4 + ["f32"]
assert slots[0] == ArgSlot("Q", "ptr", "data", None)
assert slots[1:5] == [ArgSlot("Q", "i32", f"dim{i}", n) for i, n in enumerate((16, 32, 1024, 64))]
assert [s.param for s in slots[::5]] == ["Q", "K", "V", "O", "sm_scale"]
assert slots[-1] == ArgSlot("sm_scale", "f32", "value", 0.125)
# Matches the ABI the sidecar declares, slot for slot.
assert [s.abi for s in slots] == [a for p in fa2["params"] for a in p["abi"]]

plan1 = benchlib.launch_plan(fa1, Config(2048, 8, 16, 128, True))
assert plan1["grid"] == (128, 1, 1)
assert [s.param for s in plan1["args"] if s.abi == "ptr"] == ["Q", "K", "V", "O", "L", "M"]
assert plan1["shapes"]["L"] == (8, 16, 2048)
assert [s.abi for s in plan1["args"]] == [a for p in fa1["params"] for a in p["abi"]]

def rejects(fn, *args, text):
    try:
        fn(*args)
    except ValueError as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(f"accepted: {args!r}")

# Shape checks: static HEAD_DIM, one value per symbol, rank, i32 range.
qkv = (2, 4, 100, 64)
rejects(benchlib.bind_dims, fa2, {"Q": qkv, "K": qkv, "V": qkv, "O": (2, 4, 100, 128)},
        text="compiled for 64")
rejects(benchlib.bind_dims, fa2, {"Q": qkv, "K": qkv, "V": qkv, "O": (2, 5, 100, 64)},
        text="(H) = 5, but H = 4")
rejects(benchlib.bind_dims, fa2, {"Q": qkv, "K": qkv, "V": qkv, "O": (2, 4, 100)},
        text="rank 3")
rejects(benchlib.bind_dims, fa2, {"Q": qkv, "K": qkv, "V": qkv}, text="no tensor for parameter 'O'")
big = (1, 1, 2**31, 64)
rejects(benchlib.bind_dims, fa2, {"Q": big, "K": big, "V": big, "O": big}, text="does not fit in i32")
# Nq != Nk binds separately (the kernel supports it; the benchmark uses Nq == Nk).
env = benchlib.bind_dims(fa2, {"Q": qkv, "O": qkv, "K": (2, 4, 30, 64), "V": (2, 4, 30, 64)})
assert env == {"B": 2, "H": 4, "Nq": 100, "Nk": 30}, env
rejects(benchlib.arg_plan, fa2, {"Q": qkv, "K": qkv, "V": qkv, "O": qkv}, {}, text="sm_scale")
bad_abi = dict(fa2, params=[dict(fa2["params"][0], abi=["ptr", "i64", "i32", "i32", "i32"])])
rejects(benchlib.arg_plan, bad_abi, {"Q": qkv}, {}, text="unsupported tensor ABI")
print("plan: ok")

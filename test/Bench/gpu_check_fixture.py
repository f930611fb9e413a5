"""Fixtures for gpu-check.test (no GPU): adds to a prepared set an sm_90a fa2
entry whose sidecar carries tensor maps in the form flashc's sidecar writes
them (`maps`; `badmap`: a box of the wrong rank), or writes a FIXTURE
gpu-check.json with invented results for the renderer (`report`)."""
import json
import os
import shutil
import sys

mode, target = sys.argv[1], sys.argv[2]
if mode == "report":
    check = {"kernel": "fa2", "variant": "d64", "arch": "sm_90", "size": "B=2 H=4",
             "ok": True, "detail": "O rel 1.0e-4"}
    fixture = {"meta": {"device": "FIXTURE GPU (sm_90, 132 SMs)", "date": "2026-01-01 00:00 UTC",
                        "torch": "0.0", "cuda": "0.0", "git": "fixture"},
               "checks": [check, dict(check, variant="d128", ok=False, detail="O rel 1e-1")],
               "timings": [{"impl": "flashc fa2 sm_90", "head_dim": 64, "causal": False,
                            "seqlen": 2048, "ms": 1.0, "tflops": 100.0, "ok": True},
                           {"impl": "SDPA flash", "head_dim": 64, "causal": False,
                            "seqlen": 2048, "ms": 0.5, "tflops": 200.0, "ok": True},
                           {"impl": "SDPA cudnn", "head_dim": 64, "causal": False,
                            "seqlen": 2048, "error": "RuntimeError: no kernel", "ok": False}],
               "skipped": [{"kernel": "softmax", "arch": "sm_90a", "defines": {}, "error": "x"}],
               "unchecked": []}
    with open(target, "w") as f:
        json.dump(fixture, f)
    sys.exit(0)

path = os.path.join(target, "manifest.json")
with open(path) as f:
    manifest = json.load(f)
defines = {"CAUSAL": False, "HEAD_DIM": 64}
base = next(e for e in manifest["kernels"]
            if e["kernel"] == "fa2" and e["defines"] == defines and e["arch"] == "sm_90")
with open(os.path.join(target, base["sidecar"])) as f:
    sidecar = json.load(f)
box = [1, 1, 128, 64] if mode == "maps" else [128, 64]
sidecar["tensor_maps"] = [
    {"name": "K.tmap", "tensor": "K", "box": box, "swizzle": "128B", "oob": "zero",
     "abi": "tensormap"},
    {"name": "V.tmap", "tensor": "V", "box": [1, 1, 128, 64], "swizzle": "128B",
     "oob": "zero", "abi": "tensormap"}]
name = "fa2.d64.sm_90a.ptx"
with open(os.path.join(target, name + ".json"), "w") as f:
    json.dump(sidecar, f)
shutil.copy(os.path.join(target, base["ptx"]), os.path.join(target, name + ".gz"))
manifest["kernels"] = [e for e in manifest["kernels"]
                       if not (e["kernel"] == "fa2" and e["arch"] == "sm_90a")]
manifest["kernels"].append(dict(base, arch="sm_90a", ptx=name + ".gz", sidecar=name + ".json"))
manifest["skipped"] = [s for s in manifest["skipped"]
                       if not (s["kernel"] == "fa2" and s["defines"] == defines)]
with open(path, "w") as f:
    json.dump(manifest, f)

#!/usr/bin/env python3
"""Benchmarks flashc's FlashAttention kernels against PyTorch SDPA on a GPU.

Runs on a machine with a CUDA GPU, PyTorch and cupy (no LLVM needed): the PTX
comes from bench/compile_kernels.py, run where flashc is built, and is carried
here. Workload: the FlashAttention papers' grid, batch x seqlen = 16k tokens,
hidden 2048 (D 64 -> 32 heads, D 128 -> 16), seqlen 512 .. 16k, fp16 forward,
causal and not.

Per configuration: flashc's output is checked against a float32 SDPA (MATH
backend) reference within the kernel's tolerance (its spec in
test/Kernels/kernel_specs.py), then flashc fa2, flashc fa1 and SDPA's FLASH_ATTENTION,
CUDNN_ATTENTION and EFFICIENT_ATTENTION backends are timed (median of CUDA
event timings after warm-up). Writes OUT/results.csv, .md, .png and
.meta.json.

    python3 bench/bench_attention.py --ptx-dir bench/ptx --out-dir bench/results
    python3 bench/bench_attention.py --dry-run          # launch plans only, no GPU

torch and cupy are imported only by the GPU path, so argument handling, the
grid evaluation and the argument packing plan work anywhere (--dry-run,
--plan-sidecar). Exit status: 0 all ran and every flashc check passed, 1 a
flashc check failed or a run errored, 2 bad usage.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import UsageError  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Benchmark flashc's FlashAttention PTX against PyTorch SDPA (GPU).")
    ap.add_argument("--ptx-dir", default=os.path.join(benchlib.REPO_ROOT, "bench", "ptx"),
                    help="directory with compile_kernels.py's PTX and manifest.json")
    ap.add_argument("--out-dir", default=os.path.join(benchlib.REPO_ROOT, "bench", "results"),
                    help="where results.{csv,md,png,meta.json} go")
    ap.add_argument("--impls", default=",".join(benchlib.IMPLS),
                    help=f"comma list of: {', '.join(benchlib.IMPLS)} (default: all)")
    ap.add_argument("--seqlens", default=",".join(map(str, benchlib.DEFAULT_SEQLENS)),
                    help="comma list; each must divide --tokens (default: 512..16k)")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--causal", default="both", choices=("both", "false", "true"))
    ap.add_argument("--tokens", type=int, default=benchlib.DEFAULT_TOKENS,
                    help="batch x seqlen (default: 16384)")
    ap.add_argument("--hidden", type=int, default=benchlib.DEFAULT_HIDDEN,
                    help="heads x head_dim (default: 2048)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--ref", default="math", choices=("math", "flash"),
                    help="reference: SDPA MATH in float32, chunked over heads "
                         "(default), or SDPA FLASH in fp16")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dry-run", action="store_true",
                    help="print every launch plan from the manifest; no GPU")
    ap.add_argument("--plan-sidecar", metavar="FILE.ptx.json",
                    help="print the launch plans of one sidecar for the selected "
                         "configs and exit; no GPU, no manifest")
    args = ap.parse_args(argv)
    try:
        args.impls = benchlib.parse_choices(args.impls, benchlib.IMPLS, "implementation")
        args.seqlens = benchlib.parse_int_list(args.seqlens, "seqlen")
        args.head_dims = benchlib.parse_int_list(args.head_dims, "head_dim")
        if args.tokens <= 0 or args.hidden <= 0:
            raise UsageError("--tokens and --hidden must be positive")
        if args.warmup < 0 or args.iters < 1:
            raise UsageError("--warmup must be >= 0 and --iters >= 1")
        args.configs = benchlib.workload(args.seqlens, args.head_dims,
                                         benchlib.parse_causal(args.causal),
                                         args.tokens, args.hidden)
    except UsageError as e:
        ap.error(str(e))
    if args.plan_sidecar and not os.path.isfile(args.plan_sidecar):
        ap.error(f"no such sidecar: {args.plan_sidecar}")
    args.flashc_impls = [i for i in args.impls if i in benchlib.FLASHC_KERNELS]
    if args.flashc_impls and not args.plan_sidecar:
        manifest = os.path.join(args.ptx_dir, "manifest.json")
        if not os.path.isfile(manifest):
            ap.error(f"no {manifest}: run bench/compile_kernels.py first (where "
                     f"flashc is built) and carry its output here, or pass --ptx-dir")
    return args


def load_manifest(ptx_dir):
    """{(kernel, head_dim, causal): {'ptx': path, 'sidecar': dict, 'arch': ..}}"""
    with open(os.path.join(ptx_dir, "manifest.json")) as f:
        manifest = json.load(f)
    kernels = {}
    for e in manifest["kernels"]:
        ptx = os.path.join(ptx_dir, e["ptx"])
        kernels[(e["kernel"], e["head_dim"], e["causal"])] = {
            "ptx": ptx, "arch": e["arch"], "entry": e["entry"],
            "sidecar": benchlib.load_sidecar(os.path.join(ptx_dir, e["sidecar"])),
        }
    return manifest, kernels


def flashc_plans(args, kernels):
    """(cfg, kernel) -> (kernel entry, launch plan) or an error string."""
    plans = {}
    for cfg in args.configs:
        for k in args.flashc_impls:
            entry = kernels.get((k, cfg.head_dim, cfg.causal))
            if entry is None:
                plans[(cfg, k)] = (f"missing: no {k} D={cfg.head_dim} "
                                   f"causal={cfg.causal} in the manifest")
                continue
            try:
                plans[(cfg, k)] = (entry, benchlib.launch_plan(entry["sidecar"], cfg))
            except ValueError as e:
                plans[(cfg, k)] = f"error: {e}"
    return plans


def cfg_name(cfg):
    return (f"D={cfg.head_dim} {'causal' if cfg.causal else 'non-causal'} "
            f"seqlen={cfg.seqlen} B={cfg.batch} H={cfg.heads}")


# --------------------------------------------------------------------------
# GPU part: torch and cupy are imported here only.
# --------------------------------------------------------------------------

def reference(q, k, v, causal, scale, mode):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if mode == "flash":
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                  scale=scale).float()
    B, H, N, D = q.shape
    out = torch.empty((B * H, N, D), dtype=torch.float32, device=q.device)
    qf, kf, vf = (t.reshape(B * H, N, D) for t in (q, k, v))
    # Heads per chunk so that one chunk's score matrix is at most 1 GiB.
    chunk = max(1, (1 << 30) // (N * N * 4))
    with sdpa_kernel(SDPBackend.MATH):
        for i in range(0, B * H, chunk):
            j = min(B * H, i + chunk)
            out[i:j] = F.scaled_dot_product_attention(
                qf[i:j].float(), kf[i:j].float(), vf[i:j].float(),
                is_causal=causal, scale=scale)
    return out.reshape(B, H, N, D)


def errors(out, ref):
    diff = out.float() - ref
    return float(diff.abs().max()), float(diff.norm() / ref.norm())


def time_ms(fn, warmup, iters):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


class FlashcKernel:
    """One PTX module's entry, launched on torch's current stream."""

    def __init__(self, ptx_path, entry):
        import cupy
        self.cupy = cupy
        self.module = cupy.RawModule(path=ptx_path)  # cuModuleLoad: PTX is JIT-compiled
        self.function = self.module.get_function(entry)

    def launcher(self, plan, tensors):
        import numpy as np
        import torch
        dtypes = {"f16": torch.float16, "f32": torch.float32, "bf16": torch.bfloat16}
        sidecar_dtype = {}
        args = []
        for slot in plan["args"]:
            if slot.abi == "ptr":
                t = tensors[slot.param]
                want = tuple(plan["shapes"][slot.param])
                if tuple(t.shape) != want or not t.is_contiguous() or not t.is_cuda:
                    raise ValueError(f"{slot.param}: need a contiguous CUDA tensor of "
                                     f"shape {want}, got {tuple(t.shape)}")
                if t.data_ptr() % 16:
                    raise ValueError(f"{slot.param}: base pointer not 16-byte aligned")
                sidecar_dtype[slot.param] = t.dtype
                args.append(np.uint64(t.data_ptr()))
            elif slot.abi == "i32":
                args.append(np.int32(slot.value))
            elif slot.abi == "f32":
                args.append(np.float32(slot.value))
            else:
                raise ValueError(f"unsupported ABI slot {slot}")
        for p in plan.get("params", []):
            if p["kind"] == "tensor" and sidecar_dtype.get(p["name"]) != dtypes.get(p["dtype"]):
                raise ValueError(f"{p['name']}: dtype {sidecar_dtype.get(p['name'])}, "
                                 f"kernel wants {p['dtype']}")
        args = tuple(args)
        dyn = plan["dynamic_shared_bytes"]
        if dyn > 48 * 1024:
            self.function.max_dynamic_shared_size_bytes = dyn
        stream = self.cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        grid, block, fn = plan["grid"], plan["block"], self.function

        def launch():
            with stream:
                fn(grid, block, args, shared_mem=dyn)
        return launch


def gpu_main(args, kernels, plans):
    import cupy
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("bench_attention: error: no CUDA device", file=sys.stderr)
        return 1
    # A float32 reference, not TF32; cupy on the device (and context) torch uses.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cupy.cuda.Device(torch.cuda.current_device()).use()
    props = torch.cuda.get_device_properties(0)
    cap = torch.cuda.get_device_capability(0)
    archs = {e["arch"] for e in kernels.values()}
    for arch in archs:
        if int(arch[3:]) > cap[0] * 10 + cap[1]:
            print(f"bench_attention: error: PTX for {arch} cannot run on sm_{cap[0]}{cap[1]}",
                  file=sys.stderr)
            return 1
    backends = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
                "efficient": "EFFICIENT_ATTENTION"}
    loaded = {}
    rows = []
    failed = False
    os.makedirs(args.out_dir, exist_ok=True)

    for cfg in args.configs:
        torch.manual_seed(args.seed)
        shape = (cfg.batch, cfg.heads, cfg.seqlen, cfg.head_dim)
        q, k, v = (torch.randn(shape, dtype=torch.float16, device="cuda") for _ in range(3))
        # PyTorch's is_causal is top-left aligned, flashc's causal bottom-right:
        # the same mask only because Nq == Nk.
        assert q.shape[2] == k.shape[2], "causal alignment differs when Nq != Nk"
        scale = 1.0 / cfg.head_dim ** 0.5
        ref = reference(q, k, v, cfg.causal, scale, args.ref)
        base = {"seqlen": cfg.seqlen, "batch": cfg.batch, "heads": cfg.heads,
                "head_dim": cfg.head_dim, "causal": str(cfg.causal).lower()}
        print(f"== {cfg_name(cfg)}", flush=True)

        for impl in args.impls:
            if impl in benchlib.FLASHC_KERNELS:
                row = dict(base, kernel=impl, backend="flashc")
                p = plans[(cfg, impl)]
                if isinstance(p, str):
                    row["status"] = p
                    failed = True
                    rows.append(row)
                    print(f"   flashc {impl}: {p}", flush=True)
                    continue
                entry, plan = p
                plan = dict(plan, params=entry["sidecar"]["params"])
                try:
                    key = entry["ptx"]
                    if key not in loaded:
                        loaded[key] = FlashcKernel(entry["ptx"], entry["entry"])
                    o = torch.empty_like(q)
                    tensors = {"Q": q, "K": k, "V": v, "O": o}
                    spec = benchlib.SPECS[impl]
                    dtypes = {t.name: t.dtype for t in spec.tensors}
                    for name, s in plan["shapes"].items():
                        if name not in tensors:  # fa1's L and M workspaces
                            tensors[name] = torch.empty(s, dtype=getattr(torch, dtypes[name]),
                                                        device="cuda")
                    launch = loaded[key].launcher(plan, tensors)
                    o.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                    max_abs, rel = errors(o, ref)
                    tol_rel, tol_abs = spec.tolerance
                    ok = rel < tol_rel and max_abs < tol_abs  # NaN fails both
                    ms = time_ms(launch, args.warmup, args.iters)
                    row.update(ms=f"{ms:.4f}", tflops=f"{cfg.tflops(ms):.2f}",
                               max_abs_err=f"{max_abs:.3e}", rel_err=f"{rel:.3e}",
                               status="ok" if ok else
                               f"mismatch (tolerance rel {tol_rel:g}, abs {tol_abs:g})")
                    failed |= not ok
                    del tensors, o
                except Exception as e:  # a bad launch: record it, go on
                    row["status"] = f"error: {type(e).__name__}: {e}".replace("\n", " ")
                    failed = True
                    try:
                        torch.cuda.synchronize()
                    except Exception:  # a faulting kernel poisons the context
                        print("bench_attention: the CUDA context is unusable after "
                              f"{impl}: {e}", file=sys.stderr)
                        rows.append(row)
                        write_outputs(args.out_dir, rows, {"aborted": str(e)})
                        return 1
            else:
                b = impl.split("-", 1)[1]
                row = dict(base, kernel="sdpa", backend=b)
                backend = getattr(SDPBackend, backends[b], None)
                if backend is None:
                    row["status"] = f"skipped: SDPBackend.{backends[b]} not in torch {torch.__version__}"
                else:
                    try:
                        def launch():
                            return F.scaled_dot_product_attention(
                                q, k, v, is_causal=cfg.causal, scale=scale)
                        with sdpa_kernel(backend):
                            o = launch()
                            torch.cuda.synchronize()
                            max_abs, rel = errors(o, ref)
                            del o
                            ms = time_ms(launch, args.warmup, args.iters)
                        row.update(ms=f"{ms:.4f}", tflops=f"{cfg.tflops(ms):.2f}",
                                   max_abs_err=f"{max_abs:.3e}", rel_err=f"{rel:.3e}",
                                   status="ok")
                    except Exception as e:  # no kernel for this backend / config
                        msg = str(e).strip().splitlines()
                        row["status"] = f"skipped: {type(e).__name__}: {msg[0] if msg else ''}"
            rows.append(row)
            print(f"   {benchlib.impl_label(row)}: {row.get('ms', '-')} ms, "
                  f"{row.get('tflops', '-')} TFLOP/s, err {row.get('max_abs_err', '-')} / "
                  f"{row.get('rel_err', '-')}: {row['status']}", flush=True)
        q = k = v = ref = None  # frees them before the next configuration
        torch.cuda.empty_cache()

    meta = {
        "device": f"{props.name} (sm_{cap[0]}{cap[1]}, {props.multi_processor_count} SMs)",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cupy": cupy.__version__,
        "driver": cupy.cuda.runtime.driverGetVersion(),
        "arch": ",".join(sorted(archs)),
        "timing": f"median of {args.iters} CUDA-event timings after {args.warmup} warm-up runs",
        "reference": "SDPA MATH, float32" if args.ref == "math" else "SDPA FLASH, fp16",
        "tokens": args.tokens, "hidden": args.hidden, "seed": args.seed,
    }
    write_outputs(args.out_dir, rows, meta)
    return 1 if failed else 0


def write_outputs(out_dir, rows, meta):
    csv_path = os.path.join(out_dir, "results.csv")
    benchlib.write_csv(csv_path, rows)
    with open(os.path.join(out_dir, "results.meta.json"), "w") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    parsed = benchlib.read_csv(csv_path)
    md = benchlib.render_markdown(parsed, title="flashc vs PyTorch SDPA", meta=meta)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(md)
    print(md)
    try:
        benchlib.write_plot(parsed, os.path.join(out_dir, "results.png"))
    except ImportError:
        print("bench_attention: matplotlib missing: no results.png "
              "(re-render with bench/report.py --from-csv)", file=sys.stderr)
    print(f"wrote {out_dir}/results.{{csv,md,png,meta.json}}")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.plan_sidecar:
        sidecar = benchlib.load_sidecar(args.plan_sidecar)
        status = 0
        for cfg in args.configs:
            try:
                print(f"{cfg_name(cfg)}: {benchlib.describe_plan(benchlib.launch_plan(sidecar, cfg))}")
            except ValueError as e:
                print(f"{cfg_name(cfg)}: error: {e}")
                status = 1
        return status
    kernels = {}
    if args.flashc_impls:
        _, kernels = load_manifest(args.ptx_dir)
    plans = flashc_plans(args, kernels)
    if args.dry_run:
        status = 0
        for cfg in args.configs:
            for k in args.flashc_impls:
                p = plans[(cfg, k)]
                if isinstance(p, str):
                    status = 1
                    print(f"{cfg_name(cfg)} {k}: {p}")
                else:
                    print(f"{cfg_name(cfg)} {k}: {os.path.basename(p[0]['ptx'])}: "
                          f"{benchlib.describe_plan(p[1])}")
        return status
    return gpu_main(args, kernels, plans)


if __name__ == "__main__":
    sys.exit(main())

"""Checks of bench/peers/fa3.py's kernel selection and bench/sass_compare.py's
--merge (run by fa3-peer.test) on names written out here: no wheel, no CUDA
tool. The names follow FlashAttention-3's FlashAttnFwdSm90 template."""
import sys

sys.path.insert(0, sys.argv[1])
import checks  # noqa: E402
from checks import check, equal  # noqa: E402
from peers import fa3  # noqa: E402
import sass_compare  # noqa: E402


def kernel(bm, bn, d, element="cutlass::half_t", causal=False, local=False, cluster=1,
           threads=256, stages=2):
    flags = [causal, local] + [False] * 5 + [True, True] + [False] * 3
    bools = ", ".join("true" if f else "false" for f in flags)
    c = "cute::tuple<cute::C<%d>, cute::C<1>, cute::C<1> >" % cluster
    tile = "cute::tuple<cute::C<%d>, cute::C<%d>, cute::C<%d> >" % (bm, bn, d)
    return ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
            "flash::CollectiveMainloopFwdSm90<%d, %s, %s, %d, %s, float, cutlass::arch::Sm90, %s>, "
            "flash::CollectiveEpilogueFwd<cute::tuple<cute::C<%d>, cute::C<%d>, cute::C<%d> >, "
            "%s, %s, cutlass::arch::Sm90, %d, false, false, false, false>, "
            "flash::StaticPersistentTileScheduler<false> > > >(T1::Params)"
            % (stages, c, tile, d, element, bools, bm, d, bn, c, element, threads))


equal(fa3.template_args("f<a<b, c>, 3, d<e<f> > >", 1), ["a<b, c>", "3", "d<e<f> >"],
      "top-level template arguments")
p = fa3.parse_kernel(kernel(128, 176, 128))
equal((p["stages"], p["cluster"], p["block_m"], p["block_n"], p["head_dim"], p["head_dim_v"],
       p["element"], p["epilogue_threads"]),
      (2, [1, 1, 1], 128, 176, 128, 128, "cutlass::half_t", 256), "parsed parameters")
equal((p["Is_causal"], p["Is_local"], p["MmaPV_is_RS"], p["IntraWGOverlap"], p["Split"]),
      (False, False, True, True, False), "parsed flags, in the template's order")
equal(fa3.parse_kernel(kernel(128, 128, 128, causal=True))["Is_causal"], True, "causal flag")
equal(fa3.parse_kernel("void flash::FlashAttnFwdCombine<int>(T1::Params)"), None,
      "another kernel is not parsed")

index = [("a.cubin", "plain", fa3.parse_kernel(kernel(128, 176, 128))),
         ("a.cubin", "cluster2", fa3.parse_kernel(kernel(128, 176, 128, cluster=2))),
         ("a.cubin", "local", fa3.parse_kernel(kernel(128, 128, 128, local=True))),
         ("a.cubin", "causal", fa3.parse_kernel(kernel(128, 128, 128, causal=True))),
         ("b.cubin", "plain", fa3.parse_kernel(kernel(128, 176, 128))),
         ("b.cubin", "bf16", fa3.parse_kernel(kernel(128, 176, 128, "cutlass::bfloat16_t")))]
equal(fa3.select(index, "cutlass::half_t", 128, False)[:2], ("a.cubin", "plain"),
      "the plain launch on a 1x1x1 cluster; one instantiated twice counts once")
equal(fa3.select(index, "cutlass::half_t", 128, True)[1], "causal", "causal, not local")
equal(fa3.select(index, "cutlass::bfloat16_t", 128, False)[1], "bf16", "element type")
try:
    fa3.select(index, "cutlass::half_t", 64, False)
    check(False, "a missing head dim raises NotInWheel")
except fa3.NotInWheel as exc:
    check("d64 non-causal" in str(exc), "NotInWheel names the configuration")
twice = index + [("c.cubin", "other", fa3.parse_kernel(kernel(128, 176, 128, stages=3)))]
try:
    fa3.select(twice, "cutlass::half_t", 128, False)
    check(False, "two different matching kernels raise")
except RuntimeError as exc:
    check("2 kernels" in str(exc), "ambiguity is reported")
equal(fa3.smem_bytes(p, 2), 2 * (128 * 128 + 2 * 176 * 256), "16-bit: Q, K and V per stage")
equal(fa3.smem_bytes(p, 1), 128 * 128 + 2 * 176 * 256 + 2 * 176 * 128,
      "fp8: and V's transposed copy")

# --merge: the new run's rows replace the old ones of the same kernel and
# configuration; the rest stay, in the table's kernel order, and the old run
# is listed with the kernels it still gives.
def row(k, d, causal=False):
    return {"kernel": k, "head_dim": d, "causal": causal, "arch": "sm_90", "tag": "old"}


old = {"meta": {"command": "old", "date": "d0", "commit": "c0"},
       "results": [row("flashc-sm_90a", 64), row("Triton", 64), row("flashc-sm_90a", 128)]}
new = {"meta": {"command": "new", "date": "d1", "commit": "c1"},
       "results": [dict(row("flashc-sm_90a", 64), tag="new"),
                   dict(row("FlashAttention-3", 64), tag="new")]}
got = sass_compare.merge(old, new)
equal([(e["kernel"], e["head_dim"], e["tag"], e.get("run")) for e in got["results"]],
      [("flashc-sm_90a", 64, "new", None), ("Triton", 64, "old", 0),
       ("FlashAttention-3", 64, "new", None), ("flashc-sm_90a", 128, "old", 0)],
      "merged rows, the kept ones naming their run")
equal(got["meta"]["merged"], [{"command": "old", "date": "d0", "commit": "c0"}], "the earlier run")
# A second merge keeps each row's run: the first run's rows stay its own.
third = {"meta": {"command": "third", "date": "d2", "commit": "c2"},
         "results": [dict(row("Triton", 64), tag="third")]}
got = sass_compare.merge(got, third)
equal([(e["kernel"], e["head_dim"], e["tag"], e.get("run")) for e in got["results"]],
      [("flashc-sm_90a", 64, "new", 1), ("Triton", 64, "third", None),
       ("FlashAttention-3", 64, "new", 1), ("flashc-sm_90a", 128, "old", 0)],
      "rows of two earlier runs")
equal([m["command"] for m in got["meta"]["merged"]], ["old", "new"], "both earlier runs")
equal(sass_compare.parse_args(["--label", "hopper", "--kernels", "fa3,fa3-e4m3",
                               "--head-dims", "256"]).kernels,
      ["FlashAttention-3", "FlashAttention-3 e4m3"], "kernel aliases")


# The backward: FlashAttnBwdSm90's mainloop parsed, the plain launch (no
# grouped-query epilogue, not deterministic) selected.
def bwd_kernel(bm, bn, d, causal=False, deterministic=False, gqa=False, warpgroups=2):
    flags = [causal, False, False, False, deterministic, True, False, True]
    bools = ", ".join("true" if f else "false" for f in flags)
    tile = "cute::tuple<cute::C<%d>, cute::C<%d>, cute::C<%d> >" % (bm, bn, d)
    epi = ("flash::CollectiveEpilogueBwdGQA<%s, float, cutlass::arch::Sm90, 256, false, false>"
           % tile if gqa else
           "flash::CollectiveEpilogueBwd<%s, cutlass::half_t, cutlass::arch::Sm90, 256, false, "
           "false, 1>" % tile)
    return ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<"
            "flash::CollectiveMainloopBwdSm90<2, 2, 1, cute::tuple<cute::C<1>, cute::C<1>, "
            "cute::C<1> >, %s, cutlass::half_t, float, cutlass::arch::Sm90, %s, %d, 1, 2, 1, "
            "false>, %s, flash::SingleTileScheduler<false, false, false, 128> > > >(T1::Params)"
            % (tile, bools, warpgroups, epi))


b = fa3.parse_bwd_kernel(bwd_kernel(80, 128, 128))
equal((b["stages"], b["stages_do"], b["stages_ds"], b["block_m"], b["block_n"], b["head_dim"],
       b["element"], b["mma_warpgroups"], b["gqa"]),
      (2, 2, 1, 80, 128, 128, "cutlass::half_t", 2, False), "backward: parsed parameters")
equal((b["Is_causal"], b["Deterministic"], b["SdP_swapAB"], b["dKV_swapAB"], b["dQ_swapAB"]),
      (False, False, True, False, True), "backward: parsed flags, in the template's order")
equal(fa3.parse_bwd_kernel(bwd_kernel(64, 128, 128, gqa=True))["gqa"], True,
      "backward: the grouped-query epilogue")
equal(fa3.parse_bwd_kernel(kernel(128, 176, 128)), None, "a forward kernel is no backward one")
equal(fa3.parse_kernel(bwd_kernel(80, 128, 128)), None, "a backward kernel is no forward one")
bwd_index = [("j.cubin", "plain", b),
             ("j.cubin", "gqa", fa3.parse_bwd_kernel(bwd_kernel(80, 128, 128, gqa=True))),
             ("j.cubin", "det", fa3.parse_bwd_kernel(bwd_kernel(80, 128, 128,
                                                                deterministic=True))),
             ("j.cubin", "causal", fa3.parse_bwd_kernel(bwd_kernel(64, 128, 128, causal=True)))]
equal(fa3.select_bwd(bwd_index, "cutlass::half_t", 128, False)[1], "plain",
      "backward: not grouped-query, not deterministic")
equal(fa3.select_bwd(bwd_index, "cutlass::half_t", 128, True)[1], "causal", "backward: causal")
try:
    fa3.select_bwd(bwd_index, "cutlass::half_t", 64, False)
    check(False, "backward: a missing head dim raises NotInWheel")
except fa3.NotInWheel as exc:
    check("d64 non-causal backward" in str(exc), "backward: NotInWheel names it")
equal(sass_compare.parse_args(["--label", "backward"]).kernels,
      ["flashc-sm_90a bwd", "flashc bwd", "FlashAttention-2 bwd"],
      "the backward label's kernels")
equal(sass_compare.parse_args(["--label", "backward"]).head_dims, [64, 128, 256],
      "the backward label's head dims")

print("fa3 peer: %d checks passed" % checks.count)

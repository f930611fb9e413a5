"""The GPU step's checks (bench/gpu_check.py run): inputs on the GPU, one
kernel or pipeline launched, outputs against torch references in float64.

The references are test/Kernels' (check_variant.py, check_inference.py,
check_backward.py) written in torch: FlashAttention-2's flash_attn_func
semantics, bottom-right aligned masks, rows that see no key give O = 0 and
LSE = +inf. Inputs are standard normal, outputs poisoned with NaN before the
launch. Tolerances as there: O 2e-3 relative L2 and 1e-2 max abs in f16 (fa1
4e-3), 8 times coarser in bf16; LSE 1e-5 relative and 1e-4 per unit of
max(1, |lse|); softmax 1e-5 and 1e-6; gradients 2e-3 relative and 4e-3 of
the largest magnitude (bf16 8 times); the paged-cache append bit for bit.
"""

import math

import gpucheck_cases as cases

HALF = {"": "float16", "_bf16": "bfloat16"}


def suffix(kernel):
    return "_bf16" if kernel.endswith("_bf16") else ""


def visible(torch, nq, nk, causal, left=-1, right=-1):
    i = torch.arange(nq, device="cuda")[:, None] + (nk - nq)
    j = torch.arange(nk, device="cuda")[None, :]
    ok = torch.ones((nq, nk), dtype=torch.bool, device="cuda")
    right = 0 if causal else right
    if left >= 0:
        ok &= j >= i - left
    if right >= 0:
        ok &= j <= i + right
    return ok


def attention(torch, q, k, v, scale, causal, slopes=None, bias=None, key_mask=None):
    """float64 (O, LSE) of q [B, H, Nq, D], k and v [B, H_KV, Nk, D]."""
    q, k, v = (x.double() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    nq, nk = q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) * scale
    if slopes is not None:
        i = torch.arange(nq, device="cuda")[:, None] + (nk - nq)
        j = torch.arange(nk, device="cuda")[None, :]
        s = s - slopes.double()[None, :, None, None] * (i - j).abs()
    if bias is not None:
        s = s + bias.double()
    mask = visible(torch, nq, nk, causal)[None, None].expand(s.shape)
    if key_mask is not None:
        mask = mask & key_mask[:, None, None, :]
    s = s.masked_fill(~mask, -math.inf)
    row_max = s.amax(-1, keepdim=True) if nk else torch.full(s.shape[:-1] + (1,), -math.inf,
                                                              dtype=s.dtype, device="cuda")
    seen = torch.isfinite(row_max)
    p = torch.exp(s - torch.where(seen, row_max, torch.zeros_like(row_max))).masked_fill(~mask, 0)
    total = p.sum(-1, keepdim=True)
    one = torch.ones_like(total)
    o = (p / torch.where(seen, total, one)) @ v
    lse = torch.where(seen, row_max + torch.log(torch.where(seen, total, one)),
                      torch.full_like(row_max, math.inf))[..., 0]
    return o, lse


def compare(torch, name, got, want, tol):
    got = got.double()
    nonfinite = int((~torch.isfinite(got)).sum())
    err = torch.nan_to_num(got - want, nan=1e30, posinf=1e30, neginf=1e30)
    norm = float(want.norm())
    rel = float(err.norm()) / norm if norm > 0 else float(err.norm())
    worst = float(err.abs().max()) if err.numel() else 0.0
    ok = nonfinite == 0 and rel < tol[0] and worst < tol[1]
    return name, ok, "rel %.1e max abs %.1e non-finite %d" % (rel, worst, nonfinite)


def compare_lse(torch, name, got, want):
    got = got.double()
    same_inf = bool(torch.equal(torch.isposinf(got), torch.isposinf(want)))
    fin = torch.isfinite(want)
    diff = (got[fin] - want[fin]).abs()
    scaled = diff / want[fin].abs().clamp(min=1)
    rel = float(diff.norm() / want[fin].norm().clamp(min=1e-30)) if fin.any() else 0.0
    worst = float(scaled.max()) if scaled.numel() else 0.0
    ok = same_inf and not bool(torch.isnan(got).any()) and rel < 1e-5 and worst < 1e-4
    return name, ok, "rel %.1e max scaled abs %.1e%s" % (rel, worst,
                                                         "" if same_inf else " (+inf rows differ)")


def o_tolerance(kernel):
    if suffix(kernel):
        return (1.6e-2, 8e-2)
    return (4e-3, 1e-2) if cases.base_name(kernel) == "fa1" else (2e-3, 1e-2)


def nan(torch, shape, dtype):
    return torch.full(shape, math.nan, dtype=dtype, device="cuda")


def randn(torch, shape, dtype, scale=1.0):
    return (torch.randn(shape, device="cuda") * scale).to(dtype)


def check(torch, kernel, defines, size, get):
    """Runs one check; [(what, ok, detail)]. get(kernel, defines) -> a
    launchable gpu_check.Kernel."""
    fam = cases.family(kernel)
    return {"attention": check_attention, "softmax": check_softmax, "varlen": check_varlen,
            "kvcache": check_kvcache, "kvcache_split": check_kvcache_split,
            "kvcache_combine": check_combine, "kvcache_append": check_append,
            "backward": check_backward}[fam](torch, kernel, defines, size, get)


def tensors_for(torch, kernel, defines, size):
    shapes, ints = cases.launch_shapes(kernel, defines, size)
    return shapes, ints, getattr(torch, HALF[suffix(kernel)])


def check_attention(torch, kernel, defines, size, get):
    shapes, _, half = tensors_for(torch, kernel, defines, size)
    base = cases.base_name(kernel)
    x = {n: randn(torch, shapes[n], half) for n in ("Q", "K", "V")}
    scale = 1.0 / math.sqrt(defines["HEAD_DIM"])
    extra = {}
    if "Slopes" in shapes:
        x["Slopes"] = extra["slopes"] = torch.rand(shapes["Slopes"], device="cuda") * 0.5 + 0.05
    if "Bias" in shapes:
        x["Bias"] = extra["bias"] = torch.randn(shapes["Bias"], device="cuda")
    if "KeyMask" in shapes:
        mask = torch.rand(shapes["KeyMask"], device="cuda") < 0.7
        mask[:, 0] = True
        x["KeyMask"] = extra["key_mask"] = mask
    x["O"] = nan(torch, shapes["O"], half)
    for name in ("LSE", "L", "M"):
        if name in shapes:
            x[name] = nan(torch, shapes[name], torch.float32)
    get(kernel, defines)(x, {"sm_scale": scale})
    torch.cuda.synchronize()
    want_o, want_lse = attention(torch, x["Q"], x["K"], x["V"], scale,
                                 defines.get("CAUSAL", False), **extra)
    out = [compare(torch, "O", x["O"], want_o, o_tolerance(kernel))]
    if base == "flash_attn_lse":
        out.append(compare_lse(torch, "LSE", x["LSE"], want_lse))
    return out


def check_softmax(torch, kernel, defines, size, get):
    shapes, _, _ = tensors_for(torch, kernel, defines, size)
    x = {"X": torch.randn(shapes["X"], device="cuda") * 3, "Y": nan(torch, shapes["Y"],
                                                                    torch.float32)}
    get(kernel, defines)(x, {})
    torch.cuda.synchronize()
    return [compare(torch, "Y", x["Y"], torch.softmax(x["X"].double(), 1), (1e-5, 1e-6))]


def check_varlen(torch, kernel, defines, size, get):
    shapes, ints, half = tensors_for(torch, kernel, defines, size)
    lq, lk = size["lq"], size["lk"]
    cu = lambda ls: torch.tensor([0] + list(_cumsum(ls)), dtype=torch.int32, device="cuda")
    x = {"Q": randn(torch, shapes["Q"], half), "K": randn(torch, shapes["K"], half),
         "V": randn(torch, shapes["V"], half), "cu_seqlens_q": cu(lq), "cu_seqlens_k": cu(lk),
         "O": nan(torch, shapes["O"], half), "LSE": nan(torch, shapes["LSE"], torch.float32),
         # Not read without ALIBI and PAGED.
         "Slopes": nan(torch, shapes["Slopes"], torch.float32),
         "K_cache": nan(torch, shapes["K_cache"], half),
         "V_cache": nan(torch, shapes["V_cache"], half),
         "block_table": torch.zeros(shapes["block_table"], dtype=torch.int32, device="cuda")}
    scale = 1.0 / math.sqrt(defines["HEAD_DIM"])
    get(kernel, defines)(x, dict(ints, sm_scale=scale))
    torch.cuda.synchronize()
    want_o = torch.zeros(shapes["O"], dtype=torch.float64, device="cuda")
    want_lse = torch.zeros(shapes["LSE"], dtype=torch.float64, device="cuda")
    q0 = k0 = 0
    for nq, nk in zip(lq, lk):
        heads = lambda t, a, n: t[a:a + n].transpose(0, 1)[None]
        o, lse = attention(torch, heads(x["Q"], q0, nq), heads(x["K"], k0, nk),
                           heads(x["V"], k0, nk), scale, defines.get("CAUSAL", False))
        want_o[q0:q0 + nq] = o[0].transpose(0, 1)
        want_lse[:, q0:q0 + nq] = lse[0]
        q0, k0 = q0 + nq, k0 + nk
    return [compare(torch, "O", x["O"], want_o, o_tolerance(kernel)),
            compare_lse(torch, "LSE", x["LSE"], want_lse)]


def _cumsum(values):
    total = 0
    for v in values:
        total += v
        yield total


def paged(torch, half, lens, capacity, h_kv, d):
    """A shuffled paged cache holding sequences of `lens` tokens with pages
    for `capacity`; unused pages, slots and table entries NaN / spare pages
    (check_inference.py's layout)."""
    used, max_pages, count = cases.paged_layout(lens, capacity)
    order = torch.randperm(count).tolist()
    shape = (count, cases.PAGE, h_kv, d)
    k_cache, v_cache = nan(torch, shape, half), nan(torch, shape, half)
    table = torch.zeros((len(lens), max_pages), dtype=torch.int32)
    spare = order[sum(used):]
    seqs, taken = [], 0
    for b, n in enumerate(lens):
        ks, vs = randn(torch, (n, h_kv, d), half), randn(torch, (n, h_kv, d), half)
        seqs.append((ks, vs))
        for j in range(max_pages):
            if j < used[b]:
                p = order[taken]
                taken += 1
                rows = ks[j * cases.PAGE:(j + 1) * cases.PAGE]
                k_cache[p, :len(rows)] = rows
                v_cache[p, :len(rows)] = vs[j * cases.PAGE:(j + 1) * cases.PAGE]
                table[b, j] = p
            else:
                table[b, j] = spare[(b + j) % len(spare)]
    return k_cache, v_cache, table.cuda(), seqs


def kvcache_problem(torch, kernel, defines, size):
    shapes, _, half = tensors_for(torch, kernel, defines, size)
    d = defines["HEAD_DIM"]
    k_cache, v_cache, table, seqs = paged(torch, half, size["lens"], size["lens"],
                                          size["H_KV"], d)
    x = {"Q": randn(torch, shapes["Q"], half), "K_cache": k_cache, "V_cache": v_cache,
         "block_table": table,
         "cache_seqlens": torch.tensor(size["lens"], dtype=torch.int32, device="cuda"),
         # Neither is read: LEFTPAD and ALIBI are off.
         "cache_leftpad": torch.zeros(shapes["cache_leftpad"], dtype=torch.int32, device="cuda"),
         "Slopes": torch.zeros(shapes["Slopes"], dtype=torch.float32, device="cuda")}
    scale = 1.0 / math.sqrt(d)
    b, nq, h, _ = shapes["Q"]
    want_o = torch.zeros((b, nq, h, d), dtype=torch.float64, device="cuda")
    want_lse = torch.zeros((b, h, nq), dtype=torch.float64, device="cuda")
    for i, (ks, vs) in enumerate(seqs):
        o, lse = attention(torch, x["Q"][i].transpose(0, 1)[None], ks.transpose(0, 1)[None],
                           vs.transpose(0, 1)[None], scale, defines.get("CAUSAL", False))
        want_o[i], want_lse[i] = o[0].transpose(0, 1), lse[0]
    return shapes, half, x, scale, want_o, want_lse


def check_kvcache(torch, kernel, defines, size, get):
    shapes, half, x, scale, want_o, want_lse = kvcache_problem(torch, kernel, defines, size)
    x.update(O=nan(torch, shapes["O"], half), LSE=nan(torch, shapes["LSE"], torch.float32))
    get(kernel, defines)(x, {"sm_scale": scale})
    torch.cuda.synchronize()
    return [compare(torch, "O", x["O"], want_o, o_tolerance(kernel)),
            compare_lse(torch, "LSE", x["LSE"], want_lse)]


def check_kvcache_split(torch, kernel, defines, size, get):
    shapes, half, x, scale, want_o, want_lse = kvcache_problem(torch, kernel, defines, size)
    x.update(O_part=nan(torch, shapes["O_part"], torch.float32),
             LSE_part=nan(torch, shapes["LSE_part"], torch.float32))
    get(kernel, defines)(x, {"sm_scale": scale})
    merged = {"O_part": x["O_part"], "LSE_part": x["LSE_part"],
              "O": nan(torch, want_o.shape, half), "LSE": nan(torch, want_lse.shape,
                                                              torch.float32)}
    get("flash_attn_kvcache_combine" + suffix(kernel),
        {"HEAD_DIM": defines["HEAD_DIM"]})(merged, {})
    torch.cuda.synchronize()
    return [compare(torch, "O (split + combine)", merged["O"], want_o, o_tolerance(kernel)),
            compare_lse(torch, "LSE", merged["LSE"], want_lse)]


def check_combine(torch, kernel, defines, size, get):
    shapes, _, half = tensors_for(torch, kernel, defines, size)
    x = {"O_part": torch.randn(shapes["O_part"], device="cuda"),
         "LSE_part": torch.randn(shapes["LSE_part"], device="cuda") * 2,
         "O": nan(torch, shapes["O"], half), "LSE": nan(torch, shapes["LSE"], torch.float32)}
    get(kernel, defines)(x, {})
    torch.cuda.synchronize()
    lse_part = x["LSE_part"].double()  # [S, B, H, Nq]
    lse = torch.logsumexp(lse_part, 0)
    weight = torch.exp(lse_part - lse[None]).permute(0, 1, 3, 2)[..., None]  # [S, B, Nq, H, 1]
    want = (weight * x["O_part"].double()).sum(0)
    return [compare(torch, "O", x["O"], want, o_tolerance(kernel)),
            compare_lse(torch, "LSE", x["LSE"], lse)]


def check_append(torch, kernel, defines, size, get):
    shapes, _, half = tensors_for(torch, kernel, defines, size)
    lens, nnew, d = size["lens"], size["Nnew"], defines["HEAD_DIM"]
    k_cache, v_cache, table, _ = paged(torch, half, lens, [n + nnew for n in lens],
                                      size["H_KV"], d)
    x = {"K_new": randn(torch, shapes["K_new"], half), "V_new": randn(torch, shapes["V_new"], half),
         "K_cache": k_cache, "V_cache": v_cache, "block_table": table,
         "cache_seqlens": torch.tensor(lens, dtype=torch.int32, device="cuda")}
    want_k, want_v = k_cache.clone(), v_cache.clone()
    for b in range(len(lens)):
        for i in range(nnew):
            pos = lens[b] + i
            p = int(table[b, pos // cases.PAGE])
            want_k[p, pos % cases.PAGE] = x["K_new"][b, i]
            want_v[p, pos % cases.PAGE] = x["V_new"][b, i]
    get(kernel, defines)(x, {})
    torch.cuda.synchronize()
    bits = lambda t: t.view(torch.int16)
    same = bool(torch.equal(bits(x["K_cache"]), bits(want_k)) and
                torch.equal(bits(x["V_cache"]), bits(want_v)))
    return [("K_cache, V_cache", same, "bit for bit" if same else "differ")]


def check_backward(torch, kernel, defines, size, get):
    """preprocess, flash_attn_bwd, dq_convert (atomic dQ) and flash_attn_bwd
    DETERMINISTIC + flash_attn_bwd_dq, against the float64 gradient."""
    shapes, _, half = tensors_for(torch, "flash_attn_bwd" + suffix(kernel), defines, size)
    sfx, d = suffix(kernel), defines["HEAD_DIM"]
    causal = defines.get("CAUSAL", False)
    q, k, v, d_o = (randn(torch, shapes[n], half) for n in ("Q", "K", "V", "DO"))
    scale = 1.0 / math.sqrt(d)
    qd, kd, vd = (t.double().requires_grad_() for t in (q, k, v))
    o, lse = attention(torch, qd, kd, vd, scale, causal)
    dq, dk, dv = torch.autograd.grad(o, (qd, kd, vd), d_o.double())
    x = {"Q": q, "K": k, "V": v, "DO": d_o, "O": o.detach().to(half),
         "LSE": lse.detach().float(), "Delta": nan(torch, shapes["Delta"], torch.float32),
         "DQaccum": nan(torch, shapes["DQaccum"], torch.float32),
         "DK": nan(torch, shapes["DK"], half), "DV": nan(torch, shapes["DV"], half),
         "DQ": nan(torch, shapes["Q"], half)}
    dd = {"HEAD_DIM": d}
    pick = lambda *names: {n: x[n] for n in names}
    get("flash_attn_bwd_preprocess" + sfx, dd)(pick("O", "DO", "Delta", "DQaccum"), {})
    bwd = pick("Q", "K", "V", "DO", "LSE", "Delta", "DQaccum", "DK", "DV")
    get("flash_attn_bwd" + sfx, defines)(bwd, {"sm_scale": scale})
    get("flash_attn_bwd_dq_convert" + sfx, dd)(pick("DQaccum", "DQ"), {"sm_scale": scale})
    torch.cuda.synchronize()
    tol = (1.6e-2, 3.2e-2) if sfx else (2e-3, 4e-3)

    def grad(name, got, want):
        return compare(torch, name, got, want, (tol[0], tol[1] * float(want.abs().max())))
    delta = (x["O"].double() * d_o.double()).sum(-1)
    out = [compare(torch, "Delta", x["Delta"], delta, (1e-5, 1e-4 * float(delta.abs().max()))),
           grad("dQ", x["DQ"], dq), grad("dK", x["DK"], dk), grad("dV", x["DV"], dv)]
    det = {"DK": nan(torch, shapes["DK"], half), "DV": nan(torch, shapes["DV"], half),
           "DQ": nan(torch, shapes["Q"], half)}
    get("flash_attn_bwd" + sfx, dict(defines, DETERMINISTIC=True))(
        dict(bwd, DK=det["DK"], DV=det["DV"]), {"sm_scale": scale})
    get("flash_attn_bwd_dq" + sfx, defines)(
        dict(pick("Q", "K", "V", "DO", "LSE", "Delta"), DQ=det["DQ"]), {"sm_scale": scale})
    torch.cuda.synchronize()
    out += [grad("deterministic dQ", det["DQ"], dq), grad("dK", det["DK"], dk),
            grad("dV", det["DV"], dv)]
    return out

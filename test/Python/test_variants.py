"""The catalogue of docs/variants.md, checked: every `python` block of its
"Catalogue" section is run as written (flashc.flex_attention replaced by a
stand-in that records the modifiers), and each variant is then run on the
interpreter and the emulator against a float64 NumPy reference; the
emulator's mma.sync count is compared with the (query block, key block)
pairs its mask intersects; its kernel at the default blocks is assembled by
ptxas -v for sm_80 and sm_90a without spills."""
import os
import re

import numpy as np
import pytest

import flashc
from flashc import flex
from conftest import ROOT, PTXAS, assert_assembles_without_spills, relative_error
from test_flex import reference

DOC = os.path.join(ROOT, "docs", "variants.md")
TOLERANCE = 3e-3
SMALL = {"BLOCK_M": 32, "BLOCK_N": 16}
# The shape the catalogue's programs are written for (its captured arrays
# have a batch of 2, 2 heads, 128 tokens).
BATCHES, HEADS, LENGTH, DIM = 2, 2, 128, 32
MAX_LINES = 10


def catalogue_programs():
    """{heading: the program of its python block} of the Catalogue section."""
    with open(DOC) as f:
        text = f.read()
    section = text.split("\n## Catalogue\n", 1)[1].split("\n## ", 1)[0]
    programs = {}
    for part in re.split(r"^### ", section, flags=re.M)[1:]:
        name = part.split("\n", 1)[0].strip()
        blocks = re.findall(r"```python\n(.*?)```", part, re.S)
        assert len(blocks) == 1, f"variant {name}: {len(blocks)} python blocks, not 1"
        assert name not in programs, f"variant {name} twice"
        programs[name] = blocks[0]
    return programs


PROGRAMS = catalogue_programs()


class _Recorder:
    """Stands in for the flashc module in a catalogue program: records the
    call's modifiers instead of running it."""

    def __init__(self):
        self.calls = []

    def flex_attention(self, q, k, v, score_mod=None, mask_mod=None, **kwargs):
        self.calls.append((score_mod, mask_mod, kwargs))
        return q


def inputs(seed=7):
    rng = np.random.default_rng(seed)
    shape = (BATCHES, HEADS, LENGTH, DIM)
    return tuple(rng.standard_normal(shape).astype(np.float16) for _ in range(3))


def variant(name):
    """(score_mod, mask_mod) of the catalogue's program `name`, run as written."""
    recorder = _Recorder()
    q, k, v = inputs()
    exec(compile(PROGRAMS[name], f"{DOC}:{name}", "exec"),
         {"np": np, "flex": flex, "flashc": recorder, "q": q, "k": k, "v": v})
    assert len(recorder.calls) == 1, f"variant {name} calls flex_attention once"
    score_mod, mask_mod, kwargs = recorder.calls[0]
    assert not kwargs, f"variant {name}: options {sorted(kwargs)} the test does not pass"
    assert score_mod is not None or mask_mod is not None
    return score_mod, mask_mod


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


# The key blocks the kernel visits where that is not every block the mask
# intersects: document ids are read from memory, so the loop is bounded by
# the causal part alone (a BlockMask skips the rest: test_document_block_mask).
VISITED = {"document_causal": causal}


def test_catalogue_has_the_common_variants():
    assert len(PROGRAMS) >= 12
    for name in ("causal", "sliding_window", "dilated_sliding_window", "prefix_lm",
                 "document_causal", "sinks_window", "alibi", "softcap", "softcap_causal",
                 "relative_position", "head_scale", "t5_bias"):
        assert name in PROGRAMS
    for name, program in PROGRAMS.items():
        lines = [line for line in program.splitlines() if line.strip()]
        assert len(lines) <= MAX_LINES, f"variant {name} is {len(lines)} lines"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_variant_changes_the_result(name):
    """The reference is not blind to the modifiers: each differs from plain
    attention by far more than the tolerance."""
    q, k, v = inputs()
    plain, _ = reference(q, k, v)
    want, _ = reference(q, k, v, *variant(name))
    assert relative_error(plain, want) > 10 * TOLERANCE


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_variant_on_the_interpreter(name):
    score_mod, mask_mod = variant(name)
    q, k, v = inputs()
    out = flashc.flex_attention(q, k, v, score_mod, mask_mod, target="interp",
                                kernel_options=SMALL)
    want, _ = reference(q, k, v, score_mod, mask_mod)
    assert out.shape == q.shape and out.dtype == q.dtype
    assert relative_error(out, want) < TOLERANCE


def blocks_intersected(mask_mod, bm, bn):
    """(b, h, query block, key block) with some element mask_mod keeps (all
    of them without a mask)."""
    count = 0
    for b in range(BATCHES):
        for h in range(HEADS):
            for m0 in range(0, LENGTH, bm):
                rows = np.arange(m0, min(m0 + bm, LENGTH))[:, None]
                for n0 in range(0, LENGTH, bn):
                    cols = np.arange(n0, min(n0 + bn, LENGTH))[None, :]
                    count += mask_mod is None or bool(np.any(mask_mod(b, h, rows, cols)))
    return count


class _Counting:
    """flex's kernel runs, with the emulator's statistics of the last one."""

    def __init__(self, monkeypatch):
        self.last = None
        run = flex._attention.run

        def counting_run(*args, **kwargs):
            self.last = run(*args, **kwargs)
            return self.last

        monkeypatch.setattr(flex._attention, "run", counting_run)


_PER_BLOCK = {}


@pytest.fixture
def mma_per_block(monkeypatch):
    """mma.sync per (query block, key block) at SMALL, from a run without
    modifiers, which visits every block (once per module)."""
    if "mma" not in _PER_BLOCK:
        counting = _Counting(monkeypatch)
        q, k, v = inputs()
        flashc.flex_attention(q, k, v, target="emulate", kernel_options=SMALL)
        every = blocks_intersected(None, SMALL["BLOCK_M"], SMALL["BLOCK_N"])
        assert counting.last["mma"] > 0 and counting.last["mma"] % every == 0
        _PER_BLOCK["mma"] = counting.last["mma"] // every
    return _PER_BLOCK["mma"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_variant_on_the_emulator_visits_only_its_blocks(name, mma_per_block, monkeypatch):
    """float64 agreement on the emulator, and mma.sync exactly the blocks the
    mask intersects (or VISITED's) times one block's."""
    score_mod, mask_mod = variant(name)
    counting = _Counting(monkeypatch)
    q, k, v = inputs()
    out = flashc.flex_attention(q, k, v, score_mod, mask_mod, target="emulate",
                                kernel_options=SMALL)
    want, _ = reference(q, k, v, score_mod, mask_mod)
    assert relative_error(out, want) < TOLERANCE
    visited = blocks_intersected(VISITED.get(name, mask_mod), SMALL["BLOCK_M"],
                                 SMALL["BLOCK_N"])
    assert counting.last["mma"] == visited * mma_per_block


def test_document_block_mask(monkeypatch):
    """document_causal through a BlockMask visits only the blocks its mask
    intersects; without one, every block on and below the diagonal."""
    _, mask_mod = variant("document_causal")
    block = 32
    options = {"BLOCK_M": block, "BLOCK_N": block}
    block_mask = flashc.create_block_mask(mask_mod, None, None, LENGTH, LENGTH,
                                          BLOCK_SIZE=block)
    counting = _Counting(monkeypatch)
    q, k, v = inputs()
    flashc.flex_attention(q, k, v, target="emulate", kernel_options=options)
    every = blocks_intersected(None, block, block)
    assert counting.last["mma"] % every == 0
    per_block = counting.last["mma"] // every
    out = flashc.flex_attention(q, k, v, block_mask=block_mask, target="emulate",
                                kernel_options=options)
    want, _ = reference(q, k, v, None, mask_mod)
    assert relative_error(out, want) < TOLERANCE
    documents = blocks_intersected(mask_mod, block, block)
    assert counting.last["mma"] == documents * per_block
    flashc.flex_attention(q, k, v, mask_mod=mask_mod, target="emulate", kernel_options=options)
    diagonal = blocks_intersected(causal, block, block)
    assert counting.last["mma"] == diagonal * per_block
    assert documents < diagonal


def test_t5_lookup_limits():
    """t5_bias's buckets cover distances past its 128 (the last bucket), and
    its lookup reads the table's 32 entries; a lookup along a dim of more
    than flex.LOOKUP_ENTRIES, or by float values, is refused."""
    score_mod, _ = variant("t5_bias")
    assert "load(ModTensor[h, 31])" in flex.kernel_source(score_mod)
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 2, 200, 16)).astype(np.float16) for _ in range(3))
    out = flashc.flex_attention(q, k, v, score_mod, target="interp", kernel_options=SMALL)
    want, _ = reference(q, k, v, score_mod)
    assert relative_error(out, want) < TOLERANCE
    wide = flex.Captured(np.zeros(flex.LOOKUP_ENTRIES + 1, np.float32))
    with pytest.raises(flex.TraceError, match="along a dim of 65 entries"):
        flex.kernel_source(lambda s, b, h, i, j: s + wide[abs(i - j)])
    with pytest.raises(flex.TraceError, match="indexed by f32 values"):
        flex.kernel_source(lambda s, b, h, i, j: s + wide[abs(i - j) * 0.5])


@pytest.mark.skipif(not os.path.exists(PTXAS), reason=f"no {PTXAS}")
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_variant_assembles_without_spills(name, arch, head_dim, tmp_path):
    """The kernel flex_attention generates for f16 at `head_dim` and its
    default blocks, assembled by ptxas -v: 0 bytes spilled in every function."""
    score_mod, mask_mod = variant(name)
    block_m, block_n = flex.default_blocks(head_dim, score_mod, mask_mod)
    kernel = flashc.compile(flex.kernel_source(score_mod, mask_mod), arch=arch,
                            import_dirs=(flex._attention.kernels_dir(),), T="f16",
                            HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    assert_assembles_without_spills(kernel, arch, tmp_path)

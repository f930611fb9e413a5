"""The on-disk kernel cache: keyed by sources (imports too), constants,
arch, compile options and compiler build; FLASHC_CACHE_DIR;
flashc.cache.clear()."""
import inspect
import json
import os
import stat

import pytest

import flashc


def entries(cache_dir):
    return sorted(str(p.relative_to(cache_dir)) for p in cache_dir.glob("*/*")
                  if not p.name.startswith("."))


def plant(cache_dir, marker):
    """Appends `marker` to every cached PTX, with a digest to match: a
    kernel that shows it came from the cache."""
    for entry in cache_dir.glob("*/*"):
        ptx = entry / "kernel.ptx"
        ptx.write_text(ptx.read_text() + marker)
        digest = flashc.cache._contents_digest(ptx.read_bytes(),
                                               (entry / "kernel.json").read_bytes())
        (entry / "kernel.sha256").write_text(digest)


def write_kernel(folder, body):
    (folder / "lib.tile").write_text(f"fn scale(x) {{ return x * {body}; }}\n")
    main = folder / "main.tile"
    main.write_text('import "lib.tile";\n'
                    "kernel k<B: int = 64>(X: f32[N], Y: f32[N]) {\n"
                    "  grid(cdiv(N, B));\n"
                    "  let i = program_id(0) * B;\n"
                    "  store(Y[i : i + B], scale(load(X[i : i + B])));\n"
                    "}\n")
    return str(main)


def test_directory_from_the_environment(cache_dir):
    assert flashc.cache.directory() == str(cache_dir)


def test_hit_miss_and_key(tmp_path, cache_dir):
    main = write_kernel(tmp_path, "2.0")
    ptx = flashc.compile(main).ptx
    assert len(entries(cache_dir)) == 1
    plant(cache_dir, "// planted\n")
    # Same source, constants and arch: the cache answers.
    assert flashc.compile(main).ptx == ptx + "// planted\n"
    # Another constant, another arch: new entries.
    assert "planted" not in flashc.compile(main, B=32).ptx
    assert "planted" not in flashc.compile(main, arch="sm_90").ptx
    assert len(entries(cache_dir)) == 3


def test_an_imported_file_is_part_of_the_key(tmp_path, cache_dir):
    main = write_kernel(tmp_path, "2.0")
    flashc.compile(main).ptx
    plant(cache_dir, "// planted\n")
    write_kernel(tmp_path, "3.0")  # main.tile unchanged, lib.tile changed
    ptx = flashc.compile(main).ptx
    assert "planted" not in ptx and "0f40400000" in ptx  # 3.0f
    assert len(entries(cache_dir)) == 2


def test_every_compile_option_is_part_of_the_key(kernels, cache_dir):
    # Each keyword-only option of flashc.compile (flashc's --merge-mask-bounds,
    # --lean-masks), flipped alone, changes fa2's causal PTX: a new entry,
    # not the planted one. An option added to compile() without the key
    # fails here.
    options = [p for p in inspect.signature(flashc.compile).parameters.values()
               if p.kind == p.KEYWORD_ONLY]
    assert options
    src = f"{kernels}/fa2.tile"
    default = flashc.compile(src, HEAD_DIM=16, CAUSAL=True).ptx
    plant(cache_dir, "// planted\n")
    for option in options:
        flipped = flashc.compile(src, HEAD_DIM=16, CAUSAL=True,
                                 **{option.name: not option.default})
        ptx = flipped.ptx
        assert "planted" not in ptx, option.name
        assert ptx != default, option.name
    assert len(entries(cache_dir)) == 1 + len(options)


def test_the_compiler_build_is_part_of_the_key(tmp_path, cache_dir, monkeypatch):
    main = write_kernel(tmp_path, "2.0")
    flashc.compile(main).ptx
    monkeypatch.setattr(flashc.cache, "_compiler_build", "another build")
    flashc.compile(main).ptx
    assert len(entries(cache_dir)) == 2


def test_clear(tmp_path, cache_dir):
    flashc.compile(write_kernel(tmp_path, "2.0")).ptx
    assert entries(cache_dir)
    flashc.cache.clear()
    assert not os.path.exists(cache_dir)
    assert flashc.compile(write_kernel(tmp_path, "2.0")).ptx.startswith("//")


def test_a_broken_entry_is_recompiled(tmp_path, cache_dir):
    main = write_kernel(tmp_path, "2.0")
    ptx = flashc.compile(main).ptx
    for entry in cache_dir.glob("*/*"):
        os.remove(entry / "kernel.json")
    assert flashc.compile(main).ptx == ptx


@pytest.mark.parametrize("damage", ["empty ptx", "truncated ptx", "truncated json",
                                    "edited ptx", "no digest", "empty digest"])
def test_a_damaged_entry_is_recompiled(tmp_path, cache_dir, damage):
    main = write_kernel(tmp_path, "2.0")
    kernel = flashc.compile(main)
    ptx, metadata = kernel.ptx, kernel.metadata
    [entry] = cache_dir.glob("*/*")
    name, change = {
        "empty ptx": ("kernel.ptx", lambda b: b""),
        "truncated ptx": ("kernel.ptx", lambda b: b[: len(b) // 2]),
        "truncated json": ("kernel.json", lambda b: b[: len(b) // 2]),
        "edited ptx": ("kernel.ptx", lambda b: b.replace(b"ret;", b"trap;")),
        "no digest": ("kernel.sha256", None),
        "empty digest": ("kernel.sha256", lambda b: b""),
    }[damage]
    path = entry / name
    if change is None:
        path.unlink()
    else:
        path.write_bytes(change(path.read_bytes()))
    again = flashc.compile(main)
    assert again.ptx == ptx and again.metadata == metadata
    # The entry is whole again: the next compile reads it back as it is.
    assert entries(cache_dir) == [str(entry.relative_to(cache_dir))]
    assert (entry / "kernel.ptx").read_text() == ptx
    assert json.loads((entry / "kernel.json").read_text()) == metadata


def test_an_unwritable_cache_compiles_without_caching(tmp_path, monkeypatch):
    main = write_kernel(tmp_path, "2.0")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        for where in (a_file / "cache", read_only / "cache", read_only):
            monkeypatch.setenv("FLASHC_CACHE_DIR", str(where))
            kernel = flashc.compile(main)
            assert kernel.ptx.startswith("//") and kernel.metadata["entry"]
    finally:
        read_only.chmod(stat.S_IRWXU)
    if os.geteuid() != 0:  # root writes anywhere
        assert not any(read_only.iterdir())

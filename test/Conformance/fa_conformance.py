"""pytest plugin for the conformance run (scripts/fa-conformance.sh): runs
FlashAttention-2's tests/test_flash_attn.py, with its device turned into the
CPU, against flashc through the `flash_attn` package beside this file.

- The suite asks CUDA for the device's capability and memory; those answer
  as an 80 GiB sm_80 (FA_CONFORMANCE_CAPABILITY=9.0 for sm_90).
- A deterministic sample of the parametrizations runs: a case is in when
  the CRC-32 of its test id falls in the first FA_CONFORMANCE_SAMPLE
  fraction (default 0.02), and so are, for each test function, the
  FA_CONFORMANCE_MIN_PER_TEST cases (default 2) with the smallest CRC-32
  among those within the CPU budget, so that a small sample still runs
  every test function.
- A case that fails with NotImplementedError (flashc names the argument it
  has no kernel for) is reported as skipped "unsupported: <reason>"; the
  upstream skips stay skips. The assertions and tolerances are upstream's.
- A case whose longest sequence times head dim (times the loop count of the
  tests that repeat the whole run 50 or 250 times) exceeds
  FA_CONFORMANCE_MAX_ELEMENTS (default 2**22) is skipped "over the CPU
  budget": the kvcache cases with 131,072 keys take 17 GiB and minutes each
  on the interpreter, more than a CPU run can give.
- FA_CONFORMANCE_REPORT names a Markdown file that receives, per test
  function: sampled, skipped upstream, unsupported, passed, failed, and the
  reasons of the unsupported cases.
"""
import collections
import os
import types
import zlib

import pytest
import torch

_SAMPLE = float(os.environ.get("FA_CONFORMANCE_SAMPLE", "0.02"))
_MIN_PER_TEST = int(os.environ.get("FA_CONFORMANCE_MIN_PER_TEST", "2"))
_CAPABILITY = tuple(int(p) for p in os.environ.get("FA_CONFORMANCE_CAPABILITY",
                                                    "8.0").split("."))


def _capability(device=None):
    return _CAPABILITY


def _properties(device=None):
    return types.SimpleNamespace(total_memory=80 * 2**30, name="flashc conformance",
                                 major=_CAPABILITY[0], minor=_CAPABILITY[1])


torch.cuda.get_device_capability = _capability
torch.cuda.get_device_properties = _properties

_MAX_ELEMENTS = int(float(os.environ.get("FA_CONFORMANCE_MAX_ELEMENTS", str(2**22))))

_UNSUPPORTED = "unsupported: "
_OVER_BUDGET = "over the CPU budget: "
_results = collections.defaultdict(collections.Counter)
_reasons = collections.defaultdict(collections.Counter)


def _function(item_or_report):
    return item_or_report.nodeid.split("::")[-1].split("[")[0]


def _crc(item):
    return zlib.crc32(item.nodeid.encode()) / 2**32


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """Keeps only the sampled parametrizations of each test function as it is
    collected: all 508,772 items at once would take gigabytes."""
    outcome = yield
    items = outcome.get_result()
    if not isinstance(items, list):
        return
    for item in items:
        _results[_function(item)]["parametrizations"] += 1
    within_budget = sorted((item for item in items if _elements(item) <= _MAX_ELEMENTS),
                           key=_crc)
    floor = {id(item) for item in within_budget[:_MIN_PER_TEST]}
    sampled = [item for item in items if _crc(item) < _SAMPLE or id(item) in floor]
    for item in sampled:
        elements = _elements(item)
        if elements > _MAX_ELEMENTS:
            item.add_marker(pytest.mark.skip(
                reason=f"{_OVER_BUDGET}{elements} sequence x head-dim x repeats"))
    outcome.force_result(sampled)


# Test functions that repeat the whole forward and backward to catch races
# and nondeterminism on a GPU: their loop counts.
_REPEATS = {"test_flash_attn_race_condition": 250, "test_flash_attn_deterministic": 50,
            "test_flash_attn_varlen_deterministic": 50}


def _elements(item):
    """The longest sequence times the head dim, times the test's own
    repetitions: what the interpreter's memory and time grow with (batch and
    head counts are small in the suite)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    seqlen = max((params[name] for name in ("seqlen", "seqlen_q", "seqlen_k")
                  if isinstance(params.get(name), int)), default=0)
    d = params.get("d", 0) if isinstance(params.get("d"), int) else 0
    return seqlen * d * _REPEATS.get(_function(item), 1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and call.excinfo is not None and \
            call.excinfo.errisinstance(NotImplementedError):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0,
                           _UNSUPPORTED + str(call.excinfo.value))


def pytest_runtest_logreport(report):
    if report.when == "setup" and report.outcome == "passed":
        return
    if report.when == "teardown" and report.outcome == "passed":
        return
    name = _function(report)
    if report.outcome == "skipped":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        reason = reason.removeprefix("Skipped: ")
        if reason.startswith(_OVER_BUDGET):
            _results[name]["over CPU budget"] += 1
        elif reason.startswith(_UNSUPPORTED):
            _results[name]["unsupported"] += 1
            _reasons[name][reason[len(_UNSUPPORTED):].split(":")[0]] += 1
        else:
            _results[name]["skipped upstream"] += 1
    elif report.outcome == "failed":
        _results[name]["failed"] += 1
    elif report.when == "call":
        _results[name]["passed"] += 1


def _table():
    columns = ("parametrizations", "sampled", "skipped upstream", "over CPU budget",
               "unsupported", "passed", "failed")
    lines = ["| test | " + " | ".join(columns) + " | unsupported because |",
             "|---" * (len(columns) + 2) + "|"]
    totals = collections.Counter()
    for name in sorted(_results):
        counts = _results[name]
        counts["sampled"] = sum(counts[c] for c in columns[2:])
        totals.update(counts)
        reasons = "; ".join(f"{r} ({n})" for r, n in _reasons[name].most_common())
        lines.append(f"| {name} | " + " | ".join(str(counts[c]) for c in columns) +
                     f" | {reasons} |")
    lines.append("| all | " + " | ".join(str(totals[c]) for c in columns) + " | |")
    return "\n".join(lines) + "\n"


def pytest_terminal_summary(terminalreporter):
    table = _table()
    terminalreporter.write_sep("=", "flash_attn conformance")
    terminalreporter.write(table)
    path = os.environ.get("FA_CONFORMANCE_REPORT")
    if path:
        with open(path, "w") as out:
            out.write(table)

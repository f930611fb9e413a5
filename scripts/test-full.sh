#!/usr/bin/env bash
# Every test, with the complete numeric sweeps: scripts/test.sh (and CI) runs a
# sample of the longest ones, the lines of test/ marked
# `%if flashc-full %{ ... %}`; this runs them all (FLASHC_FULL=1, which
# test/lit.cfg.py reads). Arguments go to ctest, as with scripts/test.sh.
set -euo pipefail
FLASHC_FULL=1 exec bash "$(dirname "${BASH_SOURCE[0]}")/test.sh" "$@"

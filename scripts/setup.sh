#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for flashc, builds it, and runs the main
# job. Idempotent: packages already present are not reinstalled, and the build
# is incremental.
#   bash scripts/setup.sh            # install + build + main job
#   FLASH_SKIP_MAIN_JOB=1 bash scripts/setup.sh   # install + build only
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

llvm_bin=/usr/lib/llvm-22/bin
apt_packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              cmake ninja-build g++ libgtest-dev ccache python3)
# FLASH_FUZZ=1: also what the libFuzzer build needs (scripts/fuzz.sh).
[ "${FLASH_FUZZ:-0}" = 1 ] && apt_packages+=(clang-22 libclang-rt-22-dev)

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The numeric tests compare against a float64 reference written with numpy
# (bf16 arrays with ml_dtypes); the benchmark report draws its plots with
# matplotlib. The Python package builds with nanobind and scikit-build-core
# and is tested with pytest (module:package).
for entry in numpy ml_dtypes matplotlib nanobind \
             scikit_build_core:scikit-build-core pytest; do
  module=${entry%%:*} package=${entry#*:}
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "setup: installing $package"
    python3 -m pip install --quiet "$package"
  fi
done

# ccache keys on paths relative to the checkout, so a clone in another folder
# (CI's) reuses what this machine's builds compiled.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT="$llvm_bin/lit" "${launcher[@]}" \
    -DFLASHC_PYTHON=ON -DPython_EXECUTABLE="$(python3 -c 'import sys; print(sys.executable)')"
fi
# What the main job and the Python package need; scripts/test.sh builds the
# rest (flash-opt, flash-emulate, the unit tests) before it tests.
cmake --build build --target flashc flashc-doc

# The Python package (docs/python.md): pip builds in build/ too
# (pyproject.toml), so this links the extension if the build above has not,
# and installs it.
python3 -m pip install --quiet --no-build-isolation .

[ "${FLASH_SKIP_MAIN_JOB:-0}" = 1 ] && exit 0
bash scripts/main-job.sh

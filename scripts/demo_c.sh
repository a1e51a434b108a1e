#!/usr/bin/env bash
# demo_c.sh — the C demo: installs what is missing, builds libpith and
# examples/c/mlp.c (Release, in build/), and runs the 2-layer MLP, which prints its output
# and the time per forward pass. Extra arguments go to the example, e.g.
#   bash scripts/demo_c.sh --batch 256 --iterations 50
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${PITH_JOBS:-2}

bash scripts/setup.sh
mkdir -p build
# The same configuration as scripts/test.sh, so the two share build/; only the example and
# the library it needs are built here.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPITH_BUILD_TESTS=ON \
    -DPITH_BUILD_EXAMPLES=ON -DPITH_BUILD_BENCHMARKS=ON >build/configure.log 2>&1 || {
    cat build/configure.log >&2
    echo "demo.sh: cmake configure failed" >&2
    exit 1
}
cmake --build build -j "$jobs" --target mlp
echo
exec ./build/examples/c/mlp "$@"

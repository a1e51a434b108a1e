#!/usr/bin/env bash
# run.sh [BUILD_DIR] — builds and runs the embedding programs (tests/embed/*.c) with ctest,
# each in its own process under a timeout (scripts/test.sh's last step calls it).
#
#   1. against the installed package: the programs link the libpython of the venv's Python
#      and the libpith.so.0 inside the installed pith package, and import that package;
#      built in BUILD_DIR/embed (BUILD_DIR defaults to build/);
#   2. under ASan+UBSan (unless PITH_TEST_SKIP_SANITIZERS=1): libpith and pith._C built
#      with -fsanitize=address,undefined in build-embed-asan/ (or PITH_EMBED_ASAN_BUILD; laid out by
#      scripts/dev_python.sh), the programs too, run with PYTHONMALLOC=malloc and leak
#      suppressions for libpython only (lsan.supp).
#
# Environment: PITH_EMBED_PYTHON (default .venv/bin/python: the venv test.sh installs pith
# into), PITH_EMBED_PYTHONPATH (import pith from there instead of the venv, e.g. a
# dev_python.sh pypath/), PITH_JOBS (default 2).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_root=${1:-$repo_root/build}
python=${PITH_EMBED_PYTHON:-$repo_root/.venv/bin/python}
jobs=${PITH_JOBS:-2}

if [ -n "${PITH_EMBED_PYTHONPATH:-}" ]; then
    export PYTHONPATH=$PITH_EMBED_PYTHONPATH
fi
pkg_dir=$("$python" -c 'import os, pith; print(os.path.dirname(os.path.abspath(pith.__file__)))')
pythonpath=${PITH_EMBED_PYTHONPATH:-$(dirname "$pkg_dir")}
unset PYTHONPATH

# embed_suite NAME BUILD_DIR LIBPITH PYTHONPATH [CMAKE ARGS...]
embed_suite() {
    local name=$1 dir=$2 lib=$3 path=$4
    shift 4
    mkdir -p "$dir"
    cmake -S "$repo_root/tests/embed" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
        -DPython_EXECUTABLE="$python" -DPITH_EMBED_INCLUDE="$repo_root/include" \
        -DPITH_EMBED_LIBRARY="$lib" -DPITH_EMBED_PYTHONPATH="$path" "$@" \
        >"$dir/configure.log" 2>&1 || {
        cat "$dir/configure.log" >&2
        echo "run.sh: configuring the embedding programs ($name) failed" >&2
        return 1
    }
    cmake --build "$dir" -j "$jobs"
    echo "embedding programs ($name): pith from $path"
    local log="$dir/ctest.log" rc=0
    ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$jobs" 2>&1 |
        tee "$log" || rc=$?
    [ "$rc" = 0 ] && return 0
    # LeakSanitizer's stop-the-world tracer sometimes crashes at a process's exit, after the
    # program has passed and before any leak is looked for ("Tracer caught signal 11",
    # google/sanitizers#1353). Here it hits Embed.disarm, in bursts: in CI twice in a row,
    # then not in 30 runs by hand. When every failure is that crash, the failed programs run
    # again, whole, leak check included, up to 4 more times a second apart, until they pass;
    # any other failure fails the suite at once.
    local failed crashes attempt
    for attempt in 1 2 3 4; do
        failed=$(grep -c -E '\*\*\*(Failed|Exception|Timeout)' "$log" || true)
        crashes=$(grep -c 'LeakSanitizer has encountered a fatal error' "$log" || true)
        if ! { [ "$failed" -gt 0 ] && [ "$failed" = "$crashes" ] &&
            [ "$(grep -c 'Tracer caught signal' "$log" || true)" = "$crashes" ]; }; then
            return "$rc"
        fi
        echo "run.sh: $failed program(s) failed only by LeakSanitizer's tracer crash at exit;" \
            "running them again ($attempt of 4)"
        sleep 1
        # (the rerun's "tests passed ... out of" line is left out: scripts/test.sh counts
        # each program once, from the first run)
        rc=0
        ctest --test-dir "$dir" --output-on-failure --rerun-failed -j "$jobs" 2>&1 |
            grep -v -E 'tests passed.* out of' | tee "$log.rerun" || rc=$?
        [ "$rc" = 0 ] && return 0
        mv "$log.rerun" "$log"
    done
    return "$rc"
}

embed_suite "installed package" "$build_root/embed" "$(realpath "$pkg_dir/libpith.so.0")" \
    "$pythonpath"

if [ "${PITH_TEST_SKIP_SANITIZERS:-0}" = 1 ]; then
    echo "run.sh: PITH_TEST_SKIP_SANITIZERS=1: skipping the ASan run"
    exit 0
fi
asan_dir=${PITH_EMBED_ASAN_BUILD:-$repo_root/build-embed-asan}
mkdir -p "$asan_dir"
if [ ! -f "$asan_dir/build.ninja" ]; then
    cmake -S "$repo_root" -B "$asan_dir" -G Ninja -DPITH_SANITIZE=address \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DPITH_BUILD_PYTHON=ON \
        -DPITH_BUILD_TESTS=OFF -DPITH_BUILD_EXAMPLES=OFF -DPITH_BUILD_BENCHMARKS=OFF \
        -DPython_EXECUTABLE="$python" >"$asan_dir/configure.log"
fi
PITH_JOBS=$jobs bash "$repo_root/scripts/dev_python.sh" "$asan_dir" >"$asan_dir/build.log" || {
    cat "$asan_dir/build.log" >&2
    echo "run.sh: the ASan build of pith._C failed" >&2
    exit 1
}
embed_suite "ASan+UBSan" "$asan_dir/embed" "$asan_dir/libpith.so.0" "$asan_dir/pypath" \
    -DPITH_EMBED_ASAN=ON -DPITH_EMBED_TIMEOUT=300

#!/usr/bin/env bash
# run_under_pthread_blas.sh DIR PROGRAM ARGS... — runs a test program with OpenBLAS's pthread
# build (DIR, Debian's libopenblas0-pthread) in place of the OpenMP build it links, through
# LD_LIBRARY_PATH, which the loader searches before the RUNPATH (Note [One OpenBLAS]).
# tests/CMakeLists.txt runs the GEMM epilogue tests of test_compile this way, since pith
# splits products differently under that build (Note [GEMM panels]).
#
# Without DIR/libopenblas.so.0 it exits 77, which ctest reports as skipped, unless
# PITH_TEST_REQUIRE_PTHREAD_BLAS=1 (as for tests/python/test_blas_threads.py): then it fails.
set -euo pipefail

dir=$1
program=$2
shift 2

if [ ! -e "$dir/libopenblas.so.0" ]; then
    reason="OpenBLAS's pthread build ($dir/libopenblas.so.0, Debian package libopenblas0-pthread) is not installed; scripts/setup.sh installs it"
    if [ "${PITH_TEST_REQUIRE_PTHREAD_BLAS:-0}" = 1 ]; then
        echo "FAILED: $reason (PITH_TEST_REQUIRE_PTHREAD_BLAS=1)" >&2
        exit 1
    fi
    echo "SKIPPED: $reason"
    exit 77
fi

export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The run would still pass with the OpenMP build loaded (the tests follow whichever build is
# there), so make sure that the loader really takes this one. pith loads OpenBLAS on the
# first product (Note [OpenBLAS is loaded on first use]), so ldd cannot tell: the loader's
# own log of the run (LD_DEBUG=files, into files of its own) names the file it initialised.
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
status=0
LD_DEBUG=files LD_DEBUG_OUTPUT="$log_dir/ld" "$program" "$@" || status=$?
loaded=$(cat "$log_dir"/ld.* 2>/dev/null |
    sed -n -E 's/.*calling init: ([^ ]*libopenblas\.so\.0)$/\1/p' | head -n 1)
if [ "$(realpath -e "${loaded:-/nonexistent}" 2>/dev/null)" != "$(realpath -e "$dir/libopenblas.so.0")" ]; then
    echo "FAILED: with LD_LIBRARY_PATH=$dir, $program loaded libopenblas.so.0 from '${loaded:-nowhere}'" >&2
    exit 1
fi
echo "libopenblas.so.0 => $loaded"
exit "$status"

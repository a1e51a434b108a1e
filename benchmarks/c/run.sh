#!/usr/bin/env bash
# run.sh — builds pith Release (in build/) and runs every C benchmark once, each with 2
# threads (PITH_NUM_THREADS=2, OMP_NUM_THREADS=2 for OpenBLAS and the reference loops) and
# with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for the benchmark command only, so that
# OpenBLAS picks its kernel for this CPU. Writes benchmarks/c/results.md: one table row per
# figure, with the command that produced it. Not a test: run it on a quiet machine.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
jobs=${PITH_JOBS:-2}
threads=${PITH_BENCH_THREADS:-2}
out=benchmarks/c/results.md
log=build/benchmarks.log

bash scripts/setup.sh
mkdir -p build
# The same configuration as scripts/test.sh and scripts/demo.sh, so they share build/.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPITH_BUILD_TESTS=ON \
    -DPITH_BUILD_EXAMPLES=ON -DPITH_BUILD_BENCHMARKS=ON >build/configure.log 2>&1 || {
    cat build/configure.log >&2
    exit 1
}
benchmarks=(bench_add_small bench_add_large bench_matmul bench_sum bench_compile bench_fusion)
cmake --build build -j "$jobs" --target "${benchmarks[@]}"

rows=()
: >"$log"
for bench in "${benchmarks[@]}"; do
    command="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PITH_NUM_THREADS=$threads OMP_NUM_THREADS=$threads build/benchmarks/c/$bench"
    echo "== $command"
    output=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PITH_NUM_THREADS="$threads" \
        OMP_NUM_THREADS="$threads" "build/benchmarks/c/$bench")
    printf '%s\n' "$output" | grep -v '^RESULT' | tee -a "$log"
    while IFS=$'\t' read -r _ key figure value unit target; do
        rows+=("| $figure | $value $unit | $target | \`$command\` |")
    done < <(printf '%s\n' "$output" | grep '^RESULT')
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
openblas=$(grep -m1 '^OpenBLAS:' "$log" | sed 's/^OpenBLAS: //')
{
    echo "# C benchmark results"
    echo
    echo "Produced by \`bash benchmarks/c/run.sh\` on $(date -u +%Y-%m-%d) (git $(git describe --always --dirty 2>/dev/null || echo 'unknown'))."
    echo "Machine: $cpu, $(nproc) cores; $threads threads for pith, OpenBLAS and the reference loops."
    echo "OpenBLAS: $openblas (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for these commands only)."
    echo "Each figure is the median over many repetitions (see the benchmark's source); ratios"
    echo "compare two medians measured in the same run, interleaved."
    echo
    echo "| figure | value | target | command |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
} >"$out"
echo
cat "$out"

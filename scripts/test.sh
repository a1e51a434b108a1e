#!/usr/bin/env bash
# test.sh — THE test command (README, .ci/run): runs every test pith has.
#
#   1. scripts/setup.sh (Debian packages, as root)
#   2. Release build in build/ (library, tests, examples, benchmarks), then ctest: every
#      GoogleTest suite, the C example, and Consumer.InstalledTree (installs the build into a
#      scratch prefix and builds an outside project against it: find_package and pkg-config)
#   3. the library again with CMake's default generator (Unix Makefiles), from scratch in
#      build-make/: libpith.so and libpith.a (no tests, examples or benchmarks)
#   4. ASan+UBSan build in build-asan/: the whole GoogleTest suite, leak detection on
#   5. TSan build in build-tsan/: the concurrency tests (ctest -R Concurrency)
#   6. pytest on tests/python (when it holds tests), in .venv
#   7. pytest on tests/models: the model programs (PyPI packages installed --no-deps)
#   8. the embedding programs (tests/embed/run.sh, when it exists), and under ASan unless
#      PITH_TEST_SKIP_SANITIZERS=1
#
# Stops at the first failure. Environment: PITH_JOBS (build jobs, default 2),
# PITH_TEST_SKIP_SANITIZERS=1 to skip the sanitizer runs (steps 4-5 and the ASan run of step
# 8) for a quick local run (CI never sets it),
# PITH_TEST_NO_TORCH=1 to run pytest without PyTorch, the optional oracle.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root=$(pwd)
jobs=${PITH_JOBS:-2}
script_start=$SECONDS
step_name="(start)"
step_start=$SECONDS
total_passed=0

on_exit() {
    local status=$?
    if [ "$status" -ne 0 ]; then
        echo >&2
        echo "test.sh: FAILED (exit $status) in step: $step_name, after $((SECONDS - script_start)) s" >&2
    fi
}
trap on_exit EXIT

step() {
    if [ "$step_name" != "(start)" ]; then
        echo "---- $step_name: done in $((SECONDS - step_start)) s"
    fi
    step_name=$1
    step_start=$SECONDS
    echo
    echo "==== $step_name"
}

# configure BUILD_DIR [-G GENERATOR] ARGS... — a build tree of this checkout, Ninja unless
# another generator is named.
configure() {
    local build_dir=$1
    shift
    local generator=Ninja
    if [ "${1:-}" = -G ]; then
        generator=$2
        shift 2
    fi
    cmake -S "$repo_root" -B "$build_dir" -G "$generator" "$@" >"$build_dir/configure.log" 2>&1 || {
        cat "$build_dir/configure.log" >&2
        echo "test.sh: cmake configure of $build_dir failed" >&2
        return 1
    }
}

# run_ctest BUILD_DIR ARGS... — runs ctest quietly into BUILD_DIR/ctest.log, prints its
# summary lines; on failure prints everything but the passing tests' lines.
run_ctest() {
    local build_dir=$1
    shift
    local log=$build_dir/ctest.log
    local status=0
    ctest --test-dir "$build_dir" --output-on-failure --no-tests=error --timeout 600 \
        -j "$jobs" "$@" >"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        grep -v -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed |^ +Start +[0-9]+: ' "$log" >&2 || true
        echo "test.sh: ctest failed in $build_dir (full log: $log)" >&2
        return "$status"
    fi
    grep -E 'tests passed|Total Test time' "$log"
    local count
    count=$(sed -n -E 's/.*tests passed.* out of ([0-9]+).*/\1/p' "$log" | tail -n1)
    total_passed=$((total_passed + ${count:-0}))
}

# ---------------------------------------------------------------------------------------
step "setup (Debian packages)"
bash scripts/setup.sh

# ---------------------------------------------------------------------------------------
step "Release build (build/)"
mkdir -p build
configure build -DCMAKE_BUILD_TYPE=Release -DPITH_BUILD_TESTS=ON \
    -DPITH_BUILD_EXAMPLES=ON -DPITH_BUILD_BENCHMARKS=ON
cmake --build build -j "$jobs"

step "ctest: GoogleTest suites, example, installed-tree consumer (build/)"
# CompileTest.GemmEpiloguesUnderPthreadOpenBlas fails rather than skips without OpenBLAS's
# pthread build (scripts/setup.sh installs it), as pytest's tests of it do below.
PITH_TEST_REQUIRE_PTHREAD_BLAS=1 run_ctest build

# CMake's default generator builds differently from Ninja (Make does not create a custom
# command's output directory, for one), and a tree it has built once hides what a fresh one
# would hit: so from scratch, and only the libraries, to keep it cheap.
step "Unix Makefiles build, from scratch: libpith.so and libpith.a (build-make/)"
rm -rf build-make
mkdir -p build-make
configure build-make -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DPITH_BUILD_TESTS=OFF \
    -DPITH_BUILD_EXAMPLES=OFF -DPITH_BUILD_BENCHMARKS=OFF
cmake --build build-make -j "$jobs" >build-make/build.log 2>&1 || {
    cat build-make/build.log >&2
    echo "test.sh: the Unix Makefiles build failed (full log: build-make/build.log)" >&2
    false
}
# libpith.a is one object (Note [One object in libpith.a]).
test -f build-make/libpith.so.0
test "$(ar t build-make/libpith.a)" = pith.o
echo "built build-make/libpith.so and build-make/libpith.a"

# ---------------------------------------------------------------------------------------
if [ "${PITH_TEST_SKIP_SANITIZERS:-0}" = 1 ]; then
    echo
    echo "test.sh: PITH_TEST_SKIP_SANITIZERS=1: skipping the ASan and TSan runs"
else
    # Sanitizer builds compile only the library and the tests (no examples, no benchmarks).
    # The library (C) at -O1 -g runs the tests fast enough; the GoogleTest code (C++) at
    # -O0 -g compiles three times faster than at -O1 under ASan+UBSan, which is most of
    # this script's time on two cores.
    sanitizer_flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
                     -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g" -DPITH_BUILD_TESTS=ON
                     -DPITH_BUILD_EXAMPLES=OFF -DPITH_BUILD_BENCHMARKS=OFF)

    step "ASan+UBSan build (build-asan/)"
    mkdir -p build-asan
    configure build-asan -DPITH_SANITIZE=address "${sanitizer_flags[@]}"
    cmake --build build-asan -j "$jobs"

    step "ctest under ASan+UBSan: the whole GoogleTest suite (build-asan/)"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_init_order=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest build-asan

    # Note [TSan and OpenMP]
    # libgomp is not built with TSan, so the futex-based barriers and the thread pool that
    # hand data between the threads of one OpenMP team are invisible to it: every parallel
    # region would report races that are not there. The concurrency tests are about *our*
    # synchronisation (tag claims, the registry, the allocator cache) between threads that
    # the tests start themselves, so this run keeps each kernel on its calling thread
    # (PITH_NUM_THREADS=1, which the BLAS follows too: Note [BLAS threads]; OMP_NUM_THREADS=1
    # for anything else that opens a region) and
    # suppresses anything reported from inside libgomp (scripts/tsan.supp).
    step "TSan build (build-tsan/): suites with concurrency tests"
    mapfile -t tsan_suites < <(grep -l -E 'Concurrency' tests/*/*.cc 2>/dev/null |
                               xargs -r -n1 dirname | xargs -r -n1 basename | sort -u)
    if [ ${#tsan_suites[@]} -eq 0 ]; then
        echo "test.sh: no test file under tests/ mentions Concurrency" >&2
        false
    fi
    tsan_targets=()
    for suite in "${tsan_suites[@]}"; do
        tsan_targets+=("test_$suite")
    done
    echo "suites: ${tsan_suites[*]}"
    mkdir -p build-tsan
    configure build-tsan -DPITH_SANITIZE=thread "${sanitizer_flags[@]}"
    cmake --build build-tsan -j "$jobs" --target "${tsan_targets[@]}"

    step "ctest under TSan: -R Concurrency (build-tsan/)"
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$repo_root/scripts/tsan.supp" \
    PITH_NUM_THREADS=1 OMP_NUM_THREADS=1 \
        run_ctest build-tsan -R Concurrency
fi

# ---------------------------------------------------------------------------------------
step "pytest (tests/python)"
if find tests/python -name 'test_*.py' -print -quit 2>/dev/null | grep -q .; then
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    # The package with its test extras (pytest, numpy, hypothesis); building it builds
    # libpith and pith._C again, in build/python/ (pyproject.toml). PyTorch is the optional
    # oracle of the tests (they skip its comparisons without it): exactly 2.13.0, the CPU
    # build that pip finds on this machine's disk. Never a range: any other version is a
    # download of several GB.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check ".[test]"
    if [ "${PITH_TEST_NO_TORCH:-0}" != 1 ]; then
        .venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
    fi
    pytest_status=0
    # The tests of OpenBLAS's pthread build (scripts/setup.sh installs it) fail rather than
    # skip here without it.
    PITH_TEST_REQUIRE_PTHREAD_BLAS=1 .venv/bin/python -m pytest tests/python -q -p no:cacheprovider \
        2>&1 | tee build/pytest.log || pytest_status=${PIPESTATUS[0]}
    # Exit code 5 is "no tests collected": not a failure while tests/python is young.
    if [ "$pytest_status" -ne 0 ] && [ "$pytest_status" -ne 5 ]; then
        echo "test.sh: pytest failed (exit $pytest_status)" >&2
        false
    fi
    count=$(sed -n -E 's/^=* ?([0-9]+) passed.*/\1/p' build/pytest.log | tail -n1)
    total_passed=$((total_passed + ${count:-0}))
else
    echo "no Python tests yet (tests/python has no test_*.py)"
fi

# ---------------------------------------------------------------------------------------
# Real programs by other people (PyPI packages written against torch) and tutorial-style
# programs, unmodified, imported with their `import torch` resolved to pith (tests/models,
# Note [Loading torch programs on pith]). The packages depend on torch, so they go in with
# --no-deps after torch==2.13.0 above: never let one of them resolve torch itself.
step "model programs (tests/models)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    -r tests/models/requirements.txt
models_status=0
.venv/bin/python -m pytest tests/models -q -p no:cacheprovider \
    2>&1 | tee build/models.log || models_status=${PIPESTATUS[0]}
if [ "$models_status" -ne 0 ]; then
    echo "test.sh: model programs failed (exit $models_status)" >&2
    false
fi
count=$(sed -n -E 's/^=* ?([0-9]+) passed.*/\1/p' build/models.log | tail -n1)
total_passed=$((total_passed + ${count:-0}))

# ---------------------------------------------------------------------------------------
# tests/embed/run.sh builds the programs against the package installed in .venv above, runs
# them with ctest, then (unless PITH_TEST_SKIP_SANITIZERS=1) again against an ASan+UBSan
# build of libpith and pith._C in build-embed-asan/.
step "embedding programs (tests/embed)"
if [ -f tests/embed/run.sh ]; then
    bash tests/embed/run.sh "$repo_root/build" 2>&1 | tee build/embed.log
    count=$(sed -n -E 's/.*tests passed.* out of ([0-9]+).*/\1/p' build/embed.log |
            awk '{ n += $1 } END { print n + 0 }')
    total_passed=$((total_passed + count))
else
    echo "no embedding programs yet (tests/embed/run.sh does not exist)"
fi

step "summary"
echo "all steps passed in $((SECONDS - script_start)) s"
echo "pith: $total_passed passed, 0 failed"

#!/usr/bin/env bash
# setup.sh — installs the Debian packages that building and testing pith need, as root.
#
# Idempotent: every package is checked with `dpkg -s` first, so a machine that has them all
# runs nothing. `apt-get update` runs once, and only when something is missing. The only
# network used is Debian's archive (and, in scripts/test.sh, PyPI for the Python tests).
set -euo pipefail

# Build: a C11 compiler with OpenMP (gcc's libgomp), C++17 for GoogleTest, CMake >= 3.20
# (Debian's 3.25, or a newer one already on PATH), Ninja, pkg-config, OpenBLAS (the OpenMP
# build, so BLAS threads do not oversubscribe inside our own OpenMP regions), and the
# runtime of OpenBLAS's pthread build, which the tests put in its place through
# LD_LIBRARY_PATH (tests/python/test_blas_threads.py; pith links the OpenMP build by path,
# whatever the alternatives system prefers: Note [One OpenBLAS]).
PITH_PACKAGES=(
    cmake ninja-build gcc g++ make pkg-config
    libgtest-dev libopenblas-openmp-dev libopenblas0-pthread
    python3 python3-venv
)
# Installed when the archive has them, never fatal: Python 3.11 headers and libpython (for the
# Python bindings and the embedding programs; a Debian release without 3.11 lacks them) and
# valgrind.
PITH_OPTIONAL_PACKAGES=(python3.11-dev libpython3.11-dev valgrind)

package_installed() {
    # "install ok installed" and nothing else: a removed-but-configured package is missing.
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

missing=()
for package in "${PITH_PACKAGES[@]}"; do
    package_installed "$package" || missing+=("$package")
done
optional_missing=()
for package in "${PITH_OPTIONAL_PACKAGES[@]}"; do
    package_installed "$package" || optional_missing+=("$package")
done

# CMake: any cmake on PATH that is >= 3.20 will do (the Python toolchain may bring a newer
# one than Debian's).
cmake_check() {
    local version
    version=$(cmake --version | head -n1 | awk '{print $3}')
    if ! printf '3.20\n%s\n' "$version" | sort -V -C; then
        echo "setup: cmake $version ($(command -v cmake)) is older than 3.20" >&2
        exit 1
    fi
}

if [ ${#missing[@]} -eq 0 ] && [ ${#optional_missing[@]} -eq 0 ]; then
    cmake_check
    echo "setup: all Debian packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]} ${optional_missing[*]}" >&2
    echo "setup: run this script as root (it uses apt-get), or install them yourself" >&2
    if [ ${#missing[@]} -gt 0 ]; then exit 1; fi
    cmake_check
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup: installing ${missing[*]} ${optional_missing[*]}"
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
fi
for package in "${optional_missing[@]}"; do
    apt-get install -y -qq --no-install-recommends "$package" </dev/null ||
        echo "setup: optional package $package could not be installed (ignored)"
done

cmake_check
echo "setup: done"

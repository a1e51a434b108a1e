#!/usr/bin/env bash
# dev_python.sh BUILD_DIR — builds libpith and pith._C in BUILD_DIR (Debug unless
# CMAKE_BUILD_TYPE is set) and lays out an importable package in BUILD_DIR/pypath: symlinks
# to python_bindings/pith/* plus the built extension and libpith. For development only:
#
#   bash scripts/dev_python.sh /work/build-x
#   PYTHONPATH=/work/build-x/pypath python -m pytest tests/python
#
# Several people (or build dirs) can work side by side without reinstalling the package.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:?usage: dev_python.sh BUILD_DIR}
mkdir -p "$build_dir"
if [ ! -f "$build_dir/build.ninja" ]; then
    cmake -S "$repo_root" -B "$build_dir" -G Ninja \
        -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Debug}" -DPITH_BUILD_PYTHON=ON \
        -DPITH_BUILD_TESTS=OFF -DPITH_BUILD_EXAMPLES=OFF -DPITH_BUILD_BENCHMARKS=OFF \
        -DPython_EXECUTABLE="$(command -v python3)" >"$build_dir/configure.log"
fi
cmake --build "$build_dir" -j "${PITH_JOBS:-2}" --target pith_python
pkg=$build_dir/pypath/pith
rm -rf "$build_dir/pypath"
mkdir -p "$pkg"
for entry in "$repo_root"/python_bindings/pith/*; do
    case $(basename "$entry") in __pycache__) continue ;; esac
    ln -s "$entry" "$pkg/"
done
ln -s "$build_dir"/python_bindings/_C*.so "$pkg/"
ln -s "$build_dir"/libpith.so.0 "$pkg/"

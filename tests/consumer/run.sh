#!/usr/bin/env bash
# run.sh BUILD_DIR WORK_DIR — installs the pith built in BUILD_DIR into WORK_DIR/prefix with
# `cmake --install`, then builds and runs tests/consumer/consumer.c against that installed
# tree only: through find_package(pith) (shared and static targets) and through pkg-config
# with a plain cc command (shared, and static with --static). Also builds clash.c, which
# defines names pith uses internally (key_name, add_cpu, ...), the same ways (both
# find_package targets, and pkg-config --static), and checks the installed files, the
# SONAME, that neither libpith.so nor libpith.a defines global symbols outside pith_*, and
# that every consumer's first product loads the OpenBLAS that the build names.
# Registered with ctest as Consumer.InstalledTree; scripts/test.sh runs it through ctest.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR WORK_DIR" >&2
    exit 2
fi
build_dir=$(cd "$1" && pwd)
work_dir=$2
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmake_command=${CMAKE_COMMAND:-cmake}
cc_command=${CC:-cc}

die() {
    echo "Consumer: FAILED: $*" >&2
    exit 1
}

rm -rf "$work_dir"
mkdir -p "$work_dir"
work_dir=$(cd "$work_dir" && pwd)
prefix=$work_dir/prefix

echo "== cmake --install $build_dir --prefix $prefix"
"$cmake_command" --install "$build_dir" --prefix "$prefix" >"$work_dir/install.log" ||
    { cat "$work_dir/install.log"; die "cmake --install"; }

# Where GNUInstallDirs put the libraries (lib, or lib64 on some systems).
libdir=$(dirname "$(find "$prefix" -name 'libpith.a' -print -quit)")
[ -d "$libdir" ] || die "libpith.a was not installed"
for file in include/pith/pith.h include/pith/ops.h include/pith/export.h; do
    [ -f "$prefix/$file" ] || die "$file was not installed"
done
[ -f "$libdir/pkgconfig/pith.pc" ] || die "pith.pc was not installed"
[ -f "$libdir/cmake/pith/pithConfig.cmake" ] || die "pithConfig.cmake was not installed"
[ -f "$libdir/cmake/pith/pithConfigVersion.cmake" ] || die "pithConfigVersion.cmake was not installed"
[ -L "$libdir/libpith.so" ] || die "the libpith.so development link was not installed"

soname=$(objdump -p "$libdir/libpith.so" | awk '$1 == "SONAME" {print $2}')
[ -n "$soname" ] || die "libpith.so has no SONAME"
[ -e "$libdir/$soname" ] || die "the SONAME link $soname was not installed"
echo "   SONAME $soname"

# Hidden visibility: only the PITH_API functions (pith_*) leave the shared library.
exported_others=$(nm -D --defined-only "$libdir/libpith.so" |
    awk '$3 !~ /^pith_/ && $3 !~ /^(_init|_fini|_edata|_end|__bss_start)$/ {print $3}')
[ -z "$exported_others" ] || die "libpith.so exports symbols without the pith_ prefix: $exported_others"
# The same for the archive: it is one object whose internal symbols are local (See Note
# [One object in libpith.a]), so a static consumer's own key_name or add_cpu cannot clash.
archive_globals=$(nm -g --defined-only "$libdir/libpith.a" | awk 'NF == 3 {print $3}' | sort -u) ||
    die "nm -g --defined-only libpith.a"
[ -n "$archive_globals" ] || die "nm finds no global symbols in libpith.a"
archive_others=$(grep -v -E '^(pith_|PITH_)' <<<"$archive_globals" || true)
if [ -n "$archive_others" ]; then
    die "libpith.a defines $(wc -l <<<"$archive_others") global symbols without the pith_ prefix:
$archive_others"
fi
# ... and they are the public API exactly: what libpith.so exports, no hidden pith_* helper.
shared_exports=$(nm -D --defined-only "$libdir/libpith.so" | awk '$3 ~ /^pith_/ {print $3}' | sort -u)
archive_extra=$(comm -23 <(echo "$archive_globals") <(echo "$shared_exports"))
archive_missing=$(comm -13 <(echo "$archive_globals") <(echo "$shared_exports"))
[ -z "$archive_extra" ] || die "libpith.a defines global symbols that libpith.so does not export:
$archive_extra"
[ -z "$archive_missing" ] || die "libpith.a lacks symbols that libpith.so exports:
$archive_missing"
echo "   libpith.a: $(wc -l <<<"$archive_globals") global symbols, the same pith_* as libpith.so"
# ... and every function that the public headers declare is there.
if command -v python3 >/dev/null; then
    python3 "$source_dir/../../scripts/check_c_api_doc.py" --library "$libdir/libpith.so" ||
        die "libpith.so lacks public functions"
fi

echo "== find_package(pith): shared and static"
"$cmake_command" -S "$source_dir" -B "$work_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work_dir/configure.log" ||
    { cat "$work_dir/configure.log"; die "configuring the consumer project"; }
"$cmake_command" --build "$work_dir/build" >"$work_dir/build.log" ||
    { cat "$work_dir/build.log"; die "building the consumer project"; }
"$work_dir/build/consumer_shared" || die "consumer_shared"
"$work_dir/build/consumer_static" || die "consumer_static"
"$work_dir/build/clash_shared" || die "clash_shared"
"$work_dir/build/clash_static" || die "clash_static"
for program in consumer_static clash_static; do
    if objdump -p "$work_dir/build/$program" | grep -q 'NEEDED.*libpith'; then
        die "$program links libpith.so"
    fi
done

echo "== pkg-config: shared and static"
export PKG_CONFIG_PATH=$libdir/pkgconfig
pkg-config --exists pith || die "pkg-config does not find pith"
# shellcheck disable=SC2046
"$cc_command" -std=c11 -Wall -Wextra -Werror -o "$work_dir/consumer_pc" "$source_dir/consumer.c" \
    $(pkg-config --cflags --libs pith) -Wl,-rpath,"$libdir" || die "cc with pkg-config"
"$work_dir/consumer_pc" || die "consumer_pc"
# Static: the same flags with --static, with -lpith pointing at the archive.
static_libs=$(pkg-config --static --libs pith | sed 's/-lpith\b/-l:libpith.a/')
# shellcheck disable=SC2086
"$cc_command" -std=c11 -Wall -Wextra -Werror -o "$work_dir/consumer_pc_static" \
    "$source_dir/consumer.c" $(pkg-config --cflags pith) $static_libs || die "cc with pkg-config --static"
"$work_dir/consumer_pc_static" || die "consumer_pc_static"
# shellcheck disable=SC2086
"$cc_command" -std=c11 -Wall -Wextra -Werror -o "$work_dir/clash_pc_static" \
    "$source_dir/clash.c" $(pkg-config --cflags pith) $static_libs || die "cc clash.c with pkg-config --static"
"$work_dir/clash_pc_static" || die "clash_pc_static"

echo "== the OpenBLAS they load"
# libpith does not link OpenBLAS: it loads it on the first product (Note [OpenBLAS is loaded
# on first use], kernels/linalg_blas.c). Every consumer, shared or static, must then load the
# build that pith was built against, the one libpith's RUNPATH names, whatever the
# alternatives system points libopenblas.so.0 at (See Note [One OpenBLAS]). Each consumer
# prints the file its product loaded.
if objdump -p "$libdir/libpith.so" | awk '$1 == "NEEDED" {print $2}' | grep -q '^libopenblas'; then
    die "libpith.so lists OpenBLAS as a needed library; it must load it on first use"
fi
blas_dir=$(objdump -p "$libdir/libpith.so" | awk '$1 == "RUNPATH" {print $2}' | cut -d: -f1)
[ -n "$blas_dir" ] || die "the installed libpith.so has no RUNPATH to an OpenBLAS"
want_blas=$(realpath "$blas_dir/libopenblas.so.0") || die "no libopenblas.so.0 in $blas_dir"
for program in "$work_dir"/build/consumer_shared "$work_dir"/build/consumer_static \
               "$work_dir"/consumer_pc "$work_dir"/consumer_pc_static; do
    got_blas=$("$program" | awk '$2 == "OpenBLAS" {print $3}')
    [ -n "$got_blas" ] || die "$program printed no OpenBLAS"
    [ "$(realpath "$got_blas")" = "$want_blas" ] ||
        die "$program loads OpenBLAS from '$got_blas', not $want_blas"
done
echo "   $want_blas"

echo "Consumer: all seven consumers passed against the installed tree"

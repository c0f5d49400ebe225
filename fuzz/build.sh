#!/bin/sh
# build.sh — builds the libFuzzer harnesses with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer: fuzz/out/fuzz_KIND for each entry point of
# fuzz/harness.h.  Run from a configured tree (it needs config.h):
#   autoreconf -fi && ./configure && sh fuzz/build.sh
# Needs Debian's clang and libclang-rt-14-dev (libFuzzer's runtime).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILDDIR:-$(pwd)}
out=${FUZZ_OUT:-$build/fuzz/out}
CC=${FUZZ_CC:-clang}
[ -f "$build/config.h" ] || { echo "build.sh: no config.h in $build: run ./configure first" >&2; exit 2; }
mkdir -p "$out/obj"
flags="-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer-no-link,address,undefined
 -fno-sanitize-recover=undefined -fno-omit-frame-pointer -I$build -I$src/include -I$src/fuzz
 -DFUZZ_SRCDIR=\"$src\" $(pkg-config --cflags yaml-0.1 gsl)"
libs="$(pkg-config --libs yaml-0.1 gsl) -lm -lpthread"
objs=
for c in "$src"/src/*.c "$src/fuzz/harness.c"; do
    o="$out/obj/$(basename "$c" .c).o"
    # shellcheck disable=SC2086
    $CC $flags -c "$c" -o "$o"
    objs="$objs $o"
done
for kind in spec mapping constraints problem sweep; do
    # shellcheck disable=SC2086
    $CC $flags -fsanitize=fuzzer -DFUZZ_ENTRY="nm_fuzz_$kind" "$src/fuzz/fuzz_main.c" $objs \
        $libs -o "$out/fuzz_$kind"
    echo "built $out/fuzz_$kind"
done

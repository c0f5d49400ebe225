#!/bin/sh
# run.sh SECONDS [KIND...] — runs each libFuzzer harness (fuzz/build.sh
# builds them) for SECONDS under ASan+UBSan, from a seed corpus of
# fuzz/seeds/KIND, fuzz/regress/KIND and the inputs under tests/data and
# examples (and, per kind, arch/ and workloads/).  Prints each run's last
# status line (executions, coverage, corpus) and exits 1 when any harness
# found a crash, a leak, a timeout or a sanitizer report; the input that
# did it is left in fuzz/out/ as crash-KIND-*.  Kinds: spec mapping
# constraints problem sweep (all by default).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$(pwd)/fuzz/out}
secs=${1:?usage: run.sh SECONDS [KIND...]}
shift
kinds=${*:-spec mapping constraints problem sweep}
status=0
for kind in $kinds; do
    bin="$out/fuzz_$kind"
    [ -x "$bin" ] || { echo "run.sh: $bin is not built (sh fuzz/build.sh)" >&2; exit 2; }
    seeds="$out/seeds-$kind"
    corpus="$out/corpus-$kind"
    rm -rf "$seeds"
    mkdir -p "$seeds" "$corpus"
    find "$src/fuzz/seeds/$kind" "$src/fuzz/regress/$kind" "$src/tests/data" "$src/examples" \
        -type f 2>/dev/null | while read -r f; do
        cp "$f" "$seeds/$(echo "$f" | cksum | cut -d' ' -f1)-$(basename "$f")"
    done
    case $kind in
        spec | constraints) extra="$src/arch" ;;
        problem) extra="$src/workloads" ;;
        *) extra= ;;
    esac
    [ -n "$extra" ] && find "$extra" -name '*.yaml' | while read -r f; do
        cp "$f" "$seeds/$(echo "$f" | cksum | cut -d' ' -f1)-$(basename "$f")"
    done
    log="$out/fuzz-$kind.log"
    NESTMAP_SRCDIR="$src" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$out/crash-$kind-" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$kind: ${secs}s, exit $rc, $execs executions; $done_line"
    if [ "$rc" -ne 0 ] || grep -q -e "ERROR: AddressSanitizer" -e "runtime error:" -e "ERROR: LeakSanitizer" "$log"; then
        echo "fuzz_$kind FOUND A PROBLEM:"
        grep -m1 -A25 -e "ERROR:" -e "runtime error:" -e "==ERROR" "$log"
        status=1
    fi
done
exit $status

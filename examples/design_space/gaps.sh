#!/bin/sh
# gaps.sh DIR — how far from optimal a sweep's mappings are proven to be at
# most: the distribution of the `gap` column of DIR/points.csv (each
# point's objective over its proven lower bound), printed, and plotted by
# DIR/plots/gaps.gp from DIR/plots/gaps.dat (edit and rerun `gnuplot
# gaps.gp`; rendered to gaps.png when gnuplot is installed).
#
#   sh examples/design_space/gaps.sh design_space
dir=${1:?usage: gaps.sh SWEEP-DIR}
csv="$dir/points.csv"
[ -r "$csv" ] || { echo "gaps.sh: no $csv" >&2; exit 1; }
mkdir -p "$dir/plots" || exit 1
head -1 "$csv" | tr ',' '\n' | grep -qx gap && head -1 "$csv" | tr ',' '\n' | grep -qx status ||
    { echo "gaps.sh: $csv has no gap or no status column" >&2; exit 1; }
# The mapped points' gaps, ascending.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         $c["status"] == "ok" && $c["gap"] != "" { print $c["gap"] }' "$csv" |
    sort -g >"$dir/plots/gaps.sorted" || exit 1
n=$(wc -l <"$dir/plots/gaps.sorted")
[ "$n" -gt 0 ] || { echo "gaps.sh: no mapped point has a gap" >&2; exit 1; }
# Quantiles, then the share of points at most each gap (the plot's data).
awk -v n="$n" '{ g[NR] = $1 }
    function q(p,  i) { i = int(p * (n - 1) + 1.5); return g[i > n ? n : i] }
    END {
        printf "%d points with a proven gap (objective over its lower bound)\n", n
        printf "min %.3fx  10%% %.3fx  median %.3fx  90%% %.3fx  max %.3fx\n",
               g[1], q(0.1), q(0.5), q(0.9), g[n]
        split("1.1 1.25 1.5 2 3 5 10", edge, " ")
        for (k = 1; k <= 7; k++) {
            m = 0
            for (i = 1; i <= n; i++) if (g[i] <= edge[k] + 0) m++
            printf "gap at most %5sx: %5d points (%5.1f %%)\n", edge[k], m, 100 * m / n
        }
    }' "$dir/plots/gaps.sorted"
awk -v n="$n" '{ printf "%.6g %.6g\n", $1, 100 * NR / n }' "$dir/plots/gaps.sorted" \
    >"$dir/plots/gaps.dat"
rm -f "$dir/plots/gaps.sorted"
cat >"$dir/plots/gaps.gp" <<'GP'
# The proven gaps of a sweep's points: the share of points (y) whose
# mapping is proven within x of the optimum.  Data: gaps.dat (gap, percent
# of points at most it), written by examples/design_space/gaps.sh.
set terminal pngcairo size 800,500 noenhanced
set output 'gaps.png'
set title 'Proven gap of each point: objective over its lower bound'
set xlabel 'gap at most (x, log scale)'
set ylabel 'points with a gap at most x (%)'
set logscale x
set grid
set key off
set yrange [0:100]
plot 'gaps.dat' using 1:2 with steps linewidth 2
GP
if command -v gnuplot >/dev/null 2>&1; then
    (cd "$dir/plots" && gnuplot gaps.gp) && echo "plotted: $dir/plots/gaps.png"
else
    echo "gnuplot not found: $dir/plots/gaps.gp is the script"
fi

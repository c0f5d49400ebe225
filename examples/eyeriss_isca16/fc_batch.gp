# FC layers' energy per MAC against batch size, one line per dataflow
# (data: fc_batch.dat, written by tabulate.py).  Restyle here and rerun
# `gnuplot fc_batch.gp`.
set terminal pngcairo size 800,500 font "sans,10"
set output 'fc_batch.png'
set title "AlexNet FC6-FC8: energy per MAC by batch size (normalized: one MAC = 1)"
set logscale x 2
set xtics (1, 4, 16, 64)
set xrange [0.8:80]
set xlabel "batch size N"
set ylabel "energy per MAC (MACs' worth)"
set logscale y
set yrange [5:400]
set grid
set key outside right
# OSB and OSC coincide on FC layers (one output position: nothing else to
# spread), so OSC is dashed over OSB.
names = "WS OSA OSB OSC NLR RS"
color(i) = word("#4e79a7 #f28e2b #edc948 #b07aa1 #e15759 #59a14f", i)
plot for [k in "1 2 3 5 6"] 'fc_batch.dat' using 1:(column(int(k) + 1)) with linespoints lw 3 pt 7 \
    lc rgb color(int(k)) title word(names, int(k)), \
    '' using 1:5 with linespoints lw 2 dt 2 pt 6 lc rgb color(4) title word(names, 4)

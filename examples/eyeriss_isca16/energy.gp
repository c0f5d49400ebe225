# Energy per MAC by level, per dataflow and layer (data: energy.dat, one
# block per layer; written by tabulate.py).  Restyle here and rerun
# `gnuplot energy.gp`.  One colour per level, as in the paper's figure.
set terminal pngcairo size 1500,560 font "sans,10" noenhanced
set output 'energy.png'
set title "AlexNet at batch 16 on a 256-PE array of equal storage area: energy per MAC by level (normalized: one MAC = 1)"
set style data histograms
set style histogram rowstacked gap 1 title textcolor rgb "black" offset 0,-1.2
set style fill solid 0.9 border rgb "#404040"
set boxwidth 0.85
set ylabel "energy per MAC (MACs' worth)"
set key top left horizontal reverse Left
set xtics rotate by 90 right font ",8" nomirror
set bmargin 6
set grid ytics
set yrange [0:*]
blocks = "CONV1 CONV2 CONV3 CONV4 CONV5 FC6 FC7 FC8 all-CONV all-FC"
# columns 2..6 of energy.dat: ALU, RF, array (the network), buffer, DRAM
color(k) = word("#4e79a7 #59a14f #f28e2b #e15759 #9c755f", k)
label(k) = word("ALU RF array buffer DRAM", k)
cmd = ""
do for [i = 0:9] {
    cmd = cmd . sprintf("newhistogram '%s', 'energy.dat' index %d using 2:xtic(1) lc rgb '%s' %s", \
        word(blocks, i + 1), i, color(1), i == 0 ? "title '".label(1)."'" : "notitle")
    do for [c = 3:6] {
        cmd = cmd . sprintf(", '' index %d using %d lc rgb '%s' %s", i, c, color(c - 1), \
            i == 0 ? "title '".label(c - 1)."'" : "notitle")
    }
    cmd = cmd . (i < 9 ? ", " : "")
}
eval "plot " . cmd

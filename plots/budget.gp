# SPDX-License-Identifier: GPL-2.0
# The counted budget: what the bounce variant adds to one I/O over the
# baseline, part by part (copy, bounce page, bio clone, ...: insnprof's
# parts), stacked per job and disk; parts that shrink stack below zero.
# A diamond marks the measured difference of 1 / IOPS: the parts add up
# to it but for the few instructions outside fio's clock.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; nparts=8; nbars=4; parts='copy ...'" \
#           [-e "width=1000; height=560"] budget.gp
#
# datafile: one block per part (in the order of parts, names without
# spaces), rows: x  bottom  top  (µs per I/O); then a block of the
# measured difference, rows: x  Δ(1/IOPS)  "xtick".
if (!exists("width")) width = 1000
if (!exists("height")) height = 560
if (!exists("title")) title = ""
# one colour a part (gnuplot's default line colours repeat after eight)
colors = "#9400d3 #009e73 #56b4e9 #e69f00 #f0e442 #0072b2 #e51e10 #404040 #c0c0c0 #8b4513"
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set ylabel "µs per I/O added (bounce variant less baseline)"
set xrange [-0.7:nbars - 0.3]
set xtics nomirror font ",8"
set grid ytics
set xzeroaxis lt -1
set key outside right top
set style fill solid 0.8 border -1
set bmargin 6

plot for [i=1:nparts] datafile index (i - 1) \
	using 1:(($2 + $3) / 2):(0.35):(($3 - $2) / 2) with boxxyerror lc rgb word(colors, i) title word(parts, i), \
     datafile index nparts using 1:2 with points pt 13 ps 1.6 lc rgb "black" title "Δ 1/IOPS", \
     datafile index nparts using 1:(0):xtic(3) with points ps 0 notitle

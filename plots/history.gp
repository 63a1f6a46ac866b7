# SPDX-License-Identifier: GPL-2.0
# Regression history of one metric on one disk and pressure: the median
# of every run, a series per variant and job, with the run's 95 % bootstrap CI
# of the median as error bars; a point whose change from the previous run
# of the same variant is significant is circled and labelled with the
# change ("+35%"). Written by bench/tracker/figures.py (bench/history
# plot).
#
#   gnuplot -e "datafile='D'; outfile='O.png'; nblocks=N; title='T'; ylabel='Y'" \
#           [-e "width=1000; height=560; footnote='F'; colors='1 3'; pts='7 5'; xmax=X; vlines='1.5 3.5'"] \
#           history.gp
#
# The output format follows outfile's extension (.svg, else PNG).
# colors: the line type of each block, so a variant keeps its colour in
# every figure; pts: the point type of each block (one per job of a
# figure); xmax: the last run's x position; vlines: x positions of
# dashed vertical lines (where the kernel source version changes).
#
# datafile: one block per series (two blank lines between blocks), each
# starting with a quoted header line (the legend entry), rows
# "x  median  ci_low  ci_high  mark_y  \"mark\"" ("?" for a missing value,
# "" for no mark); then a last block of run ticks: header line, rows
# "x  \"label\"" (a label may hold \n). Runs sit at x = 0, 1, 2, ... in
# order of run date; a variant's points may be offset a little from its
# run's x so that overlaid variants stay apart.
if (!exists("width")) width = 1000
if (!exists("height")) height = 560
if (!exists("title")) title = ""
if (!exists("ylabel")) ylabel = ""
if (!exists("footnote")) footnote = ""
if (!exists("colors")) colors = ""
if (!exists("vlines")) vlines = ""
if (!exists("pts")) pts = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set ylabel ylabel
if (exists("xmax")) { set xrange [-0.6:xmax + 0.6] }
set yrange [0:*]
set offsets 0, 0, graph 0.15, 0
set xtics nomirror font ",8"
set grid ytics
set key outside right top box
set bmargin 7
if (footnote ne "") { set label 1 footnote at screen 0.01, 0.05 left font ",8" }
do for [i=1:words(vlines)] {
	set arrow i from word(vlines, i)+0, graph 0 to word(vlines, i)+0, graph 1 nohead dt 2 lc rgb "gray50"
}
color(i) = (colors eq "" ? i+1 : word(colors, i+1)+0)
ptype(i) = (pts eq "" ? 7 : word(pts, i+1)+0)

plot for [i=0:nblocks-1] datafile index i using 1:2 with linespoints lt color(i) pt ptype(i) ps 1.2 title columnheader(1), \
     for [i=0:nblocks-1] datafile index i using 1:2:3:4 with yerrorbars lt color(i) pt ptype(i) ps 1.2 notitle, \
     for [i=0:nblocks-1] datafile index i using 1:(strcol(6) eq "" ? NaN : $2) with points lt color(i) pt 6 ps 3 notitle, \
     for [i=0:nblocks-1] datafile index i using 1:5:6 with labels offset 0,1 font ",9" tc lt color(i) notitle, \
     datafile index nblocks using 1:(0):xtic(2) with points ps 0 notitle

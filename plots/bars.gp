# SPDX-License-Identifier: GPL-2.0
# Bars of a metric's median per variant, grouped by disk/job/pressure, with
# 95 % bootstrap CI whiskers of the median and a mark ("*") on bars whose
# ratio to the group's baseline variant has a 95 % CI that excludes 1.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; nblocks=N; title='T'; ylabel='Y'" \
#           [-e "width=1000; height=560; footnote='F'; colors='1 2 3'; xmax=X"] bars.gp
#
# colors: the line type of each block, so a variant keeps its colour in
# every figure; xmax: the last bar's x position.
#
# datafile: one block per variant (two blank lines between blocks), each
# starting with a quoted header line (the legend entry), rows
# "x  median  ci_low  ci_high  mark_y  \"mark\"", "?" for a missing value;
# then a block of group ticks: header line, rows "x  \"label\"" (a
# label may hold \n); then, optionally, a block of every rep's value:
# header line, rows "x  value" (drawn as dots over the bars).
if (!exists("width")) width = 1000
if (!exists("height")) height = 560
if (!exists("title")) title = ""
if (!exists("ylabel")) ylabel = ""
if (!exists("footnote")) footnote = ""
if (!exists("colors")) colors = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set ylabel ylabel
if (exists("xmax")) { set xrange [-0.7:xmax + 0.7] }
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics nomirror font ",8"
set grid ytics
set key outside right top box
set style fill solid 0.75 border -1
set boxwidth 0.8
set bmargin 7
if (footnote ne "") { set label 1 footnote at screen 0.01, 0.02 left font ",8" }

plot for [i=0:nblocks-1] datafile index i using 1:2 with boxes lc (colors eq "" ? i+1 : word(colors, i+1)+0) title columnheader(1), \
     for [i=0:nblocks-1] datafile index i using 1:3:(0):($4-$3) with vectors heads size screen 0.006,90 lc rgb "black" notitle, \
     for [i=0:nblocks-1] datafile index i using 1:5:6 with labels offset 0,1 font ",14" notitle, \
     datafile index nblocks using 1:(0):xtic(2) with points ps 0 notitle, \
     datafile index nblocks+1 using 1:2 with points pt 7 ps 0.5 lc rgb "black" notitle

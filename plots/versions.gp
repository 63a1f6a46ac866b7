# SPDX-License-Identifier: GPL-2.0
# One table of history.md's "Across kernel versions" on one disk: the x
# axis is the kernels in Debian version order, one point series per
# column, each point the median of that kernel's newest run with its
# 95 % bootstrap CI as whiskers (and an optional label); dashed lines mark
# where the bounce path changed upstream (5.13, 6.16). Written by
# bench/tracker/figures.py (bench/history plot).
#
#   gnuplot -e "datafile='D'; outfile='O.png'; nblocks=N; title='T'; ylabel='Y'" \
#           [-e "width=1000; height=560; footnote='F'; colors='1 2 3'; xmax=X; ymax=Y"] \
#           [-e "titles='\"bounce: 5.10/stock\" \"removed: not measured\"'"] versions.gp
#
# The output format follows outfile's extension (.svg, else PNG).
# colors: the line type of each block; titles: the legend entry of each block, double-quoted (shown
# even for a block with no point, unlike a column header); xmax: the last
# kernel's x position; ymax: the top of the y axis (room for the labels
# above the points and for the markers').
#
# datafile: one block per series (two blank lines between blocks), each
# starting with a quoted header line (the legend entry), one row per
# kernel "x  median  ci_low  ci_high  label_y  \"label\"" ("?" for a
# value not measured: no point); then a block of kernel ticks (header,
# rows "x  \"label\"", a label may hold \n) and a block of markers (header,
# rows "x  \"label\"": a dashed vertical line at x with its label on top).
if (!exists("width")) width = 1000
if (!exists("height")) height = 560
if (!exists("title")) title = ""
if (!exists("ylabel")) ylabel = ""
if (!exists("footnote")) footnote = ""
if (!exists("colors")) colors = ""
if (!exists("titles")) titles = ""
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
if (exists("ymax")) { set yrange [0:ymax] } else { set yrange [0:*] }
set xtics nomirror font ",8"
set grid ytics
set key outside center top horizontal box Left reverse
set bmargin 7
if (footnote ne "") { set label 1 footnote at screen 0.01, 0.05 left font ",8" }
color(i) = (colors eq "" ? i+1 : word(colors, i+1)+0)
ytop = exists("ymax") ? ymax : 1

plot datafile index nblocks+1 using 1:(0):(0):(ytop*0.9) with vectors nohead dt 2 lw 1.5 lc rgb "#aa3333" notitle, \
     datafile index nblocks+1 using 1:(ytop*0.96):2 with labels center font ",8" tc rgb "#aa3333" notitle, \
     for [i=0:nblocks-1] keyentry with points lt color(i) pt 7 ps 1.4 title word(titles, i+1), \
     for [i=0:nblocks-1] datafile index i using 1:2 with points lt color(i) pt 7 ps 1.4 notitle, \
     for [i=0:nblocks-1] datafile index i using 1:2:3:4 with yerrorbars lt color(i) pt 7 ps 1.4 notitle, \
     for [i=0:nblocks-1] datafile index i using 1:5:6 with labels left rotate by 90 offset 0,0.7 font ",8" tc lt color(i) notitle, \
     datafile index nblocks using 1:(0):xtic(2) with points ps 0 notitle

# SPDX-License-Identifier: GPL-2.0
# Completion-latency percentile curves of one disk/job/direction, one curve
# per variant (median over the repetitions of each fio percentile).
#
#   gnuplot -e "datafile='D'; outfile='O.png'; nblocks=N; title='T'" \
#           [-e "width=900; height=560; direction='read'"] latency-percentiles.gp
#
# datafile: one block per variant (blocks separated by two blank lines),
# each starting with a quoted header line (the curve's title), then rows
# "percentile  x  clat_us" with x = -log10(1 - percentile/100), so that
# 90, 99, 99.9 are evenly spaced. The terminal follows outfile's extension.
if (!exists("width")) width = 900
if (!exists("height")) height = 560
if (!exists("title")) title = ""
if (!exists("direction")) direction = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set xlabel "percentile (%)"
set ylabel sprintf("%s completion latency (µs)", direction)
set xtics ("1" 0.00436, "50" 0.30103, "90" 1, "99" 2, "99.9" 3, "99.99" 4)
set xrange [0:4.2]
set yrange [0:*]
set grid
set key top left box opaque

plot for [i=0:nblocks-1] datafile index i using 2:3 with linespoints lw 2 pt 7 ps 0.6 title columnheader(1)

# SPDX-License-Identifier: GPL-2.0
# The I/O-size sweep: IOPS of the removed and the baseline kernel against
# the bounce kernel's, per I/O size (log 2 axis), reads and writes side
# by side; the band around each line is the run's determinism bound
# (an exact clock's cells repeat within it), so a line outside 1 +- bound
# is a measured difference.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; bound=0.2" \
#           [-e "width=1000; height=520; rem='post/pre-fixed'; base='pre/pre-fixed'"] sweep.gp
#
# datafile: two blocks (read, then write), separated by two blank lines;
# rows: KiB  removed/bounce  baseline/bounce  ("?" for a missing value).
if (!exists("width")) width = 1000
if (!exists("height")) height = 520
if (!exists("title")) title = ""
if (!exists("bound")) bound = 0.2
if (!exists("rem")) rem = "removed/bounce"
if (!exists("base")) base = "baseline/bounce"
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

b = bound / 100.0
set multiplot layout 1,2 title title
set logscale x 2
set xrange [3:1400]
set xtics ("4K" 4, "16K" 16, "64K" 64, "256K" 256, "1M" 1024)
set xlabel "I/O size (QD1, random)"
set ylabel "IOPS ratio (band: determinism bound)"
set grid
set key top left
set style fill transparent solid 0.25 noborder
do for [blk=0:1] {
	set title (blk == 0 ? "read" : "write")
	plot datafile index blk using 1:($2*(1-b)):($2*(1+b)) with filledcurves lc rgb "#1f77b4" notitle, \
	     datafile index blk using 1:2 with linespoints lc rgb "#1f77b4" pt 7 title rem, \
	     datafile index blk using 1:($3*(1-b)):($3*(1+b)) with filledcurves lc rgb "#ff7f0e" notitle, \
	     datafile index blk using 1:3 with linespoints lc rgb "#ff7f0e" pt 5 title base, \
	     1 with lines lc rgb "black" dt 2 notitle
}
unset multiplot

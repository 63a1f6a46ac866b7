# SPDX-License-Identifier: GPL-2.0
# Dose-response of memory pressure: four metrics against the LowFree
# target of each pressure level (the level "none" at the boots' own
# LowFree), one line per variant, more pressure to the right.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; nvariants=3; \
#               variants='pre pre-fixed post'; p1='..'; p2='..'; p3='..'; p4='..'" \
#           dose-response.gp
#
# datafile: 4 x nvariants blocks (two blank lines between), panel by panel,
# each variant's block in the order of `variants`: lines "x_mib y" ("? ?"
# where a variant has no point).
if (!exists("width")) width = 1000
if (!exists("height")) height = 760
if (!exists("title")) title = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"
set multiplot layout 2,2 title title
set logscale x 2
set xrange [*:*] reverse
set xlabel "LowFree target, MiB (log; more pressure to the right)"
set grid
set key top left
set yrange [0:*]
panels = p1 . "|" . p2 . "|" . p3 . "|" . p4
do for [k=0:3] {
	set ylabel (k == 0 ? p1 : (k == 1 ? p2 : (k == 2 ? p3 : p4)))
	plot for [i=0:nvariants-1] datafile index (k * nvariants + i) using 1:2 \
		with linespoints lw 2 pt (i + 5) title word(variants, i + 1)
}
unset multiplot

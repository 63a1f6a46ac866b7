# SPDX-License-Identifier: GPL-2.0
# Timelines of one job under the strongest pressure, the variants side by
# side: LowFree, PSI memory "some" (avg10) and the Bounce: gauge (sampled,
# so only a hint; the exact count is in the report's table).
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; nvariants=3; \
#               variants='pre pre-fixed post'" pressure-timeline.gp
#
# datafile: one block per variant (two blank lines between), lines
# "t_s LowFree_MiB some_avg10 Bounce_kB" ("?" where not exposed).
if (!exists("width")) width = 1000
if (!exists("height")) height = 820
if (!exists("title")) title = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"
set multiplot layout 3,1 title title
set grid
set key top right
set xlabel "seconds since the job's monitor started"
set ylabel "LowFree, MiB"
plot for [i=0:nvariants-1] datafile index i using 1:2 with lines lw 2 title word(variants, i + 1)
set ylabel "PSI memory some, avg10 %"
plot for [i=0:nvariants-1] datafile index i using 1:3 with lines lw 2 title word(variants, i + 1)
set ylabel "Bounce: kB (sampled)"
plot for [i=0:nvariants-1] datafile index i using 1:4 with lines lw 2 title word(variants, i + 1)
unset multiplot

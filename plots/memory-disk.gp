# SPDX-License-Identifier: GPL-2.0
# Memory on one disk over the jobs of one boot each (rep 1), the variants
# side by side on shared axes: LowFree, the Bounce: gauge (sampled, so
# only a hint; the exact count is in the report), PSI memory some.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; nvariants=3; \
#               variants='pre-fixed pre post'; lowmin=800; lowmax=880; tmax=60" \
#           memory-disk.gp
#
# datafile: one block per variant (two blank lines between), lines
# "t_s LowFree_MiB Bounce_kB some_avg10" ("?" where not exposed); a
# blank line between two jobs breaks the lines there. has_bounce and
# has_psi: one 0/1 word per variant, 0 where the kernel exposes nothing
# (the panel says so instead of plotting nothing).
if (!exists("width")) width = 1000
if (!exists("height")) height = 760
if (!exists("title")) title = ""
if (!exists("tmax")) tmax = 1
if (!exists("has_bounce")) has_bounce = ""
if (!exists("has_psi")) has_psi = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"
set multiplot layout 3,nvariants columnsfirst title title font ",9"
set grid
set key off
set xrange [0:tmax]
do for [i=0:nvariants-1] {
	set title word(variants, i + 1) font ",10"
	set xlabel ""
	set ylabel (i == 0 ? "LowFree, MiB" : "")
	if (exists("lowmin")) { set yrange [lowmin:lowmax] } else { set yrange [*:*] }
	plot datafile index i using 1:2 with lines lw 2 lc 1
	unset title
	set ylabel (i == 0 ? "Bounce: kB (sampled)" : "")
	set yrange [0:1<*]
	if (word(has_bounce, i + 1) ne "0") {
		plot datafile index i using 1:3 with steps lw 2 lc 2
	} else {
		set label 3 "no Bounce: gauge (no bounce code)" at graph 0.5, 0.5 center
		plot 0 with lines lc rgb "gray" notitle
		unset label 3
	}
	set xlabel "s, jobs in run order"
	set ylabel (i == 0 ? "PSI some avg10, %" : "")
	if (word(has_psi, i + 1) ne "0") {
		plot datafile index i using 1:4 with lines lw 2 lc 3
	} else {
		set label 3 "no PSI memory counters" at graph 0.5, 0.5 center
		plot 0 with lines lc rgb "gray" notitle
		unset label 3
	}
}
unset multiplot

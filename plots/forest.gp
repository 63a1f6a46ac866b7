# SPDX-License-Identifier: GPL-2.0
# Forest plot of one primary metric: per cell and pair of variants the
# ratio B/A (ratio of geometric means) with its 95 % CI (the CI inverted
# from the permutation test), a linear x axis fitted to the data (xmin,
# xmax; 1.0 inside), a line at 1.0 (no change).
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; nrows=N" \
#           [-e "width=900; height=H; xlabel='X'; xmin=0.8; xmax=1.3"] forest.gp
#
# datafile rows: y  ratio  ci_low  ci_high  color  "label"  ("?" for a
# missing bound: the point is drawn without whiskers); color 1 = not
# relevant, 2 = relevant (significant after Benjamini-Hochberg and at
# least the smallest effect of interest), 3 = control (A/A) row.
if (!exists("width")) width = 900
if (!exists("height")) height = 400
if (!exists("title")) title = ""
if (!exists("xlabel")) xlabel = "ratio B/A, 95% CI"
if (!exists("nrows")) nrows = 1
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set xlabel xlabel
if (exists("xmin") && exists("xmax")) set xrange [xmin:xmax]
set yrange [nrows:-1]
set ytics nomirror font ",8"
set grid xtics
set xtics add ("1" 1)
set lmargin 48
set key off
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lw 2 lc rgb "gray40"
set linetype 1 lc rgb "#4477aa" pt 7
set linetype 2 lc rgb "#cc3311" pt 7
set linetype 3 lc rgb "#999999" pt 6

plot datafile using 2:1:3:4:5:ytic(6) with xerrorbars lc variable pt 7 ps 0.8, \
     datafile using 2:1:5 with points lc variable pt 7 ps 0.8

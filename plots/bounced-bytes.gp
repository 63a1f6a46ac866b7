# SPDX-License-Identifier: GPL-2.0
# Bounced bytes per GiB moved, one bar per variant/disk/job/pressure, with
# 95 % bootstrap CI whiskers of the median; bars where the kernel cannot
# count bounces (no block_bio_bounce tracepoint) are labelled, not drawn as 0.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'" \
#           [-e "width=900; height=560; nbars=N"] bounced-bytes.gp
#
# datafile rows: x  MiB_per_GiB  ci_low  ci_high  color  label_y  "note"  "xtick"
# ("?" for a missing value; color is the variant's index, 1-based).
if (!exists("width")) width = 900
if (!exists("height")) height = 560
if (!exists("title")) title = ""
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set title title
set ylabel "bounced MiB per GiB moved (1024 = every byte copied)"
if (exists("nbars")) { set xrange [-0.7:nbars - 0.3] }
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics nomirror font ",8"
set grid ytics
set style fill solid 0.75 border -1
set boxwidth 0.7
set bmargin 8

plot datafile using 1:2:5 with boxes lc variable notitle, \
     datafile using 1:3:(0):($4-$3) with vectors heads size screen 0.006,90 lc rgb "black" notitle, \
     datafile using 1:6:7 with labels font ",9" notitle, \
     datafile using 1:(0):xtic(8) with points ps 0 notitle

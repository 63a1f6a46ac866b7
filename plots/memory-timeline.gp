# SPDX-License-Identifier: GPL-2.0
# Memory-pressure timeline of one job from labmon samples: free low/high
# memory, the bounce gauges and bounced bios, PSI memory pressure; the job's
# start and end are marked.
#
#   gnuplot -e "datafile='D'; outfile='O.png'; title='T'; jobstart=S; jobend=E" \
#           [-e "width=900; height=820; has_bounce=1; has_hits=1; has_psi=1"] \
#           memory-timeline.gp
#
# datafile rows: t_s LowFree_MiB HighFree_MiB Bounce_kB nr_bounce_kB
# bounce_hits some_avg10 full_avg10 ("?" = the kernel does not expose it).
# has_bounce=0 / has_hits=0 / has_psi=0 say a whole series is absent, so
# the panel says so instead of plotting nothing.
if (!exists("width")) width = 900
if (!exists("height")) height = 820
if (!exists("title")) title = ""
if (!exists("has_bounce")) has_bounce = 1
if (!exists("has_hits")) has_hits = 1
if (!exists("has_psi")) has_psi = 1
if (!exists("jobstart")) jobstart = 0
if (!exists("jobend")) jobend = 0
if (!exists("tmax")) tmax = jobend
if (outfile[strlen(outfile)-3:] eq ".svg") {
	set terminal svg size width,height dynamic noenhanced font "sans,11" background "white"
} else {
	set terminal pngcairo size width,height noenhanced font "sans,10"
}
set output outfile
set datafile missing "?"

set multiplot layout 3,1 title title
set grid
# fixed side margins keep the three panels aligned; keys sit above each
set lmargin at screen 0.10
set rmargin at screen 0.90
set key tmargin center horizontal font ",8"
set xrange [0:(tmax > jobend ? tmax : jobend) * 1.02 + 0.1]
set arrow 1 from jobstart, graph 0 to jobstart, graph 1 nohead dt 2 lc rgb "dark-green"
set arrow 2 from jobend, graph 0 to jobend, graph 1 nohead dt 2 lc rgb "dark-red"
set label 1 "job start" at jobstart, graph 0.92 left offset 0.5,0 tc rgb "dark-green" font ",8"
set label 2 "job end" at jobend, graph 0.92 right offset -0.5,0 tc rgb "dark-red" font ",8"

set ylabel "free memory (MiB)"
plot datafile using 1:2 with lines lw 2 title "LowFree", \
     datafile using 1:3 with lines lw 2 title "HighFree"

set ylabel "bounce pages in use (kB)"
set yrange [0:*]
if (has_bounce) {
	if (has_hits) {
		set y2label "bounced bios (cumulative)"
		set y2tics
		set y2range [0:*]
		set ytics nomirror
		plot datafile using 1:4 with steps lw 2 title "Bounce: (meminfo)", \
		     datafile using 1:5 with steps lw 1 dt 2 title "nr_bounce x 4 kB (vmstat)", \
		     datafile using 1:6 axes x1y2 with lines lw 2 title "bounced bios (hist)"
	} else {
		plot datafile using 1:4 with steps lw 2 title "Bounce: (meminfo)", \
		     datafile using 1:5 with steps lw 1 dt 2 title "nr_bounce x 4 kB (vmstat)"
	}
} else {
	set label 3 "no bounce counters on this kernel (not exposed, not zero)" at graph 0.5, 0.5 center
	set yrange [0:1]
	plot 0 with lines lc rgb "gray" notitle
	unset label 3
}
unset y2tics
unset y2label
set ytics mirror

set xlabel "time since the monitor started (s)"
set ylabel "PSI memory avg10 (%)"
set yrange [0:*]
if (has_psi) {
	plot datafile using 1:7 with lines lw 2 title "some", \
	     datafile using 1:8 with lines lw 2 title "full"
} else {
	set label 3 "no PSI memory counters on this kernel" at graph 0.5, 0.5 center
	set yrange [0:1]
	plot 0 with lines lc rgb "gray" notitle
}
unset multiplot

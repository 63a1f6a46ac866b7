# SPDX-License-Identifier: GPL-2.0
# How long planned boots should take, judging by earlier runs. Source it
# after lib/common.sh and lib/lab.sh.

# The first fresh-machine default run (36 boots of 6 jobs, TCG, 2 cores)
# took 28m18s: 47 s a boot. The guess when no earlier run is there.
BL_DEFAULT_BOOT_S=47

# bl_estimate MATRIX_TSV RESULTS SIDE_JOBS: print the time the boots of
# MATRIX_TSV (bench/compare's matrix.tsv) should take. A boot's seconds
# are the mean of the ok boots of the same disk and pressure in the
# newest run in RESULTS that has them (else of that disk, else the mean of
# the newest run with ok boots, else the guess). Boots on an exact clock run SIDE_JOBS side
# by side, so their sum is divided by it.
bl_estimate()
{
	local plan=$1 results=$2 side=$3 f runs='' exact
	for f in $(ls -t "$results"/*/boots.tsv 2>/dev/null); do runs="$runs $f"; done
	exact=$(bl_lab_exact_clocks | xargs)
	echo "estimate (mean seconds of ok boots of the same disk and pressure in the newest run that has them):"
	awk -F'\t' -v side="$side" -v def="$BL_DEFAULT_BOOT_S" -v runs="$runs" \
		-v exact=" $exact " '
		BEGIN {
			nr = split(runs, files, " ")
			for (i = 1; i <= nr; i++) {
				while ((getline line < files[i]) > 0) {
					split(line, x, "\t")
					if (x[6] != "ok") continue
					k = x[3] "|" x[4]
					if (!(k in from) || from[k] == i) { s[k] += x[7]; c[k]++; from[k] = i }
					if (!(x[3] in dfrom) || dfrom[x[3]] == i) { ds[x[3]] += x[7]; dc[x[3]]++; dfrom[x[3]] = i }
					if (!first) first = i
					if (i == first) { all += x[7]; n++ }
				}
			}
		}
		NR > 1 {
			k = $4 "|" $5
			if (c[k]) t = s[k] / c[k]; else if (dc[$4]) t = ds[$4] / dc[$4]; else if (n) t = all / n; else t = def
			ex = index(exact, " " $7 " ") > 0
			if (!cnt[k]) { order[++nk] = k; isx[k] = ex; guess[k] = !c[k] }
			per[k] = t; cnt[k]++
			if (ex) tx += t; else th += t
		}
		END {
			for (i = 1; i <= nk; i++) {
				k = order[i]; split(k, w, "|")
				printf "  %-16s %-8s %3d boot(s) x %4.0fs%s%s\n", w[1], w[2], cnt[k], per[k], \
					(isx[k] ? ", side by side" : ""), (guess[k] ? " (no earlier boot of it: a guess)" : "")
			}
			total = int(tx / side + th + 0.5)
			printf "  total: about %dm%02ds (%d side by side; kernel and guest builds not included;\n", total / 60, total % 60, side
			printf "  an exact-clock entry that spreads gets the rest of its reps on top)\n"
		}' "$plan"
}

# SPDX-License-Identifier: GPL-2.0
# How long planned boots should take, judging by earlier runs. Source it
# after lib/common.sh.

# The first fresh-machine default run (36 boots of 6 jobs, TCG, 2 cores)
# took 28m18s: 47 s a boot. The guess when no earlier run is there.
BL_DEFAULT_BOOT_S=47
BL_DEFAULT_BOOT_JOBS=6

# bl_estimate MATRIX_TSV NJOBS RESULTS: print the time the boots of
# MATRIX_TSV (bench/compare's matrix.tsv), NJOBS jobs each, should take,
# from the newest run in RESULTS with ok boots: the mean seconds of its ok
# boots per disk (its mean over all disks for a disk it did not boot),
# scaled by the jobs per boot when those differ. Without such a run it
# says so and uses the default guess.
bl_estimate()
{
	local plan=$1 njobs=$2 results=$3 prev='' f pjobs
	for f in $(ls -t "$results"/*/boots.tsv 2>/dev/null); do
		awk -F'\t' 'NR > 1 && $6 == "ok" { ok = 1 } END { exit !ok }' "$f" &&
			{ prev=$(dirname "$f"); break; }
	done
	if [ -n "$prev" ]; then
		pjobs=$(sed -n 's/^  "jobs": "\(.*\)",$/\1/p' "$prev/meta.json" 2>/dev/null | wc -w)
		[ "$pjobs" -gt 0 ] || pjobs=$njobs
		echo "estimate from the newest run, $(basename "$prev") ($pjobs job(s) per boot; mean seconds of its ok boots):"
	else
		pjobs=$BL_DEFAULT_BOOT_JOBS
		echo "estimate: there is no previous run in $results to estimate from;"
		echo "  guessing ${BL_DEFAULT_BOOT_S}s per boot of $BL_DEFAULT_BOOT_JOBS jobs (the first default run: 36 boots in 28m18s under TCG on 2 cores)"
	fi
	awk -F'\t' -v nj="$njobs" -v pj="$pjobs" -v def="$BL_DEFAULT_BOOT_S" \
		-v prev="${prev:+$prev/boots.tsv}" '
		BEGIN {
			while (prev != "" && (getline line < prev) > 0) {
				split(line, f, "\t")
				if (f[6] == "ok") { s[f[3]] += f[7]; c[f[3]]++; all += f[7]; n++ }
			}
		}
		NR > 1 {
			d = $4
			if (c[d]) t = s[d] / c[d]; else if (n) t = all / n; else t = def
			if (!cnt[d]) order[++nd] = d
			per[d] = t * nj / pj; total += per[d]; cnt[d]++
		}
		END {
			for (i = 1; i <= nd; i++) {
				d = order[i]
				printf "  %-8s %3d boot(s) x %4.0fs%s\n", d, cnt[d], per[d], \
					(n && !c[d] ? " (not in that run: its mean over all disks)" : "")
			}
			if (nj != pj)
				printf "  (scaled from %d to %d job(s) per boot: rough)\n", pj, nj
			total = int(total + 0.5)
			printf "  total: about %dm%02ds (kernel and guest builds not included)\n", total / 60, total % 60
		}' "$plan"
}

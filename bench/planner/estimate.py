# SPDX-License-Identifier: GPL-2.0
"""--dry-run: the planned boots in order and the time they should take,
judging by earlier runs. Builds and boots nothing.

A boot's seconds: the mean of the ok boots (boots.tsv) of the same disk
and pressure in the newest run that has them, else of that disk, else of
the newest run with ok boots, else DEFAULT_BOOT_S. Boots on an exact
clock run side_jobs side by side: their sum is divided by it.
"""
import glob
import os

# The first fresh-machine default run (36 boots of 6 jobs, TCG, 2 cores)
# took 28m18s: 47 s a boot. The guess when no earlier run is there.
DEFAULT_BOOT_S = 47


def _secs(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def _means(results):
    """({disk|pressure: mean}, {disk: mean}, the mean of all) of the ok
    boots in results' boots.tsv files, each of the newest run that has such."""
    files = glob.glob(os.path.join(results, "*", "boots.tsv"))
    files.sort(key=lambda f: (-os.stat(f).st_mtime_ns, f))
    means = ({}, {}, {})
    for f in files:
        run = ({}, {}, {})
        with open(f, encoding="utf-8", errors="replace") as fh:
            for x in (line.rstrip("\n").split("\t") for line in fh):
                if len(x) >= 7 and x[5] == "ok":
                    for table, k in zip(run, (f"{x[2]}|{x[3]}", x[2], "")):
                        table.setdefault(k, []).append(_secs(x[6]))
        for table, got in zip(means, run):
            for k, v in got.items():
                table.setdefault(k, sum(v) / len(v))
    return means[0], means[1], means[2].get("", DEFAULT_BOOT_S)


def estimate(rows, results, side, exact_clocks):
    """The estimate's lines for matrix.tsv rows [boot, label, kernel,
    disk, pressure, rep, clock]."""
    per, dper, fallback = _means(results)
    order, total = {}, {True: 0.0, False: 0.0}
    for r in rows:
        k = f"{r[3]}|{r[4]}"
        t = per.get(k, dper.get(r[3], fallback))
        ex = r[6] in exact_clocks
        e = order.setdefault(k, {"n": 0, "t": t, "exact": ex, "guess": k not in per})
        e["n"] += 1
        total[ex] += t
    out = ["estimate (mean seconds of ok boots of the same disk and pressure in the newest run "
           "that has them):"]
    for k, e in order.items():
        disk, pressure = k.split("|")
        out.append(f"  {disk:<16} {pressure:<8} {e['n']:3d} boot(s) x {e['t']:4.0f}s"
                   + (", side by side" if e["exact"] else "")
                   + (" (no earlier boot of it: a guess)" if e["guess"] else ""))
    total = int(total[True] / side + total[False] + 0.5)
    out.append(f"  total: about {total // 60}m{total % 60:02d}s ({side} side by side; kernel and "
               "guest builds not included;")
    out.append("  an exact-clock entry that spreads gets the rest of its reps on top)")
    return out


def dry_run(p, rows, results):
    """The dry run's lines: the plan, then the estimate."""
    out = [f"planned boots (matrix '{p['set']}'; {len(rows)} boots; per disk: jobs "
           f"{' '.join(p['jobs'])}; probed: {' '.join(p['probe_jobs']) or 'none'}; integrity: "
           f"{' '.join(p['integrity_jobs']) or 'none'}, reps 1-{p['integrity_reps']}"
           + (f"; sweep on {' '.join(p['sweep_disks'])}: {' '.join(p['sweep_jobs'])}"
              if p.get("sweep_jobs") else "") + "):"]
    out += [f"  {r[0]:<5} {r[1]:<11} {r[3]:<22} {r[4]:<9} {r[5]:<3} {r[6]}" for r in rows]
    return out + estimate(rows, results, p["side_jobs"], p["exact_clocks"])

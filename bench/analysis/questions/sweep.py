# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs per byte: the I/O-size sweep (bench/matrix sweep_jobs).
In: the calm boots of the counted sweep jobs on candidate disks. Out: per
job, bounce against baseline (medians of boots): the added time per I/O,
page and byte (the counted window less the lab's instruments), the parts
per byte, the bounce pages against predicted_peak, the IOPS ratios and how
far each part spreads boot by boot, against the determinism bound."""
import math

import numpy as np

from lab import jobname as J
from .. import cells as C, determinism as D, insnprof as X, md, plots as P, roles as ROLES
from .. import tidy as T
from .counted import INSTRUMENTS, job_median

PAGE = J.PAGE_BYTES
# block/bounce.c bounces a bio of at most BIO_MAX_VECS single-page
# segments at once (a larger one it splits first): 256 pages, 1 MiB
BIO_MAX_PAGES = 256
WINDOW = "insn_window_us_per_io"


def size_text(nbytes):
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def predicted_peak(nbytes, qd, max_sectors_kb=None, max_segments=None):
    """(pages an I/O holds, pages at the job's depth, requests per bio).
    The bounce takes its pages before blk_mq_submit_bio splits a bio to the
    queue limits (6.12); fio's direct I/O up to 1 MiB is one bio."""
    pages = math.ceil(nbytes / PAGE)
    per_bio = min(pages, BIO_MAX_PAGES)
    limit = [x for x in (max_sectors_kb and max_sectors_kb * 1024,
                         max_segments and max_segments * PAGE) if x]
    requests = math.ceil(per_bio * PAGE / min(limit)) if limit else np.nan
    return pages, pages * qd, requests


def peak_note(peak, pages, predicted, qd):
    """Whether the counted peak is the predicted one, and if not, why."""
    if not np.isfinite(peak):
        return "not counted"
    if peak == predicted:
        return "agrees"
    if pages and peak == pages and qd > 1:
        return (f"one I/O at a time, not {qd}: scsi_debug (delay=0) completes each I/O "
                "inside io_submit, so fio never has a second one in flight")
    if peak < predicted:
        return f"below: {peak / pages:.2f} I/Os in flight at most" if pages else "below"
    return "**above the prediction**"


def points(run):
    """A dict per counted sweep job on a candidate disk ([]: no baseline
    and bounce variant), reads before writes, random by size, then
    sequential."""
    t = run.calm
    base, bounce, removed = ((run.labels_of(r) or [None])[0]
                             for r in (ROLES.BASELINE, ROLES.BOUNCE, ROLES.REMOVED))
    if t.empty or not base or not bounce:
        return []
    counted = t[t["metric"] == "insn_kernel_us_per_io"]
    cells = {(d, j): run.sweep_shape(j)._asdict() for d, j in zip(counted["disk"], counted["job"])
             if d in run.candidate_disks and run.sweep_shape(j)}
    out = []
    for (disk, job), sh in sorted(cells.items(), key=lambda c: (
            c[0][0], c[1]["dir"], c[1]["pattern"] == "seq", c[1]["bytes"], c[0][1])):
        med = lambda v, m: C.median(t, v, disk, job, m) if v else np.nan
        d = lambda m: med(bounce, m) - med(base, m)
        nbytes = sh["bytes"]
        iops = f"{sh['dir']}_iops"
        wall = d(WINDOW) - d(INSTRUMENTS)
        limits = {c: job_median(run, "queue_" + c, bounce, disk, job)
                  for c in ("max_sectors_kb", "max_segments")}
        pages, predicted, requests = predicted_peak(
            nbytes, sh["qd"], *(int(x) if np.isfinite(x) else None for x in limits.values()))
        peak = med(bounce, "bounce_pages_peak")
        out.append(dict(
            sh, disk=disk, job=job, base=base, bounce=bounce, removed=removed,
            d_us=wall, d_us_page=wall / (nbytes / PAGE), d_ns_byte=wall * 1000 / nbytes,
            parts_ns_byte={p: d(X.metric_key(p)) * 1000 / nbytes for p in X.PART_NAMES},
            peak=peak, mean=med(bounce, "bounce_pages_mean"),
            alloc_us_page=med(bounce, "bounce_alloc_us_per_page"),
            pages_per_io=med(bounce, "bounce_pages_per_io"),
            bios_per_io=med(bounce, "insn_bounces_per_io"), predicted=predicted,
            requests=requests, **limits, note=peak_note(peak, pages, predicted, sh["qd"]),
            base_us=med(base, WINDOW),
            r_removed=med(removed, iops) / med(bounce, iops),
            r_base=med(base, iops) / med(bounce, iops),
            spread=max((D.spread_pct(C.rows(t, iops, [v], disk, job)["value"])
                        for v in (base, bounce, removed) if v), default=np.nan),
            repeat=repeat_pct(t, disk, job, bounce, base)))
    return out


def repeat_pct(t, disk, job, a, b):
    """{part: spread}: how far each part, taken boot by boot (a less b of
    the same rep), spreads across the reps, as % of the added time per
    I/O (a part near 0 is not blown up by its own smallness); {} with
    fewer than two reps."""
    def deltas(metric):
        ra, rb = ({r: float(x) for r, x in C.rows(t, metric, [v], disk, job)[["rep", "value"]]
                   .itertuples(index=False)} for v in (a, b))
        return [ra[r] - rb[r] for r in sorted(set(ra) & set(rb))]
    window = deltas(WINDOW)
    scale = abs(float(np.median(window))) if window else 0.0
    if len(window) < 2 or scale == 0:
        return {}
    return {p: 100 * (max(x) - min(x)) / scale for p in X.PART_NAMES
            if len(x := deltas(X.metric_key(p))) >= 2}


def _spread_text(pts, bound, base, bounce):
    """The boot-by-boot spread of each part against the bound ([]: none)."""
    worst = {x: max((p["repeat"][x], x, p["job"]) for p in pts if x in p["repeat"])
             for x in X.PART_NAMES if any(x in p["repeat"] for p in pts)}
    if not worst:
        return []
    inside = [x for x, w in worst.items() if w[0] <= bound]
    over = [x for x, w in worst.items() if w[0] > bound]
    return ["", f"Boot by boot (each rep's {bounce} less its {base}), how far each part "
            "per byte spreads across the boots, as % of the added time, the largest over "
            "the sizes: " + ", ".join(f"{x} {w[0]:.3f}" for x, w in worst.items())
            + f". Within the {bound:g}% determinism bound: " + (", ".join(inside) or "none")
            + (f"; above it: {', '.join(f'{x} ({worst[x][2]})' for x in over)}, which "
               "carry where the page allocator put things in that boot: how many pages "
               "of fio's buffer merge into one bvec (the block layer's split and map walk "
               f"bvecs, and {base}'s bios keep merged bvecs where the bounce's clone has "
               "one a page) and the free lists the bounce pages come from" if over else "")
            + "."]


def section(run, verdicts=None):
    """Markdown lines, or [] when the run has no counted sweep job."""
    pts = points(run)
    if not pts:
        return []
    bound, base, bounce, rem = run.bound_pct, pts[0]["base"], pts[0]["bounce"], pts[0]["removed"]
    own = [x for x in X.PART_NAMES if x != "instruments"]
    out = [f"The I/O-size sweep on {', '.join(dict.fromkeys(p['disk'] for p in pts))}: "
           f"each job bounded by size, so every kernel does the same I/Os. What {bounce} "
           f"adds over {base} (medians of boots, counted on an exact clock: the window's "
           "time, the lab's instruments left out), per I/O, per 4 KiB page and per byte, "
           "and the counted budget's parts per byte (ns; per I/O they are in the counted "
           "section's table, in instructions, rep movs iterations and bytes beside it).", "",
           md.table(["job", "I/O", "QD", "Δ µs per I/O", "µs per page", "ns per byte"] + own +
                    ["(the lab's instruments)", "bios per I/O", "pages per I/O"],
                    [[p["job"], size_text(p["bytes"]), str(p["qd"]), md.delta(p["d_us"], 2),
                      md.delta(p["d_us_page"], 3), md.delta(p["d_ns_byte"], 4)] +
                     [md.delta(p["parts_ns_byte"][x], 4) for x in own + ["instruments"]] +
                     [md.fmt(p["bios_per_io"], fixed=3), md.fmt(p["pages_per_io"], fixed=2)]
                     for p in pts])]
    out += _spread_text(pts, bound, base, bounce)
    out += ["", f"Bounce pages of {bounce} (the exact count): peak and time-weighted mean in "
            "flight, mempool_alloc time per page, and the peak predicted from the job's size "
            "and depth. The bounce takes its pages before the block layer splits a bio to the "
            "disk's queue limits, and gives them back when the whole bio completes, so the "
            "limits set the requests per bio, not the pages it holds.", "",
            md.table(["job", "I/O", "QD", "max_sectors_kb", "max_segments", "requests per bio",
                      "predicted peak", "peak", "mean", "mempool_alloc µs per page",
                      "peak against prediction"],
                     [[p["job"], size_text(p["bytes"]), str(p["qd"]),
                       md.fmt(p["max_sectors_kb"], 6), md.fmt(p["max_segments"], 6),
                       md.fmt(p["requests"], 6), str(p["predicted"]), md.fmt(p["peak"], 6),
                       md.fmt(p["mean"], fixed=3), md.fmt(p["alloc_us_page"], fixed=3),
                       p["note"]] for p in pts])]
    flag = lambda x: "" if not np.isfinite(x) or x <= bound else " **!**"
    out += ["", f"IOPS against {bounce} per size (the figure \"sweep\"): "
            + (f"{rem}/{bounce} and " if rem else "") + f"{base}/{bounce}, beside {base}'s "
            f"time per I/O (counted), what the bounce's time adds to; the largest "
            f"spread of a cell across boots beside the {bound:g}% determinism bound.", "",
            md.table(["job", "I/O", f"{base} µs per I/O"] + ([f"{rem}/{bounce}"] if rem else [])
                     + [f"{base}/{bounce}", "spread %"],
                     [[p["job"], size_text(p["bytes"]), md.fmt(p["base_us"], fixed=1)] +
                      ([md.fmt(p["r_removed"], fixed=4)] if rem else []) +
                      [md.fmt(p["r_base"], fixed=4),
                       md.fmt(p["spread"], fixed=4) + flag(p["spread"])] for p in pts])]
    return out + [""]


def figure_rows(run, pts=None):
    """The figure's data: [(dir, KiB, removed/bounce, baseline/bounce,
    bound %)] of the random QD1 jobs, by direction and size."""
    return [(p["dir"], p["bytes"] >> 10, p["r_removed"], p["r_base"], run.bound_pct)
            for p in (points(run) if pts is None else pts)
            if p["pattern"] == "rand" and p["qd"] == 1]


def figures(run, verdicts, p, everything=False):
    """removed/bounce and baseline/bounce IOPS per size, read and write,
    with the determinism bound as the band."""
    pts = points(run)
    rows = figure_rows(run, pts)
    if not rows:
        return
    bounce, base, rem = pts[0]["bounce"], pts[0]["base"], pts[0]["removed"] or "removed"
    blocks = ["\n".join(f"{kib} {P.num(r)} {P.num(b)}"
                        for dd, kib, r, b, _ in sorted(rows, key=lambda x: x[1]) if dd == d)
              or "? ? ?" for d in ("read", "write")]
    disks = ", ".join(dict.fromkeys(x["disk"] for x in pts))
    title = (f"IOPS against {bounce} by I/O size, {disks}, instruction time\n"
             f"{T.kernel_title(run)}")
    p.render("sweep", "sweep", "\n\n\n".join(blocks) + "\n",
             dict(title=title, bound=rows[0][4], rem=f"{rem}/{bounce}", base=f"{base}/{bounce}"),
             f"{rem}/{bounce} and {base}/{bounce} IOPS against I/O size (band: the "
             f"{rows[0][4]:g}% determinism bound)", "the I/O-size sweep")


TITLE = "What a bounce costs per byte: the I/O-size sweep"


def first_screen(run, verdicts):
    return []

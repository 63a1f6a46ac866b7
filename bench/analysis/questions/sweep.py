# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs per byte: the I/O-size sweep (bench/matrix keys
sweep_disks, sweep_jobs; job files bench/jobs/sweep-*.fio).

A sweep job is a sweep-* job file; its direction, size and queue depth
are fio's own (Run.sweep_shape). Per sweep job on a bounce-candidate disk whose boots carry the insnprof
counts, the bounce variant against the baseline (medians of boots, the
pressure-free boots only):

  the cost per unit  the added time per I/O, per 4 KiB page and per
                     byte: the counted window's (exact, where 1 / IOPS of
                     a job of 32 I/Os is fio's millisecond runtime over
                     32), less the lab's own instruments (the hist
                     trigger, the exact page count), which stay a
                     column; and the counted budget's parts
                     (insnprof.PART_NAMES) per byte;
  the pages          the bounce variant's bounce pages in flight, peak and
                     time-weighted mean (the exact count), mempool_alloc
                     time per page, and the peak predicted from the job's
                     size and depth and the disk's queue limits
                     (predicted_peak);
  the ratios         removed/bounce and baseline/bounce IOPS per size, the
                     figure's lines, with the run's determinism bound;
  the repeats        how far each part per byte, taken boot by boot (the
                     reps paired), spreads across the boots, against the
                     bound, part by part.

The units that carry to another CPU (instructions, rep movs iterations,
bytes copied, pages, bios) are counted.units_lines(), for every
counted job, the sweep's among them.
"""
import math

import numpy as np

from .. import determinism as D
from .. import insnprof as X
from .. import roles as ROLES
from lab import jobname as J
from lab import labconf as L
from .. import cells as C
from .. import md
from .. import plots as P
from .. import tidy as T

PAGE = J.PAGE_BYTES
# block/bounce.c bounces a bio of at most BIO_MAX_VECS single-page
# segments at once (a larger one it splits first): 256 pages, 1 MiB
BIO_MAX_PAGES = 256
WINDOW = "insn_window_us_per_io"
INSTRUMENTS = X.metric_key("instruments")


def size_text(nbytes):
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def predicted_peak(nbytes, qd, max_sectors_kb=None, max_segments=None):
    """(bounce pages one I/O holds, pages predicted at the job's depth,
    requests per bio). The bounce takes a page per highmem 4 KiB of a bio
    before the block layer splits the bio to the queue limits (6.12
    blk_mq_submit_bio: blk_queue_bounce, then __bio_split_to_limits), and
    gives them back when the whole bio completes: the limits (max_sectors_kb,
    max_segments of single pages) set how many requests carry a bio, not
    how many pages it holds. A bio holds at most BIO_MAX_PAGES; fio's
    direct I/O of up to 1 MiB is one bio, so an I/O holds its size in
    pages, and QD I/Os in flight hold QD times that."""
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


def _labels(run):
    variants = run.labels
    pick = {}
    for v in variants:
        pick.setdefault(ROLES.variant_role(run, v), v)
    return pick.get(ROLES.BASELINE), pick.get(ROLES.BOUNCE), pick.get(ROLES.REMOVED)


def _tidy(run):
    t = run.tidy
    return t[t["pressure"] == L.NO_PRESSURE] if "pressure" in t else t


def _info(run, variant, disk, job, column):
    """The median of a job-table column over the variant's ok jobs."""
    j = run.jobs
    if j.empty or column not in j:
        return np.nan
    v = j[(j["variant"] == variant) & (j["disk"] == disk) & (j["job"] == job)][column]
    v = v.dropna().astype(float)
    return float(np.median(v)) if len(v) else np.nan


def _jobs(run, t):
    """[(disk, job, shape)] of the counted sweep jobs on candidate disks,
    reads before writes, random by size, then sequential."""
    counted = t[t["metric"] == "insn_kernel_us_per_io"]
    out = []
    for disk in sorted(set(counted["disk"]) & set(run.candidate_disks)):
        for job in set(counted[counted["disk"] == disk]["job"]):
            sh = run.sweep_shape(job)
            if sh:
                out.append((disk, job, sh._asdict()))
    return sorted(out, key=lambda r: (r[0], r[2]["dir"], r[2]["pattern"] == "seq",
                                      r[2]["bytes"], r[1]))


def points(run):
    """One dict per counted sweep job on a candidate disk (see the module
    doc), or [] without a baseline and a bounce variant."""
    t = _tidy(run)
    if t.empty:
        return []
    base, bounce, removed = _labels(run)
    if not base or not bounce:
        return []
    out = []
    for disk, job, sh in _jobs(run, t):
        med = lambda v, m: C.median(t, v, disk, job, m) if v else np.nan
        d = lambda m: med(bounce, m) - med(base, m)
        nbytes = sh["bytes"]
        iops = f"{sh['dir']}_iops"
        wall = d(WINDOW) - d(INSTRUMENTS)
        limits = {c: _info(run, bounce, disk, job, "queue_" + c)
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
            bios_per_io=med(bounce, "insn_bounces_per_io"),
            pages=pages, predicted=predicted, requests=requests, **limits,
            note=peak_note(peak, pages, predicted, sh["qd"]),
            base_us=med(base, WINDOW),
            r_removed=med(removed, iops) / med(bounce, iops),
            r_base=med(base, iops) / med(bounce, iops),
            spread=max((D.spread_pct(t[(t["variant"] == v) & (t["disk"] == disk) &
                                       (t["job"] == job) & (t["metric"] == iops)]["value"])
                        for v in (base, bounce, removed) if v), default=np.nan),
            repeat=repeat_pct(t, disk, job, bounce, base)))
    return out


def per_rep_deltas(t, disk, job, a, b, metric):
    """{rep: a - b} of one metric, the reps both variants have."""
    def by_rep(v):
        s = t[(t["variant"] == v) & (t["disk"] == disk) & (t["job"] == job) &
              (t["metric"] == metric)]
        return dict(zip(s["rep"], s["value"].astype(float)))
    ra, rb = by_rep(a), by_rep(b)
    return {r: ra[r] - rb[r] for r in sorted(set(ra) & set(rb))}


def repeat_pct(t, disk, job, a, b):
    """{part: spread}: how far each part of the budget, taken boot by boot
    (bounce less baseline of the same rep), spreads across the reps, as %
    of the added time per I/O (so a part near 0 is not blown up by its
    own smallness); {} with fewer than two reps."""
    window = per_rep_deltas(t, disk, job, a, b, WINDOW)
    scale = abs(float(np.median(list(window.values())))) if window else 0.0
    if len(window) < 2 or scale == 0:
        return {}
    out = {}
    for p in X.PART_NAMES:
        deltas = list(per_rep_deltas(t, disk, job, a, b, X.metric_key(p)).values())
        if len(deltas) >= 2:
            out[p] = 100 * (max(deltas) - min(deltas)) / scale
    return out


def _worst(pts, parts):
    """(spread, part, job) of the largest spread among parts, or None."""
    hits = [(p["repeat"][x], x, p["job"]) for p in pts for x in parts if x in p["repeat"]]
    return max(hits) if hits else None


def section(run, verdicts=None):
    """Markdown lines, or [] when the run has no counted sweep job."""
    pts = points(run)
    if not pts:
        return []
    bound = run.bound_pct
    base, bounce = pts[0]["base"], pts[0]["bounce"]
    out = [f"The I/O-size sweep on {', '.join(dict.fromkeys(p['disk'] for p in pts))}: "
           f"each job bounded by size, so every kernel does the same I/Os. What {bounce} "
           f"adds over {base} (medians of boots, counted on an exact clock: the window's "
           "time, the lab's instruments left out), per I/O, per 4 KiB page and per byte, "
           "and the counted budget's parts per byte (ns; per I/O they are in the counted "
           "section's table, in instructions, rep movs iterations and bytes beside it).", ""]
    head = ["job", "I/O", "QD", "Δ µs per I/O", "µs per page", "ns per byte"] + \
        [p for p in X.PART_NAMES if p != "instruments"] + ["(the lab's instruments)",
                                                           "bios per I/O", "pages per I/O"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in pts:
        out.append("| " + " | ".join(
            [p["job"], size_text(p["bytes"]), str(p["qd"]), md.delta(p["d_us"], 2),
             md.delta(p["d_us_page"], 3), md.delta(p["d_ns_byte"], 4)] +
            [md.delta(p["parts_ns_byte"][x], 4) for x in X.PART_NAMES if x != "instruments"] +
            [md.delta(p["parts_ns_byte"]["instruments"], 4)] +
            [md.fmt(p["bios_per_io"], fixed=3), md.fmt(p["pages_per_io"], fixed=2)]) + " |")
    worst = {x: _worst(pts, [x]) for x in X.PART_NAMES}
    worst = {x: w for x, w in worst.items() if w}
    if worst:
        inside = [x for x, w in worst.items() if w[0] <= bound]
        over = [x for x, w in worst.items() if w[0] > bound]
        out += ["", f"Boot by boot (each rep's {bounce} less its {base}), how far each part "
                "per byte spreads across the boots, as % of the added time, the largest over "
                "the sizes: " + ", ".join(f"{x} {w[0]:.3f}" for x, w in worst.items())
                + f". Within the {bound:g}% determinism bound: "
                + (", ".join(inside) or "none")
                + (f"; above it: {', '.join(f'{x} ({worst[x][2]})' for x in over)}, which "
                   "carry where the page allocator put things in that boot: how many pages "
                   "of fio's buffer merge into one bvec (the block layer's split and map walk "
                   f"bvecs, and {base}'s bios keep merged bvecs where the bounce's clone has "
                   "one a page) and the free lists the bounce pages come from" if over else "")
                + "."]
    out += ["", f"Bounce pages of {bounce} (the exact count): peak and time-weighted mean in "
            "flight, mempool_alloc time per page, and the peak predicted from the job's size "
            "and depth. The bounce takes its pages before the block layer splits a bio to the "
            "disk's queue limits, and gives them back when the whole bio completes, so the "
            "limits set the requests per bio, not the pages it holds.", ""]
    head = ["job", "I/O", "QD", "max_sectors_kb", "max_segments", "requests per bio",
            "predicted peak", "peak", "mean", "mempool_alloc µs per page", "peak against prediction"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in pts:
        out.append("| " + " | ".join(
            [p["job"], size_text(p["bytes"]), str(p["qd"]), md.fmt(p["max_sectors_kb"], 6),
             md.fmt(p["max_segments"], 6), md.fmt(p["requests"], 6), str(p["predicted"]), md.fmt(p["peak"], 6),
             md.fmt(p["mean"], fixed=3), md.fmt(p["alloc_us_page"], fixed=3), p["note"]]) + " |")
    rem = pts[0]["removed"]
    out += ["", f"IOPS against {bounce} per size (the figure \"sweep\"): "
            + (f"{rem}/{bounce} and " if rem else "") + f"{base}/{bounce}, beside {base}'s "
            f"time per I/O (counted), what the bounce's time adds to; the largest "
            f"spread of a cell across boots beside the {bound:g}% determinism bound.", ""]
    head = ["job", "I/O", f"{base} µs per I/O"] + ([f"{rem}/{bounce}"] if rem else []) + \
        [f"{base}/{bounce}", "spread %"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in pts:
        out.append("| " + " | ".join(
            [p["job"], size_text(p["bytes"]), md.fmt(p["base_us"], fixed=1)] +
            ([md.fmt(p["r_removed"], fixed=4)] if rem else []) +
            [md.fmt(p["r_base"], fixed=4), md.fmt(p["spread"], fixed=4) + ("" if not np.isfinite(p["spread"])
                                                        or p["spread"] <= bound else " **!**")])
            + " |")
    return out + [""]


def figure_rows(run):
    """The figure's data: [(dir, KiB, removed/bounce, baseline/bounce,
    bound %)] of the random QD1 jobs, by direction and size."""
    bound = run.bound_pct
    return [(p["dir"], p["bytes"] >> 10, p["r_removed"], p["r_base"], bound)
            for p in points(run) if p["pattern"] == "rand" and p["qd"] == 1]


def figures(run, verdicts, p, everything=False):
    """The I/O-size sweep: removed/bounce and baseline/bounce IOPS per
    size, read and write, with the determinism bound as the band."""
    rows = figure_rows(run)
    if not rows:
        return
    pts = points(run)
    bounce, base, rem = pts[0]["bounce"], pts[0]["base"], pts[0]["removed"] or "removed"
    blocks = []
    for d in ("read", "write"):
        blocks.append("\n".join(f"{kib} {P.num(r)} {P.num(b)}"
                                 for dd, kib, r, b, _ in sorted(rows, key=lambda x: x[1])
                                 if dd == d) or "? ? ?")
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

# SPDX-License-Identifier: GPL-2.0
"""The metrics the lab reports: unit, and which way is "better".

One table so that tidy.py (which produces them), stats.py (which words the
verdicts) and report.py (which labels them) never disagree.
"""
import re

# kind: "throughput" (higher is faster), "latency" (lower is faster),
# "cost" (lower is cheaper: CPU or time spent per unit of work) or "level"
# (no better/worse: only higher/lower).
THROUGHPUT, LATENCY, COST, LEVEL = "throughput", "latency", "cost", "level"

_DIRS = ("read", "write")
_PCTS = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"))

METRICS = {}
for _d in _DIRS:
    METRICS[f"{_d}_iops"] = ("IO/s", THROUGHPUT, f"{_d} IOPS")
    METRICS[f"{_d}_bw"] = ("B/s", THROUGHPUT, f"{_d} bandwidth")
    METRICS[f"{_d}_clat_mean_us"] = ("µs", LATENCY, f"{_d} completion latency, mean")
    for _p, _ in _PCTS:
        METRICS[f"{_d}_clat_{_p}_us"] = ("µs", LATENCY, f"{_d} completion latency, {_p}")
METRICS.update({
    "cpu_usr_pct": ("%", LEVEL, "fio user CPU"),
    "cpu_sys_pct": ("%", LEVEL, "fio system CPU"),
    "ctx_switches": ("switches", LEVEL, "fio context switches"),
    "bounces": ("bios", LEVEL, "bounced bios (block_bio_bounce)"),
    "bounced_bytes_per_gib": ("B/GiB", LEVEL, "bounced bytes per GiB moved"),
    "bounce_peak_kb": ("kB", LEVEL, "peak Bounce: (meminfo)"),
    "lowfree_min_kb": ("kB", LEVEL, "minimum LowFree (meminfo)"),
    "highfree_min_kb": ("kB", LEVEL, "minimum HighFree (meminfo)"),
    "bounce_gauge_pages_peak": ("pages", LEVEL, "bounce pages in use, sampled peak (Bounce:)"),
    "bounce_gauge_pages_mean": ("pages", LEVEL, "bounce pages in use, sampled mean (Bounce:)"),
    "cpu_s_per_gib": ("s/GiB", LEVEL, "guest kernel CPU (sys+irq+softirq) per GiB moved"),
    "bounce_submit_us_p50": ("µs", LATENCY, "bounce at submit (__blk_queue_bounce), median"),
    "bounce_submit_us_p99": ("µs", LATENCY, "bounce at submit (__blk_queue_bounce), p99"),
    "bounce_endio_us_p50": ("µs", LATENCY, "bounce at completion (own time), median"),
    "bounce_endio_us_p99": ("µs", LATENCY, "bounce at completion (own time), p99"),
    "bounce_us_per_gib": ("µs/GiB", LEVEL, "time in the bounce functions per GiB moved"),
    "integrity_written_blocks": ("blocks", LEVEL, "blocks written (integrity job)"),
    "integrity_checked_blocks": ("blocks", LEVEL, "blocks read back and checked"),
    "integrity_bad_blocks": ("blocks", LEVEL, "blocks that failed the check"),
    "allocstall": ("stalls", LEVEL, "allocstall_* over the job"),
    "pgscan": ("pages", LEVEL, "pgscan_kswapd + pgscan_direct over the job"),
    "psi_some_us": ("µs", LEVEL, "PSI memory some total over the job"),
    "psi_full_us": ("µs", LEVEL, "PSI memory full total over the job"),
    "cpu_s_per_gib": ("s/GiB", COST, "guest CPU (sys+irq+softirq) per GiB moved"),
    "bounce_submit_us_p50": ("µs", COST, "bounce at submit per bounced bio, p50"),
    "bounce_submit_us_p99": ("µs", COST, "bounce at submit per bounced bio, p99"),
    "bounce_endio_us_p50": ("µs", COST, "bounce at completion per bounced bio, p50"),
    "bounce_endio_us_p99": ("µs", COST, "bounce at completion per bounced bio, p99"),
    "bounce_us_per_gib": ("µs/GiB", COST, "time in bounce functions per GiB moved"),
    "bounce_pages_peak": ("pages", LEVEL, "bounce pages in flight, peak (exact)"),
    "bounce_pages_mean": ("pages", LEVEL, "bounce pages in flight, time-weighted mean (exact)"),
    "bounce_lowmem_peak_kib": ("KiB", LEVEL, "lowmem held by bounce pages, peak (exact)"),
    "bounce_pages_taken": ("pages", LEVEL, "bounce pages taken over the job"),
    "bounce_alloc_us_per_page": ("µs", COST, "time in mempool_alloc per bounce page"),
    "bounce_alloc_max_us": ("µs", LATENCY, "longest mempool_alloc for a bounce page"),
    "bounce_reserve_used_pages": ("pages", LEVEL, "bounce pool reserve used, most at once"),
    "bounce_pool_kib": ("KiB", LEVEL, "bounce pool reserve (standing lowmem)"),
    "pgsteal": ("pages", LEVEL, "pgsteal_kswapd + pgsteal_direct over the job"),
    "hog_cpu_s": ("s", LEVEL, "pressure hog CPU during the job (must be ~0)"),
    "oom_kills": ("kills", LEVEL, "OOM kills during the job"),
    "integrity_bad_blocks": ("blocks", LEVEL, "blocks that failed the integrity check"),
    "integrity_checked_blocks": ("blocks", LEVEL, "blocks checked for integrity"),
})

# Pressure counters are totals over a job, so a slower job shows "more
# pressure": tidy.py also writes each as a rate per second of job time
# (NAME_per_s) and per GiB moved (NAME_per_gib); the verdicts use only the
# rates (the totals stay in summary.csv).
PRESSURE_TOTALS = ("allocstall", "pgscan", "pgsteal", "psi_some_us", "psi_full_us")
for _m in PRESSURE_TOTALS:
    _u, _, _l = METRICS[_m]
    _l = _l.replace(" over the job", "").replace(" total", "")
    METRICS[f"{_m}_per_s"] = (f"{_u}/s", LEVEL, f"{_l} per second of job time")
    METRICS[f"{_m}_per_gib"] = (f"{_u}/GiB", LEVEL, f"{_l} per GiB moved")
TOTALS = frozenset(PRESSURE_TOTALS)

# Primary metrics: per job one throughput, one latency tail, the CPU cost
# per GiB and the lowmem floor. Their verdicts make the headline and share
# one false-discovery-rate family; every other metric is exploratory.
# (slot, job-name pattern or None for any job, metric; {d} = the job's
# direction). The first row of a slot whose pattern matches and whose
# metric the cell has wins.
PRIMARY = [
    # writeback under pressure (pressure-writeback): the writer's
    # bandwidth, the tail of the reader beside it, the share of time
    # stalled on memory
    ("throughput", r"writeback", "write_bw"),
    ("latency tail", r"writeback", "read_clat_p99_us"),
    ("throughput", r"seq|buffered", "{d}_bw"),
    ("throughput", None, "{d}_iops"),
    ("latency tail", None, "{d}_clat_p99_us"),
    ("CPU per GiB", None, "cpu_s_per_gib"),
    ("lowmem", None, "lowfree_min_kb"),
    ("memory stalls", r"writeback", "psi_some_us_per_s"),
]
PRIMARY_SLOTS = list(dict.fromkeys(slot for slot, _, _ in PRIMARY))

# fio clat percentile keys, as fio 3.33 writes them in its JSON output.
PERCENTILE_KEYS = dict(_PCTS)

# Metrics that only exist where the kernel counts bounces.
BOUNCE_METRICS = ("bounces", "bounced_bytes_per_gib")


def job_direction(job, present):
    """"read" or "write": the direction a job is about (its name, else the
    direction it measured; a write job that verifies also reads)."""
    dirs = [d for d in _DIRS if f"{d}_iops" in present]
    named = [d for d in _DIRS if d in job]
    for d in named:
        if d in dirs:
            return d
    return "write" if "write" in dirs else (dirs[0] if dirs else "read")


def primary_metrics(job, present):
    """{slot: metric} of a job's primary metrics among the metrics present."""
    present = set(present)
    d = job_direction(job, present)
    out = {}
    for slot, pattern, metric in PRIMARY:
        m = metric.format(d=d)
        if slot in out or m not in present:
            continue
        if pattern is None or re.search(pattern, job):
            out[slot] = m
    return out


def unit(metric):
    return METRICS[metric][0] if metric in METRICS else ""


def kind(metric):
    return METRICS[metric][1] if metric in METRICS else LEVEL


def label(metric):
    return METRICS[metric][2] if metric in METRICS else metric


def order(metric):
    """Sort key: the registry order, unknown metrics last."""
    keys = list(METRICS)
    return keys.index(metric) if metric in METRICS else len(keys)

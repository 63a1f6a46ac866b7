# SPDX-License-Identifier: GPL-2.0
"""The metrics the lab reports: unit, and which way is "better".

One table so that tidy.py (which produces them), stats.py (which words the
verdicts) and report.py (which labels them) never disagree.
"""

# kind: "throughput" (higher is faster), "latency" (lower is faster) or
# "level" (no better/worse: only higher/lower).
THROUGHPUT, LATENCY, LEVEL = "throughput", "latency", "level"

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
    "bounce_pages_peak": ("pages", LEVEL, "bounce pages in use, peak (Bounce:)"),
    "bounce_pages_mean": ("pages", LEVEL, "bounce pages in use, mean (Bounce:)"),
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
})

# fio clat percentile keys, as fio 3.33 writes them in its JSON output.
PERCENTILE_KEYS = dict(_PCTS)

# Metrics that only exist where the kernel counts bounces.
BOUNCE_METRICS = ("bounces", "bounced_bytes_per_gib")


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

# SPDX-License-Identifier: GPL-2.0
"""The metric registry: every metric the lab reports, once, with its unit,
kind, label, flags and smallest effect of interest (selections are
selected(FLAG)); the primary rules (primary_metrics); and the headline
registry: which metrics of which jobs each page leads with (headlines(),
is_headline()).
"""
from typing import NamedTuple

from lab import jobname as J
from lab.labconf import NO_PRESSURE
from . import insnprof as X

# throughput: higher is faster; latency: lower is faster; cost: lower is
# cheaper (CPU or time per unit of work); level: only higher or lower
THROUGHPUT, LATENCY, COST, LEVEL = "throughput", "latency", "cost", "level"

# primary: named by a PRIMARY rule; ratio: tidy.py writes its within-boot
# ratio (candidate / control); plot: bar figures per variant
FLAGS = ("primary", "ratio", "plot")
# The smallest effect of interest, % of |B/A - 1|, per kind (a metric may
# set its own)
MIN_EFFECT_PCT = {THROUGHPUT: 1.0, LATENCY: 1.0, COST: 1.0, LEVEL: 1.0}
# under a pressure level, and the reclaim rates (bench/README.md)
PRESSURE_MIN_EFFECT_PCT = 10.0


class Metric(NamedTuple):
    unit: str
    kind: str
    label: str
    flags: frozenset
    min_effect_pct: float


METRICS = {}


def add(key, unit, kind, label, *flags, min_effect=None):
    """Register one metric; a key defined twice is an error."""
    if key in METRICS:
        raise ValueError(f"metric {key} defined twice")
    bad = set(flags) - set(FLAGS)
    if bad:
        raise ValueError(f"metric {key}: unknown flags {sorted(bad)}")
    METRICS[key] = Metric(unit, kind, label, frozenset(flags),
                          MIN_EFFECT_PCT[kind] if min_effect is None else min_effect)


_DIRS = ("read", "write")
_PCTS = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"))

for _d in _DIRS:
    add(f"{_d}_iops", "IO/s", THROUGHPUT, f"{_d} IOPS", "primary", "ratio", "plot")
    add(f"{_d}_bw", "B/s", THROUGHPUT, f"{_d} bandwidth", "primary")
    # did a job offered a steady rate (fio rate_iops) keep up
    add(f"{_d}_iops_offered_pct", "%", LEVEL, f"{_d} IOPS, % of the rate offered (rate_iops)")
    # a 4 KiB read takes ~150 us unloaded: one of 1 ms waited on something
    add(f"{_d}_late_1ms_pct", "%", LATENCY, f"{_d} I/Os of 1 ms or more, % (a steady {_d}er's)")
    # lat: submission to completion (percentiles need lat_percentiles=1).
    # On an in-guest disk at QD1 libaio completes the I/O inside io_submit,
    # so the bounce lands in slat and clat misses it: lat means the same on
    # every kernel and disk (clat p99: the tail of runs from before lat).
    add(f"{_d}_lat_mean_us", "µs", LATENCY, f"{_d} latency (submission to completion), mean",
        *(("primary",) if _d == "read" else ()))
    add(f"{_d}_slat_mean_us", "µs", LATENCY, f"{_d} submission latency, mean")
    add(f"{_d}_clat_mean_us", "µs", LATENCY, f"{_d} completion latency, mean")
    for _p, _ in _PCTS:
        add(f"{_d}_lat_{_p}_us", "µs", LATENCY,
            f"{_d} latency (submission to completion), {_p}",
            *(("primary", "ratio") if _p == "p99" else ("ratio",) if _p == "p50" else ()))
        add(f"{_d}_clat_{_p}_us", "µs", LATENCY, f"{_d} completion latency, {_p}",
            *(("primary",) if _p == "p99" else ()))
add("cpu_usr_pct", "%", LEVEL, "fio user CPU")
add("cpu_sys_pct", "%", LEVEL, "fio system CPU")
add("ctx_switches", "switches", LEVEL, "fio context switches")
add("bounces", "bios", LEVEL, "bounced bios (block_bio_bounce)")
add("bounced_bytes_per_gib", "B/GiB", LEVEL, "bounced bytes per GiB moved")
add("bounce_peak_kb", "kB", LEVEL, "peak Bounce: (meminfo)")
add("lowfree_min_kb", "kB", LEVEL, "minimum LowFree (meminfo)", "primary")
add("highfree_min_kb", "kB", LEVEL, "minimum HighFree (meminfo)")
add("bounce_gauge_pages_peak", "pages", LEVEL, "bounce pages in use, sampled peak (Bounce:)")
add("bounce_gauge_pages_mean", "pages", LEVEL, "bounce pages in use, sampled mean (Bounce:)")
add("cpu_s_per_gib", "s/GiB", COST,
    "guest CPU (sys+irq+softirq) per GiB moved (on an exact clock: counted kernel instructions)",
    "primary", "ratio")
# The time budget of one I/O, tick-sampled (monitors/proc.py)
add("time_wall_us_per_io", "µs", COST, "wall time per I/O (1 / IOPS)")
add("time_user_us_per_io", "µs", COST, "user CPU per I/O (/proc/stat user+nice)")
add("time_sys_us_per_io", "µs", COST, "system CPU per I/O (/proc/stat system)")
add("time_irq_us_per_io", "µs", COST, "irq and softirq CPU per I/O (/proc/stat)")
add("time_idle_us_per_io", "µs", COST, "idle time per I/O (/proc/stat idle+iowait)")
# The exact budget of one I/O on an exact clock (insnprof.py)
add("insn_window_us_per_io", "µs", COST, "time per I/O over the counted window (guest clock)")
add("insn_user_us_per_io", "µs", COST, "user instructions per I/O, as time (exact)")
add("insn_kernel_us_per_io", "µs", COST, "kernel instructions per I/O, as time (exact)")
add("insn_idle_us_per_io", "µs", COST, "idle time per I/O (window less instructions, exact)")
add("insn_bounces_per_io", "bios", LEVEL, "bounced bios per I/O (calls of the bounce completions)")
for _p in X.PART_NAMES:
    add(X.metric_key(_p), "µs", COST, f"kernel time per I/O in {_p} (exact)")
add("insn_instructions_per_io", "insns", COST, "instructions per I/O, user and kernel (exact)")
add("insn_copy_iters_per_io", "iterations", COST, "rep movs iterations per I/O (exact)")
add("insn_copy_bytes_per_io", "B", COST, "bytes moved by rep movs per I/O (exact)")
add("bounce_submit_us_p50", "µs", COST, "bounce at submit per bounced bio, p50")
add("bounce_submit_us_p99", "µs", COST, "bounce at submit per bounced bio, p99")
add("bounce_endio_us_p50", "µs", COST, "bounce at completion per bounced bio, p50")
add("bounce_endio_us_p99", "µs", COST, "bounce at completion per bounced bio, p99")
add("bounce_us_per_gib", "µs/GiB", COST, "time in bounce functions per GiB moved")
add("integrity_written_blocks", "blocks", LEVEL, "blocks written (integrity job)")
add("integrity_checked_blocks", "blocks", LEVEL, "blocks checked for integrity")
add("integrity_bad_blocks", "blocks", LEVEL, "blocks that failed the integrity check")
add("allocstall", "stalls", LEVEL, "allocstall_* over the job")
add("pgscan", "pages", LEVEL, "pgscan_kswapd + pgscan_direct over the job")
add("psi_some_us", "µs", LEVEL, "PSI memory some total over the job (fio's window)")
add("psi_full_us", "µs", LEVEL, "PSI memory full total over the job (fio's window)")
add("bounce_pages_peak", "pages", LEVEL, "bounce pages in flight, peak (exact)")
add("bounce_pages_mean", "pages", LEVEL, "bounce pages in flight, time-weighted mean (exact)")
add("bounce_lowmem_peak_kib", "KiB", LEVEL, "lowmem held by bounce pages, peak (exact)")
add("bounce_pages_taken", "pages", LEVEL, "bounce pages taken over the job")
add("bounce_pages_per_io", "pages", LEVEL, "bounce pages taken per I/O (exact)")
# tidy._within_boot_costs, on the within-boot pseudo-disk "A/B"
_COUNTED = "counted (candidate less control disk, same boot)"
add("bounce_ns_per_byte", "ns/B", COST, f"bounce's added time per byte, {_COUNTED}")
add("bounce_us_per_bounce", "µs", COST, f"bounce's added time per bounced bio, {_COUNTED}")
add("bounce_copy_us_per_bounce", "µs", COST, f"bounce's copy per bounced bio, {_COUNTED}")
add("bounce_copied_bytes_per_gib", "B/GiB", LEVEL,
    "bytes the bounce copied per GiB moved, counted (candidate less control disk)")
add("bounce_alloc_us_per_page", "µs", COST, "time in mempool_alloc per bounce page")
add("bounce_alloc_max_us", "µs", LATENCY, "longest mempool_alloc for a bounce page")
add("bounce_reserve_used_pages", "pages", LEVEL, "bounce pool reserve used, most at once")
add("bounce_pool_kib", "KiB", LEVEL, "bounce pool reserve (standing lowmem)")
add("pgsteal", "pages", LEVEL, "pgsteal_kswapd + pgsteal_direct over the job")
add("hog_cpu_s", "s", LEVEL, "pressure hog CPU during the job (must be ~0)")
# The dose a pressure job started from (guest/init's dose file) and how
# far it was off its target (tidy.dose_check)
add("dose_lowfree_kb", "kB", LEVEL, "dose: LowFree at the job's start (lowhog frozen)")
add("dose_highfree_kb", "kB", LEVEL, "dose: HighFree at the job's start")
add("dose_normal_min_kb", "kB", LEVEL, "dose: the Normal zone's min watermark")
add("dose_highmem_min_kb", "kB", LEVEL, "dose: the HighMem zone's min watermark")
add("dose_highfree_off_kb", "kB", LEVEL, "dose: HighFree less its target")
add("dose_lowfree_off_kb", "kB", LEVEL, "dose: LowFree less its target")
add("oom_kills", "kills", LEVEL, "OOM kills during the job")

# Totals over a job grow with a slower job: the verdicts use only their
# rates (tidy.py), the totals stay in summary.csv
PRESSURE_TOTALS = ("allocstall", "pgscan", "pgsteal", "psi_some_us", "psi_full_us")
for _m in PRESSURE_TOTALS:
    _u, _l = METRICS[_m].unit, METRICS[_m].label.replace(" over the job", "").replace(" total", "")
    for _per, _pu, _pl in (("s", "s", "second of job time"), ("gib", "GiB", "GiB moved"),
                           ("mib_written", "MiB", "MiB written")):
        _primary = _per == "mib_written" and _m in ("pgsteal", "psi_some_us")
        add(f"{_m}_per_{_per}", f"{_u}/{_pu}", LEVEL, f"{_l} per {_pl}",
            *(("primary",) if _primary else ()), min_effect=PRESSURE_MIN_EFFECT_PCT)
TOTALS = frozenset(PRESSURE_TOTALS)


def _not_pressure(job):
    return not J.is_pressure(job)


# The sweep's jobs are bounded by size (96 I/Os at 256 KiB): a p99 is one
# of their few slowest I/Os, which the seed alone moved by 4-7 %.
def _not_sweep(job):
    return not J.is_sweep(job)


# Primary metrics (slot, rule of the job's name or None, metric; {d}: the
# job's direction): the first row of a slot whose rule takes the job and
# whose metric the cell has wins; every other metric is exploratory. The
# pressure jobs' own, and why, are bench/README.md's ("Memory pressure",
# run 20261206-060820). Not theirs: CPU per GiB (the CPU never idles
# there: it says what the bandwidth says) and the sampled LowFree floor
# (the dose sets it; the bounce pages' footprint is counted exactly).
PRIMARY = [
    ("throughput", J.is_pressure, "write_bw"),
    ("reader latency", J.is_pressure, "read_lat_mean_us"),
    ("latency tail", J.is_pressure, "read_lat_p99_us"),
    ("latency tail", J.is_pressure, "read_clat_p99_us"),
    ("reclaim", J.is_pressure, "pgsteal_per_mib_written"),
    ("memory stalls", J.is_pressure, "psi_some_us_per_mib_written"),
    ("throughput", J.is_streaming, "{d}_bw"),
    ("throughput", None, "{d}_iops"),
    ("latency tail", _not_sweep, "{d}_lat_p99_us"),
    ("latency tail", _not_sweep, "{d}_clat_p99_us"),
    ("CPU per GiB", _not_pressure, "cpu_s_per_gib"),
    ("lowmem", _not_pressure, "lowfree_min_kb"),
]
PRIMARY_SLOTS = list(dict.fromkeys(slot for slot, _, _ in PRIMARY))


# The headline registry. jobs: a rule of the job's name, None for every
# job. pages: REPORT (the run report's headline table), HISTORY (a figure
# over the runs, and a move --check calls a headline), or a group of
# HEADLINE_GROUPS (a column of the table across kernel versions, named
# short, and its figure).
REPORT, HISTORY = "report", "history"


class Headline(NamedTuple):
    metric: str
    jobs: object
    pages: tuple
    short: str = ""


def _unswept(rule):
    """rule, never true of the sweep's jobs."""
    return lambda job: _not_sweep(job) and rule(job)


# The 4 KiB QD1 jobs (not their probed twins), but the sweep's
_page_qd1 = _unswept(J.is_page_qd1)


def _rand_page(direction, twin=False):
    """The 4 KiB QD1 random jobs of a direction, but the sweep's; twin:
    with their probed twins."""
    return _unswept(lambda job: J.is_io(job, "rand", direction, J.PAGE_BYTES, 1,
                                        None if twin else ""))


def _seq(direction):
    """The sequential jobs of a direction, but the sweep's."""
    return _unswept(lambda job: J.access(job) == ("seq", direction))


def _sweep_ends(job):
    """The I/O-size sweep's random QD1 jobs at its ends, 4 KiB and 1 MiB."""
    s = J.sweep_shape(job)
    return bool(s) and s["pattern"] == "rand" and s["qd"] == 1 and \
        s["bytes"] in (J.PAGE_BYTES, 1 << 20)


# (group, section title) of the tables across kernel versions, in order
HEADLINE_GROUPS = [
    ("bounced", "Bounced bytes per GiB moved"),
    ("cost", "Cost per bounced bio, probed jobs"),
    ("latency", "4 KiB QD1 latency"),
    ("integrity", "Data integrity: bad blocks per integrity job"),
    # counted: tidy._within_boot_costs
    ("bounced-counted", "Bytes the bounce copied per GiB moved, counted"),
    ("cost-counted", "Cost per bounced bio, counted (candidate less control, same boot)"),
    ("memory", "Writeback under memory pressure"),
    ("per-byte", "Cost per byte bounced, I/O-size sweep, counted (candidate less control, "
     "same boot)"),
]
HEADLINES = [
    Headline("read_iops", None, (REPORT,)),
    Headline("read_bw", None, (REPORT,)),
    Headline("write_iops", None, (REPORT,)),
    Headline("write_bw", None, (REPORT,)),
    Headline("cpu_s_per_gib", None, (REPORT,)),
    Headline("read_iops", _rand_page("read", twin=True), (HISTORY,)),
    Headline("read_lat_p99_us", _rand_page("read", twin=True), (HISTORY,)),
    Headline("write_iops", _rand_page("write", twin=True), (HISTORY,)),
    Headline("write_lat_p99_us", _rand_page("write", twin=True), (HISTORY,)),
    Headline("read_bw", _seq("read"), (HISTORY,)),
    Headline("write_bw", _seq("write"), (HISTORY,)),
    Headline("bounced_bytes_per_gib", _not_sweep, (HISTORY,)),
    Headline("cpu_s_per_gib", _page_qd1, (HISTORY,)),
    Headline("bounced_bytes_per_gib", _page_qd1, ("bounced",)),
    Headline("bounce_submit_us_p50", None, (HISTORY, "cost"), "submit p50"),
    Headline("bounce_endio_us_p50", None, (HISTORY, "cost"), "completion p50"),
    Headline("read_lat_p99_us", _rand_page("read"), ("latency",), "read p99"),
    Headline("write_lat_p99_us", _rand_page("write"), ("latency",), "write p99"),
    Headline("integrity_bad_blocks", None, (HISTORY, "integrity")),
    Headline("bounce_copied_bytes_per_gib", _page_qd1, ("bounced-counted",)),
    Headline("bounce_us_per_bounce", _page_qd1, ("cost-counted",), "all"),
    Headline("bounce_copy_us_per_bounce", _page_qd1, ("cost-counted",), "copy"),
    Headline("bounce_pages_peak", J.is_writeback, ("memory",), "bounce pages, peak"),
    Headline("write_bw", J.is_writeback, ("memory",), "writeback"),
    Headline("read_lat_p99_us", J.is_writeback, ("memory",), "read p99"),
    Headline("psi_some_us_per_s", J.is_writeback, ("memory",), "PSI some"),
    Headline("bounce_ns_per_byte", _sweep_ends, (HISTORY, "per-byte")),
]


def headline_rows(page):
    """The Headline rows of a page, in registry order."""
    return [h for h in HEADLINES if page in h.pages]


def headlines(page):
    """The metrics a page leads with, in registry order, each once."""
    return list(dict.fromkeys(h.metric for h in headline_rows(page)))


def is_headline(metric, job, pages):
    """Whether metric of job heads a page (pages: one, or any of a list)."""
    pages = {pages} if isinstance(pages, str) else set(pages)
    return any(h.metric == metric and pages & set(h.pages) and (h.jobs is None or h.jobs(job))
               for h in HEADLINES)


def selected(flag):
    """The metrics that carry flag, in registry order."""
    return tuple(k for k, m in METRICS.items() if flag in m.flags)


def min_effect(metric, overrides=None, pressure=None):
    """The smallest effect of interest of a metric in % (overrides: {metric or "*": pct},
    bench/analyze --min-effect); under pressure PRESSURE_MIN_EFFECT_PCT."""
    overrides = overrides or {}
    for key in (metric, "*"):
        if key in overrides:
            return float(overrides[key])
    if pressure not in (None, "", NO_PRESSURE):
        return PRESSURE_MIN_EFFECT_PCT
    return METRICS[metric].min_effect_pct if metric in METRICS else MIN_EFFECT_PCT[LEVEL]


# fio's percentile keys (clat and lat), as fio 3.33 writes them in its JSON.
PERCENTILE_KEYS = dict(_PCTS)

# Metrics that only exist where the kernel counts bounces.
BOUNCE_METRICS = ("bounces", "bounced_bytes_per_gib")


def primary_metrics(job, present):
    """{slot: metric} of a job's primary metrics among the metrics present.
    {d}: the direction the job is about, its name's, else what it measured
    (a write job that verifies also reads)."""
    present = set(present)
    dirs = [d for d in _DIRS if f"{d}_iops" in present]
    d = next((d for d in J.directions(job) if d in dirs),
             "write" if "write" in dirs else (dirs[0] if dirs else "read"))
    out = {}
    for slot, rule, metric in PRIMARY:
        m = metric.format(d=d)
        if slot not in out and m in present and (rule is None or rule(job)):
            out[slot] = m
    return out


def unit(metric):
    return METRICS[metric].unit if metric in METRICS else ""


def kind(metric):
    return METRICS[metric].kind if metric in METRICS else LEVEL


def label(metric):
    return METRICS[metric].label if metric in METRICS else metric


def order(metric):
    """Sort key: the registry order, unknown metrics last."""
    keys = list(METRICS)
    return keys.index(metric) if metric in METRICS else len(keys)

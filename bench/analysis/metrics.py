# SPDX-License-Identifier: GPL-2.0
"""The metric registry: every metric the lab reports, once, with its unit,
which way is "better", its flags and its smallest effect of interest; and
the headline registry: which metrics of which jobs each page leads with.

One table so that tidy.py (which produces them), stats.py (which words the
verdicts), report.py and plots.py (which select and label them) never
disagree: their selections are selected(FLAG), not lists of their own;
the report's headline table, the history's figures and --check, and the
across-versions tables ask headlines(PAGE) and is_headline().
"""
from typing import NamedTuple

from lab import jobname as J
from lab.labconf import NO_PRESSURE
from . import insnprof as X

# kind: "throughput" (higher is faster), "latency" (lower is faster),
# "cost" (lower is cheaper: CPU or time spent per unit of work) or "level"
# (no better/worse: only higher/lower).
THROUGHPUT, LATENCY, COST, LEVEL = "throughput", "latency", "cost", "level"

# Flags a metric can carry (the selections below are derived from them):
#   primary   named by a PRIMARY rule: a BH family per question, the first screen
#   ratio     tidy.py writes its within-boot ratio (candidate / control)
#   plot      bar figures per variant
# (the headlines are HEADLINES, below)
FLAGS = ("primary", "ratio", "plot")
# The smallest effect of interest, % of |B/A - 1|, per kind (a metric may
# set its own): a significant change below it is "negligible".
MIN_EFFECT_PCT = {THROUGHPUT: 1.0, LATENCY: 1.0, COST: 1.0, LEVEL: 1.0}
# Rows under a memory pressure level, and the reclaim counters: reclaim is
# chaotic, each seed one trajectory; a 10 % change of writeback bandwidth
# or of reclaim is what a user would notice.
PRESSURE_MIN_EFFECT_PCT = 10.0


class Metric(NamedTuple):
    unit: str
    kind: str
    label: str
    flags: frozenset
    min_effect_pct: float


METRICS = {}


def _add(key, unit, kind, label, *flags, min_effect=None):
    """Register one metric; a key defined twice is an error, never a
    silent override (the second definition used to win)."""
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
    _add(f"{_d}_iops", "IO/s", THROUGHPUT, f"{_d} IOPS",
         "primary", "ratio", "plot")
    _add(f"{_d}_bw", "B/s", THROUGHPUT, f"{_d} bandwidth", "primary")
    # a job offered a steady rate (fio rate_iops): did it keep up
    _add(f"{_d}_iops_offered_pct", "%", LEVEL, f"{_d} IOPS, % of the rate offered (rate_iops)")
    # and how many of its I/Os missed a deadline: a 4 KiB read takes
    # ~150 us unloaded, so one of 1 ms or more waited on something
    _add(f"{_d}_late_1ms_pct", "%", LATENCY, f"{_d} I/Os of 1 ms or more, % (a steady {_d}er's)")
    # lat: the whole I/O, submission to completion (fio lat_ns; its
    # percentiles need lat_percentiles=1 in the job). On an in-guest disk
    # at QD1 libaio completes the I/O inside io_submit, so the bounce lands
    # in slat and clat misses it: lat is the one latency that means the
    # same on every kernel and disk. slat and clat stay, exploratory (clat
    # p99 is the latency tail of runs from before lat).
    _add(f"{_d}_lat_mean_us", "µs", LATENCY, f"{_d} latency (submission to completion), mean",
         *(("primary",) if _d == "read" else ()))
    _add(f"{_d}_slat_mean_us", "µs", LATENCY, f"{_d} submission latency, mean")
    _add(f"{_d}_clat_mean_us", "µs", LATENCY, f"{_d} completion latency, mean")
    for _p, _ in _PCTS:
        _add(f"{_d}_lat_{_p}_us", "µs", LATENCY,
             f"{_d} latency (submission to completion), {_p}",
             *(("primary", "ratio") if _p == "p99" else ("ratio",) if _p == "p50" else ()))
        _add(f"{_d}_clat_{_p}_us", "µs", LATENCY, f"{_d} completion latency, {_p}",
             *(("primary",) if _p == "p99" else ()))
_add("cpu_usr_pct", "%", LEVEL, "fio user CPU")
_add("cpu_sys_pct", "%", LEVEL, "fio system CPU")
_add("ctx_switches", "switches", LEVEL, "fio context switches")
_add("bounces", "bios", LEVEL, "bounced bios (block_bio_bounce)")
_add("bounced_bytes_per_gib", "B/GiB", LEVEL, "bounced bytes per GiB moved")
_add("bounce_peak_kb", "kB", LEVEL, "peak Bounce: (meminfo)")
_add("lowfree_min_kb", "kB", LEVEL, "minimum LowFree (meminfo)", "primary")
_add("highfree_min_kb", "kB", LEVEL, "minimum HighFree (meminfo)")
_add("bounce_gauge_pages_peak", "pages", LEVEL, "bounce pages in use, sampled peak (Bounce:)")
_add("bounce_gauge_pages_mean", "pages", LEVEL, "bounce pages in use, sampled mean (Bounce:)")
_add("cpu_s_per_gib", "s/GiB", COST,
     "guest CPU (sys+irq+softirq) per GiB moved (on an exact clock: counted kernel instructions)",
     "primary", "ratio")
# The time budget of one I/O (monitors/proc.py): its wall time (1 / IOPS)
# and the tick-sampled CPU states of /proc/stat per I/O (insnbudget.py
# says how far they are off the count).
_add("time_wall_us_per_io", "µs", COST, "wall time per I/O (1 / IOPS)")
_add("time_user_us_per_io", "µs", COST, "user CPU per I/O (/proc/stat user+nice)")
_add("time_sys_us_per_io", "µs", COST, "system CPU per I/O (/proc/stat system)")
_add("time_irq_us_per_io", "µs", COST, "irq and softirq CPU per I/O (/proc/stat)")
_add("time_idle_us_per_io", "µs", COST, "idle time per I/O (/proc/stat idle+iowait)")
# The exact budget of one I/O on an exact clock (insnprof.py): the
# plugin's instruction counts times the clock's ns per instruction.
_add("insn_window_us_per_io", "µs", COST, "time per I/O over the counted window (guest clock)")
_add("insn_user_us_per_io", "µs", COST, "user instructions per I/O, as time (exact)")
_add("insn_kernel_us_per_io", "µs", COST, "kernel instructions per I/O, as time (exact)")
_add("insn_idle_us_per_io", "µs", COST, "idle time per I/O (window less instructions, exact)")
_add("insn_bounces_per_io", "bios", LEVEL, "bounced bios per I/O (calls of the bounce completions)")
for _p in X.PART_NAMES:
    _add(X.metric_key(_p), "µs", COST, f"kernel time per I/O in {_p} (exact)")
_add("insn_instructions_per_io", "insns", COST, "instructions per I/O, user and kernel (exact)")
_add("insn_copy_iters_per_io", "iterations", COST, "rep movs iterations per I/O (exact)")
_add("insn_copy_bytes_per_io", "B", COST, "bytes moved by rep movs per I/O (exact)")
_add("bounce_submit_us_p50", "µs", COST, "bounce at submit per bounced bio, p50")
_add("bounce_submit_us_p99", "µs", COST, "bounce at submit per bounced bio, p99")
_add("bounce_endio_us_p50", "µs", COST, "bounce at completion per bounced bio, p50")
_add("bounce_endio_us_p99", "µs", COST, "bounce at completion per bounced bio, p99")
_add("bounce_us_per_gib", "µs/GiB", COST, "time in bounce functions per GiB moved")
_add("integrity_written_blocks", "blocks", LEVEL, "blocks written (integrity job)")
_add("integrity_checked_blocks", "blocks", LEVEL, "blocks checked for integrity")
_add("integrity_bad_blocks", "blocks", LEVEL, "blocks that failed the integrity check")
_add("allocstall", "stalls", LEVEL, "allocstall_* over the job")
_add("pgscan", "pages", LEVEL, "pgscan_kswapd + pgscan_direct over the job")
# PSI over fio's own window (labmon's samples): what the job itself stalled
_add("psi_some_us", "µs", LEVEL, "PSI memory some total over the job (fio's window)")
_add("psi_full_us", "µs", LEVEL, "PSI memory full total over the job (fio's window)")
_add("bounce_pages_peak", "pages", LEVEL, "bounce pages in flight, peak (exact)")
_add("bounce_pages_mean", "pages", LEVEL, "bounce pages in flight, time-weighted mean (exact)")
_add("bounce_lowmem_peak_kib", "KiB", LEVEL, "lowmem held by bounce pages, peak (exact)")
_add("bounce_pages_taken", "pages", LEVEL, "bounce pages taken over the job")
_add("bounce_pages_per_io", "pages", LEVEL, "bounce pages taken per I/O (exact)")
# tidy.py, on the within-boot pseudo-disk "A/B", counted: A's
# instructions per I/O less B's in the same boot (the lab's instruments
# left out), per byte of one I/O, per bounce; the bytes the bounce copied
_add("bounce_ns_per_byte", "ns/B", COST,
     "bounce's added time per byte, counted (candidate less control disk, same boot)")
_add("bounce_us_per_bounce", "µs", COST,
     "bounce's added time per bounced bio, counted (candidate less control disk, same boot)")
_add("bounce_copy_us_per_bounce", "µs", COST,
     "bounce's copy per bounced bio, counted (candidate less control disk, same boot)")
_add("bounce_copied_bytes_per_gib", "B/GiB", LEVEL,
     "bytes the bounce copied per GiB moved, counted (candidate less control disk)")
_add("bounce_alloc_us_per_page", "µs", COST, "time in mempool_alloc per bounce page")
_add("bounce_alloc_max_us", "µs", LATENCY, "longest mempool_alloc for a bounce page")
_add("bounce_reserve_used_pages", "pages", LEVEL, "bounce pool reserve used, most at once")
_add("bounce_pool_kib", "KiB", LEVEL, "bounce pool reserve (standing lowmem)")
_add("pgsteal", "pages", LEVEL, "pgsteal_kswapd + pgsteal_direct over the job")
_add("hog_cpu_s", "s", LEVEL, "pressure hog CPU during the job (must be ~0)")
# The dose a pressure job started from (guest/init's dose file): LowFree
# and HighFree once both hogs froze, and the kernel's own min watermarks
# of both zones.
_add("dose_lowfree_kb", "kB", LEVEL, "dose: LowFree at the job's start (lowhog frozen)")
_add("dose_highfree_kb", "kB", LEVEL, "dose: HighFree at the job's start")
_add("dose_normal_min_kb", "kB", LEVEL, "dose: the Normal zone's min watermark")
_add("dose_highmem_min_kb", "kB", LEVEL, "dose: the HighMem zone's min watermark")
# How far the dose was off its target (tidy.dose_check): a job off its
# band in either zone is excluded from the verdicts.
_add("dose_highfree_off_kb", "kB", LEVEL, "dose: HighFree less its target")
_add("dose_lowfree_off_kb", "kB", LEVEL, "dose: LowFree less its target")
_add("oom_kills", "kills", LEVEL, "OOM kills during the job")

# Pressure counters are totals over a job, so a slower job shows "more
# pressure": tidy.py also writes each as a rate per second of job time
# (NAME_per_s) and per GiB moved (NAME_per_gib); the verdicts use only the
# rates (the totals stay in summary.csv).
PRESSURE_TOTALS = ("allocstall", "pgscan", "pgsteal", "psi_some_us", "psi_full_us")
for _m in PRESSURE_TOTALS:
    _u, _l = METRICS[_m].unit, METRICS[_m].label
    _l = _l.replace(" over the job", "").replace(" total", "")
    _add(f"{_m}_per_s", f"{_u}/s", LEVEL, f"{_l} per second of job time",
         min_effect=PRESSURE_MIN_EFFECT_PCT)
    _add(f"{_m}_per_gib", f"{_u}/GiB", LEVEL, f"{_l} per GiB moved",
         min_effect=PRESSURE_MIN_EFFECT_PCT)
    _add(f"{_m}_per_mib_written", f"{_u}/MiB", LEVEL, f"{_l} per MiB written",
         *(("primary",) if _m in ("pgsteal", "psi_some_us") else ()),
         min_effect=PRESSURE_MIN_EFFECT_PCT)
TOTALS = frozenset(PRESSURE_TOTALS)


def _not_pressure(job):
    return not J.is_pressure(job)


# The sweep asks what a bounce costs per I/O, page and byte: its
# throughput and CPU. Its jobs are bounded by size (96 I/Os at 256 KiB),
# so a p99 is one of their few slowest I/Os, and the seed alone moved it
# by 4-7 % (a default run's split halves): exploratory there.
def _not_sweep(job):
    return not J.is_sweep(job)


# Primary metrics: per job one throughput, one latency tail, the CPU cost
# per GiB and the lowmem floor. Their verdicts make the headline and share,
# per question (stats.adjust), one false-discovery-rate family; every
# other metric is exploratory.
# (slot, which jobs (a rule of the job's name, lab.jobname) or None for any
# job, metric; {d} = the job's direction). The first row of a slot whose
# rule takes the job and whose metric the cell has wins.
#
# The pressure jobs (pressure-*: the writeback, the scattered rewrites
# that sync, the direct writer, each beside a reader) have their own: the
# writer's bandwidth, the reader's mean latency and its tail, the pages
# reclaimed and the time stalled on memory (PSI over fio's own window) per
# MiB written. Each was chosen by its spread between boots of one kernel
# with the dose held, in --set writeback at 12 reps (run 20261206-060820,
# FINDINGS.md): MDE 1.4 % bandwidth and reclaim, 5.5 % reader mean, 6.5 %
# p99, 4.6 % PSI. The share of the reader's I/Os of 1 ms or more stays
# exploratory: 0.1-0.2 % of its reads, a handful, MDE 103 %. (Before
# scsi_debug copied a command in one walk, 772b943, the mean spread 0.3 in
# log and PSI 0.33-0.47 a writeback: the share replaced the mean, PSI
# was said, not tested.) Whether the reader kept
# up with its offered rate is said (memory.py), not tested. Its CPU per
# GiB is not one of them (the CPU never idles there, so it says what the
# bandwidth says), nor is the sampled LowFree floor (the dose sets it;
# the bounce pages' own footprint is counted exactly), and allocation
# stalls and pages scanned stay exploratory: bursts whose count spreads
# widely between trajectories of one kernel.
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


# --- The headline registry ------------------------------------------------
# Which metric of which jobs each page leads with. jobs: a rule of the
# job's name (lab.jobname), None for every job that has the metric;
# pages:
#   REPORT    the run report's headline table (headline.py; the jobs are
#             its question's, so the rows say None)
#   HISTORY   a figure over the runs (history/figures.py), and a move
#             that bench/history --check calls a headline
#   a group of HEADLINE_GROUPS: a column of that group's table across
#             kernel versions, and its figure (versions.py); short
#             names the column
REPORT, HISTORY = "report", "history"


class Headline(NamedTuple):
    metric: str
    jobs: object
    pages: tuple
    short: str = ""


def _page_qd1(job):
    """The 4 KiB QD1 jobs (not their probed twins), but the sweep's."""
    return _not_sweep(job) and J.is_page_qd1(job)


def _rand_page(direction, twin=False):
    """The 4 KiB QD1 random jobs of a direction, but the sweep's; twin:
    with their probed twins."""
    def rule(job):
        return _not_sweep(job) and J.is_io(job, "rand", direction, J.PAGE_BYTES, 1,
                                           None if twin else "")
    return rule


def _seq(direction):
    """The sequential jobs of a direction, but the sweep's."""
    def rule(job):
        return _not_sweep(job) and J.access(job) == ("seq", direction)
    return rule


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
    # From the count (tidy.py COUNTED_COSTS), for every kernel that
    # bounces, reads and writes alike: each kernel's bounced disk less its
    # control in one boot, the lab's instruments left out (a probed job
    # times itself; a job without a twin keeps the hist trigger)
    ("bounced-counted", "Bytes the bounce copied per GiB moved, counted"),
    ("cost-counted", "Cost per bounced bio, counted (candidate less control, same boot)"),
    # writeback under memory pressure (the pressure jobs' cells, per
    # level): the bounce pages a kernel holds at most (exact; "not
    # measured" where there is no bounce code), the writer's bandwidth,
    # the steady reader's tail and the share of time stalled on memory
    ("memory", "Writeback under memory pressure"),
    # the I/O-size sweep's ends: what a bounce adds per byte at 4 KiB and
    # at 1 MiB
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
    # the I/O-size sweep's cost per byte at its two ends (tidy.py)
    Headline("bounce_ns_per_byte", _sweep_ends, (HISTORY, "per-byte")),
]


def headline_rows(page):
    """The Headline rows of a page, in registry order."""
    return [h for h in HEADLINES if page in h.pages]


def headlines(page):
    """The metrics a page leads with, in registry order, each once."""
    return list(dict.fromkeys(h.metric for h in headline_rows(page)))


def is_headline(metric, job, pages):
    """Whether metric of job heads a page (pages: one, or a list of them:
    of any)."""
    pages = {pages} if isinstance(pages, str) else set(pages)
    return any(h.metric == metric and pages & set(h.pages) and (h.jobs is None or h.jobs(job))
               for h in HEADLINES)


def selected(flag):
    """The metrics that carry flag, in registry order."""
    return tuple(k for k, m in METRICS.items() if flag in m.flags)


def min_effect(metric, overrides=None, pressure=None):
    """The smallest effect of interest of a metric in % (overrides:
    {metric or "*": pct}, from bench/analyze --min-effect), in a row
    under pressure (a level other than none) PRESSURE_MIN_EFFECT_PCT."""
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


def job_direction(job, present):
    """"read" or "write": the direction a job is about (its name, else the
    direction it measured; a write job that verifies also reads)."""
    dirs = [d for d in _DIRS if f"{d}_iops" in present]
    for d in J.directions(job):
        if d in dirs:
            return d
    return "write" if "write" in dirs else (dirs[0] if dirs else "read")


def primary_metrics(job, present):
    """{slot: metric} of a job's primary metrics among the metrics present."""
    present = set(present)
    d = job_direction(job, present)
    out = {}
    for slot, rule, metric in PRIMARY:
        m = metric.format(d=d)
        if slot in out or m not in present:
            continue
        if rule is None or rule(job):
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

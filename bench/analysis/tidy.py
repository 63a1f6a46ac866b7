# SPDX-License-Identifier: GPL-2.0
"""A raw run folder -> a Run (load_run) with its tidy tables:

  tidy         one row per (variant, disk, job, pressure, rep, boot, metric);
               a metric the kernel does not expose has no row, never a 0
  jobs         one row per job folder, measured or not, with its state
  percentiles  fio clat percentile curves
  excluded     failed boots, skipped and failed jobs, jobs off their dose

A job's metrics are fio's and its monitors' (monitors/ runs the readers).
The within-boot pseudo-disk "A/B" of a bounce candidate and its control
gets their ratios and, counted, what the bounce adds (_within_boot_costs).
"""
import os
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import cells as C
from . import determinism as D
from . import integrity as I
from lab import jobname as J
from lab import labconf as L
from . import metrics as M
from . import monitors as MON
from . import rawfiles as R
from . import roles as ROLES
from .monitors import GIB, USER_HZ

MIB = 1 << 20
# a pressure job's dose file (rawfiles.read_dose): its metrics are "dose_" + these,
# and how far each zone was off its target (dose_check)
DOSE_KEYS = ("lowfree_kb", "highfree_kb", "normal_min_kb", "highmem_min_kb")
DOSE_OFFSETS = ("dose_highfree_off_kb", "dose_lowfree_off_kb")
# a dose's band in either zone where lab.conf has no dose_band_kb (older runs)
DOSE_BAND_KB = 512

KEY_COLUMNS = ["variant", "disk", "job", "pressure", "rep", "boot"]
TIDY_COLUMNS = KEY_COLUMNS + ["metric", "value", "unit"]
EXCLUDED_COLUMNS = ["kind", "boot", "variant", "disk", "pressure", "rep", "job", "reason", "dir"]
# meta.json's facts of the run (bench/upgrade-run writes them into older runs)
UPGRADED = ("roles", "disk_roles", "disk_clocks", "guest_bounds")


class RunError(Exception):
    """The folder is not a usable run (missing, empty, not upgraded)."""


@dataclass
class Run:
    path: str
    meta: dict
    boots: pd.DataFrame     # boots.tsv, with each boot's kernel and "seed" (_boot_seed)
    jobs: pd.DataFrame
    tidy: pd.DataFrame
    percentiles: pd.DataFrame
    excluded: pd.DataFrame
    warnings: list = field(default_factory=list)
    matrix: object = None       # matrix.tsv of the runner, when there is one
    # The facts every module asks of a run, resolved once (resolve()).
    lab: dict = None            # its lab.conf, parsed (labconf.parse)
    kernels: dict = field(default_factory=dict)     # label -> kernel id
    roles: dict = field(default_factory=dict)       # label -> baseline, bounce, removed
    disk_roles: dict = field(default_factory=dict)  # disk -> bounce-candidate, control
    disk_clocks: dict = field(default_factory=dict)  # disk (and A/B) -> its clock
    exact_disks: frozenset = frozenset()    # those whose numbers repeat (labconf.repeats)
    performance_jobs: frozenset = frozenset()   # class performance (probed twins too)
    bound_pct: float = field(default_factory=D.lab_bound_pct)  # the determinism bound, %
    guest_bounds: dict = field(default_factory=dict)    # meta.json's, {} unrecorded
    labels: list = field(default_factory=list)      # in pair order (roles.PAIR_ORDER)
    candidate_disks: list = field(default_factory=list)  # bounce candidates that ran
    pressure_jobs: list = field(default_factory=list)    # meta.json's, [] without pressure
    levels: list = field(default_factory=list)      # pressures, mildest first
    level_mib: dict = field(default_factory=dict)   # level -> its lab.conf MIB, nan unknown
    shapes: dict = field(default_factory=dict)      # job -> jobname.Shape, from fio's options

    @property
    def run_id(self):
        return os.path.basename(os.path.normpath(self.path))

    @property
    def calm(self):
        """The tidy rows measured without memory pressure."""
        return self.tidy[self.tidy["pressure"] == L.NO_PRESSURE]

    @property
    def question_jobs(self):
        """The unprobed performance jobs: what verdicts and figures are
        about (integrity jobs measure data, probed twins the probes)."""
        return {j for j in self.performance_jobs if not C.is_probed(j)}

    def in_pair_order(self, labels):
        """labels (any iterable) sorted as self.labels; others last."""
        return [v for v in self.labels if v in labels] + sorted(set(labels) - set(self.labels))

    def labels_of(self, *roles):
        """The labels of these roles, in pair order."""
        return [v for r in roles for v in self.labels if self.roles.get(v) == r]

    def sweep_shape(self, job):
        """The Shape of a job of the I/O-size sweep (its probed twin not included), else None."""
        s = self.shapes.get(job)
        return s if s is not None and J.is_sweep(job) and not s.rest and s.pattern else None


def _boot_seed(b, bdir):
    """The seed a boot ran with (plan BL_SEED): boots.tsv's "seed", else the
    plan in its results, else its rep (before copies had seeds of their own)."""
    s = str(getattr(b, "seed", "") or "")
    if not s.isdigit() and bdir:
        m = re.search(r"^BL_SEED=(\d+)$", R.read_text(os.path.join(bdir, "guest", "plan")) or "",
                      re.M)
        s = m.group(1) if m else ""
    return int(s) if s.isdigit() else b.rep


def _job_name(jobdir_name, what):
    """(disk, job) from the "what" file ("usb-pio lat-randread-4k-qd1.fio",
    "... probe": a probed twin); ("unknown", the folder's name) without."""
    parts = (what or "").split()
    if len(parts) < 2:
        return "unknown", jobdir_name
    # a probed twin is a cell of its own: the probes cost time
    return parts[0], parts[1].removesuffix(".fio") + (C.PROBED if parts[2:3] == ["probe"] else "")


def dose_check(dose, lab, level):
    """({zone: kB off its target} of "highfree"/"lowfree", why the job is off band or "") of a
    dose (rawfiles.read_dose) under lab's level. A zone is checked where it was held, against
    the target line, else the level's (bench/README.md, "Memory pressure"; LowFree: lowhog's
    own target for a level of "-")."""
    lvl = ((lab or {}).get("pressure") or {}).get(level, {})
    hogs, tgt = dose["hogs"], dict(dose["target"])
    if "lowhog" not in hogs:
        tgt.pop("lowfree_kb", None)
    elif "lowfree_kb" not in tgt:
        mib = lvl.get("mib", "")
        tgt["lowfree_kb"] = int(mib) * 1024 if mib.isdigit() else hogs["lowhog"]["target_kb"]
    hf_mb = str(L.default(lab, "highfree_target_mb", ""))
    # HighFree is held where the target line names it (0: not held), or,
    # in a file from before that line, under a "full" level
    if not (tgt.get("highfree_kb") or (not dose["target"] and lvl.get("kind") == "full")):
        tgt.pop("highfree_kb", None)
    elif "highfree_kb" not in tgt and hf_mb.isdigit() and "highmem_high_kb" in dose:
        tgt["highfree_kb"] = dose["highmem_high_kb"] + int(hf_mb) * 1024
    band = int(L.default(lab, "dose_band_kb", DOSE_BAND_KB))
    off, why = {}, []
    for zone, name in (("highfree", "HighFree"), ("lowfree", "LowFree")):
        t, v = tgt.get(f"{zone}_kb"), dose.get(f"{zone}_kb")
        if t is None or v is None:
            continue
        off[zone] = v - t
        if abs(v - t) > band:
            why.append(f"{name} {v:,} kB, {abs(v - t):,} kB {'under' if v < t else 'over'} "
                       f"its target {t:,} kB (band ±{band:,} kB)")
    # a hog "unsettled" gave up on its own, tighter band: said where off band
    why += [f"{h} unsettled" for h, x in hogs.items() if why and not x["settled"]]
    return off, ("dose off band: " + "; ".join(why) if why else "")


def job_metrics(jdir, boot=None, rel=None, pressure=None):
    """(rows [(metric, value)], info, curves [(direction, percentile, clat_us)]) of one
    measured job folder (or its monitors.Job): fio's metrics, then the monitor readers'. info:
    its job-table columns and "warnings". boot and rel as monitors.Job's (no boot: no lab.conf,
    so nothing only an exact clock measures); pressure the job's level (info "dose_off": why
    off band)."""
    job = jdir if isinstance(jdir, MON.Job) else MON.Job(jdir, boot, rel)
    fio, info = job.fio, job.info
    rows, curves = [], []
    for d, rec in job.directions.items():
        rows += [(f"{d}_iops", rec["iops"]), (f"{d}_bw", rec["bw_bytes"])]
        if rec["rate_iops"]:
            rows.append((f"{d}_iops_offered_pct", 100 * rec["iops"] / rec["rate_iops"]))
        if rec["late_pct"] is not None:
            rows.append((f"{d}_late_1ms_pct", rec["late_pct"]))
        rows += [(f"{d}_{kind}_mean_us", rec[f"{kind}_mean_ns"] / 1000.0)
                 for kind in ("slat", "clat", "lat") if rec[f"{kind}_mean_ns"] is not None]
        for kind, pcts in (("clat", rec["percentiles"]), ("lat", rec["lat_percentiles"])):
            rows += [(f"{d}_{kind}_{name}_us", pcts[float(key)] / 1000.0)
                     for name, key in M.PERCENTILE_KEYS.items() if float(key) in (pcts or {})]
        curves += [(d, p, v / 1000.0) for p, v in sorted((rec["percentiles"] or {}).items())]
    rows += list(R.fio_cpu(fio).items())

    # fio's IOPS add up over a job's processes: questions/usbpio.py needs how many
    info.update(job_class=job.text("class") or "performance", numjobs=R.fio_numjobs(fio),
                **R.fio_shape(fio))
    rows += MON.read_job(job)
    res = I.job_result(fio, job.text("fio.stderr")) if info["job_class"] == "integrity" else None
    if res:
        rows += [(f"integrity_{k}_blocks", res[k]) for k in ("written", "checked", "bad")]
        info["first_bad"] = res["first_bad"]

    # the hog holds, it must not work: its CPU beside the job's result
    hog = (job.text("hog-ticks") or "").split()
    if len(hog) == 2 and all(x.isdigit() for x in hog):
        rows.append(("hog_cpu_s", (int(hog[1]) - int(hog[0])) / USER_HZ))
    # the dose the job started from (pressure boots), as the kernel had it
    dose = R.read_dose(job.path("dose"))
    if dose:
        rows += [(f"dose_{key}", dose[key]) for key in DOSE_KEYS if key in dose]
        off, info["dose_off"] = dose_check(dose, job.boot.lab, pressure)
        if not info["dose_off"] and not all(h["settled"] for h in dose["hogs"].values()):
            job.warn("a hog froze unsettled (it did not hold its own band twice in a "
                     "row); the dose the job started from is within the level's band")
        rows += [(f"dose_{zone}_off_kb", kb) for zone, kb in off.items()]
    kills = job.text("oom-kills")
    if kills is not None:
        rows.append(("oom_kills", len(kills.splitlines())))
    info.update({f"{e}_s": R.read_uptime(job.path(f"{e}-uptime")) for e in ("start", "end")})
    rows += _pressure_rates(rows, job)
    info["warnings"] = job.warnings
    return rows, info, curves


def _pressure_rates(rows, job):
    """Pressure totals per second of job time, per GiB moved and per MiB
    written (a writer's own work: a faster reader beside it does not swell it)."""
    start, end = job.info["start_s"], job.info["end_s"]
    secs = end - start if start is not None and end is not None else 0
    written = job.directions.get("write", {}).get("io_bytes", 0) or 0
    per = (("per_s", secs, 1), ("per_gib", (job.gib or 0) * GIB, GIB),
           ("per_mib_written", written, MIB))
    totals = {m: v for m, v in rows if m in M.TOTALS}
    return [(f"{m}_{name}", v / by * scale) for m, v in totals.items()
            for name, by, scale in per if by > 0]


def job_state(jdir):
    """("ok"|"skipped"|"failed", reason) of a job folder (or its monitors.Job)."""
    job = jdir if isinstance(jdir, MON.Job) else MON.Job(jdir)
    text, fio = job.text, job.fio
    skipped = text("skipped")
    if skipped is not None:
        return "skipped", skipped or "skipped (no reason given)"
    # the OOM killer took one of the lab's own processes: not a result
    kills = text("oom-kills")
    if kills:
        return "failed", f"the OOM killer struck: {kills.splitlines()[0]}"
    rc = text("fio.rc")
    if rc is None:
        return "failed", "no fio.rc: the job did not finish"
    # an integrity job's verify errors are its result (integrity.py)
    if text("class") == "integrity" and fio is not None:
        return "ok", ""
    if rc != "0":
        err = (text("fio.stderr") or "").splitlines()
        return "failed", f"fio exited {rc}" + (f": {err[0]}" if err else "")
    return ("failed", "fio.json missing or not JSON") if fio is None else ("ok", "")


def _within_boot_ratios(df, pairs):
    """value = A / B of the "ratio" metrics: the boot's speed cancels. Not under pressure: there
    the two jobs are two trajectories of a chaotic reclaim, whose ratio cancels nothing."""
    df = df[df["metric"].isin(M.selected("ratio")) & (df["pressure"] == "none")]
    out = []
    for a, b in pairs:
        m = df[df["disk"] == a].merge(df[df["disk"] == b], suffixes=("_a", "_b"),
                                      on=["variant", "job", "pressure", "rep", "boot", "metric"])
        m = m[m["value_b"] > 0]
        out += m.assign(disk=L.ratio_disk(a, b), value=m["value_a"] / m["value_b"],
                        unit="ratio")[TIDY_COLUMNS].to_dict("records")
    return out


# What the bounce adds, counted: the candidate's instructions per I/O less
# its control's in one boot, less the lab's own instruments
_COST_INPUTS = ("insn_user_us_per_io", "insn_kernel_us_per_io", "insn_part_instruments_us_per_io",
                "insn_part_copy_us_per_io", "insn_copy_bytes_per_io", "insn_bounces_per_io",
                "read_bw", "read_iops", "write_bw", "write_iops")


def _within_boot_costs(df, pairs):
    """What the bounce adds, counted: its time per byte of one I/O (bandwidth / IOPS) and per
    bounce, its copy per bounce, the bytes it copied per GiB moved. Only for a job that moved data
    one way (a mixed job's I/Os differ in size); per bounce only where the candidate bounced."""
    keys = ["variant", "job", "pressure", "rep", "boot"]
    df = df[df["metric"].isin(_COST_INPUTS)]
    if df.empty:
        return []
    # a key the control did not run gives NaN, and so no row
    wide = df.pivot_table(index=keys, columns=["disk", "metric"], values="value", aggfunc="first")
    have = set(wide.columns.get_level_values("disk"))
    out = []
    for a, b in pairs:
        if a not in have or b not in have:
            continue
        ca, cb = (wide[x].reindex(columns=_COST_INPUTS) for x in (a, b))
        for key, ra in ca.iterrows():
            d = ra - cb.loc[key]
            sizes = [ra[f"{x}_bw"] / ra[f"{x}_iops"] for x in ("read", "write")
                     if ra[f"{x}_iops"] > 0]
            if len(sizes) != 1 or not np.isfinite(sizes[0]) or sizes[0] <= 0:
                continue
            cost = (d["insn_user_us_per_io"] + d["insn_kernel_us_per_io"]
                    - d["insn_part_instruments_us_per_io"])
            bounces = ra["insn_bounces_per_io"]
            vals = {"bounce_ns_per_byte": cost * 1000 / sizes[0],
                    "bounce_copied_bytes_per_gib": d["insn_copy_bytes_per_io"] / sizes[0] * GIB}
            if np.isfinite(bounces) and bounces > 0:
                vals["bounce_us_per_bounce"] = cost / bounces
                vals["bounce_copy_us_per_bounce"] = d["insn_part_copy_us_per_io"] / bounces
            out += [dict(zip(keys, key), disk=L.ratio_disk(a, b), metric=m, value=float(v),
                         unit=M.unit(m)) for m, v in vals.items() if np.isfinite(v)]
    return out


def _instances_averaged(rows):
    """One row per boot, disk, job and metric: a job run more than once in a boot (a pressure
    job's instances) gives their mean; the boot is the unit of every test."""
    out = {}
    for r in rows:
        k = (r["boot"], r["disk"], r["job"], r["metric"])
        out.setdefault(k, (r, []))[1].append(r["value"])
    return [dict(r, value=float(np.mean(v))) for r, v in out.values()]


def load_run(path):
    """Read a run folder. Raises RunError when there is nothing to read."""
    if not os.path.isdir(path):
        raise RunError(f"{path}: no such run folder")
    tsv = os.path.join(path, "boots.tsv")
    if not os.path.isfile(tsv):
        raise RunError(f"{path}: no boots.tsv (empty or unfinished run?)")
    boots = R.read_boots(tsv)
    if boots.empty:
        raise RunError(f"{tsv}: no boots listed")
    meta = R.read_json(os.path.join(path, "meta.json"))
    lack = [k for k in UPGRADED if not isinstance(meta.get(k), dict)]
    if lack or not os.path.isfile(os.path.join(path, "lab.conf")):
        raise RunError(f"{path}: a run from before runs kept "
                       f"{', '.join(lack or ['lab.conf'])}: upgrade it once "
                       "(bench/upgrade-run RUN_DIR)")
    matrix = R.read_matrix(os.path.join(path, "matrix.tsv"))

    tidy, jobs, curves, excluded, warnings, facts = [], [], [], [], [], []
    lab = L.load(path)
    for b in boots.itertuples(index=False):
        key = dict(variant=b.variant, pressure=b.pressure, rep=b.rep, boot=b.boot)
        bdir = os.path.join(path, b.dir) if b.dir else ""
        # what identifies a boot's kernel: one bzImage hash, one kernel (A/A)
        build = R.read_json(os.path.join(bdir, "build-info.json")) if bdir else {}
        kinfo = dict(base_variant=build.get("variant"),
                     **{k: build.get(k) for k in ("stacks", "kernel_release", "source_version")},
                     kernel_id=build.get("bzimage_sha256") or build.get("build_key"))
        facts.append(dict(seed=_boot_seed(b, bdir), **kinfo))
        bad = None
        if b.status != "ok":
            bad = b.status or "failed: no status"
        elif not os.path.isdir(bdir):
            bad = "boot folder missing"
        elif not os.path.isdir(os.path.join(bdir, "guest", "jobs")):
            bad = "the guest wrote no job results"
        if bad:
            excluded.append(dict(kind="failed boot", disk=b.disk, job="",
                                 reason=bad, dir=b.dir, **key))
            continue

        boot = MON.Boot(bdir, lab)
        clock = R.read_clocksource(boot.guest("dmesg.txt"))
        per_boot = MON.read_boot(boot)
        for name in R.listdir(boot.guest("jobs")):
            jdir = boot.guest("jobs", name)
            if not os.path.isdir(jdir):
                continue
            disk, job = _job_name(name, R.read_text(os.path.join(jdir, "what")))
            base = dict(disk=disk, job=job, **key)
            rel = os.path.relpath(jdir, path)
            jd = MON.Job(jdir, boot, rel)    # one reading of its files for both
            state, reason = job_state(jd)
            jrow = dict(device=disk, disk=disk, job=job, state=state, reason=reason, dir=rel,
                        clocksource=clock, **MON.job_columns(), start_s=np.nan, end_s=np.nan,
                        **per_boot, **key, **kinfo)
            jobs.append(jrow)
            if state == "ok":
                rows, info, curve = job_metrics(jd, pressure=b.pressure)
                warnings += info.pop("warnings")
                jrow.update({k: (np.nan if v is None else v) for k, v in info.items()})
                # each job's own dose (tidy has a boot's mean of its instances)
                jrow.update({m: dict(rows).get(m, np.nan) for m in DOSE_OFFSETS})
                # a job off its level's dose measures no level: only its dose kept
                if info.get("dose_off"):
                    state, reason = "excluded", info["dose_off"]
                    jrow.update(state=state, reason=reason)
                    rows, curve = [(m, v) for m, v in rows if m.startswith("dose_")], []
                tidy += [dict(metric=m, value=float(v), unit=M.unit(m), **base) for m, v in rows]
                curves += [dict(direction=d, percentile=p, clat_us=v, **base)
                           for d, p, v in curve]
            if state != "ok":
                excluded.append(dict(kind=f"{state} job", reason=reason, dir=rel, **base))

    tidy = _instances_averaged(tidy)
    # the pseudo-disk "A/B" of every lab.conf pair of a bounce candidate A and
    # its control B that ran the same job in one boot: ratios, counted costs
    pairs = L.control_pairs(lab)
    if pairs and tidy:
        df = pd.DataFrame(tidy)
        tidy += _within_boot_ratios(df, pairs) + _within_boot_costs(df, pairs)

    # boots planned in matrix.tsv that never reached boots.tsv: listed
    if matrix is not None:
        done = set(boots["boot"].dropna().astype(int))
        for m in matrix.itertuples(index=False):
            if pd.notna(m.boot) and int(m.boot) not in done:
                where = {c: getattr(m, c, "") for c in ("variant", "disk", "pressure")}
                excluded.append(dict(kind="boot not run", boot=m.boot, job="", dir="",
                                     rep=getattr(m, "rep", pd.NA), **where,
                                     reason="planned in matrix.tsv, not in boots.tsv"))
    incomplete = R.read_text(os.path.join(path, "INCOMPLETE"))
    if incomplete is not None:
        warnings.append(f"the run is incomplete (INCOMPLETE: {incomplete or 'no reason'})")

    clocks = {j["clocksource"] for j in jobs if j["clocksource"]}
    by_clock = {c: {int(j["boot"]) for j in jobs if j["clocksource"] == c} for c in clocks}
    if len(by_clock) > 1:
        said = "; ".join(f"{c}: boot {', '.join(map(str, sorted(b)))}"
                         for c, b in sorted(by_clock.items()))
        warnings.append(f"boots ended on different clocksources ({said}): their fio timings are "
                        "not measured alike, and throughput may shift too (fio reads the clock "
                        "around every I/O, and what a clock read costs under emulation depends "
                        "on the clocksource)")
    coarse = sorted(c for c in by_clock if "jiffies" in c)
    if coarse:
        warnings.append(f"the guest clocksource was {', '.join(coarse)}: fio latencies are "
                        "quantised to the timer tick, so latency percentiles cannot show "
                        "sub-tick differences")

    boots = boots.assign(**{k: [f[k] for f in facts] for k in facts[0]}).astype({"seed": "Int64"})
    curves = pd.DataFrame(curves, columns=KEY_COLUMNS + ["direction", "percentile", "clat_us"])
    run = Run(path=path, meta=meta, boots=boots, jobs=pd.DataFrame(jobs),
              tidy=pd.DataFrame(tidy, columns=TIDY_COLUMNS), percentiles=curves,
              excluded=pd.DataFrame(excluded, columns=EXCLUDED_COLUMNS),
              warnings=warnings, matrix=matrix)
    return resolve(run, lab)


def resolve(run, lab):
    """run with its facts (the Run fields after matrix, roles.resolve for
    the roles) from its meta.json and lab.conf."""
    meta = run.meta or {}
    run.lab = lab
    run.kernels = variant_kernels(run)
    labels = dict.fromkeys(run.boots["variant"])
    run.roles, run.disk_roles = ROLES.resolve(meta, {l: base_variant(run, l) for l in labels})
    ran = dict.fromkeys(run.jobs["disk"]) if not run.jobs.empty else {}
    disks = set(run.tidy["disk"]) | set(ran)
    run.disk_clocks = {d: L.disk_clock(meta, d) for d in disks}
    run.exact_disks = frozenset(d for d in disks if L.repeats(meta, lab, d))
    perf = (run.jobs.loc[run.jobs["job_class"] == "performance", "job"]
            if "job_class" in run.jobs else run.tidy["job"])
    run.performance_jobs = frozenset(perf)
    run.bound_pct = D.bound_pct(lab)
    run.guest_bounds = meta["guest_bounds"]
    # sorted() is stable: labels of one role stay in the order they booted
    run.labels = sorted(labels, key=lambda v: ROLES.role_rank(run.roles.get(v)))
    run.candidate_disks = [d for d in ran if not C.is_ratio(d) and
                           run.disk_roles.get(d) == ROLES.CANDIDATE]
    run.pressure_jobs = list(dict.fromkeys(str(meta.get("pressure_jobs") or "").split()))
    run.level_mib = {n: float(d["mib"]) if str(d.get("mib", "")).isdigit() else np.nan
                     for n, d in lab["pressure"].items()}
    run.levels = _levels(run)
    run.shapes = _shapes(run.jobs)
    return run


def _levels(run):
    """The pressures of a run, mildest first: none, then the largest
    LowFree target (lab.conf), unknown last."""
    def key(p):
        if p == L.NO_PRESSURE:
            return (0, 0)
        mib = run.level_mib.get(p, np.nan)
        return (1, -mib) if np.isfinite(mib) else (2, 0)
    return sorted(dict.fromkeys(run.tidy["pressure"]), key=key)


_RW = {"read": ("seq", "read"), "write": ("seq", "write"), "randread": ("rand", "read"),
       "randwrite": ("rand", "write"), "rw": ("seq", ""), "readwrite": ("seq", ""),
       "randrw": ("rand", "")}


def _shapes(jobs):
    """{job: jobname.Shape} from fio's own options (the job table's rw, bs
    and iodepth, first measured row), else from its name (jobname.shape)."""
    out = {}
    if jobs.empty:
        return out
    have = {"rw", "bs", "iodepth"} <= set(jobs.columns)
    for job, g in jobs[jobs["state"] == "ok"].groupby("job", sort=False):
        named = J.shape(job)
        rest = named.rest if named else (C.PROBED if C.is_probed(job) else "")
        r = g.iloc[0]
        if have and isinstance(r["rw"], str) and r["rw"] in _RW and pd.notna(r["bs"]) \
                and pd.notna(r["iodepth"]):
            out[job] = J.Shape(*_RW[r["rw"]], int(r["bs"]), int(r["iodepth"]), rest)
        elif named:
            out[job] = named
    return out


def exclusions(run):
    """Failed boots, skipped, failed and excluded jobs, one row each."""
    return run.excluded.copy()


def write_summary(run, path):
    """The tidy table as summary.csv."""
    df = run.tidy.assign(_order=run.tidy["metric"].map(M.order))
    df = df.sort_values(["disk", "job", "pressure", "_order", "variant", "rep", "boot"],
                        kind="stable")
    df[TIDY_COLUMNS].to_csv(path, index=False)


def kernel_title(run):
    """"Linux 6.12.118 (Debian 6.12.118-1~deb12u1)" for plot titles."""
    rel = sorted({str(k) for k in run.boots["kernel_release"].dropna()})
    src = run.meta.get("kernel_source_version")
    srcs = [str(src)] if src else sorted({str(k) for k in run.boots["source_version"].dropna()})
    text = "Linux " + ("/".join(rel) if rel else "(unknown release)")
    return text + (f" (Debian {'/'.join(srcs)})" if srcs else "")


def variant_kernels(run):
    """label -> kernel id (bzImage hash or build key), for A/A detection: build-info.json, else
    matrix.tsv's "kernel" (pre.2 -> pre), else meta.json's {"variants": {label: variant}}."""
    ids = run.boots["kernel_id"].map(lambda k: isinstance(k, str) and k != "")
    first = run.boots[ids].drop_duplicates("variant")
    out = dict(zip(first["variant"], first["kernel_id"]))
    mapping = run.meta.get("variants")
    named = mapping.items() if isinstance(mapping, dict) else ()
    for label, base in [*_matrix_kernels(run).items(), *named]:
        if isinstance(base, str):
            out.setdefault(label, "variant:" + base)
    return out


def _matrix_kernels(run):
    """label -> the kernel of its first row in matrix.tsv that names one."""
    m = run.matrix
    if m is None or not {"variant", "kernel"} <= set(m.columns):
        return {}
    first = m[m["kernel"].astype(bool)].drop_duplicates("variant")
    return dict(zip(first["variant"], first["kernel"]))


def base_variant(run, label):
    """The kernel variant a label boots (build-info "variant", else the
    matrix.tsv "kernel" column)."""
    base = ROLES.boot_value(run, label, "base_variant")
    return base if base is not None else _matrix_kernels(run).get(label, label)

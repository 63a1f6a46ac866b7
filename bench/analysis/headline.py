# SPDX-License-Identifier: GPL-2.0
"""The report's first lines: data integrity and what the bounce costs.

Every figure here is a median over the run's boots of a per-job value in
summary.csv; nothing is printed for a quantity the run did not measure.
Roles (which variant bounces, which disk is the bounce candidate and which
its control) come from meta.json, else from bench/lab.conf.
"""
import numpy as np
import pandas as pd

from . import labconf as L

MIB = 1 << 20


def _fmt(x, digits=3):
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def variant_roles(run):
    """{label: role} for the run's labels (meta.json, else lab.conf)."""
    roles = dict((run.meta or {}).get("roles") or {})
    lab = L.load(run.path)
    for label in dict.fromkeys(run.boots["variant"]):
        if label not in roles:
            base = label.split(".")[0]
            roles[label] = lab["role"].get(base, {}).get("role", "")
    return roles


def disk_roles(run):
    roles = dict((run.meta or {}).get("disk_roles") or {})
    for name, d in L.load(run.path)["disk"].items():
        roles.setdefault(name, d["role"])
    return roles


def _labels(run, role):
    return [l for l, r in variant_roles(run).items() if r == role]


def _values(run, metric, variants=None, disk=None, job=None):
    t = run.tidy
    sel = t["metric"] == metric
    if variants is not None:
        sel &= t["variant"].isin(variants)
    if disk is not None:
        sel &= t["disk"] == disk
    if job is not None:
        sel &= t["job"] == job
    return t[sel]


# -- data integrity ---------------------------------------------------------

def integrity_table(run):
    """Per variant, disk and job: blocks bad / checked, and the bounced
    bios of those jobs. Empty when the run had no integrity job."""
    t = run.tidy
    keys = ["variant", "disk", "job"]
    ints = t[t["metric"].str.startswith("integrity_")]
    if ints.empty:
        return pd.DataFrame()
    wide = ints.pivot_table(index=keys + ["boot"], columns="metric", values="value",
                            aggfunc="sum").reset_index()
    b = t[t["metric"] == "bounces"][keys + ["boot", "value"]].rename(
        columns={"value": "bounces"})
    wide = wide.merge(b, on=keys + ["boot"], how="left")
    out = wide.groupby(keys, sort=True).agg(
        boots=("boot", "nunique"),
        bad=("integrity_bad_blocks", "sum"),
        checked=("integrity_checked_blocks", "sum"),
        bounces=("bounces", lambda s: s.sum(min_count=1))).reset_index()
    return out


def integrity_section(run):
    """Markdown lines: the integrity table and which variant corrupts."""
    tab = integrity_table(run)
    if tab.empty:
        return []
    out = ["| variant | disk | job | boots | bad blocks / checked | bounced bios |",
           "|---|---|---|---|---|---|"]
    for r in tab.itertuples():
        bounces = "no tracepoint" if not np.isfinite(r.bounces) else f"{int(r.bounces)}"
        out.append(f"| {r.variant} | {r.disk} | {r.job} | {r.boots} | "
                   f"**{int(r.bad)}** / {int(r.checked)} | {bounces} |")
    bad = tab[tab["bad"] > 0]
    out.append("")
    if bad.empty:
        out.append(f"No variant corrupted data: 0 bad blocks in {int(tab['checked'].sum())} checked.")
    else:
        for v, g in bad.groupby("variant", sort=True):
            where = "; ".join(f"{r.disk} {r.job}: {int(r.bad)} of {int(r.checked)}"
                              for r in g.itertuples())
            out.append(f"**{v} corrupts data**: bad blocks read back ({where}).")
        clean = sorted(set(tab["variant"]) - set(bad["variant"]))
        if clean:
            out.append(f"No bad block on {', '.join(clean)}.")
    return out


# -- what the bounce costs --------------------------------------------------

def _median(df):
    return float(df["value"].median()) if len(df) else np.nan


def _probe_overhead(run, variant, disk):
    """Median over boots of IOPS(job+probe) / IOPS(job) on one disk."""
    t = run.tidy
    t = t[(t["variant"] == variant) & (t["disk"] == disk) &
          t["metric"].isin(["read_iops", "write_iops"])]
    probed = t[t["job"].str.endswith("+probe")].copy()
    if probed.empty:
        return np.nan
    probed["job"] = probed["job"].str[:-len("+probe")]
    m = probed.merge(t, on=["boot", "job", "metric"], suffixes=("_p", "_u"))
    return float((m["value_p"] / m["value_u"]).median()) if len(m) else np.nan


def _verdict_line(verdicts, metric, disk, job, a, b):
    if verdicts is None or verdicts.empty:
        return None
    v = verdicts[(verdicts["metric"] == metric) & (verdicts["disk"] == disk) &
                 (verdicts["job"] == job) & (verdicts["a"] == a) & (verdicts["b"] == b)]
    if v.empty:
        return None
    r = v.iloc[0]
    if not np.isfinite(r["ratio"]):
        return f"{b}/{a}: {r['verdict']}"
    ci = (f", 95% CI {_fmt(r['ci_low'])}–{_fmt(r['ci_high'])}"
          if np.isfinite(r["ci_low"]) else "")
    half = ""
    if np.isfinite(r["ci_low"]) and np.isfinite(r["ci_high"]) and r["ratio"] > 0:
        half = f", ±{_fmt(100 * (r['ci_high'] - r['ci_low']) / 2 / r['ratio'], 2)}%"
    return f"{b}/{a} = {_fmt(r['ratio'])}{ci}{half}: {r['verdict']}"


def cost_section(run, verdicts):
    """Markdown lines: bounced bytes, cost per bounced bio beside a plain
    memcpy, CPU per GiB, lowmem held, and the usb case's noise bound."""
    out = []
    bouncers = _labels(run, "bounce")
    others = _labels(run, "removed") + _labels(run, "baseline")
    droles = disk_roles(run)
    candidates = [d for d in dict.fromkeys(run.tidy["disk"]) if droles.get(d) == "bounce-candidate"]
    jobs = run.jobs
    for disk in candidates:
        for v in bouncers:
            bb = _values(run, "bounced_bytes_per_gib", [v], disk)
            bb = bb[~bb["job"].str.endswith("+probe")]
            if bb.empty or not (bb["value"] > 0).any():
                continue
            per_job = ", ".join(f"{j} {_fmt(100 * g['value'].median() / (1 << 30))}%"
                                for j, g in bb.groupby("job", sort=True))
            out.append(f"- **{v} on {disk}: bytes bounced per byte the block layer "
                       f"moved**: {per_job}.")
            for job in sorted(set(_values(run, "bounce_submit_us_p50", [v], disk)["job"])):
                sub = _median(_values(run, "bounce_submit_us_p50", [v], disk, job))
                sub99 = _median(_values(run, "bounce_submit_us_p99", [v], disk, job))
                end = _median(_values(run, "bounce_endio_us_p50", [v], disk, job))
                end99 = _median(_values(run, "bounce_endio_us_p99", [v], disk, job))
                per_gib = _median(_values(run, "bounce_us_per_gib", [v], disk, job))
                j = jobs[(jobs["variant"] == v) & (jobs["disk"] == disk) & (jobs["job"] == job)]
                memcpy = float(j["memcpy_4k_us"].median()) if "memcpy_4k_us" in j else np.nan
                out.append(f"- **{v} on {disk}, {job}: a bounced bio costs "
                           f"{_fmt(sub)} µs at submit (p99 {_fmt(sub99)}) and "
                           f"{_fmt(end)} µs at completion (p99 {_fmt(end99)})**, "
                           f"{_fmt(per_gib / 1e6)} s per GiB moved; a plain 4 KiB "
                           f"memcpy costs {_fmt(memcpy)} µs in the same boots.")
            over = [(w, _probe_overhead(run, w, disk)) for w in bouncers + others]
            over = [f"{w} {_fmt(100 * (1 - x), 2)}%" for w, x in over if np.isfinite(x)]
            if over:
                out.append(f"- Probe overhead on {disk} (IOPS lost with the probes on, "
                           f"same boot): {', '.join(over)}.")
            for w in others:
                for job in _performance_jobs(run, _values(run, "cpu_s_per_gib", [v, w], disk)):
                    for metric in ("cpu_s_per_gib", "read_iops", "write_iops"):
                        line = _verdict_line(verdicts, metric, disk, job, v, w)
                        if line:
                            out.append(f"- {disk}, {job}, {metric}: {line}.")
            peak = _median(_values(run, "bounce_pages_peak", [v], disk))
            mean = _median(_values(run, "bounce_pages_mean", [v], disk))
            if np.isfinite(peak):
                out.append(f"- **Lowmem held by bounce pages** ({v}, {disk}): peak "
                           f"{_fmt(peak)} pages, mean {_fmt(mean)} (median over jobs; "
                           f"Bounce: sampled every "
                           f"{_interval(run)} ms).")
    ratio_disks = [d for d in dict.fromkeys(run.tidy["disk"]) if "/" in str(d)]
    for rd in ratio_disks:
        for v in bouncers:
            for w in others:
                for metric in ("read_iops", "write_iops", "cpu_s_per_gib"):
                    for job in _performance_jobs(run, _values(run, metric, [v, w], rd)):
                        line = _verdict_line(verdicts, metric, rd, job, v, w)
                        if line:
                            out.append(f"- within-boot {rd}, {job}, {metric}: {line}.")
    return out


def _performance_jobs(run, rows):
    """The unprobed performance jobs among rows: what the verdict lines
    are about (integrity jobs measure data, probed twins the probes)."""
    j = run.jobs
    integrity = set(j[j.get("job_class", pd.Series(dtype=str)) == "integrity"]["job"]) \
        if "job_class" in j else set()
    return sorted(x for x in set(rows["job"])
                  if not x.endswith("+probe") and x not in integrity)


def _interval(run):
    ms = (run.meta or {}).get("mon_interval_ms")
    return str(ms) if ms else "100 (guest/init default)"

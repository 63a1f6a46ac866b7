# SPDX-License-Identifier: GPL-2.0
"""Parsers for the files of a run (boots.tsv, meta.json) and those the
guest writes per boot and job. A missing or unreadable file gives None (or
an empty mapping), never a 0: the caller decides what "absent" means.
"""
import json
import os
import re

import pandas as pd

BOOT_COLUMNS = ["boot", "variant", "disk", "pressure", "rep", "status", "seconds", "dir"]
PAGE_KB = 4
OCCUPANCY_KEYS = ("inflight", "peak", "allocated", "page_ns", "span_ns",
                  "alloc_ns", "alloc_max_ns", "pool_min", "pool_size")


def read_text(path):
    """The stripped content of a small text file, None when missing."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _read_tsv(path):
    """A TSV, every column a string but boot and rep (Int64)."""
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for col in ("boot", "rep"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df


def read_boots(path):
    """boots.tsv as a DataFrame."""
    df = _read_tsv(path)
    missing = [c for c in BOOT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)}")
    return df


def read_matrix(path):
    """matrix.tsv (the runner's planned boots), or None when there is none."""
    try:
        df = _read_tsv(path)
    except (OSError, ValueError):     # pandas' EmptyDataError is a ValueError
        return None
    return df if "boot" in df.columns else None


def read_json(path):
    """A JSON object, or {} when the file is missing or broken."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_fio(path):
    """fio --output-format=json from its first "{" (fio may print notes ahead), or None."""
    text = read_text(path) or ""
    try:
        return json.loads(text[text.index("{"):])    # index: ValueError without a "{"
    except ValueError:
        return None


def keyvalues(text):
    """"name value" lines -> {name: int}; other lines are left out."""
    rows = map(str.split, (text or "").splitlines())
    return {p[0]: int(p[1]) for p in rows if len(p) == 2 and re.fullmatch(r"-?\d+", p[1])}


def read_meminfo(path):
    """/proc/meminfo -> {field: kB}."""
    found = (re.match(r"([^:]+):\s+(\d+)", line) for line in (read_text(path) or "").splitlines())
    return {m.group(1): int(m.group(2)) for m in found if m}


def read_dose(path):
    """A pressure job's dose file (guest/init record_dose) -> {"lowfree_kb",
    "highfree_kb", "<zone>_<min|low|high>_kb" (its watermark lines, in kB),
    "hogs": {HOG: {"settled", "target_kb"}} of its "HOG frozen ..." lines (a
    line "frozen ...": lowhog's, from before both zones were held),
    "target": {KEY: N} of its "target KEY=N ..." line ({} before it)}."""
    text = read_text(path)
    if text is None:
        return None
    out = {"hogs": {}, "target": {}}
    for w in map(str.split, text.splitlines()):
        w = ["lowhog"] + w if w[:1] == ["frozen"] else w
        kv = {k: int(v) for k, _, v in (x.partition("=") for x in w) if v.isdigit()}
        if len(w) >= 2 and w[1] == "frozen":
            out["hogs"][w[0]] = {"settled": "unsettled" not in w, "target_kb": kv.get("target")}
        elif w[:1] == ["target"]:
            out["target"] = kv
        elif len(w) >= 2 and w[0] in ("LowFree:", "HighFree:") and w[1].isdigit():
            out[f"{w[0][:-1].lower()}_kb"] = int(w[1])
        elif len(w) == 3 and w[0] in ("Normal", "HighMem") and w[2].isdigit():
            out[f"{w[0].lower()}_{w[1]}_kb"] = int(w[2]) * PAGE_KB
    return out


def read_bounces(path):
    """The job's bounces file: an int, "absent" (no tracepoint), or None."""
    text = read_text(path)
    try:
        return text if text == "absent" else int(text)
    except (TypeError, ValueError):
        return None


def read_occupancy(path):
    """The job's bounce-occupancy file (the lab-bounce kernel counter): {key: int} with every
    OCCUPANCY_KEYS key, "off" (the unprobed twin of a probed job), "absent" (no bounce code),
    "missing" (no counter), or None (no file, or not well formed)."""
    text = read_text(path)
    if text in ("off", "absent", "missing"):
        return text
    out = keyvalues(text)
    return out if text and all(k in out for k in OCCUPANCY_KEYS) else None


_HIST_ENTRY = re.compile(r"^\{\s*dev:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)"
                         r"(?:\s+nr_sector:\s*(\d+))?")


def read_bounce_hist(path):
    """A hist trigger's output -> {"hits", "sectors", "dropped", "devs"},
    summed over its devices (only the job's disk does I/O), or None."""
    lines = (read_text(path) or "").splitlines()
    devs = [m.groups() for m in (_HIST_ENTRY.match(x.strip()) for x in lines) if m]
    totals = dict(m.groups() for m in (re.match(r"\s*(Hits|Dropped):\s*(\d+)", x) for x in lines)
                  if m)
    if "Hits" not in totals and not devs:
        return None
    return {"hits": int(totals.get("Hits", sum(int(h) for _, h, _ in devs))),
            "sectors": sum(int(s or 0) for _, _, s in devs),
            "dropped": int(totals.get("Dropped", 0)), "devs": [int(d) for d, _, _ in devs]}


def read_labmon(path):
    """labmon.csv as a DataFrame; an empty cell stays NaN (not exposed)."""
    try:
        return pd.read_csv(path)
    except (OSError, ValueError):
        return None


def read_clocksource(dmesg_path):
    """The clocksource the guest kernel ended on, from its dmesg."""
    found = re.findall(r"Switched to clocksource (\S+)", read_text(dmesg_path) or "")
    return found[-1] if found else None


def read_uptime(path):
    text = read_text(path)
    try:
        return float(text.split()[0]) if text else None
    except ValueError:
        return None


def _options(fio, entry):
    """fio's options of one job entry: its own over the global ones."""
    return {**((fio or {}).get("global options") or {}), **(entry.get("job options") or {})}


def _rate_iops(fio, entry, d):
    vals = str(_options(fio, entry).get("rate_iops", "")).split(",")
    v = vals[d == "write"] if len(vals) > 1 else vals[0]
    return int(v) if v.isdigit() and int(v) > 0 else None


def _late_pct(movers, d):
    """The % of a steady reader's (or writer's) I/Os of 1 ms or more (fio's
    latency_ms buckets): they are per entry, all directions, so only where
    one entry of movers moved data, and only this way; else None."""
    if len(movers) != 1 or any((movers[0].get(o) or {}).get("total_ios")
                               for o in ("read", "write") if o != d):
        return None
    ms = movers[0].get("latency_ms")
    return float(sum(ms.values())) if isinstance(ms, dict) and ms else None


def fio_directions(fio):
    """Per direction that moved data: ios, iops, bw_bytes, io_bytes (summed over fio's entries),
    the slat, clat and lat means (weighted by samples; ns), percentiles and lat_percentiles
    (only where one entry moved data that way: they cannot be merged), rate_iops (the offered
    rate, None unless every entry had one) and late_pct."""
    jobs = (fio or {}).get("jobs") or []
    out = {}
    for d in ("read", "write"):
        parts = [j.get(d) or {} for j in jobs]
        rec = {"ios": sum(p.get("total_ios", 0) or 0 for p in parts)}
        if rec["ios"] <= 0:
            continue
        for key, kind in (("iops", float), ("bw_bytes", float), ("io_bytes", int)):
            rec[key] = sum(kind(p.get(key, 0) or 0) for p in parts)
        movers = [(j, p) for j, p in zip(jobs, parts) if (p.get("total_ios") or 0) > 0]
        for kind, pct_key in (("slat", None), ("clat", "percentiles"), ("lat", "lat_percentiles")):
            stats = [p.get(f"{kind}_ns") or {} for p in parts]
            n = sum(c.get("N", 0) or 0 for c in stats)
            rec[f"{kind}_mean_ns"] = (sum(c.get("mean", 0) * c.get("N", 0)
                                          for c in stats) / n) if n else None
            one = (movers[0][1].get(f"{kind}_ns") or {}) if len(movers) == 1 else {}
            if pct_key:
                rec[pct_key] = ({float(k): float(v) for k, v in one["percentile"].items()}
                                if one.get("N") and one.get("percentile") else None)
        # rate_iops: "N" or "READ,WRITE"
        rates = [_rate_iops(fio, j, d) for j, _ in movers]
        rec["rate_iops"] = sum(rates) if None not in rates else None
        rec["late_pct"] = _late_pct([j for j, _ in movers], d) if rec["rate_iops"] else None
        out[d] = rec
    return out


def fio_numjobs(fio):
    """The job's numjobs, from fio's JSON (each entry's "job options", else
    "global options"): 1 where none sets it, the largest where they differ."""
    nums = [str(_options(fio, j).get("numjobs", 1)) for j in (fio or {}).get("jobs") or []]
    return max([1] + [int(n) for n in nums if n.isdigit()])


_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def fio_shape(fio):
    """{"rw", "bs", "iodepth"} of the job's first section as fio ran it
    (rw as fio spells it, bs in bytes: the first of "4k,8k"), what is set."""
    opts = _options(fio, ((fio or {}).get("jobs") or [{}])[0])
    out = {}
    if opts.get("rw") or opts.get("readwrite"):
        out["rw"] = str(opts.get("rw") or opts.get("readwrite"))
    m = re.fullmatch(r"(\d+)([kmg]?)(?:i?b)?", str(opts.get("bs", "")).split(",")[0].lower())
    if m:
        out["bs"] = int(m.group(1)) * _SIZE_UNITS[m.group(2)]
    if str(opts.get("iodepth", "")).isdigit():
        out["iodepth"] = int(opts["iodepth"])
    return out


def fio_cpu(fio):
    """{cpu_usr_pct, cpu_sys_pct: mean over fio's job entries, ctx_switches: sum}."""
    jobs = (fio or {}).get("jobs") or []
    out = {}
    for key, metric, mean in (("usr_cpu", "cpu_usr_pct", True), ("sys_cpu", "cpu_sys_pct", True),
                           ("ctx", "ctx_switches", False)):
        vals = [float(j[key]) for j in jobs if key in j]
        if vals:
            out[metric] = sum(vals) / (len(vals) if mean else 1)
    return out


_STAT_CPU = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_proc_stat(path):
    """The aggregate "cpu" line of /proc/stat -> {field: ticks}, or {}."""
    rows = map(str.split, (read_text(path) or "").splitlines())
    cpu = next((p for p in rows if p[:1] == ["cpu"]), [])
    return {k: int(v) for k, v in zip(_STAT_CPU, cpu[1:]) if v.isdigit()}


def read_diskstats(path):
    """/proc/diskstats -> {device name: (sectors read, sectors written)}."""
    rows = map(str.split, (read_text(path) or "").splitlines())
    return {p[2]: (int(p[5]), int(p[9])) for p in rows
            if len(p) >= 10 and p[5].isdigit() and p[9].isdigit()}


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []

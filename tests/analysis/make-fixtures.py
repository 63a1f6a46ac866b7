#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Rebuild tests/analysis/fixtures/sample-run from a real run.

  tests/analysis/make-fixtures.py [SAMPLE_RUN [FAILED_BOOT]]

Copies the real files the analysis reads and trims them to commit size:
fio JSON keeps only the keys the analysis uses (values untouched), labmon
CSV keeps its header and a subset of its real rows, vmstat/meminfo keep
the real lines of the counters used, dmesg the lines about the kernel
version, clocksource and bounce pool. A failed boot (a guest killed by the
runner's bound) is added as boot 5. Nothing is invented; bench/upgrade-run
then writes what the run, from before runs kept them, lacks.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "sample-run")
SAMPLE = "/var/cache/bouncelab/sample-run/20261203-000000-sample"
FAILED = "/var/cache/bouncelab/guest-test/20261203-061907-6838/hang"
MAX_LABMON_ROWS = 24
VMSTAT_KEYS = ("nr_free_pages", "nr_bounce", "pgscan_kswapd", "pgscan_direct",
               "pgsteal_kswapd", "pgsteal_direct", "allocstall_")
MEMINFO_KEYS = ("MemFree:", "HighFree:", "LowFree:", "Bounce:")
DMESG_WORDS = ("Linux version", "clocksource", "tsc:", "bounce:")
FIO_DIR_KEYS = ("io_bytes", "bw_bytes", "iops", "runtime", "total_ios")
FIO_CLAT_KEYS = ("min", "max", "mean", "N", "percentile")
FIO_JOB_KEYS = ("jobname", "error", "usr_cpu", "sys_cpu", "ctx")


def copy(src, dst, keep=None):
    """Copy a text file, keeping only lines for which keep(line) is true."""
    if not os.path.isfile(src):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(src, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines(True)
    if keep:
        lines = [ln for ln in lines if keep(ln)]
    with open(dst, "w", encoding="utf-8") as f:
        f.writelines(lines)


def trim_fio(src, dst):
    with open(src, encoding="utf-8") as f:
        fio = json.load(f)
    jobs = []
    for j in fio["jobs"]:
        out = {k: j[k] for k in FIO_JOB_KEYS if k in j}
        for d in ("read", "write"):
            part = {k: j[d][k] for k in FIO_DIR_KEYS}
            part["clat_ns"] = {k: j[d]["clat_ns"][k] for k in FIO_CLAT_KEYS
                               if k in j[d]["clat_ns"]}
            out[d] = part
        jobs.append(out)
    with open(dst, "w", encoding="utf-8") as f:
        json.dump({"fio version": fio["fio version"], "jobs": jobs}, f, indent=1)
        f.write("\n")


def trim_labmon(src, dst):
    with open(src, encoding="utf-8") as f:
        lines = f.read().splitlines(True)
    head, rows = lines[:1], lines[1:]
    step = max(1, -(-len(rows) // MAX_LABMON_ROWS))
    kept = rows[::step]
    if rows and kept[-1] is not rows[-1]:
        kept.append(rows[-1])
    with open(dst, "w", encoding="utf-8") as f:
        f.writelines(head + kept)


def job(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in ("what", "skipped", "fio.rc", "bounces", "bounce-hist.txt",
                 "start-uptime", "end-uptime"):
        copy(os.path.join(src, name), os.path.join(dst, name))
    if os.path.isfile(os.path.join(src, "fio.json")):
        trim_fio(os.path.join(src, "fio.json"), os.path.join(dst, "fio.json"))
    if os.path.isfile(os.path.join(src, "labmon.csv")):
        trim_labmon(os.path.join(src, "labmon.csv"), os.path.join(dst, "labmon.csv"))
    for snap in ("before", "after"):
        s, d = os.path.join(src, snap), os.path.join(dst, snap)
        copy(os.path.join(s, "vmstat"), os.path.join(d, "vmstat"),
             lambda ln: ln.startswith(VMSTAT_KEYS))
        copy(os.path.join(s, "meminfo"), os.path.join(d, "meminfo"),
             lambda ln: ln.startswith(MEMINFO_KEYS))
        copy(os.path.join(s, "pressure-memory"), os.path.join(d, "pressure-memory"))


def boot(src, dst):
    for name in ("status", "build-info.json"):
        copy(os.path.join(src, name), os.path.join(dst, name))
    g, gd = os.path.join(src, "guest"), os.path.join(dst, "guest")
    for name in ("status", "disks.txt", "cmdline.txt"):
        copy(os.path.join(g, name), os.path.join(gd, name))
    copy(os.path.join(g, "dmesg.txt"), os.path.join(gd, "dmesg.txt"),
         lambda ln: any(w in ln for w in DMESG_WORDS))
    jobs = os.path.join(g, "jobs")
    for name in sorted(os.listdir(jobs)) if os.path.isdir(jobs) else []:
        job(os.path.join(jobs, name), os.path.join(gd, "jobs", name))


def main():
    sample = sys.argv[1] if len(sys.argv) > 1 else SAMPLE
    failed = sys.argv[2] if len(sys.argv) > 2 else FAILED
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with open(os.path.join(sample, "boots.tsv"), encoding="utf-8") as f:
        rows = f.read().splitlines()
    for row in rows[1:]:
        d = row.split("\t")[7]
        boot(os.path.join(sample, d), os.path.join(OUT, d))
    # the failed boot: its real status, the kernel it ran
    name = "boots/005-pre-usb-pio-none-r2"
    copy(os.path.join(failed, "status"), os.path.join(OUT, name, "status"))
    copy(os.path.join(failed, "build-info.json"), os.path.join(OUT, name, "build-info.json"))
    with open(os.path.join(failed, "status"), encoding="utf-8") as f:
        status = f.read().strip()
    rows.append("\t".join(["5", "pre", "usb-pio", "none", "2", status, "25", name]))
    with open(os.path.join(OUT, "boots.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    # the sample run is from before runs kept their facts: upgraded once
    subprocess.run([os.path.join(HERE, "..", "..", "bench", "upgrade-run"), OUT], check=True)


if __name__ == "__main__":
    main()

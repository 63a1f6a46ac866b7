# SPDX-License-Identifier: GPL-2.0
"""Shared by the analysis tests: paths, and synthetic runs built from the
real fixture folders (values scaled, counters rewritten, nothing else)."""
import copy
import gzip
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

FIXTURE_RUN = os.path.join(HERE, "fixtures", "sample-run")
ANALYZE = os.path.join(ROOT, "bench", "analyze")
UPGRADE_RUN = os.path.join(ROOT, "bench", "upgrade-run")
_loader = importlib.machinery.SourceFileLoader("upgrade_run", UPGRADE_RUN)
upgrade_run = importlib.util.module_from_spec(importlib.util.spec_from_loader("upgrade_run", _loader))
_loader.exec_module(upgrade_run)
_BOOTS = os.path.join(FIXTURE_RUN, "boots")
# Job templates: a usb random-read job and a virtio write+verify job
# (both from the pre-fixed boot: their counters are all exposed).
TEMPLATES = {
    "usb": os.path.join(_BOOTS, "002-pre-fixed-usb-pio-none-r1", "guest", "jobs",
                        "02-usb-smoke-randread"),
    "virtio": os.path.join(_BOOTS, "002-pre-fixed-usb-pio-none-r1", "guest", "jobs",
                           "03-virtio-smoke-randwrite-verify"),
}
# The kernel each variant boots (build-info.json of the fixture boots),
# and the variants of the other bases (fixtures/versions/build-info:
# written for the tests, with the fields kernels/build gives a base).
BUILD_INFO = {
    "pre": os.path.join(_BOOTS, "001-pre-usb-pio-none-r1", "build-info.json"),
    "pre-fixed": os.path.join(_BOOTS, "002-pre-fixed-usb-pio-none-r1", "build-info.json"),
    "post": os.path.join(_BOOTS, "003-post-usb-pio-none-r1", "build-info.json"),
}
VERSIONS_FIXTURES = os.path.join(HERE, "fixtures", "versions")
for _name in sorted(os.listdir(os.path.join(VERSIONS_FIXTURES, "build-info"))):
    BUILD_INFO[_name[:-len(".json")].replace("_", "/")] = os.path.join(
        VERSIONS_FIXTURES, "build-info", _name)
BOUNCE_COLUMNS = ("Bounce", "nr_bounce", "bounce_hits")


def fixture_job_dirs():
    """Every job folder of the fixture run (relative to the run)."""
    out = []
    for boot in sorted(os.listdir(_BOOTS)):
        jobs = os.path.join(_BOOTS, boot, "guest", "jobs")
        if os.path.isdir(jobs):
            out += [os.path.join("boots", boot, "guest", "jobs", j)
                    for j in sorted(os.listdir(jobs))]
    return out


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def blank_labmon_columns(path, columns):
    """Empty the given labmon columns in every row (the kernel does not
    expose them)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    idx = [head.index(c) for c in columns if c in head]
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        for i in idx:
            cells[i] = ""
        out.append(",".join(cells))
    write_text(path, "\n".join(out) + "\n")


def _scale_fio(path, scale):
    """Throughput times scale, latency divided by it."""
    fio = read_json(path)
    for job in fio["jobs"]:
        for d in ("read", "write"):
            part = job[d]
            if not part["total_ios"]:
                continue
            part["iops"] *= scale
            part["bw_bytes"] = int(part["bw_bytes"] * scale)
            clat = part["clat_ns"]
            clat["mean"] /= scale
            clat["percentile"] = {k: int(v / scale) for k, v in clat["percentile"].items()}
            # the templates were recorded before lat_percentiles=1: their
            # whole-I/O latency is the completion plus a mean submission
            slat = (part.get("slat_ns") or {}).get("mean", 0.0)
            if "percentile" not in (part.get("lat_ns") or {}):
                part["lat_ns"] = {"min": clat.get("min", 0), "max": clat.get("max", 0),
                                  "mean": clat["mean"] + slat, "N": clat.get("N", 0),
                                  "percentile": {k: int(v + slat)
                                                 for k, v in clat["percentile"].items()}}
    write_text(path, json.dumps(fio, indent=1) + "\n")


def fio_as_numjobs(path, numjobs, group_reporting=False):
    """Rewrite a job's fio.json as fio reports a section run with numjobs
    processes, the shape of fio's examples/cross-stripe-verify.fio: one
    entry per process (or, with group_reporting, one for the group), each
    with the section's "job options" numjobs, the I/Os split among them.
    Each process times only its own share of the job, at the template's
    rate, so the IOPS fio reports add up to numjobs times the template's:
    the summed IOPS a time per I/O of 1 / IOPS was taken from."""
    fio = read_json(path)
    out = []
    for job in fio["jobs"]:
        job["job options"] = dict(job.get("job options") or {}, numjobs=str(numjobs))
        for d in ("read", "write"):
            part = job[d]
            if group_reporting:
                # the group's entry: every process's I/Os over the longest
                # of their runtimes, one process's share of the job's
                part["iops"] *= numjobs
                part["bw_bytes"] *= numjobs
                continue
            for key in ("total_ios", "io_bytes"):
                part[key] = part.get(key, 0) // numjobs
            for lat in ("slat_ns", "clat_ns", "lat_ns"):
                if "N" in (part.get(lat) or {}):
                    part[lat]["N"] //= numjobs
        out += [job] if group_reporting else [copy.deepcopy(job) for _ in range(numjobs)]
    fio["jobs"] = out
    if group_reporting:
        fio["global options"] = dict(fio.get("global options") or {}, group_reporting="")
    write_text(path, json.dumps(fio, indent=1) + "\n")


def make_job(dst, device, scale=1.0, bounces=None, fio_rc=0, skipped=None,
             template=None, integrity_bad=None, probe=None):
    """A job folder from the template of its device (or of template).

    bounces: None keeps the template's, an int rewrites the count and the
    hist (8 sectors a bio), "absent" makes it a post-series kernel.
    integrity_bad: an integrity job (class file) whose verify found that
    many bad blocks (fio's total_err).
    probe: a probed job: (submit_us, completion_us, calls) writes a
    function_graph trace of that many bounced bios; () a kernel whose
    bounce functions never ran; "absent" one without them.
    """
    shutil.copytree(TEMPLATES[template or device], dst)
    if skipped is not None:
        for name in os.listdir(dst):
            if name != "what":
                p = os.path.join(dst, name)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        write_text(os.path.join(dst, "skipped"), skipped + "\n")
        return
    _scale_fio(os.path.join(dst, "fio.json"), scale)
    write_text(os.path.join(dst, "fio.rc"), f"{fio_rc}\n")
    if integrity_bad is not None:
        write_text(os.path.join(dst, "class"), "integrity\n")
        fio = read_json(os.path.join(dst, "fio.json"))
        for job in fio["jobs"]:
            job["total_err"] = integrity_bad
        write_text(os.path.join(dst, "fio.json"), json.dumps(fio, indent=1) + "\n")
    if probe is not None:
        _probe_files(dst, probe)
    if bounces == "absent":
        write_text(os.path.join(dst, "bounces"), "absent\n")
        os.remove(os.path.join(dst, "bounce-hist.txt"))
        blank_labmon_columns(os.path.join(dst, "labmon.csv"), BOUNCE_COLUMNS)
    elif bounces is not None:
        write_text(os.path.join(dst, "bounces"), f"{bounces}\n")
        entry = (f"{{ dev:    8388608 }} hitcount: {bounces:10d}  nr_sector: {8 * bounces:10d}\n\n"
                 if bounces else "\n")
        write_text(os.path.join(dst, "bounce-hist.txt"),
                   "# event histogram\n#\n\n" + entry +
                   f"Totals:\n    Hits: {bounces}\n    Entries: {1 if bounces else 0}\n"
                   "    Dropped: 0\n")


def _probe_files(dst, probe):
    """probes and probe-trace.txt.gz as guest/init writes them."""
    names = "bio_endio" if probe == "absent" else \
        "__blk_queue_bounce bounce_end_io_read bounce_end_io_write bio_endio"
    write_text(os.path.join(dst, "probes"), names + "\n")
    lines = ["# tracer: function_graph", "#"]
    if probe not in ("absent", ()):
        submit, endio, calls = probe
        for _ in range(calls):
            lines += [f" 0)   {submit:.3f} us    |  __blk_queue_bounce();",
                      f" 0)   {endio:.3f} us    |  bounce_end_io_read();"]
    with gzip.open(os.path.join(dst, "probe-trace.txt.gz"), "wt") as f:
        f.write("\n".join(lines) + "\n")
    write_text(os.path.join(dst, "probe-overrun.txt"), "0 0\n")


def make_run(root, boots):
    """Write a run folder. boots: dicts with variant, kernel (a BUILD_INFO
    key, default the variant), build (fields that replace the kernel's
    build-info.json ones), disk, pressure, rep, status (default ok) and
    jobs: [dict(device, job, scale, bounces, fio_rc, skipped, template,
    integrity_bad, probe)]. A variant of another base ("5.10/stock") names
    its boot folder with "_" for "/", as bench/compare does. seed: boots.tsv's
    "seed" column (when a boot has one); plan_seed: the BL_SEED of the plan
    the guest keeps in its results."""
    os.makedirs(root, exist_ok=True)
    seeds = any("seed" in b for b in boots)
    rows = ["boot\tvariant\tdisk\tpressure\trep\tstatus\tseconds\tdir" + ("\tseed" if seeds else "")]
    for n, b in enumerate(boots, 1):
        status = b.get("status", "ok")
        folder = b["variant"].replace("/", "_")
        bdir = f"boots/{n:03d}-{folder}-{b['disk']}-{b['pressure']}-r{b['rep']}"
        path = os.path.join(root, bdir)
        os.makedirs(path)
        build = read_json(BUILD_INFO[b.get("kernel", b["variant"])])
        build.update(b.get("build") or {})
        write_text(os.path.join(path, "build-info.json"), json.dumps(build, indent=2) + "\n")
        write_text(os.path.join(path, "status"), status + "\n")
        rows.append("\t".join(map(str, [n, b["variant"], b["disk"], b["pressure"],
                                        b["rep"], status, 40, bdir] +
                                   ([b.get("seed", "")] if seeds else []))))
        if "plan_seed" in b:
            write_text(os.path.join(path, "guest", "plan"),
                       f"BL_PRESSURE=none\nBL_SEED={b['plan_seed']}\nBL_SLEEP=0\n")
        if status != "ok":
            continue
        g = os.path.join(path, "guest")
        pio = b["disk"] == "usb-pio"
        write_text(os.path.join(g, "cmdline.txt"),
                   "console=ttyS0 panic=-1 " + ("usb_storage.lab_pio_hcd=1 " if pio else "") + "\n")
        write_text(os.path.join(g, "status"), "ok\n")
        for i, j in enumerate(b["jobs"], 1):
            name = f"{i:02d}-{j['device']}-{j.get('job', 'synthetic')}"
            make_job(os.path.join(g, "jobs", name), j["device"], j.get("scale", 1.0),
                     j.get("bounces"), j.get("fio_rc", 0), j.get("skipped"),
                     j.get("template"), j.get("integrity_bad"), j.get("probe"))
            write_text(os.path.join(g, "jobs", name, "what"),
                       f"{j['device']} {j.get('job', 'synthetic')}.fio" +
                       (" probe" if j.get("probe") is not None else "") + "\n")
    write_text(os.path.join(root, "boots.tsv"), "\n".join(rows) + "\n")
    upgrade_run.upgrade(root)
    return root


def write_meta(root, meta):
    """meta.json of a synthetic run, upgraded (bench/upgrade-run) with
    what it leaves out."""
    write_text(os.path.join(root, "meta.json"), json.dumps(meta) + "\n")
    upgrade_run.upgrade(root)


def ab_run(root, variants, reps, effect, sigma=0.03, seed=1, disk="usb-dma",
           bounces=None, kernels=None):
    """Interleaved boots (A B C A B C ...) of one usb job; variant i has its
    throughput scaled by effect[i] times lognormal noise. Bounces default
    to "absent" on the post kernel and 0 elsewhere."""
    rng = np.random.default_rng(seed)
    boots = []
    for rep in range(1, reps + 1):
        for i, v in enumerate(variants):
            kernel = (kernels or {}).get(v, v)
            count = (bounces or {}).get(v, "absent" if kernel == "post" else 0)
            boots.append(dict(
                variant=v, kernel=kernel, disk=disk, pressure="none", rep=rep,
                jobs=[dict(device="usb", job="synthetic",
                           scale=effect[i] * float(rng.lognormal(0, sigma)),
                           bounces=count)]))
    return make_run(root, boots)


def exact_run(root, scales, clock="insn", probe=None, seeds=None, disk="ram", kernels=None):
    """Boots of one job on disk (the control ram: the guest completes its
    I/O, so under an exact clock it repeats; the job is the virtio
    template's), interleaved by rep; scales: {label: [scale per rep]} (a
    label "pre.2" boots the kernel pre); disk booted under clock. probe:
    the job is a probed twin whose functions never ran. seeds: {label:
    [seed per rep]} for boots.tsv's "seed" column. kernels: {label: the
    BUILD_INFO kernel it boots} where that is not its name's."""
    reps = len(next(iter(scales.values())))
    kernels = kernels or {}
    boots = [dict(variant=v, kernel=kernels.get(v, v.split(".")[0]), disk=disk,
                  pressure="none",
                  rep=r + 1, jobs=[dict(device=disk, template="virtio",
                                        job="lat-randread-4k-qd1",
                                        scale=s[r], probe=probe,
                                        bounces="absent" if v == "post" else 0)],
                  **({"seed": seeds[v][r]} if seeds and v in seeds else {}))
             for r in range(reps) for v, s in scales.items()]
    make_run(root, boots)
    write_meta(root, {"run_id": os.path.basename(root), "status": "complete", "clock": "host",
                      "disk_clocks": {disk: clock}, "accel": "tcg"})
    return root


# A default run in small: the job of the pressure fixture's pre-fixed boot
# (a ram-bounce job under instruction time) as the template of every job.
PRESSURE_RUN = os.path.join(HERE, "fixtures", "pressure-run")
TEMPLATES["ram"] = os.path.join(PRESSURE_RUN, "boots", "011-pre-fixed-ram-bounce+ram-full24-r1",
                                "guest", "jobs", "01-ram-bounce-pressure-writeback")
REFUSED = ("disk usb-pio absent: the kernel refused it (USB Mass Storage not "
           "supported on this host controller)")
DEFAULT_META = {
    "run_id": "default-small", "matrix_set": "default", "variants": "pre pre-fixed post",
    "roles": {"pre": "baseline", "pre-fixed": "bounce", "post": "removed"},
    "disk_roles": {"ram-bounce": "bounce-candidate", "ram": "control",
                   "usb-pio": "bounce-candidate"},
    "clock": "host", "disk_clocks": {"ram-bounce": "insn", "ram": "insn", "usb-pio": "host"},
    "guest_bounds": {"disk_wait_s": 20, "mon_interval_ms": 100, "job_timeout_s": 300},
}
# Throughput of each kernel against pre-fixed: on ram-bounce the copies
# (about what run default-6 measured), on the control disk ram a real but
# tiny difference (0.3 %): significant under instruction time, negligible.
DEFAULT_EFFECT = {"ram-bounce": {"pre-fixed": 1.0, "pre": 1.21, "post": 1.215},
                  "ram": {"pre-fixed": 0.997, "pre": 1.0, "post": 1.003}}


def default_run(root, reps=6, sigma=0.0005, seed=3):
    """A small default-like run: per rep and kernel one ram-bounce+ram
    boot (two performance jobs, a probed twin and an integrity job per
    disk; pre-fixed corrupts on ram-bounce), and for 3 reps a usb-pio
    boot that post refuses."""
    rng = np.random.default_rng(seed)
    boots = []
    for rep in range(1, reps + 1):
        for v in ("pre-fixed", "pre", "post"):
            jobs = []
            for disk in ("ram-bounce", "ram"):
                bnc = "absent" if v == "post" else (
                    4000 if v == "pre-fixed" and disk == "ram-bounce" else 0)
                scale = DEFAULT_EFFECT[disk][v]
                for job in ("lat-randread-4k-qd1", "lat-randwrite-4k-qd1",
                            "lat-randread-4k-qd1+probe"):
                    jobs.append(dict(device=disk, template="ram", job=job, bounces=bnc,
                                     scale=scale * float(rng.lognormal(0, sigma))))
                jobs.append(dict(device=disk, template="ram", job="integrity-direct-512-qd8",
                                 bounces=bnc, integrity_bad=(
                                     100 if v == "pre-fixed" and disk == "ram-bounce" else 0)))
            boots.append(dict(variant=v, disk="ram-bounce+ram", pressure="none", rep=rep,
                              jobs=jobs))
            if rep <= 3:
                usb = ([dict(device="usb-pio", template="usb", job="lat-randread-4k-qd1",
                             skipped=REFUSED)] if v == "post" else
                       [dict(device="usb-pio", template="usb", job="lat-randread-4k-qd1",
                             bounces=300 if v == "pre-fixed" else 0)])
                boots.append(dict(variant=v, disk="usb-pio", pressure="none", rep=rep, jobs=usb))
    make_run(root, boots)
    write_meta(root, DEFAULT_META)
    return root

# SPDX-License-Identifier: GPL-2.0
"""The planned boots of a run, from its plan (plan.json's dict).

A matrix entry is DISKS[@CLOCK][:REPS] ("ram-bounce+ram@insn:3"). Boots
are interleaved: per rep, per entry, per pressure, every label in turn;
the disk entries under the pressures of every boot, then the pressure
disks under each level. An entry that repeats (an exact clock, no disk
QEMU completes on its threads: plan["host_disks"]) stops after
exact_reps reps unless plan["extend"] names it ("DISKS|PRESSURE"); every
rep at once for an entry with such a disk and for a pressure disk under
its levels (chaotic: each seed its own trajectory). A label named twice
(pre, pre) is kept apart as pre.2: an A/A copy.
"""
import re

MATRIX_HEADER = ["boot", "variant", "kernel", "disk", "pressure", "rep", "clock"]


def entry(e, clock=None):
    """"ram-bounce+ram@insn:3" -> ("ram-bounce+ram", "insn", "3"): the
    clock (clock when it names none) and the reps after ':' (None when
    none; a string, checked by check.py)."""
    head, colon, cap = e.partition(":")
    disks, at, c = head.partition("@")
    return disks, (c if at else clock), (cap if colon else None)


def _copy(label):
    """(variant, copy number): "pre.2" -> ("pre", 2), "pre" -> ("pre", 1)
    ("6.1/fixed": a variant of base 6.1, no copy)."""
    m = re.fullmatch(r"(.+)\.([0-9]+)", label)
    return (m.group(1), int(m.group(2))) if m else (label, 1)


def label_kernel(label):
    """The variant a label boots: "pre.2" -> "pre"."""
    return _copy(label)[0]


def boot_seed(label, rep):
    """A boot's seed: its rep (every kernel's boot of a rep starts alike:
    its pairs block on the rep); rep + 1000 for a copy (pre.2), whose
    exact-clock boots then run another trajectory."""
    return int(rep) + 1000 * (_copy(label)[1] - 1)


def make_labels(variants):
    """"pre pre" -> "pre pre.2"."""
    copies = [variants[:i + 1].count(v) for i, v in enumerate(variants)]
    return [v if n == 1 else f"{v}.{n}" for v, n in zip(variants, copies)]


def rows(p, first, last, start, extend_only=False):
    """matrix.tsv rows [boot, label, kernel, disk, pressure, rep, clock] of
    reps first..last, numbered from start + 1."""
    out = []
    exact = set(p["exact_clocks"])
    host = set(p.get("host_disks", ()))
    for rep in range(first, last + 1):
        for entries, pressures, chaotic in ((p["disks"], p["pressures"], False),
                                            (p["pressure_disks"], p["pressure_levels"], True)):
            for e in entries:
                d, _, cap = entry(e)
                if cap is not None and rep > int(cap):
                    continue
                c = p["disk_clocks"][d.split("+")[0]]
                repeats = c in exact and not chaotic and not host.intersection(d.split("+"))
                # an entry that does not repeat has every rep already
                if extend_only and not repeats:
                    continue
                needs_extend = extend_only or (rep > p["exact_reps"] and repeats)
                for pr in pressures:
                    if needs_extend and f"{d}|{pr}" not in p["extend"]:
                        continue
                    for label in p["labels"]:
                        out.append([start + len(out) + 1, label, label_kernel(label),
                                    d, pr, rep, c])
    return out


def boot_jobs(p, lab, disks, pressure, rep):
    """The job list of one boot: every job on every disk, in turns A B
    then B A (drift within the boot hits each disk alike); the probed
    twins on the bounce candidates; in a sweep_disks entry's boots the
    sweep jobs in the same turns; the integrity jobs (their reps only).
    Under a pressure level only the pressure jobs, the disks swapped in
    even reps (a job starts from what the one before it left)."""
    jobs, probes = p["jobs"], p["probe_jobs"]
    integrity = p["integrity_jobs"] if rep <= p["integrity_reps"] else []
    sweep = p.get("sweep_jobs", []) if "+".join(disks) in {
        entry(e)[0] for e in p.get("sweep_disks", [])} else []
    if pressure in p["pressure_levels"]:
        jobs, probes, integrity, sweep = p["pressure_jobs"], [], [], []
        if rep % 2 == 0:
            disks = disks[::-1]
    turns = lambda js: [f"{d}:{j}.fio" for k, j in enumerate(js)
                        for d in (disks[::-1] if k % 2 else disks)]
    out = turns(jobs) + [f"{d}:{j}.fio:probe" for j in probes for d in disks
                         if lab["disk"][d]["role"] == "bounce-candidate"]
    out += turns(sweep) + [f"{d}:{j}.fio" for j in integrity for d in disks]
    return " ".join(out)


def guest_run_args(p, lab, n, label, disk, pressure, rep, fail_boot=""):
    """bench/guest-run's options for one boot (but -o). fail_boot: the
    test hook BL_COMPARE_FAIL_BOOT, a boot number made to panic."""
    disks = disk.split("+")
    args = ["-v", label_kernel(label), "-j", boot_jobs(p, lab, disks, pressure, int(rep)),
            "-J", p["jobs_dir"], "-p", pressure, "-c", p["disk_clocks"][disks[0]],
            "-m", str(p["memhog_mb"]), "-l", str(p["lowfree_mb"]), "-t", str(p["timeout"]),
            "-W", str(p["disk_wait"]), "-I", str(p["mon_ms"]), "-T", str(p["job_timeout"]),
            # the seed moves the guest's start: an exact clock's reps are an ensemble
            "-S", str(boot_seed(label, rep))]
    if p["guest_sleep"]:
        args += ["-s", p["guest_sleep"]]
    kargs = p["kargs"] + (" rdinit=/bl-injected-failure" if fail_boot == str(n) else "")
    if kargs:
        args += ["-a", kargs]
    return args

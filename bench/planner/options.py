# SPDX-License-Identifier: GPL-2.0
"""bench/compare's arguments, parsed and checked as numbers and names.

parse(argv, matrix, lab, cpus, root) -> Options, or raises BadArg (a message for
"bouncelab: error: ...", exit 2). The matrix set comes first (--quick is
--set quick; two different sets are a bad argument), every other option
overrides one of its keys. Lists are comma or space separated; "none"
empties a job or pressure-disk list.
"""
import os
import re
from dataclasses import field, make_dataclass


class BadArg(Exception):
    """A refused argument: exit 2."""


class Usage(Exception):
    """--help, or an unknown option: the usage text, exit 2."""


# these lists are emptied by "none"
NONE_EMPTIES = ("jobs", "probe_jobs", "integrity_jobs", "pressure_disks",
                "pressure_levels", "pressure_jobs", "sweep_disks", "sweep_jobs")
LISTS = ("variants", "disks", "pressures") + NONE_EMPTIES
# attribute -> its key in a matrix set (its own name, but one)
MATRIX_KEYS = {a: "pressure" if a == "pressures" else a
               for a in LISTS + ("reps", "exact_reps", "integrity_reps")}
# attribute -> its "default KEY" of lab.conf
LAB_DEFAULTS = {"memhog_mb": "memhog_mb", "lowfree_mb": "lowfree_target_mb", "clock": "clock",
                "disk_wait": "disk_wait_s", "mon_ms": "mon_interval_ms",
                "job_timeout": "job_timeout_s"}
# option -> the attribute its value sets: the option's name with "_" for
# "-", but for these four
VALUED = {o: o[2:].replace("-", "_") for o in (
    "--set", "--reps", "--exact-reps", "--integrity-reps", "--sshloginfile", "--variants",
    "--disks", "--jobs", "--probe-jobs", "--integrity-jobs", "--lowfree-mb",
    "--pressure-disks", "--pressure-levels", "--pressure-jobs", "--jobs-dir",
    "--sweep-disks", "--sweep-jobs", "--accel", "--clock", "--timeout", "--guest-sleep",
    "--run-id", "--disk-wait", "--job-timeout", "--until-ci", "--budget-min")}
VALUED.update({"-j": "side_jobs", "--pressure": "pressures", "--kernel-args": "kargs",
               "--mon-interval-ms": "mon_ms"})


# The resolved options, in plan.json's order: the set, the lists, then
# these (each with its default).
Options = make_dataclass("Options", [("set", str, "default")] + [
    (a, list, field(default_factory=list)) for a in LISTS] + [(a, type(v), v) for a, v in (
        ("reps", 0), ("exact_reps", 0), ("integrity_reps", 0), ("side_jobs", 1),
        ("sshloginfile", ""), ("memhog_mb", ""), ("lowfree_mb", 0), ("lowfree_raw", ""),
        ("jobs_dir", ""), ("accel", "auto"), ("clock", ""), ("timeout", 900), ("kargs", ""),
        ("guest_sleep", ""), ("run_id", ""), ("disk_wait", 0), ("mon_ms", 0),
        ("job_timeout", 0), ("dry_run", False), ("until_ci", ""), ("budget_min", 60))])


def positive(value, message):
    if not re.fullmatch(r"[1-9][0-9]*", value):
        raise BadArg(message.format(value))
    return int(value)


def parse(argv, matrix, lab, cpus, root):
    """Options from compare's argv: the set's keys, then the overrides."""
    given, named, dry_run = {}, [], False
    args = iter(argv)
    for a in args:
        if a == "--quick":
            named.append("quick")
        elif a == "--dry-run":
            dry_run = True
        elif a in ("-h", "--help"):
            raise Usage("")
        elif a.startswith("-j") and a != "-j":
            given["side_jobs"] = a[2:]
        elif a in VALUED:
            v = next(args, "")
            if v == "":
                raise BadArg(f"{a} wants a value")
            if a == "--set":
                named.append(v)
            else:
                given[VALUED[a]] = v
        else:
            raise Usage(f"bouncelab: unknown option '{a}'")
    if len(set(named)) > 1:
        raise BadArg("--quick and --set name two matrix sets ("
                     + ", ".join(dict.fromkeys(named)) + "); name one")
    o = Options(set=named[0] if named else "default", dry_run=dry_run)
    if not matrix.get(o.set, {}).get("variants"):
        raise BadArg(f"no matrix set '{o.set}' in bench/matrix (sets: {' '.join(sorted(matrix))})")
    raw = {attr: "" for attr in VALUED.values()}
    raw.update({attr: " ".join(matrix[o.set].get(key) or []) for attr, key in MATRIX_KEYS.items()})
    raw.update({attr: lab["default"].get(key, {}).get("value", "")
                for attr, key in LAB_DEFAULTS.items()})
    raw.update(side_jobs=str(cpus), jobs_dir=os.path.join(root, "bench", "jobs"), accel="auto",
               timeout="900", budget_min="60")
    raw.update(given)
    return _resolve(o, raw)


def _resolve(o, raw):
    """The raw strings checked and typed into o, in compare's order."""
    for attr in LISTS:
        v = raw[attr].strip().replace(",", " ")
        setattr(o, attr, [] if attr in NONE_EMPTIES and v == "none" else v.split())
    for attr in ("memhog_mb", "clock", "kargs", "guest_sleep", "run_id", "jobs_dir", "until_ci",
                 "accel"):
        setattr(o, attr, raw[attr])
    o.reps = positive(raw["reps"], "--reps wants a positive number, not '{}'")
    # without exact_reps an exact entry gets the reps of every other
    o.exact_reps = min(positive(raw["exact_reps"] or raw["reps"],
                                "--exact-reps wants a positive number, not '{}'"), o.reps)
    o.integrity_reps = positive(raw["integrity_reps"] or raw["reps"],
                                "--integrity-reps wants a positive number, not '{}'")
    if not o.jobs and o.integrity_reps < o.reps:
        raise BadArg(f"--integrity-reps {o.integrity_reps}: with no other jobs the boots of "
                     f"reps {o.integrity_reps + 1}-{o.reps} would run nothing")
    o.side_jobs = positive(raw["side_jobs"],
                           "-j wants a positive number of boots side by side, not '{}'")
    if raw["sshloginfile"]:
        if not os.access(raw["sshloginfile"], os.R_OK):
            raise BadArg(f"--sshloginfile: cannot read '{raw['sshloginfile']}'")
        o.sshloginfile = os.path.realpath(raw["sshloginfile"])
    if o.until_ci and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", o.until_ci):
        raise BadArg(f"--until-ci wants a percentage, not '{o.until_ci}'")
    o.budget_min = positive(raw["budget_min"], "--budget-min wants minutes, not '{}'")
    o.timeout = positive(raw["timeout"], "--timeout wants seconds, not '{}'")
    if o.accel not in ("auto", "tcg", "kvm"):
        raise BadArg(f"--accel is auto, tcg or kvm, not '{o.accel}'")
    for attr in ("disk_wait", "mon_ms", "job_timeout"):
        setattr(o, attr, positive(raw[attr], "--disk-wait, --mon-interval-ms, --job-timeout "
                                   "want a positive number, not '{}'"))
    o.lowfree_raw = raw["lowfree_mb"]
    return o

# SPDX-License-Identifier: GPL-2.0
"""bench/lab.conf for Python: the disks, their channels and roles (the
file lib/lab.sh reads). A run keeps the copy it ran with (RUN/lab.conf;
bench/upgrade-run gives an older run the repository's).
"""
import os
from itertools import zip_longest

REPO_LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab.conf")
# Fields after TYPE and NAME, the last taking the rest of the line.
_FIELDS = {"channel": ("find", "args"), "refusal": ("message",),
           "clock": ("cpus", "icount", "label"), "disk": ("channel", "knob", "role", "label"),
           "role": ("role", "label"), "pressure": ("kind", "mib", "label"), "default": ("value",)}
# A boot's pressure unless a level is named (lab.conf's "pressure none")
NO_PRESSURE = "none"


def parse(text):
    """{type: {name: {field: value}}} of a lab.conf text ("-" is "")."""
    out = {t: {} for t in _FIELDS}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in _FIELDS:
            continue
        names = _FIELDS[words[0]]
        rest = line.split(None, 1 + len(names))[2:]
        out[words[0]][words[1]] = {k: ("" if v.strip() == "-" else v.strip())
                                   for k, v in zip_longest(names, rest, fillvalue="")}
    return out


def load(run_path=None):
    """The lab.conf a run ran with (run_path), or the repository's."""
    path = os.path.join(run_path, "lab.conf") if run_path else REPO_LAB
    with open(path, encoding="utf-8") as f:
        return parse(f.read())


def default(lab, key, fallback=None):
    """A "default KEY VALUE" of lab, fallback where it has none (a run's
    copy from before the key)."""
    return (lab or {}).get("default", {}).get(key, {}).get("value") or fallback


def disk_role(lab, disk):
    return lab["disk"].get(disk, {}).get("role", "")


def control_pairs(lab):
    """(bounce candidate, control) disks of one channel whose knobs are
    module parameters: they share a boot, and their within-boot ratio is
    free of the boot-to-boot speed of TCG."""
    disks = {d: f for d, f in lab["disk"].items() if f["knob"].startswith("param:")}
    return [(a, b) for a, da in disks.items() if da["role"] == "bounce-candidate"
            for b, db in disks.items()
            if db["channel"] == da["channel"] and db["role"] == "control"]


def ratio_disk(a, b):
    """The label of the within-boot ratio of disk a to disk b."""
    return f"{a}/{b}"


def clock(lab, name):
    """The fields of a lab.conf clock (cpus, icount: "" for host time,
    label); {} for a clock this lab.conf does not know."""
    return lab.get("clock", {}).get(name, {})


def disk_clock(meta, disk):
    """The clock a run booted disk under (a ratio disk A/B: A's):
    meta.json "disk_clocks", else the run's "clock"."""
    return str(meta["disk_clocks"].get(disk.split("/")[0]) or meta.get("clock") or "")


def disk_icount(meta, lab, disk):
    """The -icount shift disk ran under: its clock's ("" for host time)."""
    return clock(lab, disk_clock(meta, disk)).get("icount", "")


def host_completes(lab, disk):
    """Whether QEMU completes disk's I/O (a ratio disk A/B: A's) on a host
    thread, its channel an emulated device (serial:): on an exact clock
    its times still hang on the host and do not repeat."""
    channel = lab["disk"].get(disk.split("/")[0], {}).get("channel", "")
    return lab["channel"].get(channel, {}).get("find", "").startswith("serial:")


def repeats(meta, lab, disk):
    """Whether disk's numbers repeat to the instruction: an exact clock
    (an -icount shift), completed in the guest."""
    return bool(disk_icount(meta, lab, disk)) and not host_completes(lab, disk)


def shell(lab):
    """lab as bash for lib/lab.sh to eval (one python3 for every value a
    script asks): BL_LAB[TYPE/NAME/FIELD]=VALUE, BL_LAB[TYPE/NAME]=1,
    BL_LAB_NAMES[TYPE]="NAME ..."."""
    import shlex
    vals, kinds = [], []
    for kind, entries in lab.items():
        kinds.append(f"[{kind}]={shlex.quote(' '.join(entries))}")
        for name, fields in entries.items():
            vals.append(f"[{shlex.quote(kind + '/' + name)}]=1")
            vals.extend(f"[{shlex.quote(kind + '/' + name + '/' + k)}]={shlex.quote(v)}"
                        for k, v in fields.items())
    return ("declare -gA BL_LAB=(" + " ".join(vals) + ")\n"
            "declare -gA BL_LAB_NAMES=(" + " ".join(kinds) + ")\n")


if __name__ == "__main__":
    # labconf.py --shell LAB_CONF: the assignments of shell() (lib/lab.sh)
    import sys
    if len(sys.argv) != 3 or sys.argv[1] != "--shell":
        sys.exit("usage: labconf.py --shell LAB_CONF")
    try:
        with open(sys.argv[2], encoding="utf-8") as f:
            sys.stdout.write(shell(parse(f.read())))
    except OSError as e:
        sys.exit(f"bouncelab: error: {e}")
